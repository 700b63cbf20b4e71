"""ISO-8601 instants as the REST filters take them (``GET /jobs?created_after=``,
``GET /audit?since=``): one parser, pure, so both answer the same input the same way."""

from __future__ import annotations

from datetime import UTC, datetime

from core.errors import CoreError

MAX_INSTANT_LENGTH = 100  # far longer than any ISO-8601 date-time


def _shown(value: str, limit: int = 60) -> str:
    return value if len(value) <= limit else value[: limit - 1] + "…"


def parse_instant(value: str | None, field: str) -> datetime | None:
    """``value`` as an aware UTC datetime (a naive one is UTC); None when absent or blank.
    Errors are ``CoreError`` with ``details={"field": field}`` and show at most 60
    characters of what was sent."""
    if value is None or value.strip() == "":
        return None
    text = value.strip()
    if len(text) > MAX_INSTANT_LENGTH:
        raise CoreError(
            f"{field} is too long ({len(text):,} characters) for a date-time.",
            details={"field": field},
        )
    if "\x00" in text:
        raise CoreError(f"{field} must not contain a NUL character.", details={"field": field})
    # A '+' of an offset that was not percent-encoded arrives as a space.
    for candidate in (text, text.replace(" ", "+")) if " " in text else (text,):
        try:
            parsed = datetime.fromisoformat(candidate)
        except ValueError:
            continue
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        try:
            # In UTC, as the databases compare it: 0001-01-01T00:00:00+14:00 is before year 1.
            return parsed.astimezone(UTC)
        except OverflowError:
            raise CoreError(
                f"{field} is out of range: in UTC it must fall between 0001-01-01 and "
                f"9999-12-31, got '{_shown(text)}'.",
                details={"field": field},
            ) from None
    raise CoreError(
        f"{field} must be an ISO-8601 date or date-time such as 2026-01-31T12:00:00Z, "
        f"got '{_shown(text)}'.",
        details={"field": field},
    )
