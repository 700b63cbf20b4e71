"""Which query column types a table column can take (Spark's ANSI store assignment), and
how a type is shown in messages; used by INSERT and upserts (``engine.write_runner``)."""

from __future__ import annotations

from pyspark.sql import types as st

from core.errors import CoreError
from engine.typing import to_tessera_type


def store_assignable(source: st.DataType, target: st.DataType) -> bool:
    """Whether a value of ``source`` may be stored into a column of ``target`` (Spark's ANSI
    store assignment: numbers into numbers, anything atomic into strings, dates and
    timestamps into each other, nested types element by element; not strings into numbers
    nor booleans into anything but booleans and strings). Overflow is checked at run time."""
    if isinstance(source, st.NullType) or source == target:
        return True
    if isinstance(source, st.NumericType) and isinstance(target, st.NumericType):
        return True
    if isinstance(target, st.StringType | st.CharType | st.VarcharType):
        return isinstance(source, st.AtomicType) and not isinstance(source, st.BinaryType)
    if isinstance(source, st.StringType | st.CharType | st.VarcharType) and isinstance(
        target, st.StringType | st.CharType | st.VarcharType
    ):
        return True
    datetimes = st.DateType | st.TimestampType | st.TimestampNTZType
    if isinstance(source, datetimes) and isinstance(target, datetimes):
        return True
    if isinstance(source, st.DayTimeIntervalType) and isinstance(target, st.DayTimeIntervalType):
        return True
    if isinstance(source, st.YearMonthIntervalType) and isinstance(
        target, st.YearMonthIntervalType
    ):
        return True
    if isinstance(source, st.ArrayType) and isinstance(target, st.ArrayType):
        return store_assignable(source.elementType, target.elementType)
    if isinstance(source, st.MapType) and isinstance(target, st.MapType):
        return store_assignable(source.keyType, target.keyType) and store_assignable(
            source.valueType, target.valueType
        )
    if isinstance(source, st.StructType) and isinstance(target, st.StructType):
        return len(source.fields) == len(target.fields) and all(
            store_assignable(s.dataType, t.dataType)
            for s, t in zip(source.fields, target.fields, strict=True)
        )
    return False


def type_sql(data_type: st.DataType) -> str:
    try:
        return to_tessera_type(data_type).type_sql()
    except CoreError:
        return data_type.simpleString().upper()
