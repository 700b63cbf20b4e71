"""CTAS tables (FLIP-218 stage tables): the stage table a CREATE TABLE … AS SELECT job
writes into, made active or dropped at its end; ``tabledata.write_steps`` calls these in the job's
transaction."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.db import IntegrityError, transaction

from catalog.models import Database, Table
from catalog.services._common import (
    User,
    _ensure_name_free,
    _replace_columns,
    _require,
    _user_or_none,
)
from catalog.services.checks import (
    check_options,
    check_partitioning,
    check_path_free,
    check_write_mode,
    require_read_files,
    resolve_schema,
)
from core.errors import CoreError
from core.identifiers import validate_name
from core.privileges import Privilege
from core.schema import PhysicalColumn, ResolvedSchema, Schema


def ctas_schema(resolved: ResolvedSchema) -> Schema:
    """The declared schema of a CTAS table: the query's columns, all physical."""
    columns = []
    for index, column in enumerate(resolved.columns):
        if column.kind != "physical" or column.data_type is None:
            raise CoreError(
                f"Column `{column.name}` of a CREATE TABLE … AS SELECT result must be a typed "
                "physical column.",
                details={"field": f"schema.columns[{index}]"},
            )
        columns.append(PhysicalColumn(column.name, column.data_type, column.comment))
    return Schema(tuple(columns))


def ctas_table_create(
    *,
    user: User,
    database: Database,
    name: str,
    options: Mapping[str, Any],
    partition_by: Sequence[Any] = (),
    comment: str = "",
    location: str = "",
    staged_by_job: Any = None,
    schema: Schema | None = None,
    tree: bool = True,
) -> Table:
    """The catalog entry of a CTAS: a stage table (``staged_by_job`` set, status ``staged``,
    schema unknown: no columns, ``resolved_schema`` null) or, in atomic mode at commit, the
    active table with its schema. ``location`` is where the job writes (not created here).

    Runs in the caller's transaction. A taken name (also by a concurrent transaction: the
    unique constraint) raises AlreadyExists and leaves the caller's transaction usable; so
    does a path that overlaps another table's. ``tree``: see ``check_options`` (the atomic
    commit passes False: the job's staging was checked before its transaction).

    Needs ``CREATE`` on the database (and ``READ FILES`` for a path), checked again here
    whoever planned the statement; ``user`` owns the table.
    """
    _require(user, database, Privilege.CREATE)
    validate_name(name, "table name")
    checked_options = check_options(options, tree=tree)
    require_read_files(user, checked_options)
    resolved = resolve_schema(schema) if schema is not None else None
    check_write_mode(checked_options, resolved)
    if resolved is not None and not resolved.columns:
        raise CoreError("A table needs at least one column.", details={"field": "schema.columns"})
    partitions = (
        check_partitioning(partition_by, resolved)
        if resolved is not None
        else [str(name) for name in partition_by]
    )
    _ensure_name_free(database, name)
    table = Table(
        database=database,
        name=name,
        kind=Table.KIND_TABLE,
        comment=comment,
        options=checked_options,
        schema=(schema or Schema()).to_dict(),
        resolved_schema=resolved.to_dict() if resolved is not None else None,
        partition_by=partitions,
        status=Table.STATUS_ACTIVE if staged_by_job is None else Table.STATUS_STAGED,
        staged_by_job=staged_by_job,
        location=location if "connector" not in checked_options else "",
        created_by=_user_or_none(user),
        owner=_user_or_none(user),
    )
    try:
        with transaction.atomic():
            check_path_free(checked_options, user=user)
            table.save()
            _replace_columns(table, resolved)
    except IntegrityError:
        _ensure_name_free(database, name)
        raise
    return table


def ctas_table_activate(*, table: Table, schema: Schema, staged_by_job: Any = None) -> Table:
    """A stage table becomes the table: its schema (from the query), columns, ``active``.
    ``staged_by_job``: a streaming CTAS's table keeps its job's mark until its first batch
    commits (``tabledata.stream_commit``)."""
    resolved = resolve_schema(schema)
    if not resolved.columns:
        raise CoreError("A table needs at least one column.", details={"field": "schema.columns"})
    table.partition_by = check_partitioning(table.partition_by, resolved)
    table.schema = schema.to_dict()
    table.resolved_schema = resolved.to_dict()
    table.status = Table.STATUS_ACTIVE
    table.staged_by_job = staged_by_job
    with transaction.atomic():
        table.save()
        _replace_columns(table, resolved)
    return table


def ctas_table_drop(*, job_id: Any) -> Table | None:
    """Drop the stage table the CTAS job ``job_id`` created, if it is still staged; the
    dropped row (or None). Never a table this job did not create; its files are the job's
    staging, deleted by ``tabledata.commit.clean_up``."""
    with transaction.atomic():
        table = (
            Table.objects.select_for_update(of=("self",))
            .select_related("database__catalog")
            .filter(staged_by_job=job_id, status=Table.STATUS_STAGED)
            .first()
        )
        if table is not None:
            table.delete()
    return table
