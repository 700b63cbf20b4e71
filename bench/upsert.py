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

import statistics
import sys
import time
from pathlib import Path
from typing import Any

from harness import Tessera, bench_parser, machine, plain_spark, start_tessera

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


def main() -> None:
    parser = bench_parser(
        __doc__,
        db_name="tessera_bench_upsert",
        rows=10_000_000,
        rows_help="rows of the keyed table",
    )
    args = parser.parse_args()
    with start_tessera(args, name=WORKER, broker=DEFAULT_BROKER, catalog=CATALOG) as side:
        run(args.rows, args.runs, side)


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


def run(rows: int, runs: int, side: Tessera) -> None:
    from jobs.models import JobEvent

    data = side.data_dir
    spark = plain_spark(data / "plain-warehouse")
    side.ready()
    statement, location = side.statement, side.location

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
    for index in range(runs):
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
    print(f"\n{machine()}")
    print(
        f"data: {rows:,} rows (≈{size:.0f} MB parquet), {changed:,} changes "
        f"({parts['updates']:,} +U, {parts['inserts']:,} +I, {parts['deletes']:,} -D); "
        f"{runs} runs each\n"
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
