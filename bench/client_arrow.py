"""The Python client's data path: ``python bench/client_arrow.py``.

Runs the product as ``make run`` does (``bench/latency.py``'s ``Stack``: gunicorn and one
Celery worker with its own warm Spark, the ``make run`` defaults or ``--config pg-redis``)
and, in this process, plain PySpark (``local[*]``) with the same driver memory. Then, on the
same data in the same run, each side in turn (the two Sparks never work at the same time):

1. **to_pandas** of a ``--rows`` x 10-column result (BIGINT, INT, DOUBLE, DECIMAL(18, 2),
   STRING x 2, BOOLEAN, DATE, TIMESTAMP, TIMESTAMP_NTZ, made by ``range``):
   ``tessera.connect(...).sql_query(q).to_pandas()`` (a statement with a ``row_limit``, the
   result as an Arrow IPC stream from ``GET /jobs/{id}/result.arrow``) against
   ``spark.sql(q).toPandas()``; the two frames are compared (shape, sums, a sample of rows).
2. **from_pandas** of that frame: ``t_env.from_pandas(pdf)`` (an Arrow IPC upload streamed
   to the server, a temporary table over it) against ``spark.createDataFrame(pdf)``; each
   followed by the same aggregate over the data (so both have really taken it in), timed
   with and without that aggregate.

Each figure is the median of ``--repeat`` runs (after one warm-up run each). It prints a
markdown table with the ratios Tessera / plain and the issue's target (<= 1.5x); it never
asserts a bound. docs/benchmarks.md, "Python client", keeps the figures.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import plain_spark
from latency import (
    Stack,
    commit_measured,
    config_of,
    flush_redis,
    fresh_pg_database,
    machine_line,
    terminate_as_interrupt,
)

TARGET = 1.5
DRIVER_MEMORY = "6g"


def query(rows: int) -> str:
    return (
        "SELECT id, CAST(id % 100000 AS INT) AS small, id / 7.0D AS ratio, "
        "CAST(id / 100 AS DECIMAL(18, 2)) AS amount, concat('customer-', id) AS name, "
        "CAST(id % 97 AS STRING) AS code, id % 2 = 0 AS even, "
        "date_add(DATE'2020-01-01', CAST(id % 3650 AS INT)) AS day, "
        "timestamp_seconds(1600000000 + id) AS at, "
        "CAST(timestamp_seconds(1600000000 + id) AS TIMESTAMP_NTZ) AS local_at "
        f"FROM range(0, {rows}, 1, 8)"
    )


AGGREGATE = "SELECT count(*) AS n, sum(id) AS ids, sum(amount) AS amounts, max(name) AS top FROM {}"


def timed(action: Callable[[], Any]) -> tuple[float, Any]:
    began = time.perf_counter()
    value = action()
    return time.perf_counter() - began, value


def median_of(repeat: int, action: Callable[[], Any]) -> tuple[float, Any]:
    """One warm-up run, then the median of ``repeat`` runs; the last run's value."""
    action()
    times, value = [], None
    for _ in range(repeat):
        seconds, value = timed(action)
        times.append(seconds)
    return statistics.median(times), value


def same_frames(ours: Any, theirs: Any) -> str:
    """'equal' or what differs (shape, column sums, the first and last rows)."""
    if ours.shape != theirs.shape or list(ours.columns) != list(theirs.columns):
        return f"shape {ours.shape} vs {theirs.shape}"
    # An instant comes zone-aware (UTC) from the client, naive in the session's zone (UTC
    # here) from toPandas() (docs/python.md): compared as naive UTC.
    ours = ours.assign(at=ours["at"].dt.tz_convert("UTC").dt.tz_localize(None))
    ours = ours.sort_values("id").reset_index(drop=True)
    theirs = theirs.sort_values("id").reset_index(drop=True)
    for column in ("id", "small", "amount"):
        if ours[column].sum() != theirs[column].sum():
            return f"sum of {column}"
    for index in (0, len(ours) // 2, len(ours) - 1):
        if [str(v) for v in ours.iloc[index]] != [str(v) for v in theirs.iloc[index]]:
            return f"row {index}: {list(ours.iloc[index])} vs {list(theirs.iloc[index])}"
    return "equal"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--config", choices=("embedded", "pg-redis"), default="embedded")
    return parser.parse_args(argv)


def run(args: argparse.Namespace, stack: Stack, spark: Any) -> list[tuple[str, float, float]]:
    import tessera

    sql = query(args.rows)
    url = f"http://127.0.0.1:{stack.port}"
    figures: list[tuple[str, float, float]] = []
    with tessera.connect(url, stack.token) as t_env:
        # Temporary tables (what from_pandas makes) live under the current catalog and database.
        t_env.execute_sql("CREATE CATALOG IF NOT EXISTS bench").wait()
        t_env.execute_sql("CREATE DATABASE IF NOT EXISTS bench.d").wait()
        t_env.use_catalog("bench")
        t_env.use_database("d")
        ours_s, ours = median_of(args.repeat, lambda: t_env.sql_query(sql).to_pandas())
        plain_s, plain = median_of(args.repeat, lambda: spark.sql(sql).toPandas())
        print(f"to_pandas: {same_frames(ours, plain)}", flush=True)
        figures.append((f"to_pandas, {args.rows:,} rows x 10 columns", ours_s, plain_s))
        del ours

        up_s, _ = median_of(args.repeat, lambda: t_env.from_pandas(plain))
        local_s, _ = median_of(args.repeat, lambda: spark.createDataFrame(plain))
        figures.append(("from_pandas (data taken in)", up_s, local_s))

        def tessera_both() -> Any:
            t_env.drop_temporary_view("bench_uploaded")
            t_env.create_temporary_view("bench_uploaded", plain)
            return t_env.sql_query(AGGREGATE.format("bench_uploaded")).to_pandas()

        def plain_both() -> Any:
            spark.createDataFrame(plain).createOrReplaceTempView("uploaded")
            return spark.sql(AGGREGATE.format("uploaded")).toPandas()

        both_s, ours_agg = median_of(args.repeat, tessera_both)
        plain_both_s, plain_agg = median_of(args.repeat, plain_both)
        agreed = [str(v) for v in ours_agg.iloc[0]] == [str(v) for v in plain_agg.iloc[0]]
        print(f"from_pandas aggregate: {'equal' if agreed else 'DIFFERS'}", flush=True)
        figures.append(("from_pandas + an aggregate over it", both_s, plain_both_s))
    return figures


def report(figures: list[tuple[str, float, float]], args: argparse.Namespace) -> str:
    lines = [
        f"median of {args.repeat} runs after a warm-up; config {args.config}; "
        f"driver memory {DRIVER_MEMORY} on both sides",
        "",
        "| | Tessera client | plain PySpark | ratio | target |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, ours, plain in figures:
        ratio = ours / plain if plain else float("inf")
        mark = "met" if ratio <= TARGET else "missed"
        lines.append(
            f"| {name} | {ours:.2f} s | {plain:.2f} s | {ratio:.2f}x | <= {TARGET}x {mark} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    print(f"bench/client_arrow.py at {commit_measured()}; {machine_line()}", flush=True)
    config = config_of(args.config)
    data_dir = Path(tempfile.mkdtemp(prefix="tessera-bench-client-"))
    plain_dir = Path(tempfile.mkdtemp(prefix="tessera-bench-client-plain-"))
    os.environ["TESSERA_SPARK_DRIVER_MEMORY"] = DRIVER_MEMORY
    stack = spark = None
    with terminate_as_interrupt():
        try:
            if config.database_url:
                fresh_pg_database(config.database_url)
            if config.broker_url:
                flush_redis(config.broker_url)
            external = data_dir / "external"
            external.mkdir()
            stack = Stack(config, data_dir, [external])
            stack.env["TESSERA_SPARK_DRIVER_MEMORY"] = DRIVER_MEMORY
            print(f"worker ready in {stack.start():.1f} s", flush=True)
            spark = plain_spark(
                plain_dir / "warehouse",
                "local[*]",
                **{
                    "spark.driver.memory": DRIVER_MEMORY,
                    "spark.sql.execution.arrow.pyspark.enabled": "true",
                },
            )
            figures = run(args, stack, spark)
        finally:
            if spark is not None:
                spark.stop()
            if stack is not None:
                stack.stop()
            shutil.rmtree(data_dir, ignore_errors=True)
            shutil.rmtree(plain_dir, ignore_errors=True)
    print(report(figures, args))


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        print("\ninterrupted: everything it started is stopped", file=sys.stderr)
        sys.exit(130)
