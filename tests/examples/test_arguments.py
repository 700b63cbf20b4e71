"""The examples' arguments arrive as strings (``WITH ('k'='v')``): each is checked before
anything runs, and a wrong one is a ValueError with a sentence naming it. No server needed:
the checks come before the first call on ``t_env`` (given as None here)."""

from __future__ import annotations

import datetime

import pytest

from tessera_pipelines import args
from tessera_pipelines.revenue import daily_revenue
from tessera_pipelines.sessions import sessionize


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"target": "s"}, "'source' is missing"),
        ({"source": "v"}, "'target' is missing"),
        ({"source": "v", "target": "s", "gap_minutes": "0"}, "from 1 to 10080"),
        ({"source": "v", "target": "s", "gap_minutes": "-5"}, "from 1 to 10080"),
        ({"source": "v", "target": "s", "gap_minutes": "ten"}, "'ten'"),
        ({"source": "v", "target": "s", "gap_minutes": "99999999"}, "from 1 to 10080"),
        ({"source": "v; DROP TABLE x", "target": "s"}, "table path"),
        ({"source": "v", "target": "a.b.c.d"}, "one to three parts"),
        ({"source": "`a`.b) UNION (SELECT 1", "target": "s"}, "table path"),
        ({"source": "v" * 5000, "target": "s"}, "table path"),
    ],
)
def test_sessionize_refuses_bad_arguments(kwargs, fragment):
    with pytest.raises(ValueError) as refused:
        sessionize(None, **kwargs)
    assert fragment in str(refused.value)
    assert str(refused.value).endswith(".")


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"target": "t"}, "'orders' is missing"),
        ({"orders": "o", "target": "t", "since": "yesterday"}, "YYYY-MM-DD"),
        ({"orders": "o", "target": "t", "since": "2026-02-30"}, "YYYY-MM-DD"),
        ({"orders": "o", "target": "t", "ts_column": "a b"}, "'ts_column' must be a column"),
        ({"orders": "o", "target": "t", "amount_column": "x`"}, "'amount_column'"),
        ({"orders": "o", "target": "t", "amount_column": "1=1 --"}, "'amount_column'"),
    ],
)
def test_daily_revenue_refuses_bad_arguments(kwargs, fragment):
    with pytest.raises(ValueError) as refused:
        daily_revenue(None, **kwargs)
    assert fragment in str(refused.value)


def test_unknown_arguments_are_a_type_error_naming_them():
    with pytest.raises(TypeError, match="colour"):
        sessionize(None, source="v", target="s", colour="red")  # type: ignore[call-arg]


def test_the_argument_readers_accept_what_they_should():
    assert args.table_path("t", " cat.`my db`.`odd``name` ") == "cat.`my db`.`odd``name`"
    assert args.positive_int("n", " 45 ", 60) == 45
    assert args.optional_date("d", "") is None
    assert args.optional_date("d", "2026-11-24") == datetime.date(2026, 11, 24)
    assert args.column_name("c", "ordered_at") == "ordered_at"
