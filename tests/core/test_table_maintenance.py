"""OPTIMIZE and VACUUM on managed Delta tables (issue 31 item 6, ADR 0019 "Maintenance"): the
planner (a managed Delta table the user may MANAGE; the command written again in one canonical
form naming the table by its alias; ZORDER columns stored columns of the table; VACUUM never
retains less than TESSERA_VERSION_RETENTION) and the bounds of the compaction properties."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.errors import CoreError, NotFound, PermissionDenied
from core.planner import ForbiddenSql, UnsupportedStatement, plan_statement
from core.planner.alter_guard import check_zorder
from core.privileges import Privilege
from tests.core.test_alter_tables import _round_trip
from tests.core.test_delta_tables import _managed
from tests.core.test_planner_grants import BOB, as_user
from tests.core.test_planner_support import context, plan

T = "`__tessera_t1`"


@pytest.mark.parametrize(
    ("sql", "expected", "change"),
    [
        ("OPTIMIZE m", f"OPTIMIZE {T}", {"op": "optimize", "where": None, "zorder": []}),
        (
            "OPTIMIZE c.d.m WHERE id > 3 ZORDER BY (ID)",
            f"OPTIMIZE {T} WHERE id > 3 ZORDER BY (`id`)",
            {"op": "optimize", "where": "id > 3", "zorder": ["id"]},
        ),
        (
            "OPTIMIZE m ZORDER BY id",
            f"OPTIMIZE {T} ZORDER BY (`id`)",
            {"op": "optimize", "where": None, "zorder": ["id"]},
        ),
        (
            "VACUUM m",
            f"VACUUM {T} RETAIN 168 HOURS",
            {"op": "vacuum", "retain_hours": 168, "dry_run": False},
        ),
        (
            "VACUUM m RETAIN 200 HOURS DRY RUN",
            f"VACUUM {T} RETAIN 200 HOURS DRY RUN",
            {"op": "vacuum", "retain_hours": 200, "dry_run": True},
        ),
    ],
)
def test_maintenance_is_planned_in_one_canonical_form(
    sql: str, expected: str, change: dict[str, object]
) -> None:
    result = plan(sql, _managed(3))
    data = _round_trip(result)
    assert result.sql == expected
    assert data["action"] == change["op"] and data["kind"] == "insert" and result.writes
    args = data["args"]
    assert args["change"] == change and args["read_version"] == 3
    assert args["operation"] == str(change["op"]).upper()
    assert args["table"]["alias"] == "__tessera_t1" and data["target"] == ["c", "d", "m"]


def test_vacuum_retains_at_least_tesseras_retention() -> None:
    longer = replace(context(), version_retention_hours=400)
    result = plan_statement("VACUUM m", _managed(3), longer)
    assert result.args["change"]["retain_hours"] == 400
    with pytest.raises(CoreError, match="at least 400 hours") as caught:
        plan_statement("VACUUM m RETAIN 399 HOURS", _managed(3), longer)
    assert caught.value.details["least"] == 400
    shorter = replace(context(), version_retention_hours=1)
    assert plan_statement("VACUUM m RETAIN 2 HOURS", _managed(3), shorter).writes


@pytest.mark.parametrize(
    ("sql", "error", "fragment"),
    [
        ("OPTIMIZE orders", UnsupportedStatement, "own format"),
        ("VACUUM orders", UnsupportedStatement, "own format"),
        ("OPTIMIZE events", UnsupportedStatement, "external"),
        ("VACUUM big_orders", CoreError, "is a view"),
        ("OPTIMIZE nowhere", NotFound, "not found"),
        ("VACUUM '/etc'", ForbiddenSql, "SQL reference only"),
        ("OPTIMIZE delta.`/etc`", ForbiddenSql, ""),
        ("OPTIMIZE m ZORDER BY (nope)", CoreError, "no column `nope`"),
        ("OPTIMIZE m ZORDER BY (id, ID)", CoreError, "twice"),
        ("OPTIMIZE m WHERE id IN (SELECT id FROM orders)", UnsupportedStatement, "no tables"),
        ("OPTIMIZE m WHERE plus1(id) > 0", UnsupportedStatement, "user functions"),
        ("OPTIMIZE m WHERE", CoreError, "partition predicate"),
        ("OPTIMIZE m FULL", CoreError, "Expected"),
        ("VACUUM m RETAIN 0 HOURS", CoreError, "at least 168 hours"),
        ("VACUUM m RETAIN 1.5 HOURS", CoreError, "whole number"),
        ("VACUUM m RETAIN 99999999999 HOURS", CoreError, "at most"),
        ("VACUUM m LITE", CoreError, "Expected"),
        ("VACUUM m USING INVENTORY t", CoreError, "Expected"),
    ],
)
def test_other_targets_and_bad_commands_are_refused(
    sql: str, error: type[CoreError], fragment: str
) -> None:
    with pytest.raises(error) as caught:
        plan(sql, _managed(3))
    assert fragment.lower() in caught.value.message.lower()


def test_manage_is_required_and_a_temporary_table_refused() -> None:
    grants = [("c", Privilege.USE), ("c.d", Privilege.USE), ("c.d.m", Privilege.MODIFY)]
    catalog = as_user(_managed(3), BOB, *grants)
    for sql in ("OPTIMIZE m", "VACUUM m DRY RUN"):
        with pytest.raises(PermissionDenied, match="MANAGE"):
            plan(sql, catalog)
    catalog = as_user(_managed(3), BOB, *grants, ("c.d.m", Privilege.MANAGE))
    assert plan("OPTIMIZE m", catalog).writes
    catalog = _managed(3)
    catalog.add_table("c.d.tmp", ["id BIGINT"], temporary=True)
    with pytest.raises(CoreError, match="temporary"):
        plan("OPTIMIZE tmp", catalog)
    with pytest.raises(CoreError, match="no committed version yet"):
        plan("VACUUM m", _managed(None))


def test_the_zorder_columns_spark_read_must_be_the_planned_ones() -> None:
    change = {"op": "optimize", "where": None, "zorder": ["id", "Name"]}
    check_zorder([["ID"], ["name"]], change)
    for found in (
        [["id"]],
        [["id"], ["other"]],
        [["id"], ["name"], ["x"]],
        [["t", "id"], ["name"]],
    ):
        with pytest.raises(ForbiddenSql):
            check_zorder(found, change)


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("'delta.targetFileSize' = '10'", "from 1mb to 1gb"),
        ("'delta.targetFileSize' = '2gb'", "from 1mb to 1gb"),
        ("'delta.targetFileSize' = 'big'", "from 1mb to 1gb"),
        ("'delta.autoOptimize.autoCompact' = 'yes'", "'true' or 'false'"),
    ],
)
def test_compaction_properties_are_bounded(value: str, fragment: str) -> None:
    with pytest.raises(CoreError, match=fragment):
        plan(f"ALTER TABLE m SET TBLPROPERTIES ({value})", _managed(3))


def test_compaction_properties_within_bounds_are_planned() -> None:
    result = plan(
        "ALTER TABLE m SET TBLPROPERTIES ('delta.targetFileSize' = '128mb', "
        "'delta.autoOptimize.autoCompact' = 'true', 'delta.autoOptimize.optimizeWrite' = 'FALSE')",
        _managed(3),
    )
    assert result.args["change"]["properties"] == {
        "delta.targetFileSize": "128mb",
        "delta.autoOptimize.autoCompact": "true",
        "delta.autoOptimize.optimizeWrite": "FALSE",
    }
