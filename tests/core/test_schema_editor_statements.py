"""The statements the catalog's schema editor writes for a managed Delta table
(frontend/src/pages/catalog/deltaAlter.ts: every name backtick-quoted, comments with
backslash escapes) are the planner's ALTER TABLE forms, read back to the change meant."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from tests.core.test_delta_tables import _catalog
from tests.core.test_planner_support import MemoryCatalog, plan

T = "ALTER TABLE `c`.`d`.`m`"


def _table() -> MemoryCatalog:
    catalog = _catalog()
    made = catalog.add_table(
        "c.d.m", ["id BIGINT NOT NULL", "name STRING", "odd INT"], options={"format": "delta"}
    )
    catalog.relations[made.identifier.key] = replace(made, delta_version=1)
    return catalog


@pytest.mark.parametrize(
    ("sql", "change"),
    [
        (
            f"{T} RENAME COLUMN `name` TO `select`",
            {"op": "rename_column", "column": "name", "to": "select"},
        ),
        (
            f"{T} RENAME COLUMN `odd` TO `a ``b`` c`",
            {"op": "rename_column", "column": "odd", "to": "a `b` c"},
        ),
        (
            f"{T} ADD COLUMNS (`note` STRING COMMENT 'O\\'Brien\\'s', `age` smallint)",
            {
                "op": "add_columns",
                "columns": [
                    {"name": "note", "data_type": "STRING", "comment": "O'Brien's"},
                    {"name": "age", "data_type": "SMALLINT"},
                ],
            },
        ),
        (
            f"{T} DROP COLUMNS (`name`, `odd`)",
            {"op": "drop_columns", "columns": ["name", "odd"], "if_exists": False},
        ),
        (
            f"{T} ALTER COLUMN `name` COMMENT 'it\\'s a \\\\ path'",
            {"op": "column_comment", "column": "name", "comment": "it's a \\ path"},
        ),
        (
            f"{T} ALTER COLUMN `name` COMMENT ''",
            {"op": "column_comment", "column": "name", "comment": ""},
        ),
        (f"{T} ALTER COLUMN `name` SET NOT NULL", {"op": "set_not_null", "column": "name"}),
        (f"{T} ALTER COLUMN `id` DROP NOT NULL", {"op": "drop_not_null", "column": "id"}),
        (
            "COMMENT ON TABLE `c`.`d`.`m` IS 'Bob\\'s table'",
            {"op": "comment_table", "comment": "Bob's table"},
        ),
        ("COMMENT ON TABLE `c`.`d`.`m` IS NULL", {"op": "comment_table", "comment": ""}),
    ],
)
def test_the_schema_editors_delta_statements_plan(sql: str, change: dict[str, Any]) -> None:
    planned = plan(sql, _table())
    assert planned.args["change"] == change
    assert planned.target == ("c", "d", "m")
