"""Property: any Arrow table of the types Spark has goes up (``from_arrow``) and comes back
(``collect``, ``to_arrow``, ``to_data_frame``) with the values, types and top-level
nullability plain PySpark gives for the same table (the oracle: ``createDataFrame`` of the
Arrow table, then ``collect``).

The number of examples is a Hypothesis profile: ``client-roundtrip`` (12) by default,
``client-roundtrip-full`` (200) with ``TESSERA_ROUNDTRIP_PROFILE=client-roundtrip-full``
(and ``--timeout 3600``: pytest-timeout counts the whole property).
"""

from __future__ import annotations

import datetime as dt
import os
from decimal import Decimal
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = [pytest.mark.slow, pytest.mark.spark]

_COMMON = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile("client-roundtrip", _COMMON, max_examples=12)
settings.register_profile("client-roundtrip-full", _COMMON, max_examples=200)
PROFILE = settings.get_profile(os.environ.get("TESSERA_ROUNDTRIP_PROFILE", "client-roundtrip"))

UTC = dt.UTC
# Dates and times before 1970 and after 2038 included.
DATES = st.dates(dt.date(1000, 1, 1), dt.date(9999, 12, 31))
TIMES = st.datetimes(dt.datetime(1900, 1, 1), dt.datetime(2200, 12, 31))
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=8)


def _decimal(precision: int, scale: int) -> st.SearchStrategy[Decimal]:
    bound = 10 ** (precision - scale) - 1
    return st.decimals(-bound, bound, places=scale, allow_nan=False, allow_infinity=False)


@st.composite
def _types(draw: Any, depth: int = 0) -> tuple[pa.DataType, st.SearchStrategy[Any]]:
    """An Arrow type and a strategy of its (non-null) values."""
    atomic: list[tuple[pa.DataType, st.SearchStrategy[Any]]] = [
        (pa.bool_(), st.booleans()),
        (pa.int8(), st.integers(-128, 127)),
        (pa.int16(), st.integers(-(2**15), 2**15 - 1)),
        (pa.int32(), st.integers(-(2**31), 2**31 - 1)),
        (pa.int64(), st.integers(-(2**63), 2**63 - 1)),
        (pa.float64(), st.floats(allow_nan=False)),
        (pa.string(), TEXT),
        (pa.binary(), st.binary(max_size=8)),
        (pa.date32(), DATES),
        (pa.timestamp("us"), TIMES),
        (pa.timestamp("us", tz="UTC"), TIMES.map(lambda t: t.replace(tzinfo=UTC))),
    ]
    precision = draw(st.integers(1, 38))
    scale = draw(st.integers(0, precision))
    atomic.append((pa.decimal128(precision, scale), _decimal(precision, scale)))
    if depth >= 2 or draw(st.integers(0, 3)) > 0:
        chosen: tuple[pa.DataType, st.SearchStrategy[Any]] = draw(st.sampled_from(atomic))
        return chosen
    kind = draw(st.sampled_from(["list", "struct", "map"]))
    inner, values = draw(_types(depth + 1))
    nullable_values = st.none() | values
    if kind == "list":
        return pa.list_(inner), st.lists(nullable_values, max_size=3)
    if kind == "map":
        return (
            pa.map_(pa.string(), inner),
            st.dictionaries(TEXT, nullable_values, max_size=3).map(lambda d: list(d.items())),
        )
    other, other_values = draw(_types(depth + 1))
    struct = pa.struct([("a", inner), ("b", other)])
    return struct, st.fixed_dictionaries({"a": nullable_values, "b": st.none() | other_values})


@st.composite
def tables(draw: Any) -> pa.Table:
    columns = draw(st.integers(1, 4))
    rows = draw(st.integers(0, 4))
    fields = [pa.field("i", pa.int64(), nullable=False)]
    arrays = [pa.array(range(rows), pa.int64())]
    for index in range(columns):
        arrow_type, values = draw(_types())
        nullable = draw(st.booleans())
        cells = st.none() | values if nullable else values
        data = draw(st.lists(cells, min_size=rows, max_size=rows))
        fields.append(pa.field(f"c{index}", arrow_type, nullable=nullable))
        arrays.append(pa.array(data, arrow_type))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def _normal(value: Any, arrow_type: pa.DataType) -> Any:
    """A collected value in one form whichever side collected it: a ``TIMESTAMP`` as a UTC
    instant (PySpark collects it as the naive local wall clock, the client as an aware UTC
    value), a struct as a dict (PySpark's ``Row``; the client gives dicts, as Arrow does), a
    map as a dict."""
    if value is None:
        return None
    types = pa.types
    if types.is_timestamp(arrow_type) and arrow_type.tz is not None:
        return value.astimezone(UTC)  # a naive value is taken as local time
    if types.is_struct(arrow_type):
        fields = [arrow_type.field(i) for i in range(arrow_type.num_fields)]
        get = value.asDict() if hasattr(value, "asDict") else value
        return {f.name: _normal(get[f.name], f.type) for f in fields}
    if types.is_map(arrow_type):
        return {
            _normal(k, arrow_type.key_type): _normal(v, arrow_type.item_type)
            for k, v in value.items()
        }
    if types.is_list(arrow_type):
        return [_normal(v, arrow_type.value_type) for v in value]
    return value


def _rows(rows: Any, schema: pa.Schema) -> list[list[Any]]:
    return [[_normal(v, f.type) for v, f in zip(row, schema, strict=True)] for row in rows]


def _oracle_rows(spark: Any, table: pa.Table) -> list[list[Any]]:
    from pyspark.sql.pandas.types import from_arrow_schema

    frame = spark.createDataFrame(table, schema=from_arrow_schema(table.schema, True))
    return _rows(frame.orderBy("i").collect(), table.schema)


@PROFILE
@given(table=tables())
def test_tables_round_trip_as_plain_pyspark_converts_them(t_env, plain_spark, table):
    registered = t_env.from_arrow(table)
    types = {c.name: c.data_type for c in registered.get_schema().columns}
    uploaded = registered.order_by("i")
    for field in table.schema:
        assert types[field.name].endswith(" NOT NULL") == (not field.nullable), (field, types)
    result = uploaded.execute()
    assert _rows(result.collect(), table.schema) == _oracle_rows(plain_spark, table)
    # Arrow out: the same values as Arrow in (timestamps in microseconds, maps as pairs).
    back = result.to_arrow()
    for field in table.schema:
        assert back.column(field.name).to_pylist() == table.column(field.name).to_pylist()
    # A PySpark DataFrame out: as PySpark itself made it from the Arrow table.
    copied = uploaded.to_data_frame(plain_spark)
    assert _rows(copied.orderBy("i").collect(), table.schema) == _oracle_rows(plain_spark, table)
