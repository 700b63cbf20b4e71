"""Upsert of 1 % changed rows into a 10-million-row keyed Delta table (issue 31): ``MERGE``
through Tessera against plain PySpark running the same ``MERGE`` with Delta, and against
plain PySpark rewriting the whole table: ``python bench/upsert.py`` (``--rows 1000000`` for
a quick run).

In one run: starts a real worker (``celery -A webapp worker --pool threads``, its own warm
Spark with Delta) on PostgreSQL (database ``tessera_bench_upsert`` on the server of
``DATABASE_URL``, created and migrated when missing) and Redis (``BENCH_BROKER_URL``, default
``redis://127.0.0.1:6379/10``). Through Tessera it creates the managed Delta table ``t``
(``id BIGINT`` key and three more columns; deletion vectors, column mapping and the change
feed on, as every managed Delta table) with ``--rows`` rows, and a changelog table
``changes`` with 1 % of that: updates (``+U``) of existing keys, a few inserts (``+I``) of new
keys and deletes (``-D``), one row per key. Plain PySpark (Delta's jars and extension, the
same ones) copies ``t`` into a Delta table of its own with the same properties. Then,
alternately, ``--runs`` times each:

1. plain PySpark rewriting the table: the current rows whose key did not change (anti join)
   plus the upserted rows, written whole with ``df.write.format("delta").mode("overwrite")``
   into a directory of its own;
2. plain PySpark's ``MERGE INTO`` its copy (the statement below);
3. Tessera: ``POST /sessions/{id}/statements`` with the same ``MERGE INTO t USING changes``,
   timed until ``GET /jobs/{id}`` says FINISHED.

Applying the same changelog again leaves the same rows (a fixed point after the first run);
each MERGE still matches and rewrites the same rows. The first run's three results are
compared (row count and a hash of every row). The Sparks use the machine's cores
(``local[*]``) and never run at the same time. It prints seconds (median of the runs) and
the ratios; it does not assert.
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


MERGE = (
    "MERGE INTO {target} AS t USING {source} AS c ON t.id = c.id "
    "WHEN MATCHED AND c.op = '-D' THEN DELETE "
    "WHEN MATCHED THEN UPDATE SET a = c.a, b = c.b, s = c.s "
    "WHEN NOT MATCHED AND c.op <> '-D' THEN INSERT (id, a, b, s) VALUES (c.id, c.a, c.b, c.s)"
)
# As every managed Delta table of Tessera (core/options.py): the plain copy pays the same.
PROPERTIES = (
    "'delta.enableDeletionVectors' = 'true', 'delta.columnMapping.mode' = 'name', "
    "'delta.enableChangeDataFeed' = 'true'"
)
CHECK = ["count(*) AS n", "bit_xor(xxhash64(id, a, b, s)) AS h"]


def delta_spark(warehouse: Path) -> Any:
    """Plain PySpark with Delta Lake: the jars and the session settings Tessera's drivers use."""
    from engine.spark_config import DELTA_CONF, delta_jars

    return plain_spark(warehouse, **DELTA_CONF, **{"spark.jars": ",".join(delta_jars())})


def plain_rewrite(spark: Any, base: str, changes: str, out: str) -> None:
    """The same result in plain PySpark, the whole table rewritten."""
    from pyspark.sql import functions as sf

    current = spark.read.format("delta").load(base)
    log = spark.read.parquet(changes)
    kept = current.join(log.select("id"), "id", "left_anti")
    upserted = log.filter(sf.col("op").isin("+I", "+U")).select(*current.columns)
    kept.unionByName(upserted).write.format("delta").mode("overwrite").save(out)


def summary(spark: Any, path: str) -> Any:
    return spark.read.format("delta").load(path).selectExpr(*CHECK).first()


def run(rows: int, runs: int, side: Tessera) -> None:
    from jobs.models import JobEvent

    data = side.data_dir
    spark = delta_spark(data / "plain-warehouse")
    side.ready()
    statement, location = side.statement, side.location

    changed = max(rows // 100, 20)
    parts = {"updates": changed * 90 // 100, "inserts": changed * 5 // 100}
    parts["deletes"] = changed - parts["updates"] - parts["inserts"]
    statement(f"CREATE TABLE {TABLE} (id BIGINT, a BIGINT, b DOUBLE, s STRING) USING delta")
    statement(f"INSERT INTO {TABLE} {FILL.format(rows=rows)}")
    statement(f"CREATE TABLE {CHANGES} AS {CHANGELOG.format(rows=rows, **parts)}")
    changes = location("changes")
    copy = str(data / "plain" / "t")
    # Created, then filled: Delta refuses a CTAS with the change feed and column mapping on.
    spark.sql(
        f"CREATE TABLE delta.`{copy}` (id BIGINT, a BIGINT, b DOUBLE, s STRING) USING delta "
        f"TBLPROPERTIES ({PROPERTIES})"
    )
    spark.sql(f"INSERT INTO delta.`{copy}` SELECT * FROM delta.`{location('t')}`")
    spark.read.parquet(changes).createOrReplaceTempView("changes")

    tessera: list[float] = []
    merged: list[float] = []
    rewrite: list[float] = []
    worker: list[float] = []
    for index in range(runs):
        out = str(data / "plain" / f"rewrite{index}")
        started = time.perf_counter()
        plain_rewrite(spark, copy, changes, out)
        rewrite.append(time.perf_counter() - started)
        started = time.perf_counter()
        spark.sql(MERGE.format(target=f"delta.`{copy}`", source="changes"))
        merged.append(time.perf_counter() - started)
        seconds, job_id = statement(MERGE.format(target=TABLE, source=CHANGES))
        tessera.append(seconds)
        at = {e.type: e.at for e in JobEvent.objects.filter(job_id=job_id)}
        ends = [when for kind, when in at.items() if kind != "created"]
        worker.append((max(ends) - at.get("running", min(ends))).total_seconds())
        if index == 0:
            ours, theirs = summary(spark, location("t")), summary(spark, copy)
            whole = summary(spark, out)
            same = "same rows" if ours == theirs == whole else f"DIFFERENT: {ours} {theirs} {whole}"
            print(f"first run: Tessera, plain MERGE, the rewrite: {same} ({ours['n']:,} rows)")
    spark.stop()

    size = sum(f.stat().st_size for f in Path(copy).rglob("*.parquet")) / 1e6
    t, m, r = (statistics.median(xs) for xs in (tessera, merged, rewrite))
    print(f"\n{machine()}")
    print(
        f"data: {rows:,} rows (≈{size:.0f} MB of Delta files after the runs), {changed:,} "
        f"changes ({parts['updates']:,} +U, {parts['inserts']:,} +I, {parts['deletes']:,} -D); "
        f"{runs} runs each\n"
    )
    print("| measurement | median s | min s | max s |")
    print("|---|---:|---:|---:|")
    for label, xs in (
        ("MERGE through Tessera", tessera),
        ("of which on the worker (running → last event)", worker),
        ("plain PySpark, the same MERGE with Delta", merged),
        ("plain PySpark, rewriting the whole table", rewrite),
    ):
        print(f"| {label} | {statistics.median(xs):.2f} | {min(xs):.2f} | {max(xs):.2f} |")
    print(f"\nTessera MERGE / plain MERGE: {t / m:.2f}x ({t - m:+.2f} s); target ≤ 1.10x")
    print(f"Tessera MERGE / plain rewrite: {t / r:.2f}x; target ≤ 0.30x")


if __name__ == "__main__":
    main()
