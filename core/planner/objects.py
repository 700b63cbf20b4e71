"""CREATE CATALOG / DATABASE / VIEW / FUNCTION and DROP of every object kind, temporary
views and functions (FLIP-64) included."""

from __future__ import annotations

from typing import Any

from core.errors import CoreError, PermissionDenied
from core.identifiers import ObjectIdentifier, quote_part, quote_path, validate_name
from core.planner import guard
from core.planner.authorize import securable_of
from core.planner.errors import ForbiddenSql, TemporaryObjectExists
from core.planner.functions import system_identifier
from core.planner.model import FunctionDef, Relation
from core.planner.plan import Action, Plan
from core.planner.queries import starts_query
from core.planner.resolve import Resolver
from core.planner.statement import (
    Statement,
    accept_if_exists,
    accept_if_not_exists,
    data_type,
    key_value_list,
    missing_relation,
    type_span,
)
from core.planner.tokens import TokenCursor
from core.privileges import Decision, Privilege, Securable


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
    if not statement.context.may_create_catalogs:
        raise PermissionDenied(
            "You may not create catalogs: on this server only admins create them "
            "(TESSERA_CATALOG_CREATORS). Ask an admin for a catalog, or for CREATE on one "
            "to make databases in it.",
            details={"kind": "catalog", "identifier": [name], "privilege": "CREATE"},
        )
    return Plan.of(
        Action.CREATE_CATALOG,
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
    statement.require_catalog(database.catalog, Privilege.CREATE)
    return Plan.of(
        Action.CREATE_DATABASE,
        target=database.parts,
        args={
            "identifier": list(database.parts),
            "if_not_exists": if_not_exists,
            "comment": comment,
            "properties": properties,
        },
    )


def plan_create_view(
    statement: Statement, cursor: TokenCursor, or_replace: bool, *, temporary: bool = False
) -> Plan:
    """``CREATE [OR REPLACE] [TEMPORARY] VIEW [IF NOT EXISTS] p [COMMENT '…'] AS <query>``.

    The query is resolved now against the session's objects (temporary ones first): a
    temporary view may read temporary objects and needs no existing catalog or database.
    """
    if_not_exists = accept_if_not_exists(cursor)
    parts, _, _ = cursor.path("a view name")
    ident = statement.object_identifier(parts)
    columns = _view_columns(cursor)
    comment: str | None = None
    while cursor.accept_words("COMMENT"):
        comment = cursor.expect_string("a comment string")
    cursor.expect_words("AS")
    query_tokens = statement.tokens[cursor.position :]
    if not starts_query(query_tokens):
        raise cursor.error("a query (SELECT, WITH, VALUES or TABLE)")
    if or_replace and if_not_exists:
        shown = "TEMPORARY VIEW" if temporary else "VIEW"
        raise CoreError(f"CREATE OR REPLACE {shown} cannot be combined with IF NOT EXISTS.")
    resolver = Resolver(statement.reader, statement.context, statement.authorizer)
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
    if not temporary:
        read = resolver.temporary_objects()
        if read:
            raise CoreError(
                f"The view {ident.quoted()} cannot read temporary objects ({', '.join(read)}): "
                "a permanent view must only read permanent ones."
            )
        statement.require_database(ident.catalog, ident.database, Privilege.CREATE)
        if or_replace:
            _check_replaced_view(statement, ident)
    query = statement.text[query_tokens[0].start : statement.end]
    args: dict[str, Any] = {
        "identifier": list(ident.parts),
        "if_not_exists": if_not_exists,
        "or_replace": or_replace,
        "query": _renamed(query, ident, columns),
        "comment": comment,
        "expanded_query": (
            None if rewritten.expanded is None else _renamed(rewritten.expanded, ident, columns)
        ),
    }
    if temporary:
        args["temporary"] = True
    return Plan.of(
        Action.CREATE_VIEW,
        needs_spark=True,
        sql=_renamed(rewritten.sql, ident, columns),
        relations=tuple(resolver.relations),
        functions=tuple(resolver.functions),
        target=ident.parts,
        args=args,
    )


def _view_columns(cursor: TokenCursor) -> list[str]:
    """A view's column list, ``(id, name, …)``: the names its query's columns take, as in
    Spark (``CREATE VIEW v (id, name) AS VALUES …``)."""
    columns: list[str] = []
    if not cursor.accept_punct("("):
        return columns
    while True:
        columns.append(cursor.expect_name("a column name"))
        if cursor.peek_words("COMMENT"):
            raise CoreError(
                "Column comments in a view's column list are not supported by Tessera: "
                "name the columns only, and give the view a COMMENT."
            )
        if cursor.accept_punct(")"):
            return columns
        cursor.expect_punct(",")


def _renamed(query: str, ident: ObjectIdentifier, columns: list[str]) -> str:
    """The view's query with its columns named by the column list: Spark's own form,
    ``SELECT * FROM (<query>) AS v(id, name)`` (the names must match the query's columns
    in number, which Spark checks)."""
    if not columns:
        return query
    names = ", ".join(quote_part(c) for c in columns)
    return f"SELECT * FROM ({query}\n) AS {quote_part(ident.parts[-1])}({names})"


def _check_replaced_view(statement: Statement, ident: ObjectIdentifier) -> None:
    """CREATE OR REPLACE VIEW over an existing permanent view drops it: MANAGE on it. (The
    user may create in its database, so it is never hidden: refused, not missing.)"""
    existing = statement.reader.get_relation(ident)
    if existing is None or existing.temporary or existing.kind != "view":
        return
    statement.authorizer.require(
        existing, Privilege.MANAGE, missing=lambda: missing_relation(ident)
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


def _system_function_name(parts: tuple[str, ...], statement_words: str) -> str:
    """A temporary system function has a one-part name (it lives in no catalog)."""
    if len(parts) != 1:
        raise CoreError(
            f"{statement_words} takes a one-part name, not {quote_path(parts)}: a system "
            "function lives in no catalog or database (use TEMPORARY FUNCTION for a catalog "
            "function).",
            details={"identifier": list(parts)},
        )
    return parts[0]


def plan_create_function(
    statement: Statement, cursor: TokenCursor, *, temporary: bool = False, system: bool = False
) -> Plan:
    """``CREATE [TEMPORARY [SYSTEM]] FUNCTION [IF NOT EXISTS] p AS 'dotted' [LANGUAGE PYTHON]``
    or ``… FUNCTION p(x INT, …) RETURNS type RETURN expr``.

    A temporary system function has a one-part name (``args.identifier = [name]``); its SQL
    body is resolved in the session's current catalog and database. Temporary functions
    need no existing catalog or database.
    """
    if_not_exists = accept_if_not_exists(cursor)
    parts, _, _ = cursor.path("a function name")
    target: tuple[str, ...]
    if system:
        name = _system_function_name(parts, "CREATE TEMPORARY SYSTEM FUNCTION")
        guard.check_function_name([name])
        ident = system_identifier(name)
        target = (name,)
    else:
        ident = statement.object_identifier(parts)
        guard.check_function_name(ident.parts)
        target = ident.parts
    args: dict[str, Any] = {"identifier": list(target), "if_not_exists": if_not_exists}
    flags: dict[str, Any] = {"temporary": True, "system": system} if temporary else {}

    def check_target() -> None:
        if temporary:
            return
        existing = statement.reader.get_function(ident)
        if existing is not None and existing.temporary:
            raise TemporaryObjectExists(ident, "function", "creating", "function")
        statement.require_database(ident.catalog, ident.database, Privilege.CREATE)

    following = cursor.peek()
    if following is not None and following.is_punct("("):
        parameters, return_type, comment = _sql_function_signature(statement, cursor)
        body_tokens = statement.tokens[cursor.position :]
        if not body_tokens:
            raise cursor.error("the function body")
        body = statement.span(body_tokens[0], body_tokens[-1])
        resolver = Resolver(statement.reader, statement.context, statement.authorizer)
        rewritten = resolver.function_body(body, ident, statement.text, body_tokens[0].start)
        read = resolver.temporary_objects()
        if read and not temporary:
            raise CoreError(
                f"The function {ident.quoted()} cannot call temporary functions "
                f"({', '.join(read)}): a permanent function must only call permanent ones."
            )
        check_target()
        args.update(
            language="sql",
            implementation=body,
            parameters=parameters,
            return_type=return_type,
            comment=comment,
            **flags,
        )
        return Plan.of(
            Action.CREATE_FUNCTION,
            needs_spark=True,
            sql=rewritten,
            functions=tuple(resolver.functions),
            target=target,
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
    check_target()
    args.update(
        language="python",
        implementation=dotted,
        parameters=[],
        return_type="",
        comment=comment,
        **flags,
    )
    return Plan.of(Action.CREATE_FUNCTION, needs_spark=True, target=target, args=args)


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
    if kind in ("table", "view", "function"):
        _check_no_temporary(statement, ObjectIdentifier.of(identifier), kind)
    _check_drop(statement, kind, identifier)
    return Plan.of(
        f"drop_{kind}",
        target=identifier,
        args={"identifier": list(identifier), "if_exists": if_exists, "cascade": cascade},
    )


def _check_drop(statement: Statement, kind: str, identifier: tuple[str, ...]) -> None:
    """DROP needs MANAGE on what it drops. A missing object, and one the user may not see,
    are left to the command, which answers both alike (not found, or nothing to do with IF
    EXISTS): the plan is the same for both."""
    authorizer = statement.authorizer
    target: Securable | Relation | FunctionDef | None
    if kind == "catalog":
        target = statement.reader.catalog_securable(identifier[0])
    elif kind == "database":
        target = statement.reader.database_securable(identifier[0], identifier[1])
    elif kind == "function":
        target = statement.reader.get_function(ObjectIdentifier.of(identifier))
    else:
        target = statement.reader.get_relation(ObjectIdentifier.of(identifier))
    if target is None:
        return
    s = target if isinstance(target, Securable) else securable_of(target)
    if s is None:  # temporary: refused before (TemporaryObjectExists)
        return
    decided = authorizer.decision(s, Privilege.MANAGE)
    if decided is Decision.HIDDEN:
        return
    authorizer.require(s, Privilege.MANAGE, missing=lambda: AssertionError("seen"))


def _check_no_temporary(statement: Statement, ident: ObjectIdentifier, kind: str) -> None:
    """A permanent DROP (``kind``: table, view or function) while a temporary object with
    that identifier exists is refused; the temporary object's kind names it."""
    temporary_kind: str
    if kind == "function":
        function = statement.reader.get_function(ident)
        if function is None or not function.temporary:
            return
        temporary_kind = "function"
    else:
        relation = statement.reader.get_relation(ident)
        if relation is None or not relation.temporary:
            return
        temporary_kind = relation.kind
    raise TemporaryObjectExists(ident, temporary_kind, "removing", kind)


def plan_drop_temporary(statement: Statement, cursor: TokenCursor) -> Plan:
    """``DROP TEMPORARY TABLE|VIEW|FUNCTION [IF EXISTS] p`` and ``DROP TEMPORARY SYSTEM
    FUNCTION [IF EXISTS] name`` (cursor after TEMPORARY): only temporary objects are
    considered, and whether one exists is for the web side to say."""
    system = cursor.accept_words("SYSTEM")
    token = cursor.peek()
    word = token.upper if token is not None else ""
    if system and word != "FUNCTION":
        raise cursor.error("FUNCTION")
    kind = {"TABLE": "table", "VIEW": "view", "FUNCTION": "function"}.get(word)
    if token is None or kind is None:
        shown = "DROP TEMPORARY"
        if token is not None:
            shown += f" {statement.text[token.start : token.end]}"
        raise ForbiddenSql(
            f"{shown} is not supported: Tessera drops temporary tables, views and functions."
        )
    cursor.next()
    if_exists = accept_if_exists(cursor)
    parts, _, _ = cursor.path(f"a {kind} name")
    cursor.expect_end()
    identifier: tuple[str, ...]
    if system:
        identifier = (_system_function_name(parts, "DROP TEMPORARY SYSTEM FUNCTION"),)
    else:
        identifier = statement.object_identifier(parts).parts
    args: dict[str, Any] = {
        "identifier": list(identifier),
        "if_exists": if_exists,
        "cascade": False,
        "temporary": True,
    }
    if kind == "function":
        args["system"] = system
    return Plan.of(f"drop_{kind}", target=identifier, args=args)
