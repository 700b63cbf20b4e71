"""CREATE CATALOG / DATABASE / VIEW / FUNCTION and DROP of every object kind."""

from __future__ import annotations

from typing import Any

from core.errors import CoreError
from core.identifiers import validate_name
from core.planner import guard
from core.planner.errors import ForbiddenSql
from core.planner.plan import Plan
from core.planner.queries import starts_query
from core.planner.resolve import Resolver
from core.planner.statement import (
    Statement,
    accept_if_exists,
    accept_if_not_exists,
    data_type,
    key_value_list,
    type_span,
)
from core.planner.tokens import TokenCursor


def _comment_and_properties(cursor: TokenCursor) -> tuple[str | None, dict[str, str]]:
    """``[COMMENT '…'] [WITH [DB]PROPERTIES (…) | WITH (…)]`` in any order."""
    comment: str | None = None
    properties: dict[str, str] = {}
    while not cursor.at_end:
        if cursor.accept_words("COMMENT"):
            comment = cursor.expect_string("a comment string")
        elif cursor.accept_words("WITH"):
            _ = cursor.accept_words("DBPROPERTIES") or cursor.accept_words("PROPERTIES")
            properties.update(key_value_list(cursor))
        elif cursor.peek_words("LOCATION"):
            raise ForbiddenSql(
                "LOCATION is not allowed here: databases and catalogs have no location in "
                "Tessera; tables give their own."
            )
        else:
            raise cursor.error("COMMENT, WITH (…) or the end of the statement")
    return comment, properties


def plan_create_catalog(statement: Statement, cursor: TokenCursor) -> Plan:
    if_not_exists = accept_if_not_exists(cursor)
    (name,), _, _ = cursor.path("a catalog name", max_parts=1)
    guard.check_reserved_parts([name])
    comment, properties = _comment_and_properties(cursor)
    return Plan.of(
        "create_catalog",
        target=(name,),
        args={
            "identifier": [name],
            "if_not_exists": if_not_exists,
            "comment": comment,
            "properties": properties,
        },
    )


def plan_create_database(statement: Statement, cursor: TokenCursor) -> Plan:
    if_not_exists = accept_if_not_exists(cursor)
    parts, _, _ = cursor.path("a database name", max_parts=2)
    database = statement.database_identifier(parts)
    comment, properties = _comment_and_properties(cursor)
    statement.require_catalog(database.catalog)
    return Plan.of(
        "create_database",
        target=database.parts,
        args={
            "identifier": list(database.parts),
            "if_not_exists": if_not_exists,
            "comment": comment,
            "properties": properties,
        },
    )


def plan_create_view(statement: Statement, cursor: TokenCursor, or_replace: bool) -> Plan:
    """``CREATE [OR REPLACE] VIEW [IF NOT EXISTS] p [COMMENT '…'] AS <query>``."""
    if_not_exists = accept_if_not_exists(cursor)
    parts, _, _ = cursor.path("a view name")
    ident = statement.object_identifier(parts)
    comment: str | None = None
    while cursor.accept_words("COMMENT"):
        comment = cursor.expect_string("a comment string")
    cursor.expect_words("AS")
    query_tokens = statement.tokens[cursor.position :]
    if not starts_query(query_tokens):
        raise cursor.error("a query (SELECT, WITH, VALUES or TABLE)")
    if or_replace and if_not_exists:
        raise CoreError("CREATE OR REPLACE VIEW cannot be combined with IF NOT EXISTS.")
    resolver = Resolver(statement.reader, statement.context)
    rewritten = resolver.rewrite_query(
        statement.text,
        query_tokens,
        statement.context.current_catalog,
        statement.context.current_database,
        statement.end,
    )
    if resolver.reads(ident):
        raise CoreError(
            f"Recursive view {ident.quoted()} detected: its query reads the view itself."
        )
    temporary = resolver.temporary_objects()
    if temporary:
        raise CoreError(
            f"The view {ident.quoted()} cannot read temporary objects ({', '.join(temporary)}): "
            "a permanent view must only read permanent ones."
        )
    statement.require_database(ident.catalog, ident.database)
    return Plan.of(
        "create_view",
        needs_spark=True,
        sql=rewritten.sql,
        relations=tuple(resolver.relations),
        functions=tuple(resolver.functions),
        target=ident.parts,
        args={
            "identifier": list(ident.parts),
            "if_not_exists": if_not_exists,
            "or_replace": or_replace,
            "query": statement.text[query_tokens[0].start : statement.end],
            "comment": comment,
            "expanded_query": rewritten.expanded,
        },
    )


_CHARACTERISTICS = (
    ("NOT", "DETERMINISTIC"),
    ("DETERMINISTIC",),
    ("CONTAINS", "SQL"),
    ("READS", "SQL", "DATA"),
)
_RETURNS_STOP = ("RETURN", "COMMENT", "LANGUAGE", "DETERMINISTIC", "CONTAINS", "READS")


def _sql_function_signature(
    statement: Statement, cursor: TokenCursor
) -> tuple[list[list[str]], str, str | None]:
    """``(name type, …) RETURNS type [characteristics] RETURN``; cursor ends on the body."""
    cursor.expect_punct("(")
    parameters: list[list[str]] = []
    seen: set[str] = set()
    if not cursor.accept_punct(")"):
        while True:
            name = cursor.expect_name("a parameter name")
            first, last = type_span(cursor, ("COMMENT", "DEFAULT"))
            parameter_type = data_type(statement, first, last, f"parameter `{name}`")
            if name.lower() in seen:
                raise cursor.error_at(first, f"The parameter `{name}` is declared twice")
            seen.add(name.lower())
            parameters.append([name, parameter_type.sql()])
            if cursor.accept_punct(")"):
                break
            cursor.expect_punct(",")
    cursor.expect_words("RETURNS")
    first, last = type_span(cursor, _RETURNS_STOP)
    return_type = data_type(statement, first, last, "the return type").sql()
    comment: str | None = None
    while not cursor.accept_words("RETURN"):
        if cursor.accept_words("COMMENT"):
            comment = cursor.expect_string("a comment string")
        elif cursor.accept_words("LANGUAGE"):
            cursor.expect_words("SQL")
        elif not any(cursor.accept_words(*words) for words in _CHARACTERISTICS):
            raise cursor.error("RETURN and the function body")
    return parameters, return_type, comment


def plan_create_function(statement: Statement, cursor: TokenCursor) -> Plan:
    """``CREATE FUNCTION [IF NOT EXISTS] p AS 'dotted' [LANGUAGE PYTHON]`` or
    ``CREATE FUNCTION p(x INT, …) RETURNS type RETURN expr``."""
    if_not_exists = accept_if_not_exists(cursor)
    parts, _, _ = cursor.path("a function name")
    ident = statement.object_identifier(parts)
    guard.check_function_name(ident.parts)
    args: dict[str, Any] = {"identifier": list(ident.parts), "if_not_exists": if_not_exists}
    following = cursor.peek()
    if following is not None and following.is_punct("("):
        parameters, return_type, comment = _sql_function_signature(statement, cursor)
        body_tokens = statement.tokens[cursor.position :]
        if not body_tokens:
            raise cursor.error("the function body")
        body = statement.span(body_tokens[0], body_tokens[-1])
        resolver = Resolver(statement.reader, statement.context)
        rewritten = resolver.function_body(body, ident, statement.text, body_tokens[0].start)
        statement.require_database(ident.catalog, ident.database)
        args.update(
            language="sql",
            implementation=body,
            parameters=parameters,
            return_type=return_type,
            comment=comment,
        )
        return Plan.of(
            "create_function",
            needs_spark=True,
            sql=rewritten,
            functions=tuple(resolver.functions),
            target=ident.parts,
            args=args,
        )
    cursor.expect_words("AS")
    implementation = cursor.expect_string("the quoted Python name of the function")
    comment = None
    while not cursor.at_end:
        if cursor.accept_words("LANGUAGE"):
            language = cursor.expect_name("a language")
            if language.upper() != "PYTHON":
                raise ForbiddenSql(
                    f"LANGUAGE {language.upper()} is not allowed: catalog functions are Python "
                    "functions from allowlisted packages or SQL functions."
                )
        elif cursor.accept_words("COMMENT"):
            comment = cursor.expect_string("a comment string")
        else:
            raise cursor.error("LANGUAGE PYTHON or the end of the statement")
    dotted = guard.check_udf_implementation(implementation, statement.context.udf_packages)
    statement.require_database(ident.catalog, ident.database)
    args.update(
        language="python",
        implementation=dotted,
        parameters=[],
        return_type="",
        comment=comment,
    )
    return Plan.of("create_function", needs_spark=True, target=ident.parts, args=args)


_DROP_KINDS = {
    "CATALOG": "catalog",
    "DATABASE": "database",
    "SCHEMA": "database",
    "NAMESPACE": "database",
    "TABLE": "table",
    "VIEW": "view",
    "FUNCTION": "function",
}


def plan_drop(statement: Statement, cursor: TokenCursor) -> Plan:
    """``DROP CATALOG|DATABASE|SCHEMA|TABLE|VIEW|FUNCTION [IF EXISTS] p [CASCADE]``."""
    token = cursor.peek()
    kind = _DROP_KINDS.get(token.upper) if token is not None else None
    if token is None or kind is None:
        shown = "DROP" if token is None else f"DROP {statement.text[token.start : token.end]}"
        raise ForbiddenSql(
            f"{shown} is not supported: Tessera drops catalogs, databases, tables, views "
            "and functions."
        )
    cursor.next()
    if_exists = accept_if_exists(cursor)
    identifier: tuple[str, ...]
    if kind == "catalog":
        (name,), _, _ = cursor.path("a catalog name", max_parts=1)
        guard.check_reserved_parts([name])
        identifier = (validate_name(name, "catalog name"),)
    elif kind == "database":
        parts, _, _ = cursor.path("a database name", max_parts=2)
        identifier = statement.database_identifier(parts).parts
    else:
        parts, _, _ = cursor.path(f"a {kind} name")
        identifier = statement.object_identifier(parts).parts
    cascade = cursor.accept_words("CASCADE")
    if not cascade:
        cursor.accept_words("RESTRICT")
    cursor.expect_end()
    return Plan.of(
        f"drop_{kind}",
        target=identifier,
        args={"identifier": list(identifier), "if_exists": if_exists, "cascade": cascade},
    )
