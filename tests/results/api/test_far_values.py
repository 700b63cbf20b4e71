"""Dates and timestamps Python cannot hold, read from a stored result (``results.far_values``):
a page never fails on them; each is ISO-8601 text with Spark's signed year."""

from __future__ import annotations

from datetime import date

import pyarrow as pa  # type: ignore[import-untyped]
import pytest

from results.far_values import far_values
from results.store import json_column, json_rows

EPOCH = date(1970, 1, 1)
FAR_DAY = 365_242_000  # days after 1970-01-01: the year 1,001,968


def days(*numbers: int | None) -> pa.Array:
    return pa.array(list(numbers), pa.int32()).cast(pa.date32())


@pytest.mark.parametrize(
    ("day", "text"),
    [
        ((date(2024, 2, 29) - EPOCH).days, "2024-02-29"),
        ((date(1, 1, 1) - EPOCH).days, "0001-01-01"),
        ((date(1, 1, 1) - EPOCH).days - 1, "0000-12-31"),
        ((date(1, 1, 1) - EPOCH).days - 366 - 365 * 44 - 11, "-0044-01-01"),
        ((date(9999, 12, 31) - EPOCH).days + 1, "+10000-01-01"),
        (FAR_DAY, "+1001968-08-19"),
    ],
)
def test_a_date_beyond_python_is_text_with_a_signed_year(day, text):
    assert far_values(days(day)) == [text]


def test_the_calendar_agrees_with_python_where_python_has_it():
    for ordinal in range(1, date(9999, 12, 31).toordinal(), 997):
        day = date.fromordinal(ordinal)
        assert far_values(days((day - EPOCH).days)) == [day.isoformat()]


def test_a_page_with_far_dates_at_every_depth_is_read():
    far = days(FAR_DAY, None)
    near = days((date(2024, 1, 2) - EPOCH).days, None)
    micros = pa.array([3_093_527_980_800_000_000, None], pa.int64())
    table = pa.table(
        {
            "far": far,
            "near": near,
            "at": micros.cast(pa.timestamp("us", tz="UTC")),
            "ntz": micros.cast(pa.timestamp("us")),
            "list": pa.array([[FAR_DAY, None], None], pa.list_(pa.int32())).cast(
                pa.list_(pa.date32())
            ),
            "struct": pa.array([{"d": FAR_DAY}, None], pa.struct([("d", pa.int32())])).cast(
                pa.struct([("d", pa.date32())])
            ),
            "map": pa.array([[("k", FAR_DAY)], None], pa.map_(pa.string(), pa.int32())).cast(
                pa.map_(pa.string(), pa.date32())
            ),
        }
    )
    assert json_rows(table) == [
        [
            "+1001968-08-19",
            "2024-01-02",
            "+100000-01-01T00:00:00+00:00",
            "+100000-01-01T00:00:00",
            ["+1001968-08-19", None],
            {"d": "+1001968-08-19"},
            {"k": "+1001968-08-19"},
        ],
        [None, None, None, None, None, None, None],
    ]
    assert json_column(pa.chunked_array([far, far])) == ["+1001968-08-19", None] * 2
