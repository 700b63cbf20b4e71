"""The Spark SQL data types as frozen dataclasses, each printing its canonical text
(``sql()``); constructors check their parameters (``DataTypeError``)."""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from core.errors import DataTypeError

# Canonical atomic type names and their families.
_ATOMIC_FAMILIES: dict[str, str] = {
    "BOOLEAN": "BOOLEAN",
    "TINYINT": "INTEGRAL",
    "SMALLINT": "INTEGRAL",
    "INT": "INTEGRAL",
    "BIGINT": "INTEGRAL",
    "FLOAT": "FRACTIONAL",
    "DOUBLE": "FRACTIONAL",
    "STRING": "STRING",
    "BINARY": "BINARY",
    "DATE": "DATE",
    "TIMESTAMP": "TIMESTAMP",
    "TIMESTAMP_NTZ": "TIMESTAMP",
}


_DAY_TIME_FIELDS = ("DAY", "HOUR", "MINUTE", "SECOND")
_YEAR_MONTH_FIELDS = ("YEAR", "MONTH")
MAX_DECIMAL_PRECISION = 38


@dataclass(frozen=True)
class DataType(ABC):
    """Abstract base of all data types."""

    nullable: bool = field(default=True, kw_only=True)

    @abstractmethod
    def type_sql(self) -> str:
        """Return the canonical text without the nullability suffix."""

    @property
    @abstractmethod
    def family(self) -> str:
        """Return the type family, e.g. ``"INTEGRAL"`` or ``"STRUCT"``."""

    def sql(self) -> str:
        """Return the canonical text, including `` NOT NULL`` when not nullable."""
        return self.type_sql() if self.nullable else self.type_sql() + " NOT NULL"

    def with_nullable(self, nullable: bool) -> DataType:
        """Return a copy with the given nullability."""
        return dataclasses.replace(self, nullable=nullable)

    def __str__(self) -> str:
        return self.sql()


@dataclass(frozen=True)
class AtomicType(DataType):
    """A parameterless type such as ``INT`` or ``TIMESTAMP_NTZ`` (canonical name only)."""

    name: str

    def __post_init__(self) -> None:
        if self.name not in _ATOMIC_FAMILIES:
            raise DataTypeError(f"Unknown atomic data type '{self.name}'.")

    def type_sql(self) -> str:
        return self.name

    @property
    def family(self) -> str:
        return _ATOMIC_FAMILIES[self.name]


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class DecimalType(DataType):
    """``DECIMAL(precision, scale)`` with 1 <= precision <= 38 and 0 <= scale <= precision."""

    precision: int = 10
    scale: int = 0

    def __post_init__(self) -> None:
        if not _is_int(self.precision) or not 1 <= self.precision <= MAX_DECIMAL_PRECISION:
            raise DataTypeError(
                f"DECIMAL precision must be between 1 and {MAX_DECIMAL_PRECISION}, "
                f"got {self.precision}."
            )
        if not _is_int(self.scale) or not 0 <= self.scale <= self.precision:
            raise DataTypeError(
                f"DECIMAL scale must be between 0 and the precision {self.precision}, "
                f"got {self.scale}."
            )

    def type_sql(self) -> str:
        return f"DECIMAL({self.precision}, {self.scale})"

    @property
    def family(self) -> str:
        return "DECIMAL"


def _check_length(type_name: str, length: object) -> None:
    if not isinstance(length, int) or isinstance(length, bool) or length < 1:
        raise DataTypeError(f"{type_name} length must be at least 1, got {length}.")


@dataclass(frozen=True)
class VarcharType(DataType):
    """``VARCHAR(length)``, length >= 1."""

    length: int

    def __post_init__(self) -> None:
        _check_length("VARCHAR", self.length)

    def type_sql(self) -> str:
        return f"VARCHAR({self.length})"

    @property
    def family(self) -> str:
        return "STRING"


@dataclass(frozen=True)
class CharType(DataType):
    """``CHAR(length)``, length >= 1."""

    length: int

    def __post_init__(self) -> None:
        _check_length("CHAR", self.length)

    def type_sql(self) -> str:
        return f"CHAR({self.length})"

    @property
    def family(self) -> str:
        return "STRING"


def _check_interval(kind: str, fields: tuple[str, ...], start: str, end: str) -> None:
    for value in (start, end):
        if value not in fields:
            raise DataTypeError(
                f"Unknown {kind} interval field '{value}', expected one of {', '.join(fields)}."
            )
    if fields.index(start) > fields.index(end):
        raise DataTypeError(f"INTERVAL start field {start} must not come after end field {end}.")


def _interval_sql(start: str, end: str) -> str:
    return f"INTERVAL {start}" if start == end else f"INTERVAL {start} TO {end}"


@dataclass(frozen=True)
class DayTimeIntervalType(DataType):
    """``INTERVAL start [TO end]`` over DAY < HOUR < MINUTE < SECOND."""

    start: str
    end: str

    def __post_init__(self) -> None:
        _check_interval("day-time", _DAY_TIME_FIELDS, self.start, self.end)

    def type_sql(self) -> str:
        return _interval_sql(self.start, self.end)

    @property
    def family(self) -> str:
        return "INTERVAL"


@dataclass(frozen=True)
class YearMonthIntervalType(DataType):
    """``INTERVAL start [TO end]`` over YEAR < MONTH."""

    start: str
    end: str

    def __post_init__(self) -> None:
        _check_interval("year-month", _YEAR_MONTH_FIELDS, self.start, self.end)

    def type_sql(self) -> str:
        return _interval_sql(self.start, self.end)

    @property
    def family(self) -> str:
        return "INTERVAL"


@dataclass(frozen=True)
class ArrayType(DataType):
    """``ARRAY<element>``."""

    element: DataType

    def type_sql(self) -> str:
        return f"ARRAY<{self.element.sql()}>"

    @property
    def family(self) -> str:
        return "ARRAY"


@dataclass(frozen=True)
class MapType(DataType):
    """``MAP<key, value>``."""

    key: DataType
    value: DataType

    def type_sql(self) -> str:
        return f"MAP<{self.key.sql()}, {self.value.sql()}>"

    @property
    def family(self) -> str:
        return "MAP"


def _field_name_sql(name: str) -> str:
    # ASCII isidentifier() is exactly [A-Za-z_][A-Za-z0-9_]*.
    if name.isascii() and name.isidentifier():
        return name
    return "`" + name.replace("`", "``") + "`"


def _string_literal_sql(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


@dataclass(frozen=True)
class StructField:
    """One field of a ``StructType``; its nullability is ``data_type.nullable``."""

    name: str
    data_type: DataType
    comment: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or self.name == "":
            raise DataTypeError("A struct field name must be a non-empty string.")

    def sql(self) -> str:
        """Return ``name: TYPE [COMMENT '...']``."""
        text = f"{_field_name_sql(self.name)}: {self.data_type.sql()}"
        if self.comment is not None:
            text += f" COMMENT {_string_literal_sql(self.comment)}"
        return text


def _duplicate_field_error(first: str, second: str) -> DataTypeError:
    return DataTypeError(f"Struct field `{first}` is declared twice (as `{first}` and `{second}`).")


@dataclass(frozen=True)
class StructType(DataType):
    """``STRUCT<...>``; field names are unique case-insensitively, ``STRUCT<>`` is allowed."""

    fields: tuple[StructField, ...]

    def __post_init__(self) -> None:
        # Accept any sequence but store a tuple so equality and hashing work.
        object.__setattr__(self, "fields", tuple(self.fields))
        seen: dict[str, str] = {}
        for struct_field in self.fields:
            key = struct_field.name.lower()
            if key in seen:
                raise _duplicate_field_error(seen[key], struct_field.name)
            seen[key] = struct_field.name

    def type_sql(self) -> str:
        return "STRUCT<" + ", ".join(f.sql() for f in self.fields) + ">"

    @property
    def family(self) -> str:
        return "STRUCT"
