"""``SchemaResolver``: validates a declared ``Schema`` into a ``ResolvedSchema`` (names,
duplicates, metadata keys, primary key, watermark), typing expressions with an
``ExpressionTyper`` when it has one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType
from typing import Protocol

from core.datatypes import AtomicType, DataType
from core.errors import IdentifierError, SchemaError
from core.identifiers import name_key, validate_name
from core.schema.declared import (
    ComputedColumn,
    MetadataColumn,
    PhysicalColumn,
    PrimaryKey,
    Schema,
    UnresolvedColumn,
    WatermarkSpec,
)
from core.schema.json_fields import _error
from core.schema.resolved import (
    ResolvedColumn,
    ResolvedPrimaryKey,
    ResolvedSchema,
    ResolvedWatermark,
)

# The file metadata a metadata column may expose (its metadata_key), with its type.
METADATA_KEYS: Mapping[str, DataType] = MappingProxyType(
    {
        "file_path": AtomicType("STRING"),
        "file_name": AtomicType("STRING"),
        "file_size": AtomicType("BIGINT"),
        "file_block_start": AtomicType("BIGINT"),
        "file_block_length": AtomicType("BIGINT"),
        "file_modification_time": AtomicType("TIMESTAMP"),
        "row_index": AtomicType("BIGINT"),
    }
)


class ExpressionTyper(Protocol):
    """Types SQL expressions, e.g. with Spark's analyzer."""

    def type_expressions(
        self, columns: Sequence[ResolvedColumn], expressions: Mapping[str, str]
    ) -> Mapping[str, DataType]:
        """Type each named expression against ``columns``; raise SchemaError if one is bad
        (``details["column"]`` its column; ``details["unresolved"]`` the name of a column it
        reads that is not among ``columns``, when that is why)."""
        ...


def _over_computed(error: SchemaError, columns: Sequence[ResolvedColumn]) -> SchemaError | None:
    """FLIP-164's refusal of a computed column that reads another computed column (or
    itself), naming both, for the typer's "cannot resolve" of that name; None otherwise.
    A computed column is computed from the physical and metadata columns of its row only:
    Flink refuses the same, and resolving chains would make the order of columns matter."""
    column = error.details.get("column")
    unresolved = error.details.get("unresolved")
    if not isinstance(column, str) or not isinstance(unresolved, str):
        return None
    computed = {name_key(c.name): c.name for c in columns if c.kind == "computed"}
    read = computed.get(name_key(unresolved))
    if read is None:
        return None
    index = next(i for i, c in enumerate(columns) if name_key(c.name) == name_key(column))
    if name_key(read) == name_key(column):
        message = f"Computed column `{column}` refers to itself."
    else:
        message = (
            f"Computed column `{column}` refers to computed column `{read}`: a computed "
            "column can only refer to physical and metadata columns (FLIP-164). Write "
            f"`{read}`'s expression in place of `{read}`."
        )
    refused = _error(message, f"columns[{index}].expression", column)
    refused.details["refers_to"] = read
    return refused


def _is_timestamp(data_type: DataType) -> bool:
    return data_type.family == "TIMESTAMP"


def _is_event_time(data_type: DataType) -> bool:
    """A watermark's column and expression: ``TIMESTAMP`` only. Flink (FLIP-164) takes
    ``TIMESTAMP(3)`` and ``TIMESTAMP_LTZ(3)``; Spark's ``withWatermark`` only ``TIMESTAMP``
    (its ``TIMESTAMP_LTZ``) and fails every streaming job over ``TIMESTAMP_NTZ`` with
    ``EVENT_TIME_IS_NOT_ON_TIMESTAMP_TYPE``, so the schema refuses it when it is stored."""
    return _is_timestamp(data_type) and data_type.type_sql() == "TIMESTAMP"


def _available(columns: Sequence[ResolvedColumn]) -> str:
    return ", ".join(column.name for column in columns) if columns else "(none)"


class SchemaResolver:
    """Validates a ``Schema`` and turns it into a ``ResolvedSchema``; the first error wins.

    Order: columns (in order), primary key, watermarks, then the expression typer (computed
    columns first, watermark expressions second).
    """

    def __init__(self, expression_typer: ExpressionTyper | None = None) -> None:
        self.expression_typer = expression_typer

    def resolve(self, schema: Schema) -> ResolvedSchema:
        """Validate ``schema`` and return its resolved form; raises SchemaError."""
        columns = self._resolve_columns(schema.columns)
        index = {name_key(column.name): i for i, column in enumerate(columns)}
        primary_key = self._resolve_primary_key(schema.primary_key, columns, index)
        watermark_columns = self._check_watermarks(schema.watermarks, columns, index)
        resolved = True

        computed = {
            c.name: c.expression
            for c in columns
            if c.kind == "computed" and c.expression is not None
        }
        if computed:
            if self.expression_typer is None:
                resolved = False
            else:
                base = [c for c in columns if c.kind != "computed"]
                try:
                    types = self.expression_typer.type_expressions(base, computed)
                except SchemaError as error:
                    over = _over_computed(error, columns)
                    error.details.pop("unresolved", None)  # the typer's hint, not the API's
                    raise over or error from None
                for i, column in enumerate(columns):
                    if column.kind == "computed":
                        data_type = types.get(column.name)
                        resolved = resolved and data_type is not None
                        columns[i] = replace(column, data_type=data_type)

        watermarks: list[ResolvedWatermark] = []
        for k, (spec, i) in enumerate(zip(schema.watermarks, watermark_columns, strict=True)):
            column = columns[i]
            # Physical and metadata column types were checked before; computed ones only now.
            if column.kind == "computed" and column.data_type is not None:
                self._check_timestamp_column(column, k)
            expression_type: DataType | None = None
            if self.expression_typer is None:
                resolved = False
            else:
                types = self.expression_typer.type_expressions(
                    columns, {column.name: spec.expression}
                )
                expression_type = types.get(column.name)
                if expression_type is None:
                    resolved = False
                elif not _is_event_time(expression_type):
                    raise _error(
                        f"The watermark expression for column `{column.name}` must be of type "
                        f"TIMESTAMP, but is {expression_type.type_sql()}.",
                        f"watermarks[{k}].expression",
                        column.name,
                    )
            watermarks.append(ResolvedWatermark(column.name, spec.expression, expression_type))

        return ResolvedSchema(tuple(columns), tuple(watermarks), primary_key, resolved)

    def _resolve_columns(self, declared: Sequence[UnresolvedColumn]) -> list[ResolvedColumn]:
        columns: list[ResolvedColumn] = []
        seen: dict[str, str] = {}
        for i, column in enumerate(declared):
            path = f"columns[{i}]"
            name = column.name
            try:
                validate_name(name, "column name")
            except IdentifierError as error:
                raise _error(error.message, f"{path}.name", name) from None
            key = name_key(name)
            if key in seen:
                first = seen[key]
                raise _error(
                    f"Column `{first}` is declared twice (as `{first}` and `{name}`).",
                    f"{path}.name",
                    name,
                )
            seen[key] = name
            if isinstance(column, PhysicalColumn):
                columns.append(
                    ResolvedColumn(name, "physical", column.data_type, comment=column.comment)
                )
            elif isinstance(column, ComputedColumn):
                if not column.expression.strip():
                    raise _error(
                        f"Computed column `{name}` needs a non-empty expression.",
                        f"{path}.expression",
                        name,
                    )
                columns.append(
                    ResolvedColumn(
                        name, "computed", None, expression=column.expression, comment=column.comment
                    )
                )
            else:
                columns.append(self._resolve_metadata_column(column, path))
        return columns

    def _resolve_metadata_column(self, column: MetadataColumn, path: str) -> ResolvedColumn:
        name = column.name
        declared_key = column.metadata_key if column.metadata_key is not None else name
        key_field = f"{path}.metadata_key" if column.metadata_key is not None else f"{path}.name"
        metadata_key = declared_key.lower()
        provided = METADATA_KEYS.get(metadata_key)
        if provided is None:
            raise _error(
                f"Unknown metadata key '{declared_key}' for column `{name}`. "
                f"Available keys: {', '.join(sorted(METADATA_KEYS))}.",
                key_field,
                name,
            )
        if column.data_type.with_nullable(True) != provided.with_nullable(True):
            raise _error(
                f"Metadata column `{name}` is declared as {column.data_type.type_sql()} "
                f"but metadata key '{metadata_key}' provides {provided.type_sql()}.",
                f"{path}.data_type",
                name,
            )
        return ResolvedColumn(
            name,
            "metadata",
            column.data_type,
            metadata_key=metadata_key,
            virtual=column.virtual,
            comment=column.comment,
        )

    def _resolve_primary_key(
        self,
        primary_key: PrimaryKey | None,
        columns: list[ResolvedColumn],
        index: Mapping[str, int],
    ) -> ResolvedPrimaryKey | None:
        if primary_key is None:
            return None
        if primary_key.name is not None:
            try:
                validate_name(primary_key.name, "primary key name")
            except IdentifierError as error:
                raise _error(error.message, "primary_key.name") from None
        if not primary_key.columns:
            raise _error("A primary key needs at least one column.", "primary_key.columns")
        chosen: list[int] = []
        for j, name in enumerate(primary_key.columns):
            field = f"primary_key.columns[{j}]"
            i = index.get(name_key(name))
            if i is None:
                raise _error(
                    f"Primary key column `{name}` does not exist. "
                    f"Available columns: {_available(columns)}.",
                    field,
                    name,
                )
            if columns[i].kind != "physical":
                raise _error(
                    f"Primary key column `{name}` is a {columns[i].kind} column, "
                    "but only physical columns can be part of a primary key.",
                    field,
                    name,
                )
            if i in chosen:
                raise _error(f"Primary key column `{name}` is listed twice.", field, name)
            chosen.append(i)
        names = tuple(columns[i].name for i in chosen)
        for i in chosen:
            data_type = columns[i].data_type
            assert data_type is not None  # physical columns always have a type
            columns[i] = replace(columns[i], data_type=data_type.with_nullable(False))
        name = primary_key.name if primary_key.name is not None else "PK_" + "_".join(names)
        return ResolvedPrimaryKey(name, names)

    def _check_watermarks(
        self,
        watermarks: Sequence[WatermarkSpec],
        columns: Sequence[ResolvedColumn],
        index: Mapping[str, int],
    ) -> list[int]:
        """Check what can be checked without typing; return each watermark's column index."""
        if len(watermarks) > 1:
            raise _error(
                f"A schema can have at most one watermark, but {len(watermarks)} are declared.",
                "watermarks",
            )
        found: list[int] = []
        for k, spec in enumerate(watermarks):
            i = index.get(name_key(spec.column))
            if i is None:
                raise _error(
                    f"Watermark column `{spec.column}` does not exist. "
                    f"Available columns: {_available(columns)}.",
                    f"watermarks[{k}].column",
                    spec.column,
                )
            if not spec.expression.strip():
                raise _error(
                    f"The watermark expression for column `{columns[i].name}` must not be empty.",
                    f"watermarks[{k}].expression",
                    columns[i].name,
                )
            if columns[i].data_type is not None:
                self._check_timestamp_column(columns[i], k)
            found.append(i)
        return found

    def _check_timestamp_column(self, column: ResolvedColumn, k: int) -> None:
        if column.data_type is None or _is_event_time(column.data_type):
            return
        if _is_timestamp(column.data_type):  # TIMESTAMP_NTZ: Flink's TIMESTAMP(3)
            ltz = f"{column.name}_ltz"
            raise _error(
                f"Watermark column `{column.name}` is TIMESTAMP_NTZ, but event time must be a "
                "TIMESTAMP (Spark's streaming refuses TIMESTAMP_NTZ event time). Declare a "
                f"computed column `{ltz} AS CAST({column.name} AS TIMESTAMP)` (the value read "
                f"in the session's time zone) and put the watermark on `{ltz}`.",
                f"watermarks[{k}].column",
                column.name,
            )
        raise _error(
            f"Watermark column `{column.name}` must be of type TIMESTAMP, "
            f"but is {column.data_type.type_sql()}.",
            f"watermarks[{k}].column",
            column.name,
        )
