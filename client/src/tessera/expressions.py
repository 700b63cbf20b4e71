"""Expressions as in PyFlink (``pyflink.table.expressions``): ``col("price") * lit(2)``.

An :class:`Expression` is a sqlglot syntax tree, rendered as Spark SQL: names are quoted
identifiers (backticks, an inner backtick doubled), Python values are typed literals (quotes and
backslashes escaped), never text pasted into a statement. Table methods take an Expression
wherever they take SQL text; either way the query still goes through the server's planner and
SQL guard — the client only builds SQL.

Python values in operators are literals: ``col("name") == "it's"`` compares with the string.
"""

from __future__ import annotations

import re
from typing import Any, Union

from sqlglot import exp

from tessera._expression import (
    CURRENT_RANGE,
    CURRENT_ROW,
    UNBOUNDED_RANGE,
    UNBOUNDED_ROW,
    Expression,
    Ordering,
    _argument,
    _error,
    _function,
    _identifier,
    literal_node,
)
from tessera.literals import cast_node
from tessera.sql import parse_expression

__all__ = [
    "CURRENT_RANGE",
    "CURRENT_ROW",
    "UNBOUNDED_RANGE",
    "UNBOUNDED_ROW",
    "Expression",
    "Ordering",
    "When",
    "avg",
    "call",
    "coalesce",
    "col",
    "concat",
    "count",
    "current_date",
    "current_timestamp",
    "if_then_else",
    "lit",
    "max",
    "min",
    "sum",
    "when",
]

_FUNCTION_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*){0,2}")


class When(Expression):
    """``CASE WHEN … THEN … [ELSE …] END`` under construction: :func:`when` starts it."""

    __slots__ = ()

    def when(self, condition: Any, value: Any) -> When:
        """One more ``WHEN condition THEN value``."""
        node = self._node.copy()
        if node.args.get("default") is not None:
            raise _error("otherwise() ends a when(...): no when() can follow it.")
        node.append("ifs", exp.If(this=_argument(condition), true=_argument(value)))
        return When(node)

    def otherwise(self, value: Any) -> Expression:
        """``ELSE value END``."""
        node = self._node.copy()
        node.set("default", _argument(value))
        return Expression(node)


def col(name: str, *more: str) -> Expression:
    """The column ``name`` (quoted as one identifier: dots and backticks are part of it).

    ``col("o", "id")`` is `` `o`.`id` `` (a column of the table aliased ``o``); ``col("*")``
    is every column."""
    if name == "*" and not more:
        return Expression(exp.Star())
    parts = [_identifier(part) for part in (name, *more)]
    if len(parts) > 4:
        raise _error(f"A column reference has at most 4 parts, not {len(parts)}.")
    keys = ("this", "table", "db", "catalog")
    return Expression(exp.Column(**dict(zip(keys, reversed(parts), strict=False))))


def lit(value: Any, type_text: str | None = None) -> Expression:
    """The literal ``value`` (None, bool, int, float, Decimal, str, bytes, date, datetime,
    timedelta, list, dict); with ``type_text`` cast to that Spark SQL type.

    A naive datetime is a ``TIMESTAMP_NTZ``, an aware one a ``TIMESTAMP`` (the same instant);
    a float a ``DOUBLE`` (NaN and infinities too); a Decimal a ``DECIMAL`` of its digits."""
    node = literal_node(value)
    return Expression(cast_node(node, type_text) if type_text is not None else node)


def call(name: str, *args: Any) -> Expression:
    """``name(args…)``: any Spark SQL function, or a function of the catalog (``db.f``)."""
    if not isinstance(name, str) or not _FUNCTION_NAME.fullmatch(name):
        raise _error(
            f"{name!r} is not a function name (letters, digits and _, up to 3 dotted parts).",
            name=name,
        )
    return _function(name, *args)


def when(condition: Any, value: Any) -> When:
    """``CASE WHEN condition THEN value …``: add ``.when(…)``, end with ``.otherwise(…)``."""
    case = exp.Case(ifs=[exp.If(this=_argument(condition), true=_argument(value))])
    return When(case)


def if_then_else(condition: Any, if_true: Any, if_false: Any) -> Expression:
    """``if(condition, if_true, if_false)``."""
    return _function("if", condition, if_true, if_false)


def coalesce(*values: Any) -> Expression:
    """``coalesce(values…)``: the first that is not NULL."""
    return _function("coalesce", *values)


def concat(*values: Any) -> Expression:
    """``concat(values…)``."""
    return _function("concat", *values)


def current_date() -> Expression:
    """``current_date()``."""
    return _function("current_date")


def current_timestamp() -> Expression:
    """``current_timestamp()``."""
    return _function("current_timestamp")


def count(value: Any) -> Expression:
    """``count(value)``; ``count(col("*"))`` is ``count(*)``."""
    return _function("count", value)


def sum(value: Any) -> Expression:
    """``sum(value)``."""
    return _function("sum", value)


def avg(value: Any) -> Expression:
    """``avg(value)``."""
    return _function("avg", value)


def min(value: Any) -> Expression:
    """``min(value)``."""
    return _function("min", value)


def max(value: Any) -> Expression:
    """``max(value)``."""
    return _function("max", value)


IntoExpression = Union[str, Expression]  # noqa: UP007 - a runtime alias on Python 3.10


def to_node(value: IntoExpression, *, alias: bool = False) -> exp.Expr:
    """SQL text (parsed) or an :class:`Expression` as a syntax tree for a query.

    ``alias``: a projection, which may be named; elsewhere a name is refused."""
    if isinstance(value, Expression):
        node = value.node
        if isinstance(node, exp.Alias) and not alias:
            raise _error(f"{value.sql} is named (alias) where a name means nothing.")
        return node
    if isinstance(value, Ordering):
        raise _error(f"{value} has a direction (asc/desc): that is for order_by only.")
    return parse_expression(value, alias=alias)


def name_of(node: exp.Expr) -> str | None:
    """The column name a projection produces (an alias or a plain column), else None."""
    if isinstance(node, exp.Alias | exp.Column):
        name = node.alias_or_name
        return name or None
    return None
