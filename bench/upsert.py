"""Upsert of 1 % changed rows into a keyed table: Tessera vs plain PySpark rewriting the
whole table: ``python bench/upsert.py`` (``--rows 1000000`` for a quick run).

In one run: starts a real worker (``celery -A webapp worker --pool threads``, its own warm
Spark) on PostgreSQL (database ``tessera_bench_upsert`` on the server of ``DATABASE_URL``,
created and migrated when missing) and Redis (``BENCH_BROKER_URL``, default
``redis://127.0.0.1:6379/10``). Through Tessera it creates the managed table ``t`` (``id
BIGINT`` primary key, three more columns, ``'write.mode' = 'upsert'``) with ``--rows`` rows
and a changelog table ``changes`` with 1 % of that: updates (``+U``) of existing keys, a few
inserts (``+I``) of new keys and deletes (``-D``). Then, alternately, ``--runs`` times each:

1. plain PySpark in this process, from the same inputs (the table's current files and the
   changelog's): the last row per key (a window over the changes), the current rows whose key
   did not change (anti join) plus the upserted rows, ``df.write.mode("overwrite")`` of the
   whole table into a directory of its own;
2. Tessera: ``POST /sessions/{id}/statements`` with ``INSERT INTO t SELECT * FROM changes``
   (the table is in upsert mode: merge by key, copy-on-write, commit), timed until
   ``GET /jobs/{id}`` says FINISHED.

Applying the same changelog again leaves the same table (a fixed point after the first run),
so every run does the same work. The first run's results are compared (row count and a hash
of every row). Both Sparks use the machine's cores (``local[*]``) and never run at the same
time. It prints seconds (median of the runs) and the ratio; it does not assert.
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
from pathlib import Path
from typing import Any

from harness import plain_spark, setup_django, start_worker, stop_worker

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_BROKER = "redis://127.0.0.1:6379/10"
CATALOG = "bench_upsert"
WORKER = "bench-upsert-worker"
TABLE = f"{CATALOG}.d.t"
CHANGES = f"{CATALOG}.d.changes"
FILL = (
    "SELECT id, id % 1000 AS a, rand(42) * 100 AS b, concat('name', id % 97) AS s "
    "FROM range(0, {rows})"
)
# 1 %: 90 % of it updates of existing keys, 5 % inserts of new keys, 5 % deletes.
CHANGELOG = (
    "SELECT id * 100 + 7 AS id, -1 AS a, 0.5 AS b, 'updated' AS s, '+U' AS op "
    "FROM range(0, {updates}) "
    "UNION ALL SELECT {rows} + id, -2, 1.5, 'inserted', '+I' FROM range(0, {inserts}) "
    "UNION ALL SELECT id * 100 + 51, 0, 0.0, '', '-D' FROM range(0, {deletes})"
)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--db-name", default="tessera_bench_upsert")
    parser.add_argument("--rows", type=int, default=10_000_000, help="rows of the keyed table")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per side")
    parser.add_argument("--keep-data", action="store_true", help="keep the data dir")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    bench = setup_django(args.db_name, broker=DEFAULT_BROKER, prefix="tessera-bench-upsert-")
    data_dir, client, user = bench.data_dir, bench.client, bench.user

    from catalog import services as catalog_services
    from catalog.models import Catalog

    Catalog.objects.filter(name_key=CATALOG).delete()
    catalog_services.catalog_create(user=user, name=CATALOG, default_database="d")

    worker = start_worker(WORKER, data_dir / "worker.log")
    try:
        run(args, client, worker, data_dir)
    finally:
        stop_worker(worker, WORKER)
        Catalog.objects.filter(name_key=CATALOG).delete()
        if args.keep_data:
            print(f"data kept in {data_dir}")
        else:
            shutil.rmtree(data_dir, ignore_errors=True)


def plain_upsert(spark: Any, base: str, changes: str, out: str) -> None:
    """The same result in plain PySpark, the whole table rewritten."""
    from pyspark.sql import Window
    from pyspark.sql import functions as sf

    current = spark.read.parquet(base)
    log = spark.read.parquet(changes).withColumn("seq", sf.monotonically_increasing_id())
    last = (
        log.filter(sf.col("op") != "-U")
        .withColumn("n", sf.row_number().over(Window.partitionBy("id").orderBy(sf.desc("seq"))))
        .filter("n = 1")
    )
    kept = current.join(last.select("id"), "id", "left_anti")
    upserted = last.filter(sf.col("op").isin("+I", "+U")).select(*current.columns)
    kept.unionByName(upserted).write.mode("overwrite").parquet(out)


def run(args: argparse.Namespace, client: Any, worker: subprocess.Popen[bytes], data: Path) -> None:
    from catalog.models import Table
    from jobs.models import JobEvent, Worker

    spark = plain_spark(data / "plain-warehouse")
    deadline = time.monotonic() + 180
    while not Worker.objects.filter(hostname__startswith=f"{WORKER}@").exists():
        if worker.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the worker did not start; see {data / 'worker.log'}")
        time.sleep(0.2)
    response = client.post("/api/v1/sessions", {}, content_type="application/json")
    assert response.status_code == 201, response.content
    session = response.json()["id"]

    def statement(sql: str) -> tuple[float, str]:
        started = time.perf_counter()
        answer = client.post(
            f"/api/v1/sessions/{session}/statements",
            {"sql": sql, "wait": 30},
            content_type="application/json",
        )
        assert answer.status_code == 201, answer.content
        job: dict[str, Any] = answer.json()
        while job["status"] not in {"FINISHED", "FAILED", "CANCELED"}:
            time.sleep(0.02)
            job = client.get(f"/api/v1/jobs/{job['id']}").json()
        seconds = time.perf_counter() - started
        assert job["status"] == "FINISHED", job
        return seconds, str(job["id"])

    def location(name: str) -> str:
        return str(Table.objects.get(database__catalog__name=CATALOG, name=name).location)

    rows = args.rows
    changed = max(rows // 100, 20)
    parts = {"updates": changed * 90 // 100, "inserts": changed * 5 // 100}
    parts["deletes"] = changed - parts["updates"] - parts["inserts"]
    statement(
        f"CREATE TABLE {TABLE} (id BIGINT, a BIGINT, b DOUBLE, s STRING, "
        "PRIMARY KEY (id) NOT ENFORCED) WITH ('write.mode' = 'upsert')"
    )
    statement(
        f"INSERT INTO {TABLE} /*+ OPTIONS('write.mode' = 'append') */ {FILL.format(rows=rows)}"
    )
    statement(f"CREATE TABLE {CHANGES} AS {CHANGELOG.format(rows=rows, **parts)}")
    changes = location("changes")

    tessera: list[float] = []
    direct: list[float] = []
    merge: list[float] = []
    for index in range(args.runs):
        out = str(data / "plain" / f"p{index}")
        started = time.perf_counter()
        plain_upsert(spark, location("t"), changes, out)
        direct.append(time.perf_counter() - started)
        seconds, job_id = statement(f"INSERT INTO {TABLE} SELECT * FROM {CHANGES}")
        tessera.append(seconds)
        at = {e.type: e.at for e in JobEvent.objects.filter(job_id=job_id)}
        merge.append((at["data_written"] - at["running"]).total_seconds())
        if index == 0:
            check = ["count(*) AS n", "bit_xor(xxhash64(id, a, b, s)) AS h"]
            ours = spark.read.parquet(location("t")).selectExpr(*check).first()
            theirs = spark.read.parquet(out).selectExpr(*check).first()
            same = "same rows" if ours == theirs else f"DIFFERENT: {ours} vs {theirs}"
            print(f"first run: Tessera and plain PySpark give {same} ({ours['n']:,} rows)")
    spark.stop()

    size = sum(f.stat().st_size for f in Path(location("t")).rglob("*.parquet")) / 1e6
    t, p = statistics.median(tessera), statistics.median(direct)
    print(
        f"\nmachine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, load {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    print(
        f"data: {rows:,} rows (≈{size:.0f} MB parquet), {changed:,} changes "
        f"({parts['updates']:,} +U, {parts['inserts']:,} +I, {parts['deletes']:,} -D); "
        f"{args.runs} runs each\n"
    )
    print("| measurement | median s | min s | max s |")
    print("|---|---:|---:|---:|")
    print(f"| upsert through Tessera | {t:.2f} | {min(tessera):.2f} | {max(tessera):.2f} |")
    m = statistics.median(merge)
    print(
        f"| of which merge + write on the worker | {m:.2f} | {min(merge):.2f} | {max(merge):.2f} |"
    )
    print(
        f"| plain PySpark, same merge + df.write.mode('overwrite') | {p:.2f} | "
        f"{min(direct):.2f} | {max(direct):.2f} |"
    )
    print(f"\nratio (median, Tessera / plain): {t / p:.2f}x ({t - p:+.2f} s)")


if __name__ == "__main__":
    main()
