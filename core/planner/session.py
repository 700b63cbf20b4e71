"""USE, SET and RESET: session state, executed by the web process."""

from __future__ import annotations

from core.planner import guard
from core.planner.plan import Action, Plan
from core.planner.statement import Statement
from core.planner.tokens import Token, TokenCursor


def plan_use(statement: Statement) -> Plan:
    """``USE CATALOG c`` | ``USE [DATABASE|SCHEMA] d`` | ``USE c.d`` (validated)."""
    cursor = statement.cursor(1)
    if cursor.peek_words("CATALOG") and cursor.peek(1) is not None:
        cursor.next()
        (catalog,), _, _ = cursor.path("a catalog name", max_parts=1)
        cursor.expect_end()
        guard.check_reserved_parts([catalog])
        statement.require_catalog(catalog)
        return Plan.of(Action.USE, args={"catalog": catalog, "database": None})
    for word in ("DATABASE", "SCHEMA", "NAMESPACE"):
        if cursor.peek_words(word) and cursor.peek(1) is not None:
            cursor.next()
            break
    parts, _, _ = cursor.path("a database name", max_parts=2)
    cursor.expect_end()
    database = statement.database_identifier(parts)
    statement.require_database(database.catalog, database.database)
    return Plan.of(Action.USE, args={"catalog": database.catalog, "database": database.database})


def _text(statement: Statement, tokens: tuple[Token, ...]) -> str:
    """A key or value as written: a lone string or quoted name unquoted, else the source."""
    if len(tokens) == 1 and tokens[0].kind in ("string", "ident"):
        return tokens[0].text
    return statement.span(tokens[0], tokens[-1]) if tokens else ""


def plan_set(statement: Statement) -> Plan:
    """``SET key = value`` (allowlisted keys; with a registry in the context, the value
    checked and made canonical); ``SET`` / ``SET -v`` list the properties; ``SET key``
    shows one. A quoted value is unquoted."""
    rest = statement.tokens[1:]
    raw = _text(statement, rest)
    if not rest or raw == "-v":
        return Plan.of(Action.SET, args={"key": None, "value": None})
    equals = next((i for i, t in enumerate(rest) if t.is_punct("=")), None)
    key_tokens = rest if equals is None else rest[:equals]
    if not key_tokens:
        raise TokenCursor(statement.text, statement.tokens, 1).error("a property key")
    key = _text(statement, key_tokens)
    guard.check_set_key(key, statement.context.settable_keys)
    value = None if equals is None else _text(statement, rest[equals + 1 :])
    registry = statement.context.session_properties
    if value is not None and registry is not None:
        # Type and range now, with the server's limits: a refused value never becomes a job
        # that could run (the web side checks again when it stores the value).
        value = registry.check(key, value, field="args")
    return Plan.of(Action.SET, args={"key": key, "value": value})


def plan_reset(statement: Statement) -> Plan:
    """``RESET`` (all properties) or ``RESET key`` (allowlisted keys)."""
    rest = statement.tokens[1:]
    if not rest:
        return Plan.of(Action.RESET, args={"key": None})
    key = _text(statement, rest)
    guard.check_set_key(key, statement.context.settable_keys, "RESET")
    return Plan.of(Action.RESET, args={"key": key})
