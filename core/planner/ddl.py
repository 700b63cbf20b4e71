"""CREATE TABLE with a column list, parsed by hand over the token stream.

sqlglot cannot read Flink-style DDL (computed and metadata columns, watermarks), so this
is a small recursive-descent parser:

    CREATE [TEMPORARY] TABLE [IF NOT EXISTS] p ( element, … ) [trailing clauses, any order]
    element  := name type [NOT NULL] [[CONSTRAINT n] PRIMARY KEY [NOT ENFORCED]] [COMMENT '…']
              | name AS expr [COMMENT '…']
              | name type METADATA [FROM 'key'] [VIRTUAL] [COMMENT '…']
              | WATERMARK FOR column AS expr
              | [CONSTRAINT n] PRIMARY KEY (column, …) [NOT ENFORCED]
    trailing := USING fmt | OPTIONS (k = 'v', …) | WITH ('k' = 'v', …) | COMMENT '…'
              | PARTITIONED BY (column, …) | LOCATION '…'

Types and expressions keep the user's source text. ``CREATE TABLE … AS query`` (CTAS)
shares the trailing clauses and is planned by ``core.planner.write_plans``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.datatypes import parse_data_type
from core.errors import CoreError, SchemaError
from core.identifiers import name_key
from core.planner.errors import ForbiddenSql, UnsupportedStatement
from core.planner.model import UploadRef
from core.planner.plan import Action, Plan
from core.planner.sources import (
    RATE_COLUMNS,
    dataframe_source,
    declared_source,
    names_delta,
    rate_source,
    upload_source,
)
from core.planner.statement import (
    Statement,
    accept_if_not_exists,
    data_type,
    expression_span,
    key_value_list,
    type_span,
)
from core.planner.table_plans import check_column_expression
from core.planner.tokens import Token, TokenCursor
from core.privileges import Privilege
from core.schema import (
    ComputedColumn,
    MetadataColumn,
    PhysicalColumn,
    PrimaryKey,
    Schema,
    SchemaResolver,
    UnresolvedColumn,
    WatermarkSpec,
)

# Flink's rule (FLIP-87): a key is declared, never checked; saying so keeps no one relying on it.
PRIMARY_KEY_ENFORCED = (
    "A primary key must be declared NOT ENFORCED: PRIMARY KEY (…) NOT ENFORCED. As in Flink, "
    "Tessera keeps the key for upserts and for readers, but does not check that its values "
    "are unique or present (declare the columns NOT NULL to have Delta enforce that)."
)
_TYPE_STOP_WORDS = ("COMMENT", "METADATA", "PRIMARY", "CONSTRAINT")
_TRAILING = "USING, OPTIONS, WITH, COMMENT, PARTITIONED BY, LOCATION or the end of the statement"
_TRAILING_CTAS = "USING, OPTIONS, WITH, COMMENT, PARTITIONED BY, LOCATION or AS"


def is_ctas(tokens: tuple[Token, ...], position: int) -> bool:
    """Whether ``CREATE … TABLE`` (TABLE at ``position``) has a top-level AS: a CTAS."""
    depth = 0
    for token in tokens[position + 1 :]:
        if token.is_punct("("):
            depth += 1
        elif token.is_punct(")"):
            depth -= 1
        elif depth == 0 and token.is_word("AS"):
            return True
    return False


def temporary_ctas_unsupported() -> UnsupportedStatement:
    return UnsupportedStatement(
        "CREATE TEMPORARY TABLE … AS SELECT is not supported: Tessera does not own a temporary "
        "table's data. Use CREATE TEMPORARY VIEW … AS SELECT instead."
    )


TEMPORARY_TABLE_NEEDS_PATH = (
    "A temporary table needs a path: Tessera does not own its data, so it must point at "
    "existing files. Add LOCATION '…' or a 'path' option (with USING or a 'connector')."
)


def _source_options(trailing: Trailing, roots: tuple[str, ...], temporary: bool) -> dict[str, str]:
    """The options to store; a temporary table must give a path (the guard speaks first)."""
    options = trailing.options or {}
    has_path = trailing.location is not None or any(k.lower() == "path" for k in options)
    if not temporary or has_path:
        return declared_source(trailing.using, options, trailing.location, roots)
    try:
        declared_source(trailing.using, options, trailing.location, roots)
    except ForbiddenSql:
        raise
    except CoreError:
        pass
    raise CoreError(TEMPORARY_TABLE_NEEDS_PATH)


DELTA_NEEDS_COLUMNS = (
    "CREATE TABLE … USING delta needs its column list: Tessera keeps a table's schema in "
    "its catalog and does not read it from the Delta log at creation. List the Delta "
    "table's columns (a subset is fine; each is checked against the Delta table when read)."
)


def _refuse_delta_without_columns(statement: Statement, position: int) -> None:
    """A Delta table without a column list gets its own sentence (a look ahead at USING
    and OPTIONS; anything else keeps the parser's answer)."""
    try:
        trailing = parse_trailing(statement.cursor(position))
    except CoreError:
        return
    if names_delta(trailing.options or {}, trailing.using):
        raise CoreError(DELTA_NEEDS_COLUMNS)


def _check_upload_nulls(elements: _Elements, upload: UploadRef) -> None:
    """A column declared NOT NULL over an upload must hold no NULL: refused here, naming
    the column and the first row that has one, rather than read back as NULL (or NaN)."""
    first_nulls = {name.lower(): row for name, row in upload.first_nulls.items()}
    for column in elements.columns:
        if not isinstance(column, PhysicalColumn) or column.data_type.nullable:
            continue
        row = first_nulls.get(column.name.lower())
        if row is not None:
            raise CoreError(
                f"Column `{column.name}` is declared NOT NULL but row {row} of upload "
                f"{upload.id} has NULL there (a pandas NaN or None is a NULL); fill or drop "
                "the NULLs, or declare the column nullable.",
                details={"column": column.name, "row": row, "upload": upload.id},
            )


def _check_rate_columns(elements: _Elements) -> None:
    """The physical columns of a rate table are Spark's rate source's, by name and type."""
    given = {name_key(n): (n, t) for n, t in RATE_COLUMNS}
    for column in elements.columns:
        if not isinstance(column, PhysicalColumn):
            continue
        expected = given.get(name_key(column.name))
        if expected is None or column.data_type.sql() != expected[1]:
            columns = ", ".join(f"`{n}` {t}" for n, t in RATE_COLUMNS)
            raise CoreError(
                f"The rate connector gives the columns {columns}; `{column.name}` "
                f"{column.data_type.sql()} is not one of them (computed columns may derive "
                "others).",
                details={"column": column.name},
            )


def _peek_punct(cursor: TokenCursor, value: str) -> bool:
    token = cursor.peek()
    return token is not None and token.is_punct(value)


@dataclass
class _Elements:
    columns: list[UnresolvedColumn] = field(default_factory=list)
    watermarks: list[WatermarkSpec] = field(default_factory=list)
    primary_key: PrimaryKey | None = None

    def set_primary_key(self, key: PrimaryKey) -> None:
        if self.primary_key is not None:
            raise SchemaError(
                "A table can have only one primary key.", details={"field": "primary_key"}
            )
        self.primary_key = key


def name_list(cursor: TokenCursor, what: str) -> tuple[str, ...]:
    cursor.expect_punct("(")
    names = [cursor.expect_name(what)]
    while cursor.accept_punct(","):
        names.append(cursor.expect_name(what))
    cursor.expect_punct(")")
    return tuple(names)


def _comment(cursor: TokenCursor) -> str | None:
    return cursor.expect_string("a comment string") if cursor.accept_words("COMMENT") else None


def _primary_key_clause(
    cursor: TokenCursor, elements: _Elements, columns: tuple[str, ...] | None
) -> bool:
    """``[CONSTRAINT n] PRIMARY KEY [(cols)] [NOT ENFORCED]``; ``columns`` given inline."""
    token = cursor.peek()
    if token is None:
        return False
    if not (token.is_word("CONSTRAINT") or cursor.peek_words("PRIMARY", "KEY")):
        return False
    name = None
    if cursor.accept_words("CONSTRAINT"):
        name = cursor.expect_name("a constraint name")
    cursor.expect_words("PRIMARY", "KEY")
    if columns is None:
        columns = name_list(cursor, "a primary key column")
    if not cursor.accept_words("NOT", "ENFORCED"):
        raise UnsupportedStatement(PRIMARY_KEY_ENFORCED)
    elements.set_primary_key(PrimaryKey(name, columns))
    return True


def _element(statement: Statement, cursor: TokenCursor, elements: _Elements) -> None:
    if cursor.peek_words("WATERMARK", "FOR"):
        cursor.expect_words("WATERMARK", "FOR")
        column = cursor.expect_name("a column name")
        cursor.expect_words("AS")
        first, last = expression_span(cursor)
        expression = statement.span(first, last)
        check_column_expression(expression, column, statement.text, first.start)
        elements.watermarks.append(WatermarkSpec(column, expression))
        return
    if _primary_key_clause(cursor, elements, None):
        return
    name = cursor.expect_name("a column name")
    if cursor.accept_words("AS"):
        first, last = expression_span(cursor, ("COMMENT",))
        expression = statement.span(first, last)
        check_column_expression(expression, name, statement.text, first.start)
        elements.columns.append(ComputedColumn(name, expression, _comment(cursor)))
        return
    first, last = type_span(cursor, _TYPE_STOP_WORDS)
    column_type = data_type(statement, first, last, f"column `{name}`")
    if cursor.accept_words("METADATA"):
        key = cursor.expect_string("a metadata key") if cursor.accept_words("FROM") else None
        virtual = cursor.accept_words("VIRTUAL")
        elements.columns.append(MetadataColumn(name, column_type, key, virtual, _comment(cursor)))
        return
    _primary_key_clause(cursor, elements, (name,))
    elements.columns.append(PhysicalColumn(name, column_type, _comment(cursor)))


@dataclass
class Trailing:
    using: str | None = None
    options: dict[str, str] | None = None
    comment: str | None = None
    partition_by: tuple[str, ...] = ()
    location: str | None = None
    seen: set[str] = field(default_factory=set)

    def once(self, cursor: TokenCursor, token: Token, clause: str) -> None:
        if clause in self.seen:
            raise cursor.error_at(token, f"The {clause} clause is given twice")
        self.seen.add(clause)


def parse_trailing(cursor: TokenCursor, *, until_as: bool = False) -> Trailing:
    """The clauses after the column list (or, ``until_as``, after a CTAS's name, up to its
    AS), in any order, each at most once."""
    result = Trailing()
    while not cursor.at_end:
        token = cursor.next()
        if until_as and token.is_word("AS"):
            cursor.position -= 1
            return result
        if token.is_word("USING"):
            result.once(cursor, token, "USING")
            parts, _, _ = cursor.path("a data source name", max_parts=16)
            result.using = ".".join(parts)
        elif token.is_word("OPTIONS", "WITH"):
            result.once(cursor, token, "OPTIONS/WITH")
            result.options = key_value_list(cursor)
        elif token.is_word("COMMENT"):
            result.once(cursor, token, "COMMENT")
            result.comment = cursor.expect_string("a comment string")
        elif token.is_word("PARTITIONED"):
            result.once(cursor, token, "PARTITIONED BY")
            cursor.expect_words("BY")
            result.partition_by = name_list(cursor, "a partition column")
        elif token.is_word("LOCATION"):
            result.once(cursor, token, "LOCATION")
            result.location = cursor.expect_string("a quoted path")
        else:
            cursor.position -= 1
            raise cursor.error(_TRAILING_CTAS if until_as else _TRAILING)
    return result


def _partition_columns(schema: Schema, names: tuple[str, ...]) -> list[str]:
    physical = {name_key(c.name): c.name for c in schema.columns if isinstance(c, PhysicalColumn)}
    result: list[str] = []
    for name in names:
        declared = physical.get(name_key(name))
        if declared is None:
            available = ", ".join(physical.values()) or "(none)"
            raise CoreError(
                f"Partition column `{name}` is not a physical column of the table. "
                f"Available columns: {available}."
            )
        if declared in result:
            raise CoreError(f"Partition column `{name}` is listed twice.")
        result.append(declared)
    return result


def plan_create_table(statement: Statement, position: int, *, temporary: bool = False) -> Plan:
    """Plan ``CREATE [TEMPORARY] TABLE`` whose TABLE keyword is the token at ``position``.

    A temporary table (``args.temporary``) needs a path, and its catalog and database need
    not exist (FLIP-64). A permanent CTAS is planned by ``write_plans.plan_ctas`` (the caller
    checks ``is_ctas`` first); a temporary one is refused here.
    """
    if is_ctas(statement.tokens, position):
        if temporary:
            raise temporary_ctas_unsupported()
        raise AssertionError("CREATE TABLE … AS is planned by core.planner.write_plans.plan_ctas")
    cursor = statement.cursor(position + 1)
    if_not_exists = accept_if_not_exists(cursor)
    parts, _, _ = cursor.path("a table name")
    ident = statement.object_identifier(parts)
    elements = _Elements()
    # A temporary table over an upload may leave out its columns: the upload's are taken.
    listed = not temporary or _peek_punct(cursor, "(")
    if not _peek_punct(cursor, "("):
        _refuse_delta_without_columns(statement, cursor.position)
    if listed:
        cursor.expect_punct("(")
        while True:
            _element(statement, cursor, elements)
            if cursor.accept_punct(")"):
                break
            if not cursor.accept_punct(","):
                raise cursor.error("',' or ')'")
    trailing = parse_trailing(cursor)

    dataframe = (
        dataframe_source(
            trailing.using,
            trailing.options or {},
            trailing.location,
            statement.context.pipeline_job,
        )
        if temporary
        else None
    )
    rate = (
        rate_source(trailing.using, trailing.options or {}, trailing.location)
        if temporary and dataframe is None
        else None
    )
    upload = (
        upload_source(
            trailing.using, trailing.options or {}, trailing.location, statement.context.uploads
        )
        if temporary and dataframe is None and rate is None
        else None
    )
    if rate is not None:
        options = rate
        if trailing.partition_by:
            raise CoreError("A table over the rate connector cannot be partitioned.")
        if not listed:
            elements.columns = [
                PhysicalColumn(name, parse_data_type(text)) for name, text in RATE_COLUMNS
            ]
        _check_rate_columns(elements)
    elif dataframe is not None:
        options = dataframe
        if trailing.partition_by:
            raise CoreError("A table over a DataFrame cannot be partitioned.")
        if not listed:
            raise CoreError("CREATE TEMPORARY TABLE over a DataFrame needs its column list.")
    elif upload is not None:
        options = upload[0]
        if trailing.partition_by:
            raise CoreError("A table over an upload cannot be partitioned: it is one file.")
        if not listed:
            elements.columns = [
                PhysicalColumn(name, parse_data_type(text)) for name, text in upload[1].columns
            ]
        _check_upload_nulls(elements, upload[1])
    elif not listed:
        raise CoreError(
            "CREATE TEMPORARY TABLE needs a column list, unless it reads an upload "
            "('connector' = 'upload'), whose columns it then takes."
        )
    else:
        options = _source_options(trailing, statement.context.storage_roots, temporary)
    schema = Schema(tuple(elements.columns), tuple(elements.watermarks), elements.primary_key)
    SchemaResolver().resolve(schema)
    partition_by = _partition_columns(schema, trailing.partition_by)
    if not temporary:
        statement.require_database(ident.catalog, ident.database, Privilege.CREATE)
    if "path" in options and rate is None and dataframe is None and upload is None:
        # A table over files reads whatever lies under its path: READ FILES on its root.
        statement.authorizer.require_files(options["path"], statement.context.storage_roots)
    has_expressions = bool(schema.watermarks) or any(
        isinstance(c, ComputedColumn) for c in schema.columns
    )
    args: dict[str, Any] = {
        "identifier": list(ident.parts),
        "if_not_exists": if_not_exists,
        "schema": schema.to_dict(),
        "options": options,
        "partition_by": partition_by,
        "comment": trailing.comment,
    }
    if temporary:
        args["temporary"] = True
    return Plan.of(Action.CREATE_TABLE, needs_spark=has_expressions, target=ident.parts, args=args)
