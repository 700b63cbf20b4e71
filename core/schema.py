"""FLIP-164 style table schemas: the declared ``Schema`` and the validated ``ResolvedSchema``.

``Schema.from_dict`` checks only the JSON shape (types, required fields, data type text);
``SchemaResolver.resolve`` checks the meaning (names, duplicates, metadata keys, primary
key, watermark) and produces a ``ResolvedSchema``. Both raise ``SchemaError`` whose
``details["field"]`` is the JSON path of the offending value (``columns[1].expression``)
and ``details["column"]`` the column name where there is one; data type text that does not
parse raises ``DataTypeError`` with the same two entries added to its details.

Decisions where the interface leaves room:
- ``from_dict`` ignores unknown keys (so a resolved column dict may be sent back as is);
  ``columns`` is required, ``watermarks`` may be missing or null.
- Metadata keys match case-insensitively; the resolved column carries the canonical key.
- "Available columns" lists every column in declaration order.
- The default primary key name joins the columns as declared in the schema (their case).
- An expression type the typer does not return stays None and makes
  ``expressions_resolved`` False; a type is never invented.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, Literal, Protocol, TypeAlias

from core.datatypes import AtomicType, DataType, parse_data_type
from core.errors import DataTypeError, IdentifierError, SchemaError
from core.identifiers import name_key, validate_name

ColumnKind: TypeAlias = Literal["physical", "computed", "metadata"]
_KINDS: tuple[ColumnKind, ...] = ("physical", "computed", "metadata")


@dataclass(frozen=True)
class PhysicalColumn:
    """A column stored in the table."""

    name: str
    data_type: DataType
    comment: str | None = None


@dataclass(frozen=True)
class ComputedColumn:
    """A column computed from a SQL expression over other columns."""

    name: str
    expression: str
    comment: str | None = None


@dataclass(frozen=True)
class MetadataColumn:
    """A column exposing file metadata; ``metadata_key`` defaults to the column name."""

    name: str
    data_type: DataType
    metadata_key: str | None = None
    virtual: bool = False
    comment: str | None = None


UnresolvedColumn: TypeAlias = PhysicalColumn | ComputedColumn | MetadataColumn


@dataclass(frozen=True)
class WatermarkSpec:
    """A watermark: the rowtime column and the SQL expression that computes the watermark."""

    column: str
    expression: str


@dataclass(frozen=True)
class PrimaryKey:
    """A declared primary key; ``name`` None means a generated ``PK_...`` name."""

    name: str | None
    columns: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", tuple(self.columns))


# ---------------------------------------------------------------------------------------
# JSON reading helpers: each failure names the JSON path of the offending value.


def _error(message: str, field: str | None, column: str | None = None) -> SchemaError:
    details: dict[str, Any] = {}
    if field is not None:
        details["field"] = field
    if column is not None:
        details["column"] = column
    return SchemaError(message, details=details)


def _object(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _error(f"Field '{path}' must be a JSON object.", path)
    return value


def _list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list | tuple):
        raise _error(f"Field '{path}' must be a list.", path)
    return list(value)


def _str(obj: dict[str, Any], key: str, path: str, column: str | None = None) -> str:
    field = f"{path}.{key}" if path else key
    if key not in obj:
        raise _error(f"Field '{field}' is required.", field, column)
    value = obj[key]
    if not isinstance(value, str):
        raise _error(f"Field '{field}' must be a string.", field, column)
    return value


def _optional_str(
    obj: dict[str, Any], key: str, path: str, column: str | None = None
) -> str | None:
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        field = f"{path}.{key}" if path else key
        raise _error(f"Field '{field}' must be a string or null.", field, column)
    return value


def _optional_bool(
    obj: dict[str, Any], key: str, path: str, default: bool, column: str | None = None
) -> bool:
    value = obj.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        field = f"{path}.{key}" if path else key
        raise _error(f"Field '{field}' must be true or false.", field, column)
    return value


def _parse_type(text: str, field: str, column: str | None) -> DataType:
    try:
        return parse_data_type(text)
    except DataTypeError as error:
        details = dict(error.details, field=field)
        if column is not None:
            details["column"] = column
        raise DataTypeError(error.message, details=details) from None


def _data_type(obj: dict[str, Any], path: str, column: str) -> DataType:
    return _parse_type(_str(obj, "data_type", path, column), f"{path}.data_type", column)


def _optional_data_type(obj: dict[str, Any], path: str, column: str | None) -> DataType | None:
    text = _optional_str(obj, "data_type", path, column)
    return None if text is None else _parse_type(text, f"{path}.data_type", column)


def _kind(obj: dict[str, Any], path: str, column: str, default: str | None) -> ColumnKind:
    value = obj.get("kind")
    if value is None:  # absent or null: the default, if any
        value = default
    for kind in _KINDS:
        if value == kind:
            return kind
    if value is None:
        raise _error(f"Field '{path}.kind' is required.", f"{path}.kind", column)
    raise _error(
        f"Unknown column kind {value!r} for column `{column}`, "
        "expected physical, computed or metadata.",
        f"{path}.kind",
        column,
    )


def _primary_key_columns(obj: dict[str, Any]) -> tuple[str, ...]:
    if "columns" not in obj:
        raise _error("Field 'primary_key.columns' is required.", "primary_key.columns")
    names = _list(obj["columns"], "primary_key.columns")
    for index, name in enumerate(names):
        if not isinstance(name, str):
            path = f"primary_key.columns[{index}]"
            raise _error(f"Field '{path}' must be a string.", path)
    return tuple(names)


def _column_to_dict(column: UnresolvedColumn) -> dict[str, Any]:
    result: dict[str, Any] = {"name": column.name}
    if isinstance(column, PhysicalColumn):
        result["kind"] = "physical"
        result["data_type"] = column.data_type.sql()
    elif isinstance(column, ComputedColumn):
        result["kind"] = "computed"
        result["expression"] = column.expression
    else:
        result["kind"] = "metadata"
        result["data_type"] = column.data_type.sql()
        result["metadata_key"] = column.metadata_key
        result["virtual"] = column.virtual
    if column.comment is not None:
        result["comment"] = column.comment
    return result


def _column_from_dict(value: Any, index: int) -> UnresolvedColumn:
    path = f"columns[{index}]"
    obj = _object(value, path)
    name = _str(obj, "name", path)
    kind = _kind(obj, path, name, default="physical")
    comment = _optional_str(obj, "comment", path, name)
    if kind == "physical":
        return PhysicalColumn(name, _data_type(obj, path, name), comment)
    if kind == "computed":
        return ComputedColumn(name, _str(obj, "expression", path, name), comment)
    return MetadataColumn(
        name,
        _data_type(obj, path, name),
        metadata_key=_optional_str(obj, "metadata_key", path, name),
        virtual=_optional_bool(obj, "virtual", path, False, name),
        comment=comment,
    )


def _watermarks_from_dict(value: Any) -> list[dict[str, Any]]:
    if value is None:
        return []
    return [_object(item, f"watermarks[{i}]") for i, item in enumerate(_list(value, "watermarks"))]


@dataclass(frozen=True)
class Schema:
    """A table schema as declared by the user (not yet validated)."""

    columns: tuple[UnresolvedColumn, ...] = ()
    watermarks: tuple[WatermarkSpec, ...] = ()
    primary_key: PrimaryKey | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", tuple(self.columns))
        object.__setattr__(self, "watermarks", tuple(self.watermarks))

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form used by the REST API."""
        primary_key = None
        if self.primary_key is not None:
            primary_key = {
                "name": self.primary_key.name,
                "columns": list(self.primary_key.columns),
            }
        return {
            "columns": [_column_to_dict(column) for column in self.columns],
            "watermarks": [
                {"column": w.column, "expression": w.expression} for w in self.watermarks
            ],
            "primary_key": primary_key,
        }

    @classmethod
    def from_dict(cls, data: Any) -> Schema:
        """Build a schema from its JSON form, checking the shape (not the meaning)."""
        if not isinstance(data, dict):
            raise _error("A schema must be a JSON object.", None)
        if "columns" not in data:
            raise _error("Field 'columns' is required.", "columns")
        columns = tuple(
            _column_from_dict(item, i) for i, item in enumerate(_list(data["columns"], "columns"))
        )
        watermarks = tuple(
            WatermarkSpec(
                _str(obj, "column", f"watermarks[{i}]"),
                _str(obj, "expression", f"watermarks[{i}]"),
            )
            for i, obj in enumerate(_watermarks_from_dict(data.get("watermarks")))
        )
        primary_key = None
        if data.get("primary_key") is not None:
            obj = _object(data["primary_key"], "primary_key")
            primary_key = PrimaryKey(
                _optional_str(obj, "name", "primary_key"), _primary_key_columns(obj)
            )
        return cls(columns, watermarks, primary_key)


# ---------------------------------------------------------------------------------------
# Resolved schema.

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


@dataclass(frozen=True)
class ResolvedColumn:
    """A validated column; ``data_type`` is None only for a not yet typed computed column."""

    name: str
    kind: ColumnKind
    data_type: DataType | None
    expression: str | None = None
    metadata_key: str | None = None
    virtual: bool | None = None
    comment: str | None = None

    @property
    def nullable(self) -> bool | None:
        return None if self.data_type is None else self.data_type.nullable

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form of the column."""
        result: dict[str, Any] = {
            "name": self.name,
            "kind": self.kind,
            "data_type": None if self.data_type is None else self.data_type.sql(),
            "nullable": self.nullable,
        }
        if self.kind == "computed":
            result["expression"] = self.expression
        if self.kind == "metadata":
            result["metadata_key"] = self.metadata_key
            result["virtual"] = self.virtual
        if self.comment is not None:
            result["comment"] = self.comment
        return result

    @classmethod
    def from_dict(cls, value: Any, index: int) -> ResolvedColumn:
        """Build a column from its JSON form; ``index`` is used in error field paths."""
        path = f"columns[{index}]"
        obj = _object(value, path)
        name = _str(obj, "name", path)
        kind = _kind(obj, path, name, default=None)
        return cls(
            name,
            kind,
            _optional_data_type(obj, path, name),
            expression=_str(obj, "expression", path, name) if kind == "computed" else None,
            metadata_key=(
                _optional_str(obj, "metadata_key", path, name) if kind == "metadata" else None
            ),
            virtual=(
                _optional_bool(obj, "virtual", path, False, name) if kind == "metadata" else None
            ),
            comment=_optional_str(obj, "comment", path, name),
        )


@dataclass(frozen=True)
class ResolvedWatermark:
    """A validated watermark; ``data_type`` is the expression's type once known."""

    column: str
    expression: str
    data_type: DataType | None = None


@dataclass(frozen=True)
class ResolvedPrimaryKey:
    """A validated primary key with its (possibly generated) name."""

    name: str
    columns: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", tuple(self.columns))


@dataclass(frozen=True)
class ResolvedSchema:
    """A validated schema; ``expressions_resolved`` is False while an expression is untyped."""

    columns: tuple[ResolvedColumn, ...]
    watermarks: tuple[ResolvedWatermark, ...] = ()
    primary_key: ResolvedPrimaryKey | None = None
    expressions_resolved: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", tuple(self.columns))
        object.__setattr__(self, "watermarks", tuple(self.watermarks))

    def column(self, name: str) -> ResolvedColumn | None:
        """Return the column with this name (case-insensitive), or None."""
        key = name_key(name)
        for column in self.columns:
            if name_key(column.name) == key:
                return column
        return None

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form used by the REST API."""
        primary_key = None
        if self.primary_key is not None:
            primary_key = {
                "name": self.primary_key.name,
                "columns": list(self.primary_key.columns),
            }
        return {
            "columns": [column.to_dict() for column in self.columns],
            "watermarks": [
                {
                    "column": w.column,
                    "expression": w.expression,
                    "data_type": None if w.data_type is None else w.data_type.sql(),
                }
                for w in self.watermarks
            ],
            "primary_key": primary_key,
            "expressions_resolved": self.expressions_resolved,
        }

    @classmethod
    def from_dict(cls, data: Any) -> ResolvedSchema:
        """Build a resolved schema from its JSON form, checking the shape only.

        A missing ``expressions_resolved`` is derived: False when some computed column or
        watermark has no data type.
        """
        if not isinstance(data, dict):
            raise _error("A resolved schema must be a JSON object.", None)
        if "columns" not in data:
            raise _error("Field 'columns' is required.", "columns")
        columns = tuple(
            ResolvedColumn.from_dict(item, i)
            for i, item in enumerate(_list(data["columns"], "columns"))
        )
        watermarks = tuple(
            ResolvedWatermark(
                _str(obj, "column", f"watermarks[{i}]"),
                _str(obj, "expression", f"watermarks[{i}]"),
                _optional_data_type(obj, f"watermarks[{i}]", None),
            )
            for i, obj in enumerate(_watermarks_from_dict(data.get("watermarks")))
        )
        primary_key = None
        if data.get("primary_key") is not None:
            obj = _object(data["primary_key"], "primary_key")
            primary_key = ResolvedPrimaryKey(
                _str(obj, "name", "primary_key"), _primary_key_columns(obj)
            )
        resolved = data.get("expressions_resolved")
        if resolved is None:
            resolved = all(c.data_type is not None for c in columns) and all(
                w.data_type is not None for w in watermarks
            )
        elif not isinstance(resolved, bool):
            raise _error(
                "Field 'expressions_resolved' must be true or false.", "expressions_resolved"
            )
        return cls(columns, watermarks, primary_key, resolved)


# ---------------------------------------------------------------------------------------
# Resolution.


class ExpressionTyper(Protocol):
    """Types SQL expressions, e.g. with Spark's analyzer."""

    def type_expressions(
        self, columns: Sequence[ResolvedColumn], expressions: Mapping[str, str]
    ) -> Mapping[str, DataType]:
        """Type each named expression against ``columns``; raise SchemaError if one is bad."""
        ...


def _is_timestamp(data_type: DataType) -> bool:
    return data_type.family == "TIMESTAMP"


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
                types = self.expression_typer.type_expressions(base, computed)
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
                elif not _is_timestamp(expression_type):
                    raise _error(
                        f"The watermark expression for column `{column.name}` must be of type "
                        f"TIMESTAMP or TIMESTAMP_NTZ, but is {expression_type.type_sql()}.",
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
        if column.data_type is not None and not _is_timestamp(column.data_type):
            raise _error(
                f"Watermark column `{column.name}` must be of type TIMESTAMP or TIMESTAMP_NTZ, "
                f"but is {column.data_type.type_sql()}.",
                f"watermarks[{k}].column",
                column.name,
            )
