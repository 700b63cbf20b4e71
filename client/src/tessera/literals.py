"""Python values as typed Spark SQL literals, and Spark SQL types written as text."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import ParseError as SqlglotParseError
from sqlglot.errors import TokenError

from tessera.errors import ParseError, ValidationError
from tessera.sql import DIALECT

_MAX_DECIMAL_PRECISION = 38


def _error(message: str, **details: Any) -> ValidationError:
    return ValidationError("VALIDATION_ERROR", message, details)


def data_type(text: str) -> exp.DataType:
    """A Spark SQL type written as text (``"DECIMAL(10, 2)"``), parsed."""
    if not isinstance(text, str) or not text.strip():
        raise _error(f"A data type must be SQL text, not {text!r}.")
    if text.split("(")[0].split("<")[0].strip().upper() == "TIME":
        raise _error("TIME is not a Spark SQL type here: use STRING or TIMESTAMP_NTZ.")
    try:
        built = exp.DataType.build(text, dialect=DIALECT)
        # sqlglot stops at the end of a type and ignores what follows: refuse leftovers.
        whole = len(Spark().tokenize(text)) == len(Spark().tokenize(built.sql(dialect=DIALECT)))
    except (SqlglotParseError, ValueError, TokenError) as exc:
        raise ParseError(
            "PARSE_ERROR", f"{text!r} is not a Spark SQL data type.", {"text": text}
        ) from exc
    if not whole:
        raise ParseError("PARSE_ERROR", f"{text!r} is not one Spark SQL data type.", {"text": text})
    return built


def cast_node(node: exp.Expr, type_text: str) -> exp.Expr:
    return exp.Cast(this=node, to=data_type(type_text))


def _decimal(value: Decimal) -> exp.Expr:
    if not value.is_finite():
        raise _error(f"A DECIMAL has no {value} (use a float for NaN and infinities).")
    digits, exponent = value.as_tuple()[1:]
    assert isinstance(exponent, int)
    scale = max(0, -exponent)
    precision = max(len(digits) + max(exponent, 0), scale, 1)
    if precision > _MAX_DECIMAL_PRECISION:
        raise _error(f"{value} needs {precision} digits; a Spark DECIMAL holds at most 38.")
    return cast_node(exp.Literal.string(format(value, "f")), f"DECIMAL({precision}, {scale})")


def _float(value: float) -> exp.Expr:
    if math.isnan(value):
        text = "NaN"
    elif math.isinf(value):
        text = "Infinity" if value > 0 else "-Infinity"
    else:
        text = repr(value)  # the shortest text that reads back as the same double
    return cast_node(exp.Literal.string(text), "DOUBLE")


def _interval(value: dt.timedelta) -> exp.Expr:
    micros = abs(value) // dt.timedelta(microseconds=1)
    seconds, micro = divmod(micros, 1_000_000)
    minutes, second = divmod(seconds, 60)
    hours, minute = divmod(minutes, 60)
    days, hour = divmod(hours, 24)
    sign = "-" if value < dt.timedelta(0) else ""
    text = f"{sign}{days} {hour:02d}:{minute:02d}:{second:02d}.{micro:06d}"
    span = exp.IntervalSpan(this=exp.Var(this="DAY"), expression=exp.Var(this="SECOND"))
    return exp.Interval(this=exp.Literal.string(text), unit=span)


def value_node(value: Any, nested: Callable[[Any], exp.Expr]) -> exp.Expr:
    """A Python value as a Spark SQL literal of its type; ``nested`` converts the items of
    lists and dicts."""
    if value is None:
        return exp.Null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int):
        return exp.Literal.number(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, Decimal):
        return _decimal(value)
    if isinstance(value, str):
        return exp.Literal.string(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return exp.HexString(this=bytes(value).hex())
    if isinstance(value, dt.datetime):  # before date: a datetime is a date
        if value.tzinfo is None or value.utcoffset() is None:
            return cast_node(exp.Literal.string(value.isoformat(sep=" ")), "TIMESTAMP_NTZ")
        utc = value.astimezone(dt.timezone.utc).replace(tzinfo=None)  # noqa: UP017 - Python 3.10
        return cast_node(exp.Literal.string(utc.isoformat(sep=" ") + "Z"), "TIMESTAMP")
    if isinstance(value, dt.date):
        return cast_node(exp.Literal.string(value.isoformat()), "DATE")
    if isinstance(value, dt.timedelta):
        return _interval(value)
    if isinstance(value, Mapping):
        items = [nested(part) for pair in value.items() for part in pair]
        return exp.Anonymous(this="map", expressions=items)
    if isinstance(value, Sequence):
        return exp.Array(expressions=[nested(item) for item in value])
    raise _error(
        f"lit() takes None, bool, int, float, Decimal, str, bytes, date, datetime, timedelta, "
        f"a list or a dict, not {type(value).__name__}."
    )
