"""Maintenance of managed Delta tables (ADR 0019, "Maintenance"):

    OPTIMIZE p [WHERE <partition predicate>] [ZORDER BY (c, …)]
    VACUUM p [RETAIN n HOURS] [DRY RUN]

Both need MANAGE on a managed Delta table, as ALTER TABLE does, and run the way it runs: the
planner writes the command again in one canonical form (``args["change"]``, op ``optimize``
or ``vacuum``); the worker names the table's directory, the guard checks that Spark parses
exactly that command of that directory (``alter_guard``) and Delta runs it; FINISHED records
the version Delta committed and an audit event.

VACUUM always names its retention: never less than ``TESSERA_VERSION_RETENTION`` (the
versions Tessera promises stay readable), by default the larger of that and Delta's 7 days;
Delta's own retention check stays on.
"""

from __future__ import annotations

from typing import Any

from core.errors import CoreError
from core.planner import guard
from core.planner.alter_tables import (
    check_expression,
    manageable_delta_table,
    stored_columns,
    table_change_plan,
)
from core.planner.grants import not_in_reference
from core.planner.model import Relation
from core.planner.plan import Action, Plan
from core.planner.statement import Statement, expression_span
from core.planner.tokens import TokenCursor

DELTA_DEFAULT_RETAIN_HOURS = 168  # Delta's delta.deletedFileRetentionDuration default
MAX_RETAIN_HOURS = 24 * 365 * 100
MAX_ZORDER_COLUMNS = 32
_NOT_HERE = "Tessera keeps and expires the versions of its own format itself"


def _where(statement: Statement, cursor: TokenCursor) -> str:
    """The partition predicate: up to a top-level ZORDER BY or the end."""
    if cursor.at_end or cursor.peek_words("ZORDER", "BY"):
        raise cursor.error("a partition predicate")
    first, last = expression_span(cursor, stop_phrase=("ZORDER", "BY"))
    return check_expression(statement, first.start, last.end, "OPTIMIZE's WHERE")


def _zorder_columns(table: Relation, names: list[str]) -> list[str]:
    """ZORDER BY names stored columns of the table (as the catalog spells them)."""
    found: list[str] = []
    for name, column in zip(
        names, stored_columns(table, names, "ZORDER BY orders stored columns"), strict=True
    ):
        if column.name in found:
            raise CoreError(f"ZORDER BY names column `{name}` twice.", details={"column": name})
        found.append(column.name)
    return found


def _target(statement: Statement, cursor: TokenCursor, what: str) -> Relation:
    parts, _, _ = cursor.path("a table name")
    guard.check_file_path_table(parts, "Changing")
    ident = statement.object_identifier(tuple(parts))
    return manageable_delta_table(statement, ident, what, hint=_NOT_HERE, external_hint="")


def plan_optimize(statement: Statement) -> Plan:
    """``OPTIMIZE p [WHERE …] [ZORDER BY (c, …)]`` → action ``optimize``."""
    cursor = statement.cursor(1)
    table = _target(statement, cursor, "OPTIMIZE")
    where = _where(statement, cursor) if cursor.accept_words("WHERE") else None
    names: list[str] = []
    if cursor.accept_words("ZORDER", "BY"):
        parenthesized = cursor.accept_punct("(")
        names.append(cursor.expect_name("a column name"))
        while parenthesized and cursor.accept_punct(","):
            names.append(cursor.expect_name("a column name"))
        if parenthesized:
            cursor.expect_punct(")")
    cursor.expect_end()
    if len(names) > MAX_ZORDER_COLUMNS:
        raise CoreError(f"ZORDER BY takes at most {MAX_ZORDER_COLUMNS} columns.")
    change: dict[str, Any] = {
        "op": "optimize",
        "where": where,
        "zorder": _zorder_columns(table, names),
    }
    return table_change_plan(statement, table, change, Action.OPTIMIZE, "OPTIMIZE")


def least_retain_hours(statement: Statement) -> int:
    return max(1, int(statement.context.version_retention_hours))


def check_retain_hours(hours: int, least: int) -> None:
    """A VACUUM keeps every version Tessera promises (``TESSERA_VERSION_RETENTION``)."""
    if hours < least:
        raise CoreError(
            f"VACUUM retains at least {least} hours: Tessera keeps every version readable "
            f"that long (TESSERA_VERSION_RETENTION), and the files of those versions stay.",
            details={"retain_hours": hours, "least": least},
        )
    if hours > MAX_RETAIN_HOURS:
        raise CoreError(f"VACUUM retains at most {MAX_RETAIN_HOURS} hours.")


def plan_vacuum(statement: Statement) -> Plan:
    """``VACUUM p [RETAIN n HOURS] [DRY RUN]`` → action ``vacuum``."""
    cursor = statement.cursor(1)
    table = _target(statement, cursor, "VACUUM")
    least = least_retain_hours(statement)
    hours = max(least, DELTA_DEFAULT_RETAIN_HOURS)
    if cursor.accept_words("RETAIN"):
        token = cursor.next()
        if token.kind != "number" or not token.text.isdigit():
            raise cursor.error_at(token, "RETAIN takes a whole number of hours.")
        hours = int(token.text)
        cursor.expect_words("HOURS")
        check_retain_hours(hours, least)
    dry_run = cursor.accept_words("DRY", "RUN")
    cursor.expect_end()
    change: dict[str, Any] = {"op": "vacuum", "retain_hours": hours, "dry_run": dry_run}
    return table_change_plan(statement, table, change, Action.VACUUM, "VACUUM")


def plan_maintenance(statement: Statement) -> Plan:
    """``OPTIMIZE`` or ``VACUUM`` (the first word); anything Spark reads otherwise there
    (``VACUUM 'path'``) is outside the SQL reference."""
    following = statement.tokens[1] if len(statement.tokens) > 1 else None
    if following is None or following.kind == "string":
        raise not_in_reference(statement)
    if statement.tokens[0].is_word("OPTIMIZE"):
        return plan_optimize(statement)
    return plan_vacuum(statement)
