"""Writes (FLIP-218): CTAS, INSERT and statement sets.

    CREATE TABLE [IF NOT EXISTS] p [USING fmt] [OPTIONS (…) | WITH (…)] [COMMENT '…']
        [PARTITIONED BY (c, …)] [LOCATION '…'] AS query          (clauses in any order)
    INSERT INTO|OVERWRITE [TABLE] p [(c1, c2, …) | BY NAME] query
    EXECUTE STATEMENT SET BEGIN INSERT …; INSERT …[;] END

The query of each is planned exactly like a query (guarded, resolved, spliced); the worker
analyses it, writes into a staging location and the web side commits (docs/statements.md,
"Writes"). The planner checks what the text and the catalog can tell before anything
runs: the target (a permanent table the user may MODIFY, whose path overlaps no other
table's), the options, the column list and, when the select list is plain, the column
count.

Existing CTAS targets: the reader returns a session's temporary object before the
permanent one, so when it returns a temporary object the permanent table is unknown to the
planner; the plan then goes ahead and the catalog's unique constraint decides when the
stage table is created (ALREADY_EXISTS, or ``skipped_exists`` with IF NOT EXISTS).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from core.errors import AlreadyExists, CoreError, NotFound, missing_object
from core.identifiers import ObjectIdentifier, name_key, quote_part
from core.options import WRITE_MODE
from core.planner import guard
from core.planner.ddl import Trailing, name_list, parse_trailing
from core.planner.errors import ForbiddenSql, UnsupportedStatement
from core.planner.model import Relation
from core.planner.plan import Action, Plan
from core.planner.queries import starts_query
from core.planner.references import QueryRefs, analyze_query
from core.planner.resolve import Resolver
from core.planner.sources import declared_source, written_source
from core.planner.statement import Statement, accept_if_not_exists
from core.planner.table_plans import staged_error, table_plan
from core.planner.tokens import Token, TokenCursor, parse_error
from core.planner.upserts import plan_upsert, read_hint
from core.privileges import Privilege
from core.session_properties import RUNTIME_MODE, runtime_mode_value

ATOMIC_OPTION = "table.ctas.atomic"
TARGET_ALIAS = "__tessera_t{}"  # the alias of an INSERT's target in ``args.table``
_QUERY = "a query (SELECT, WITH, VALUES or TABLE)"


def _shown_columns(names: Sequence[str]) -> str:
    return ", ".join(quote_part(name) for name in names) or "(none)"


# -- CTAS -----------------------------------------------------------------------------------


def _atomic(options: dict[str, str]) -> bool | None:
    """Remove the ``table.ctas.atomic`` option (any case) and return its value."""
    value: bool | None = None
    for key in [k for k in options if k.lower() == ATOMIC_OPTION]:
        raw = options.pop(key)
        if raw.strip().lower() not in ("true", "false"):
            raise CoreError(
                f"The option '{ATOMIC_OPTION}' must be 'true' or 'false', not '{raw}'.",
                details={"key": key},
            )
        value = raw.strip().lower() == "true"
    return value


def _runtime_mode(options: dict[str, str]) -> str | None:
    """Remove ``execution.runtime-mode`` (any case; a statement option, never stored) and
    return its value."""
    value: str | None = None
    for key in [k for k in options if k.lower() == RUNTIME_MODE]:
        value = runtime_mode_value(key, options.pop(key))
    return value


def _ctas_options(trailing: Trailing, roots: tuple[str, ...]) -> tuple[dict[str, str], bool | None]:
    """The options to store (managed: ``format``, parquet by default; external:
    ``connector`` and ``path`` under a storage root) and ``table.ctas.atomic``."""
    given = dict(trailing.options or {})
    atomic = _atomic(given)
    options = declared_source(trailing.using, given, trailing.location, roots, writes=True)
    if "connector" not in options and "format" not in options:
        options = {"format": "parquet", **options}
    return options, atomic


def _partition_names(names: Sequence[str]) -> list[str]:
    """Plain column names, each once; the worker checks them against the query's schema."""
    seen: set[str] = set()
    for name in names:
        if name_key(name) in seen:
            raise CoreError(f"Partition column `{name}` is listed twice.")
        seen.add(name_key(name))
    return list(names)


def plan_ctas(statement: Statement, position: int) -> Plan:
    """Plan ``CREATE TABLE … AS query`` whose TABLE keyword is the token at ``position``.

    An existing permanent table or view at the target: IF NOT EXISTS plans a skip
    (``args.skip``, nothing to run, the query only guarded), else ALREADY_EXISTS. A
    temporary object there does not count (see the module docstring).
    """
    cursor = statement.cursor(position + 1)
    if_not_exists = accept_if_not_exists(cursor)
    parts, _, _ = cursor.path("a table name")
    guard.check_file_path_table(parts, "Writing")
    ident = statement.object_identifier(parts)
    following = cursor.peek()
    if following is not None and following.is_punct("("):
        raise CoreError(
            "CREATE TABLE … AS takes no column list: the table's columns are the query's. "
            "Rename or cast columns in the query instead."
        )
    trailing = parse_trailing(cursor, until_as=True)
    cursor.expect_words("AS")
    query_tokens = statement.tokens[cursor.position :]
    if not starts_query(query_tokens):
        raise cursor.error(_QUERY)
    given = dict(trailing.options or {})
    runtime_mode = _runtime_mode(given)
    trailing = replace(trailing, options=given)
    options, atomic = _ctas_options(trailing, statement.context.storage_roots)
    if options.get(WRITE_MODE) == "upsert":
        raise CoreError(
            f"The option '{WRITE_MODE}' = 'upsert' needs a primary key, which a table made by "
            "CREATE TABLE … AS SELECT does not have: CREATE TABLE with PRIMARY KEY (…) NOT "
            "ENFORCED, then INSERT."
        )
    partition_by = _partition_names(trailing.partition_by)
    refs = analyze_query(statement.text, query_tokens)  # the guard, before anything else
    statement.require_database(ident.catalog, ident.database, Privilege.CREATE)
    if "path" in options:  # an external table: what lies under its path becomes readable
        statement.authorizer.require_files(options["path"], statement.context.storage_roots)
    args: dict[str, Any] = {
        "identifier": list(ident.parts),
        "if_not_exists": if_not_exists,
        "options": options,
        "partition_by": partition_by,
        "comment": trailing.comment,
        "atomic": atomic,
    }
    if runtime_mode is not None:
        args[RUNTIME_MODE] = runtime_mode  # taken out by ``streaming.finish``
    existing = statement.reader.get_relation(ident)
    if existing is not None and not existing.temporary:
        if not if_not_exists:
            raise AlreadyExists(
                f"Table {ident.quoted()} already exists.",
                details={"identifier": list(ident.parts), "kind": existing.kind},
            )
        args["skip"] = True
        return Plan.of(Action.CTAS, target=ident.parts, args=args)
    context = statement.context
    resolver = Resolver(statement.reader, context, statement.authorizer)
    rewritten = resolver.rewrite_query(
        statement.text,
        query_tokens,
        context.current_catalog,
        context.current_database,
        statement.end,
        refs=refs,
    )
    return Plan.of(
        Action.CTAS,
        needs_spark=True,
        sql=rewritten.sql,
        relations=tuple(resolver.relations),
        functions=tuple(resolver.functions),
        target=ident.parts,
        args=args,
    )


# -- INSERT ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Insert:
    """One planned INSERT: its target, its spliced query and its args (without ``sql``)."""

    identifier: ObjectIdentifier
    sql: str
    args: dict[str, Any]


def _refuse_clauses(cursor: TokenCursor) -> None:
    """Spark's INSERT clauses Tessera does not run."""
    token = cursor.peek()
    if token is None:
        return
    if token.is_word("PARTITION"):
        raise UnsupportedStatement(
            "INSERT … PARTITION (…) is not supported: write the partition columns as ordinary "
            "columns of the query (the table's PARTITIONED BY lays the files out)."
        )
    if cursor.peek_words("REPLACE"):
        raise UnsupportedStatement(
            "INSERT … REPLACE WHERE is not supported: Tessera writes whole tables "
            "(INSERT INTO or INSERT OVERWRITE)."
        )
    if cursor.peek_words("IF", "NOT", "EXISTS"):
        raise UnsupportedStatement(
            "INSERT … IF NOT EXISTS is not supported: it applies to static partitions, "
            "which Tessera does not write."
        )


def _column_list_follows(cursor: TokenCursor) -> bool:
    """``(`` starting a column list, not a parenthesised query."""
    token, following = cursor.peek(), cursor.peek(1)
    if token is None or not token.is_punct("("):
        return False
    return following is not None and not starts_query([following])


def _missing_target(ident: ObjectIdentifier) -> NotFound:
    return missing_object(
        "relation", f"Table {ident.quoted()} not found", details={"identifier": list(ident.parts)}
    )


def _target_table(statement: Statement, ident: ObjectIdentifier) -> Relation:
    """The table an INSERT writes: permanent, active, a table the user may MODIFY (one they
    may not see answers as a missing one, before anything else is said about it)."""
    relation = statement.reader.get_relation(ident)
    if relation is None or statement.authorizer.see(relation) is None:
        raise _missing_target(ident)
    shown = relation.identifier.quoted()
    details: dict[str, Any] = {"identifier": list(relation.identifier.parts)}
    if relation.kind == "view":
        raise CoreError(f"{shown} is a view; INSERT writes only into tables.", details=details)
    if relation.temporary:
        raise UnsupportedStatement(
            f"INSERT into temporary tables is not supported: Tessera does not own a temporary "
            f"table's data ({shown} is temporary).",
            details=details,
        )
    if relation.status == "staged":
        raise staged_error(relation)
    if relation.status != "active":
        raise CoreError(
            f"Table {shown} is {relation.status} and cannot be written.", details=details
        )
    statement.authorizer.require(relation, Privilege.MODIFY, missing=lambda: _missing_target(ident))
    conflict = statement.reader.write_conflict(relation)
    if conflict is not None:
        # The table is the user's, but its files are (also) another table's: writing it
        # would change that table (rows stored before paths could not overlap).
        raise ForbiddenSql(f"Table {shown} cannot be written. {conflict}", details=details)
    return relation


def _physical_columns(table: Relation) -> list[str]:
    schema = table.resolved_schema
    return [c.name for c in schema.columns if c.kind == "physical"] if schema is not None else []


def _written_columns(table: Relation, names: Sequence[str]) -> list[str]:
    """The column list as declared names: physical columns of the table, each once."""
    schema = table.resolved_schema
    declared = {name_key(c.name): c for c in schema.columns} if schema is not None else {}
    shown = table.identifier.quoted()
    result: list[str] = []
    for name in names:
        column = declared.get(name_key(name))
        if column is None:
            raise CoreError(
                f"Column `{name}` does not exist in {shown}; its columns are: "
                f"{_shown_columns(_physical_columns(table))}.",
                details={"identifier": list(table.identifier.parts), "column": name},
            )
        if column.kind != "physical":
            raise CoreError(
                f"Column `{name}` of {shown} is a {column.kind} column and cannot be written; "
                f"INSERT writes the physical columns: {_shown_columns(_physical_columns(table))}.",
                details={"identifier": list(table.identifier.parts), "column": name},
            )
        if column.name in result:
            raise CoreError(
                f"Column `{name}` is listed twice.",
                details={"identifier": list(table.identifier.parts), "column": name},
            )
        result.append(column.name)
    return result


def _check_width(
    table: Relation, width: int | None, expected: Sequence[str], listed: bool, op: bool = False
) -> None:
    """A plain select list must produce exactly the columns written (``op``: an upsert's
    query may add its row-kind column)."""
    if width is None or width == len(expected) or (op and width == len(expected) + 1):
        return
    target = "the column list names" if listed else "the table has"
    plural = "" if width == 1 else "s"
    raise CoreError(
        f"Cannot insert into {table.identifier.quoted()}: the query produces {width} "
        f"column{plural} but {target} {len(expected)} ({_shown_columns(expected)}).",
        details={
            "identifier": list(table.identifier.parts),
            "query_columns": width,
            "target_columns": list(expected),
        },
    )


@dataclass(frozen=True)
class _ParsedInsert:
    """An INSERT read and guarded, not resolved yet."""

    ident: ObjectIdentifier
    overwrite: bool
    listed: tuple[str, ...] | None
    query_tokens: tuple[Token, ...]
    refs: QueryRefs
    end: int  # where the query's text ends
    hint: str | None = None  # write.mode from /*+ OPTIONS(…) */ after the table name
    runtime_mode: str | None = None  # execution.runtime-mode from that hint
    by_name: bool = False  # INSERT … BY NAME: the query's column names are the column list


def _parse_insert(statement: Statement, tokens: Sequence[Token], end: int) -> _ParsedInsert:
    """Read and guard ``INSERT …`` made of ``tokens`` (its query's text ends at ``end``)."""
    cursor = TokenCursor(statement.text, tokens, 1)
    overwrite = cursor.accept_words("OVERWRITE")
    if overwrite and (cursor.peek_words("DIRECTORY") or cursor.peek_words("LOCAL", "DIRECTORY")):
        raise guard.forbidden_directory_insert()
    if not overwrite and not cursor.accept_words("INTO"):
        raise cursor.error("INTO or OVERWRITE")
    cursor.accept_words("TABLE")
    parts, _, _ = cursor.path("a table name")
    guard.check_file_path_table(parts, "Writing")
    ident = statement.object_identifier(parts)
    table_end = cursor.position
    _refuse_clauses(cursor)
    by_name = cursor.accept_words("BY", "NAME")
    follows = not by_name and _column_list_follows(cursor)
    listed = name_list(cursor, "a column name") if follows else None
    _refuse_clauses(cursor)
    query_tokens = tuple(tokens[cursor.position :])
    if not starts_query(query_tokens):
        raise cursor.error(_QUERY)
    hint = read_hint(statement.text, tokens, table_end, cursor.position)
    refs = analyze_query(statement.text, query_tokens)
    return _ParsedInsert(
        ident,
        overwrite,
        listed,
        query_tokens,
        refs,
        end,
        hint.get(WRITE_MODE),
        hint.get(RUNTIME_MODE),
        by_name,
    )


def _resolve_insert(
    statement: Statement, insert: _ParsedInsert, resolver: Resolver, alias: str
) -> _Insert:
    """Check the target and the columns, and resolve the query with ``resolver`` (shared
    by the inserts of a statement set); ``alias`` names the target in ``args.table``."""
    table = _target_table(statement, insert.ident)
    columns = None if insert.listed is None else _written_columns(table, insert.listed)
    expected = _physical_columns(table) if columns is None else columns
    context = statement.context
    source = written_source(table, context.storage_roots)
    upsert = plan_upsert(
        table, insert.hint, overwrite=insert.overwrite, external=source.external, columns=columns
    )
    op = upsert is not None and upsert.op_column
    if not insert.by_name:  # by name, the query may leave columns out (they are NULL)
        _check_width(table, insert.refs.width, expected, columns is not None, op)
    rewritten = resolver.rewrite_query(
        statement.text,
        insert.query_tokens,
        context.current_catalog,
        context.current_database,
        insert.end,
        refs=insert.refs,
    )
    target = table_plan(alias, table, context.storage_roots)
    args: dict[str, Any] = {
        "identifier": list(table.identifier.parts),
        "overwrite": insert.overwrite,
        "columns": columns,
        "table": target.to_dict(),
        "location": source.path,
        "managed": not source.external,
    }
    if insert.by_name:
        args["by_name"] = True
    if upsert is not None:
        args.update(upsert.to_args())
    if insert.runtime_mode is not None:
        args[RUNTIME_MODE] = insert.runtime_mode  # taken out by ``streaming.finish``
    return _Insert(table.identifier, rewritten.sql, args)


def plan_insert(statement: Statement) -> Plan:
    """``INSERT INTO|OVERWRITE [TABLE] p [(c1, …)] query`` → action ``insert``."""
    parsed = _parse_insert(statement, statement.tokens, statement.end)
    resolver = Resolver(statement.reader, statement.context, statement.authorizer)
    insert = _resolve_insert(statement, parsed, resolver, TARGET_ALIAS.format(1))
    return Plan.of(
        Action.INSERT,
        needs_spark=True,
        sql=insert.sql,
        relations=tuple(resolver.relations),
        functions=tuple(resolver.functions),
        target=insert.identifier.parts,
        args=insert.args,
    )


# -- statement sets -------------------------------------------------------------------------


def _block_end(statement: Statement, begin: int) -> int:
    """The index of the END closing the BEGIN at token ``begin`` (CASE … END nests)."""
    depth = 0
    for index in range(begin, len(statement.tokens)):
        token = statement.tokens[index]
        if token.is_word("BEGIN", "CASE"):
            depth += 1
        elif token.is_word("END"):
            depth -= 1
            if depth == 0:
                return index
    last = statement.tokens[-1]
    raise parse_error(
        statement.text, last.end, "Expected END closing the statement set but the statement ended"
    )


def _members(tokens: Sequence[Token]) -> list[list[Token]]:
    """The statements between BEGIN and END, split at ';' (empty ones dropped)."""
    members: list[list[Token]] = [[]]
    for token in tokens:
        if token.is_punct(";"):
            members.append([])
        else:
            members[-1].append(token)
    return [member for member in members if member]


def plan_statement_set(statement: Statement) -> Plan:
    """``EXECUTE STATEMENT SET BEGIN INSERT …; INSERT …[;] END`` → action
    ``statement_set``: one job writing every target, committed together. The inserts share
    one resolver, so each object read gets one alias across all of them."""
    cursor = statement.cursor(1)
    cursor.expect_words("STATEMENT", "SET")
    if not cursor.peek_words("BEGIN"):
        raise cursor.error("BEGIN")
    end = _block_end(statement, cursor.position)
    TokenCursor(statement.text, statement.tokens, end + 1).expect_end()
    members = _members(statement.tokens[cursor.position + 1 : end])
    if not members:
        raise CoreError("A statement set needs at least one INSERT statement.")
    for number, member in enumerate(members, 1):
        if not member[0].is_word("INSERT"):
            shown = statement.text[member[0].start : member[0].end]
            raise CoreError(
                f"A statement set can contain only INSERT statements, but statement {number} "
                f"starts with {shown}.",
                details={"statement": number},
            )
    # Every insert is read and guarded before anything is resolved.
    parsed = [_parse_insert(statement, member, member[-1].end) for member in members]
    resolver = Resolver(statement.reader, statement.context, statement.authorizer)
    inserts: list[_Insert] = []
    seen: set[tuple[str, str, str]] = set()
    for number, one in enumerate(parsed, 1):
        insert = _resolve_insert(statement, one, resolver, TARGET_ALIAS.format(number))
        if insert.identifier.key in seen:
            raise CoreError(
                f"The statement set writes {insert.identifier.quoted()} more than once: each "
                "table can be the target of one INSERT of the set.",
                details={"identifier": list(insert.identifier.parts), "statement": number},
            )
        seen.add(insert.identifier.key)
        inserts.append(insert)
    return Plan.of(
        Action.STATEMENT_SET,
        needs_spark=True,
        relations=tuple(resolver.relations),
        functions=tuple(resolver.functions),
        args={
            "inserts": [{**insert.args, "sql": insert.sql} for insert in inserts],
            "targets": [list(insert.identifier.parts) for insert in inserts],
        },
    )
