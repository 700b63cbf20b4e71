"""Run the plan actions that are not queries: USE, SET/RESET, SHOW …, DESCRIBE,
SHOW CREATE TABLE, and CREATE/DROP of catalogs, databases, tables, views and functions,
permanent or temporary (``args.temporary``: the session's ``TemporaryObject`` rows).

``run_command(job)`` is the one entry point. The web process calls it for plans that need no
Spark; a worker calls it for DDL plans that do (``needs_spark``), passing what only Spark can
give: an expression ``typer`` for computed columns and watermarks, and ``derive_view_schema``
for views. Either way the job moves CREATED → RUNNING → FINISHED | FAILED through
``jobs.lifecycle``, and the answer rows are stored in the results store.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet

from catalog import selectors, services
from catalog.models import Catalog, Database, Function, Table
from core import jobstate
from core.datatypes import parse_data_type
from core.errors import AlreadyExists, CoreError, NotFound
from core.identifiers import ObjectIdentifier, quote_path, validate_name
from core.jobstate import IllegalTransition
from core.schema import (
    ComputedColumn,
    ExpressionTyper,
    MetadataColumn,
    ResolvedSchema,
    Schema,
)
from jobs import lifecycle, planning, results
from jobs.models import Job, Session, TemporaryObject

log = logging.getLogger(__name__)

DeriveViewSchema = Callable[[str], Schema]
Rows = list[list[Any]]
Columns = list[dict[str, str]]

# --- session properties ----------------------------------------------------------------------
# What may be set, with which values, is the registry's (core/session_properties.py, bound to
# the server's limits by jobs/planning.py): SET, RESET, sessions' properties and the worker
# all read it there.


# --- the entry point -------------------------------------------------------------------------


def error_json(exc: CoreError) -> dict[str, Any]:
    """A CoreError as a job's ``error``."""
    return {"code": exc.code, "message": exc.message, "details": dict(exc.details)}


INTERNAL_ERROR = {
    "code": "INTERNAL_ERROR",
    "message": "The statement failed because of an internal error; it was logged.",
    "details": {},
}


def _reload(job_id: Any) -> Job:
    return Job.objects.select_related("user", "session").get(pk=job_id)


def run_command(
    job: Job,
    *,
    typer: ExpressionTyper | None = None,
    derive_view_schema: DeriveViewSchema | None = None,
) -> Job:
    """Execute a non-query plan action and return the job, ended FINISHED or FAILED.

    A CREATED job is claimed here (CREATED → RUNNING); a RUNNING job is taken to be claimed by
    the caller (a worker that set its own ``worker``/``heartbeat_at``). If the claim is lost
    (canceled meanwhile) nothing runs and the job is returned as it is.
    """
    if job.status == jobstate.CREATED:
        claimed = lifecycle.try_transition(job.id, jobstate.CREATED, jobstate.RUNNING)
        if claimed is None:
            return _reload(job.id)
        job = _reload(job.id)
    elif job.status != jobstate.RUNNING:
        raise IllegalTransition(f"Job {job.id} is {job.status}; it cannot run.")

    try:
        with transaction.atomic():
            columns, rows = _execute(job, typer, derive_view_schema)
            result = results.write_rows(job.id, columns, rows)
    except CoreError as exc:
        return _end(job, jobstate.FAILED, error=error_json(exc))
    except Exception:
        log.exception("job %s: command %s failed", job.id, job.plan.get("action"))
        return _end(job, jobstate.FAILED, error=INTERNAL_ERROR)
    return _end(job, jobstate.FINISHED, result=result)


def _end(job: Job, target: str, **fields: Any) -> Job:
    ended = lifecycle.try_transition(job.id, jobstate.RUNNING, target, **fields)
    if ended is None:  # somebody else ended it first (reaper, cancel): theirs stands
        log.warning("job %s: could not move to %s; it was ended by someone else", job.id, target)
        if "result" in fields:
            results.delete_result(job.id)
        return _reload(job.id)
    return _reload(job.id)


def _execute(
    job: Job, typer: ExpressionTyper | None, derive_view_schema: DeriveViewSchema | None
) -> tuple[Columns, Rows]:
    plan: Mapping[str, Any] = job.plan or {}
    action = plan.get("action")
    args: Mapping[str, Any] = plan.get("args") or {}
    if args.get("temporary"):
        return _execute_temporary(job, plan, args, typer, derive_view_schema)
    if action == "create_table":
        return _create_table(job, args, typer)
    if action == "create_view":
        return _create_view(job, plan, args, derive_view_schema)
    handler = _HANDLERS.get(str(action))
    if handler is None:
        raise CoreError(
            f"The plan action '{action}' is not a command; it runs on a worker.",
            details={"action": action},
        )
    return handler(job, args)


# --- helpers ---------------------------------------------------------------------------------


def _message(text: str) -> tuple[Columns, Rows]:
    return [{"name": "result", "data_type": "STRING"}], [[text]]


def _strings(*names: str) -> Columns:
    return [{"name": name, "data_type": "STRING"} for name in names]


def _session(job: Job) -> Session:
    if job.session_id is None:
        raise NotFound("The session of this statement was closed; open a new one.")
    session = Session.objects.select_for_update().filter(pk=job.session_id).first()
    if session is None:
        raise NotFound(f"Session {job.session_id} does not exist.")
    return session


def _parts(args: Mapping[str, Any], size: int) -> list[str]:
    identifier = args.get("identifier")
    if not isinstance(identifier, list | tuple) or len(identifier) != size:
        raise CoreError(f"The plan names no {size}-part identifier.", details={"args": dict(args)})
    return [str(part) for part in identifier]


def like_matcher(pattern: str | None) -> Callable[[str], bool]:
    """Spark's SHOW … LIKE: ``*`` matches anything, ``|`` separates alternatives, the rest is
    literal; the whole name must match, ignoring case (and surrounding blanks)."""
    if pattern is None:
        return lambda name: True
    alternatives = [
        ".*".join(re.escape(piece) for piece in part.strip().split("*"))
        for part in pattern.split("|")
    ]
    regex = re.compile("|".join(f"(?:{alt})" for alt in alternatives), re.IGNORECASE | re.DOTALL)
    return lambda name: regex.fullmatch(name) is not None


def _database_of(args: Mapping[str, Any], job: Job) -> Database:
    catalog = args.get("catalog")
    database = args.get("database")
    if catalog is None or database is None:
        session = Session.objects.filter(pk=job.session_id).first() if job.session_id else None
        catalog = catalog or (session.current_catalog if session else None)
        database = database or (session.current_database if session else None)
    if not catalog:
        raise CoreError("No current catalog is set; run USE CATALOG first or name one.")
    if not database:
        raise CoreError("No current database is set; run USE first or name one.")
    return selectors.get_database(str(catalog), str(database))


def _catalog_of(args: Mapping[str, Any], job: Job) -> Catalog:
    catalog = args.get("catalog")
    if catalog is None and job.session_id is not None:
        session = Session.objects.filter(pk=job.session_id).first()
        catalog = session.current_catalog if session else None
    if not catalog:
        raise CoreError("No current catalog is set; run USE CATALOG first or name one.")
    return selectors.get_catalog(str(catalog))


def _sql_string(text: str) -> str:
    """A Spark SQL string literal (backslash escapes, as Spark reads them)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


# --- USE, SET, RESET -------------------------------------------------------------------------


def _use(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    session = _session(job)
    catalog_name, database_name = args.get("catalog"), args.get("database")
    if catalog_name:
        catalog = selectors.get_catalog(str(catalog_name))
        session.current_catalog = catalog.name
        if not database_name:
            session.current_database = catalog.default_database
    if database_name:
        if not session.current_catalog:
            raise CoreError("No current catalog is set; run USE CATALOG first or use c.d.")
        database = selectors.get_database(session.current_catalog, str(database_name))
        session.current_catalog = database.catalog.name
        session.current_database = database.name
    session.save(update_fields=["current_catalog", "current_database"])
    where = quote_path([session.current_catalog or "", session.current_database or ""])
    return _message(f"The current database is now {where}.")


def _set(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    session = _session(job)
    key, value = args.get("key"), args.get("value")
    columns = _strings("key", "value")
    registry = planning.session_properties()
    # The values in force: a value stored before a limit existed (or was lowered) shows as
    # what jobs get, clamped, not as it was stored.
    in_force = registry.effective(session.properties)
    if key is None:  # SET: list the session's properties
        return columns, [[k, in_force[k]] for k in sorted(in_force)]
    if value is None:  # SET key: show one
        shown = in_force.get(key) or registry.default(str(key)) or "<undefined>"
        return columns, [[key, shown]]
    checked = registry.check(key, value, field="args")
    session.properties = {**session.properties, key: checked}
    session.save(update_fields=["properties"])
    return columns, [[key, checked]]


def _reset(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    session = _session(job)
    key = args.get("key")
    if key is None:
        session.properties = {}
        session.save(update_fields=["properties"])
        return _message("All session properties were reset.")
    properties = dict(session.properties)
    existed = properties.pop(key, None) is not None
    session.properties = properties
    session.save(update_fields=["properties"])
    return _message(
        f"Session property '{key}' was reset."
        if existed
        else f"Session property '{key}' was not set; nothing changed."
    )


# --- SHOW ------------------------------------------------------------------------------------


def _show_catalogs(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    match = like_matcher(args.get("like"))
    names = Catalog.objects.order_by("name_key").values_list("name", flat=True)
    return _strings("catalog"), [[name] for name in names if match(name)]


def _show_databases(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    catalog = _catalog_of(args, job)
    match = like_matcher(args.get("like"))
    names = catalog.databases.order_by("name_key").values_list("name", flat=True)
    return _strings("database"), [[name] for name in names if match(name)]


def _show_relations(kind: str, column: str) -> Callable[[Job, Mapping[str, Any]], Any]:
    def show(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
        database = _database_of(args, job)
        match = like_matcher(args.get("like"))
        names = (
            Table.objects.filter(database=database, kind=kind)
            .order_by("name_key")
            .values_list("name", flat=True)
        )
        columns = [
            {"name": "database", "data_type": "STRING"},
            {"name": column, "data_type": "STRING"},
            {"name": "isTemporary", "data_type": "BOOLEAN"},
        ]
        return columns, [[database.name, name, False] for name in names if match(name)]

    return show


def _show_functions(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    database = _database_of(args, job)
    match = like_matcher(args.get("like"))
    names = database.functions.order_by("name_key").values_list("name", flat=True)
    return _strings("function"), [[name] for name in names if match(name)]


# --- DESCRIBE, SHOW CREATE TABLE -------------------------------------------------------------

_DESCRIBE_COLUMNS = ("col_name", "data_type", "comment", "kind", "expression", "metadata")


def _describe_row(*values: Any) -> list[Any]:
    row = list(values) + [None] * (len(_DESCRIBE_COLUMNS) - len(values))
    return row[: len(_DESCRIBE_COLUMNS)]


@dataclass(frozen=True)
class _RelationText:
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
    def of_table(cls, table: Table) -> _RelationText:
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
    def of_temporary(cls, row: TemporaryObject) -> _RelationText:
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


def _relation(job: Job, args: Mapping[str, Any]) -> _RelationText:
    """The table or view the plan names (DESCRIBE works on both): the session's temporary
    one first, as the planner resolved it."""
    c, d, n = _parts(args, 3)
    temporary = _temporary_row(job.session_id, "relation", c, d, n)
    if temporary is not None:
        return _RelationText.of_temporary(temporary)
    found = _existing_relation(selectors.get_database(c, d), n)
    if found is None:
        raise NotFound(f"Table or view {quote_path([c, d, n])} not found.")
    return _RelationText.of_table(found)


def _describe(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    if args.get("object_kind") == "function":
        return _describe_function(args)
    relation = _relation(job, args)
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
                _describe_row(
                    column.name,
                    column.data_type.sql() if column.data_type is not None else None,
                    column.comment,
                    column.kind,
                    column.expression,
                    metadata,
                )
            )
    if relation.partition_by:
        rows.append(_describe_row("# Partition Information"))
        for name in relation.partition_by:
            column_type = None
            if resolved is not None and (found := resolved.column(name)) is not None:
                column_type = found.data_type.sql() if found.data_type else None
            rows.append(_describe_row(name, column_type))
    if resolved is not None and resolved.watermarks:
        rows.append(_describe_row("# Watermark"))
        for watermark in resolved.watermarks:
            rows.append(
                _describe_row(
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
        rows.append(_describe_row("# Constraints"))
        rows.append(
            _describe_row(key.name, f"PRIMARY KEY ({columns}) NOT ENFORCED", None, "primary_key")
        )
    return _strings(*_DESCRIBE_COLUMNS), rows


def _function_signature(function: Function) -> str:
    return ", ".join(f"{quote_path([p['name']])} {p['data_type']}" for p in function.parameters)


def _describe_function(args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    c, d, n = _parts(args, 3)
    function = selectors.get_function(c, d, n)
    lines = [
        f"Function: {quote_path([c, d, function.name])}",
        f"Language: {function.language}",
    ]
    if function.language == Function.LANGUAGE_SQL:
        lines.append(f"Parameters: ({_function_signature(function)})")
        lines.append(f"Returns: {function.return_type}")
        lines.append(f"Body: {function.implementation}")
    else:
        lines.append(f"Implementation: {function.implementation}")
    if function.comment:
        lines.append(f"Comment: {function.comment}")
    return _strings("function_desc"), [[line] for line in lines]


def _column_ddl(column: Any) -> str:
    name = quote_path([column.name])
    if isinstance(column, ComputedColumn):
        text = f"{name} AS {column.expression}"
    elif isinstance(column, MetadataColumn):
        text = f"{name} {column.data_type.sql()} METADATA"
        if column.metadata_key is not None:
            text += f" FROM {_sql_string(column.metadata_key)}"
        if column.virtual:
            text += " VIRTUAL"
    else:
        text = f"{name} {column.data_type.sql()}"
    if column.comment is not None:
        text += f" COMMENT {_sql_string(column.comment)}"
    return text


def _options_ddl(options: Mapping[str, str]) -> str:
    return ", ".join(f"{_sql_string(k)} = {_sql_string(v)}" for k, v in options.items())


def table_ddl(table: Table) -> str:
    """``CREATE TABLE`` text for a table, in the SQL Tessera's planner reads back."""
    return _table_ddl(_RelationText.of_table(table))


def _table_ddl(table: _RelationText) -> str:
    schema = Schema.from_dict(dict(table.schema))
    items = [_column_ddl(column) for column in schema.columns]
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
        lines.append(f"OPTIONS ({_options_ddl(options)})")
    if table.comment:
        lines.append(f"COMMENT {_sql_string(table.comment)}")
    if table.partition_by:
        lines.append(f"PARTITIONED BY ({', '.join(quote_path([c]) for c in table.partition_by)})")
    return "\n".join(lines)


def view_ddl(view: Table) -> str:
    return _view_ddl(_RelationText.of_table(view))


def _view_ddl(view: _RelationText) -> str:
    create = "CREATE TEMPORARY VIEW" if view.temporary else "CREATE VIEW"
    comment = f"\nCOMMENT {_sql_string(view.comment)}" if view.comment else ""
    return f"{create} {quote_path(view.parts)}{comment}\nAS {view.query}"


def _show_create_table(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    relation = _relation(job, args)
    text = _view_ddl(relation) if relation.kind == Table.KIND_VIEW else _table_ddl(relation)
    return _strings("createtab_stmt"), [[text]]


# --- CREATE ----------------------------------------------------------------------------------


def _create_catalog(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    (name,) = _parts(args, 1)
    existing = Catalog.objects.filter(name_key=name.lower()).first()
    if existing is not None and args.get("if_not_exists"):
        return _message(f"Catalog [{existing.name}] already exists; nothing was created.")
    catalog = services.catalog_create(
        user=job.user,
        name=name,
        comment=str(args.get("comment") or ""),
        properties=args.get("properties") or {},
    )
    return _message(
        f"Created catalog [{catalog.name}] with default database "
        f"{quote_path([catalog.name, catalog.default_database])}."
    )


def _create_database(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    c, d = _parts(args, 2)
    catalog = selectors.get_catalog(c)
    existing = catalog.databases.filter(name_key=d.lower()).first()
    if existing is not None and args.get("if_not_exists"):
        path = quote_path([catalog.name, existing.name])
        return _message(f"Database {path} already exists; nothing was created.")
    database = services.database_create(
        user=job.user,
        catalog=catalog,
        name=d,
        comment=str(args.get("comment") or ""),
        properties=args.get("properties") or {},
    )
    return _message(f"Created database {quote_path([catalog.name, database.name])}.")


def _existing_relation(database: Database, name: str) -> Table | None:
    return Table.objects.filter(database=database, name_key=name.lower()).first()


def _create_table(
    job: Job, args: Mapping[str, Any], typer: ExpressionTyper | None
) -> tuple[Columns, Rows]:
    c, d, n = _parts(args, 3)
    database = selectors.get_database(c, d)
    existing = _existing_relation(database, n)
    if existing is not None and args.get("if_not_exists"):
        path = quote_path([c, d, existing.name])
        return _message(f"{existing.kind.capitalize()} {path} already exists; nothing was created.")
    table = services.table_create(
        user=job.user,
        database=database,
        name=n,
        schema=Schema.from_dict(args.get("schema") or {"columns": []}),
        options=args.get("options") or {},
        partition_by=args.get("partition_by") or [],
        comment=str(args.get("comment") or ""),
        typer=typer,
    )
    return _message(
        f"Created table {quote_path([database.catalog.name, database.name, table.name])}."
    )


def _ctas_skipped(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    """CREATE TABLE IF NOT EXISTS … AS SELECT onto a taken name (``args.skip``): the job
    finishes here at once, nothing is written (event ``skipped_exists``)."""
    if not args.get("skip"):
        raise CoreError("CREATE TABLE … AS SELECT runs on a worker.", details={"action": "ctas"})
    path = quote_path(_parts(args, 3))
    lifecycle.record_event(job.id, "skipped_exists", {"table": path})
    return _message(f"Table {path} already exists; nothing was created or written.")


def _create_view(
    job: Job,
    plan: Mapping[str, Any],
    args: Mapping[str, Any],
    derive_view_schema: DeriveViewSchema | None,
) -> tuple[Columns, Rows]:
    c, d, n = _parts(args, 3)
    database = selectors.get_database(c, d)
    existing = _existing_relation(database, n)
    replaced = False
    if existing is not None:
        path = quote_path([c, d, existing.name])
        if args.get("or_replace") and existing.kind == Table.KIND_VIEW:
            services.table_delete(user=job.user, table=existing)
            replaced = True
        elif args.get("if_not_exists"):
            return _message(
                f"{existing.kind.capitalize()} {path} already exists; nothing was created."
            )
        elif existing.kind == Table.KIND_TABLE:
            raise AlreadyExists(f"Table {path} already exists; a view cannot replace a table.")
        else:
            raise AlreadyExists(f"View {path} already exists.")
    query = str(args.get("query") or "")
    schema = derive_view_schema(str(plan.get("sql") or query)) if derive_view_schema else None
    expanded = args.get("expanded_query")
    view = services.view_create(
        user=job.user,
        database=database,
        name=n,
        query=query,
        schema=schema,
        comment=str(args.get("comment") or ""),
        expanded_query=str(expanded) if expanded else None,
    )
    path = quote_path([database.catalog.name, database.name, view.name])
    return _message(f"{'Replaced' if replaced else 'Created'} view {path}.")


def _parameters(value: Any) -> list[dict[str, Any]]:
    """Plan parameters ``[[name, type], …]`` (or already ``[{"name", "data_type"}]``)."""
    checked: list[dict[str, Any]] = []
    for item in value or []:
        if isinstance(item, Mapping):
            checked.append({"name": item.get("name"), "data_type": item.get("data_type")})
        elif isinstance(item, Sequence) and not isinstance(item, str) and len(item) == 2:
            checked.append({"name": item[0], "data_type": item[1]})
        else:
            checked.append({"name": item, "data_type": None})
    return checked


def _create_function(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    c, d, n = _parts(args, 3)
    _refuse_if_temporary(job, "function", (c, d, n), "creating", "function")
    database = selectors.get_database(c, d)
    existing = database.functions.filter(name_key=n.lower()).first()
    if existing is not None and args.get("if_not_exists"):
        path = quote_path([c, d, existing.name])
        return _message(f"Function {path} already exists; nothing was created.")
    function = services.function_create(
        user=job.user,
        database=database,
        name=n,
        language=str(args.get("language") or ""),
        implementation=str(args.get("implementation") or ""),
        parameters=_parameters(args.get("parameters")),
        return_type=str(args.get("return_type") or ""),
        comment=str(args.get("comment") or ""),
    )
    path = quote_path([database.catalog.name, database.name, function.name])
    return _message(f"Created function {path}.")


# --- DROP ------------------------------------------------------------------------------------


def _absent(what: str, error: NotFound, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    if not args.get("if_exists"):
        raise error
    return _message(f"{what} does not exist; nothing was dropped.")


def _drop_catalog(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    (name,) = _parts(args, 1)
    try:
        catalog = selectors.get_catalog(name)
    except NotFound as exc:
        return _absent(f"Catalog [{name}]", exc, args)
    services.catalog_delete(user=job.user, catalog=catalog, cascade=bool(args.get("cascade")))
    return _message(f"Dropped catalog [{catalog.name}].")


def _drop_database(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    c, d = _parts(args, 2)
    try:
        database = selectors.get_database(c, d)
    except NotFound as exc:
        return _absent(f"Database {quote_path([c, d])}", exc, args)
    services.database_delete(user=job.user, database=database, cascade=bool(args.get("cascade")))
    return _message(f"Dropped database {quote_path([database.catalog.name, database.name])}.")


def _drop_relation(kind: str) -> Callable[[Job, Mapping[str, Any]], Any]:
    other = Table.KIND_VIEW if kind == Table.KIND_TABLE else Table.KIND_TABLE

    def drop(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
        c, d, n = _parts(args, 3)
        path = quote_path([c, d, n])
        _refuse_if_temporary(job, "relation", (c, d, n), "removing", kind)
        try:
            database = selectors.get_database(c, d)
        except NotFound as exc:
            return _absent(f"{kind.capitalize()} {path}", exc, args)
        found = _existing_relation(database, n)
        if found is None:
            error = NotFound(f"{kind.capitalize()} {path} does not exist.")
            return _absent(f"{kind.capitalize()} {path}", error, args)
        if found.kind == other:
            raise CoreError(
                f"{path} is a {other}; use DROP {other.upper()} to drop it.",
                details={"kind": other},
            )
        services.table_delete(user=job.user, table=found)
        real = quote_path([database.catalog.name, database.name, found.name])
        return _message(f"Dropped {kind} {real}.")

    return drop


def _drop_function(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    c, d, n = _parts(args, 3)
    path = quote_path([c, d, n])
    _refuse_if_temporary(job, "function", (c, d, n), "removing", "function")
    try:
        function = selectors.get_function(c, d, n)
    except NotFound as exc:
        return _absent(f"Function {path}", exc, args)
    database = function.database
    services.function_delete(user=job.user, function=function)
    return _message(
        f"Dropped function {quote_path([database.catalog.name, database.name, function.name])}."
    )


# --- temporary objects (FLIP-64) --------------------------------------------------------------
#
# The plan actions are the permanent ones with ``args.temporary`` (and ``args.system`` for
# temporary system functions); see docs/statements.md "Temporary objects". They touch only
# the session's ``TemporaryObject`` rows, never the catalog and never any file.


_PYTHON_DOTTED_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$")


def _temporary_rows(session_id: Any, namespace: str) -> QuerySet[TemporaryObject]:
    qs = TemporaryObject.objects.filter(session_id=session_id)
    if namespace == "relation":
        return qs.filter(kind__in=TemporaryObject.RELATION_KINDS)
    return qs.filter(kind=TemporaryObject.KIND_FUNCTION, system=namespace == "system")


def _temporary_row(
    session_id: Any, namespace: str, catalog: str, database: str, name: str
) -> TemporaryObject | None:
    """The session's temporary object of a namespace ("relation", "function", "system")."""
    if session_id is None:
        return None
    return (
        _temporary_rows(session_id, namespace)
        .filter(catalog_key=catalog.lower(), database_key=database.lower(), name_key=name.lower())
        .first()
    )


def _refuse_if_temporary(
    job: Job,
    namespace: str,
    parts: tuple[str, str, str],
    action: Literal["removing", "creating"],
    permanent_kind: str,
) -> None:
    """The planner's TEMPORARY_OBJECT_EXISTS check, again when the plan runs."""
    from core.planner import TemporaryObjectExists

    found = _temporary_row(job.session_id, namespace, *parts)
    if found is not None:
        ident = ObjectIdentifier(found.catalog, found.database, found.name)
        raise TemporaryObjectExists(ident, found.kind, action, permanent_kind)


def _permanent_relation(c: str, d: str, n: str) -> Table | None:
    return Table.objects.filter(
        database__catalog__name_key=c.lower(), database__name_key=d.lower(), name_key=n.lower()
    ).first()


def _permanent_function(c: str, d: str, n: str) -> Function | None:
    return Function.objects.filter(
        database__catalog__name_key=c.lower(), database__name_key=d.lower(), name_key=n.lower()
    ).first()


def is_builtin_function(name: str) -> bool:
    """Whether a one-part name is a Spark built-in (the planner's list)."""
    from core.planner.functions import is_builtin

    return is_builtin(name)


def _shadow_note(row: TemporaryObject) -> str:
    """What the new temporary object hides, for the result message."""
    if row.system:
        shown = quote_path([row.name])
        return (
            f"; it shadows the built-in function {shown}" if is_builtin_function(row.name) else ""
        )
    if row.kind == TemporaryObject.KIND_FUNCTION:
        function = _permanent_function(row.catalog, row.database, row.name)
        return "; it shadows the permanent function of that name" if function else ""
    table = _permanent_relation(row.catalog, row.database, row.name)
    return f"; it shadows the permanent {table.kind} of that name" if table else ""


def _save_temporary(row: TemporaryObject, what: str) -> None:
    """Insert a new temporary object; a concurrent twin becomes ALREADY_EXISTS."""
    try:
        with transaction.atomic():
            row.save()
    except IntegrityError as exc:
        raise AlreadyExists(f"{what} already exists.") from exc


def _temporary_table_options(options: Mapping[str, Any]) -> dict[str, str]:
    """A temporary table is external: Tessera does not own its data (FLIP-64). Its path
    is checked like a permanent table's (text, links, strictly below a root); whether it
    overlaps another table's is checked once the session is locked
    (``services.check_temporary_path``)."""
    checked = services.check_options(options)
    if "path" not in checked:
        raise CoreError(
            "A temporary table needs a path (LOCATION '…' or the 'path' option): Tessera "
            "does not own a temporary table's data, so it has no warehouse directory for it.",
            details={"field": "options.path"},
        )
    return checked


def _taken_relation(
    existing: TemporaryObject | None, args: Mapping[str, Any], creating: str
) -> tuple[Columns, Rows] | None:
    """A temporary table/view name already in use: IF NOT EXISTS answers, OR REPLACE (views
    over views) goes on, anything else is ALREADY_EXISTS. None: go on and create."""
    if existing is None:
        return None
    what = f"Temporary {existing.kind} {quote_path(existing.parts)}"
    if creating == existing.kind == TemporaryObject.KIND_VIEW and args.get("or_replace"):
        return None
    if args.get("if_not_exists"):
        return _message(f"{what} already exists; nothing was created.")
    if creating != existing.kind:
        raise AlreadyExists(
            f"{what} already exists; a {creating} cannot replace a {existing.kind}."
        )
    raise AlreadyExists(f"{what} already exists.")


def _create_temporary_table(
    job: Job, args: Mapping[str, Any], typer: ExpressionTyper | None
) -> tuple[Columns, Rows]:
    c, d, n = _parts(args, 3)
    validate_name(n, "table name")
    # Checked before the Spark typing, and again once the session row is locked.
    answer = _taken_relation(_temporary_row(job.session_id, "relation", c, d, n), args, "table")
    if answer is not None:
        return answer
    schema = Schema.from_dict(args.get("schema") or {"columns": []})
    resolved = services.resolve_schema(schema, typer)
    if not resolved.columns:
        raise CoreError("A table needs at least one column.", details={"field": "schema.columns"})
    options = _temporary_table_options(args.get("options") or {})
    definition = {
        "options": options,
        "schema": schema.to_dict(),
        "resolved_schema": resolved.to_dict(),
        "partition_by": services.check_partitioning(args.get("partition_by") or [], resolved),
        "comment": str(args.get("comment") or ""),
    }
    session = _session(job)  # locked: the session's DDL runs one at a time
    answer = _taken_relation(_temporary_row(session.pk, "relation", c, d, n), args, "table")
    if answer is not None:
        return answer
    # Its files must be its own: no permanent table's, nor another of this session's.
    siblings = [
        (quote_path(other.parts), dict((other.definition or {}).get("options") or {}))
        for other in _temporary_rows(session.pk, "relation").filter(kind=TemporaryObject.KIND_TABLE)
    ]
    services.check_temporary_path(options, siblings)
    row = TemporaryObject(
        session=session,
        kind=TemporaryObject.KIND_TABLE,
        catalog=c,
        database=d,
        name=n,
        created_by_job_id=job.pk,
        definition=definition,
    )
    path = quote_path([c, d, n])
    _save_temporary(row, f"Temporary table {path}")
    return _message(f"Created temporary table {path}{_shadow_note(row)}.")


def _create_temporary_view(
    job: Job,
    plan: Mapping[str, Any],
    args: Mapping[str, Any],
    derive_view_schema: DeriveViewSchema | None,
) -> tuple[Columns, Rows]:
    c, d, n = _parts(args, 3)
    validate_name(n, "view name")
    # Checked before Spark derives the schema, and again once the session row is locked.
    answer = _taken_relation(_temporary_row(job.session_id, "relation", c, d, n), args, "view")
    if answer is not None:
        return answer
    query = str(args.get("query") or "")
    if not query.strip():
        raise CoreError("A view needs a query.", details={"field": "query"})
    schema = derive_view_schema(str(plan.get("sql") or query)) if derive_view_schema else None
    schema_json, resolved_json = services.view_schema(schema)
    expanded = args.get("expanded_query")
    session = _session(job)  # locked: the session's DDL runs one at a time
    existing = _temporary_row(session.pk, "relation", c, d, n)
    answer = _taken_relation(existing, args, "view")
    if answer is not None:
        return answer
    if existing is not None:  # OR REPLACE of a temporary view
        existing.delete()
    row = TemporaryObject(
        session=session,
        kind=TemporaryObject.KIND_VIEW,
        catalog=c,
        database=d,
        name=n,
        created_by_job_id=job.pk,
        definition={
            "query": query,
            "expanded_query": str(expanded) if expanded else None,
            "schema": schema_json,
            "resolved_schema": resolved_json,
            "comment": str(args.get("comment") or ""),
        },
    )
    path = quote_path([c, d, n])
    _save_temporary(row, f"Temporary view {path}")
    done = "Replaced" if existing is not None else "Created"
    return _message(f"{done} temporary view {path}{_shadow_note(row)}.")


def _function_identity(args: Mapping[str, Any]) -> tuple[bool, tuple[str, str, str]]:
    """(system, (catalog, database, name)); a system function has a one-part name."""
    if not args.get("system"):
        c, d, n = _parts(args, 3)
        return False, (c, d, n)
    identifier = args.get("identifier")
    if not isinstance(identifier, list | tuple) or len(identifier) != 1:
        raise CoreError(
            "A temporary system function has a one-part name, e.g. CREATE TEMPORARY SYSTEM "
            "FUNCTION my_upper AS '…'.",
            details={"args": dict(args)},
        )
    return True, ("", "", str(identifier[0]))


def _temporary_label(kind: str, system: bool, parts: tuple[str, str, str]) -> str:
    """``temporary table `c`.`d`.`t` `` or ``temporary system function `f` ``."""
    if system:
        return f"temporary system function {quote_path([parts[2]])}"
    return f"temporary {kind} {quote_path(parts)}"


def _capitalized(text: str) -> str:
    return text[:1].upper() + text[1:]


def _check_temporary_function(args: Mapping[str, Any]) -> dict[str, Any]:
    language = str(args.get("language") or "")
    implementation = str(args.get("implementation") or "")
    return_type = str(args.get("return_type") or "")
    if language == Function.LANGUAGE_PYTHON:
        implementation = implementation.strip()
        if not _PYTHON_DOTTED_NAME.match(implementation):
            raise CoreError(
                "A Python function is named by its dotted path, like 'package.module.func'; "
                f"got '{implementation}'.",
                details={"field": "implementation"},
            )
    elif language == Function.LANGUAGE_SQL:
        if not implementation.strip():
            raise CoreError("A SQL function needs a body expression.")
        if not return_type:
            raise CoreError("A SQL function needs a return type.")
    else:
        raise CoreError(f"Unknown function language '{language}'. Supported: python, sql.")
    parameters = [
        {"name": validate_name(str(p["name"]), "parameter name"), "data_type": str(p["data_type"])}
        for p in _parameters(args.get("parameters"))
    ]
    for parameter in parameters:
        parameter["data_type"] = parse_data_type(parameter["data_type"]).sql()
    return {
        "language": language,
        "implementation": implementation,
        "parameters": parameters,
        "return_type": parse_data_type(return_type).sql() if return_type else "",
        "comment": str(args.get("comment") or ""),
    }


def _create_temporary_function(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    session = _session(job)
    system, parts = _function_identity(args)
    validate_name(parts[2], "function name")
    namespace = "system" if system else "function"
    existing = _temporary_row(session.pk, namespace, *parts)
    replaced = False
    if existing is not None:
        label = _capitalized(
            _temporary_label(
                "function", system, (existing.catalog, existing.database, existing.name)
            )
        )
        if args.get("or_replace"):
            replaced = True
        elif args.get("if_not_exists"):
            return _message(f"{label} already exists; nothing was created.")
        else:
            raise AlreadyExists(f"{label} already exists.")
    definition = _check_temporary_function(args)
    if existing is not None:
        existing.delete()
    row = TemporaryObject(
        session=session,
        kind=TemporaryObject.KIND_FUNCTION,
        system=system,
        catalog=parts[0],
        database=parts[1],
        name=parts[2],
        created_by_job_id=job.pk,
        definition=definition,
    )
    label = _temporary_label("function", system, parts)
    _save_temporary(row, _capitalized(label))
    return _message(f"{'Replaced' if replaced else 'Created'} {label}{_shadow_note(row)}.")


def _dropped(text: str, existed: bool) -> tuple[Columns, Rows]:
    """A temporary DROP's answer: what happened, and whether an object existed."""
    columns = [
        {"name": "result", "data_type": "STRING"},
        {"name": "existed", "data_type": "BOOLEAN"},
    ]
    return columns, [[text, existed]]


def _missing_hint(job: Job, kind: str, system: bool, parts: tuple[str, str, str]) -> str:
    """Why a temporary object is missing when something else has that name."""
    if system:
        return ""
    if kind == TemporaryObject.KIND_FUNCTION:
        if _permanent_function(*parts) is not None:
            return " (a permanent function has that name; DROP FUNCTION drops it)"
        if _temporary_row(job.session_id, "system", "", "", parts[2]) is not None:
            return (
                f" (a temporary system function is named {quote_path([parts[2]])}; "
                "DROP TEMPORARY SYSTEM FUNCTION drops it)"
            )
        return ""
    table = _permanent_relation(*parts)
    if table is not None:
        return f" (a permanent {table.kind} has that name; DROP {table.kind.upper()} drops it)"
    return ""


def _drop_temporary(kind: str) -> Callable[[Job, Mapping[str, Any]], tuple[Columns, Rows]]:
    def drop(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
        session = _session(job)
        system = False
        if kind == TemporaryObject.KIND_FUNCTION:
            system, parts = _function_identity(args)
            namespace = "system" if system else "function"
        else:
            c, d, n = _parts(args, 3)
            parts, namespace = (c, d, n), "relation"
        found = _temporary_row(session.pk, namespace, *parts)
        if found is None:
            what = _capitalized(_temporary_label(kind, system, parts))
            if args.get("if_exists"):
                return _dropped(f"{what} does not exist; nothing was dropped.", False)
            hint = _missing_hint(job, kind, system, parts)
            identifier = [parts[2]] if system else list(parts)
            raise NotFound(f"{what} does not exist{hint}.", details={"identifier": identifier})
        if found.kind != kind:
            raise CoreError(
                f"{quote_path(found.parts)} is a temporary {found.kind}; use DROP TEMPORARY "
                f"{found.kind.upper()} to drop it.",
                details={"kind": found.kind},
            )
        found.delete()
        shown = _temporary_label(kind, system, (found.catalog, found.database, found.name))
        return _dropped(f"Dropped {shown}.", True)

    return drop


def _shadowed_keys(rows: Sequence[TemporaryObject]) -> set[tuple[str, str, str]]:
    """Keys of the rows' identifiers that a permanent object also has (one query)."""
    relations = [r for r in rows if r.kind != TemporaryObject.KIND_FUNCTION]
    functions = [r for r in rows if r.kind == TemporaryObject.KIND_FUNCTION and not r.system]
    found: set[tuple[str, str, str]] = set()
    for model, group in ((Table, relations), (Function, functions)):
        if not group:
            continue
        condition = Q(pk__in=[])
        for row in group:
            condition |= Q(
                database__catalog__name_key=row.catalog_key,
                database__name_key=row.database_key,
                name_key=row.name_key,
            )
        found.update(
            model.objects.filter(condition).values_list(
                "database__catalog__name_key", "database__name_key", "name_key"
            )
        )
    return found


def shadows(rows: Sequence[TemporaryObject]) -> list[bool]:
    """For each row, whether it shadows a permanent object with its identifier (a system
    function: a built-in). At most one query per kind of object, whatever the rows."""
    shadowed = _shadowed_keys(rows)
    return [
        is_builtin_function(row.name)
        if row.system
        else (row.catalog_key, row.database_key, row.name_key) in shadowed
        for row in rows
    ]


def _show_temporary(kind: str) -> Callable[[Job, Mapping[str, Any]], tuple[Columns, Rows]]:
    """SHOW TEMPORARY TABLES|VIEWS|FUNCTIONS: the session's objects of that kind, with
    ``shadows`` telling whether a permanent object (for system functions: a built-in) has
    that identifier. ``LIKE`` matches the name."""

    def show(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
        match = like_matcher(args.get("like"))
        session_id = job.session_id
        mine = (
            TemporaryObject.objects.filter(session_id=session_id, kind=kind)
            if session_id is not None
            else TemporaryObject.objects.none()
        )
        ordered = mine.order_by("catalog_key", "database_key", "name_key")  # system first
        rows = [row for row in ordered if match(row.name)]
        columns = _strings("catalog", "database", "name")
        if kind == TemporaryObject.KIND_FUNCTION:
            columns.append({"name": "system", "data_type": "BOOLEAN"})
        columns.append({"name": "shadows", "data_type": "BOOLEAN"})
        out: Rows = []
        for row, shadowing in zip(rows, shadows(rows), strict=True):
            line: list[Any] = [row.catalog or None, row.database or None, row.name]
            if kind == TemporaryObject.KIND_FUNCTION:
                line.append(row.system)
            out.append([*line, shadowing])
        return columns, out

    return show


_TEMPORARY_HANDLERS: dict[str, Callable[[Job, Mapping[str, Any]], tuple[Columns, Rows]]] = {
    "create_function": _create_temporary_function,
    "drop_table": _drop_temporary(TemporaryObject.KIND_TABLE),
    "drop_view": _drop_temporary(TemporaryObject.KIND_VIEW),
    "drop_function": _drop_temporary(TemporaryObject.KIND_FUNCTION),
    "show_tables": _show_temporary(TemporaryObject.KIND_TABLE),
    "show_views": _show_temporary(TemporaryObject.KIND_VIEW),
    "show_functions": _show_temporary(TemporaryObject.KIND_FUNCTION),
}


def _execute_temporary(
    job: Job,
    plan: Mapping[str, Any],
    args: Mapping[str, Any],
    typer: ExpressionTyper | None,
    derive_view_schema: DeriveViewSchema | None,
) -> tuple[Columns, Rows]:
    action = str(plan.get("action"))
    if action == "create_table":
        return _create_temporary_table(job, args, typer)
    if action == "create_view":
        return _create_temporary_view(job, plan, args, derive_view_schema)
    handler = _TEMPORARY_HANDLERS.get(action)
    if handler is None:
        raise CoreError(
            f"The plan action '{action}' has no temporary form.", details={"action": action}
        )
    return handler(job, args)


_HANDLERS: dict[str, Callable[[Job, Mapping[str, Any]], tuple[Columns, Rows]]] = {
    "use": _use,
    "set": _set,
    "reset": _reset,
    "show_catalogs": _show_catalogs,
    "show_databases": _show_databases,
    "show_tables": _show_relations(Table.KIND_TABLE, "tableName"),
    "show_views": _show_relations(Table.KIND_VIEW, "viewName"),
    "show_functions": _show_functions,
    "describe": _describe,
    "show_create_table": _show_create_table,
    "create_catalog": _create_catalog,
    "create_database": _create_database,
    "create_function": _create_function,
    "ctas": _ctas_skipped,
    "drop_catalog": _drop_catalog,
    "drop_database": _drop_database,
    "drop_table": _drop_relation(Table.KIND_TABLE),
    "drop_view": _drop_relation(Table.KIND_VIEW),
    "drop_function": _drop_function,
}

COMMAND_ACTIONS: frozenset[str] = frozenset({*_HANDLERS, "create_table", "create_view"})
