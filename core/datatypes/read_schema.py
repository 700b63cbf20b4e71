"""Data types as a file source's read schema can say them: CHAR/VARCHAR as STRING, array
elements and map keys and values nullable."""

from __future__ import annotations

import dataclasses

from core.datatypes.types import (
    ArrayType,
    AtomicType,
    CharType,
    DataType,
    MapType,
    StructType,
    VarcharType,
)


def with_strings_for_chars(data_type: DataType) -> DataType:
    """``data_type`` with every CHAR(n)/VARCHAR(n), nested ones too, replaced by STRING.

    Spark's file sources refuse CHAR/VARCHAR in a read schema (they are only write-side
    constraints there), so tables declared with them are read as STRING.
    """
    nullable = data_type.nullable
    if isinstance(data_type, CharType | VarcharType):
        return AtomicType("STRING", nullable=nullable)
    if isinstance(data_type, ArrayType):
        return ArrayType(with_strings_for_chars(data_type.element), nullable=nullable)
    if isinstance(data_type, MapType):
        return MapType(
            with_strings_for_chars(data_type.key),
            with_strings_for_chars(data_type.value),
            nullable=nullable,
        )
    if isinstance(data_type, StructType):
        fields = tuple(
            dataclasses.replace(field, data_type=with_strings_for_chars(field.data_type))
            for field in data_type.fields
        )
        return StructType(fields, nullable=nullable)
    return data_type


def read_schema_type(data_type: DataType) -> DataType:
    """``data_type`` as a file source's read schema can say it: CHAR/VARCHAR as STRING
    (``with_strings_for_chars``), and array elements and map keys and values nullable —
    Spark's DDL has no NOT NULL there (``ARRAY<BIGINT NOT NULL>`` is a syntax error to
    ``DataFrameReader.schema``), though a query makes such types (``array(1)``,
    ``sequence(…)``, ``map(…)``) and CTAS stores them. Struct fields keep theirs."""
    nullable = data_type.nullable
    if isinstance(data_type, ArrayType):
        element = read_schema_type(data_type.element).with_nullable(True)
        return ArrayType(element, nullable=nullable)
    if isinstance(data_type, MapType):
        return MapType(
            read_schema_type(data_type.key).with_nullable(True),
            read_schema_type(data_type.value).with_nullable(True),
            nullable=nullable,
        )
    if isinstance(data_type, StructType):
        fields = tuple(
            dataclasses.replace(field, data_type=read_schema_type(field.data_type))
            for field in data_type.fields
        )
        return StructType(fields, nullable=nullable)
    return with_strings_for_chars(data_type)
