"""The input checks the services share: table options and their paths (``check_options``,
``check_path_free``, ``check_temporary_path``, ``require_read_files``), the write mode,
partitioning, and the resolution of a declared schema (``resolve_schema``,
``resolve_checked``)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from django.conf import settings
from django.db import models

from catalog import analysis, storage
from catalog.grants import securables
from catalog.services._common import User, _check_string_map
from core import locations
from core import options as table_options
from core.errors import CoreError
from core.limits import StatementLimits, check_statement
from core.properties import RESERVED_PREFIXES
from core.schema import ExpressionTyper, ResolvedSchema, Schema, SchemaResolver

FILE_FORMATS = ("parquet", "csv", "json", "orc", "text")
# External tables may also be Delta tables, read-only (core.options.DELTA).
CONNECTORS = (*FILE_FORMATS, table_options.DELTA)


def require_read_files(user: User, options: Mapping[str, Any]) -> None:
    """An external table's ``path`` (``options`` checked by ``check_options``) needs
    ``READ FILES`` on the storage root it lies under (``TESSERA_READ_FILES_FOR``)."""
    path = options.get("path")
    if path is not None:
        securables.require_read_files(user, str(path))


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
        if fmt not in table_options.MANAGED_FORMATS:
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
    if connector.lower() not in CONNECTORS:
        raise CoreError(
            f"Unknown connector '{connector}'. Supported: {', '.join(CONNECTORS)}.",
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
