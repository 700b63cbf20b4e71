"""Spark SQL data types as frozen dataclasses, with a canonical printer and a parser.

Every type has ``nullable`` (keyword-only, default True). ``sql()`` prints the canonical
text, e.g. ``STRUCT<a: INT, `b c`: STRING NOT NULL COMMENT 'x'>``, and
``parse_data_type(t.sql()) == t`` holds for every type.

Parsing is case-insensitive for keywords and tolerant of whitespace. ``NOT NULL`` or
``NULL`` may follow any type at any level. Struct fields are ``name[:] type [NOT NULL]
[COMMENT 'text']``; names are bare words or backtick-quoted (a doubled backtick stands for
one). Comments are single- or double-quoted with backslash escapes (``\\n``, ``\\t``,
``\\r``; any other escaped character stands for itself); the printer escapes only
backslash and single quote. Struct field names must be non-empty and distinct
(case-insensitively).

Parse errors are ``DataTypeError`` with ``details = {"text": ..., "position": ...}``.

Where each part lives: ``types`` (the classes and their printer), ``parser``
(``parse_data_type``) and ``read_schema`` (types as a file source's read schema says them);
every public name is importable from ``core.datatypes``.
"""

from __future__ import annotations

from core.datatypes.parser import (
    MAX_NESTING_DEPTH,
    parse_data_type,
)
from core.datatypes.read_schema import (
    read_schema_type,
    with_strings_for_chars,
)
from core.datatypes.types import (
    MAX_DECIMAL_PRECISION,
    ArrayType,
    AtomicType,
    CharType,
    DataType,
    DayTimeIntervalType,
    DecimalType,
    MapType,
    StructField,
    StructType,
    VarcharType,
    YearMonthIntervalType,
)

__all__ = [
    "MAX_DECIMAL_PRECISION",
    "MAX_NESTING_DEPTH",
    "ArrayType",
    "AtomicType",
    "CharType",
    "DataType",
    "DayTimeIntervalType",
    "DecimalType",
    "MapType",
    "StructField",
    "StructType",
    "VarcharType",
    "YearMonthIntervalType",
    "parse_data_type",
    "read_schema_type",
    "with_strings_for_chars",
]
