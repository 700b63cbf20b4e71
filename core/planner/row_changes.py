"""Row-level changes of managed Delta tables (ADR 0019, "Row-level DML"):

    MERGE INTO p [[AS] a] USING (p2 | (query)) [[AS] b] ON cond
        WHEN MATCHED [AND cond] THEN UPDATE SET * | UPDATE SET c = e, … | DELETE
        WHEN NOT MATCHED [BY TARGET] [AND cond] THEN INSERT * | INSERT (c, …) VALUES (e, …)
        WHEN NOT MATCHED BY SOURCE [AND cond] THEN UPDATE SET c = e, … | DELETE
    UPDATE p [[AS] a] SET c = e, … [WHERE cond]
    DELETE FROM p [[AS] a] [WHERE cond]

The target must be a managed Delta table the user may MODIFY; every source, and every table a
condition or a value reads, is resolved exactly as a query's (SELECT, temporary views, views,
functions). Each piece of the statement that reads (the source, each condition, each value)
is planned as the query ``SELECT <piece>`` (``SELECT * FROM <source>``) over the statement's
own text, positions kept, and spliced back: Spark runs the user's statement with the target
named by ``TARGET_ALIAS`` (registered by the worker over the table's latest Delta version)
and the sources by their aliases (read at their recorded versions). The worker's guard
checks that Spark parses exactly one such statement with that target
(``core.planner.spark_guard``, root ``dml``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from core import options as table_options
from core.errors import CoreError
from core.identifiers import ObjectIdentifier, quote_part
from core.planner import guard
from core.planner.errors import UnsupportedStatement
from core.planner.model import Relation
from core.planner.plan import Action, Plan
from core.planner.positions import splice
from core.planner.references import QueryRefs, analyze_query
from core.planner.resolve import Resolver
from core.planner.sources import is_managed_delta
from core.planner.statement import Statement
from core.planner.table_plans import table_plan
from core.planner.tokens import Token, TokenCursor, parse_error, tokenize
from core.planner.write_plans import TARGET_ALIAS, _missing_target, _target_table

DML_ALIAS = TARGET_ALIAS.format(1)
_EXPRESSION = "SELECT "
_RELATION = "SELECT * FROM "
# Words that end a table alias rather than being one.
_NOT_ALIASES = frozenset({"USING", "ON", "SET", "WHERE", "WHEN"})


@dataclass
class _Pieces:
    """What the statement reads, as regions of its text: ``(start, end, prefix)``."""

    reads: list[tuple[int, int, str]] = field(default_factory=list)
    target: tuple[int, int] = (0, 0)
    target_aliased: bool = False
    target_parts: tuple[str, ...] = ()


def _scan(cursor: TokenCursor, stop_words: Sequence[str], commas: bool = False) -> tuple[int, int]:
    """The token range ``[first, end)`` of an expression: up to a top-level stop word (or
    ',' with ``commas``, or an unmatched ')'), parentheses and CASE … END nested."""
    first = cursor.position
    depth = 0
    while True:
        token = cursor.peek()
        if token is None:
            break
        if depth == 0 and (
            token.upper in stop_words
            or (commas and token.is_punct(","))
            or token.is_punct(")")
            or token.is_punct(";")
        ):
            break
        if token.is_punct("(", "[") or token.is_word("CASE"):
            depth += 1
        elif token.is_punct(")", "]") or token.is_word("END"):
            depth -= 1
        cursor.next()
    if cursor.position == first:
        raise cursor.error("an expression")
    return first, cursor.position


def _region(cursor: TokenCursor, first: int, end: int) -> tuple[int, int]:
    return cursor.tokens[first].start, cursor.tokens[end - 1].end


def _read_expression(
    cursor: TokenCursor, pieces: _Pieces, stop_words: Sequence[str], commas: bool = False
) -> None:
    first, end = _scan(cursor, stop_words, commas)
    start, stop = _region(cursor, first, end)
    pieces.reads.append((start, stop, _EXPRESSION))


def _alias(cursor: TokenCursor) -> bool:
    """``[AS] name`` after a table; True if one was given."""
    if cursor.accept_words("AS"):
        cursor.expect_name("an alias")
        return True
    token = cursor.peek()
    if token is not None and token.is_name and token.upper not in _NOT_ALIASES:
        cursor.expect_name("an alias")
        return True
    return False


def _target(cursor: TokenCursor, pieces: _Pieces) -> None:
    parts, start, end = cursor.path("a table name")
    guard.check_file_path_table(parts, "Writing")
    pieces.target = (start, end)
    pieces.target_parts = parts
    pieces.target_aliased = _alias(cursor)


def _assignments(cursor: TokenCursor, pieces: _Pieces, stop_words: Sequence[str]) -> None:
    """``c = e, …`` (a column may be qualified by the target's alias)."""
    while True:
        cursor.path("a column name", max_parts=2)
        cursor.expect_punct("=")
        _read_expression(cursor, pieces, stop_words, commas=True)
        if not cursor.accept_punct(","):
            return


def _source(cursor: TokenCursor, pieces: _Pieces) -> None:
    """``USING p [[AS] b]`` or ``USING (query) [[AS] b]``: read as ``SELECT * FROM …``."""
    first = cursor.position
    token = cursor.peek()
    if token is not None and token.is_punct("("):
        depth = 0
        while True:
            token = cursor.next()
            if token.is_punct("("):
                depth += 1
            elif token.is_punct(")"):
                depth -= 1
                if depth == 0:
                    break
    else:
        cursor.path("a table name or a (query)")
    _alias(cursor)
    start, stop = _region(cursor, first, cursor.position)
    pieces.reads.append((start, stop, _RELATION))


def _merge_action(cursor: TokenCursor, pieces: _Pieces, not_matched: bool) -> None:
    stops = ("WHEN",)
    if not_matched:
        cursor.expect_words("INSERT")
        if cursor.accept_punct("*"):
            return
        cursor.expect_punct("(")
        while True:
            cursor.expect_name("a column name")
            if not cursor.accept_punct(","):
                break
        cursor.expect_punct(")")
        cursor.expect_words("VALUES")
        open_paren = cursor.peek()
        cursor.expect_punct("(")
        _scan(cursor, ())
        close = cursor.expect_punct(")")
        if open_paren is not None:
            pieces.reads.append((open_paren.start, close.end, _EXPRESSION))
        return
    if cursor.accept_words("DELETE"):
        return
    cursor.expect_words("UPDATE", "SET")
    if cursor.accept_punct("*"):
        return
    _assignments(cursor, pieces, stops)


def _parse_merge(cursor: TokenCursor, pieces: _Pieces) -> None:
    if cursor.peek_words("WITH", "SCHEMA", "EVOLUTION"):
        raise UnsupportedStatement(
            "MERGE WITH SCHEMA EVOLUTION is not supported: a MERGE changes rows, not the "
            "table's columns (change them with ALTER TABLE)."
        )
    cursor.expect_words("INTO")
    _target(cursor, pieces)
    cursor.expect_words("USING")
    _source(cursor, pieces)
    cursor.expect_words("ON")
    _read_expression(cursor, pieces, ("WHEN",))
    if not cursor.peek_words("WHEN"):
        raise cursor.error("WHEN MATCHED or WHEN NOT MATCHED")
    while cursor.accept_words("WHEN"):
        not_matched = False
        if cursor.accept_words("NOT", "MATCHED"):
            by_source = cursor.accept_words("BY", "SOURCE")
            if not by_source:
                cursor.accept_words("BY", "TARGET")
            not_matched = not by_source
        else:
            cursor.expect_words("MATCHED")
        if cursor.accept_words("AND"):
            _read_expression(cursor, pieces, ("THEN",))
        cursor.expect_words("THEN")
        _merge_action(cursor, pieces, not_matched)
    cursor.expect_end()


def _parse_update(cursor: TokenCursor, pieces: _Pieces) -> None:
    _target(cursor, pieces)
    cursor.expect_words("SET")
    _assignments(cursor, pieces, ("WHERE",))
    if cursor.accept_words("WHERE"):
        _read_expression(cursor, pieces, ())
    cursor.expect_end()


def _parse_delete(cursor: TokenCursor, pieces: _Pieces) -> None:
    cursor.expect_words("FROM")
    _target(cursor, pieces)
    if cursor.accept_words("WHERE"):
        _read_expression(cursor, pieces, ())
    cursor.expect_end()


_PARSERS = {Action.MERGE: _parse_merge, Action.UPDATE: _parse_update, Action.DELETE: _parse_delete}
# The statement as the job's result and the versions' history name it.
OPERATIONS = {Action.MERGE: "MERGE", Action.UPDATE: "UPDATE", Action.DELETE: "DELETE"}
ONLY_DELTA = "only managed Delta tables (CREATE TABLE … USING delta, without LOCATION)"
_STATEMENTS = {Action.MERGE: "MERGE INTO", Action.UPDATE: "UPDATE", Action.DELETE: "DELETE FROM"}


def _masked(text: str, start: int, end: int, prefix: str) -> str:
    """``text`` up to ``end`` with everything before ``start`` blanked and ``prefix`` written
    just before it: the piece parses as a query at its own positions."""
    if start < len(prefix):
        raise parse_error(text, start, "Expected a statement before this expression")
    chars = ["\n" if ch == "\n" else " " for ch in text[:start]]
    chars[start - len(prefix) : start] = list(prefix)
    return "".join(chars) + text[start:end]


@dataclass(frozen=True)
class _Read:
    """One piece read as a query: ``prefix + piece`` over the statement's positions."""

    start: int
    end: int
    masked: str
    tokens: tuple[Token, ...]
    refs: QueryRefs


def _analyzed(statement: Statement, start: int, end: int, prefix: str) -> _Read:
    """The piece ``text[start:end]`` read as ``prefix + piece`` and guarded."""
    masked = _masked(statement.text, start, end, prefix)
    tokens = tuple(tokenize(masked))
    return _Read(start, end, masked, tokens, analyze_query(masked, tokens))


def _resolve_piece(statement: Statement, resolver: Resolver, piece: _Read) -> str:
    """The piece rewritten to the plan's aliases."""
    masked, tokens, refs, start, end = (
        piece.masked,
        piece.tokens,
        piece.refs,
        piece.start,
        piece.end,
    )
    context = statement.context
    rewritten = resolver.rewrite_query(
        masked,
        tokens,
        context.current_catalog,
        context.current_database,
        end,
        start,
        refs=refs,
    )
    return rewritten.sql


def refuse_other_kinds(
    statement: Statement, ident: ObjectIdentifier, what: str, external_hint: str = ""
) -> Relation:
    """The relation ``what`` (a MERGE, an ALTER TABLE…) changes, once it is neither unseen,
    a view, temporary nor external, each refused with a sentence; its format, status and
    privileges are the caller's to check."""
    relation = statement.reader.get_relation(ident)
    if relation is None or statement.authorizer.see(relation) is None:
        raise _missing_target(ident)
    shown = relation.identifier.quoted()
    details: dict[str, Any] = {"identifier": list(relation.identifier.parts)}
    if relation.kind == "view":
        raise CoreError(f"{shown} is a view; {what} changes {ONLY_DELTA}.", details=details)
    if relation.temporary:
        raise UnsupportedStatement(
            f"{what} of temporary tables is not supported ({shown} is temporary): it changes "
            f"{ONLY_DELTA}.",
            details=details,
        )
    if any(str(k).lower() in ("path", "connector") for k in relation.options):
        raise UnsupportedStatement(
            f"Table {shown} is external: {what} changes {ONLY_DELTA}{external_hint}.",
            details=details,
        )
    return relation


def _check_target(statement: Statement, ident: ObjectIdentifier, what: str) -> Relation:
    """A managed Delta table the user may MODIFY, with a committed version; every other
    kind of object is refused with a sentence (after the user was found to see it)."""
    relation = refuse_other_kinds(statement, ident, what)
    shown = relation.identifier.quoted()
    details: dict[str, Any] = {"identifier": list(relation.identifier.parts)}
    only = ONLY_DELTA
    if not is_managed_delta(relation):
        fmt = next(
            (str(v) for k, v in relation.options.items() if str(k).lower() == "format"), "parquet"
        )
        raise UnsupportedStatement(
            f"Table {shown} is stored as {fmt} (Tessera's own versions): {what} changes {only}.",
            details=details,
        )
    table = _target_table(statement, ident)  # status, MODIFY, files shared with another table
    if table.delta_version is None:
        raise CoreError(
            f"Table {shown} has no committed version yet: {what} changes committed rows; "
            "INSERT INTO it first.",
            details=details,
        )
    return table


def plan_row_change(statement: Statement, action: Action) -> Plan:
    """``MERGE INTO`` / ``UPDATE`` / ``DELETE FROM`` a managed Delta table → action
    ``merge`` / ``update`` / ``delete`` (job kind ``insert``: a write into a table)."""
    what = _STATEMENTS[action]
    pieces = _Pieces()
    cursor = statement.cursor(1)
    _PARSERS[action](cursor, pieces)
    reads = [_analyzed(statement, *piece) for piece in pieces.reads]  # the guard, first
    ident = statement.object_identifier(pieces.target_parts)
    table = _check_target(statement, ident, what)
    context = statement.context
    resolver = Resolver(statement.reader, context, statement.authorizer)
    replacements = [
        (piece.start, piece.end, _resolve_piece(statement, resolver, piece)) for piece in reads
    ]
    named = quote_part(DML_ALIAS)
    if not pieces.target_aliased:
        named += f" AS {quote_part(pieces.target_parts[-1])}"
    replacements.append((*pieces.target, named))
    sql = splice(statement.text, statement.tokens[0].start, statement.end, replacements)
    target = table_plan(DML_ALIAS, table, context.storage_roots)
    args: dict[str, Any] = {
        "identifier": list(table.identifier.parts),
        "operation": OPERATIONS[action],
        "table": target.to_dict(),
        "location": table.location,
        "managed": True,
        "format": table_options.DELTA,
        "read_version": table.delta_version,
    }
    return Plan.of(
        action,
        needs_spark=True,
        sql=sql,
        relations=tuple(resolver.relations),
        functions=tuple(resolver.functions),
        target=table.identifier.parts,
        args=args,
    )


def plan_merge(statement: Statement) -> Plan:
    return plan_row_change(statement, Action.MERGE)


def plan_update(statement: Statement) -> Plan:
    return plan_row_change(statement, Action.UPDATE)


def plan_delete(statement: Statement) -> Plan:
    return plan_row_change(statement, Action.DELETE)


def is_row_change(tokens: Sequence[Token]) -> bool:
    return bool(tokens) and tokens[0].is_word("MERGE", "UPDATE", "DELETE")
