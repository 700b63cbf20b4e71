"""CTAS through Tessera vs ``df.write.parquet`` in plain PySpark: ``python bench/ctas.py``.

In one run: starts a real worker (``celery -A webapp worker --pool threads``, its own warm
Spark) on PostgreSQL (database ``tessera_bench_ctas`` on the server of ``DATABASE_URL``,
created and migrated when missing) and Redis (``BENCH_BROKER_URL``, default
``redis://127.0.0.1:6379/11``); then, alternately, ``--runs`` times each:

1. Tessera: ``POST /sessions/{id}/statements`` with ``CREATE TABLE bench_ctas.d.t<i> AS
   <query>`` (Django test client in process → Redis → worker: claim, analyse, write parquet
   into the staging directory, commit), timed until ``GET /jobs/{id}`` says FINISHED;
2. plain PySpark in this process: ``spark.sql(<query>).write.parquet(dir)``.

The query generates ``--rows`` rows (default 10,000,000) with a few derived columns. Both
Sparks use the machine's cores (``local[*]``) and never run at the same time. It reports
seconds (median of the runs) and the overhead ratio; it does not assert.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from harness import Tessera, bench_parser, machine, plain_spark, start_tessera

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_BROKER = "redis://127.0.0.1:6379/11"
CATALOG = "bench_ctas"
WORKER = "bench-ctas-worker"
QUERY = (
    "SELECT id, id % 1000 AS k, rand(42) * 100 AS v, concat('name', id % 97) AS s, "
    "CAST(id AS DECIMAL(20, 2)) / 7 AS q, date_add(DATE '2020-01-01', CAST(id % 2000 AS INT)) "
    "AS day FROM range(0, {rows})"
)


def main() -> None:
    parser = bench_parser(
        __doc__, db_name="tessera_bench_ctas", rows=10_000_000, rows_help="rows the CTAS writes"
    )
    args = parser.parse_args()
    with start_tessera(args, name=WORKER, broker=DEFAULT_BROKER, catalog=CATALOG) as side:
        run(args.rows, args.runs, side)


def run(rows: int, runs: int, side: Tessera) -> None:
    from jobs.models import Job, JobEvent

    data = side.data_dir
    spark = plain_spark(data / "plain-warehouse")  # its JVM starts while the worker's does
    side.ready()
    counter = iter(range(1_000_000))

    def ctas(rows: int) -> tuple[float, str]:
        """One CTAS through Tessera: seconds from POST until the job is seen FINISHED."""
        return side.statement(
            f"CREATE TABLE {CATALOG}.d.t{next(counter)} AS {QUERY.format(rows=rows)}"
        )

    def plain(rows: int) -> float:
        path = data / "plain" / f"p{next(counter)}"
        started = time.perf_counter()
        spark.sql(QUERY.format(rows=rows)).write.parquet(str(path))
        return time.perf_counter() - started

    def phases(job_id: str) -> dict[str, float]:
        """Where a Tessera CTAS spent its time, from its row and events."""
        job = Job.objects.get(pk=job_id)
        at = {e.type: e.at for e in JobEvent.objects.filter(job_id=job_id)}
        assert job.started_at is not None and job.finished_at is not None
        return {
            "queue+claim": (job.started_at - job.created_at).total_seconds(),
            "analyse+write": (at["data_written"] - job.started_at).total_seconds(),
            "commit": (at["data_committed"] - at["data_written"]).total_seconds(),
        }

    # Warm both sides (first-query costs, code generation) with a small write each.
    ctas(10_000)
    plain(10_000)
    tessera: list[float] = []
    direct: list[float] = []
    parts: list[dict[str, float]] = []
    for _ in range(runs):
        seconds, job_id = ctas(rows)
        tessera.append(seconds)
        parts.append(phases(job_id))
        direct.append(plain(rows))
    spark.stop()

    size = (
        max(
            sum(f.stat().st_size for f in run.rglob("*.parquet"))
            for run in (data / "plain").iterdir()
        )
        / 1e6
    )
    t, p = statistics.median(tessera), statistics.median(direct)
    print(f"\n{machine()}")
    print(f"data: {rows:,} rows per write, ≈{size:.0f} MB parquet; {runs} runs each\n")
    print("| measurement | median s | min s | max s |")
    print("|---|---:|---:|---:|")
    print(f"| CTAS through Tessera | {t:.2f} | {min(tessera):.2f} | {max(tessera):.2f} |")
    print(f"| df.write.parquet, plain PySpark | {p:.2f} | {min(direct):.2f} | {max(direct):.2f} |")
    print(f"\noverhead ratio (median, Tessera / plain): {t / p:.2f}x ({t - p:+.2f} s)")
    names = list(parts[0])
    print(
        "Tessera phases (median s): "
        + ", ".join(f"{n} {statistics.median(x[n] for x in parts):.2f}" for n in names)
    )


if __name__ == "__main__":
    main()
