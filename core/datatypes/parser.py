"""``parse_data_type``: Spark SQL data type text to a ``DataType``, by a tokenizer followed by
recursive descent. Keywords are case-insensitive and aliases are accepted (``INTEGER``,
``LONG``…); errors are ``DataTypeError`` with ``details = {"text": ..., "position": ...}``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from core.datatypes.types import (
    _ATOMIC_FAMILIES,
    _DAY_TIME_FIELDS,
    _YEAR_MONTH_FIELDS,
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
    _duplicate_field_error,
    _field_name_sql,
)
from core.errors import DataTypeError

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
MAX_NESTING_DEPTH = 64  # keeps the recursive parser far from Python's recursion limit


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
