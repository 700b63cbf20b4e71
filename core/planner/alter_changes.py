"""A planned ALTER TABLE change (``args["change"]`` of an ``alter_table`` plan, see
``core.planner.alter_tables``; or of an ``optimize``/``vacuum`` plan, see
``core.planner.table_maintenance``) as Spark SQL, and as the catalog's schema after it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from core.datatypes.parser import parse_data_type
from core.errors import CoreError
from core.identifiers import name_key, quote_part


def string_sql(text: str) -> str:
    """A Spark SQL string literal (backslash escapes, as Spark reads them)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def change_sql(change: Mapping[str, Any], table: str) -> str:
    """The change as Spark SQL, the table named by ``table`` (already quoted)."""
    op = change["op"]
    q = quote_part
    if op == "comment_table":
        return f"COMMENT ON TABLE {table} IS {string_sql(change['comment'])}"
    if op == "optimize":
        where = f" WHERE {change['where']}" if change.get("where") else ""
        names = ", ".join(q(n) for n in change.get("zorder") or [])
        return f"OPTIMIZE {table}{where}" + (f" ZORDER BY ({names})" if names else "")
    if op == "vacuum":
        hours = int(change["retain_hours"])
        return f"VACUUM {table} RETAIN {hours} HOURS" + (" DRY RUN" if change["dry_run"] else "")
    head = f"ALTER TABLE {table} "
    if op == "add_columns":
        parts = []
        for column in change["columns"]:
            text = f"{q(column['name'])} {column['data_type']}"
            if column.get("comment") is not None:
                text += f" COMMENT {string_sql(column['comment'])}"
            parts.append(text)
        return head + f"ADD COLUMNS ({', '.join(parts)})"
    if op == "rename_column":
        return head + f"RENAME COLUMN {q(change['column'])} TO {q(change['to'])}"
    if op == "drop_columns":
        exists = "IF EXISTS " if change.get("if_exists") else ""
        names = ", ".join(q(n) for n in change["columns"])
        return head + f"DROP COLUMNS {exists}({names})"
    if op == "column_comment":
        return head + f"ALTER COLUMN {q(change['column'])} COMMENT {string_sql(change['comment'])}"
    if op == "set_not_null":
        return head + f"ALTER COLUMN {q(change['column'])} SET NOT NULL"
    if op == "drop_not_null":
        return head + f"ALTER COLUMN {q(change['column'])} DROP NOT NULL"
    if op == "add_constraint":
        return head + f"ADD CONSTRAINT {q(change['name'])} CHECK ({change['expression']})"
    if op == "drop_constraint":
        exists = "IF EXISTS " if change.get("if_exists") else ""
        return head + f"DROP CONSTRAINT {exists}{q(change['name'])}"
    if op == "set_properties":
        pairs = ", ".join(
            f"{string_sql(k)} = {string_sql(v)}" for k, v in change["properties"].items()
        )
        return head + f"SET TBLPROPERTIES ({pairs})"
    if op == "unset_properties":
        exists = "IF EXISTS " if change.get("if_exists") else ""
        keys = ", ".join(string_sql(k) for k in change["keys"])
        return head + f"UNSET TBLPROPERTIES {exists}({keys})"
    raise CoreError(f"Unknown ALTER TABLE change {op!r}.")


def apply_change(
    schema: Mapping[str, Any], change: Mapping[str, Any], *, resolved: bool = False
) -> dict[str, Any]:
    """The declared schema's JSON (or the resolved one's: columns carry ``nullable``) after
    ``change``: what the catalog records with the Delta version that made it. Table-level
    changes (constraints, properties, comment) leave it as it is."""
    result: dict[str, Any] = dict(json.loads(json.dumps(dict(schema))))
    columns: list[dict[str, Any]] = list(result.get("columns") or [])
    op = change["op"]

    def find(name: str) -> dict[str, Any] | None:
        return next((c for c in columns if name_key(str(c.get("name"))) == name_key(name)), None)

    if op == "add_columns":
        for added in change["columns"]:
            column: dict[str, Any] | None = {
                "name": added["name"],
                "kind": "physical",
                "data_type": added["data_type"],
            }
            assert column is not None
            if resolved:
                typed = parse_data_type(str(added["data_type"]))
                column["nullable"] = typed.nullable
            if added.get("comment") is not None:
                column["comment"] = added["comment"]
            columns.append(column)
    elif op == "rename_column":
        column = find(change["column"])
        if column is not None:
            old = str(column["name"])
            column["name"] = change["to"]
            key = result.get("primary_key")
            if isinstance(key, dict):
                key["columns"] = [
                    change["to"] if name_key(str(c)) == name_key(old) else c
                    for c in key.get("columns") or []
                ]
    elif op == "drop_columns":
        dropped = {name_key(n) for n in change["columns"]}
        columns = [c for c in columns if name_key(str(c.get("name"))) not in dropped]
    elif op in ("set_not_null", "drop_not_null", "column_comment"):
        column = find(change["column"])
        if column is not None and op == "column_comment":
            if change["comment"]:
                column["comment"] = change["comment"]
            else:
                column.pop("comment", None)
        elif column is not None and column.get("data_type"):
            typed = parse_data_type(str(column["data_type"]))
            column["data_type"] = typed.with_nullable(op == "drop_not_null").sql()
            if resolved:
                column["nullable"] = op == "drop_not_null"
    result["columns"] = columns
    return result
