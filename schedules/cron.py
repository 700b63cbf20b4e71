"""Cron expressions in a time zone: what a schedule accepts, and its slots.

Five fields (minute hour day-of-month month day-of-week) or one of croniter's ``@hourly``,
``@daily``, …: a schedule runs at most once a minute, so the seconds field croniter also
reads is refused, and so are its hashed and random fields (``H``, ``R``), whose slots would
not be the ones the owner read. Slots are computed in the schedule's IANA time zone (DST
included) and stored in UTC.
"""

from __future__ import annotations

import re
import zoneinfo
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from croniter import CroniterBadDateError, CroniterError, croniter

from core.errors import CoreError

MAX_CRON_LENGTH = 100
NICKNAMES = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
_FIELDS = "minute hour day-of-month month day-of-week"
_HASHED = re.compile(r"^[hr](\(.*\))?(/\d+)?$", re.IGNORECASE)
# croniter gives up after this many years without a match (30 February, say).
_MAX_YEARS = 5


def _bad(message: str, field: str = "cron") -> CoreError:
    return CoreError(message, details={"field": field})


@lru_cache(maxsize=1)
def _zones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def check_timezone(value: Any) -> str:
    """An IANA time zone name this server knows (``Europe/Paris``, ``UTC``)."""
    if not isinstance(value, str) or not value.strip():
        raise _bad("A schedule needs a time zone, an IANA name such as Europe/Paris.", "timezone")
    if len(value) > 64 or value not in _zones():
        shown = value if len(value) <= 40 else value[:37] + "..."
        raise _bad(
            f"Unknown time zone '{shown}': use an IANA name such as Europe/Paris or UTC.",
            "timezone",
        )
    return value


def check_cron(value: Any, timezone: str = "UTC") -> str:
    """A five-field cron expression (or a nickname) with at least one slot ahead."""
    if not isinstance(value, str) or not value.strip():
        raise _bad(f"A schedule needs a cron expression of five fields ({_FIELDS}).")
    if len(value) > MAX_CRON_LENGTH:
        raise _bad(
            f"A cron expression must be at most {MAX_CRON_LENGTH} characters long, "
            f"got {len(value):,}."
        )
    text = " ".join(value.split())
    if text.startswith("@"):
        if text.lower() not in NICKNAMES:
            raise _bad(f"Unknown cron nickname '{text[:20]}': use one of {', '.join(NICKNAMES)}.")
        return text.lower()
    fields = text.split(" ")
    if len(fields) != 5:
        raise _bad(
            f"A cron expression has five fields ({_FIELDS}), got {len(fields)}: a schedule "
            "runs at most once a minute, so there is no seconds field."
        )
    if any(_HASHED.match(part) for field in fields for part in field.split(",")):
        raise _bad("Hashed and random cron fields (H, R) are not supported: name the minutes.")
    if not croniter.is_valid(text):
        raise _bad(f"'{text}' is not a valid cron expression ({_FIELDS}).")
    now = datetime.now(zoneinfo.ZoneInfo(timezone))
    try:
        _iter(text, now).get_next(datetime)
    except (CroniterBadDateError, CroniterError, ValueError, OverflowError) as exc:
        raise _bad(f"'{text}' never runs (no slot in the next {_MAX_YEARS} years).") from exc
    return text


def _iter(cron: str, start: datetime) -> Any:
    return croniter(cron, start, max_years_between_matches=_MAX_YEARS)


def next_slot(cron: str, timezone: str, after: datetime) -> datetime:
    """The first slot strictly after ``after`` (an aware datetime), in UTC."""
    local = after.astimezone(zoneinfo.ZoneInfo(timezone))
    found: datetime = _iter(cron, local).get_next(datetime)
    return found.astimezone(zoneinfo.ZoneInfo("UTC"))


def latest_slot(cron: str, timezone: str, now: datetime) -> datetime:
    """The latest slot at or before ``now``, in UTC: the one slot a tick runs however many
    were missed (the one before the next)."""
    following = next_slot(cron, timezone, now)
    local = following.astimezone(zoneinfo.ZoneInfo(timezone))
    found: datetime = _iter(cron, local).get_prev(datetime)
    return found.astimezone(zoneinfo.ZoneInfo("UTC"))


def interval_at_least_a_minute(cron: str, timezone: str, now: datetime) -> bool:
    """Two slots in a row are a minute apart or more (true of every five-field expression;
    kept as the invariant the tests check)."""
    first = next_slot(cron, timezone, now)
    return next_slot(cron, timezone, first) - first >= timedelta(minutes=1)
