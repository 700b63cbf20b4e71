"""Tables: who may write rows into one, create (from a declared schema or the FLIP-164
properties), change, drop (a view is dropped here too)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.db import IntegrityError, models, transaction

from audit import models as audit_models
from catalog import access, bodies, storage, versions
from catalog.grants import ownership, securables
from catalog.models import Database, Table
from catalog.services._common import (
    User,
    _check_owner,
    _check_string_map,
    _delete_locations_on_commit,
    _ensure_name_free,
    _record_change,
    _record_drop,
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
    resolve_checked,
    resolve_schema,
)
from core.errors import CoreError
from core.identifiers import validate_name
from core.planner.alter_changes import apply_change
from core.privileges import Decision, Privilege
from core.properties import decode_table
from core.schema import ExpressionTyper, ResolvedSchema, Schema


def may_write_table(user: User, table: Table) -> bool:
    """Whether ``user`` may write rows into ``table`` (INSERT INTO, INSERT OVERWRITE,
    upserts, statement-set targets, ANALYZE TABLE): ``MODIFY`` on it (owners of it or of a
    parent and admins hold it; grants on it, its database or its catalog give it)."""
    s = access.relation_securable(table)
    return access.decide(access.access_for(user), s, Privilege.MODIFY) is Decision.ALLOWED


def ensure_can_write_table(user: User, table: Table) -> None:
    """Refuse a write into ``table`` by someone without ``MODIFY`` on it: hidden answers as
    missing, else ``PERMISSION_DENIED`` naming the table and the privilege."""
    securables.require(user, access.relation_securable(table), Privilege.MODIFY)


def table_create(
    *,
    user: User,
    database: Database,
    name: str,
    schema: Schema,
    options: Mapping[str, Any] | None = None,
    partition_by: Sequence[Any] = (),
    comment: str = "",
    status: str = Table.STATUS_ACTIVE,
    typer: ExpressionTyper | None = None,
) -> Table:
    """Create a table from a declared schema (``CREATE`` on the database; an external
    table's path ``READ FILES`` on its storage root); managed tables get a warehouse
    directory. ``user`` owns it."""
    _require(user, database, Privilege.CREATE)
    validate_name(name, "table name")
    declared = resolve_schema(schema, typer)  # the shape, at once; expressions below
    if not declared.columns:
        raise CoreError("A table needs at least one column.", details={"field": "schema.columns"})
    checked_options = check_options(options or {})
    require_read_files(user, checked_options)
    check_write_mode(checked_options, declared)
    partitions = check_partitioning(partition_by, declared)
    _ensure_name_free(database, name)
    # Last before the write: a worker's Spark types the expressions (or refuses them).
    resolved = declared if typer is not None else resolve_checked(schema)
    managed = "connector" not in checked_options
    location = (
        str(storage.warehouse_location(database.catalog.name, database.name, name))
        if managed
        else ""
    )
    try:
        with transaction.atomic():
            check_path_free(checked_options, user=user)
            table = Table(
                database=database,
                name=name,
                kind=Table.KIND_TABLE,
                comment=comment,
                options=checked_options,
                schema=schema.to_dict(),
                resolved_schema=resolved.to_dict(),
                partition_by=partitions,
                status=status,
                location=location,
                created_by=_user_or_none(user),
                owner=_user_or_none(user),
            )
            table.save()
            _replace_columns(table, resolved)
            if status == Table.STATUS_ACTIVE:  # a CTAS's stage table is audited as its write
                _record_change(user, table, audit_models.CREATE)
            if location and not versions.is_managed_delta(table):
                # A managed Delta table's versions are its log's, recorded by the first commit.
                versions.record(
                    table,
                    location=location,
                    operation=versions.OP_CREATE,
                    user_id=table.created_by_id,
                )
                transaction.on_commit(lambda: storage.create_location(location))
    except IntegrityError:
        _ensure_name_free(database, name)
        raise
    return table


def table_create_from_properties(
    *, user: User, database: Database, name: str, properties: Mapping[str, Any], comment: str = ""
) -> Table:
    """Create a table from its FLIP-164 catalog-properties encoding."""
    _require(user, database, Privilege.CREATE)
    schema, options, partition_by = decode_table(_check_string_map(properties, "properties"))
    try:
        return table_create(
            user=user,
            database=database,
            name=name,
            schema=schema,
            options=options,
            partition_by=partition_by,
            comment=comment,
        )
    except CoreError as exc:
        # The options came in as properties: name the request's field, not ours.
        field = exc.details.get("field")
        if isinstance(field, str) and field.startswith("options."):
            exc.details = {**exc.details, "field": "properties." + field[len("options.") :]}
        raise


@bodies.audits_refusals
def table_update(
    *,
    user: User,
    table: Table,
    comment: str | None = None,
    options: Mapping[str, Any] | None = None,
    schema: Schema | None = None,
    partition_by: Sequence[Any] | None = None,
    typer: ExpressionTyper | None = None,
    owner: str | None = None,
) -> Table:
    """Change a table's metadata (``MANAGE``; a new path also ``READ FILES``). Its data
    stays where it is: managed stays managed. ``owner`` hands it to another user."""
    if owner is None or any(v is not None for v in (comment, options, schema, partition_by)):
        _require(user, table, Privilege.MANAGE)
    _check_owner(user, table, owner)
    resolved = (
        resolve_schema(schema, typer)  # the shape, at once; expressions below
        if schema is not None
        else ResolvedSchema.from_dict(table.resolved_schema or {"columns": []})
    )
    if schema is not None and not resolved.columns:
        raise CoreError("A table needs at least one column.", details={"field": "schema.columns"})
    if options is not None:
        checked = check_options(options)
        if ("connector" in checked) != (not table.managed):
            raise CoreError(
                "Options cannot turn a managed table into an external one or back, because "
                "that would move its data; create a new table instead.",
                details={"field": "options"},
            )
        require_read_files(user, checked)
        table.options = checked
    check_write_mode(table.options, resolved)
    partitions = check_partitioning(
        partition_by if partition_by is not None else table.partition_by, resolved
    )
    if schema is not None and typer is None:
        # Last before the write: a worker's Spark types the expressions (or refuses them).
        resolved = resolve_checked(schema)
    with transaction.atomic():
        if options is not None:
            check_path_free(table.options, exclude=models.Q(pk=table.pk), user=user)
        if comment is not None:
            table.comment = comment
        before = table.schema
        if schema is not None:
            table.schema = schema.to_dict()
            table.resolved_schema = resolved.to_dict()
            _replace_columns(table, resolved)
        table.partition_by = partitions
        table.save()
        if schema is not None and table.schema != before:
            _record_change(
                user, table, audit_models.ALTER, changed=["schema"], schema_before=before
            )
        if owner is not None:
            ownership.transfer_owner(user=user, row=table, new_owner=owner)
    return table


def table_delete(*, user: User, table: Table) -> None:
    """Drop a table or view (``MANAGE``). A managed table's directory goes too; external
    files stay. Audited (``drop``) in the drop's transaction."""
    _require(user, table, Privilege.MANAGE)
    securable = access.relation_securable(table)
    with transaction.atomic():
        locations = versions.locations_of([table])
        table.delete()
        _record_drop(user, securable)
        _delete_locations_on_commit(locations)


def table_maintained(*, user: Any, table: Table, operation: str, version: Any) -> None:
    """Record a Delta OPTIMIZE / VACUUM of ``table`` (inside the FINISHED transaction that
    records its Delta version, ``tabledata.delta_commit``): an ``alter`` audit event."""
    _record_change(user, table, audit_models.ALTER, changed=[operation.lower()], version=version)


def table_schema_altered(*, user: Any, table: Table, change: Mapping[str, Any]) -> None:
    """Record a Delta ALTER TABLE / COMMENT ON TABLE in the catalog (inside the FINISHED
    transaction that records its Delta version, ``tabledata.delta_commit``): the declared
    and resolved schemas, the column rows, the comment; an ``alter`` audit event."""
    before = table.schema
    if change.get("op") == "comment_table":
        table.comment = str(change.get("comment") or "")
    table.schema = apply_change(table.schema or {"columns": []}, change)
    if table.resolved_schema is not None:
        table.resolved_schema = apply_change(table.resolved_schema, change, resolved=True)
    table.save()
    if table.schema != before:
        _replace_columns(
            table,
            ResolvedSchema.from_dict(table.resolved_schema) if table.resolved_schema else None,
        )
    _record_change(
        user,
        table,
        audit_models.ALTER,
        changed=["schema" if table.schema != before else str(change.get("op"))],
        schema_before=before,
    )
