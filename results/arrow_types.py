"""Arrow types of an upload as Spark SQL types, and the ones Spark 4 cannot read back.

An upload is stored as parquet (``sessions.uploads``) and read by Spark's parquet reader, so a
column is accepted only when the parquet file pyarrow writes for it is one Spark 4 reads,
and its type is given as that reader will see it (``core.datatypes``' text). Refused,
each with the column named: time-of-day types (Spark 4.0 has no TIME type), durations and
intervals, half floats, unions, decimals of more than 38 digits, untyped all-NULL columns,
structs without fields and extension types. A column whose Arrow field is not nullable
is ``NOT NULL`` (nested fields stay nullable: Spark's reader makes them so). Timestamps
are written in microseconds (Spark's unit; nanoseconds that would be cut off are refused
when the file is written).
"""

from __future__ import annotations

import pyarrow as pa  # type: ignore[import-untyped]

from core import storable
from core.datatypes import parse_data_type
from core.errors import CoreError


class UnreadableType(CoreError):
    """An Arrow type Spark's parquet reader refuses (400)."""


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _refuse(where: str, arrow_type: pa.DataType, why: str) -> UnreadableType:
    return UnreadableType(
        f"Column {where} has the Arrow type {arrow_type}, which Spark cannot read from "
        f"parquet: {why}.",
        details={"column": where, "arrow_type": str(arrow_type)},
    )


_SIMPLE: tuple[tuple[pa.DataType, str], ...] = (
    (pa.bool_(), "BOOLEAN"),
    (pa.int8(), "TINYINT"),
    (pa.int16(), "SMALLINT"),
    (pa.int32(), "INT"),
    (pa.int64(), "BIGINT"),
    # Parquet's unsigned annotations, as Spark reads them: one size up, UINT64 as a decimal.
    (pa.uint8(), "SMALLINT"),
    (pa.uint16(), "INT"),
    (pa.uint32(), "BIGINT"),
    (pa.uint64(), "DECIMAL(20, 0)"),
    (pa.float32(), "FLOAT"),
    (pa.float64(), "DOUBLE"),
    (pa.date32(), "DATE"),
    (pa.date64(), "DATE"),
    (pa.string(), "STRING"),
    (pa.large_string(), "STRING"),
    (pa.binary(), "BINARY"),
    (pa.large_binary(), "BINARY"),
)


def _type_text(arrow_type: pa.DataType, where: str) -> str:
    types = pa.types
    for known, text in _SIMPLE:
        if arrow_type == known:
            return text
    if types.is_dictionary(arrow_type):
        return _type_text(arrow_type.value_type, where)
    if types.is_fixed_size_binary(arrow_type):
        return "BINARY"
    if types.is_string_view(arrow_type):
        return "STRING"
    if types.is_binary_view(arrow_type):
        return "BINARY"
    if types.is_timestamp(arrow_type):
        # Parquet's isAdjustedToUTC: an instant (TIMESTAMP) with a zone, else TIMESTAMP_NTZ.
        return "TIMESTAMP" if arrow_type.tz is not None else "TIMESTAMP_NTZ"
    if types.is_decimal(arrow_type):
        if arrow_type.precision > 38:
            return _raise(_refuse(where, arrow_type, "Spark's decimals have at most 38 digits"))
        return f"DECIMAL({arrow_type.precision}, {arrow_type.scale})"
    if types.is_list(arrow_type) or types.is_large_list(arrow_type):
        return f"ARRAY<{_type_text(arrow_type.value_type, where + '[]')}>"
    if types.is_fixed_size_list(arrow_type):
        return f"ARRAY<{_type_text(arrow_type.value_type, where + '[]')}>"
    if types.is_map(arrow_type):
        key = _type_text(arrow_type.key_type, where + ".key")
        value = _type_text(arrow_type.item_type, where + ".value")
        return f"MAP<{key}, {value}>"
    if types.is_struct(arrow_type):
        if arrow_type.num_fields == 0:
            return _raise(_refuse(where, arrow_type, "a struct needs at least one field"))
        fields = []
        for index in range(arrow_type.num_fields):
            field = arrow_type.field(index)
            inner = _type_text(field.type, f"{where}.{_quote(field.name)}")
            fields.append(f"{_quote(field.name)}: {inner}")
        return f"STRUCT<{', '.join(fields)}>"
    return _raise(_refuse(where, arrow_type, _why(arrow_type)))


def _raise(error: UnreadableType) -> str:
    raise error


def _why(arrow_type: pa.DataType) -> str:
    types = pa.types
    if types.is_time(arrow_type):
        return "Spark 4.0 has no time-of-day type; send it as a string or a timestamp"
    if types.is_duration(arrow_type) or types.is_interval(arrow_type):
        return "durations and intervals have no parquet type Spark reads; send a number"
    if types.is_float16(arrow_type):
        return "Spark has no half-precision float; send it as FLOAT"
    if types.is_null(arrow_type):
        return "a column of only NULLs needs a type; cast it to the type it stands for"
    if types.is_union(arrow_type):
        return "Spark has no union type"
    return "Spark has no type for it"


def spark_columns(schema: pa.Schema) -> list[dict[str, str]]:
    """The upload's columns as ``[{"name", "data_type"}]``; refuses empty or duplicate names
    (Spark compares names case-insensitively) and types Spark's parquet reader refuses."""
    columns: list[dict[str, str]] = []
    seen: dict[str, str] = {}
    if len(schema) == 0:
        raise CoreError("The upload has no columns.")
    for index, field in enumerate(schema):
        name = field.name
        if not name.strip():
            raise CoreError(
                f"Column {index + 1} of the upload has an empty name; every column needs one.",
                details={"column": index + 1},
            )
        if name.lower() in seen:
            raise CoreError(
                f"The upload has two columns named {_quote(seen[name.lower()])} and "
                f"{_quote(name)}; column names must differ (Spark ignores their case).",
                details={"column": name},
            )
        seen[name.lower()] = name
        text = _type_text(field.type, _quote(name))
        # A column Arrow says is never null stays NOT NULL (checked on the data when stored).
        data_type = parse_data_type(text).with_nullable(field.nullable)
        column = {"name": name, "data_type": data_type.sql()}
        for key, value in column.items():  # a nested field's name is in the type's text
            offset = storable.find(value)
            if offset is not None:
                raise storable.unstorable(
                    f"the {key.replace('_', ' ')} of column {index + 1} of the upload",
                    f"columns[{index}].{key}",
                    value,
                    offset,
                )
        columns.append(column)
    return columns
