"""Durations written in settings: seconds (``3600``) or a number and a unit (``90s``,
``30m``, ``12h``, ``7d``, ``2w``)."""

from __future__ import annotations

import re

_DURATION = re.compile(r"\s*(\d{1,12})\s*([smhdw]?)\s*", re.IGNORECASE)
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_seconds(value: str, name: str) -> int:
    """The duration ``value`` in seconds; ValueError naming the setting ``name`` otherwise."""
    match = _DURATION.fullmatch(value)
    if match is None:
        raise ValueError(
            f"{name} must be seconds or a duration such as 7d, 12h, 30m or 90s (got {value!r})."
        )
    return int(match.group(1)) * _UNIT_SECONDS[match.group(2).lower()]


def describe_seconds(seconds: int) -> str:
    """``604800`` → ``7 days``: the largest unit that divides it."""
    for unit, size in (("weeks", 7 * 86400), ("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= size and seconds % size == 0:
            count = seconds // size
            return f"{count} {unit if count != 1 else unit[:-1]}"
    return f"{seconds} seconds" if seconds != 1 else "1 second"
