"""Small pipelines the worker tests run (``EXECUTE PIPELINE 'tests.pipelines.cases:…'``)."""

from __future__ import annotations

from typing import Any

SLOW_QUERY = (
    "SELECT id, id * 7 AS seven, sha2(CAST(id AS STRING), 256) AS digest "
    "FROM range(0, 3000000000, 1, 4)"
)


def ctas(t_env: Any, target: str, n: str = "5") -> None:
    """CREATE TABLE target AS the numbers 0 … n-1 and their squares."""
    query = t_env.sql_query(f"SELECT id, id * id AS square FROM range({int(n)})")
    t_env.create_table(target, _managed(), query).wait()


def _managed() -> Any:
    from tessera import TableDescriptor

    return TableDescriptor.for_managed().build()


def fails(t_env: Any, message: str) -> None:
    _deeper(message)


def _deeper(message: str) -> None:
    raise ValueError(message)


def slow(t_env: Any, target: str) -> None:
    """A CTAS that takes minutes: canceled mid-way by the tests."""
    t_env.create_table(target, _managed(), t_env.sql_query(SLOW_QUERY)).wait(timeout=600)


def live(t_env: Any, source: str, target: str) -> None:
    """to_data_frame is a live PySpark DataFrame: transformed on the worker, written back."""
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    frame = t_env.from_path(source).to_data_frame()
    assert isinstance(frame, DataFrame), type(frame)
    doubled = frame.withColumn("doubled", F.col("id") * 2).where(F.col("id") % 2 == 0)
    t_env.create_table(target, _managed(), t_env.from_data_frame(doubled)).wait()


def temporary(t_env: Any, view: str, target: str) -> None:
    """The session's temporary view is visible: copied into a managed table."""
    t_env.create_table(target, _managed(), t_env.from_path(view)).wait()


def lists(t_env: Any, target: str) -> None:
    """Catalog reads through t_env, written as a one-row table."""
    catalog = t_env.get_current_catalog()
    tables = ",".join(t_env.list_tables())
    rows = t_env.sql_query("SELECT 1 AS one").to_pandas()
    text = f"{catalog}|{tables}|{int(rows['one'][0])}"
    t_env.create_table(target, _managed(), t_env.sql_query(f"SELECT '{text}' AS seen")).wait()


NOT_A_FUNCTION = 42


def stream_in(t_env: Any, source: str) -> None:
    """A SELECT of a streaming source inside a pipeline run in a streaming session: refused
    (a pipeline is a batch program), raised here by ``wait``."""
    t_env.execute_sql(f"SELECT id FROM {source}").wait(timeout=120)
