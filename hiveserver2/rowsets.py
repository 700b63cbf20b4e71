"""Spark SQL types as TCLIService types, and rows as column-based ``TRowSet``s.

A result column's type is its Spark SQL type string (``results.store``: ``INT``,
``DECIMAL(10,2)``, ``ARRAY<INT>`` …). Booleans and integers travel in their own Thrift column
types, floats and doubles as doubles, binary as bytes; everything else as text the way Spark's
Thrift server sends it: decimals as digits, dates ``YYYY-MM-DD``, timestamps
``YYYY-MM-DD HH:MM:SS[.ffffff]``, arrays, maps and structs as JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]

from hiveserver2.protocol import ttypes
from results import store

T = ttypes.TTypeId
_BY_NAME: dict[str, int] = {
    "BOOLEAN": T.BOOLEAN_TYPE,
    "TINYINT": T.TINYINT_TYPE,
    "BYTE": T.TINYINT_TYPE,
    "SMALLINT": T.SMALLINT_TYPE,
    "SHORT": T.SMALLINT_TYPE,
    "INT": T.INT_TYPE,
    "INTEGER": T.INT_TYPE,
    "BIGINT": T.BIGINT_TYPE,
    "LONG": T.BIGINT_TYPE,
    "FLOAT": T.FLOAT_TYPE,
    "REAL": T.FLOAT_TYPE,
    "DOUBLE": T.DOUBLE_TYPE,
    "STRING": T.STRING_TYPE,
    "VARCHAR": T.VARCHAR_TYPE,
    "CHAR": T.CHAR_TYPE,
    "BINARY": T.BINARY_TYPE,
    "DATE": T.DATE_TYPE,
    "TIMESTAMP": T.TIMESTAMP_TYPE,
    "TIMESTAMP_LTZ": T.TIMESTAMP_TYPE,
    "TIMESTAMP_NTZ": T.TIMESTAMP_TYPE,
    "DECIMAL": T.DECIMAL_TYPE,
    "NUMERIC": T.DECIMAL_TYPE,
    "ARRAY": T.ARRAY_TYPE,
    "MAP": T.MAP_TYPE,
    "STRUCT": T.STRUCT_TYPE,
    "VOID": T.NULL_TYPE,
    "NULL": T.NULL_TYPE,
}
# java.sql.Types of each TTypeId, for the metadata calls' DATA_TYPE.
JDBC_TYPES: dict[int, int] = {
    T.BOOLEAN_TYPE: 16,
    T.TINYINT_TYPE: -6,
    T.SMALLINT_TYPE: 5,
    T.INT_TYPE: 4,
    T.BIGINT_TYPE: -5,
    T.FLOAT_TYPE: 6,
    T.DOUBLE_TYPE: 8,
    T.STRING_TYPE: 12,
    T.VARCHAR_TYPE: 12,
    T.CHAR_TYPE: 1,
    T.BINARY_TYPE: -2,
    T.DATE_TYPE: 91,
    T.TIMESTAMP_TYPE: 93,
    T.DECIMAL_TYPE: 3,
    T.ARRAY_TYPE: 2003,
    T.MAP_TYPE: 2000,
    T.STRUCT_TYPE: 2002,
    T.NULL_TYPE: 0,
    T.INTERVAL_DAY_TIME_TYPE: 1111,
    T.INTERVAL_YEAR_MONTH_TYPE: 1111,
}
_DECIMAL = re.compile(r"^\s*(?:DECIMAL|NUMERIC|DEC)\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)", re.I)
_LENGTH = re.compile(r"^\s*(?:VARCHAR|CHAR)\s*\(\s*(\d+)\s*\)", re.I)


def type_id(data_type: str | None) -> int:
    """The TTypeId of a Spark SQL type string (unknown types: STRING)."""
    text = (data_type or "STRING").strip().upper()
    head = re.split(r"[\s(<]", text, maxsplit=1)[0]
    if head == "INTERVAL":
        year_month = "YEAR" in text or "MONTH" in text
        return int(T.INTERVAL_YEAR_MONTH_TYPE if year_month else T.INTERVAL_DAY_TIME_TYPE)
    return int(_BY_NAME.get(head, T.STRING_TYPE))


def type_name(data_type: str | None) -> str:
    """The type's name as JDBC shows it (``TYPE_NAME``): Spark's, upper case, without
    spaces after commas (``DECIMAL(10,2)``)."""
    return re.sub(r"\s*,\s*", ",", (data_type or "STRING").strip().upper())


def _qualifiers(data_type: str) -> Any:
    values: dict[str, Any] = {}
    if match := _DECIMAL.match(data_type):
        values["precision"] = ttypes.TTypeQualifierValue(i32Value=int(match.group(1)))
        values["scale"] = ttypes.TTypeQualifierValue(i32Value=int(match.group(2) or 0))
    elif match := _LENGTH.match(data_type):
        values["characterMaximumLength"] = ttypes.TTypeQualifierValue(i32Value=int(match.group(1)))
    return ttypes.TTypeQualifiers(qualifiers=values) if values else None


def type_desc(data_type: str | None) -> Any:
    """A TTypeDesc as Spark's Thrift server sends it: one primitive entry, complex types too."""
    entry = ttypes.TPrimitiveTypeEntry(
        type=type_id(data_type), typeQualifiers=_qualifiers(data_type or "")
    )
    return ttypes.TTypeDesc(types=[ttypes.TTypeEntry(primitiveEntry=entry)])


def table_schema(columns: Sequence[tuple[str, str | None, str | None]]) -> Any:
    """A TTableSchema of (name, Spark SQL type, comment) columns."""
    return ttypes.TTableSchema(
        columns=[
            ttypes.TColumnDesc(
                columnName=name, typeDesc=type_desc(data_type), position=i + 1, comment=comment
            )
            for i, (name, data_type, comment) in enumerate(columns)
        ]
    )


@dataclass(frozen=True)
class _Kind:
    column: Any  # the TColumn field's class
    field: str  # its name in TColumn
    empty: Any  # the value standing in for NULL


_KINDS: dict[int, _Kind] = {
    T.BOOLEAN_TYPE: _Kind(ttypes.TBoolColumn, "boolVal", False),
    T.TINYINT_TYPE: _Kind(ttypes.TByteColumn, "byteVal", 0),
    T.SMALLINT_TYPE: _Kind(ttypes.TI16Column, "i16Val", 0),
    T.INT_TYPE: _Kind(ttypes.TI32Column, "i32Val", 0),
    T.BIGINT_TYPE: _Kind(ttypes.TI64Column, "i64Val", 0),
    T.FLOAT_TYPE: _Kind(ttypes.TDoubleColumn, "doubleVal", 0.0),
    T.DOUBLE_TYPE: _Kind(ttypes.TDoubleColumn, "doubleVal", 0.0),
    T.BINARY_TYPE: _Kind(ttypes.TBinaryColumn, "binaryVal", b""),
}
_TEXT = _Kind(ttypes.TStringColumn, "stringVal", "")


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return value.replace(tzinfo=None).isoformat(sep=" ")
    if isinstance(value, date | Decimal | int | float):
        return str(value)
    return json.dumps(value, default=str, separators=(",", ":"))


def _nulls(values: Sequence[Any]) -> bytes:
    bits = bytearray((len(values) + 7) // 8)
    for i, value in enumerate(values):
        if value is None:
            bits[i // 8] |= 1 << (i % 8)
    return bytes(bits)


def column(type_code: int, values: Sequence[Any]) -> Any:
    """A TColumn of python values (None: NULL) of a column of ``type_code``."""
    kind = _KINDS.get(type_code, _TEXT)
    if kind is _TEXT:
        shown = [kind.empty if v is None else _text(v) for v in values]
    elif kind.empty == 0.0 and kind.field == "doubleVal":
        shown = [kind.empty if v is None else float(v) for v in values]
    else:
        shown = [kind.empty if v is None else v for v in values]
    return ttypes.TColumn(**{kind.field: kind.column(values=shown, nulls=_nulls(values))})


_JSON_NATIVE = frozenset(
    {T.ARRAY_TYPE, T.MAP_TYPE, T.STRUCT_TYPE, T.INTERVAL_DAY_TIME_TYPE, T.INTERVAL_YEAR_MONTH_TYPE}
)


def _arrow_values(array: pa.ChunkedArray, type_code: int) -> list[Any]:
    if type_code in _JSON_NATIVE:
        return store.json_column(array)  # JSON-native, as the REST API shows them
    try:
        return list(array.to_pylist())
    except (OverflowError, ValueError):  # a date beyond Python's years: text, as in REST
        return store.json_column(array)


def arrow_row_set(table: pa.Table, types: Sequence[int], offset: int) -> Any:
    """The rows of an Arrow table (a page of a result file) as a column-based TRowSet."""
    columns = [column(code, _arrow_values(table.column(i), code)) for i, code in enumerate(types)]
    return ttypes.TRowSet(startRowOffset=offset, rows=[], columns=columns)


def row_set(rows: Sequence[Sequence[Any]], types: Sequence[int], offset: int) -> Any:
    """Python rows (a metadata call's answer) as a column-based TRowSet."""
    columns = [column(code, [row[i] for row in rows]) for i, code in enumerate(types)]
    return ttypes.TRowSet(startRowOffset=offset, rows=[], columns=columns)
