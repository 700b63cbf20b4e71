"""The worker's own check of tables over a pipeline's DataFrames (engine/dataframes.py),
behind the planner's: a relation with ``'connector' = 'dataframe'`` registers only in the
SparkSession its pipeline job claimed, which must hold the hidden view."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from core.errors import CoreError
from core.planner import ColumnPlan, RelationPlan
from core.planner.sources import DataFrameRefused
from engine import dataframes, registration

pytestmark = [pytest.mark.spark]


@pytest.fixture
def spark(plain_spark: Any) -> Any:
    session = plain_spark.newSession()
    session.conf.set("spark.sql.variable.substitute", "false")
    return session


def relation(view: str, job: str, physical: str = "`id` INT", computed: bool = False) -> Any:
    columns = [ColumnPlan("id", "physical")]
    if computed:
        columns.append(ColumnPlan("twice", "computed", expression="id * 2"))
    return RelationPlan(
        "t0",
        ("c", "d", "frame"),
        "table",
        format="dataframe",
        options={"view": view, "job": job},
        physical_schema=physical,
        columns=tuple(columns),
        temporary=True,
    )


def test_only_the_claiming_pipelines_session_reads_its_data_frame(spark: Any) -> None:
    job = str(uuid.uuid4())
    dataframes.claim(spark, job)
    view = dataframes.hide(spark, spark.range(3), job)
    assert view.startswith("__tessera_df_") and len(view) == len("__tessera_df_") + 32
    frame = dataframes.read(spark, relation(view, job), "`c`.`d`.`frame`")
    assert [(r["id"], type(r["id"]).__name__) for r in frame.collect()] == [
        (0, "int"),
        (1, "int"),
        (2, "int"),
    ]
    assert dict(frame.dtypes) == {"id": "int"}
    # Another pipeline's id, another session, an unclaimed session: refused.
    with pytest.raises(DataFrameRefused, match="not that running pipeline"):
        dataframes.read(spark, relation(view, str(uuid.uuid4())), "`frame`")
    other = spark.newSession()
    with pytest.raises(DataFrameRefused):
        dataframes.read(other, relation(view, job), "`frame`")
    dataframes.claim(other, job)  # even claimed for the job: the view is not in it
    with pytest.raises(CoreError, match="no longer registered"):
        dataframes.read(other, relation(view, job), "`frame`")
    # A name that is not a generated one is never looked up.
    with pytest.raises(DataFrameRefused):
        dataframes.read(spark, relation("range", job), "`frame`")


def test_registration_goes_through_the_check_and_computes_columns(spark: Any) -> None:
    job = str(uuid.uuid4())
    dataframes.claim(spark, job)
    view = dataframes.hide(spark, spark.range(3).withColumnRenamed("id", "ID"), job)
    registration.register_table(spark, relation(view, job, computed=True))
    assert [tuple(r) for r in spark.table("t0").orderBy("id").collect()] == [
        (0, 0),
        (1, 2),
        (2, 4),
    ]
    with pytest.raises(CoreError, match="does not have"):
        dataframes.read(spark, relation(view, job, physical="`missing` INT"), "`frame`")
    stranger = spark.newSession()
    with pytest.raises(DataFrameRefused):
        registration.register_table(stranger, relation(view, job))


def test_a_frame_of_another_session_or_not_a_frame_is_refused(spark: Any) -> None:
    job = str(uuid.uuid4())
    dataframes.claim(spark, job)
    with pytest.raises(CoreError, match="another SparkSession"):
        dataframes.hide(spark, spark.newSession().range(1), job)
    with pytest.raises(CoreError, match="PySpark DataFrame"):
        dataframes.hide(spark, [1, 2], job)
    with pytest.raises(DataFrameRefused):
        dataframes.hide(spark, spark.range(1), str(uuid.uuid4()))


@pytest.mark.django_db
def test_release_drops_the_hidden_views_and_the_claim(spark: Any) -> None:
    job = str(uuid.uuid4())
    dataframes.claim(spark, job)
    view = dataframes.hide(spark, spark.range(2), job)
    spark.range(1).createTempView("kept")
    dataframes.release(spark, job, uuid.uuid4())
    names = {t.name for t in spark.catalog.listTables() if t.isTemporary}
    assert view not in names and "kept" in names
    assert dataframes.owner(spark) is None
    with pytest.raises(DataFrameRefused):
        dataframes.read(spark, relation(view, job), "`frame`")


def test_the_columns_of_any_data_frame_declare_a_table(spark: Any) -> None:
    """``spark_columns`` (Spark's own DDL of ``df.schema``, nullable, no comments) is a
    column list the planner takes, whatever the types and names."""
    import dataclasses

    from core.planner import plan_statement
    from tests.core.test_planner_support import context, sample_catalog

    frame = spark.sql(
        "SELECT id, CAST(id AS DECIMAL(10, 2)) AS `amount €`, named_struct('a', id, 'b c', "
        "'x') AS s, array(id) AS xs, map('k', 1.5D) AS m, TIMESTAMP'2026-01-01 00:00:00' AS at, "
        "TIMESTAMP_NTZ'2026-01-01 00:00:00' AS ntz, X'01' AS raw, `id` AS `back``tick` "
        "FROM range(1)"
    )
    columns = dataframes.spark_columns(frame)
    job = str(uuid.uuid4())
    sql = (
        f"CREATE TEMPORARY TABLE t ({columns}) WITH ('connector' = 'dataframe', "
        f"'view' = '__tessera_df_{'0' * 32}', 'job' = '{job}')"
    )
    ctx = dataclasses.replace(context(), pipeline_job=job)
    plan = plan_statement(sql, sample_catalog(), ctx)
    names = [c["name"] for c in plan.args["schema"]["columns"]]
    assert names == ["id", "amount €", "s", "xs", "m", "at", "ntz", "raw", "back`tick"]
