"""What the worker's SQL guard costs per statement, next to what Spark itself spends.

Before any text reaches Spark, the worker compares Spark's lexer with the planner's on it,
parses it with Spark's parser, describes and walks the tree (engine/sqlguard.py).
This measures that check against Spark's own work on the same text in the same session:
``spark.sql(text)`` (parse + analysis, nothing run) and a full run (the first 1,000 rows
as Arrow, as the worker stores them).

    .venv/bin/python bench/guard.py [--runs 30]

Prints one line per statement: median milliseconds of the guard, of spark.sql(...)
(analysis), of a full run, and the guard's share of the full run.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
os.environ.setdefault("TESSERA_DATA_DIR", tempfile.mkdtemp(prefix="tessera-bench-guard-"))


def statements() -> dict[str, str]:
    wide = ", ".join(f"price * {i} + qty AS c{i}" for i in range(400))
    in_list = ", ".join(str(i) for i in range(10_000))
    return {
        "select 1": "SELECT 1 AS one",
        "tpch q1 shape": (
            "SELECT flag, status, sum(qty) AS sum_qty, sum(price) AS sum_base_price, "
            "sum(price * (1 - disc)) AS sum_disc_price, "
            "sum(price * (1 - disc) * (1 + tax)) AS sum_charge, avg(qty) AS avg_qty, "
            "avg(price) AS avg_price, avg(disc) AS avg_disc, count(*) AS count_order "
            "FROM `__tessera_r1` AS `lineitem` WHERE ship <= date_sub(DATE '1998-12-01', 90) "
            "GROUP BY flag, status ORDER BY flag, status"
        ),
        "cte + window + join": (
            "WITH big AS (SELECT id, qty FROM `__tessera_r1` WHERE qty > 10), "
            "ranked AS (SELECT id, qty, row_number() OVER (PARTITION BY id % 7 ORDER BY qty) AS r "
            "FROM big) SELECT /*+ BROADCAST(b) */ a.id, b.r FROM ranked a "
            "JOIN ranked b ON a.id = b.id WHERE a.r < 3"
        ),
        "400 expressions": f"SELECT {wide} FROM `__tessera_r1`",
        "IN list, 10,000 items (58 KB)": (
            f"SELECT count(*) AS n FROM `__tessera_r1` WHERE id IN ({in_list})"
        ),
    }


def median_ms(action: Callable[[], Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        action()
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times)


def schema(session: Any, text: str) -> Any:
    """Spark's parse and analysis of the text, nothing run."""
    return session.sql(text).schema


def run(session: Any, text: str) -> Any:
    """What the worker does with a query: its first rows as Arrow (here 1,000)."""
    return session.sql(text).limit(1000).toArrow()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()

    import django

    django.setup()
    from pyspark.sql import SparkSession

    from core.planner import Action, Plan, RelationPlan
    from engine import sqlguard

    logging.getLogger("py4j").setLevel(logging.WARNING)
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("tessera-bench-guard")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.variable.substitute", "false")
        .config("spark.sql.shuffle.partitions", "4")
        # Spark would otherwise create spark-warehouse/ in the working directory.
        .config("spark.sql.warehouse.dir", tempfile.mkdtemp(prefix="tessera-bench-warehouse-"))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    session = spark.newSession()
    session.sql(
        "SELECT id, id % 50 AS qty, CAST(id % 1000 AS DOUBLE) AS price, 0.05D AS disc, "
        "0.08D AS tax, CAST(id % 2 AS STRING) AS flag, CAST(id % 3 AS STRING) AS status, "
        "date_add(DATE '1998-01-01', CAST(id % 300 AS INT)) AS ship FROM range(100000)"
    ).createOrReplaceTempView("__tessera_r1")
    guard = sqlguard.install(
        session,
        Plan.of(
            Action.QUERY,
            relations=(RelationPlan("__tessera_r1", ("c", "d", "lineitem"), "table"),),
        ),
    )
    for text in statements().values():  # warm the JIT, the describer and Spark's caches
        for _ in range(3):
            guard.check(text)
            run(session, text)

    print(f"{'statement':32} {'guard ms':>9} {'analysis ms':>12} {'run ms':>9} {'guard/run':>10}")
    for name, text in statements().items():
        checked = median_ms(partial(guard.check, text), args.runs)
        analysed = median_ms(partial(schema, session, text), args.runs)
        ran = median_ms(partial(run, session, text), max(5, args.runs // 3))
        print(f"{name:32} {checked:9.2f} {analysed:12.2f} {ran:9.2f} {checked / ran:10.1%}")
    spark.stop()


if __name__ == "__main__":
    main()
