"""Writes to the catalog. Views call exactly one of these; each validates fully before
it writes anything, runs in one transaction, and touches the file system only after commit.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import IntegrityError, models, transaction

from audit import models as audit_models
from audit.services import record
from catalog import access, analysis, bodies, grants, storage, versions
from catalog.models import Catalog, Column, ColumnName, Database, Function, Table
from core import locations, storable
from core import options as table_options
from core.datatypes import DataType, parse_data_type
from core.errors import AlreadyExists, CoreError, NotEmpty, PermissionDenied
from core.identifiers import quote_path, validate_name
from core.limits import StatementLimits, check_statement
from core.privileges import Decision, Privilege, Securable
from core.properties import RESERVED_PREFIXES, decode_table
from core.schema import ExpressionTyper, PhysicalColumn, ResolvedSchema, Schema, SchemaResolver

log = logging.getLogger(__name__)

User = AbstractBaseUser | AnonymousUser

FILE_FORMATS = ("parquet", "csv", "json", "orc", "text")
_PYTHON_DOTTED_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$")


# --- permissions (issue 18: catalog.access decides, catalog.grants answers hidden as missing)


def may_create_catalogs(user: User) -> bool:
    """Whether ``user`` may create catalogs: every signed-in user, or only admins when
    ``TESSERA_CATALOG_CREATORS = admins``."""
    if str(getattr(settings, "TESSERA_CATALOG_CREATORS", "everyone")).lower() == "admins":
        return access.access_for(user).admin
    return True


def _require(user: User, row: Catalog | Database | Table | Function, needed: Privilege) -> None:
    """Allow, or refuse as ``catalog.access.require`` does: an object ``user`` may not see
    answers as missing, one they may see without ``needed`` is ``PERMISSION_DENIED``."""
    grants.require(user, grants.securable_of(row), needed)


def require_read_files(user: User, options: Mapping[str, Any]) -> None:
    """An external table's ``path`` (``options`` checked by ``check_options``) needs
    ``READ FILES`` on the storage root it lies under (``TESSERA_READ_FILES_FOR``)."""
    path = options.get("path")
    if path is not None:
        grants.require_read_files(user, str(path))


def may_write_table(user: User, table: Table) -> bool:
    """Whether ``user`` may write rows into ``table`` (INSERT INTO, INSERT OVERWRITE,
    upserts, statement-set targets, ANALYZE TABLE): ``MODIFY`` on it (owners of it or of a
    parent and admins hold it; grants on it, its database or its catalog give it)."""
    s = access.relation_securable(table)
    return access.decide(access.access_for(user), s, Privilege.MODIFY) is Decision.ALLOWED


def ensure_can_write_table(user: User, table: Table) -> None:
    """Refuse a write into ``table`` by someone without ``MODIFY`` on it: hidden answers as
    missing, else ``PERMISSION_DENIED`` naming the table and the privilege."""
    grants.require(user, access.relation_securable(table), Privilege.MODIFY)


def _record_drop(user: User, s: Securable, **detail: Any) -> None:
    record(
        audit_models.DROP,
        actor=_user_or_none(user),
        object_kind=s.kind.value,
        path=list(s.path),
        securable_key=s.key,
        detail=detail,
    )


def _check_owner(user: User, row: Catalog | Database | Table | Function, owner: Any) -> None:
    """Before anything changes: ``owner`` names a user and ``user`` may hand ``row`` over."""
    if owner is not None:
        grants.check_transfer(user=user, row=row, new_owner=owner)


def _user_or_none(user: User) -> Any:
    return user if getattr(user, "is_authenticated", False) else None


# --- input checks shared by the services ------------------------------------------------------


def _check_string_map(value: Mapping[str, Any], field: str) -> dict[str, str]:
    result: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(key, str) or not key.strip():
            raise CoreError(
                f"Keys of '{field}' must be non-empty strings.", details={"field": field}
            )
        if not isinstance(item, str):
            raise CoreError(
                f"The value of '{field}.{key}' must be a string, e.g. \"{item}\".",
                details={"field": f"{field}.{key}"},
            )
        result[key] = item
    return result


def check_options(options: Mapping[str, Any], *, tree: bool = True) -> dict[str, str]:
    """Table options: managed ({"format"}) or external ({"connector", "path"}), checked and
    normalised (for permanent and temporary tables alike); every other option must be on
    the format's allow-list (``core.options``), and the path strictly below a storage root.

    ``tree``: look for symbolic links leading out anywhere in the path's directory tree
    (creation, PATCH); a use that only needs the path itself (a write's staging, the commit)
    passes False and follows the path's own links only. Overlaps with other tables are
    checked by ``check_path_free``, where the row is saved."""
    checked = _check_string_map(options, "options")
    for key in checked:
        if key.startswith(RESERVED_PREFIXES):
            raise CoreError(
                f"The option '{key}' uses a prefix reserved for the schema encoding "
                f"({', '.join(RESERVED_PREFIXES)}).",
                details={"field": f"options.{key}"},
            )
    source, rest = table_options.split_source(checked)
    for key in rest:  # fs.*, spark.*, unknown keys: refused before anything else
        table_options.check_key(key)
    connector, path = source.get("connector"), source.get("path")
    if connector is None and path is None:
        fmt = source.get("format", "parquet").lower()
        if fmt not in FILE_FORMATS:
            raise CoreError(
                f"Unknown format '{source['format']}'. Supported: {', '.join(FILE_FORMATS)}.",
                details={"field": "options.format"},
            )
        own = table_options.tessera_options(source, managed=True)
        return {"format": fmt, **own, **table_options.check_options(fmt, rest)}
    table_options.tessera_options(source, managed=False)  # refuses write.mode
    if connector is None or path is None:
        missing = "connector" if connector is None else "path"
        raise CoreError(
            f"An external table needs both 'connector' and 'path'; '{missing}' is missing.",
            details={"field": f"options.{missing}"},
        )
    if connector.lower() not in FILE_FORMATS:
        raise CoreError(
            f"Unknown connector '{connector}'. Supported: {', '.join(FILE_FORMATS)}.",
            details={"field": "options.connector"},
        )
    if "format" in source and source["format"].lower() != connector.lower():
        raise CoreError(
            "An external table's format is its 'connector'; drop the 'format' option.",
            details={"field": "options.format"},
        )
    fmt = connector.lower()
    result = {"connector": fmt, "path": storage.normalize_external_path(path, tree=tree)}
    if "format" in source:
        result["format"] = source["format"]
    return {**result, **table_options.check_options(fmt, rest)}


def check_write_mode(options: Mapping[str, str], schema: ResolvedSchema | None) -> None:
    """``'write.mode' = 'upsert'`` needs a primary key: upserts replace rows by key."""
    if options.get(table_options.WRITE_MODE) != "upsert":
        return
    if schema is None or schema.primary_key is None:
        raise CoreError(
            f"The option '{table_options.WRITE_MODE}' = 'upsert' needs a table with a primary "
            "key (PRIMARY KEY (…) NOT ENFORCED): an upsert replaces and deletes rows by key.",
            details={"field": f"options.{table_options.WRITE_MODE}"},
        )


def check_path_free(
    options: Mapping[str, str], *, exclude: models.Q | None = None, user: Any = None
) -> None:
    """An external table's path (``options`` as ``check_options`` returns them) must not
    equal, hold or lie inside another table's path (``exclude``: the table itself, on
    PATCH). Call it in the transaction that saves the row: it takes the lock that keeps
    two overlapping tables from being saved at the same moment. The other table is named
    only to a ``user`` who may see it."""
    path = options.get("path")
    if path is None:
        return
    storage.lock_table_paths()
    storage.check_no_overlap(path, path, exclude=exclude, user=user)


def check_temporary_path(
    options: Mapping[str, str],
    siblings: Sequence[tuple[str, Mapping[str, Any]]],
    *,
    user: Any = None,
) -> None:
    """A temporary table's path (``options`` checked by ``check_options``) must not equal,
    hold or lie inside a permanent table's path, the warehouse, or the path of another
    temporary table of its session (``siblings``: each one's quoted name and options). A
    temporary table is its session user's; its files must not be another table's — except
    that it may read exactly a permanent table's path when ``user`` may SELECT from that
    table (it cannot be written: INSERT into temporary tables is refused at planning).

    Other sessions' temporary tables are not looked at: they are private to their session
    and cannot be written (INSERT into temporary tables is not supported), and letting them
    block a path would let anyone hold any directory without a trace in the catalog.
    A permanent table in the way is named only to a ``user`` who may see it."""
    path = options.get("path")
    if path is None:
        return
    storage.check_no_overlap(path, path, user=user, reader=user)
    mine = {path, os.path.realpath(path)}
    for shown, other_options in siblings:
        raw = next((v for k, v in other_options.items() if str(k).lower() == "path"), "")
        other = locations.comparable(str(raw))
        if not other:
            continue
        for candidate in sorted(mine):
            for theirs in (other, os.path.realpath(other)):
                how = locations.overlap(candidate, theirs)
                if how is not None:
                    raise locations.PathOverlap(
                        locations.overlap_message(
                            path, how, theirs, f"the temporary table {shown}"
                        ),
                        details={"field": "options.path", "path": path},
                    )


def check_partitioning(partition_by: Sequence[Any], resolved: ResolvedSchema) -> list[str]:
    names: list[str] = []
    seen: set[str] = set()
    for index, name in enumerate(partition_by):
        field = f"partition_by[{index}]"
        if not isinstance(name, str):
            raise CoreError("Partition columns must be column names.", details={"field": field})
        column = resolved.column(name)
        if column is None:
            available = ", ".join(c.name for c in resolved.columns) or "none"
            raise CoreError(
                f"Partition column `{name}` does not exist. Available columns: {available}.",
                details={"field": field, "column": name},
            )
        if column.kind != "physical":
            raise CoreError(
                f"Partition column `{name}` must be a physical column, not a {column.kind} column.",
                details={"field": field, "column": name},
            )
        if column.name.lower() in seen:
            raise CoreError(f"Partition column `{name}` is listed twice.", details={"field": field})
        if column.data_type is not None and column.data_type.family in {"ARRAY", "MAP", "STRUCT"}:
            raise CoreError(
                f"Partition column `{name}` has type {column.data_type.type_sql()}; Spark "
                "partitions only by atomic types.",
                details={"field": field, "column": name},
            )
        seen.add(column.name.lower())
        names.append(column.name)
    return names


def resolve_schema(schema: Schema, typer: ExpressionTyper | None = None) -> ResolvedSchema:
    """Validate a declared schema. With a typer (Spark's analyzer, on a worker) computed
    columns and watermark expressions get their real types; without one they stay unknown.

    The resolver names fields within the schema (``columns[2].name``); requests carry the
    schema under ``schema``, so the path is prefixed, as for shape errors in the views.
    """
    try:
        return SchemaResolver(typer).resolve(schema)
    except CoreError as exc:
        inner = exc.details.get("field")
        exc.details = {**exc.details, "field": f"schema.{inner}" if inner else "schema"}
        raise


def _replace_columns(table: Table, resolved: ResolvedSchema | None) -> None:
    Column.objects.filter(table=table).delete()
    if resolved is None:
        return
    Column.objects.bulk_create(
        Column(
            table=table,
            position=index,
            name=column.name,
            name_key=column.name.lower(),
            kind=column.kind,
            data_type=column.data_type.sql() if column.data_type is not None else None,
        )
        for index, column in enumerate(resolved.columns)
    )
    ColumnName.objects.bulk_create(
        [ColumnName(name_key=key) for key in {c.name.lower() for c in resolved.columns}],
        ignore_conflicts=True,
    )


def _check_expression_sizes(schema: Schema) -> None:
    """Each expression Spark's analyzer is to parse is held to the statement limits (as the
    same expression in SQL's CREATE TABLE would be): a huge one is refused at once."""
    limits = StatementLimits.from_settings(settings)
    for index, column in enumerate(schema.columns):
        expression = getattr(column, "expression", None)
        if isinstance(expression, str):
            check_statement(
                expression,
                limits,
                what=f"expression of column `{column.name}`",
                field=f"schema.columns[{index}].expression",
            )
    for index, watermark in enumerate(schema.watermarks):
        check_statement(
            watermark.expression,
            limits,
            what=f"watermark expression of column `{watermark.column}`",
            field=f"schema.watermarks[{index}].expression",
        )


def resolve_checked(schema: Schema) -> ResolvedSchema:
    """Resolve a declared table schema completely before anything is stored (FLIP-164);
    REST and the form come here, the SQL DDL path types with its worker's Spark instead.

    A schema with computed columns or watermarks is sent to a worker's Spark analyzer and
    waited for (``catalog.analysis``): a refusal is a ``VALIDATION_ERROR`` naming the field
    and the column, no answer in time ``UNAVAILABLE``. A schema without expressions needs
    no worker. Never returns a schema with an untyped expression."""
    if not analysis.needs_analyzer(schema):
        return resolve_schema(schema)
    _check_expression_sizes(schema)
    resolved = analysis.analyzer().resolve_table_schema(schema)
    if not resolved.expressions_resolved:
        raise analysis.Unavailable(
            "Spark's analyzer did not type every expression of the schema; nothing was stored."
        )
    return resolved


M = TypeVar("M", bound=models.Model)


def _insert(row: M, already_exists: str) -> M:
    """Insert one new row in a savepoint; a concurrent insert of the same name (the unique
    constraint) becomes ALREADY_EXISTS with the caller's message instead of a 500."""
    try:
        with transaction.atomic():
            row.save()
    except IntegrityError as exc:
        raise AlreadyExists(already_exists) from exc
    return row


def _object_path(database: Database, name: str) -> str:
    return quote_path([database.catalog.name, database.name, name])


def _ensure_name_free(database: Database, name: str) -> None:
    existing = Table.objects.filter(database=database, name_key=name.lower()).first()
    if existing is not None:
        raise AlreadyExists(
            f"{existing.kind.capitalize()} {_object_path(database, existing.name)} already exists."
        )


# --- catalogs --------------------------------------------------------------------------------


def catalog_create(
    *,
    user: User,
    name: str,
    comment: str = "",
    properties: Mapping[str, Any] | None = None,
    default_database: str = "default",
) -> Catalog:
    """Create a catalog together with its default database, both owned by ``user``. Who may
    create catalogs is ``TESSERA_CATALOG_CREATORS`` (``may_create_catalogs``); a new catalog
    is private to its owner until they grant something on it."""
    if not may_create_catalogs(user):
        raise PermissionDenied(
            "Only admins may create catalogs on this server (TESSERA_CATALOG_CREATORS = admins).",
            details={"kind": "catalog", "privilege": "CREATE"},
        )
    validate_name(name, "catalog name")
    validate_name(default_database, "database name")
    props = _check_string_map(properties or {}, "properties")
    if Catalog.objects.filter(name_key=name.lower()).exists():
        raise AlreadyExists(f"A catalog with name [{name}] already exists.")
    owner = _user_or_none(user)
    try:
        with transaction.atomic():
            catalog = Catalog(
                name=name,
                comment=comment,
                properties=props,
                default_database=default_database,
                owner=owner,
            )
            catalog.save()
            Database(catalog=catalog, name=default_database, owner=owner).save()
    except IntegrityError as exc:
        raise AlreadyExists(f"A catalog with name [{name}] already exists.") from exc
    return catalog


@bodies.audits_refusals
def catalog_update(
    *,
    user: User,
    catalog: Catalog,
    comment: str | None = None,
    properties: Mapping[str, Any] | None = None,
    default_database: str | None = None,
    owner: str | None = None,
) -> Catalog:
    """Change a catalog (``MANAGE``); ``owner`` hands it to another user (its owner or an
    admin, ``grants.transfer_owner``)."""
    if owner is None or any(v is not None for v in (comment, properties, default_database)):
        _require(user, catalog, Privilege.MANAGE)
    _check_owner(user, catalog, owner)
    if properties is not None:
        catalog.properties = _check_string_map(properties, "properties")
    if comment is not None:
        catalog.comment = comment
    if default_database is not None:
        database = catalog.databases.filter(name_key=default_database.lower()).first()
        if database is None:
            raise CoreError(
                f"Database {quote_path([catalog.name, default_database])} does not exist; "
                "create it before making it the default.",
                details={"field": "default_database"},
            )
        catalog.default_database = database.name
    with transaction.atomic():
        catalog.save()
        if owner is not None:
            grants.transfer_owner(user=user, row=catalog, new_owner=owner)
    return catalog


def _managed_locations(tables: Any) -> list[str]:
    """Every directory of these tables' data: current locations and kept versions."""
    return versions.locations_of(tables)


def _delete_locations_on_commit(locations: list[str]) -> None:
    def cleanup() -> None:
        for location in locations:
            storage.delete_location(location)

    if locations:
        transaction.on_commit(cleanup)


def catalog_delete(*, user: User, catalog: Catalog, cascade: bool = False) -> None:
    """Drop a catalog (``MANAGE``). Without ``cascade`` it must hold nothing but an empty
    default database. Audited (``drop``) in the drop's transaction."""
    _require(user, catalog, Privilege.MANAGE)
    securable = access.catalog_securable(catalog)
    with transaction.atomic():
        tables = Table.objects.filter(database__catalog=catalog)
        if not cascade:
            others = catalog.databases.exclude(name_key=catalog.default_database.lower())
            if (
                others.exists()
                or tables.exists()
                or Function.objects.filter(database__catalog=catalog).exists()
            ):
                raise NotEmpty(
                    f"Catalog [{catalog.name}] is not empty; drop it with cascade=true to drop "
                    "its databases, tables, views and functions too."
                )
        locations = _managed_locations(tables)
        catalog.delete()
        _record_drop(user, securable, cascade=cascade)
        _delete_locations_on_commit(locations)


# --- databases -------------------------------------------------------------------------------


def database_create(
    *,
    user: User,
    catalog: Catalog,
    name: str,
    comment: str = "",
    properties: Mapping[str, Any] | None = None,
) -> Database:
    _require(user, catalog, Privilege.CREATE)
    validate_name(name, "database name")
    props = _check_string_map(properties or {}, "properties")
    path = quote_path([catalog.name, name])
    if catalog.databases.filter(name_key=name.lower()).exists():
        raise AlreadyExists(f"Database {path} already exists.")
    database = Database(
        catalog=catalog,
        name=name,
        comment=comment,
        properties=props,
        owner=_user_or_none(user),
    )
    return _insert(database, f"Database {path} already exists.")


@bodies.audits_refusals
def database_update(
    *,
    user: User,
    database: Database,
    comment: str | None = None,
    properties: Mapping[str, Any] | None = None,
    owner: str | None = None,
) -> Database:
    """Change a database (``MANAGE``); ``owner`` hands it to another user."""
    if owner is None or any(v is not None for v in (comment, properties)):
        _require(user, database, Privilege.MANAGE)
    _check_owner(user, database, owner)
    if properties is not None:
        database.properties = _check_string_map(properties, "properties")
    if comment is not None:
        database.comment = comment
    with transaction.atomic():
        database.save()
        if owner is not None:
            grants.transfer_owner(user=user, row=database, new_owner=owner)
    return database


def database_delete(*, user: User, database: Database, cascade: bool = False) -> None:
    path = quote_path([database.catalog.name, database.name])
    _require(user, database, Privilege.MANAGE)
    securable = access.database_securable(database)
    if database.name_key == database.catalog.default_database.lower():
        raise CoreError(
            f"Database {path} is the default database of catalog [{database.catalog.name}]; "
            "make another database the default first, or drop the catalog."
        )
    with transaction.atomic():
        tables = Table.objects.filter(database=database)
        if not cascade and (tables.exists() or database.functions.exists()):
            raise NotEmpty(
                f"Database {path} is not empty; drop it with cascade=true to drop its tables, "
                "views and functions too."
            )
        locations = _managed_locations(tables)
        database.delete()
        _record_drop(user, securable, cascade=cascade)
        _delete_locations_on_commit(locations)


# --- tables ----------------------------------------------------------------------------------


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
            if location:
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
        if schema is not None:
            table.schema = schema.to_dict()
            table.resolved_schema = resolved.to_dict()
            _replace_columns(table, resolved)
        table.partition_by = partitions
        table.save()
        if owner is not None:
            grants.transfer_owner(user=user, row=table, new_owner=owner)
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


# --- views -----------------------------------------------------------------------------------


def _check_declared_view_schema(schema: Schema) -> None:
    for index, column in enumerate(schema.columns):
        if not isinstance(column, PhysicalColumn):
            raise CoreError(
                f"View column `{column.name}` must be a plain column with a data type.",
                details={"field": f"schema.columns[{index}]", "column": column.name},
            )
    resolve_schema(schema)  # names, types, no duplicates


def view_schema(declared: Schema | None, derived: Schema) -> Schema:
    """A view's schema: the one Spark's analyzer ``derived`` from its query, or the one the
    caller ``declared`` when it matches it column for column (same count, same types; the
    declared names and comments win). Never a schema Spark did not see."""
    if declared is None or not declared.columns:
        return derived
    _check_declared_view_schema(declared)
    if len(declared.columns) != len(derived.columns):
        names = ", ".join(f"`{c.name}`" for c in derived.columns) or "none"
        raise CoreError(
            f"The view declares {len(declared.columns)} columns but its query gives "
            f"{len(derived.columns)} ({names}).",
            details={"field": "schema.columns"},
        )
    for index, (mine, spark) in enumerate(zip(declared.columns, derived.columns, strict=True)):
        assert isinstance(mine, PhysicalColumn) and isinstance(spark, PhysicalColumn)
        if mine.data_type.type_sql() != spark.data_type.type_sql():
            raise CoreError(
                f"View column `{mine.name}` is declared {mine.data_type.type_sql()}, but the "
                f"query gives {spark.data_type.type_sql()} (column `{spark.name}`).",
                details={"field": f"schema.columns[{index}].data_type", "column": mine.name},
            )
    return declared


def _check_query(query: str) -> str:
    if not query.strip():
        raise CoreError("A view needs a query.", details={"field": "query"})
    # The query is planned with every statement that reads the view: the statement limits
    # hold for it as for SQL's CREATE VIEW (docs/security.md §4).
    limits = StatementLimits.from_settings(settings)
    check_statement(query, limits, what="view query", field="query")
    return query


def _derive_view_schema(database: Database, name: str, query: str, user: User) -> Schema:
    """Spark's analyzer on a worker derives the query's schema (``catalog.analysis``); the
    query is read in the view's catalog and database, as it is whenever the view is read,
    and planned with ``user``'s rights (what they may not read, no view of theirs reads)."""
    try:
        return analysis.analyzer().derive_view_schema(
            database.catalog.name, database.name, query, user=user
        )
    except CoreError as exc:
        if exc.code == "VALIDATION_ERROR" and "field" not in exc.details:
            exc.details = {**exc.details, "field": "query"}
        bodies.tag(exc, bodies.BODY, "view", [database.catalog.name, database.name, name])
        raise


def view_schema_json(schema: Schema) -> tuple[dict[str, Any], dict[str, Any]]:
    """A view's schema as stored: declared (``schema``) and resolved (``resolved_schema``)."""
    return schema.to_dict(), resolve_schema(schema).to_dict()


def _store_view_schema(view: Table, schema: Schema) -> None:
    view.schema, view.resolved_schema = view_schema_json(schema)


@bodies.audits_refusals
def view_create(
    *,
    user: User,
    database: Database,
    name: str,
    query: str,
    schema: Schema | None = None,
    comment: str = "",
    expanded_query: str | None = None,
    derived: Schema | None = None,
) -> Table:
    """Create a view with a resolved schema. ``derived``: the schema Spark derived for the
    query (SQL's CREATE VIEW, on a worker); without it (REST) a worker's Spark derives it
    now, before anything is stored. ``schema``: one the caller declares, which must match
    the derived one (``view_schema``). ``expanded_query`` is the query with fully qualified
    names. Needs ``CREATE`` on the database; ``user`` owns the view, which reads with its
    owner's rights."""
    _require(user, database, Privilege.CREATE)
    validate_name(name, "view name")
    _check_query(query)
    if schema is not None and schema.columns:
        _check_declared_view_schema(schema)
    _ensure_name_free(database, name)
    if derived is None:
        derived = _derive_view_schema(database, name, query, user)
    final = view_schema(schema, derived)
    view = Table(
        database=database,
        name=name,
        kind=Table.KIND_VIEW,
        comment=comment,
        query=query,
        expanded_query=expanded_query,
        created_by=_user_or_none(user),
        owner=_user_or_none(user),
    )
    _store_view_schema(view, final)
    try:
        with transaction.atomic():
            view.save()
            _replace_columns(view, ResolvedSchema.from_dict(view.resolved_schema))
    except IntegrityError:
        _ensure_name_free(database, name)
        raise
    return view


@bodies.audits_refusals
def view_update(
    *,
    user: User,
    view: Table,
    comment: str | None = None,
    query: str | None = None,
    schema: Schema | None = None,
    owner: str | None = None,
) -> Table:
    """Change a view (``MANAGE``). A new query or schema is checked by Spark's analyzer on a
    worker (the query derived again) before anything is stored; a comment alone needs no
    worker. ``owner`` hands it to another user: the view then reads with their rights."""
    if owner is None or any(v is not None for v in (comment, query, schema)):
        _require(user, view, Privilege.MANAGE)
    _check_owner(user, view, owner)
    if query is not None:
        _check_query(query)
    if schema is not None and schema.columns:
        _check_declared_view_schema(schema)
    final: Schema | None = None
    if query is not None or schema is not None:
        derived = _derive_view_schema(
            view.database, view.name, query if query is not None else view.query, user
        )
        final = view_schema(schema, derived)
    with transaction.atomic():
        if comment is not None:
            view.comment = comment
        if query is not None:
            view.query = query
            view.expanded_query = None
        if final is not None:
            _store_view_schema(view, final)
            _replace_columns(view, ResolvedSchema.from_dict(view.resolved_schema))
        view.save()
        if owner is not None:
            grants.transfer_owner(user=user, row=view, new_owner=owner)
    return view


# --- functions -------------------------------------------------------------------------------


def _parse_type(text: Any, field: str) -> DataType:
    if not isinstance(text, str):
        raise CoreError(f"'{field}' must be a data type such as INT.", details={"field": field})
    try:
        return parse_data_type(text)
    except CoreError as exc:
        exc.details = {**exc.details, "field": field}
        raise


def _check_function(
    language: str, implementation: str, parameters: Sequence[Any], return_type: str
) -> tuple[list[dict[str, str]], str]:
    if language == Function.LANGUAGE_PYTHON:
        if not _PYTHON_DOTTED_NAME.match(implementation.strip()):
            raise CoreError(
                f"A Python function is named by its dotted path, like 'package.module.func'; "
                f"got '{implementation}'.",
                details={"field": "implementation"},
            )
    elif language == Function.LANGUAGE_SQL:
        if not implementation.strip():
            raise CoreError(
                "A SQL function needs a body expression.", details={"field": "implementation"}
            )
        if not return_type:
            raise CoreError("A SQL function needs a return type.", details={"field": "return_type"})
    else:
        raise CoreError(
            f"Unknown function language '{language}'. Supported: python, sql.",
            details={"field": "language"},
        )
    checked: list[dict[str, str]] = []
    seen: set[str] = set()
    for index, param in enumerate(parameters):
        field = f"parameters[{index}]"
        if not isinstance(param, dict) or not isinstance(param.get("name"), str):
            raise CoreError('Each parameter is {"name", "data_type"}.', details={"field": field})
        pname = validate_name(param["name"], "parameter name")
        if pname.lower() in seen:
            raise CoreError(f"Parameter `{pname}` is declared twice.", details={"field": field})
        seen.add(pname.lower())
        ptype = _parse_type(param.get("data_type"), f"{field}.data_type")
        checked.append({"name": pname, "data_type": ptype.sql()})
    returns = _parse_type(return_type, "return_type").sql() if return_type else ""
    return checked, returns


@bodies.audits_refusals
def function_create(
    *,
    user: User,
    database: Database,
    name: str,
    language: str,
    implementation: str,
    parameters: Sequence[Any] = (),
    return_type: str = "",
    comment: str = "",
) -> Function:
    """Create a function (``CREATE`` on the database); ``user`` owns it."""
    _require(user, database, Privilege.CREATE)
    validate_name(name, "function name")
    params, returns = _check_function(language, implementation, parameters, return_type)
    path = _object_path(database, name)
    if database.functions.filter(name_key=name.lower()).exists():
        raise AlreadyExists(f"Function {path} already exists.")
    if language == Function.LANGUAGE_SQL:
        # The body will run with its owner's rights: it may call only what its creator may.
        bodies.check_function_body(user, database, name, implementation)
    function = Function(
        database=database,
        name=name,
        language=language,
        implementation=implementation.strip() if language == "python" else implementation,
        parameters=params,
        return_type=returns,
        comment=comment,
        created_by=_user_or_none(user),
        owner=_user_or_none(user),
    )
    return _insert(function, f"Function {path} already exists.")


@bodies.audits_refusals
def function_update(
    *,
    user: User,
    function: Function,
    comment: str | None = None,
    implementation: str | None = None,
    parameters: Sequence[Any] | None = None,
    return_type: str | None = None,
    owner: str | None = None,
) -> Function:
    """Change a function (``MANAGE``); ``owner`` hands it to another user."""
    changes = (comment, implementation, parameters, return_type)
    if owner is None or any(v is not None for v in changes):
        _require(user, function, Privilege.MANAGE)
    _check_owner(user, function, owner)
    params, returns = _check_function(
        function.language,
        implementation if implementation is not None else function.implementation,
        parameters if parameters is not None else function.parameters,
        return_type if return_type is not None else function.return_type,
    )
    if implementation is not None and function.language == Function.LANGUAGE_SQL:
        # Whoever changes the body is judged, whoever owns it: it runs with the owner's rights.
        bodies.check_function_body(user, function.database, function.name, implementation)
    if implementation is not None:
        # As on create: a Python function's dotted name is kept without surrounding space.
        python = function.language == Function.LANGUAGE_PYTHON
        function.implementation = implementation.strip() if python else implementation
    function.parameters, function.return_type = params, returns
    if comment is not None:
        function.comment = comment
    with transaction.atomic():
        function.save()
        if owner is not None:
            grants.transfer_owner(user=user, row=function, new_owner=owner)
    return function


def function_delete(*, user: User, function: Function) -> None:
    """Drop a function (``MANAGE``), audited (``drop``) in the drop's transaction."""
    _require(user, function, Privilege.MANAGE)
    securable = access.function_securable(function)
    with transaction.atomic():
        function.delete()
        _record_drop(user, securable)


# --- CTAS tables (FLIP-218 stage tables; tabledata.hooks calls these in the job's transaction)


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


# --- statistics (ANALYZE TABLE … COMPUTE STATISTICS) -----------------------------------------


def table_store_statistics(
    *, user: User, table: Table, mode: str, figures: Mapping[str, Any]
) -> dict[str, Any]:
    """Store what ``ANALYZE TABLE`` computed on ``table`` (``column_statistics``), as its
    user may: ``MODIFY`` on the table.

    ``mode`` ``noscan`` refreshes ``files``, ``size_bytes`` and ``size_computed_at`` and
    keeps the scan's figures; ``table`` and ``columns`` replace everything (a scan's
    ``row_count`` and ``columns`` belong to its ``computed_at``). Only this field is
    written: the schema, the data and ``updated_at`` (which dates the table's commits)
    stay as they are."""
    path = _object_path(table.database, table.name)
    if table.kind != Table.KIND_TABLE or table.status != Table.STATUS_ACTIVE:
        raise CoreError(f"{path} is not an active table: its statistics cannot be stored.")
    ensure_can_write_table(user, table)
    size = {
        "files": int(figures["files"]),
        "size_bytes": int(figures["size_bytes"]),
        "size_computed_at": str(figures["size_computed_at"]),
    }
    if mode == "noscan":
        previous = table.column_statistics or {}
        stored = {
            "computed_at": previous.get("computed_at"),
            "row_count": previous.get("row_count"),
            "columns": list(previous.get("columns") or []),
            **size,
        }
    elif mode in ("table", "columns"):
        stored = {
            "computed_at": str(figures["computed_at"]),
            "row_count": int(figures["row_count"]),
            # A string column's min and max are its data: a NUL in them cannot be stored.
            "columns": storable.scrubbed([dict(c) for c in figures.get("columns") or []]),
            **size,
        }
    else:
        raise CoreError(f"Unknown ANALYZE TABLE mode '{mode}'.")
    Table.objects.filter(pk=table.pk).update(column_statistics=stored)
    table.column_statistics = stored
    return stored
