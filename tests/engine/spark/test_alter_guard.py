"""The guard of a planned ALTER TABLE (ADR 0019, "ALTER TABLE") on Spark's real parse: every
planned change passes as the worker writes it; a text naming another directory, another
command, a default or another property is refused."""

from __future__ import annotations

from typing import Any

import pytest

from core.identifiers import quote_path
from core.planner.alter_changes import change_sql
from core.planner.alter_guard import check_alter_tree, check_zorder
from core.planner.errors import ForbiddenSql, UnsupportedStatement

pytestmark = pytest.mark.spark

PATH = "/data/warehouse/c/d/t-1"
TABLE = "delta." + quote_path([PATH])

CHANGES: list[dict[str, Any]] = [
    {"op": "add_columns", "columns": [{"name": "x", "data_type": "INT", "comment": "it's"}]},
    {"op": "rename_column", "column": "a", "to": "b"},
    {"op": "drop_columns", "columns": ["a", "b"], "if_exists": True},
    {"op": "column_comment", "column": "a", "comment": "x"},
    {"op": "set_not_null", "column": "a"},
    {"op": "drop_not_null", "column": "a"},
    {"op": "add_constraint", "name": "pos", "expression": "a > 0"},
    {"op": "drop_constraint", "name": "pos", "if_exists": False},
    {"op": "set_properties", "properties": {"delta.appendOnly": "true"}},
    {"op": "unset_properties", "keys": ["delta.appendOnly"], "if_exists": True},
    {"op": "comment_table", "comment": "t"},
    {"op": "optimize", "where": "p = 1", "zorder": ["a", "b c"]},
    {"op": "vacuum", "retain_hours": 200, "dry_run": True},
]
OPTIMIZE, VACUUM = CHANGES[11], CHANGES[12]


def _tree(spark: Any, text: str) -> Any:
    from engine import sqlguard

    session = spark.newSession()
    session.conf.set("spark.sql.variable.substitute", "false")
    return sqlguard.parse(session, text)


@pytest.mark.parametrize("change", CHANGES, ids=[c["op"] for c in CHANGES])
def test_every_planned_change_passes(plain_spark: Any, change: dict[str, Any]) -> None:
    check_alter_tree(_tree(plain_spark, change_sql(change, TABLE)), change, PATH)


@pytest.mark.parametrize(
    ("text", "change"),
    [
        (change_sql(CHANGES[1], "delta.`/etc`"), CHANGES[1]),
        (change_sql(CHANGES[1], "`c`.`d`.`t`"), CHANGES[1]),
        (change_sql(CHANGES[2], TABLE), CHANGES[1]),
        (f"ALTER TABLE {TABLE} ADD COLUMNS (x INT DEFAULT 1)", CHANGES[0]),
        (f"ALTER TABLE {TABLE} ADD COLUMNS (x INT FIRST)", CHANGES[0]),
        (f"ALTER TABLE {TABLE} ALTER COLUMN a TYPE BIGINT", CHANGES[4]),
        (f"ALTER TABLE {TABLE} ADD CONSTRAINT pos CHECK (a > 1)", CHANGES[6]),
        (f"ALTER TABLE {TABLE} SET TBLPROPERTIES ('delta.appendOnly' = 'false')", CHANGES[8]),
        (f"ALTER TABLE {TABLE} SET LOCATION '/etc'", CHANGES[8]),
        (f"DROP TABLE {TABLE}", CHANGES[10]),
        (f"OPTIMIZE {TABLE} WHERE p = 2 ZORDER BY (a, `b c`)", OPTIMIZE),
        (f"OPTIMIZE {TABLE} FULL", {**OPTIMIZE, "where": None}),
        ("OPTIMIZE delta.`/etc` WHERE p = 1", OPTIMIZE),
        (f"VACUUM {TABLE} RETAIN 1 HOURS DRY RUN", VACUUM),
        (f"VACUUM {TABLE} RETAIN 200 HOURS", VACUUM),
        (f"VACUUM {TABLE} LITE RETAIN 200 HOURS DRY RUN", VACUUM),
        (f"VACUUM {TABLE} DRY RUN", VACUUM),
    ],
)
def test_other_texts_are_refused(plain_spark: Any, text: str, change: dict[str, Any]) -> None:
    with pytest.raises(ForbiddenSql):
        check_alter_tree(_tree(plain_spark, text), change, PATH)


def test_a_refused_property_is_refused_even_if_planned(plain_spark: Any) -> None:
    change = {"op": "set_properties", "properties": {"delta.columnMapping.mode": "none"}}
    with pytest.raises(UnsupportedStatement, match="cannot be changed"):
        check_alter_tree(_tree(plain_spark, change_sql(change, TABLE)), change, PATH)


def test_the_zorder_columns_are_read_from_the_parsed_command(plain_spark: Any) -> None:
    from engine import sqlguard

    session = plain_spark.newSession()
    session.conf.set("spark.sql.variable.substitute", "false")
    text = change_sql(OPTIMIZE, TABLE)
    found = sqlguard._zorder_of(session, text)
    assert found == [["a"], ["b c"]]
    check_zorder(found, OPTIMIZE)
    with pytest.raises(ForbiddenSql):
        check_zorder(sqlguard._zorder_of(session, f"OPTIMIZE {TABLE} ZORDER BY (a)"), OPTIMIZE)
