"""Conversions that keep facts (issue 35): nullability through uploads and CTAS, a declared
NOT NULL checked on uploaded data, TIMESTAMP_NTZ without a time-zone shift, maps as dicts,
a non-null field inside a nullable struct. Plain PySpark's own conversion is the oracle."""

from __future__ import annotations

import datetime as dt
import os
import time

import pandas as pd  # type: ignore[import-untyped]
import pyarrow as pa  # type: ignore[import-untyped]
import pytest

from tests.client.conftest import tessera

pytestmark = [pytest.mark.slow, pytest.mark.spark]


def _nullable(t_env, path):
    schema = t_env.from_path(path).get_schema()
    return {c.name: c.data_type for c in schema.columns}


def test_arrow_not_null_is_kept_by_the_upload_and_by_ctas(t_env):
    arrow = pa.table(
        {"id": pa.array([1, 2], pa.int64()), "s": pa.array(["a", None])},
        schema=pa.schema([pa.field("id", pa.int64(), nullable=False), ("s", pa.string())]),
    )
    table = t_env.from_arrow(arrow)
    types = {c.name: c.data_type for c in table.get_schema().columns}
    assert types == {"id": "BIGINT NOT NULL", "s": "STRING"}
    t_env.create_table("kept", tessera.TableDescriptor.for_managed().build(), table).wait()
    assert _nullable(t_env, "kept") == {"id": "BIGINT NOT NULL", "s": "STRING"}
    assert sorted(r.id for r in t_env.from_path("kept").collect()) == [1, 2]


def test_from_data_frame_keeps_not_null(t_env, plain_spark):
    frame = plain_spark.createDataFrame([(1, "a")], "id BIGINT NOT NULL, s STRING")
    types = {c.name: c.data_type for c in t_env.from_data_frame(frame).get_schema().columns}
    assert types == {"id": "BIGINT NOT NULL", "s": "STRING"}


def test_from_pandas_with_a_not_null_schema_keeps_it(t_env):
    schema = tessera.Schema.new_builder().column("id", "BIGINT NOT NULL").build()
    table = t_env.from_pandas(pd.DataFrame({"id": [1, 2]}), schema)
    assert [c.data_type for c in table.get_schema().columns] == ["BIGINT NOT NULL"]


def test_a_declared_not_null_is_checked_on_the_uploaded_data(t_env):
    schema = (
        tessera.Schema.new_builder().column("id", "BIGINT NOT NULL").column("v", "DOUBLE").build()
    )
    frame = pd.DataFrame({"id": [1, 2, None], "v": [0.5, 1.5, 2.5]})  # pandas: id 3.0 is NaN
    with pytest.raises(tessera.ValidationError) as error:
        t_env.from_pandas(frame, schema)
    assert error.value.code == "VALIDATION_ERROR"
    assert "`id`" in error.value.message and "row 3" in error.value.message
    assert error.value.details["column"] == "id" and error.value.details["row"] == 3


def test_arrow_not_null_field_holding_nulls_is_refused(t_env):
    data = pa.array([1, None, 3], pa.int64())
    arrow = pa.Table.from_arrays([data], schema=pa.schema([pa.field("k", pa.int64(), False)]))
    with pytest.raises(tessera.ValidationError) as error:
        t_env.from_arrow(arrow)
    assert "`k`" in error.value.message and "row 2" in error.value.message


def test_a_non_null_field_inside_a_nullable_struct_can_be_uploaded(t_env, plain_spark):
    ddl = "id BIGINT NOT NULL, st STRUCT<x: BIGINT NOT NULL>"
    frame = plain_spark.createDataFrame([(1, {"x": 5}), (2, None)], ddl)
    with pytest.raises(pa.ArrowInvalid):
        frame.toArrow()  # PySpark itself cannot: why the client works around it
    rows = list(t_env.from_data_frame(frame).order_by("id").collect())
    assert [(r.id, r.st) for r in rows] == [(1, {"x": 5}), (2, None)]


def test_maps_come_back_as_dicts_as_pyspark_gives_them(t_env, plain_spark):
    query = "SELECT map('a', 1, 'b', 2) AS m, CAST(NULL AS MAP<STRING, INT>) AS n"
    row = next(t_env.sql_query(query).collect())
    theirs = plain_spark.sql(query).collect()[0]
    assert row.m == theirs.m == {"a": 1, "b": 2} and row.n is None
    frame = t_env.sql_query(query).to_pandas()
    assert frame["m"].tolist() == plain_spark.sql(query).toPandas()["m"].tolist()


@pytest.fixture
def los_angeles():
    """The client process in America/Los_Angeles (what a shift would show)."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "America/Los_Angeles"
    time.tzset()
    yield
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()


def test_timestamp_ntz_keeps_its_wall_clock_value_in_any_client_time_zone(
    t_env, plain_spark, los_angeles
):
    query = (
        "SELECT TIMESTAMP_NTZ'2024-01-01 10:00:00' AS t, "
        "TIMESTAMP_NTZ'1900-06-30 23:59:59.123456' AS old, TIMESTAMP_NTZ'2100-01-01' AS late"
    )
    wanted = [
        dt.datetime(2024, 1, 1, 10, 0),
        dt.datetime(1900, 6, 30, 23, 59, 59, 123456),
        dt.datetime(2100, 1, 1),
    ]
    row = next(t_env.sql_query(query).collect())
    assert list(row) == wanted == list(plain_spark.sql(query).collect()[0])
    frame = t_env.sql_query(query).to_pandas()
    assert [frame[c].iloc[0].to_pydatetime() for c in ("t", "old", "late")] == wanted
    copied = t_env.sql_query(query).to_data_frame(plain_spark)
    assert [f.dataType.simpleString() for f in copied.schema] == ["timestamp_ntz"] * 3
    assert list(copied.collect()[0]) == wanted


def test_to_data_frame_keeps_types_and_nullability_as_pyspark_would(t_env, plain_spark):
    query = (
        "SELECT id, CAST(id AS DECIMAL(12, 3)) AS d, map('k', id) AS m, "
        "named_struct('x', id) AS st FROM range(3)"
    )
    ours = t_env.sql_query(query).to_data_frame(plain_spark)
    theirs = plain_spark.sql(query)
    assert ours.schema.simpleString() == theirs.schema.simpleString()
    assert sorted(ours.collect()) == sorted(theirs.collect())


RESULT_SQL = (
    "SELECT id, CAST(NULL AS STRING) AS maybe, "
    "named_struct('x', id, 'y', CAST(NULL AS STRING)) AS s, "
    "array(id, id + 1) AS a, map('k', id) AS m FROM range(1, 3) ORDER BY id"
)


def test_a_result_keeps_nullability_as_pyspark_gives_it(t_env, plain_spark):
    theirs = plain_spark.sql(RESULT_SQL)
    result = t_env.execute_sql(RESULT_SQL)
    arrow = result.to_arrow()
    assert arrow.schema == theirs.toArrow().schema, (arrow.schema, theirs.toArrow().schema)
    assert not arrow.schema.field("s").type.field("x").nullable
    assert not arrow.schema.field("a").type.value_field.nullable
    assert not arrow.schema.field("m").type.item_field.nullable
    schema = result.get_resolved_schema()
    assert [c.nullable for c in schema.columns] == [f.nullable for f in theirs.schema.fields]
    assert [c.data_type for c in schema.columns][2:] == [
        "STRUCT<x: BIGINT NOT NULL, y: STRING>",
        "ARRAY<BIGINT NOT NULL>",
        "MAP<STRING NOT NULL, BIGINT NOT NULL>",
    ]
    assert "`id` BIGINT NOT NULL" in str(schema) and "`maybe` STRING,\n" in str(schema)
    frame = result.to_pandas()
    assert frame.dtypes.tolist() == theirs.toPandas().dtypes.tolist()
    # A query's schema (planned with LIMIT 0) says the same.
    probed = t_env.sql_query(RESULT_SQL).get_schema()
    assert [c.nullable for c in probed.columns] == [f.nullable for f in theirs.schema.fields]


def test_a_not_null_field_in_a_nullable_struct_comes_back_as_pyspark_types_it(t_env, plain_spark):
    query = (
        "SELECT id, IF(id = 1, NULL, named_struct('x', id)) AS ns, "
        "array(IF(id = 2, NULL, named_struct('z', id))) AS items FROM range(1, 3) ORDER BY id"
    )
    theirs = plain_spark.sql(query)
    with pytest.raises(pa.ArrowInvalid):
        theirs.toArrow()  # PySpark's own conversion fails; its types are the oracle
    from pyspark.sql.pandas.types import to_arrow_schema

    arrow = t_env.execute_sql(query).to_arrow()
    assert arrow.schema == to_arrow_schema(theirs.schema, timezone="UTC")
    assert [tuple(r) for r in t_env.execute_sql(query).collect()] == [
        (r.id, None if r.ns is None else r.ns.asDict(), [i and i.asDict() for i in r.items])
        for r in theirs.collect()
    ]


@pytest.mark.parametrize("fmt", ["delta", "parquet"])
def test_a_not_null_column_after_ctas_reads_back_as_spark_reads_it(
    t_env, plain_spark, tmp_path, fmt
):
    """The catalog keeps NOT NULL either way; a read of the table says what Spark's reader
    says: plain PySpark reading the table's Delta log (NOT NULL kept, nested too), or
    parquet files of the same rows (Spark's file reader makes every column nullable)."""
    query = "SELECT id, CAST(id AS STRING) AS label, array(id) AS a FROM range(1, 4)"
    t_env.execute_sql(f"CREATE TABLE made USING {fmt} AS {query}").wait()
    assert _nullable(t_env, "made") == {
        "id": "BIGINT NOT NULL",
        "label": "STRING NOT NULL",
        "a": "ARRAY<BIGINT NOT NULL> NOT NULL",
    }
    if fmt == "delta":  # the table's own Delta log, read by plain PySpark
        from catalog.models import Table

        location = Table.objects.get(name="made").location
        theirs = plain_spark.read.format("delta").load(location).select("id", "label", "a")
    else:  # plain PySpark's own parquet files of the same rows
        plain_spark.sql(query).write.parquet(str(tmp_path / fmt))
        theirs = plain_spark.read.parquet(str(tmp_path / fmt))
    theirs = theirs.orderBy("id")
    result = t_env.execute_sql("SELECT id, label, a FROM made ORDER BY id")
    columns = result.get_resolved_schema().columns
    assert [c.nullable for c in columns] == [f.nullable for f in theirs.schema.fields]
    assert result.to_arrow().schema == theirs.toArrow().schema
    if fmt == "delta":
        assert [c.nullable for c in columns] == [False, False, False]
