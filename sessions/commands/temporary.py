"""FLIP-64 temporary tables, views and functions: CREATE/DROP/SHOW TEMPORARY …, stored as
the session's ``TemporaryObject`` rows and consulted before the catalog.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from typing import Any

from django.db import IntegrityError, transaction

from catalog import grants as catalog_grants
from catalog import services
from catalog.models import Function, Table
from core import jobstate
from core.datatypes import parse_data_type
from core.errors import AlreadyExists, CoreError, NotFound
from core.identifiers import quote_path, validate_name
from core.planner import Plan
from core.planner.functions import is_builtin
from core.planner.sources import (
    dataframe_source,
    names_dataframe,
    names_rate,
    rate_source,
    upload_source,
)
from core.schema import (
    ExpressionTyper,
    Schema,
)
from jobs.models import Job, TemporaryObject
from sessions import uploads
from sessions.commands.common import (
    Columns,
    DeriveViewSchema,
    Rows,
    identifier_parts,
    like_matcher,
    locked_session,
    message,
    string_columns,
    temporary_row,
    temporary_rows,
)
from sessions.commands.ddl import function_parameters
from sessions.temporary_objects import shadows

log = logging.getLogger(__name__)


_PYTHON_DOTTED_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$")


def _permanent_relation(c: str, d: str, n: str) -> Table | None:
    return Table.objects.filter(
        database__catalog__name_key=c.lower(), database__name_key=d.lower(), name_key=n.lower()
    ).first()


def _permanent_function(c: str, d: str, n: str) -> Function | None:
    return Function.objects.filter(
        database__catalog__name_key=c.lower(), database__name_key=d.lower(), name_key=n.lower()
    ).first()


def _shadow_note(row: TemporaryObject) -> str:
    """What the new temporary object hides, for the result message."""
    if row.system:
        shown = quote_path([row.name])
        return f"; it shadows the built-in function {shown}" if is_builtin(row.name) else ""
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


def _pipeline_of(job: Job) -> str | None:
    """The running pipeline job whose statement ``job`` is (its parent), or None."""
    if job.parent_id is None or job.session_id is None:
        return None
    running = Job.objects.filter(
        pk=job.parent_id,
        session_id=job.session_id,
        kind="pipeline",
        status=jobstate.RUNNING,
        cancel_requested=False,
    ).exists()
    return str(job.parent_id) if running else None


def _temporary_table_options(options: Mapping[str, Any], job: Job) -> dict[str, str]:
    """A temporary table is external: Tessera does not own its data (FLIP-64). Its path
    is checked like a permanent table's (text, links, strictly below a root); whether it
    overlaps another table's is checked once the session is locked
    (``services.check_temporary_path``). A table over an upload names one of its session's
    uploads (checked again here: the plan may be older than the upload's deletion); one
    over a DataFrame must be a statement of the running pipeline it names; one over the
    ``rate`` connector has its options checked again and no path. A path needs ``READ
    FILES`` on its storage root (ADR 0011), checked again here."""
    session_id = job.session_id
    if names_rate(None, dict(options)):  # Spark's rate source: no path (docs/streaming.md)
        rate = rate_source(None, dict(options), None)
        assert rate is not None
        return rate
    if names_dataframe(None, dict(options)):
        frame = dataframe_source(None, dict(options), None, _pipeline_of(job))
        assert frame is not None
        return frame
    upload = uploads.upload_lookup(session_id)
    upload_options = upload_source(None, dict(options), None, upload)
    if upload_options is not None:
        return upload_options[0]
    checked = services.check_options(options)
    if "path" not in checked:
        raise CoreError(
            "A temporary table needs a path (LOCATION '…' or the 'path' option): Tessera "
            "does not own a temporary table's data, so it has no warehouse directory for it.",
            details={"field": "options.path"},
        )
    # READ FILES on the path's storage root, again (the planner checked it; rights change).
    catalog_grants.require_read_files(job.user, str(checked["path"]))
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
        return message(f"{what} already exists; nothing was created.")
    if creating != existing.kind:
        raise AlreadyExists(
            f"{what} already exists; a {creating} cannot replace a {existing.kind}."
        )
    raise AlreadyExists(f"{what} already exists.")


def create_temporary_table(
    job: Job, args: Mapping[str, Any], typer: ExpressionTyper | None
) -> tuple[Columns, Rows]:
    c, d, n = identifier_parts(args, 3)
    validate_name(n, "table name")
    # Checked before the Spark typing, and again once the session row is locked.
    answer = _taken_relation(temporary_row(job.session_id, "relation", c, d, n), args, "table")
    if answer is not None:
        return answer
    schema = Schema.from_dict(args.get("schema") or {"columns": []})
    resolved = services.resolve_schema(schema, typer)
    if not resolved.columns:
        raise CoreError("A table needs at least one column.", details={"field": "schema.columns"})
    options = _temporary_table_options(args.get("options") or {}, job)
    definition = {
        "options": options,
        "schema": schema.to_dict(),
        "resolved_schema": resolved.to_dict(),
        "partition_by": services.check_partitioning(args.get("partition_by") or [], resolved),
        "comment": str(args.get("comment") or ""),
    }
    session = locked_session(job)  # locked: the session's DDL runs one at a time
    answer = _taken_relation(temporary_row(session.pk, "relation", c, d, n), args, "table")
    if answer is not None:
        return answer
    # Its files must be its own: no permanent table's, nor another of this session's.
    siblings = [
        (quote_path(other.parts), dict((other.definition or {}).get("options") or {}))
        for other in temporary_rows(session.pk, "relation").filter(kind=TemporaryObject.KIND_TABLE)
    ]
    services.check_temporary_path(options, siblings, user=job.user)
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
    return message(f"Created temporary table {path}{_shadow_note(row)}.")


def create_temporary_view(
    job: Job,
    plan: Plan,
    args: Mapping[str, Any],
    derive_view_schema: DeriveViewSchema | None,
) -> tuple[Columns, Rows]:
    c, d, n = identifier_parts(args, 3)
    validate_name(n, "view name")
    # Checked before Spark derives the schema, and again once the session row is locked.
    answer = _taken_relation(temporary_row(job.session_id, "relation", c, d, n), args, "view")
    if answer is not None:
        return answer
    query = str(args.get("query") or "")
    if not query.strip():
        raise CoreError("A view needs a query.", details={"field": "query"})
    if derive_view_schema is None:
        raise CoreError("A view's schema is derived by Spark's analyzer, on a worker.")
    schema_json, resolved_json = services.view_schema_json(
        derive_view_schema(str(plan.sql or query))
    )
    expanded = args.get("expanded_query")
    session = locked_session(job)  # locked: the session's DDL runs one at a time
    existing = temporary_row(session.pk, "relation", c, d, n)
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
    return message(f"{done} temporary view {path}{_shadow_note(row)}.")


def _function_identity(args: Mapping[str, Any]) -> tuple[bool, tuple[str, str, str]]:
    """(system, (catalog, database, name)); a system function has a one-part name."""
    if not args.get("system"):
        c, d, n = identifier_parts(args, 3)
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
        for p in function_parameters(args.get("parameters"))
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


def create_temporary_function(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    session = locked_session(job)
    system, parts = _function_identity(args)
    validate_name(parts[2], "function name")
    namespace = "system" if system else "function"
    existing = temporary_row(session.pk, namespace, *parts)
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
            return message(f"{label} already exists; nothing was created.")
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
    return message(f"{'Replaced' if replaced else 'Created'} {label}{_shadow_note(row)}.")


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
        if temporary_row(job.session_id, "system", "", "", parts[2]) is not None:
            return (
                f" (a temporary system function is named {quote_path([parts[2]])}; "
                "DROP TEMPORARY SYSTEM FUNCTION drops it)"
            )
        return ""
    table = _permanent_relation(*parts)
    if table is not None:
        return f" (a permanent {table.kind} has that name; DROP {table.kind.upper()} drops it)"
    return ""


def drop_temporary(kind: str) -> Callable[[Job, Mapping[str, Any]], tuple[Columns, Rows]]:
    def drop(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
        session = locked_session(job)
        system = False
        if kind == TemporaryObject.KIND_FUNCTION:
            system, parts = _function_identity(args)
            namespace = "system" if system else "function"
        else:
            c, d, n = identifier_parts(args, 3)
            parts, namespace = (c, d, n), "relation"
        found = temporary_row(session.pk, namespace, *parts)
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


def show_temporary(kind: str) -> Callable[[Job, Mapping[str, Any]], tuple[Columns, Rows]]:
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
        columns = string_columns("catalog", "database", "name")
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
