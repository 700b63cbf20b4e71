"""SHOW …, SHOW CREATE TABLE and DESCRIBE: validated here, executed by the web process."""

from __future__ import annotations

from typing import Any

from core.errors import CoreError
from core.identifiers import ObjectIdentifier
from core.planner import guard, time_travel
from core.planner.errors import ForbiddenSql
from core.planner.grants import plan_show_grants
from core.planner.plan import Action, Plan
from core.planner.statement import Statement
from core.planner.tokens import TokenCursor


def _like(cursor: TokenCursor) -> str | None:
    """``[LIKE] 'pattern'`` (Spark makes LIKE optional)."""
    if cursor.accept_words("LIKE"):
        return cursor.expect_string("a quoted pattern")
    token = cursor.peek()
    if token is not None and token.kind == "string":
        cursor.next()
        return token.text
    return None


def plan_show(statement: Statement) -> Plan:
    cursor = statement.cursor(1)
    if cursor.accept_words("TEMPORARY"):
        return _show_temporary(statement, cursor)
    if cursor.accept_words("CATALOGS"):
        like = _like(cursor)
        cursor.expect_end()
        return Plan.of(Action.SHOW_CATALOGS, args={"like": like})
    if cursor.accept_words("DATABASES") or cursor.accept_words("SCHEMAS"):
        return _show_databases(statement, cursor)
    for word, action in (("TABLES", Action.SHOW_TABLES), ("VIEWS", Action.SHOW_VIEWS)):
        if cursor.accept_words(word):
            return _show_in_database(statement, cursor, action)
    if cursor.accept_words("TABLE", "EXTENDED"):
        # Spark's listing with each relation's `information` (dbt-spark lists by it): the
        # database's tables and views, answered from the catalog like SHOW TABLES.
        return _show_in_database(statement, cursor, Action.SHOW_TABLES, extended=True)
    if cursor.accept_words("FUNCTIONS"):
        return _show_in_database(statement, cursor, "show_functions")
    if cursor.accept_words("CREATE", "TABLE"):
        return _show_create_table(statement, cursor)
    if cursor.accept_words("GRANTS"):
        return plan_show_grants(statement, cursor)
    token = cursor.peek()
    shown = "SHOW" if token is None else f"SHOW {statement.text[token.start : token.end]}"
    raise ForbiddenSql(
        f"{shown} is not supported: Tessera answers SHOW CATALOGS, DATABASES, TABLES, "
        "TABLE EXTENDED, VIEWS, FUNCTIONS, CREATE TABLE and GRANTS from its own catalog."
    )


def _show_temporary(statement: Statement, cursor: TokenCursor) -> Plan:
    """``SHOW TEMPORARY TABLES|VIEWS|FUNCTIONS [[LIKE] 'pattern']``: the session's temporary
    objects of that kind (functions include system functions)."""
    for word, action in (
        ("TABLES", Action.SHOW_TABLES),
        ("VIEWS", Action.SHOW_VIEWS),
        ("FUNCTIONS", Action.SHOW_FUNCTIONS),
    ):
        if cursor.accept_words(word):
            like = _like(cursor)
            cursor.expect_end()
            return Plan.of(action, args={"temporary": True, "like": like})
    raise cursor.error("TABLES, VIEWS or FUNCTIONS")


def _show_databases(statement: Statement, cursor: TokenCursor) -> Plan:
    catalog = statement.context.current_catalog
    if cursor.accept_words("FROM") or cursor.accept_words("IN"):
        (catalog,), _, _ = cursor.path("a catalog name", max_parts=1)
        guard.check_reserved_parts([catalog])
    like = _like(cursor)
    cursor.expect_end()
    if catalog is None:
        raise guard_no_current("catalog", "SHOW DATABASES IN <catalog>")
    statement.require_catalog(catalog)
    return Plan.of(Action.SHOW_DATABASES, args={"catalog": catalog, "like": like})


def guard_no_current(what: str, hint: str) -> CoreError:
    return CoreError(f"No current {what} is set: use {hint}, or USE one first.")


def _show_in_database(
    statement: Statement, cursor: TokenCursor, action: str, extended: bool = False
) -> Plan:
    if cursor.accept_words("FROM") or cursor.accept_words("IN"):
        parts, _, _ = cursor.path("a database name", max_parts=2)
        database = statement.database_identifier(parts)
    else:
        database = statement.current_database()
    like = _like(cursor)
    cursor.expect_end()
    statement.require_database(database.catalog, database.database)
    args: dict[str, Any] = {
        "catalog": database.catalog,
        "database": database.database,
        "like": like,
    }
    if extended:
        args["extended"] = True
    return Plan.of(action, args=args)


def _relation_args(statement: Statement, cursor: TokenCursor) -> dict[str, Any]:
    parts, _, _ = cursor.path("a table or view name")
    guard.check_file_path_table(parts)
    ident = statement.object_identifier(parts)
    return relation_args(statement, ident)


def relation_args(statement: Statement, ident: ObjectIdentifier) -> dict[str, Any]:
    relation = statement.require_relation(ident)
    return {"identifier": list(relation.identifier.parts), "object_kind": relation.kind}


def _show_create_table(statement: Statement, cursor: TokenCursor) -> Plan:
    args = _relation_args(statement, cursor)
    cursor.expect_end()
    return Plan.of(Action.SHOW_CREATE_TABLE, args=args)


_DESCRIBE_OTHER = ("FUNCTION", "DATABASE", "SCHEMA", "NAMESPACE", "CATALOG", "QUERY")


def plan_describe(statement: Statement) -> Plan:
    """``DESCRIBE|DESC [TABLE] [EXTENDED|FORMATTED] p`` and ``DESCRIBE HISTORY p``."""
    cursor = statement.cursor(1)
    token = cursor.peek()
    if token is not None and token.is_word("HISTORY") and cursor.peek(1) is not None:
        cursor.next()
        return _describe_history(statement, cursor)
    if token is not None and token.upper in _DESCRIBE_OTHER and cursor.peek(1) is not None:
        raise ForbiddenSql(
            f"DESCRIBE {token.upper} is not supported: Tessera describes tables and views."
        )
    if cursor.peek(1) is not None:
        cursor.accept_words("TABLE")
    extended = False
    if cursor.peek(1) is not None and (
        cursor.accept_words("EXTENDED") or cursor.accept_words("FORMATTED")
    ):
        extended = True
    parts, _, _ = cursor.path("a table or view name")
    cursor.expect_end()
    guard.check_file_path_table(parts)
    ident = statement.object_identifier(parts)
    args = relation_args(statement, ident)
    args["extended"] = extended
    return Plan.of(Action.DESCRIBE, args=args)


def _describe_history(statement: Statement, cursor: TokenCursor) -> Plan:
    """``DESCRIBE HISTORY p``: the versions of a permanent managed table, newest first."""
    parts, _, _ = cursor.path("a table name")
    cursor.expect_end()
    guard.check_file_path_table(parts)
    ident = statement.object_identifier(parts)
    relation = statement.require_relation(ident)
    what = time_travel.unversioned(relation)
    if what:
        raise CoreError(
            f"DESCRIBE HISTORY cannot describe {relation.identifier.quoted()}: it is {what}, and "
            "only permanent managed tables have versions.",
            details={"identifier": list(relation.identifier.parts)},
        )
    return Plan.of(Action.DESCRIBE_HISTORY, args={"identifier": list(relation.identifier.parts)})
