"""Pipelines over live DataFrames (``tests/engine/worker/test_pipeline_dataframes.py``):
``from_data_frame`` and ``create_temporary_view`` of a DataFrame of ``t_env.spark`` copy
nothing (``'connector' = 'dataframe'``, engine/dataframes.py)."""

from __future__ import annotations

from typing import Any

from tessera import Schema, TableDescriptor
from tessera.errors import ForbiddenSqlError, NotFoundError, TesseraError


def _managed() -> Any:
    return TableDescriptor.for_managed().build()


def transform(frame: Any) -> Any:
    """ids through a Python UDF (id * id + 1), summed per id % 3: PySpark only (a UDF,
    withColumn, groupBy). The tests run it on plain PySpark for the expected rows."""
    from pyspark.sql import functions as F

    square_plus_one = F.udf(lambda x: x * x + 1, "bigint")
    return (
        frame.withColumn("bucket", F.col("id") % 3)
        .withColumn("value", square_plus_one(F.col("id")))
        .groupBy("bucket")
        .agg(F.sum("value").alias("total"), F.count("*").alias("n"))
    )


def udf_write(t_env: Any, source: str, target: str, inserted: str) -> None:
    """The transformed DataFrame, registered without a copy: CTAS into ``target`` and
    INSERT INTO (``execute_insert``) the existing ``inserted``."""
    table = t_env.from_data_frame(transform(t_env.from_path(source).to_data_frame()))
    t_env.create_table(target, _managed(), table).wait()
    table.execute_insert(inserted).wait()


def view_join(t_env: Any, view: str, source: str, target: str) -> None:
    """``create_temporary_view(view, df)``, then SQL joining it with a catalog table."""
    names = t_env.spark.createDataFrame(
        [(0, "zero"), (1, "one"), (2, "two"), (9, "nine")], "id BIGINT, name STRING"
    )
    t_env.create_temporary_view(view, names)
    query = t_env.sql_query(
        f"SELECT s.id, v.name FROM {source} AS s JOIN {view} AS v ON s.id = v.id"
    )
    t_env.create_table(target, _managed(), query).wait()


def with_schema(t_env: Any, target: str) -> None:
    """A given Schema applied to the DataFrame: its physical column cast (BIGINT → INT),
    a computed column computed, the DataFrame's other column left out."""
    from pyspark.sql import functions as F

    frame = t_env.spark.range(4).withColumn("ignored", F.lit("x"))
    schema = (
        Schema.new_builder()
        .column("id", "INT")
        .column_by_expression("label", "concat('n', CAST(id * 10 AS STRING))")
        .build()
    )
    t_env.create_table(target, _managed(), t_env.from_data_frame(frame, schema)).wait()


def leak(t_env: Any, record: str) -> None:
    """Register a DataFrame and write down its hidden view, its table and this job, for
    a later pipeline to try them (``snoop``)."""
    table = t_env.from_data_frame(t_env.spark.range(3))
    path = table.sql.split(" FROM ", 1)[1].strip()
    rows = t_env.sql_query(f"SELECT * FROM {path}").to_pandas()  # readable here
    assert len(rows) == 3, rows
    from tessera.sql import string_literal

    hidden = [
        t.name for t in t_env.spark.catalog.listTables() if t.name.startswith("__tessera_df_")
    ]
    assert len(hidden) == 1, hidden
    view, job = hidden[0], str(t_env._run.job.pk)
    record_sql = (
        f"SELECT {string_literal(view)} AS view, {string_literal(path)} AS path, "
        f"{string_literal(job)} AS job"
    )
    t_env.create_table(record, _managed(), t_env.sql_query(record_sql)).wait()


def _refused(what: str, call: Any, *kinds: type[BaseException]) -> str:
    try:
        call()
    except kinds as exc:
        return f"{what}: {type(exc).__name__}"
    raise AssertionError(f"{what} was not refused")


def snoop(t_env: Any, view: str, path: str, job: str, target: str) -> None:
    """A second pipeline of the same session tries the first one's DataFrame: its hidden
    view (not in this SparkSession), its table (dropped), and a table declared over the
    view (another job's: refused at planning; under this job's id: nothing to read)."""
    from pyspark.errors import AnalysisException

    seen = [
        _refused("spark.table", lambda: t_env.spark.table(view).count(), AnalysisException),
        _refused("table", lambda: t_env.from_path(path).to_pandas(), NotFoundError),
        _refused(
            "declared for the first job",
            lambda: t_env.execute_sql(
                "CREATE TEMPORARY TABLE stolen (id BIGINT) WITH ('connector' = 'dataframe', "
                f"'view' = '{view}', 'job' = '{job}')"
            ),
            ForbiddenSqlError,
        ),
    ]
    own = str(t_env._run.job.pk)
    t_env.execute_sql(
        "CREATE TEMPORARY TABLE borrowed (id BIGINT) WITH ('connector' = 'dataframe', "
        f"'view' = '{view}', 'job' = '{own}')"
    ).wait()
    seen.append(
        _refused(
            "declared for this job", lambda: t_env.from_path("borrowed").to_pandas(), TesseraError
        )
    )
    text = "|".join(seen)
    t_env.create_table(target, _managed(), t_env.sql_query(f"SELECT '{text}' AS seen")).wait()


def register_and_fail(t_env: Any, view: str) -> None:
    """Registers a DataFrame and a view over it, then raises: both go all the same."""
    t_env.create_temporary_view(view, t_env.spark.range(2))
    t_env.from_data_frame(t_env.spark.range(3))
    raise RuntimeError("failed after registering")


def register_and_wait(t_env: Any, view: str, target: str) -> None:
    """Registers a DataFrame (and a view over it), then runs a CTAS that takes minutes:
    canceled mid-way by the tests, which meanwhile try the DataFrame from outside."""
    from tests.pipelines.cases import SLOW_QUERY

    t_env.create_temporary_view(view, t_env.spark.range(5))
    t_env.create_table(target, _managed(), t_env.sql_query(SLOW_QUERY)).wait(timeout=600)
