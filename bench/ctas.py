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

DEFAULT_BROKER = "redis://127.0.0.1:6379/11"
CATALOG = "bench_ctas"
WORKER = "bench-ctas-worker"
QUERY = (
    "SELECT id, id % 1000 AS k, rand(42) * 100 AS v, concat('name', id % 97) AS s, "
    "CAST(id AS DECIMAL(20, 2)) / 7 AS q, date_add(DATE '2020-01-01', CAST(id % 2000 AS INT)) "
    "AS day FROM range(0, {rows})"
)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--db-name", default="tessera_bench_ctas")
    parser.add_argument("--rows", type=int, default=10_000_000, help="rows the CTAS writes")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per side")
    parser.add_argument("--keep-data", action="store_true", help="keep the data dir")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    bench = setup_django(args.db_name, broker=DEFAULT_BROKER, prefix="tessera-bench-ctas-")
    data_dir, client, user = bench.data_dir, bench.client, bench.user

    from catalog import services as catalog_services
    from catalog.models import Catalog

    Catalog.objects.filter(name_key=CATALOG).delete()
    catalog_services.catalog_create(user=user, name=CATALOG, default_database="d")

    worker = start_worker(WORKER, data_dir / "worker.log")  # its JVM starts while ours does
    try:
        run(args, client, worker, data_dir)
    finally:
        stop_worker(worker, WORKER)
        Catalog.objects.filter(name_key=CATALOG).delete()
        if args.keep_data:
            print(f"data kept in {data_dir}")
        else:
            shutil.rmtree(data_dir, ignore_errors=True)


def run(args: argparse.Namespace, client: Any, worker: subprocess.Popen[bytes], data: Path) -> None:
    from jobs.models import Job, JobEvent, Worker

    spark = plain_spark(data / "plain-warehouse")

    deadline = time.monotonic() + 180
    while not Worker.objects.filter(hostname__startswith="bench-ctas-worker@").exists():
        if worker.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the worker did not start; see {data / 'worker.log'}")
        time.sleep(0.2)
    response = client.post("/api/v1/sessions", {}, content_type="application/json")
    assert response.status_code == 201, response.content
    session = response.json()["id"]
    counter = iter(range(1_000_000))

    def ctas(rows: int) -> tuple[float, str]:
        """One CTAS through Tessera: seconds from POST until the job is seen FINISHED."""
        name = f"t{next(counter)}"
        started = time.perf_counter()
        answer = client.post(
            f"/api/v1/sessions/{session}/statements",
            {"sql": f"CREATE TABLE {CATALOG}.d.{name} AS {QUERY.format(rows=rows)}", "wait": 30},
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
    for _ in range(args.runs):
        seconds, job_id = ctas(args.rows)
        tessera.append(seconds)
        parts.append(phases(job_id))
        direct.append(plain(args.rows))
    spark.stop()

    size = (
        max(
            sum(f.stat().st_size for f in run.rglob("*.parquet"))
            for run in (data / "plain").iterdir()
        )
        / 1e6
    )
    t, p = statistics.median(tessera), statistics.median(direct)
    print(
        f"\nmachine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, load {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    print(f"data: {args.rows:,} rows per write, ≈{size:.0f} MB parquet; {args.runs} runs each\n")
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
