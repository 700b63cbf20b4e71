"""The validated schema (``ResolvedSchema``), as ``SchemaResolver`` makes it and the catalog
stores it: every column with its kind and type, the watermark, the named primary key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.datatypes import DataType
from core.identifiers import name_key
from core.schema.declared import ColumnKind, _kind
from core.schema.json_fields import (
    _error,
    _list,
    _object,
    _optional_bool,
    _optional_data_type,
    _optional_str,
    _primary_key_columns,
    _str,
    _watermarks_from_dict,
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
