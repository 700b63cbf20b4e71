"""Numeric UDFs."""

from __future__ import annotations

from tessera_udfs import returns


@returns("DOUBLE")
def clamp(x: float | None, lo: float | None, hi: float | None) -> float | None:
    """``x`` limited to ``[lo, hi]``; NULL when any argument is NULL."""
    if x is None or lo is None or hi is None:
        return None
    return float(min(max(x, lo), hi))
