"""Statement latency through Tessera vs plain PySpark: ``python bench/statements.py``.

In one run: starts a real worker (``celery -A webapp worker --pool threads``, its own warm
Spark) on PostgreSQL (database ``tessera_bench_statements`` on the server of
``DATABASE_URL``, created and migrated when missing) and Redis (``CELERY_BROKER_URL``,
default ``redis://127.0.0.1:6379/14``); generates a parquet table (default 5M rows) with
plain PySpark in this process and registers it in the catalog; then measures

1. ``SELECT 1``: ``POST /sessions/{id}/statements {"sql", "wait"}`` round trips (Django
   test client in process → Redis → worker → Spark → results store → answer), against
   ``spark.sql("SELECT 1").toArrow()`` in a warm plain session;
2. an aggregate over the table through Tessera (same request; then the result page) against
   the same SQL over the same files in the warm plain session.

Both Sparks use the machine's cores (``local[*]``) and never run at the same time. It
reports; it does not assert.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness import plain_spark, setup_django, start_worker, stop_worker

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_BROKER = "redis://127.0.0.1:6379/14"
WORKER = "bench-worker"
AGGREGATE = (
    "SELECT k % 10 AS g, count(*) AS n, sum(v) AS total, avg(v) AS mean, "
    "count(DISTINCT s) AS names FROM {table} GROUP BY k % 10 ORDER BY g"
)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db-name", default="tessera_bench_statements")
    parser.add_argument("--rows", type=int, default=5_000_000, help="rows of the generated table")
    parser.add_argument("-n", "--requests", type=int, default=30, help="SELECT 1 round trips")
    parser.add_argument("--aggregates", type=int, default=5, help="aggregate runs per side")
    parser.add_argument("--keep-data", action="store_true", help="keep the generated data dir")
    return parser.parse_args()


def summary(name: str, seconds: list[float]) -> dict[str, Any]:
    ms = sorted(s * 1000 for s in seconds)
    return {
        "name": name,
        "n": len(ms),
        "p50": statistics.median(ms),
        "mean": statistics.fmean(ms),
        "min": ms[0],
        "max": ms[-1],
    }


def timed(action: Callable[[], Any], times: int) -> list[float]:
    result = []
    for _ in range(times):
        started = time.perf_counter()
        action()
        result.append(time.perf_counter() - started)
    return result


def main() -> None:
    args = parse_args()
    bench = setup_django(args.db_name, broker=DEFAULT_BROKER, prefix="tessera-bench-")
    data_dir, external, client, user = bench.data_dir, bench.external, bench.client, bench.user

    from catalog import services as catalog_services
    from catalog.models import Catalog, Database
    from core.schema import Schema

    # The worker starts first: its JVM comes up while this process generates the data.
    worker = start_worker(WORKER, data_dir / "worker.log")
    try:
        run(args, client, user, worker, external, catalog_services, Catalog, Database, Schema)
    finally:
        stop_worker(worker, WORKER)
        if args.keep_data:
            print(f"data kept in {data_dir}")
        else:
            shutil.rmtree(data_dir, ignore_errors=True)


def run(
    args: argparse.Namespace,
    client: Any,
    user: Any,
    worker: subprocess.Popen[bytes],
    external: Path,
    catalog_services: Any,
    catalog_model: Any,
    database_model: Any,
    schema_class: Any,
) -> None:
    from jobs.models import Worker

    spark = plain_spark(external.parent / "plain-warehouse")
    path = external / "rows"
    started = time.perf_counter()
    spark.range(args.rows).selectExpr(
        "id", "id % 1000 AS k", "rand(42) * 100 AS v", "concat('name', id % 97) AS s"
    ).write.parquet(str(path))
    generated = time.perf_counter() - started
    size = sum(f.stat().st_size for f in path.rglob("*.parquet")) / 1e6

    catalog_model.objects.filter(name_key="bench_stmt").delete()
    catalog = catalog_services.catalog_create(user=user, name="bench_stmt", default_database="d")
    database = database_model.objects.get(catalog=catalog, name="d")
    catalog_services.table_create(
        user=user,
        database=database,
        name="rows",
        schema=schema_class.from_dict(
            {
                "columns": [
                    {"name": "id", "data_type": "BIGINT"},
                    {"name": "k", "data_type": "BIGINT"},
                    {"name": "v", "data_type": "DOUBLE"},
                    {"name": "s", "data_type": "STRING"},
                ]
            }
        ),
        options={"connector": "parquet", "path": str(path)},
    )

    deadline = time.monotonic() + 180
    while not Worker.objects.filter(hostname__startswith="bench-worker@").exists():
        if worker.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("the worker did not start; see its log")
        time.sleep(0.2)
    response = client.post(
        "/api/v1/sessions", {"current_catalog": "bench_stmt"}, content_type="application/json"
    )
    assert response.status_code == 201, response.content
    session = response.json()["id"]

    def statement(sql: str) -> dict[str, Any]:
        answer = client.post(
            f"/api/v1/sessions/{session}/statements",
            {"sql": sql, "wait": 30},
            content_type="application/json",
        )
        assert answer.status_code == 201, answer.content
        job: dict[str, Any] = answer.json()
        assert job["status"] == "FINISHED", job
        return job

    def statement_and_page(sql: str) -> None:
        job = statement(sql)
        page = client.get(f"/api/v1/jobs/{job['id']}/result?page_size=100")
        assert page.status_code == 200, page.content

    # Warm both sides: the worker's first statements pay Spark's first-query costs.
    first_started = time.perf_counter()
    statement("SELECT 1")
    first = time.perf_counter() - first_started
    for _ in range(5):
        statement("SELECT 1")
        spark.sql("SELECT 1").toArrow()
    table = "bench_stmt.d.rows"
    statement(AGGREGATE.format(table=table))
    spark.read.parquet(str(path)).createOrReplaceTempView("plain_rows")
    plain_sql = AGGREGATE.format(table="plain_rows")
    spark.sql(plain_sql).toArrow()

    results = [
        summary(
            "SELECT 1, Tessera (POST + wait)", timed(lambda: statement("SELECT 1"), args.requests)
        ),
        summary(
            "SELECT 1, Tessera (POST + wait + result page)",
            timed(lambda: statement_and_page("SELECT 1"), args.requests),
        ),
        summary(
            "SELECT 1, plain PySpark (warm session)",
            timed(lambda: spark.sql("SELECT 1").toArrow(), args.requests),
        ),
        summary(
            "SELECT 1, plain PySpark (newSession each)",
            timed(lambda: spark.newSession().sql("SELECT 1").toArrow(), args.requests),
        ),
        summary(
            f"aggregate over {args.rows:,} rows, Tessera",
            timed(lambda: statement_and_page(AGGREGATE.format(table=table)), args.aggregates),
        ),
        summary(
            f"aggregate over {args.rows:,} rows, plain PySpark",
            timed(lambda: spark.sql(plain_sql).toArrow(), args.aggregates),
        ),
    ]
    spark.stop()

    print(
        f"\nmachine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, load {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    print(f"data: {args.rows:,} rows, {size:.0f} MB parquet, generated in {generated:.1f} s")
    print(f"first Tessera SELECT 1 after the worker registered: {first * 1000:.0f} ms\n")
    print("| measurement | n | p50 ms | mean ms | min ms | max ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {r['name']} | {r['n']} | {r['p50']:.1f} | {r['mean']:.1f} | "
            f"{r['min']:.1f} | {r['max']:.1f} |"
        )
    by_name = {r["name"]: r for r in results}

    tessera_one = by_name["SELECT 1, Tessera (POST + wait)"]["p50"]
    plain_one = by_name["SELECT 1, plain PySpark (warm session)"]["p50"]
    tessera_agg = by_name[f"aggregate over {args.rows:,} rows, Tessera"]["p50"]
    plain_agg = by_name[f"aggregate over {args.rows:,} rows, plain PySpark"]["p50"]
    print("\nratios (p50, Tessera / plain PySpark):")
    print(f"  SELECT 1:  {tessera_one / plain_one:.2f}x ({tessera_one - plain_one:+.0f} ms)")
    print(f"  aggregate: {tessera_agg / plain_agg:.2f}x ({tessera_agg - plain_agg:+.0f} ms)")


if __name__ == "__main__":
    main()
