from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.datatypes import (
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
    parse_data_type,
)
from core.errors import DataTypeError

from .strategies import ATOMIC_NAMES, data_types

INT = AtomicType("INT")
STRING = AtomicType("STRING")
NN_INT = INT.with_nullable(False)


def parse_error(text: str) -> DataTypeError:
    with pytest.raises(DataTypeError) as info:
        parse_data_type(text)
    return info.value


# --- canonical printing -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data_type", "sql", "family"),
    [
        (AtomicType("BOOLEAN"), "BOOLEAN", "BOOLEAN"),
        (AtomicType("TINYINT"), "TINYINT", "INTEGRAL"),
        (AtomicType("SMALLINT"), "SMALLINT", "INTEGRAL"),
        (INT, "INT", "INTEGRAL"),
        (AtomicType("BIGINT"), "BIGINT", "INTEGRAL"),
        (AtomicType("FLOAT"), "FLOAT", "FRACTIONAL"),
        (AtomicType("DOUBLE"), "DOUBLE", "FRACTIONAL"),
        (STRING, "STRING", "STRING"),
        (AtomicType("BINARY"), "BINARY", "BINARY"),
        (AtomicType("DATE"), "DATE", "DATE"),
        (AtomicType("TIMESTAMP"), "TIMESTAMP", "TIMESTAMP"),
        (AtomicType("TIMESTAMP_NTZ"), "TIMESTAMP_NTZ", "TIMESTAMP"),
        (DecimalType(), "DECIMAL(10, 0)", "DECIMAL"),
        (DecimalType(10, 2), "DECIMAL(10, 2)", "DECIMAL"),
        (VarcharType(20), "VARCHAR(20)", "STRING"),
        (CharType(3), "CHAR(3)", "STRING"),
        (DayTimeIntervalType("DAY", "SECOND"), "INTERVAL DAY TO SECOND", "INTERVAL"),
        (DayTimeIntervalType("HOUR", "HOUR"), "INTERVAL HOUR", "INTERVAL"),
        (YearMonthIntervalType("YEAR", "MONTH"), "INTERVAL YEAR TO MONTH", "INTERVAL"),
        (YearMonthIntervalType("MONTH", "MONTH"), "INTERVAL MONTH", "INTERVAL"),
        (ArrayType(INT.with_nullable(False)), "ARRAY<INT NOT NULL>", "ARRAY"),
        (MapType(STRING, ArrayType(INT)), "MAP<STRING, ARRAY<INT>>", "MAP"),
        (StructType(()), "STRUCT<>", "STRUCT"),
        (
            StructType(
                (
                    StructField("a", INT),
                    StructField("b c", STRING.with_nullable(False), "x"),
                )
            ),
            "STRUCT<a: INT, `b c`: STRING NOT NULL COMMENT 'x'>",
            "STRUCT",
        ),
        (INT.with_nullable(False), "INT NOT NULL", "INTEGRAL"),
        (DecimalType(38, 38, nullable=False), "DECIMAL(38, 38) NOT NULL", "DECIMAL"),
    ],
)
def test_canonical_sql(data_type: DataType, sql: str, family: str) -> None:
    assert data_type.sql() == sql
    assert str(data_type) == sql
    assert data_type.family == family
    assert parse_data_type(sql) == data_type


def test_type_sql_omits_nullability() -> None:
    assert ArrayType(INT, nullable=False).type_sql() == "ARRAY<INT>"
    assert ArrayType(INT, nullable=False).sql() == "ARRAY<INT> NOT NULL"


def test_with_nullable() -> None:
    not_null = INT.with_nullable(False)
    assert not_null == AtomicType("INT", nullable=False)
    assert not_null.with_nullable(True) == INT
    assert INT.nullable is True


def test_types_are_hashable_values() -> None:
    assert {parse_data_type("MAP<INT, STRUCT<a: INT>>"), parse_data_type("map<int,struct<a int>>")}
    assert len({INT, AtomicType("INT"), INT.with_nullable(False)}) == 2


def test_struct_field_names_quoted_only_when_needed() -> None:
    struct = StructType(
        (
            StructField("_ok1", INT),
            StructField("1st", INT),
            StructField("a`b", INT),
            StructField("é", INT),
            StructField("NOT", INT),
        )
    )
    assert struct.sql() == "STRUCT<_ok1: INT, `1st`: INT, `a``b`: INT, `é`: INT, NOT: INT>"
    assert parse_data_type(struct.sql()) == struct


def test_comments_are_escaped() -> None:
    struct = StructType((StructField("a", INT, "it's a \\ path\nnext"),))
    assert struct.sql() == "STRUCT<a: INT COMMENT 'it\\'s a \\\\ path\nnext'>"
    assert parse_data_type(struct.sql()) == struct


# --- parsing ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "sql"),
    [
        ("INTEGER", "INT"),
        ("long", "BIGINT"),
        ("Short", "SMALLINT"),
        ("BYTE", "TINYINT"),
        ("real", "FLOAT"),
        ("bool", "BOOLEAN"),
        ("DEC", "DECIMAL(10, 0)"),
        ("NUMERIC(5,2)", "DECIMAL(5, 2)"),
        ("decimal", "DECIMAL(10, 0)"),
        ("DECIMAL(7)", "DECIMAL(7, 0)"),
        ("timestamp_ltz", "TIMESTAMP"),
        ("timestamp_ntz", "TIMESTAMP_NTZ"),
        ("string", "STRING"),
        ("varchar( 20 )", "VARCHAR(20)"),
        ("char(1)", "CHAR(1)"),
        ("interval day to second", "INTERVAL DAY TO SECOND"),
        ("INTERVAL minute TO second", "INTERVAL MINUTE TO SECOND"),
        ("interval hour to hour", "INTERVAL HOUR"),
        ("interval year", "INTERVAL YEAR"),
        ("STRUCT<a INT>", "STRUCT<a: INT>"),
        ("struct < a : int , b string not null >", "STRUCT<a: INT, b: STRING NOT NULL>"),
        ("int null", "INT"),
        ("  int   NOT   NULL  ", "INT NOT NULL"),
        ("array<integer not null> not null", "ARRAY<INT NOT NULL> NOT NULL"),
        (
            "map<string not null, array<struct<x: long not null>>>",
            "MAP<STRING NOT NULL, ARRAY<STRUCT<x: BIGINT NOT NULL>>>",
        ),
        ("array<array<array<int>>>", "ARRAY<ARRAY<ARRAY<INT>>>"),
        ('struct<`a``b`: int comment "say \\"hi\\"">', "STRUCT<`a``b`: INT COMMENT 'say \"hi\"'>"),
        (
            "struct<`tab.1`: int, `with space`: date null comment ''>",
            "STRUCT<`tab.1`: INT, `with space`: DATE COMMENT ''>",
        ),
        (
            "struct<a: struct<b: map<int, string> not null> not null comment 'n'>",
            "STRUCT<a: STRUCT<b: MAP<INT, STRING> NOT NULL> NOT NULL COMMENT 'n'>",
        ),
        ("struct<a: int comment 'tab\\there'>", "STRUCT<a: INT COMMENT 'tab\there'>"),
    ],
)
def test_parse_aliases_and_syntax(text: str, sql: str) -> None:
    assert parse_data_type(text).sql() == sql


# Every form the grammar accepts, with the model value it must give (docs/adr/0007: the
# grammar is ours, not sqlglot's; a replacement parser would have to pass this table).
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # atomic names, their aliases, any case
        ("boolean", AtomicType("BOOLEAN")),
        ("Bool", AtomicType("BOOLEAN")),
        ("TinyInt", AtomicType("TINYINT")),
        ("byte", AtomicType("TINYINT")),
        ("smallint", AtomicType("SMALLINT")),
        ("SHORT", AtomicType("SMALLINT")),
        ("int", INT),
        ("integer", INT),
        ("BigInt", AtomicType("BIGINT")),
        ("LONG", AtomicType("BIGINT")),
        ("float", AtomicType("FLOAT")),
        ("REAL", AtomicType("FLOAT")),
        ("double", AtomicType("DOUBLE")),
        ("String", STRING),
        ("binary", AtomicType("BINARY")),
        ("date", AtomicType("DATE")),
        ("timestamp", AtomicType("TIMESTAMP")),
        ("Timestamp_LTZ", AtomicType("TIMESTAMP")),
        ("TIMESTAMP_ntz", AtomicType("TIMESTAMP_NTZ")),
        # DECIMAL and its defaults
        ("DECIMAL", DecimalType(10, 0)),
        ("dec", DecimalType(10, 0)),
        ("Numeric", DecimalType(10, 0)),
        ("decimal(7)", DecimalType(7, 0)),
        ("DEC( 5 , 2 )", DecimalType(5, 2)),
        ("numeric(38,38)", DecimalType(38, 38)),
        ("DECIMAL(007, 02)", DecimalType(7, 2)),
        ("decimal(1, 0)", DecimalType(1, 0)),
        # VARCHAR / CHAR
        ("varchar(1)", VarcharType(1)),
        ("VARCHAR ( 65535 )", VarcharType(65535)),
        ("Char(2)", CharType(2)),
        # intervals: one field, or start TO end, within either field group
        ("interval year", YearMonthIntervalType("YEAR", "YEAR")),
        ("INTERVAL MONTH", YearMonthIntervalType("MONTH", "MONTH")),
        ("interval Year To Month", YearMonthIntervalType("YEAR", "MONTH")),
        ("INTERVAL MONTH TO MONTH", YearMonthIntervalType("MONTH", "MONTH")),
        ("interval day", DayTimeIntervalType("DAY", "DAY")),
        ("INTERVAL HOUR", DayTimeIntervalType("HOUR", "HOUR")),
        ("INTERVAL minute", DayTimeIntervalType("MINUTE", "MINUTE")),
        ("INTERVAL SECOND", DayTimeIntervalType("SECOND", "SECOND")),
        ("INTERVAL DAY TO HOUR", DayTimeIntervalType("DAY", "HOUR")),
        ("INTERVAL DAY TO MINUTE", DayTimeIntervalType("DAY", "MINUTE")),
        ("interval day to second", DayTimeIntervalType("DAY", "SECOND")),
        ("INTERVAL HOUR TO MINUTE", DayTimeIntervalType("HOUR", "MINUTE")),
        ("INTERVAL HOUR TO SECOND", DayTimeIntervalType("HOUR", "SECOND")),
        ("INTERVAL MINUTE TO SECOND", DayTimeIntervalType("MINUTE", "SECOND")),
        ("interval second to second", DayTimeIntervalType("SECOND", "SECOND")),
        # nullability at every level: NOT NULL, or an explicit (redundant) NULL
        ("INT NOT NULL", NN_INT),
        ("int Not Null", NN_INT),
        ("INT NULL", INT),
        ("DECIMAL(5, 2) NOT NULL", DecimalType(5, 2, nullable=False)),
        ("VARCHAR(3) NOT NULL", VarcharType(3, nullable=False)),
        ("INTERVAL DAY NOT NULL", DayTimeIntervalType("DAY", "DAY", nullable=False)),
        ("ARRAY<INT>", ArrayType(INT)),
        ("array < int not null > not null", ArrayType(NN_INT, nullable=False)),
        ("ARRAY<INT NULL>", ArrayType(INT)),
        ("MAP<INT,STRING>", MapType(INT, STRING)),
        ("map<int not null, string not null> null", MapType(NN_INT, STRING.with_nullable(False))),
        ("ARRAY<ARRAY<INT NOT NULL> NOT NULL>", ArrayType(ArrayType(NN_INT, nullable=False))),
        # structs: empty, with or without ':', NOT NULL / NULL, COMMENT in either quote
        ("STRUCT<>", StructType(())),
        ("struct< \t >", StructType(())),
        ("STRUCT<> NOT NULL", StructType((), nullable=False)),
        ("STRUCT<a INT>", StructType((StructField("a", INT),))),
        ("struct<a:int,b : string>", StructType((StructField("a", INT), StructField("b", STRING)))),
        ("STRUCT<a: INT NOT NULL>", StructType((StructField("a", NN_INT),))),
        ("STRUCT<a: INT NULL COMMENT 'c'>", StructType((StructField("a", INT, "c"),))),
        ('STRUCT<a: INT not null comment "c">', StructType((StructField("a", NN_INT, "c"),))),
        ("STRUCT<a: INT COMMENT ''>", StructType((StructField("a", INT, ""),))),
        (
            "STRUCT<a: STRUCT<b: INT NOT NULL> NOT NULL COMMENT 'x'> NOT NULL",
            StructType(
                (StructField("a", StructType((StructField("b", NN_INT),), nullable=False), "x"),),
                nullable=False,
            ),
        ),
        # comment escapes: \n \t \r, any other escaped character stands for itself
        (
            "STRUCT<a INT COMMENT 'q\\'\\\"\\\\\\n\\t\\r\\x'>",
            StructType((StructField("a", INT, "q'\"\\\n\t\rx"),)),
        ),
        (
            'STRUCT<a INT COMMENT "it\'s \\"so\\"">',
            StructType((StructField("a", INT, 'it\'s "so"'),)),
        ),
        ("STRUCT<a INT COMMENT 'two\nlines'>", StructType((StructField("a", INT, "two\nlines"),))),
        # field names: bare words (Unicode letters, leading digits, keywords), backticks
        (
            "STRUCT<é: INT, 1st: INT, NOT: INT, null INT, comment: INT, struct STRING, int INT>",
            StructType(
                tuple(
                    StructField(name, STRING if name == "struct" else INT)
                    for name in ("é", "1st", "NOT", "null", "comment", "struct", "int")
                )
            ),
        ),
        (
            "STRUCT<`a b`: INT, `x.y` INT, `a``b`: INT, ````: INT, `,<>:`: INT>",
            StructType(
                tuple(StructField(name, INT) for name in ("a b", "x.y", "a`b", "`", ",<>:"))
            ),
        ),
        ("STRUCT<Ab: INT>", StructType((StructField("Ab", INT),))),
        # whitespace of any kind between tokens, or none around punctuation
        ("\tINTERVAL\nday\r\nTO  second ", DayTimeIntervalType("DAY", "SECOND")),
        (
            "MAP<STRING,ARRAY<STRUCT<a:INT>>>",
            MapType(STRING, ArrayType(StructType((StructField("a", INT),)))),
        ),
    ],
)
def test_every_accepted_form_gives_its_model_value(text: str, expected: DataType) -> None:
    assert parse_data_type(text) == expected


# Syntax that other dialects (and sqlglot's reading of Spark) accept but Spark and Tessera
# refuse, and other malformed text: each refused with its message.
@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("INT[]", "Unexpected character '[' at position 3 in 'INT[]'."),
        ("ARRAY(INT)", "Expected '<' at position 5 in 'ARRAY(INT)'."),
        ("Nullable(INT)", "Unknown data type 'Nullable' at position 0 in 'Nullable(INT)'."),
        ("DOUBLE PRECISION", "Unexpected 'PRECISION' at position 7 in 'DOUBLE PRECISION'."),
        ("TINYINT UNSIGNED", "Unexpected 'UNSIGNED' at position 8 in 'TINYINT UNSIGNED'."),
        ("TEXT", "Unknown data type 'TEXT' at position 0 in 'TEXT'."),
        ("VARCHAR2(5)", "Unknown data type 'VARCHAR2' at position 0 in 'VARCHAR2(5)'."),
        ("NVARCHAR(5)", "Unknown data type 'NVARCHAR' at position 0 in 'NVARCHAR(5)'."),
        ("VARIANT", "Unknown data type 'VARIANT' at position 0 in 'VARIANT'."),
        ("VOID", "Unknown data type 'VOID' at position 0 in 'VOID'."),
        ("TIME", "Unknown data type 'TIME' at position 0 in 'TIME'."),
        ("DATETIME", "Unknown data type 'DATETIME' at position 0 in 'DATETIME'."),
        ("JSON", "Unknown data type 'JSON' at position 0 in 'JSON'."),
        ("STRUCT", "Expected '<' at position 6 in 'STRUCT'."),
        ("INT(11)", "Unexpected '(' at position 3 in 'INT(11)'."),
        ("DECIMAL()", "Expected a number at position 8 in 'DECIMAL()'."),
        ("DECIMAL(10,2,3)", "Expected ')' at position 12 in 'DECIMAL(10,2,3)'."),
        ("DECIMAL(1.5)", "Unexpected character '.' at position 9 in 'DECIMAL(1.5)'."),
        ("VARCHAR(\uff11)", "Expected a number at position 8 in 'VARCHAR(\uff11)'."),
        ("ARRAY<INT, INT>", "Expected '>' at position 9 in 'ARRAY<INT, INT>'."),
        ("MAP<INT, STRING, INT>", "Expected '>' at position 15 in 'MAP<INT, STRING, INT>'."),
        ("MAP<INT, >", "Expected a data type at position 9 in 'MAP<INT, >'."),
        ("STRUCT<a>", "Expected a data type at position 8 in 'STRUCT<a>'."),
        ("STRUCT<a: INT,>", "Expected a struct field name at position 14 in 'STRUCT<a: INT,>'."),
        ("STRUCT<a: INT", "Expected ',' or '>' at position 13 in 'STRUCT<a: INT'."),
        (
            "STRUCT<a: INT NOT NULL NOT NULL>",
            "Expected ',' or '>' at position 23 in 'STRUCT<a: INT NOT NULL NOT NULL>'.",
        ),
        (
            "STRUCT<a: INT COMMENT 'a' 'b'>",
            "Expected ',' or '>' at position 26 in 'STRUCT<a: INT COMMENT 'a' 'b'>'.",
        ),
        (
            "STRUCT<a: INT COMMENT>",
            "Expected a string literal at position 21 in 'STRUCT<a: INT COMMENT>'.",
        ),
        ("STRUCT<`a: INT>", "Unclosed backtick at position 7 in 'STRUCT<`a: INT>'."),
        ("INT -- c", "Unexpected character '-' at position 4 in 'INT -- c'."),
        ("INT /* c */", "Unexpected character '/' at position 4 in 'INT /* c */'."),
        ("INT 'x'", "Unexpected string literal at position 4 in 'INT 'x''."),
        ("INT `a b`", "Unexpected `a b` at position 4 in 'INT `a b`'."),
        ("INT\x01", "Unexpected character U+0001 at position 3 in 'INT\x01'."),
        ("ARRAY<INT> ARRAY<INT>", "Unexpected 'ARRAY' at position 11 in 'ARRAY<INT> ARRAY<INT>'."),
        ("DECIMAL(10, 2) NOT", "Expected 'NULL' at position 18 in 'DECIMAL(10, 2) NOT'."),
        (
            "INTERVAL '1' DAY",
            "Expected an interval field (YEAR, MONTH, DAY, HOUR, MINUTE or SECOND) "
            "at position 9 in 'INTERVAL '1' DAY'.",
        ),
        (
            "INTERVAL WEEK",
            "Expected an interval field (YEAR, MONTH, DAY, HOUR, MINUTE or SECOND) "
            "at position 9 in 'INTERVAL WEEK'.",
        ),
        (
            "INTERVAL DAY TO",
            "Expected an interval field (YEAR, MONTH, DAY, HOUR, MINUTE or SECOND) "
            "at position 15 in 'INTERVAL DAY TO'.",
        ),
    ],
)
def test_foreign_and_malformed_syntax_is_refused(text: str, message: str) -> None:
    assert parse_error(text).message == message


def test_nested_nullability_is_kept_at_every_level() -> None:
    parsed = parse_data_type("ARRAY<MAP<STRING NOT NULL, STRUCT<a: INT NOT NULL>> NOT NULL>")
    assert isinstance(parsed, ArrayType) and parsed.nullable
    value = parsed.element
    assert isinstance(value, MapType) and not value.nullable
    assert not value.key.nullable
    assert isinstance(value.value, StructType) and value.value.nullable
    assert not value.value.fields[0].data_type.nullable


@pytest.mark.parametrize(
    ("text", "message", "position"),
    [
        ("INTEGR", "Unknown data type 'INTEGR' at position 0 in 'INTEGR'.", 0),
        ("ARRAY<INTEGR>", "Unknown data type 'INTEGR' at position 6 in 'ARRAY<INTEGR>'.", 6),
        ("ARRAY<INT", "Expected '>' at position 9 in 'ARRAY<INT'.", 9),
        ("ARRAY", "Expected '<' at position 5 in 'ARRAY'.", 5),
        ("ARRAY<>", "Expected a data type at position 6 in 'ARRAY<>'.", 6),
        ("MAP<INT>", "Expected ',' at position 7 in 'MAP<INT>'.", 7),
        ("STRUCT<a INT b INT>", "Expected ',' or '>' at position 13 in 'STRUCT<a INT b INT>'.", 13),
        ("STRUCT<,>", "Expected a struct field name at position 7 in 'STRUCT<,>'.", 7),
        ("STRUCT<``: INT>", "Empty struct field name at position 7 in 'STRUCT<``: INT>'.", 7),
        (
            "STRUCT<a: INT COMMENT 5>",
            "Expected a string literal at position 22 in 'STRUCT<a: INT COMMENT 5>'.",
            22,
        ),
        ("", "Expected a data type at position 0 in ''.", 0),
        ("   ", "Expected a data type at position 3 in '   '.", 3),
        ("INT foo", "Unexpected 'foo' at position 4 in 'INT foo'.", 4),
        ("INT>", "Unexpected '>' at position 3 in 'INT>'.", 3),
        (
            "INT NOT NULL NOT NULL",
            "Unexpected 'NOT' at position 13 in 'INT NOT NULL NOT NULL'.",
            13,
        ),
        ("INT NOT", "Expected 'NULL' at position 7 in 'INT NOT'.", 7),
        ("VARCHAR", "VARCHAR requires a length at position 7 in 'VARCHAR'.", 7),
        ("CHAR", "CHAR requires a length at position 4 in 'CHAR'.", 4),
        ("VARCHAR(x)", "Expected a number at position 8 in 'VARCHAR(x)'.", 8),
        ("DECIMAL(10,", "Expected a number at position 11 in 'DECIMAL(10,'.", 11),
        ("DECIMAL(10 2)", "Expected ')' at position 11 in 'DECIMAL(10 2)'.", 11),
        ("DECIMAL(-1)", "Unexpected character '-' at position 8 in 'DECIMAL(-1)'.", 8),
        (
            "INTERVAL",
            "Expected an interval field (YEAR, MONTH, DAY, HOUR, MINUTE or SECOND) "
            "at position 8 in 'INTERVAL'.",
            8,
        ),
        (
            "INTERVAL YEAR TO SECOND",
            "INTERVAL YEAR TO SECOND mixes year-month and day-time fields at position 0 "
            "in 'INTERVAL YEAR TO SECOND'.",
            0,
        ),
        ("`abc", "Unclosed backtick at position 0 in '`abc'.", 0),
        (
            "STRUCT<a: INT COMMENT 'x>",
            "Unclosed string literal at position 22 in 'STRUCT<a: INT COMMENT 'x>'.",
            22,
        ),
        ("INT @", "Unexpected character '@' at position 4 in 'INT @'.", 4),
    ],
)
def test_syntax_errors(text: str, message: str, position: int) -> None:
    error = parse_error(text)
    assert error.message == message
    assert error.details == {"text": text, "position": position}
    assert error.code == "VALIDATION_ERROR"


@pytest.mark.parametrize(
    ("text", "message", "position"),
    [
        ("DECIMAL(40, 2)", "DECIMAL precision must be between 1 and 38, got 40.", 0),
        ("DECIMAL(0)", "DECIMAL precision must be between 1 and 38, got 0.", 0),
        ("array<DEC(5, 6)>", "DECIMAL scale must be between 0 and the precision 5, got 6.", 6),
        ("VARCHAR(0)", "VARCHAR length must be at least 1, got 0.", 0),
        ("CHAR(0)", "CHAR length must be at least 1, got 0.", 0),
        (
            "INTERVAL SECOND TO DAY",
            "INTERVAL start field SECOND must not come after end field DAY.",
            0,
        ),
        (
            "INTERVAL MONTH TO YEAR",
            "INTERVAL start field MONTH must not come after end field YEAR.",
            0,
        ),
        ("STRUCT<a: INT, A: STRING>", "Struct field `a` is declared twice (as `a` and `A`).", 15),
    ],
)
def test_parameter_errors(text: str, message: str, position: int) -> None:
    error = parse_error(text)
    assert error.message == message
    assert error.details == {"text": text, "position": position}


def test_nesting_depth_is_limited() -> None:
    deep = "ARRAY<" * 200 + "INT" + ">" * 200
    assert "nested deeper than" in parse_error(deep).message
    fine = "ARRAY<" * 30 + "INT" + ">" * 30
    assert parse_data_type(fine).sql() == fine


def test_parse_rejects_non_strings() -> None:
    with pytest.raises(DataTypeError, match="must be given as a string"):
        parse_data_type(None)  # type: ignore[arg-type]


# --- constructors -------------------------------------------------------------------------


def test_constructor_validation() -> None:
    with pytest.raises(DataTypeError, match="Unknown atomic data type 'INTEGER'"):
        AtomicType("INTEGER")
    with pytest.raises(DataTypeError, match="DECIMAL precision"):
        DecimalType(39)
    with pytest.raises(DataTypeError, match="DECIMAL scale"):
        DecimalType(5, -1)
    with pytest.raises(DataTypeError, match="VARCHAR length"):
        VarcharType(0)
    with pytest.raises(DataTypeError, match="Unknown day-time interval field 'YEAR'"):
        DayTimeIntervalType("YEAR", "DAY")
    with pytest.raises(DataTypeError, match="Unknown year-month interval field 'DAY'"):
        YearMonthIntervalType("YEAR", "DAY")
    with pytest.raises(DataTypeError, match="declared twice"):
        StructType((StructField("x", INT), StructField("X", INT)))
    with pytest.raises(DataTypeError, match="non-empty string"):
        StructField("", INT)


def test_struct_accepts_a_list_of_fields() -> None:
    struct = StructType([StructField("a", INT)])  # type: ignore[arg-type]
    assert struct.fields == (StructField("a", INT),)
    assert hash(struct) == hash(StructType((StructField("a", INT),)))


def test_nullable_is_keyword_only_and_last() -> None:
    with pytest.raises(TypeError):
        ArrayType(INT, False)  # type: ignore[misc]
    assert ArrayType(INT, nullable=False).nullable is False


@pytest.mark.parametrize("name", ATOMIC_NAMES)
def test_every_atomic_type_round_trips(name: str) -> None:
    for nullable in (True, False):
        data_type = AtomicType(name, nullable=nullable)
        assert parse_data_type(data_type.sql()) == data_type
        assert parse_data_type(data_type.sql().lower()) == data_type


@settings(max_examples=200, deadline=None)
@given(data_types)
def test_parse_inverts_sql(data_type: DataType) -> None:
    assert parse_data_type(data_type.sql()) == data_type


# A second printer, writing a type in any spelling the grammar allows: aliases, any case,
# optional ':' and DECIMAL defaults, a redundant NULL, backticks where not needed,
# double-quoted comments, any whitespace. Parsing its text must give the type back.
_ALIASES = {
    "INT": ("INT", "INTEGER"),
    "BIGINT": ("BIGINT", "LONG"),
    "SMALLINT": ("SMALLINT", "SHORT"),
    "TINYINT": ("TINYINT", "BYTE"),
    "FLOAT": ("FLOAT", "REAL"),
    "BOOLEAN": ("BOOLEAN", "BOOL"),
    "TIMESTAMP": ("TIMESTAMP", "TIMESTAMP_LTZ"),
}


def _loose_sql(data_type: DataType, draw: Callable[[st.SearchStrategy[Any]], Any]) -> str:
    def pick(*options: str) -> str:
        return str(draw(st.sampled_from(options)))

    def word(text: str) -> str:
        return pick(text.upper(), text.lower(), text.title())

    def gap() -> str:  # optional whitespace
        return pick("", " ", "  ", "\t", "\n")

    def sep() -> str:  # required whitespace
        return pick(" ", "  ", "\t", "\n", " \r\n ")

    text: str
    if isinstance(data_type, AtomicType):
        text = word(pick(*_ALIASES.get(data_type.name, (data_type.name,))))
    elif isinstance(data_type, DecimalType):
        name = word(pick("DECIMAL", "DEC", "NUMERIC"))
        precision, scale = data_type.precision, data_type.scale
        forms = [f"{name}{gap()}({gap()}{precision}{gap()},{gap()}{scale}{gap()})"]
        if scale == 0:
            forms.append(f"{name}({gap()}{precision}{gap()})")
            if precision == 10:
                forms.append(name)
        text = pick(*forms)
    elif isinstance(data_type, VarcharType | CharType):
        name = "VARCHAR" if isinstance(data_type, VarcharType) else "CHAR"
        text = f"{word(name)}{gap()}({gap()}{data_type.length}{gap()})"
    elif isinstance(data_type, DayTimeIntervalType | YearMonthIntervalType):
        text = word("INTERVAL") + sep() + word(data_type.start)
        if data_type.start != data_type.end or draw(st.booleans()):
            text += sep() + word("TO") + sep() + word(data_type.end)
    elif isinstance(data_type, ArrayType):
        text = f"{word('ARRAY')}{gap()}<{gap()}{_loose_sql(data_type.element, draw)}{gap()}>"
    elif isinstance(data_type, MapType):
        key, value = _loose_sql(data_type.key, draw), _loose_sql(data_type.value, draw)
        text = f"{word('MAP')}{gap()}<{gap()}{key}{gap()},{gap()}{value}{gap()}>"
    else:
        assert isinstance(data_type, StructType)
        fields = []
        for struct_field in data_type.fields:
            name = struct_field.name
            quoted = "`" + name.replace("`", "``") + "`"
            field = pick(name, quoted) if name.isascii() and name.isidentifier() else quoted
            field += pick(f"{gap()}:{gap()}", sep()) + _loose_sql(struct_field.data_type, draw)
            if struct_field.comment is not None:
                quote = pick("'", '"')
                escaped = "".join(
                    "\\" + char
                    if char in ("\\", quote)
                    else pick("\n", "\\n")
                    if char == "\n"
                    else char
                    for char in struct_field.comment
                )
                field += sep() + word("COMMENT") + sep() + quote + escaped + quote
            fields.append(field)
        text = f"{word('STRUCT')}{gap()}<{gap()}{f'{gap()},{gap()}'.join(fields)}{gap()}>"
    if not data_type.nullable:
        return text + sep() + word("NOT") + sep() + word("NULL")
    return text + pick("", sep() + word("NULL"))


@settings(max_examples=200, deadline=None)
@given(data_types, st.data())
def test_parse_reads_every_spelling_of_a_type(data_type: DataType, data: st.DataObject) -> None:
    assert parse_data_type(" \t" + _loose_sql(data_type, data.draw) + "\n ") == data_type


def test_char_and_varchar_are_read_as_string_at_every_depth() -> None:
    from core.datatypes import with_strings_for_chars

    declared = parse_data_type(
        "STRUCT<code: CHAR(2) NOT NULL, names: ARRAY<VARCHAR(10)>, m: MAP<CHAR(1), INT>> NOT NULL"
    )
    assert with_strings_for_chars(declared).sql() == (
        "STRUCT<code: STRING NOT NULL, names: ARRAY<STRING>, m: MAP<STRING, INT>> NOT NULL"
    )
    assert with_strings_for_chars(parse_data_type("DECIMAL(10, 2)")).sql() == "DECIMAL(10, 2)"


def test_read_schema_types_have_no_not_null_inside_arrays_and_maps() -> None:
    """Spark's DDL refuses ``ARRAY<BIGINT NOT NULL>`` in a read schema, though CTAS from
    ``array(1)`` or ``sequence(…)`` stores that type: the read schema relaxes it (struct
    fields keep NOT NULL, which Spark's DDL accepts)."""
    from core.datatypes import read_schema_type

    declared = parse_data_type(
        "STRUCT<a: ARRAY<BIGINT NOT NULL> NOT NULL, m: MAP<CHAR(1) NOT NULL, "
        "ARRAY<STRUCT<x: INT NOT NULL> NOT NULL> NOT NULL>> NOT NULL"
    )
    assert read_schema_type(declared).sql() == (
        "STRUCT<a: ARRAY<BIGINT> NOT NULL, m: MAP<STRING, ARRAY<STRUCT<x: INT NOT NULL>>>> NOT NULL"
    )
    assert read_schema_type(parse_data_type("ARRAY<INT NOT NULL> NOT NULL")).sql() == (
        "ARRAY<INT> NOT NULL"
    )
    assert read_schema_type(parse_data_type("VARCHAR(3)")).sql() == "STRING"
