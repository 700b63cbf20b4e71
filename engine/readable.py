"""Every value Spark returns can be read: columns Arrow or Python cannot carry, as Spark's
own string form.

Two kinds of value stop a result on its way from Spark to a reader:

- types Spark's Arrow conversion refuses (``UNSUPPORTED_DATA_TYPE_FOR_ARROW_CONVERSION``):
  year-month intervals, calendar intervals (``make_interval``), and anything nesting them.
  Such a column is cast to ``STRING`` in Spark before ``toArrow``: its values are Spark's
  own text (``INTERVAL '1-2' YEAR TO MONTH``), as Spark SQL's CLI and Thrift server show
  them.
- dates and timestamps beyond Python's years 1 … 9999 (``DATE'999999-03-18'``): Arrow holds
  them, but no Python reader (the REST pages, the downloads, the Python client's
  ``to_pylist``) can. When the collected table (or the stored file of a result written
  without collecting) has one, the statement's rows are computed again with those columns
  cast to ``STRING`` (Spark's ``+999999-03-18``); the rare second run costs nothing
  otherwise.

A column served as text keeps its Spark type in ``data_type`` and says
``"served_as": "STRING"`` in the result's columns (docs/api.md, "Result values").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]
from pyspark.sql import DataFrame
from pyspark.sql import types as st

SERVED_AS = "served_as"
TEXT = "STRING"

# Python's dates and datetimes: days and microseconds since 1970-01-01 (UTC).
_FIRST_DAY, _LAST_DAY = -719_162, 2_932_896  # 0001-01-01, 9999-12-31
_FIRST_MICRO = _FIRST_DAY * 86_400_000_000
_LAST_MICRO = (_LAST_DAY + 1) * 86_400_000_000 - 1
_UNIT_MICROS = {"s": 1_000_000, "ms": 1_000, "us": 1, "ns": 0}


def _arrow_convertible(data_type: st.DataType) -> bool:
    from pyspark.sql.pandas.types import to_arrow_type

    try:
        to_arrow_type(data_type, timezone="UTC")
    except Exception:  # PySparkTypeError: UNSUPPORTED_DATA_TYPE_FOR_ARROW_CONVERSION
        return False
    return True


def unconvertible_columns(frame: DataFrame) -> list[int]:
    """Positions of the columns whose type Spark's Arrow conversion refuses."""
    return [
        index
        for index, field in enumerate(frame.schema.fields)
        if not _arrow_convertible(field.dataType)
    ]


def as_text(frame: DataFrame, positions: Iterable[int]) -> DataFrame:
    """``frame`` with the columns at ``positions`` cast to ``STRING`` (Spark's own text of
    each value); the columns keep their names and order, duplicate names included."""
    chosen = set(positions)
    if not chosen:
        return frame
    names = list(frame.columns)
    plain = frame.toDF(*[f"_c{index}" for index in range(len(names))])
    # SQL text, not Column objects: the same call on classic Spark and on Spark Connect.
    projected = plain.selectExpr(
        *[
            f"CAST(_c{index} AS STRING) AS _c{index}" if index in chosen else f"_c{index}"
            for index in range(len(names))
        ]
    )
    return projected.toDF(*names)


def _beyond(values: pa.Array | pa.ChunkedArray, low: int, high: int) -> bool:
    bounds = pc.min_max(values)
    least, most = bounds["min"].as_py(), bounds["max"].as_py()
    return least is not None and (least < low or most > high)


def _leaves(column: pa.Array | pa.ChunkedArray) -> Iterable[pa.Array | pa.ChunkedArray]:
    """The column's values and every nested value (list elements, map keys and items,
    struct fields), each as one array."""
    types = pa.types
    kind = column.type
    if isinstance(column, pa.ChunkedArray):
        for chunk in column.chunks:
            yield from _leaves(chunk)
        return
    if types.is_map(kind):
        yield from _leaves(column.keys)
        yield from _leaves(column.items)
    elif types.is_list(kind) or types.is_large_list(kind) or types.is_fixed_size_list(kind):
        yield from _leaves(column.flatten())
    elif types.is_struct(kind):
        for index in range(kind.num_fields):
            yield from _leaves(column.field(index))
    else:
        yield column


def beyond_python(column: pa.Array | pa.ChunkedArray) -> bool:
    """Whether a date or timestamp in ``column`` (at any depth) is outside Python's years
    1 … 9999, so that reading it as Python values would fail."""
    for leaf in _leaves(column):
        kind = leaf.type
        if pa.types.is_date32(kind) and _beyond(leaf.cast(pa.int32()), _FIRST_DAY, _LAST_DAY):
            return True
        if pa.types.is_timestamp(kind):
            per = _UNIT_MICROS[kind.unit]
            values = leaf.cast(pa.int64())
            if per == 0:  # nanoseconds always fit
                continue
            if _beyond(values, _FIRST_MICRO // per, _LAST_MICRO // per):
                return True
    return False


def arrow_result(frame: DataFrame, limit: int) -> tuple[pa.Table, list[int]]:
    """The first ``limit + 1`` rows of ``frame`` as Arrow, every value readable; and the
    positions of the columns served as Spark's text."""
    text = unconvertible_columns(frame)
    table = to_arrow(as_text(frame, text).limit(limit + 1))
    beyond = [
        index
        for index, column in enumerate(table.columns)
        if index not in text and beyond_python(column)
    ]
    if beyond:
        text = sorted({*text, *beyond})
        table = to_arrow(as_text(frame, text).limit(limit + 1))
    return table, text


def to_arrow(frame: DataFrame) -> pa.Table:
    """``frame.toArrow()``, also when a nullable struct holds a NOT NULL field (PySpark's
    own raises ``ArrowInvalid``): the same schema, nested NOT NULL included."""
    from engine.arrow_fields import conform_chunked
    from engine.large_results import arrow_schema
    from engine.typing import nullable_inside

    try:
        return frame.toArrow()
    except pa.ArrowInvalid:
        exact = arrow_schema(frame.sparkSession, frame)
    # Positional names: ``to`` matches columns by name, and names may repeat.
    names = [f"_c{index}" for index in range(len(frame.columns))]
    loose = st.StructType(
        [
            st.StructField(name, nullable_inside(f.dataType), f.nullable, f.metadata)
            for name, f in zip(names, frame.schema, strict=True)
        ]
    )
    table = frame.toDF(*names).to(loose).toArrow()
    columns = [conform_chunked(c, f.type) for c, f in zip(table.columns, exact, strict=True)]
    return pa.Table.from_arrays(columns, schema=exact)


def large_result(
    spark: Any, frame: DataFrame, job_id: Any, limit: int, columns: list[dict[str, Any]]
) -> dict[str, Any]:
    """``engine.large_results.write_large_result`` with every value readable: as
    ``arrow_result``, the stored file is checked (memory-mapped, on this machine) and the
    rows written again with the far columns as text when it holds such a value."""
    from engine import large_results
    from results.store import open_result

    text = unconvertible_columns(frame)
    result = large_results.write_large_result(
        spark, as_text(frame, text), job_id, limit, flag_columns(columns, text)
    )
    stored = open_result(job_id).read_all()
    beyond = [
        index
        for index, column in enumerate(stored.columns)
        if index not in text and beyond_python(column)
    ]
    if not beyond:
        return result
    text = sorted({*text, *beyond})
    return large_results.write_large_result(
        spark, as_text(frame, text), job_id, limit, flag_columns(columns, text)
    )


def flag_columns(columns: list[dict[str, Any]], positions: Iterable[int]) -> list[dict[str, Any]]:
    """The result's column descriptions, those served as text flagged."""
    chosen = set(positions)
    return [
        {**column, SERVED_AS: TEXT} if index in chosen else column
        for index, column in enumerate(columns)
    ]
