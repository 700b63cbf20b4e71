"""core.instants.parse_instant: the one reader of the REST filters' date-times."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from core.errors import CoreError
from core.instants import parse_instant


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-01-31", datetime(2026, 1, 31, tzinfo=UTC)),
        ("2026-01-31T12:00:00", datetime(2026, 1, 31, 12, tzinfo=UTC)),  # naive is UTC
        ("2026-01-31T12:00:00Z", datetime(2026, 1, 31, 12, tzinfo=UTC)),
        ("2026-01-31T14:00:00 02:00", datetime(2026, 1, 31, 12, tzinfo=UTC)),  # '+' as a space
        ("  2026-01-31T12:00:00+00:00 ", datetime(2026, 1, 31, 12, tzinfo=UTC)),
    ],
)
def test_instants_are_read_in_utc(text: str, expected: datetime) -> None:
    parsed = parse_instant(text, "since")
    assert parsed == expected and parsed is not None and parsed.tzinfo is UTC


@pytest.mark.parametrize("text", [None, "", "   "])
def test_absent_is_none(text: str | None) -> None:
    assert parse_instant(text, "since") is None


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("yesterday", "must be an ISO-8601 date or date-time"),
        ("2026-13-01", "got '2026-13-01'"),
        ("0001-01-01T00:00:00+14:00", "is out of range"),
        ("2" * 10_000, "is too long (10,000 characters)"),
        ("x" * 90, "got '" + "x" * 59 + "…'"),  # what was sent is shown shortened
        ("2026-01-31\x00", "must not contain a NUL character"),  # never echoed
    ],
)
def test_bad_instants_name_the_field(text: str, words: str) -> None:
    with pytest.raises(CoreError) as caught:
        parse_instant(text, "created_after")
    assert words in str(caught.value)
    assert caught.value.details == {"field": "created_after"}
    assert "created_after" in str(caught.value)
