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
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable
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

# Alternative spellings accepted by the parser for atomic types.
_ATOMIC_ALIASES: dict[str, str] = {
    "INTEGER": "INT",
    "LONG": "BIGINT",
    "SHORT": "SMALLINT",
    "BYTE": "TINYINT",
    "REAL": "FLOAT",
    "BOOL": "BOOLEAN",
    "TIMESTAMP_LTZ": "TIMESTAMP",
}

_DECIMAL_NAMES = ("DECIMAL", "DEC", "NUMERIC")
_DAY_TIME_FIELDS = ("DAY", "HOUR", "MINUTE", "SECOND")
_YEAR_MONTH_FIELDS = ("YEAR", "MONTH")
MAX_DECIMAL_PRECISION = 38
MAX_NESTING_DEPTH = 64  # keeps the recursive parser far from Python's recursion limit


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


# ---------------------------------------------------------------------------------------
# Parser: a tokenizer followed by recursive descent.


@dataclass(frozen=True)
class _Token:
    kind: str  # "word", "quoted" (backtick name), "string", "punct" or "end"
    value: str
    pos: int

    def describe(self) -> str:
        if self.kind == "end":
            return "end of input"
        if self.kind == "quoted":
            return _field_name_sql(self.value)
        if self.kind == "string":
            return "string literal"
        return f"'{self.value}'"


def _syntax_error(text: str, message: str, position: int) -> DataTypeError:
    return DataTypeError(
        f"{message} at position {position} in '{text}'.",
        details={"text": text, "position": position},
    )


_PUNCTUATION = "<>(),:"
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    index = 0
    while index < len(text):
        ch = text[index]
        start = index
        if ch.isspace():
            index += 1
        elif ch in _PUNCTUATION:
            tokens.append(_Token("punct", ch, start))
            index += 1
        elif ch == "_" or ch.isalnum():
            while index < len(text) and (text[index] == "_" or text[index].isalnum()):
                index += 1
            tokens.append(_Token("word", text[start:index], start))
        elif ch == "`":
            chars: list[str] = []
            index += 1
            while True:
                if index >= len(text):
                    raise _syntax_error(text, "Unclosed backtick", start)
                if text[index] == "`":
                    if text[index + 1 : index + 2] != "`":
                        index += 1
                        break
                    index += 1  # doubled backtick: keep one
                chars.append(text[index])
                index += 1
            tokens.append(_Token("quoted", "".join(chars), start))
        elif ch in "'\"":
            chars = []
            index += 1
            while True:
                if index >= len(text):
                    raise _syntax_error(text, "Unclosed string literal", start)
                if text[index] == ch:
                    index += 1
                    break
                if text[index] == "\\" and index + 1 < len(text):
                    escaped = text[index + 1]
                    chars.append(_ESCAPES.get(escaped, escaped))
                    index += 2
                else:
                    chars.append(text[index])
                    index += 1
            tokens.append(_Token("string", "".join(chars), start))
        else:
            shown = f"U+{ord(ch):04X}" if ord(ch) < 0x20 or ord(ch) == 0x7F else f"'{ch}'"
            raise _syntax_error(text, f"Unexpected character {shown}", start)
    tokens.append(_Token("end", "", len(text)))
    return tokens


class _TypeParser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.index = 0

    def fail(self, message: str, position: int) -> DataTypeError:
        return _syntax_error(self.text, message, position)

    def peek(self) -> _Token:
        return self.tokens[self.index]

    def advance(self) -> _Token:
        token = self.tokens[self.index]
        if token.kind != "end":
            self.index += 1
        return token

    def at_punct(self, value: str) -> bool:
        token = self.peek()
        return token.kind == "punct" and token.value == value

    def at_word(self, value: str) -> bool:
        token = self.peek()
        return token.kind == "word" and token.value.upper() == value

    def expect_punct(self, value: str) -> None:
        if not self.at_punct(value):
            raise self.fail(f"Expected '{value}'", self.peek().pos)
        self.advance()

    def expect_number(self) -> int:
        token = self.peek()
        if token.kind != "word" or not (token.value.isascii() and token.value.isdigit()):
            raise self.fail("Expected a number", token.pos)
        self.advance()
        return int(token.value)

    def build(self, position: int, make: Callable[[], DataType]) -> DataType:
        # Constructors validate parameters; re-raise their errors with the parse position.
        try:
            return make()
        except DataTypeError as error:
            raise DataTypeError(
                error.message, details={"text": self.text, "position": position}
            ) from None

    def parse(self) -> DataType:
        data_type = self.parse_type(0)
        token = self.peek()
        if token.kind != "end":
            raise self.fail(f"Unexpected {token.describe()}", token.pos)
        return data_type

    def parse_type(self, depth: int) -> DataType:
        token = self.peek()
        if depth > MAX_NESTING_DEPTH:
            raise self.fail(f"Data type nested deeper than {MAX_NESTING_DEPTH} levels", token.pos)
        if token.kind != "word":
            raise self.fail("Expected a data type", token.pos)
        self.advance()
        name = token.value.upper()
        data_type: DataType
        if name in _ATOMIC_FAMILIES or name in _ATOMIC_ALIASES:
            data_type = AtomicType(_ATOMIC_ALIASES.get(name, name))
        elif name in _DECIMAL_NAMES:
            data_type = self.parse_decimal(token.pos)
        elif name in ("VARCHAR", "CHAR"):
            data_type = self.parse_char(name, token.pos)
        elif name == "INTERVAL":
            data_type = self.parse_interval(token.pos)
        elif name == "ARRAY":
            self.expect_punct("<")
            element = self.parse_type(depth + 1)
            self.expect_punct(">")
            data_type = ArrayType(element)
        elif name == "MAP":
            self.expect_punct("<")
            key = self.parse_type(depth + 1)
            self.expect_punct(",")
            value = self.parse_type(depth + 1)
            self.expect_punct(">")
            data_type = MapType(key, value)
        elif name == "STRUCT":
            data_type = self.parse_struct(depth)
        else:
            raise self.fail(f"Unknown data type '{token.value}'", token.pos)
        if not self.parse_nullable():
            data_type = data_type.with_nullable(False)
        return data_type

    def parse_nullable(self) -> bool:
        if self.at_word("NOT"):
            self.advance()
            if not self.at_word("NULL"):
                raise self.fail("Expected 'NULL'", self.peek().pos)
            self.advance()
            return False
        if self.at_word("NULL"):
            self.advance()
        return True

    def parse_decimal(self, position: int) -> DataType:
        precision, scale = 10, 0
        if self.at_punct("("):
            self.advance()
            precision = self.expect_number()
            if self.at_punct(","):
                self.advance()
                scale = self.expect_number()
            self.expect_punct(")")
        return self.build(position, lambda: DecimalType(precision, scale))

    def parse_char(self, name: str, position: int) -> DataType:
        if not self.at_punct("("):
            raise self.fail(f"{name} requires a length", self.peek().pos)
        self.advance()
        length = self.expect_number()
        self.expect_punct(")")
        return self.build(
            position, lambda: VarcharType(length) if name == "VARCHAR" else CharType(length)
        )

    def interval_field(self) -> str:
        token = self.peek()
        value = token.value.upper()
        if token.kind != "word" or value not in _YEAR_MONTH_FIELDS + _DAY_TIME_FIELDS:
            raise self.fail(
                "Expected an interval field (YEAR, MONTH, DAY, HOUR, MINUTE or SECOND)",
                token.pos,
            )
        self.advance()
        return value

    def parse_interval(self, position: int) -> DataType:
        start = self.interval_field()
        end = start
        if self.at_word("TO"):
            self.advance()
            end = self.interval_field()
        if start in _YEAR_MONTH_FIELDS and end in _YEAR_MONTH_FIELDS:
            return self.build(position, lambda: YearMonthIntervalType(start, end))
        if start in _DAY_TIME_FIELDS and end in _DAY_TIME_FIELDS:
            return self.build(position, lambda: DayTimeIntervalType(start, end))
        raise self.fail(f"INTERVAL {start} TO {end} mixes year-month and day-time fields", position)

    def parse_struct(self, depth: int) -> DataType:
        self.expect_punct("<")
        fields: list[StructField] = []
        seen: dict[str, str] = {}
        if self.at_punct(">"):
            self.advance()
            return StructType(())
        while True:
            name_token = self.peek()
            struct_field = self.parse_field(depth + 1)
            key = struct_field.name.lower()
            if key in seen:
                error = _duplicate_field_error(seen[key], struct_field.name)
                raise DataTypeError(
                    error.message, details={"text": self.text, "position": name_token.pos}
                )
            seen[key] = struct_field.name
            fields.append(struct_field)
            if self.at_punct(","):
                self.advance()
            elif self.at_punct(">"):
                self.advance()
                return StructType(tuple(fields))
            else:
                raise self.fail("Expected ',' or '>'", self.peek().pos)

    def parse_field(self, depth: int) -> StructField:
        token = self.peek()
        if token.kind not in ("word", "quoted"):
            raise self.fail("Expected a struct field name", token.pos)
        if token.value == "":
            raise self.fail("Empty struct field name", token.pos)
        self.advance()
        if self.at_punct(":"):
            self.advance()
        data_type = self.parse_type(depth)
        comment: str | None = None
        if self.at_word("COMMENT"):
            self.advance()
            literal = self.peek()
            if literal.kind != "string":
                raise self.fail("Expected a string literal", literal.pos)
            self.advance()
            comment = literal.value
        return StructField(token.value, data_type, comment)


def parse_data_type(text: str) -> DataType:
    """Parse Spark SQL data type text (keywords case-insensitive, aliases accepted).

    >>> parse_data_type("array<integer not null>").sql()
    'ARRAY<INT NOT NULL>'
    """
    if not isinstance(text, str):
        raise DataTypeError(
            "A data type must be given as a string.", details={"text": repr(text), "position": 0}
        )
    return _TypeParser(text).parse()


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
