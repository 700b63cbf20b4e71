"""The expression class behind :mod:`tessera.expressions` (see there)."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from tessera.errors import ValidationError
from tessera.literals import cast_node, data_type, value_node
from tessera.sql import DIALECT

#: Over-window bounds: every row (or every value) before, or the current row (or value).
UNBOUNDED_ROW = "UNBOUNDED_ROW"
UNBOUNDED_RANGE = "UNBOUNDED_RANGE"
CURRENT_ROW = "CURRENT_ROW"
CURRENT_RANGE = "CURRENT_RANGE"
_AGGREGATES = frozenset(
    {
        "count",
        "sum",
        "avg",
        "min",
        "max",
        "stddev_pop",
        "stddev_samp",
        "var_pop",
        "var_samp",
        "collect_list",
    }
)
# Wrapped in parentheses when an operand, so that the tree's grouping is the text's.
_COMPOUND = (exp.Binary, exp.Unary, exp.Between, exp.In, exp.Case)


def _error(message: str, **details: Any) -> ValidationError:
    return ValidationError("VALIDATION_ERROR", message, details)


def literal_node(value: Any) -> exp.Expr:
    """A Python value as a Spark SQL literal of its type (an Expression as itself)."""
    if isinstance(value, Expression):
        return value.node
    return value_node(value, literal_node)


def _operand(value: Any) -> exp.Expr:
    node = literal_node(value)
    if isinstance(node, exp.Alias):
        node = node.this
    return exp.Paren(this=node) if isinstance(node, _COMPOUND) else node


def _argument(value: Any) -> exp.Expr:
    node = literal_node(value)
    return node.this if isinstance(node, exp.Alias) else node


def _function(name: str, *args: Any) -> Expression:
    return Expression(exp.Anonymous(this=name, expressions=[_argument(a) for a in args]))


class Expression:
    """A SQL expression built in Python; ``str(e)`` and ``e.sql`` are its Spark SQL text."""

    __slots__ = ("_node",)

    def __init__(self, node: exp.Expr) -> None:
        self._node = node

    @property
    def node(self) -> exp.Expr:
        """A copy of the syntax tree."""
        return self._node.copy()

    @property
    def sql(self) -> str:
        """The expression as Spark SQL text."""
        return self._node.sql(dialect=DIALECT)

    def __str__(self) -> str:
        return self.sql

    def __repr__(self) -> str:
        return f"Expression({self.sql!r})"

    def __bool__(self) -> bool:
        raise _error(
            "An expression has no truth value in Python: combine conditions with & | ~ "
            "(in parentheses), not and/or/not."
        )

    __hash__ = object.__hash__

    def _binary(self, kind: type[exp.Expr], other: Any, *, reverse: bool = False) -> Expression:
        left, right = _operand(self), _operand(other)
        if reverse:
            left, right = right, left
        return Expression(kind(this=left, expression=right))

    # arithmetic
    def __add__(self, other: Any) -> Expression:
        return self._binary(exp.Add, other)

    def __radd__(self, other: Any) -> Expression:
        return self._binary(exp.Add, other, reverse=True)

    def __sub__(self, other: Any) -> Expression:
        return self._binary(exp.Sub, other)

    def __rsub__(self, other: Any) -> Expression:
        return self._binary(exp.Sub, other, reverse=True)

    def __mul__(self, other: Any) -> Expression:
        return self._binary(exp.Mul, other)

    def __rmul__(self, other: Any) -> Expression:
        return self._binary(exp.Mul, other, reverse=True)

    def __truediv__(self, other: Any) -> Expression:
        return self._binary(exp.Div, other)

    def __rtruediv__(self, other: Any) -> Expression:
        return self._binary(exp.Div, other, reverse=True)

    def __mod__(self, other: Any) -> Expression:
        return self._binary(exp.Mod, other)

    def __rmod__(self, other: Any) -> Expression:
        return self._binary(exp.Mod, other, reverse=True)

    def __pow__(self, other: Any) -> Expression:
        return _function("power", self, other)

    def __rpow__(self, other: Any) -> Expression:
        return _function("power", other, self)

    def __neg__(self) -> Expression:
        return Expression(exp.Neg(this=_operand(self)))

    # comparisons (Python's == builds SQL's =)
    def __eq__(self, other: object) -> Expression:  # type: ignore[override]
        return self._binary(exp.EQ, other)

    def __ne__(self, other: object) -> Expression:  # type: ignore[override]
        return self._binary(exp.NEQ, other)

    def __lt__(self, other: Any) -> Expression:
        return self._binary(exp.LT, other)

    def __le__(self, other: Any) -> Expression:
        return self._binary(exp.LTE, other)

    def __gt__(self, other: Any) -> Expression:
        return self._binary(exp.GT, other)

    def __ge__(self, other: Any) -> Expression:
        return self._binary(exp.GTE, other)

    # logic
    def __and__(self, other: Any) -> Expression:
        return self._binary(exp.And, other)

    def __rand__(self, other: Any) -> Expression:
        return self._binary(exp.And, other, reverse=True)

    def __or__(self, other: Any) -> Expression:
        return self._binary(exp.Or, other)

    def __ror__(self, other: Any) -> Expression:
        return self._binary(exp.Or, other, reverse=True)

    def __invert__(self) -> Expression:
        return Expression(exp.Not(this=_operand(self)))

    # naming, types, predicates
    def alias(self, name: str) -> Expression:
        """The expression under a column name (``AS `name```)."""
        if not isinstance(name, str) or not name:
            raise _error(f"alias() needs a name, not {name!r}.")
        node = self._node.this if isinstance(self._node, exp.Alias) else self._node
        return Expression(exp.alias_(node.copy(), name, quoted=True))

    def cast(self, type_text: str) -> Expression:
        """``CAST(e AS type)``, the type as Spark SQL text (``"DECIMAL(10, 2)"``)."""
        return Expression(cast_node(_operand(self), type_text))

    def trycast_node(self, type_text: str) -> Expression:
        """``TRY_CAST(e AS type)``: NULL where the value does not convert."""
        return Expression(exp.TryCast(this=_operand(self), to=data_type(type_text)))

    @property
    def is_null(self) -> Expression:
        """``e IS NULL``."""
        return Expression(exp.Is(this=_operand(self), expression=exp.Null()))

    @property
    def is_not_null(self) -> Expression:
        """``e IS NOT NULL``."""
        return Expression(
            exp.Not(this=exp.Paren(this=exp.Is(this=_operand(self), expression=exp.Null())))
        )

    def between(self, low: Any, high: Any) -> Expression:
        """``e BETWEEN low AND high``."""
        return Expression(exp.Between(this=_operand(self), low=_operand(low), high=_operand(high)))

    def not_between(self, low: Any, high: Any) -> Expression:
        """``NOT (e BETWEEN low AND high)``."""
        return ~self.between(low, high)

    def in_(self, *values: Any) -> Expression:
        """``e IN (values…)``."""
        if not values:
            raise _error("in_() needs at least one value.")
        return Expression(exp.In(this=_operand(self), expressions=[_operand(v) for v in values]))

    def like(self, pattern: Any) -> Expression:
        """``e LIKE pattern`` (``%`` and ``_``)."""
        return Expression(exp.Like(this=_operand(self), expression=_operand(pattern)))

    def rlike(self, regex: Any) -> Expression:
        """``e RLIKE regex`` (a Java regular expression)."""
        return Expression(exp.RegexpLike(this=_operand(self), expression=_operand(regex)))

    def if_null(self, value: Any) -> Expression:
        """``coalesce(e, value)``."""
        return _function("coalesce", self, value)

    def asc(self) -> Ordering:
        """Ascending, for ``order_by`` (NULLs first, as Spark orders them)."""
        return Ordering(exp.Ordered(this=_operand(self), desc=False, nulls_first=True))

    def desc(self) -> Ordering:
        """Descending, for ``order_by`` (NULLs last)."""
        return Ordering(exp.Ordered(this=_operand(self), desc=True, nulls_first=False))

    def get(self, field: str | int) -> Expression:
        """A struct's field (``e.`field```) or an array's element / a map's value (``e[i]``)."""
        if isinstance(field, str):
            return Expression(exp.Dot(this=_operand(self), expression=_identifier(field)))
        return Expression(exp.Bracket(this=_operand(self), expressions=[literal_node(field)]))

    # windows
    @property
    def start(self) -> Expression:
        """A window's start (``col("w").start``)."""
        return self.get("start")

    @property
    def end(self) -> Expression:
        """A window's end (``col("w").end``)."""
        return self.get("end")

    def over(self, window: Expression) -> Expression:
        """An aggregate over the over-window named by ``window`` (``col("w")``)."""
        node = window._node
        if not isinstance(node, exp.Column) or node.args.get("table") is not None:
            raise _error("over() takes the over window's name: col('w').")
        return Expression(exp.Window(this=self.node, alias=node.this.copy(), over="OVER"))

    def _interval(self, unit: str) -> Expression:
        node = self._node
        if not isinstance(node, exp.Literal) or node.is_string or not node.this.isdigit():
            raise _error(f"An interval is a whole number of {unit.lower()}s: lit(10).minutes.")
        return Expression(exp.Interval(this=exp.Literal.string(node.this), unit=exp.Var(this=unit)))

    @property
    def millis(self) -> Expression:
        """``INTERVAL 'n' MILLISECOND`` of an integer literal."""
        return self._interval("MILLISECOND")

    @property
    def seconds(self) -> Expression:
        """``INTERVAL 'n' SECOND`` of an integer literal (``lit(10).seconds``)."""
        return self._interval("SECOND")

    @property
    def minutes(self) -> Expression:
        """``INTERVAL 'n' MINUTE``."""
        return self._interval("MINUTE")

    @property
    def hours(self) -> Expression:
        """``INTERVAL 'n' HOUR``."""
        return self._interval("HOUR")

    @property
    def days(self) -> Expression:
        """``INTERVAL 'n' DAY``."""
        return self._interval("DAY")

    # aggregates, as PyFlink's properties (col("a").sum)
    def _aggregate(self, name: str) -> Expression:
        return Expression(exp.Anonymous(this=name, expressions=[_operand(self)]))

    @property
    def count(self) -> Expression:
        """``count(e)``."""
        return self._aggregate("count")

    @property
    def sum(self) -> Expression:
        """``sum(e)``."""
        return self._aggregate("sum")

    @property
    def avg(self) -> Expression:
        """``avg(e)``."""
        return self._aggregate("avg")

    @property
    def min(self) -> Expression:
        """``min(e)``."""
        return self._aggregate("min")

    @property
    def max(self) -> Expression:
        """``max(e)``."""
        return self._aggregate("max")

    @property
    def stddev_pop(self) -> Expression:
        """``stddev_pop(e)``."""
        return self._aggregate("stddev_pop")

    @property
    def stddev_samp(self) -> Expression:
        """``stddev_samp(e)``."""
        return self._aggregate("stddev_samp")

    @property
    def var_pop(self) -> Expression:
        """``var_pop(e)``."""
        return self._aggregate("var_pop")

    @property
    def var_samp(self) -> Expression:
        """``var_samp(e)``."""
        return self._aggregate("var_samp")

    @property
    def collect(self) -> Expression:
        """``collect_list(e)``."""
        return self._aggregate("collect_list")

    @property
    def sum0(self) -> Expression:
        """``coalesce(sum(e), 0)``: 0 over no rows, as Flink's SUM0."""
        return _function("coalesce", self.sum, 0)

    @property
    def distinct(self) -> Expression:
        """The aggregate over distinct values: ``col("a").count.distinct`` is
        ``count(DISTINCT a)``."""
        node = self._node
        if (
            not isinstance(node, exp.Anonymous)
            or str(node.this).lower() not in _AGGREGATES
            or len(node.expressions) != 1
            or isinstance(node.expressions[0], exp.Distinct)
        ):
            raise _error("distinct applies to an aggregate of one argument (col(...).count).")
        inner = exp.Distinct(expressions=[node.expressions[0].copy()])
        return Expression(exp.Anonymous(this=node.this, expressions=[inner]))

    # common scalar functions
    @property
    def upper_case(self) -> Expression:
        """``upper(e)``."""
        return _function("upper", self)

    @property
    def lower_case(self) -> Expression:
        """``lower(e)``."""
        return _function("lower", self)

    @property
    def trim(self) -> Expression:
        """``trim(e)``."""
        return _function("trim", self)

    @property
    def char_length(self) -> Expression:
        """``char_length(e)``."""
        return _function("char_length", self)

    @property
    def abs(self) -> Expression:
        """``abs(e)``."""
        return _function("abs", self)

    @property
    def floor(self) -> Expression:
        """``floor(e)``."""
        return _function("floor", self)

    @property
    def ceil(self) -> Expression:
        """``ceil(e)``."""
        return _function("ceil", self)

    @property
    def sqrt(self) -> Expression:
        """``sqrt(e)``."""
        return _function("sqrt", self)

    @property
    def ln(self) -> Expression:
        """``ln(e)``."""
        return _function("ln", self)

    def round(self, places: int = 0) -> Expression:
        """``round(e, places)`` (half up)."""
        return _function("round", self, places)

    def substring(self, start: Any, length: Any = None) -> Expression:
        """``substring(e, start[, length])``, ``start`` from 1."""
        if length is None:
            return _function("substring", self, start)
        return _function("substring", self, start, length)


class Ordering:
    """An expression with a direction (``col("a").desc()``), for ``order_by`` only."""

    __slots__ = ("node",)

    def __init__(self, node: exp.Ordered) -> None:
        self.node = node

    def __str__(self) -> str:
        return self.node.sql(dialect=DIALECT)

    def __repr__(self) -> str:
        return f"Ordering({str(self)!r})"


def _identifier(name: str) -> exp.Identifier:
    if not isinstance(name, str) or not name:
        raise _error(f"A column name must be a non-empty string, not {name!r}.")
    return exp.to_identifier(name, quoted=True)
