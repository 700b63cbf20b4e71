"""Queries: guarded, resolved and rewritten to registered aliases (EXPLAIN of a query is
``classify.plan_explain``: it asks the statement's own rules first)."""

from __future__ import annotations

from collections.abc import Sequence

from core.planner.plan import Action, Plan
from core.planner.resolve import Resolver
from core.planner.statement import Statement
from core.planner.tokens import Token

QUERY_STARTS = ("SELECT", "WITH", "VALUES", "TABLE", "FROM")


def starts_query(tokens: Sequence[Token]) -> bool:
    """Whether the tokens begin a query (SELECT/WITH/VALUES/TABLE/FROM or '(')."""
    return bool(tokens) and (tokens[0].is_punct("(") or tokens[0].is_word(*QUERY_STARTS))


def plan_query(statement: Statement) -> Plan:
    context = statement.context
    resolver = Resolver(statement.reader, context, statement.authorizer)
    rewritten = resolver.rewrite_query(
        statement.text,
        statement.tokens,
        context.current_catalog,
        context.current_database,
        statement.end,
        statement.start,
    )
    return Plan.of(
        Action.QUERY,
        needs_spark=True,
        sql=rewritten.sql,
        relations=tuple(resolver.relations),
        functions=tuple(resolver.functions),
    )
