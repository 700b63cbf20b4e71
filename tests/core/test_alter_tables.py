"""ALTER TABLE and COMMENT ON TABLE on managed Delta tables (issue 31 item 4, ADR 0019 "ALTER
TABLE"): the planner (a managed Delta table the user may MANAGE; the change written again in
one canonical form naming the table by its alias; table properties allow-listed; CHECK
constraints read only columns and built-ins)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.errors import CoreError, NotFound, PermissionDenied
from core.planner import ForbiddenSql, Plan, UnsupportedStatement
from core.planner.alter_changes import apply_change
from core.privileges import Privilege
from tests.core.test_delta_tables import _managed
from tests.core.test_planner_grants import BOB, as_user
from tests.core.test_planner_support import plan

T = "`__tessera_t1`"


def _round_trip(result: Plan) -> dict[str, Any]:
    data = result.to_dict()
    assert Plan.from_dict(json.loads(json.dumps(data))) == result
    return data


@pytest.mark.parametrize(
    ("sql", "expected", "op"),
    [
        (
            "ALTER TABLE m ADD COLUMNS (x INT COMMENT 'it\\'s', `y z` STRING NOT NULL)",
            f"ALTER TABLE {T} ADD COLUMNS (`x` INT COMMENT 'it\\'s', `y z` STRING NOT NULL)",
            "add_columns",
        ),
        (
            "ALTER TABLE c.d.m ADD COLUMN x INT",
            f"ALTER TABLE {T} ADD COLUMNS (`x` INT)",
            "add_columns",
        ),
        (
            "ALTER TABLE m RENAME COLUMN id TO key",
            f"ALTER TABLE {T} RENAME COLUMN `id` TO `key`",
            "rename_column",
        ),
        (
            "ALTER TABLE m DROP COLUMN IF EXISTS q",
            f"ALTER TABLE {T} DROP COLUMNS IF EXISTS (`q`)",
            "drop_columns",
        ),
        (
            "ALTER TABLE m ALTER COLUMN id COMMENT 'key'",
            f"ALTER TABLE {T} ALTER COLUMN `id` COMMENT 'key'",
            "column_comment",
        ),
        (
            "ALTER TABLE m ALTER COLUMN id SET NOT NULL",
            f"ALTER TABLE {T} ALTER COLUMN `id` SET NOT NULL",
            "set_not_null",
        ),
        (
            "ALTER TABLE m CHANGE id DROP NOT NULL",
            f"ALTER TABLE {T} ALTER COLUMN `id` DROP NOT NULL",
            "drop_not_null",
        ),
        (
            "ALTER TABLE m ADD CONSTRAINT pos CHECK (id > 0 AND abs(id) < 10)",
            f"ALTER TABLE {T} ADD CONSTRAINT `pos` CHECK (id > 0 AND abs(id) < 10)",
            "add_constraint",
        ),
        (
            "ALTER TABLE m DROP CONSTRAINT IF EXISTS pos",
            f"ALTER TABLE {T} DROP CONSTRAINT IF EXISTS `pos`",
            "drop_constraint",
        ),
        (
            "ALTER TABLE m SET TBLPROPERTIES ('delta.appendonly' = 'true', "
            "'delta.logRetentionDuration' = 'interval 7 days')",
            f"ALTER TABLE {T} SET TBLPROPERTIES ('delta.appendOnly' = 'true', "
            "'delta.logRetentionDuration' = 'interval 7 days')",
            "set_properties",
        ),
        (
            "ALTER TABLE m UNSET TBLPROPERTIES IF EXISTS ('delta.appendOnly')",
            f"ALTER TABLE {T} UNSET TBLPROPERTIES IF EXISTS ('delta.appendOnly')",
            "unset_properties",
        ),
        ("COMMENT ON TABLE m IS 'orders'", f"COMMENT ON TABLE {T} IS 'orders'", "comment_table"),
    ],
)
def test_alter_table_is_planned_in_one_canonical_form(sql: str, expected: str, op: str) -> None:
    result = plan(sql, _managed(3))
    data = _round_trip(result)
    assert result.sql == expected
    assert data["action"] == "alter_table" and data["kind"] == "insert" and result.writes
    args = data["args"]
    assert args["change"]["op"] == op and args["read_version"] == 3
    assert args["table"]["alias"] == "__tessera_t1" and data["target"] == ["c", "d", "m"]


@pytest.mark.parametrize(
    ("sql", "error", "fragment"),
    [
        ("ALTER TABLE orders ADD COLUMNS (x INT)", ForbiddenSql, "SQL reference only"),
        ("ALTER TABLE events RENAME COLUMN a TO b", ForbiddenSql, "SQL reference only"),
        ("ALTER TABLE big_orders ADD COLUMNS (x INT)", CoreError, "is a view"),
        ("ALTER TABLE nowhere ADD COLUMNS (x INT)", NotFound, "not found"),
        ("COMMENT ON TABLE orders IS 'x'", ForbiddenSql, "SQL reference only"),
        ("COMMENT ON TABLE events IS 'x'", ForbiddenSql, "SQL reference only"),
        (
            "ALTER TABLE m SET TBLPROPERTIES ('delta.columnMapping.mode' = 'none')",
            UnsupportedStatement,
            "cannot be changed",
        ),
        (
            "ALTER TABLE m SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'false')",
            UnsupportedStatement,
            "stays 'true'",
        ),
        (
            "ALTER TABLE m SET TBLPROPERTIES ('delta.enableChangeDataFeed' = 'false')",
            UnsupportedStatement,
            "cannot be changed",
        ),
        (
            "ALTER TABLE m SET TBLPROPERTIES ('location' = '/tmp')",
            UnsupportedStatement,
            "cannot be changed",
        ),
        (
            "ALTER TABLE m UNSET TBLPROPERTIES ('delta.columnMapping.mode')",
            UnsupportedStatement,
            "cannot be changed",
        ),
        (
            "ALTER TABLE m ADD CONSTRAINT c CHECK (id IN (SELECT id FROM orders))",
            UnsupportedStatement,
            "no tables",
        ),
        (
            "ALTER TABLE m ADD CONSTRAINT c CHECK (plus1(id) > 0)",
            UnsupportedStatement,
            "user functions",
        ),
        (
            "ALTER TABLE m ADD CONSTRAINT c CHECK (id > 0) ; DROP TABLE m",
            CoreError,
            "one statement",
        ),
        ("ALTER TABLE m ADD COLUMNS (x INT DEFAULT 1)", UnsupportedStatement, "defaults"),
        ("ALTER TABLE m ADD COLUMNS (id INT)", CoreError, "already has a column"),
        ("ALTER TABLE m RENAME COLUMN nope TO x", CoreError, "no column"),
        ("ALTER TABLE m DROP COLUMN id", CoreError, "no column left"),
        ("ALTER TABLE m RENAME TO n", UnsupportedStatement, "keeps its name"),
        ("ALTER TABLE m SET LOCATION '/tmp'", CoreError, "Expected"),
        ("ALTER TABLE parquet.`/etc` ADD COLUMNS (x INT)", ForbiddenSql, ""),
        ("COMMENT ON COLUMN m.id IS 'x'", UnsupportedStatement, "only tables"),
    ],
)
def test_other_targets_and_bad_changes_are_refused(
    sql: str, error: type[CoreError], fragment: str
) -> None:
    with pytest.raises(error) as caught:
        plan(sql, _managed(3))
    assert fragment.lower() in caught.value.message.lower()


def test_alter_owner_still_plans_as_before() -> None:
    assert plan("ALTER TABLE m OWNER TO USER bob", _managed(3)).action == "alter_owner"


def test_a_table_never_written_and_a_temporary_one_are_refused() -> None:
    with pytest.raises(CoreError, match="no committed version yet"):
        plan("ALTER TABLE m ADD COLUMNS (x INT)", _managed(None))
    catalog = _managed(3)
    catalog.add_table("c.d.tmp", ["id BIGINT"], temporary=True)
    with pytest.raises(CoreError, match="temporary"):
        plan("ALTER TABLE tmp ADD COLUMNS (x INT)", catalog)


def test_manage_is_required() -> None:
    grants = [("c", Privilege.USE), ("c.d", Privilege.USE), ("c.d.m", Privilege.MODIFY)]
    catalog = as_user(_managed(3), BOB, *grants)
    for sql in ("ALTER TABLE m ADD COLUMNS (x INT)", "COMMENT ON TABLE m IS 'x'"):
        with pytest.raises(PermissionDenied, match="MANAGE"):
            plan(sql, catalog)
    catalog = as_user(_managed(3), BOB, *grants, ("c.d.m", Privilege.MANAGE))
    assert plan("ALTER TABLE m ADD COLUMNS (x INT)", catalog).writes


def test_changes_apply_to_the_catalogs_schema() -> None:
    schema: dict[str, Any] = {
        "columns": [
            {"name": "id", "kind": "physical", "data_type": "BIGINT"},
            {"name": "name", "kind": "physical", "data_type": "STRING"},
        ]
    }
    schema = apply_change(
        schema,
        {"op": "add_columns", "columns": [{"name": "x", "data_type": "INT", "comment": "c"}]},
    )
    schema = apply_change(schema, {"op": "rename_column", "column": "NAME", "to": "label"})
    schema = apply_change(schema, {"op": "set_not_null", "column": "id"})
    schema = apply_change(schema, {"op": "column_comment", "column": "id", "comment": "key"})
    schema = apply_change(schema, {"op": "drop_columns", "columns": ["x"], "if_exists": False})
    assert schema["columns"] == [
        {"name": "id", "kind": "physical", "data_type": "BIGINT NOT NULL", "comment": "key"},
        {"name": "label", "kind": "physical", "data_type": "STRING"},
    ]
    schema = apply_change(schema, {"op": "drop_not_null", "column": "id"})
    assert schema["columns"][0]["data_type"] == "BIGINT"
    same = apply_change(
        schema, {"op": "set_properties", "properties": {"delta.appendOnly": "true"}}
    )
    assert same == schema
