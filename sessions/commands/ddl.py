"""CREATE and DROP of catalogs, databases, tables, views and functions in the catalog
(``catalog.services`` does the writing, in the job's transaction).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from catalog import selectors, services
from catalog.models import Catalog, Table
from core.errors import AlreadyExists, CoreError, NotFound
from core.identifiers import quote_path
from core.planner import Plan
from core.schema import (
    ExpressionTyper,
    Schema,
)
from jobs import lifecycle
from jobs.models import Job
from sessions.commands.common import (
    Columns,
    DeriveViewSchema,
    Rows,
    access_of,
    existing_relation,
    identifier_parts,
    message,
    refuse_if_temporary,
)

log = logging.getLogger(__name__)


def create_catalog(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    (name,) = identifier_parts(args, 1)
    existing = Catalog.objects.filter(name_key=name.lower()).first()
    if existing is not None and args.get("if_not_exists"):
        return message(f"Catalog [{existing.name}] already exists; nothing was created.")
    catalog = services.catalog_create(
        user=job.user,
        name=name,
        comment=str(args.get("comment") or ""),
        properties=args.get("properties") or {},
    )
    return message(
        f"Created catalog [{catalog.name}] with default database "
        f"{quote_path([catalog.name, catalog.default_database])}."
    )


def create_database(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    c, d = identifier_parts(args, 2)
    catalog = selectors.get_catalog(c, access=access_of(job))
    existing = catalog.databases.filter(name_key=d.lower()).first()
    if existing is not None and args.get("if_not_exists"):
        path = quote_path([catalog.name, existing.name])
        return message(f"Database {path} already exists; nothing was created.")
    database = services.database_create(
        user=job.user,
        catalog=catalog,
        name=d,
        comment=str(args.get("comment") or ""),
        properties=args.get("properties") or {},
    )
    return message(f"Created database {quote_path([catalog.name, database.name])}.")


def create_table(
    job: Job, args: Mapping[str, Any], typer: ExpressionTyper | None
) -> tuple[Columns, Rows]:
    c, d, n = identifier_parts(args, 3)
    database = selectors.get_database(c, d, access=access_of(job))
    existing = existing_relation(database, n)
    if existing is not None and args.get("if_not_exists"):
        path = quote_path([c, d, existing.name])
        return message(f"{existing.kind.capitalize()} {path} already exists; nothing was created.")
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
    return message(
        f"Created table {quote_path([database.catalog.name, database.name, table.name])}."
    )


def ctas_skipped(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    """CREATE TABLE IF NOT EXISTS … AS SELECT onto a taken name (``args.skip``): the job
    finishes here at once, nothing is written (event ``skipped_exists``)."""
    if not args.get("skip"):
        raise CoreError("CREATE TABLE … AS SELECT runs on a worker.", details={"action": "ctas"})
    path = quote_path(identifier_parts(args, 3))
    lifecycle.record_event(job.id, "skipped_exists", {"table": path})
    return message(f"Table {path} already exists; nothing was created or written.")


def create_view(
    job: Job,
    plan: Plan,
    args: Mapping[str, Any],
    derive_view_schema: DeriveViewSchema | None,
) -> tuple[Columns, Rows]:
    c, d, n = identifier_parts(args, 3)
    database = selectors.get_database(c, d, access=access_of(job))
    existing = existing_relation(database, n)
    replaced = False
    if existing is not None:
        path = quote_path([c, d, existing.name])
        if args.get("or_replace") and existing.kind == Table.KIND_VIEW:
            services.table_delete(user=job.user, table=existing)
            replaced = True
        elif args.get("if_not_exists"):
            return message(
                f"{existing.kind.capitalize()} {path} already exists; nothing was created."
            )
        elif existing.kind == Table.KIND_TABLE:
            raise AlreadyExists(f"Table {path} already exists; a view cannot replace a table.")
        else:
            raise AlreadyExists(f"View {path} already exists.")
    query = str(args.get("query") or "")
    if derive_view_schema is None:
        raise CoreError("A view's schema is derived by Spark's analyzer, on a worker.")
    derived = derive_view_schema(str(plan.sql or query))
    expanded = args.get("expanded_query")
    view = services.view_create(
        user=job.user,
        database=database,
        name=n,
        query=query,
        derived=derived,
        comment=str(args.get("comment") or ""),
        expanded_query=str(expanded) if expanded else None,
    )
    path = quote_path([database.catalog.name, database.name, view.name])
    return message(f"{'Replaced' if replaced else 'Created'} view {path}.")


def function_parameters(value: Any) -> list[dict[str, Any]]:
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


def create_function(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    c, d, n = identifier_parts(args, 3)
    refuse_if_temporary(job, "function", (c, d, n), "creating", "function")
    database = selectors.get_database(c, d, access=access_of(job))
    existing = database.functions.filter(name_key=n.lower()).first()
    if existing is not None and args.get("if_not_exists"):
        path = quote_path([c, d, existing.name])
        return message(f"Function {path} already exists; nothing was created.")
    function = services.function_create(
        user=job.user,
        database=database,
        name=n,
        language=str(args.get("language") or ""),
        implementation=str(args.get("implementation") or ""),
        parameters=function_parameters(args.get("parameters")),
        return_type=str(args.get("return_type") or ""),
        comment=str(args.get("comment") or ""),
    )
    path = quote_path([database.catalog.name, database.name, function.name])
    return message(f"Created function {path}.")


def absent(what: str, error: NotFound, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    if not args.get("if_exists"):
        raise error
    return message(f"{what} does not exist; nothing was dropped.")


def drop_catalog(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    (name,) = identifier_parts(args, 1)
    try:
        catalog = selectors.get_catalog(name, access=access_of(job))
    except NotFound as exc:
        return absent(f"Catalog [{name}]", exc, args)
    services.catalog_delete(user=job.user, catalog=catalog, cascade=bool(args.get("cascade")))
    return message(f"Dropped catalog [{catalog.name}].")


def drop_database(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    c, d = identifier_parts(args, 2)
    try:
        database = selectors.get_database(c, d, access=access_of(job))
    except NotFound as exc:
        return absent(f"Database {quote_path([c, d])}", exc, args)
    services.database_delete(user=job.user, database=database, cascade=bool(args.get("cascade")))
    return message(f"Dropped database {quote_path([database.catalog.name, database.name])}.")


def drop_relation(kind: str) -> Callable[[Job, Mapping[str, Any]], Any]:
    other = Table.KIND_VIEW if kind == Table.KIND_TABLE else Table.KIND_TABLE

    def drop(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
        c, d, n = identifier_parts(args, 3)
        path = quote_path([c, d, n])
        refuse_if_temporary(job, "relation", (c, d, n), "removing", kind)
        try:
            database = selectors.get_database(c, d, access=access_of(job))
        except NotFound as exc:
            return absent(f"{kind.capitalize()} {path}", exc, args)
        found = existing_relation(database, n)
        if found is None:
            error = NotFound(f"{kind.capitalize()} {path} does not exist.")
            return absent(f"{kind.capitalize()} {path}", error, args)
        if found.kind == other:
            raise CoreError(
                f"{path} is a {other}; use DROP {other.upper()} to drop it.",
                details={"kind": other},
            )
        services.table_delete(user=job.user, table=found)
        real = quote_path([database.catalog.name, database.name, found.name])
        return message(f"Dropped {kind} {real}.")

    return drop


def drop_function(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    c, d, n = identifier_parts(args, 3)
    path = quote_path([c, d, n])
    refuse_if_temporary(job, "function", (c, d, n), "removing", "function")
    try:
        function = selectors.get_function(c, d, n, access=access_of(job))
    except NotFound as exc:
        return absent(f"Function {path}", exc, args)
    database = function.database
    services.function_delete(user=job.user, function=function)
    return message(
        f"Dropped function {quote_path([database.catalog.name, database.name, function.name])}."
    )
