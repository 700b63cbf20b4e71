"""SHOW CATALOGS/DATABASES/TABLES/VIEWS/FUNCTIONS, SHOW TABLE EXTENDED, DESCRIBE and SHOW
CREATE TABLE of the catalog's objects (and of the session's temporary ones, which shadow them).

What the job's user may not see is not listed (``catalog.access.*_q``, the filters of the
REST lists) and answers as missing when named (the selectors' lookups).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from catalog import access as catalog_access
from catalog import selectors, versions
from catalog.models import Catalog, Database, Function, Table
from core.errors import missing_object
from core.identifiers import quote_path
from core.schema import (
    ComputedColumn,
    MetadataColumn,
    ResolvedSchema,
    Schema,
)
from jobs.models import Job, TemporaryObject
from sessions.commands.common import (
    Columns,
    Rows,
    access_of,
    catalog_of,
    database_of,
    existing_relation,
    identifier_parts,
    like_matcher,
    sql_string,
    string_columns,
    temporary_row,
)

log = logging.getLogger(__name__)


def show_catalogs(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    match = like_matcher(args.get("like"))
    visible = catalog_access.catalogs_q(access_of(job))
    catalogs = Catalog.objects.all() if visible is None else Catalog.objects.filter(visible)
    names = catalogs.order_by("name_key").values_list("name", flat=True)
    return string_columns("catalog"), [[name] for name in names if match(name)]


def show_databases(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    catalog = catalog_of(args, job)
    match = like_matcher(args.get("like"))
    databases = Database.objects.filter(catalog=catalog)
    visible = catalog_access.databases_q(access_of(job))
    if visible is not None:
        databases = databases.filter(visible)
    names = databases.order_by("name_key").values_list("name", flat=True)
    return string_columns("database"), [[name] for name in names if match(name)]


def show_relations(kind: str, column: str) -> Callable[[Job, Mapping[str, Any]], Any]:
    def show(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
        if args.get("extended"):
            return show_table_extended(job, args)
        database = database_of(args, job)
        match = like_matcher(args.get("like"))
        tables = Table.objects.filter(database=database, kind=kind)
        visible = catalog_access.relations_q(access_of(job), kind)
        if visible is not None:
            tables = tables.filter(visible)
        names = tables.order_by("name_key").values_list("name", flat=True)
        columns = [
            {"name": "database", "data_type": "STRING"},
            {"name": column, "data_type": "STRING"},
            {"name": "isTemporary", "data_type": "BOOLEAN"},
        ]
        return columns, [[database.name, name, False] for name in names if match(name)]

    return show


def show_table_extended(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    """``SHOW TABLE EXTENDED [IN db] LIKE 'pattern'``: the database's tables and views the
    job's user may see, with Spark's ``information`` text (what dbt-spark lists relations by:
    ``Type`` VIEW, MANAGED or EXTERNAL, and ``Provider``)."""
    database = database_of(args, job)
    match = like_matcher(args.get("like"))
    access = access_of(job)
    rows: Rows = []
    for kind in (Table.KIND_TABLE, Table.KIND_VIEW):
        tables = Table.objects.filter(database=database, kind=kind)
        visible = catalog_access.relations_q(access, kind)
        if visible is not None:
            tables = tables.filter(visible)
        for table in tables.order_by("name_key"):
            if not match(table.name):
                continue
            options = table.options or {}
            kind_text = (
                "VIEW" if kind == Table.KIND_VIEW else "MANAGED" if table.managed else "EXTERNAL"
            )
            info = [
                f"Catalog: {database.catalog.name}",
                f"Database: {database.name}",
                f"Table: {table.name}",
                f"Type: {kind_text}",
            ]
            provider = options.get("format") or options.get("connector")
            if kind == Table.KIND_TABLE and provider:
                info.append(f"Provider: {provider}")
            rows.append([database.name, table.name, False, "\n".join(info) + "\n"])
    rows.sort(key=lambda row: str(row[1]).lower())
    columns = [
        {"name": "namespace", "data_type": "STRING"},
        {"name": "tableName", "data_type": "STRING"},
        {"name": "isTemporary", "data_type": "BOOLEAN"},
        {"name": "information", "data_type": "STRING"},
    ]
    return columns, rows


def show_functions(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    database = database_of(args, job)
    match = like_matcher(args.get("like"))
    functions = Function.objects.filter(database=database)
    visible = catalog_access.functions_q(access_of(job))
    if visible is not None:
        functions = functions.filter(visible)
    names = functions.order_by("name_key").values_list("name", flat=True)
    return string_columns("function"), [[name] for name in names if match(name)]


DESCRIBE_COLUMNS = ("col_name", "data_type", "comment", "kind", "expression", "metadata")


def describe_row(*values: Any) -> list[Any]:
    row = list(values) + [None] * (len(DESCRIBE_COLUMNS) - len(values))
    return row[: len(DESCRIBE_COLUMNS)]


@dataclass(frozen=True)
class RelationText:
    """What DESCRIBE and SHOW CREATE TABLE need of a table or view, permanent or temporary."""

    parts: tuple[str, str, str]
    kind: str
    schema: Mapping[str, Any]
    resolved_schema: Mapping[str, Any] | None
    partition_by: Sequence[str] = ()
    options: Mapping[str, str] = field(default_factory=dict)
    managed: bool = False
    comment: str = ""
    query: str = ""
    temporary: bool = False

    @classmethod
    def of_table(cls, table: Table) -> RelationText:
        return cls(
            parts=(table.database.catalog.name, table.database.name, table.name),
            kind=table.kind,
            schema=table.schema,
            resolved_schema=table.resolved_schema,
            partition_by=list(table.partition_by or []),
            options=dict(table.options),
            managed=table.managed,
            comment=table.comment,
            query=table.query,
        )

    @classmethod
    def of_temporary(cls, row: TemporaryObject) -> RelationText:
        definition: Mapping[str, Any] = row.definition or {}
        return cls(
            parts=(row.catalog, row.database, row.name),
            kind=row.kind,
            schema=definition.get("schema") or {"columns": []},
            resolved_schema=definition.get("resolved_schema"),
            partition_by=list(definition.get("partition_by") or []),
            options=dict(definition.get("options") or {}),
            comment=str(definition.get("comment") or ""),
            query=str(definition.get("query") or ""),
            temporary=True,
        )


def relation_text(job: Job, args: Mapping[str, Any]) -> RelationText:
    """The table or view the plan names (DESCRIBE works on both): the session's temporary
    one first, as the planner resolved it."""
    c, d, n = identifier_parts(args, 3)
    temporary = temporary_row(job.session_id, "relation", c, d, n)
    if temporary is not None:
        return RelationText.of_temporary(temporary)
    access = access_of(job)
    found = existing_relation(selectors.get_database(c, d, access=access), n)
    if found is None:
        raise missing_object("relation", f"Table or view {quote_path([c, d, n])} not found.")
    # Seen, or refused as the lookup of an object the user may not see refuses it.
    return RelationText.of_table(selectors.get_table(c, d, n, found.kind, access=access))


def describe(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    if args.get("object_kind") == "function":
        return _describe_function(job, args)
    relation = relation_text(job, args)
    rows: Rows = []
    resolved = (
        ResolvedSchema.from_dict(relation.resolved_schema) if relation.resolved_schema else None
    )
    if resolved is not None:
        for column in resolved.columns:
            metadata = None
            if column.kind == "metadata":
                metadata = f"{column.metadata_key}{' VIRTUAL' if column.virtual else ''}"
            rows.append(
                describe_row(
                    column.name,
                    column.data_type.sql() if column.data_type is not None else None,
                    column.comment,
                    column.kind,
                    column.expression,
                    metadata,
                )
            )
    if relation.partition_by:
        rows.append(describe_row("# Partition Information"))
        for name in relation.partition_by:
            column_type = None
            if resolved is not None and (found := resolved.column(name)) is not None:
                column_type = found.data_type.sql() if found.data_type else None
            rows.append(describe_row(name, column_type))
    if resolved is not None and resolved.watermarks:
        rows.append(describe_row("# Watermark"))
        for watermark in resolved.watermarks:
            rows.append(
                describe_row(
                    watermark.column,
                    watermark.data_type.sql() if watermark.data_type else None,
                    None,
                    "watermark",
                    watermark.expression,
                )
            )
    if resolved is not None and resolved.primary_key is not None:
        key = resolved.primary_key
        columns = ", ".join(quote_path([c]) for c in key.columns)
        rows.append(describe_row("# Constraints"))
        rows.append(
            describe_row(key.name, f"PRIMARY KEY ({columns}) NOT ENFORCED", None, "primary_key")
        )
    return string_columns(*DESCRIBE_COLUMNS), rows


def function_signature(function: Function) -> str:
    return ", ".join(f"{quote_path([p['name']])} {p['data_type']}" for p in function.parameters)


def _describe_function(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    c, d, n = identifier_parts(args, 3)
    function = selectors.get_function(c, d, n, access=access_of(job))
    lines = [
        f"Function: {quote_path([c, d, function.name])}",
        f"Language: {function.language}",
    ]
    if function.language == Function.LANGUAGE_SQL:
        lines.append(f"Parameters: ({function_signature(function)})")
        lines.append(f"Returns: {function.return_type}")
        lines.append(f"Body: {function.implementation}")
    else:
        lines.append(f"Implementation: {function.implementation}")
    if function.comment:
        lines.append(f"Comment: {function.comment}")
    return string_columns("function_desc"), [[line] for line in lines]


def column_ddl(column: Any) -> str:
    name = quote_path([column.name])
    if isinstance(column, ComputedColumn):
        text = f"{name} AS {column.expression}"
    elif isinstance(column, MetadataColumn):
        text = f"{name} {column.data_type.sql()} METADATA"
        if column.metadata_key is not None:
            text += f" FROM {sql_string(column.metadata_key)}"
        if column.virtual:
            text += " VIRTUAL"
    else:
        text = f"{name} {column.data_type.sql()}"
    if column.comment is not None:
        text += f" COMMENT {sql_string(column.comment)}"
    return text


def options_ddl(options: Mapping[str, str]) -> str:
    return ", ".join(f"{sql_string(k)} = {sql_string(v)}" for k, v in options.items())


def table_ddl(table: Table) -> str:
    """``CREATE TABLE`` text for a table, in the SQL Tessera's planner reads back."""
    return relation_table_ddl(RelationText.of_table(table))


def relation_table_ddl(table: RelationText) -> str:
    schema = Schema.from_dict(dict(table.schema))
    items = [column_ddl(column) for column in schema.columns]
    for watermark in schema.watermarks:
        items.append(f"WATERMARK FOR {quote_path([watermark.column])} AS {watermark.expression}")
    if schema.primary_key is not None:
        key = schema.primary_key
        constraint = f"CONSTRAINT {quote_path([key.name])} " if key.name else ""
        columns = ", ".join(quote_path([c]) for c in key.columns)
        items.append(f"{constraint}PRIMARY KEY ({columns}) NOT ENFORCED")
    create = "CREATE TEMPORARY TABLE" if table.temporary else "CREATE TABLE"
    path = quote_path(table.parts)
    lines = [f"{create} {path} (", ",\n".join(f"  {item}" for item in items), ")"]
    options = dict(table.options)
    if table.managed:
        lines.append(f"USING {options.pop('format', 'parquet')}")
    else:
        lines.append(f"USING {options.pop('connector', None) or options.pop('format', 'parquet')}")
    if options:
        lines.append(f"OPTIONS ({options_ddl(options)})")
    if table.comment:
        lines.append(f"COMMENT {sql_string(table.comment)}")
    if table.partition_by:
        lines.append(f"PARTITIONED BY ({', '.join(quote_path([c]) for c in table.partition_by)})")
    return "\n".join(lines)


def view_ddl(view: Table) -> str:
    return relation_view_ddl(RelationText.of_table(view))


def relation_view_ddl(view: RelationText) -> str:
    create = "CREATE TEMPORARY VIEW" if view.temporary else "CREATE VIEW"
    comment = f"\nCOMMENT {sql_string(view.comment)}" if view.comment else ""
    return f"{create} {quote_path(view.parts)}{comment}\nAS {view.query}"


def show_create_table(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    relation = relation_text(job, args)
    text = (
        relation_view_ddl(relation)
        if relation.kind == Table.KIND_VIEW
        else relation_table_ddl(relation)
    )
    return string_columns("createtab_stmt"), [[text]]


HISTORY_COLUMNS: Columns = [
    {"name": "version", "data_type": "BIGINT"},
    {"name": "timestamp", "data_type": "STRING"},
    {"name": "user", "data_type": "STRING"},
    {"name": "job", "data_type": "STRING"},
    {"name": "operation", "data_type": "STRING"},
    {"name": "rows", "data_type": "BIGINT"},
    {"name": "metrics", "data_type": "STRING"},
    {"name": "readable", "data_type": "BOOLEAN"},
]


def describe_history(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    """``DESCRIBE HISTORY p``: one row per version, newest first; ``readable`` is false once
    the maintenance removed a version's data (docs/statements.md). ``rows`` and ``metrics``
    are null without SELECT on the table."""
    c, d, n = identifier_parts(args, 3)
    access = access_of(job)
    found = existing_relation(selectors.get_database(c, d, access=access), n)
    if found is None or found.kind != Table.KIND_TABLE:
        raise missing_object("relation", f"Table {quote_path([c, d, n])} not found.")
    found = selectors.get_table(c, d, n, access=access)  # seen, or refused
    # Row counts and metrics are computed from the data: SELECT only, as in REST.
    figures = catalog_access.shows_figures(access, found)
    rows: Rows = [
        [
            row.version,
            row.created_at.isoformat(),
            row.user.username if row.user is not None else None,
            # The job's id for its own user only (jobs are private, docs/api.md).
            str(row.job_id) if row.job_id is not None and row.user_id == job.user_id else None,
            row.operation,
            row.rows if figures else None,
            json.dumps(row.metrics or {}, sort_keys=True) if figures else None,
            row.readable,
        ]
        for row in versions.history(found)
    ]
    return list(HISTORY_COLUMNS), rows
