"""Sorting, filtering and chart aggregation over a stored result (the Arrow file of a job).

Everything runs in Arrow compute over the stored rows: no SQL is built, so a filter's value
is only ever data compared with data. Columns are named as the result names them and checked
against its columns; operators and aggregations come from fixed lists.

- ``sort=<column>:asc|desc`` orders the whole result (NULLs last), stable.
- ``filter=<column>:<op>[:<value>]`` (repeatable, all must hold) with ``op`` one of
  ``contains`` (case-insensitive text), ``eq ne lt le gt ge`` (or ``= != < <= > >=``), and
  ``is_null`` / ``not_null`` (no value).
- A chart groups the (filtered) rows by an X column and aggregates Y columns (``sum avg count
  min max``) into at most ``points`` points: numeric and time X are cut into equal-width bins
  when they hold more distinct values than that, text X keeps its largest groups. ``none``
  returns the rows themselves (evenly sampled down to ``points``), for scatter plots.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]

from core.errors import CoreError
from results import store

OPS = {
    "contains": "contains",
    "eq": "eq",
    "=": "eq",
    "ne": "ne",
    "!=": "ne",
    "lt": "lt",
    "<": "lt",
    "le": "le",
    "<=": "le",
    "gt": "gt",
    ">": "gt",
    "ge": "ge",
    ">=": "ge",
    "is_null": "is_null",
    "not_null": "not_null",
}
_COMPARE = {
    "eq": pc.equal,
    "ne": pc.not_equal,
    "lt": pc.less,
    "le": pc.less_equal,
    "gt": pc.greater,
    "ge": pc.greater_equal,
}
AGGREGATIONS = ("none", "sum", "avg", "count", "min", "max")
_ARROW_AGG = {"sum": "sum", "avg": "mean", "count": "count", "min": "min", "max": "max"}
MAX_FILTERS = 20
MAX_VALUE_LENGTH = 1000
MAX_SERIES = 10
DEFAULT_POINTS = 500
MAX_POINTS = 2000


@dataclass(frozen=True)
class Sort:
    column: int
    descending: bool


@dataclass(frozen=True)
class Filter:
    column: int
    op: str
    value: str | None


@dataclass(frozen=True)
class View:
    """Which rows of a result, in which order."""

    sort: Sort | None = None
    filters: tuple[Filter, ...] = ()

    @property
    def plain(self) -> bool:
        return self.sort is None and not self.filters


def _bad(message: str, field: str) -> CoreError:
    return CoreError(message, details={"field": field})


def column_index(names: Sequence[str], name: str, field: str) -> int:
    """The position of the result column ``name``: 400 when there is none, or several."""
    found = [i for i, n in enumerate(names) if n == name]
    if not found:
        shown = ", ".join(names[:20]) + (", …" if len(names) > 20 else "")
        raise _bad(f"The result has no column named '{name[:100]}'; its columns: {shown}.", field)
    if len(found) > 1:
        raise _bad(
            f"The result has {len(found)} columns named '{name}'; give them distinct aliases "
            "to sort, filter or chart by one.",
            field,
        )
    return found[0]


def parse_sort(text: str | None, names: Sequence[str]) -> Sort | None:
    if not text:
        return None
    column, _, direction = text.rpartition(":")
    if not column or direction.lower() not in ("asc", "desc"):
        raise _bad(f"sort must be '<column>:asc' or '<column>:desc', got '{text[:100]}'.", "sort")
    return Sort(column_index(names, column, "sort"), direction.lower() == "desc")


def parse_filter(text: str, names: Sequence[str]) -> Filter:
    """``column:op[:value]``. A column name may hold ':' itself: the split chosen is the one
    whose column part is a column of the result."""
    if len(text) > MAX_VALUE_LENGTH + 300:
        raise _bad(f"A filter may be at most {MAX_VALUE_LENGTH} characters of value.", "filter")
    candidates: list[tuple[str, str, str | None]] = []
    start = 0
    while (at := text.find(":", start)) >= 0:
        head, rest = text[:at], text[at + 1 :]
        op_text, sep, tail = rest.partition(":")
        if head and op_text in OPS:
            candidates.append((head, OPS[op_text], tail if sep else None))
        start = at + 1
    if not candidates:
        raise _bad(
            f"A filter is '<column>:<op>:<value>' with op one of "
            f"{', '.join(sorted(set(OPS.values())))}; got '{text[:100]}'.",
            "filter",
        )
    known = [c for c in candidates if c[0] in names] or candidates[:1]
    column, op, value = known[0]
    index = column_index(names, column, "filter")
    if op in ("is_null", "not_null"):
        if value:
            raise _bad(f"The filter {op} takes no value, got '{value[:100]}'.", "filter")
        return Filter(index, op, None)
    if value is None:
        raise _bad(
            f"The filter {op} on '{column}' needs a value: '{column}:{op}:<value>'.", "filter"
        )
    if len(value) > MAX_VALUE_LENGTH:
        raise _bad(f"A filter's value may be at most {MAX_VALUE_LENGTH} characters.", "filter")
    return Filter(index, op, value)


def parse_view(sort: str | None, filters: Sequence[str], names: Sequence[str]) -> View:
    if len(filters) > MAX_FILTERS:
        raise _bad(f"At most {MAX_FILTERS} filters may be given, got {len(filters)}.", "filter")
    return View(parse_sort(sort, names), tuple(parse_filter(f, names) for f in filters if f))


# --- applying a view ---------------------------------------------------------------------------


def _nested(arrow_type: pa.DataType) -> bool:
    t = pa.types
    return bool(
        t.is_list(arrow_type)
        or t.is_large_list(arrow_type)
        or t.is_fixed_size_list(arrow_type)
        or t.is_map(arrow_type)
        or t.is_struct(arrow_type)
    )


def _scalar(value: str, arrow_type: pa.DataType, name: str) -> pa.Scalar:
    """The filter value as a scalar of the column's type (400 when it cannot be one)."""
    t = pa.types
    try:
        if t.is_boolean(arrow_type):
            if value.lower() not in ("true", "false"):
                raise ValueError
            return pa.scalar(value.lower() == "true")
        if t.is_integer(arrow_type):
            return pa.scalar(int(value), pa.int64())
        if t.is_floating(arrow_type):
            return pa.scalar(float(value), pa.float64())
        if t.is_decimal(arrow_type):
            return pa.scalar(float(Decimal(value)), pa.float64())
        if t.is_date(arrow_type):
            return pa.scalar(date.fromisoformat(value), pa.date32())
        if t.is_timestamp(arrow_type):
            moment = datetime.fromisoformat(value)
            if arrow_type.tz and moment.tzinfo is None:  # no zone given: UTC
                moment = moment.replace(tzinfo=UTC)
            return pa.scalar(
                moment, pa.timestamp("us", tz=arrow_type.tz if moment.tzinfo else None)
            )
        if t.is_string(arrow_type) or t.is_large_string(arrow_type):
            return pa.scalar(value, pa.string())
    except (ValueError, InvalidOperation, OverflowError):
        raise _bad(
            f"'{value[:100]}' is not a value of column '{name}' ({arrow_type}).", "filter"
        ) from None
    raise _bad(
        f"Column '{name}' ({arrow_type}) can only be filtered with contains or is_null.", "filter"
    )


def _as_text(column: pa.ChunkedArray, name: str) -> pa.ChunkedArray:
    if _nested(column.type):
        raise _bad(
            f"Column '{name}' holds nested values; filter it with is_null or not_null.", "filter"
        )
    try:
        if pa.types.is_timestamp(column.type):  # as shown: 2024-01-02T03:04:05…
            return pc.strftime(column, format="%Y-%m-%dT%H:%M:%S")
        return pc.cast(column, pa.string())
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
        raise _bad(
            f"Column '{name}' ({column.type}) cannot be searched as text.", "filter"
        ) from None


def _mask(table: pa.Table, f: Filter) -> pa.ChunkedArray:
    column = table.column(f.column)
    name = table.schema.names[f.column]
    if f.op == "is_null":
        return pc.is_null(column)
    if f.op == "not_null":
        return pc.is_valid(column)
    assert f.value is not None
    if f.op == "contains":
        return pc.match_substring(_as_text(column, name), f.value, ignore_case=True)
    if _nested(column.type):
        raise _bad(
            f"Column '{name}' holds nested values; filter it with is_null or not_null.", "filter"
        )
    scalar = _scalar(f.value, column.type, name)
    if pa.types.is_decimal(column.type):
        column = pc.cast(column, pa.float64())
    if pa.types.is_timestamp(column.type) and column.type.unit != "us":
        column = pc.cast(column, pa.timestamp("us", tz=column.type.tz), safe=False)
    return _COMPARE[f.op](column, scalar)


def apply_view(table: pa.Table, view: View) -> pa.Table:
    """The rows of ``table`` that pass every filter, in the view's order."""
    if view.filters:
        mask = None
        for f in view.filters:
            m = _mask(table, f)
            mask = m if mask is None else pc.and_kleene(mask, m)
        table = table.filter(pc.fill_null(mask, False))
    if view.sort is not None:
        column = table.column(view.sort.column)
        if _nested(column.type):
            name = table.schema.names[view.sort.column]
            raise _bad(f"Column '{name}' holds nested values and cannot be sorted.", "sort")
        order = "descending" if view.sort.descending else "ascending"
        indices = pc.array_sort_indices(
            column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column,
            order=order,
            null_placement="at_end",
        )
        table = table.take(indices)
    return table


def view_table(job_id: Any, view: View) -> pa.Table:
    """The job's whole result as the view shows it (filtered, in its order)."""
    return apply_view(store.open_result(job_id).read_all(), view)


def read_view_page(
    job_id: Any, view: View, offset: int, limit: int
) -> tuple[list[list[Any]], int | None, int]:
    """A page of the view: rows, the next offset (None after the last) and the view's row
    count."""
    table = view_table(job_id, view)
    page = table.slice(offset, limit)
    following = offset + page.num_rows
    return (
        store.json_rows(page),
        (following if following < table.num_rows else None),
        table.num_rows,
    )


# --- charts -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChartRequest:
    x: int
    y: tuple[int, ...]
    aggregation: str
    points: int


def parse_chart(
    x: str | None,
    y: Sequence[str],
    aggregation: str | None,
    points: str | None,
    names: Sequence[str],
) -> ChartRequest:
    if not x:
        raise _bad("A chart needs an X column: x=<column>.", "x")
    agg = (aggregation or "none").lower()
    if agg not in AGGREGATIONS:
        raise _bad(
            f"aggregation must be one of {', '.join(AGGREGATIONS)}, got '{agg[:50]}'.",
            "aggregation",
        )
    if not y and agg != "count":
        raise _bad("A chart needs at least one Y column: y=<column>.", "y")
    if len(y) > MAX_SERIES:
        raise _bad(f"A chart may have at most {MAX_SERIES} Y columns, got {len(y)}.", "y")
    count = DEFAULT_POINTS
    if points:
        try:
            count = int(points)
        except ValueError:
            count = 0
        if not 2 <= count <= MAX_POINTS:
            raise _bad(
                f"points must be a whole number between 2 and {MAX_POINTS}, got '{points[:50]}'.",
                "points",
            )
    return ChartRequest(
        column_index(names, x, "x"), tuple(column_index(names, n, "y") for n in y), agg, count
    )


def _numeric(column: pa.ChunkedArray, name: str) -> pa.ChunkedArray:
    t = pa.types
    if t.is_integer(column.type) or t.is_floating(column.type) or t.is_decimal(column.type):
        return pc.cast(column, pa.float64())
    if t.is_boolean(column.type):
        return pc.cast(column, pa.int8()).cast(pa.float64())
    raise _bad(f"Column '{name}' ({column.type}) is not numeric; choose a numeric Y column.", "y")


def _number(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _x_kind(arrow_type: pa.DataType) -> str:
    t = pa.types
    if t.is_integer(arrow_type) or t.is_floating(arrow_type) or t.is_decimal(arrow_type):
        return "number"
    if t.is_date(arrow_type) or t.is_timestamp(arrow_type):
        return "time"
    return "text"


_SECOND = 1_000_000
_MICROSECOND_STEPS = [
    _SECOND * n
    for n in (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200)
] + [86_400 * _SECOND * d for d in (1, 2, 7, 14, 30, 91, 182, 365, 730, 1826, 3652)]
_DAY_STEPS = [1, 2, 7, 14, 30, 91, 182, 365, 730, 1826, 3652]


def _bins(x: pa.ChunkedArray, kind: str, points: int) -> tuple[pa.Array, pa.Array, float]:
    """Equal-width bins over X: each row's bin number, each bin's start (as X's type), and
    the bin width in X's units (days for dates, microseconds for timestamps)."""
    if kind == "time":
        unit = pa.int32() if pa.types.is_date(x.type) else pa.int64()
        if pa.types.is_timestamp(x.type) and x.type.unit != "us":
            x = pc.cast(x, pa.timestamp("us", tz=x.type.tz), safe=False)
        numbers = pc.cast(pc.cast(x, unit), pa.float64())
    else:
        numbers = pc.cast(x, pa.float64())
    bounds = pc.min_max(numbers)
    low, high = bounds["min"].as_py(), bounds["max"].as_py()
    width = (high - low) / points if high > low else 1.0
    if kind == "time":  # a calendar-like width (a minute, an hour, a day…), bins aligned to it
        steps = _DAY_STEPS if pa.types.is_date(x.type) else _MICROSECOND_STEPS
        for step in steps:
            start = math.floor(low / step) * step
            if math.floor((high - start) / step) < points:
                width, low = float(step), float(start)
                break
        else:
            width = float(math.ceil(width))
    raw = pc.floor(pc.divide(pc.subtract(numbers, low), width))
    bucket = pc.cast(pc.min_element_wise(raw, points - 1), pa.int64())
    starts = [low + i * width for i in range(points)]
    if kind == "time":
        if pa.types.is_date(x.type):
            start_array = pa.array([int(s) for s in starts], pa.int32()).cast(pa.date32())
        else:
            start_array = pa.array([int(s) for s in starts], pa.int64()).cast(
                pa.timestamp("us", tz=x.type.tz)
            )
    else:
        start_array = pa.array(starts, pa.float64())
    return bucket, start_array, width


def chart_data(job_id: Any, view: View, chart: ChartRequest) -> dict[str, Any]:
    table = apply_view(store.open_result(job_id).read_all(), view)
    names = table.schema.names
    x = table.column(chart.x)
    if _nested(x.type):
        raise _bad(f"Column '{names[chart.x]}' holds nested values; choose another X column.", "x")
    ys = [_numeric(table.column(i), names[i]) for i in chart.y]
    series_names = [names[i] for i in chart.y] or ["count"]
    kind = _x_kind(x.type)
    body: dict[str, Any] = {
        "x_column": {"name": names[chart.x], "kind": kind},
        "aggregation": chart.aggregation,
        "rows": table.num_rows,
        "binned": False,
        "bin_width": None,
        "sampled": False,
        "groups": 0,
        "omitted_groups": 0,
    }
    if chart.aggregation == "none":
        order = (
            pc.array_sort_indices(x.combine_chunks(), null_placement="at_end")
            if kind != "text"
            else None
        )
        taken = table.num_rows
        indices = order
        if table.num_rows > chart.points:
            step = table.num_rows / chart.points
            picks = pa.array([int(i * step) for i in range(chart.points)], pa.int64())
            indices = picks if order is None else order.take(picks)
            taken = chart.points
            body["sampled"] = True
        xs = x if indices is None else x.take(indices)
        columns = [y if indices is None else y.take(indices) for y in ys]
        body["groups"] = taken
        body["x"] = store.json_column(xs)
        body["series"] = [
            {"name": n, "values": [_number(v) for v in c.to_pylist()]}
            for n, c in zip(series_names, columns, strict=True)
        ]
        return body

    arrays: dict[str, Any] = {"x": x}
    for k, y in enumerate(ys):
        arrays[f"y{k}"] = y
    work = pa.table(arrays)
    key = "x"
    starts = None
    distinct = pc.count_distinct(x, mode="all").as_py()
    if kind != "text" and distinct > chart.points and pc.count(x).as_py() > 0:
        bucket, starts, width = _bins(x, kind, chart.points)
        work = work.append_column("bin", bucket)
        key = "bin"
        body["binned"] = True
        body["bin_width"] = width
    agg = _ARROW_AGG[chart.aggregation]
    specs: list[tuple[Any, ...]] = [(f"y{k}", agg) for k in range(len(ys))]
    if not ys:
        specs = [([], "count_all")]
    grouped = work.group_by(key, use_threads=False).aggregate(specs)
    value_columns = [f"y{k}_{agg}" for k in range(len(ys))] or ["count_all"]
    body["groups"] = grouped.num_rows
    if kind == "text" and grouped.num_rows > chart.points:
        ranking = pc.fill_null(pc.cast(grouped.column(value_columns[0]), pa.float64()), -math.inf)
        keep = pc.array_sort_indices(ranking, order="descending").slice(0, chart.points)
        body["omitted_groups"] = grouped.num_rows - chart.points
        grouped = grouped.take(keep)
    order = pc.array_sort_indices(grouped.column(key).combine_chunks(), null_placement="at_end")
    grouped = grouped.take(order)
    if key == "bin":
        assert starts is not None
        xs = starts.take(pc.cast(grouped.column("bin"), pa.int64()))
        if pa.types.is_floating(xs.type) and pa.types.is_integer(x.type):
            xs = pc.round(xs, 6)
    else:
        xs = grouped.column("x")
    body["x"] = store.json_column(xs)
    body["series"] = [
        {"name": n, "values": [_number(v) for v in grouped.column(c).to_pylist()]}
        for n, c in zip(series_names, value_columns, strict=True)
    ]
    return body
