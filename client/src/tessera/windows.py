"""Group windows (``Tumble``, ``Slide``, ``Session``) and over windows (``Over``), as in
PyFlink, rendered as Spark's ``window()`` / ``session_window()`` and ``OVER (…)``.

``table.window(Tumble.over("10 minutes").on(col("ts")).alias("w"))`` then
``.group_by(col("w"), col("k")).select(col("k"), col("w").start, col("x").sum)`` is
``SELECT k, window.start, sum(x) FROM t GROUP BY window(ts, '10 minutes'), k``: Spark names
the window column ``window`` (``session_window``), so ``col("w")`` becomes that name.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from tessera._expression import (
    CURRENT_RANGE,
    CURRENT_ROW,
    UNBOUNDED_RANGE,
    UNBOUNDED_ROW,
    Expression,
    Ordering,
    _error,
    literal_node,
)
from tessera.expressions import IntoExpression, to_node
from tessera.grouping import projections

if TYPE_CHECKING:
    from tessera.table import Table


def _duration(value: Any, what: str) -> exp.Expr:
    """A window length as Spark's ``window()`` takes it: a string literal (``'10 minutes'``)."""
    if isinstance(value, Expression) and isinstance(value.node, exp.Interval):
        node = value.node
        unit = node.args.get("unit")
        return exp.Literal.string(f"{node.this.name} {unit.name.lower() if unit else ''}".strip())
    if isinstance(value, dt.timedelta) and value > dt.timedelta(0):
        return exp.Literal.string(f"{value // dt.timedelta(microseconds=1)} microseconds")
    if isinstance(value, str) and value.strip():
        return exp.Literal.string(value)
    raise _error(
        f"{what} takes a duration: '10 minutes', a positive timedelta or lit(10).minutes, "
        f"not {value!r}."
    )


class GroupWindow:
    """A group window with its time column and name, for :meth:`Table.window`."""

    def __init__(self, function: str, args: list[exp.Expr], name: str | None = None) -> None:
        self.function = function  # window or session_window: also the column's name in Spark
        self.args = args
        self.name = name

    def on(self, time_field: IntoExpression) -> GroupWindow:
        """The event-time (or processing-time) column the window is over."""
        return GroupWindow(self.function, [to_node(time_field), *self.args[1:]], self.name)

    def alias(self, name: str) -> GroupWindow:
        """The name ``group_by`` and ``select`` refer to the window by (``col("w")``)."""
        if not isinstance(name, str) or not name:
            raise _error(f"A window needs a name, not {name!r}.")
        return GroupWindow(self.function, self.args, name)

    def every(self, slide: Any) -> GroupWindow:
        """How often a sliding window starts (``Slide.over(size).every(slide)``)."""
        if self.function != "window" or len(self.args) != 2:
            raise _error("every() follows Slide.over(size).")
        return GroupWindow(self.function, [*self.args, _duration(slide, "every()")], self.name)

    def call(self) -> exp.Expr:
        if isinstance(self.args[0], exp.Null):
            raise _error("A window needs its time column: .on(col('ts')).")
        return exp.Anonymous(this=self.function, expressions=[a.copy() for a in self.args])


class Tumble:
    """Fixed windows that do not overlap: ``Tumble.over("1 hour").on(col("ts")).alias("w")``."""

    @staticmethod
    def over(size: Any) -> GroupWindow:
        return GroupWindow("window", [exp.Null(), _duration(size, "Tumble.over()")])


class Slide:
    """Overlapping windows: ``Slide.over("1 hour").every("10 minutes").on(…).alias("w")``."""

    @staticmethod
    def over(size: Any) -> GroupWindow:
        return GroupWindow("window", [exp.Null(), _duration(size, "Slide.over()")])


class Session:
    """Windows closed by a gap: ``Session.with_gap("5 minutes").on(col("ts")).alias("w")``."""

    @staticmethod
    def with_gap(gap: Any) -> GroupWindow:
        return GroupWindow("session_window", [exp.Null(), _duration(gap, "with_gap()")])


def _rename_window(node: exp.Expr, window: GroupWindow, replacement: exp.Expr) -> exp.Expr:
    def swap(part: exp.Expr) -> exp.Expr:
        if (
            isinstance(part, exp.Column)
            and part.args.get("table") is None
            and part.name == window.name
        ):
            return replacement.copy()
        return part

    return node.transform(swap)


class WindowedTable:
    """A table with a group window: :meth:`group_by` must name the window."""

    def __init__(self, table: Table, window: GroupWindow) -> None:
        if window.name is None:
            raise _error("A group window needs a name: .alias('w').")
        window.call()  # refuses a window without its time column
        self._table = table
        self._window = window

    def group_by(self, *keys: IntoExpression) -> WindowGroupedTable:
        nodes = [to_node(k) for k in keys]
        call = self._window.call()
        grouped = [_rename_window(n, self._window, call) for n in nodes]
        if not any(n == call for n in grouped):
            raise _error(f"group_by() must name the window (col({self._window.name!r})).")
        return WindowGroupedTable(self._table, self._window, grouped)


class WindowGroupedTable:
    """Rows grouped by a window and keys; :meth:`select` gives one row per window and key."""

    def __init__(self, table: Table, window: GroupWindow, keys: list[exp.Expr]) -> None:
        self._table = table
        self._window = window
        self._keys = keys

    def select(self, *fields: IntoExpression) -> Table:
        """The keys, the window (``col("w").start``, ``col("w").end``) and aggregates."""
        column = exp.Column(this=exp.to_identifier(self._window.function, quoted=True))
        nodes = [_rename_window(n, self._window, column) for n in projections(fields, "select")]
        query = self._table._base()
        query.set("expressions", nodes)
        return self._table._new(query.group_by(*[k.copy() for k in self._keys], copy=False))


def _bound(value: Any, side: str) -> tuple[str | None, Any, str | None]:
    """(kind, bound, side) of a frame bound: ROWS for counts, RANGE for intervals."""
    if isinstance(value, str) and value in (UNBOUNDED_ROW, UNBOUNDED_RANGE):
        return ("ROWS" if value == UNBOUNDED_ROW else "RANGE"), "UNBOUNDED", side
    if isinstance(value, str) and value in (CURRENT_ROW, CURRENT_RANGE):
        return ("ROWS" if value == CURRENT_ROW else "RANGE"), "CURRENT ROW", None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return "ROWS", exp.Literal.number(value), side
    node = literal_node(value)
    if isinstance(node, exp.Interval):
        return "RANGE", node, side
    raise _error(f"An over-window bound is a row count, an interval or a constant, not {value!r}.")


def _ordered(field: IntoExpression | Ordering) -> exp.Expr:
    if isinstance(field, Ordering):
        return field.node.copy()
    return exp.Ordered(this=to_node(field), desc=False, nulls_first=True)


class OverWindow:
    """``PARTITION BY … ORDER BY … ROWS|RANGE BETWEEN …``, named for ``.over(col(name))``."""

    def __init__(self, partition: list[exp.Expr], order: list[exp.Expr] | None = None) -> None:
        self.partition = partition
        self.order = order or []
        self.lower: Any = UNBOUNDED_RANGE
        self.upper: Any = None
        self.name: str | None = None

    def _copy(self, **changes: Any) -> OverWindow:
        window = OverWindow(self.partition, self.order)
        window.__dict__.update({**self.__dict__, **changes})
        return window

    def order_by(self, *fields: IntoExpression | Ordering) -> OverWindow:
        """The order of rows in the window (``col("ts")`` or ``col("ts").desc()``)."""
        return self._copy(order=[_ordered(f) for f in fields])

    def preceding(self, bound: Any) -> OverWindow:
        """The frame's start: ``UNBOUNDED_RANGE`` (default), ``UNBOUNDED_ROW``, a row count or
        an interval (``lit(1).hours``)."""
        return self._copy(lower=bound)

    def following(self, bound: Any) -> OverWindow:
        """The frame's end (default: the current row)."""
        return self._copy(upper=bound)

    def alias(self, name: str) -> OverWindow:
        if not isinstance(name, str) or not name:
            raise _error(f"An over window needs a name, not {name!r}.")
        return self._copy(name=name)

    def spec(self) -> dict[str, Any]:
        if not self.order:
            raise _error("An over window needs order_by(…).")
        kind, start, start_side = _bound(self.lower, "PRECEDING")
        end_kind, end, end_side = (kind, "CURRENT ROW", None)
        if self.upper is not None:
            end_kind, end, end_side = _bound(self.upper, "FOLLOWING")
        if end_kind != kind:
            raise _error("Both bounds of an over window are rows, or both are ranges.")
        frame = exp.WindowSpec(
            kind=kind, start=start, start_side=start_side, end=end, end_side=end_side
        )
        order = exp.Order(expressions=[o.copy() for o in self.order])
        return {"partition_by": [p.copy() for p in self.partition], "order": order, "spec": frame}


class Over:
    """``Over.partition_by(col("k")).order_by(col("ts")).preceding(UNBOUNDED_RANGE).alias("w")``."""

    @staticmethod
    def partition_by(*fields: IntoExpression) -> OverWindow:
        return OverWindow([to_node(f) for f in fields])

    @staticmethod
    def order_by(*fields: IntoExpression | Ordering) -> OverWindow:
        return OverWindow([], [_ordered(f) for f in fields])


class OverWindowedTable:
    """A table with over windows; in :meth:`select`, ``agg.over(col("w"))`` uses one."""

    def __init__(self, table: Table, windows: tuple[OverWindow, ...]) -> None:
        self._table = table
        self._windows: dict[str, OverWindow] = {}
        for window in windows:
            if window.name is None:
                raise _error("An over window needs a name: .alias('w').")
            window.spec()
            self._windows[window.name] = window

    def select(self, *fields: IntoExpression) -> Table:
        def fill(node: exp.Expr) -> exp.Expr:
            if isinstance(node, exp.Window) and node.args.get("alias") is not None:
                name = node.args["alias"].name
                if name not in self._windows:
                    raise _error(f"No over window is named {name!r}.", window=name)
                return exp.Window(this=node.this.copy(), over="OVER", **self._windows[name].spec())
            return node

        nodes = [n.transform(fill) for n in projections(fields, "select")]
        query = self._table._base()
        query.set("expressions", nodes)
        return self._table._new(query)
