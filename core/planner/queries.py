"""Queries and EXPLAIN: guarded, resolved and rewritten to registered aliases."""

from __future__ import annotations

from collections.abc import Sequence

from core.planner.errors import ForbiddenSql
from core.planner.plan import Plan
from core.planner.resolve import Resolver
from core.planner.statement import Statement
from core.planner.tokens import Token

QUERY_STARTS = ("SELECT", "WITH", "VALUES", "TABLE", "FROM")
EXPLAIN_MODES = ("EXTENDED", "FORMATTED", "CODEGEN", "COST", "LOGICAL")


def starts_query(tokens: Sequence[Token]) -> bool:
    """Whether the tokens begin a query (SELECT/WITH/VALUES/TABLE/FROM or '(')."""
    return bool(tokens) and (tokens[0].is_punct("(") or tokens[0].is_word(*QUERY_STARTS))


def plan_query(statement: Statement) -> Plan:
    context = statement.context
    resolver = Resolver(statement.reader, context)
    rewritten = resolver.rewrite_query(
        statement.text,
        statement.tokens,
        context.current_catalog,
        context.current_database,
        statement.end,
        statement.start,
    )
    return Plan.of(
        "query",
        needs_spark=True,
        sql=rewritten.sql,
        relations=tuple(resolver.relations),
        functions=tuple(resolver.functions),
    )


def plan_explain(statement: Statement) -> Plan:
    """``EXPLAIN [mode] <query>``; the query part is rewritten, the prefix kept."""
    cursor = statement.cursor(1)
    mode = None
    token = cursor.peek()
    if token is not None and token.upper in EXPLAIN_MODES:
        mode = token.upper.lower()
        cursor.next()
    inner = statement.tokens[cursor.position :]
    if not inner:
        raise cursor.error("a query to explain")
    if not starts_query(inner):
        # Let the statement's own rules speak first (INSERT is unsupported, …).
        from core.planner.classify import plan_tokens  # classify imports this module

        plan_tokens(
            Statement(
                statement.text,
                inner,
                statement.reader,
                statement.context,
                inner[0].start,
                statement.end,
            )
        )
        raise ForbiddenSql("EXPLAIN can only explain queries (SELECT, WITH, VALUES, TABLE).")
    context = statement.context
    resolver = Resolver(statement.reader, context)
    rewritten = resolver.rewrite_query(
        statement.text, inner, context.current_catalog, context.current_database, statement.end
    )
    prefix = statement.text[statement.start : inner[0].start]
    return Plan.of(
        "explain",
        needs_spark=True,
        sql=prefix + rewritten.sql,
        relations=tuple(resolver.relations),
        functions=tuple(resolver.functions),
        args={"mode": mode},
    )
