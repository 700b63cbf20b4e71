"""The declared schema (``Schema``): columns, watermarks and primary key as the user wrote
them, read from and written to JSON (``Schema.from_dict`` checks only the shape)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from core.datatypes import DataType
from core.schema.json_fields import (
    _data_type,
    _error,
    _list,
    _object,
    _optional_bool,
    _optional_str,
    _primary_key_columns,
    _str,
    _watermarks_from_dict,
)

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
