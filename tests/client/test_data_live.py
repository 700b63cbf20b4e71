"""DataFrames in and whole results out: ``POST /sessions/{id}/uploads`` (Arrow IPC in) and
``GET /jobs/{id}/result.arrow`` with ``row_limit`` (Arrow IPC out)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pandas as pd  # type: ignore[import-untyped]
import pyarrow as pa  # type: ignore[import-untyped]
import pytest

from tests.client.conftest import connect_as, tessera

pytestmark = [pytest.mark.slow, pytest.mark.spark]


def test_from_pandas_round_trip(t_env):
    frame = pd.DataFrame(
        {
            "id": [1, 2, 3],
            "name": ["a", None, "c`'\""],
            "price": [Decimal("1.10"), None, Decimal("3.30")],
            "at": pd.to_datetime(["2024-01-01T00:00:00Z", None, "2024-03-01T12:30:00Z"]),
        }
    )
    table = t_env.from_pandas(frame)
    back = table.order_by("id").to_pandas()
    assert back["id"].tolist() == [1, 2, 3]
    assert back["name"].tolist()[0] == "a" and back["name"].tolist()[2] == "c`'\""
    assert t_env.list_temporary_tables()  # session data


def test_from_arrow_with_nested_types_and_a_schema(t_env):
    arrow = pa.table(
        {
            "id": pa.array([1, 2], pa.int64()),
            "tags": pa.array([["x", "y"], None], pa.list_(pa.string())),
            "attrs": pa.array([{"k": 1}, None], pa.struct([("k", pa.int32())])),
            "m": pa.array([[("a", 1)], []], pa.map_(pa.string(), pa.int64())),
            "d": pa.array([dt.date(2024, 1, 2), None], pa.date32()),
        }
    )
    schema = (
        tessera.Schema.new_builder()
        .column("id", "BIGINT")
        .column("tags", "ARRAY<STRING>")
        .column("attrs", "STRUCT<k: INT>")
        .column("m", "MAP<STRING, BIGINT>")
        .column("d", "DATE")
        .column_by_expression("id2", "id * 2")
        .build()
    )
    table = t_env.from_arrow(arrow, schema)
    rows = list(table.order_by("id").collect())
    assert rows[0]["tags"] == ["x", "y"] and rows[0]["id2"] == 2
    assert rows[1]["tags"] is None


def test_create_temporary_view_of_a_data_frame(t_env):
    t_env.create_temporary_view("frame", pd.DataFrame({"x": [1, 2]}))
    assert sorted(r.x for r in t_env.from_path("frame").collect()) == [1, 2]
    assert any(view.endswith("`frame`") for view in t_env.list_temporary_views())
    # A view, as its name says: dropped as one (the uploaded data stays with the session).
    assert t_env.drop_temporary_view("frame") is True
    assert t_env.drop_temporary_view("frame") is False


def test_data_needs_a_current_catalog_and_nothing_is_uploaded_without_one(server, settings):
    settings.TESSERA_PERSONAL_CATALOG = ""  # else a fresh connection starts in her own catalog
    with connect_as(server, "alice") as env:
        with pytest.raises(tessera.ValidationError, match="use_catalog"):
            env.from_pandas(pd.DataFrame({"x": [1]}))
        assert env._http.get(f"{env._path}/uploads")["items"] == []


def test_from_data_frame(t_env, plain_spark):
    spark_df = plain_spark.createDataFrame([(1, "a"), (2, "b")], "id BIGINT, s STRING")
    table = t_env.from_data_frame(spark_df)
    assert sorted(tuple(r) for r in table.collect()) == [(1, "a"), (2, "b")]


def test_result_too_large_is_an_error_not_a_truncation(t_env):
    t_env.row_limit = 10
    with pytest.raises(tessera.ResultTooLargeError) as error:
        t_env.sql_query("SELECT id FROM range(100)").to_pandas()
    assert error.value.code == "RESULT_TOO_LARGE"


def test_upload_over_the_limit_is_refused(t_env, settings):
    settings.TESSERA_UPLOAD_MAX_BYTES = 1024
    big = pa.table({"s": ["x" * 100] * 1000})
    with pytest.raises(tessera.PayloadTooLargeError) as error:
        t_env.from_arrow(big)
    assert error.value.code == "PAYLOAD_TOO_LARGE"
    assert t_env.list_temporary_tables() == []


def test_every_type_round_trips_as_plain_pyspark_returns_it(t_env, plain_spark):
    utc = dt.UTC
    arrow = pa.table(
        {
            "id": pa.array([1, 2, 3], pa.int64()),
            "b": pa.array([True, None, False]),
            "i8": pa.array([1, None, -3], pa.int8()),
            "i16": pa.array([300, None, -3], pa.int16()),
            "i32": pa.array([70000, None, -3], pa.int32()),
            "f32": pa.array([1.5, None, -0.25], pa.float32()),
            "f64": pa.array([1e300, None, -2.5], pa.float64()),
            "dec": pa.array([Decimal("12345678.90"), None, Decimal("-0.01")], pa.decimal128(10, 2)),
            "s": pa.array(["ä`'\"", None, ""]),
            "bin": pa.array([b"\x00\xff", None, b""]),
            "d": pa.array([dt.date(2024, 2, 29), None, dt.date(1900, 1, 1)]),
            "ts": pa.array(
                [
                    dt.datetime(2024, 1, 2, 3, 4, 5, 678901, tzinfo=utc),
                    None,
                    dt.datetime(1970, 1, 1, tzinfo=utc),
                ],
                pa.timestamp("us", tz="UTC"),
            ),
            "ts_ntz": pa.array(
                [dt.datetime(2024, 1, 2, 3, 4, 5), None, dt.datetime(2000, 12, 31, 23, 59, 59)],
                pa.timestamp("us"),
            ),
            "arr": pa.array([[1, None, 3], None, []], pa.list_(pa.int32())),
            "m": pa.array([[("a", 1.5)], None, []], pa.map_(pa.string(), pa.float64())),
            "st": pa.array(
                [{"x": 1, "y": ["p"]}, None, {"x": None, "y": None}],
                pa.struct([("x", pa.int64()), ("y", pa.list_(pa.string()))]),
            ),
        }
    )
    ours = t_env.from_arrow(arrow).order_by("id").to_arrow()
    # plain PySpark told the types (it would read a zone-less timestamp as TIMESTAMP)
    ddl = (
        "id BIGINT, b BOOLEAN, i8 TINYINT, i16 SMALLINT, i32 INT, f32 FLOAT, f64 DOUBLE, "
        "dec DECIMAL(10, 2), s STRING, bin BINARY, d DATE, ts TIMESTAMP, ts_ntz TIMESTAMP_NTZ, "
        "arr ARRAY<INT>, m MAP<STRING, DOUBLE>, st STRUCT<x: BIGINT, y: ARRAY<STRING>>"
    )
    theirs = plain_spark.createDataFrame(arrow, schema=ddl).orderBy("id").toArrow()
    assert ours.column_names == theirs.column_names == arrow.column_names
    for name in arrow.column_names:
        assert ours.column(name).to_pylist() == theirs.column(name).to_pylist(), name
    frame = t_env.from_arrow(arrow).order_by("id").to_pandas()
    assert frame["dec"].tolist()[0] == Decimal("12345678.90")
    assert frame["arr"].tolist()[1] is None


def test_two_million_rows_to_pandas(t_env):
    frame = t_env.sql_query(
        "SELECT id, id * 2 AS twice, CAST(id AS STRING) AS s FROM range(2000000)"
    ).to_pandas()
    assert len(frame) == 2_000_000
    assert frame["id"].sum() == 2_000_000 * 1_999_999 // 2
    assert (frame["twice"] == frame["id"] * 2).all()
    assert frame["s"].iloc[1_999_999] == "1999999"


def test_every_value_spark_returns_reaches_the_client(t_env):
    """Issue 36: intervals of both kinds and dates beyond Python's years, through
    ``result.arrow``: day-time intervals as ``timedelta``, the rest as Spark's own text."""
    result = t_env.execute_sql(
        "SELECT INTERVAL '1-2' YEAR TO MONTH AS ym, INTERVAL '1 02:00:03.5' DAY TO SECOND AS dt, "
        "DATE'999999-03-18' AS far, DATE'2024-02-29' AS near"
    )
    rows = list(result.collect())
    assert rows == [
        (
            "INTERVAL '1-2' YEAR TO MONTH",
            dt.timedelta(days=1, hours=2, seconds=3.5),
            "+999999-03-18",
            dt.date(2024, 2, 29),
        )
    ]
    frame = result.to_pandas()
    assert frame["far"].tolist() == ["+999999-03-18"]
