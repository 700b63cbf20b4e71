"""Soak: a team's mixed load on one stack for an hour: ``python bench/soak.py``.

Starts the product as ``bench/latency.py`` does (its ``Stack``: gunicorn with
``webapp.gunicorn_conf``, 2 processes x 16 threads, one Celery worker, threads pool,
concurrency 4, the ``make run`` defaults otherwise) in each configuration of ``--configs``,
one at a time:

- ``embedded``: SQLite and kombu's file-system broker under a new ``TESSERA_DATA_DIR``;
- ``pg-redis``: PostgreSQL database ``tessera_bench_soak`` on 127.0.0.1:5432 (made anew) and
  Redis ``redis://127.0.0.1:6379/14`` (flushed).

A worker or gunicorn that exits is started again 1 s later, as scripts/run.sh does, and
counted. Five users (``soak-u1`` … ``soak-u5``, a token each), each a thread with its own
catalog (``soak_uN``, database ``work``) and session (in the TPC-H database of catalog
``tpch``, which everyone may read), loop over a team's mixed load, seeded, with a think time
of ``THINK`` seconds between actions:

- short queries (``SELECT 1``, small aggregates over ``range``), then the result page;
- a TPC-H query (one of the 22, every result page);
- CTAS into ``work`` (the fourth-oldest of a user's tables dropped) and INSERT into
  ``work.facts`` (a new table version each);
- a temporary view (``CREATE OR REPLACE TEMPORARY VIEW`` over ``lineitem``, one of 8 names)
  then a SELECT of it;
- an upload (Arrow IPC stream, ``POST /sessions/{id}/uploads``), a temporary table over it
  and a SELECT (a user keeps at most 3 uploads: the oldest is deleted);
- a long query cancelled once Spark runs its tasks (``POST /jobs/{id}/cancel``);
- a result download (``result.csv``, ``.json``, ``.parquet`` or ``.arrow``);

and ``soak-u1`` keeps one streaming INSERT running the whole time (the ``rate`` connector
into ``work.ticks``, a micro-batch every 10 s: a table version each).

A measuring thread (the Stack's ``bench`` user) takes, per window of ``--window-minutes``,
20 ``SELECT 1`` spread over the window, each as a REST client calls (``POST`` with
``wait`` then ``GET /jobs/{id}/result``) and next to it plain PySpark's
``spark.sql("SELECT 1").collect()`` in this process; and once per window (mid-window) the
TPC-H subset ``SUBSET`` (SF ``--tpch-sf``), each query through Tessera then plain, summed.

At the end of each window: jobs lost (FAILED with a code of ``LOST_CODES``) and stuck (not
terminal ``STUCK_AFTER`` s after creation; the stream excepted) from ``GET /jobs`` of every
user, process exits, engines (``GET /engines`` as an admin: lost, started), RSS and open
descriptors (/proc) of the web processes, the worker and each engine (its Python process
and its JVM), the disk held under the data dir, the load average.

It prints a markdown table per configuration, one row per window, and the goals (met /
missed); ``--json`` writes the raw figures. It never asserts. docs/benchmarks.md, "Soak",
says how to read it.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import datetime as dt
import http.client
import io
import json
import math
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engines import children, cmdline, descendants, memory_kb, parents
from harness import plain_spark
from latency import (
    ROOT,
    SLOW_SQL,
    TPCH_CATALOG,
    Api,
    ApiError,
    Config,
    Select1,
    Stack,
    commit_measured,
    config_of,
    ended,
    ensure_tpch,
    flush_redis,
    fresh_pg_database,
    iso,
    load_text,
    machine_line,
    percentile,
    plain_query,
    plain_select1,
    plain_tpch_views,
    register_tpch,
    sf_text,
    table,
    terminate_as_interrupt,
    tessera_query,
    tessera_select1,
    tpch_database,
    tpch_queries,
)

PG_DATABASE = "tessera_bench_soak"
REDIS_URL = "redis://127.0.0.1:6379/14"
USERS = [f"soak-u{i}" for i in range(1, 6)]
ADMIN = "soak-admin"
SEED = 37
THINK = (1.0, 6.0)  # seconds between two actions of a user, uniform
SAMPLES = 20  # SELECT 1 pairs per window
SUBSET = ("q01", "q03", "q06", "q12", "q14")
STUCK_AFTER = 300.0  # a job not terminal this long after its creation is stuck
LOST_CODES = {
    "WORKER_LOST",
    "ENGINE_LOST",
    "SPARK_OUT_OF_MEMORY",
    "DATABASE_UNAVAILABLE",
    "INTERNAL_ERROR",
}
GOAL_DRIFT = 0.10  # latency, ratio, memory and descriptors: last window within 10 % of first
# What a user does, and how often (weights).
KINDS = {
    "short": 30,
    "tpch": 12,
    "ctas": 7,
    "insert": 10,
    "view": 10,
    "upload": 6,
    "cancel": 5,
    "download": 8,
}
SHORT = (
    "SELECT 1",
    "SELECT count(*) AS n, sum(id) AS s FROM range(100000)",
    "SELECT id % 10 AS k, count(*) AS n, avg(id) AS a FROM range(1000000) GROUP BY id % 10",
    "SELECT max(id * 3) AS m FROM range(50000) WHERE id % 7 = 3",
)
DOWNLOADS = ("result.csv", "result.json", "result.parquet", "result.arrow")
STREAM_SQL = "INSERT INTO {catalog}.work.ticks SELECT `timestamp` AS ts, value FROM r"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=60.0, help="length of the soak")
    parser.add_argument("--window-minutes", type=float, default=10.0, help="one table row each")
    parser.add_argument(
        "--configs", default="embedded,pg-redis", help="comma list of embedded, pg-redis"
    )
    parser.add_argument("--tpch-sf", type=float, default=0.1, help="TPC-H scale factor")
    parser.add_argument(
        "--tpch-dir",
        type=Path,
        default=None,
        help="where the generated parquet is kept (default <repo>/var/bench/tpch-sf<N>)",
    )
    parser.add_argument("--keep-data", action="store_true", help="keep the data dirs")
    parser.add_argument("--json", type=Path, default=None, help="also write the raw figures")
    args = parser.parse_args(argv)
    args.configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    unknown = set(args.configs) - {"embedded", "pg-redis"}
    if unknown or not args.configs:
        parser.error(f"--configs: unknown {sorted(unknown)}; use embedded and/or pg-redis")
    if args.window_minutes <= 0 or args.minutes < args.window_minutes:
        parser.error("--minutes must be at least one --window-minutes")
    if args.tpch_dir is None:
        args.tpch_dir = ROOT / "var" / "bench" / f"tpch-sf{sf_text(args.tpch_sf)}"
    return args


# --- what happened, shared by the threads -------------------------------------------------------


@dataclass
class Action:
    at: float  # time.monotonic() when it ended
    user: str
    kind: str
    ok: bool
    seconds: float
    detail: str = ""


class Record:
    """The users' actions and the process exits, from every thread."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.actions: list[Action] = []
        self.exits: list[dict[str, Any]] = []

    def action(self, action: Action) -> None:
        with self.lock:
            self.actions.append(action)

    def between(self, start: float, end: float) -> list[Action]:
        with self.lock:
            return [a for a in self.actions if start <= a.at < end]


class Clock:
    """The windows: window ``i`` is [start + i·w, start + (i+1)·w) in time.monotonic()."""

    def __init__(self, window_seconds: float, windows: int) -> None:
        self.start = time.monotonic()
        self.wall = time.time()
        self.window = window_seconds
        self.windows = windows

    def begins(self, index: int) -> float:
        return self.start + index * self.window

    def wall_begins(self, index: int) -> float:
        return self.wall + index * self.window


def finished(api: Api, session: str, sql: str) -> dict[str, Any]:
    """Run ``sql`` to its end (POST with wait, then long-polls); the job, FINISHED or raise."""
    job = api.follow(api.statement(session, sql, wait=30), ended)
    if job["status"] != "FINISHED":
        error = job.get("error") or {}
        raise ApiError(f"{job['status']} {error.get('code')}: {str(error.get('message'))[:200]}")
    return job


# --- a user of the team -------------------------------------------------------------------------


class TeamUser:
    """One user's mixed load, in its own thread, its own connection and session."""

    def __init__(
        self,
        index: int,
        name: str,
        port: int,
        token: str,
        args: argparse.Namespace,
        stop: threading.Event,
        record: Record,
    ) -> None:
        self.name = name
        self.token = token
        self.port = port
        self.catalog = f"soak_u{index + 1}"
        self.rng = random.Random(SEED + index)
        self.args = args
        self.stop = stop
        self.record = record
        self.api = Api(port, token)
        self.session = ""
        self.tables: collections.deque[str] = collections.deque()
        self.uploads: collections.deque[str] = collections.deque()
        self.serial = 0
        self.queries = tpch_queries() if args.tpch else []
        self.thread = threading.Thread(target=self.run, name=name, daemon=True)
        self.stream_job = ""

    def setup(self) -> None:
        """Its catalog with a database ``work`` and a table ``facts``; its session, in the
        TPC-H database (catalog ``tpch``, shared: a table's files are no other table's)."""
        self.api.ok("POST", "/api/v1/catalogs", {"name": self.catalog}, (201,))
        if self.args.tpch:
            self.session = self.api.session(
                current_catalog=TPCH_CATALOG, current_database=tpch_database(self.args.tpch_sf)
            )
        else:
            self.session = self.api.session(current_catalog=self.catalog)
        self.api.ok("POST", f"/api/v1/catalogs/{self.catalog}/databases", {"name": "work"}, (201,))
        finished(
            self.api,
            self.session,
            f"CREATE TABLE {self.catalog}.work.facts (id BIGINT, v DOUBLE, at TIMESTAMP)",
        )

    def start_stream(self) -> str:
        """The streaming INSERT kept running for the whole soak (its own session); its job
        id once RUNNING."""
        session = self.api.session(current_catalog=self.catalog, current_database="work")
        for sql in (
            f"CREATE TABLE {self.catalog}.work.ticks (ts TIMESTAMP, value BIGINT)",
            "CREATE TEMPORARY TABLE r WITH ('connector' = 'rate', 'rows-per-second' = '20')",
            "SET 'execution.runtime-mode' = 'streaming'",
            "SET 'execution.checkpointing.interval' = '10 s'",
        ):
            finished(self.api, session, sql)
        job = self.api.statement(session, STREAM_SQL.format(catalog=self.catalog))
        deadline = time.monotonic() + 180
        while job["status"] == "CREATED" and time.monotonic() < deadline:
            time.sleep(0.5)
            job = self.api.job(job["id"])
        if job["status"] != "RUNNING":
            error = job.get("error") or {}
            raise ApiError(
                f"the stream is {job['status']}: {error.get('code')} {error.get('message')}"
            )
        self.stream_job = str(job["id"])
        return self.stream_job

    def run(self) -> None:
        kinds, weights = list(KINDS), list(KINDS.values())
        if not self.queries:
            weights[kinds.index("tpch")] = 0
        while not self.stop.is_set():
            kind = self.rng.choices(kinds, weights)[0]
            began = time.perf_counter()
            ok, detail = True, ""
            try:
                detail = getattr(self, f"do_{kind}")()
            except (ApiError, OSError, http.client.HTTPException, ValueError, KeyError) as error:
                ok, detail = False, f"{type(error).__name__}: {error}"[:300]
            self.record.action(
                Action(time.monotonic(), self.name, kind, ok, time.perf_counter() - began, detail)
            )
            self.stop.wait(self.rng.uniform(*THINK))
        self.api.close()

    def next_name(self, prefix: str) -> str:
        self.serial += 1
        return f"{prefix}{self.serial}"

    def do_short(self) -> str:
        sql = self.rng.choice(SHORT)
        job = finished(self.api, self.session, sql)
        self.api.result(job["id"], 100)
        return sql

    def do_tpch(self) -> str:
        name, sql = self.rng.choice(self.queries)
        failure = tessera_query(self.api, self.session, sql)[3]
        if failure:
            raise ApiError(f"{name}: {failure}")
        return name

    def do_ctas(self) -> str:
        table_ = f"{self.catalog}.work.{self.next_name('t')}"
        rows = self.rng.choice((1000, 10000, 100000))
        finished(
            self.api,
            self.session,
            f"CREATE TABLE {table_} AS SELECT id, id * 2 AS v, "
            f"CAST(id % 7 AS STRING) AS k FROM range({rows})",
        )
        self.tables.append(table_)
        if len(self.tables) > 3:
            finished(self.api, self.session, f"DROP TABLE {self.tables.popleft()}")
        return table_

    def do_insert(self) -> str:
        rows = self.rng.choice((100, 1000, 10000))
        finished(
            self.api,
            self.session,
            f"INSERT INTO {self.catalog}.work.facts SELECT id, CAST(id AS DOUBLE) / 3, "
            f"current_timestamp() FROM range({rows})",
        )
        return f"{rows} rows"

    def do_view(self) -> str:
        view = f"v{self.rng.randrange(8)}"
        if self.queries:
            source = (
                "SELECT l_returnflag AS k, count(*) AS n, sum(l_quantity) AS q FROM lineitem "
                f"WHERE l_quantity < {self.rng.randrange(5, 50)} GROUP BY l_returnflag"
            )
        else:
            rows = self.rng.randrange(1, 9) * 1000
            source = f"SELECT id % 5 AS k, count(*) AS n FROM range({rows}) GROUP BY id % 5"
        finished(self.api, self.session, f"CREATE OR REPLACE TEMPORARY VIEW {view} AS {source}")
        job = finished(self.api, self.session, f"SELECT * FROM {view} ORDER BY k")
        self.api.result(job["id"], 100)
        return view

    def do_upload(self) -> str:
        import pyarrow as pa  # type: ignore[import-untyped]

        rows = self.rng.choice((100, 1000, 20000))
        base = self.rng.randrange(1_000_000)
        data = pa.table(
            {
                "id": pa.array(range(base, base + rows), pa.int64()),
                "name": pa.array([f"item-{i % 97}" for i in range(rows)]),
                "amount": pa.array([(i * 7 % 1000) / 10 for i in range(rows)], pa.float64()),
            }
        )
        sink = io.BytesIO()
        with pa.ipc.new_stream(sink, data.schema) as writer:
            writer.write_table(data)
        status, body, _ = self.api.raw(
            "POST",
            f"/api/v1/sessions/{self.session}/uploads",
            sink.getvalue(),
            {"Content-Type": "application/vnd.apache.arrow.stream"},
        )
        if status != 201:
            raise ApiError(f"upload: {status} {body[:300]!r}")
        upload = str(json.loads(body)["id"])
        self.uploads.append(upload)
        name = self.next_name("up")
        finished(
            self.api,
            self.session,
            f"CREATE TEMPORARY TABLE {name} WITH ('connector' = 'upload', 'upload' = '{upload}')",
        )
        job = finished(
            self.api, self.session, f"SELECT count(*) AS n, sum(amount) AS a FROM {name}"
        )
        self.api.result(job["id"], 100)
        finished(self.api, self.session, f"DROP TEMPORARY TABLE {name}")
        if len(self.uploads) > 3:
            old = self.uploads.popleft()
            self.api.ok("DELETE", f"/api/v1/sessions/{self.session}/uploads/{old}", expect=(204,))
        return f"{rows} rows"

    def do_cancel(self) -> str:
        job = self.api.statement(self.session, SLOW_SQL)
        job = self.api.follow(job, lambda j: ended(j) or j["progress"]["tasks_total"] > 0)
        if ended(job):
            raise ApiError(f"the long query ended {job['status']} before its cancel")
        self.stop.wait(self.rng.uniform(0.2, 2.0))
        self.api.ok("POST", f"/api/v1/jobs/{job['id']}/cancel", {}, (200, 202))
        job = self.api.follow(job, ended)
        if job["status"] != "CANCELED":
            raise ApiError(f"the cancelled query ended {job['status']}")
        return "canceled"

    def do_download(self) -> str:
        rows = self.rng.choice((1000, 20000, 100000))
        job = finished(
            self.api,
            self.session,
            f"SELECT id, id * 3 AS v, concat('row-', CAST(id AS STRING)) AS s FROM range({rows})",
        )
        what = self.rng.choice(DOWNLOADS)
        status, body, _ = self.api.raw("GET", f"/api/v1/jobs/{job['id']}/{what}")
        if status != 200 or not body:
            raise ApiError(f"{what}: {status} {body[:200]!r}")
        return f"{what} {len(body)} bytes"


# --- the measuring thread -----------------------------------------------------------------------


@dataclass
class Measured:
    rest: list[float] = field(default_factory=list)  # Tessera: POST with wait + GET /result
    plain: list[float] = field(default_factory=list)  # spark.sql("SELECT 1").collect()
    failures: list[str] = field(default_factory=list)
    tpch: dict[str, tuple[float, float]] = field(default_factory=dict)  # query → (T s, plain s)
    tpch_failures: list[str] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)  # the window's part ended


class Measurer:
    """Per window: ``SAMPLES`` SELECT 1 pairs at random moments of each 1/SAMPLES of the
    window; the TPC-H subset once, after the half of them."""

    def __init__(
        self,
        port: int,
        token: str,
        spark: Any,
        clock: Clock,
        tpch_session: str,
        stop: threading.Event,
    ) -> None:
        self.api = Api(port, token)
        self.session = self.api.session()
        self.spark = spark
        self.clock = clock
        self.tpch_session = tpch_session
        self.stop = stop
        self.rng = random.Random(SEED)
        self.windows = [Measured() for _ in range(clock.windows)]
        self.subset = [(n, q) for n, q in tpch_queries() if n in SUBSET] if tpch_session else []
        self.thread = threading.Thread(target=self.run, name="measurer", daemon=True)

    def warm_up(self) -> None:
        """Untimed, before the first window: 5 pairs, and the TPC-H subset once per side."""
        scratch = Measured()
        for _ in range(5):
            self.select1(scratch)
        if self.subset:
            self.tpch(scratch)

    def run(self) -> None:
        step = self.clock.window / SAMPLES
        try:
            for index, into in enumerate(self.windows):
                subset_done = not self.subset
                for k in range(SAMPLES):
                    at = self.clock.begins(index) + (k + self.rng.random() * 0.8) * step
                    if time.monotonic() > self.clock.begins(index + 1) - 1:
                        break  # behind (a slow stack): this window's other samples are skipped
                    if self.stop.wait(max(0.0, at - time.monotonic())):
                        return
                    self.select1(into)
                    if k == SAMPLES // 2 - 1 and not subset_done:
                        self.tpch(into)
                        subset_done = True
                if not subset_done and not self.stop.is_set():
                    self.tpch(into)  # once per window, even behind
                into.done.set()
        finally:
            for measured in self.windows:
                measured.done.set()
            self.api.close()

    def select1(self, into: Measured) -> None:
        figures = Select1()
        try:
            tessera_select1(self.api, self.session, figures, inline=False, follow=True)
        except (ApiError, OSError, http.client.HTTPException, ValueError, KeyError) as error:
            into.failures.append(f"{type(error).__name__}: {error}"[:200])
            return
        plain_select1(self.spark, figures, collect=True)
        into.rest += figures.rest
        into.plain += figures.plain_collect

    def tpch(self, into: Measured) -> None:
        for name, sql in self.subset:
            try:
                t_seconds, _, _, t_fail = tessera_query(self.api, self.tpch_session, sql)
            except (ApiError, OSError, http.client.HTTPException, ValueError, KeyError) as error:
                t_seconds, t_fail = 0.0, f"{type(error).__name__}: {error}"
            p_seconds, _, _, p_fail = plain_query(self.spark, sql)
            if t_fail or p_fail:
                into.tpch_failures.append(f"{name}: {t_fail or p_fail}"[:200])
                continue
            into.tpch[name] = (t_seconds, p_seconds)


# --- the processes, the jobs, the disk ----------------------------------------------------------


def fds(pid: int) -> int:
    with contextlib.suppress(OSError):
        return len(os.listdir(f"/proc/{pid}/fd"))
    return 0


def tree(pid: int, table_: dict[int, int], without: Sequence[int] = ()) -> list[int]:
    """``pid`` and its descendants, less the subtrees of ``without``."""
    skip = set(without)
    for p in without:
        skip.update(descendants(p, table_))
    return [p for p in [pid, *descendants(pid, table_)] if p not in skip]


def rss_mb(pids: Sequence[int]) -> float:
    return sum(memory_kb(p)[0] for p in pids) / 1024


def processes(stack: Stack, engines: list[dict[str, Any]]) -> dict[str, Any]:
    """RSS (MB) and open descriptors of the web processes, the worker (and the JVM of its
    own, if any) and each engine (its Python process and its JVM), by owner."""
    table_ = parents()
    found: dict[str, Any] = {}
    web = stack.processes.get("gunicorn")
    if web is not None and web.poll() is None:
        pids = tree(web.pid, table_)
        found["web"] = {"rss_mb": rss_mb(pids), "fds": sum(fds(p) for p in pids), "n": len(pids)}
    worker = stack.processes.get("worker")
    found["engines"] = {}
    if worker is not None and worker.poll() is None:
        hosts = [p for p in children(worker.pid, table_) if "engine_host" in cmdline(p)]
        pids = tree(worker.pid, table_, hosts)
        found["worker"] = {"rss_mb": rss_mb(pids), "fds": sum(fds(p) for p in pids), "n": len(pids)}
        # An engine's ``pid`` (GET /engines) is its driver JVM's.
        owners = {e.get("pid"): e.get("owner") or "spare" for e in engines}
        for host in hosts:
            below = tree(host, table_)
            jvm = [p for p in below if "java" in cmdline(p)]
            owner = next((owners[p] for p in jvm if p in owners), "?")
            found["engines"][f"{owner} ({host})"] = {
                "rss_mb": rss_mb(below),
                "jvm_rss_mb": rss_mb(jvm),
                "fds": sum(fds(p) for p in below),
            }
    return found


DISK_PARTS = {
    "results": "results",
    "uploads": "uploads",
    "broker": "broker",
    "checkpoints": "checkpoints",
    "warehouse": "versions",  # managed tables' versions, streams' sinks
}


def du(path: Path) -> int:
    total = 0
    if path.is_file():
        with contextlib.suppress(OSError):
            return path.stat().st_size
    for root, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += (Path(root) / name).lstat().st_size
    return total


def disk(data_dir: Path) -> dict[str, float]:
    """MB under the data dir: results, uploads, broker, checkpoints, versions (the
    warehouse), the SQLite database (+ WAL), the rest (logs, notify, static …)."""
    found = {name: 0.0 for name in [*DISK_PARTS.values(), "sqlite", "other"]}
    with contextlib.suppress(OSError):
        for entry in data_dir.iterdir():
            size = du(entry) / 1e6
            if entry.name in DISK_PARTS:
                found[DISK_PARTS[entry.name]] += size
            elif entry.name.startswith("tessera.sqlite3"):
                found["sqlite"] += size
            else:
                found["other"] += size
    return found


def all_pages(api: Api, path: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    token = ""
    while True:
        sep = "&" if "?" in path else "?"
        page = api.ok(
            "GET", path + f"{sep}page_size=1000" + (f"&page_token={token}" if token else "")
        )
        items += page["items"]
        token = page.get("next_page_token") or ""
        if not token:
            return items


def job_health(
    port: int, tokens: dict[str, str], since_wall: float, stream_job: str
) -> dict[str, Any]:
    """From ``GET /jobs`` of every user: jobs not terminal ``STUCK_AFTER`` s after their
    creation (the stream excepted), and the jobs created since ``since_wall`` that FAILED,
    by code; lost = those of ``LOST_CODES``."""
    stuck: list[str] = []
    failed: collections.Counter[str] = collections.Counter()
    since = dt.datetime.fromtimestamp(since_wall, dt.UTC).isoformat().replace("+00:00", "Z")
    now = time.time()
    for name, token in tokens.items():
        api = Api(port, token)
        try:
            for job in all_pages(api, "/api/v1/jobs?status=CREATED,RUNNING"):
                if job["id"] != stream_job and now - iso(job["created_at"]) > STUCK_AFTER:
                    stuck.append(f"{name} {job['id']} {job['status']}")
            for job in all_pages(api, f"/api/v1/jobs?status=FAILED&created_after={since}"):
                failed[(job.get("error") or {}).get("code") or "?"] += 1
        finally:
            api.close()
    lost = sum(n for code, n in failed.items() if code in LOST_CODES)
    return {"stuck": stuck, "failed": dict(failed), "lost": lost}


def engine_list(api: Api) -> list[dict[str, Any]]:
    with contextlib.suppress(ApiError, OSError, http.client.HTTPException, ValueError):
        return all_pages(api, "/api/v1/engines")
    return []


# --- one configuration --------------------------------------------------------------------------


@dataclass
class Window:
    index: int
    minutes: float = 0.0  # minutes since the soak started, at the window's end
    load: str = ""
    select1_n: int = 0
    select1_failures: int = 0
    select1_errors: list[str] = field(default_factory=list)
    tessera_p50: float = math.nan
    tessera_p95: float = math.nan
    plain_p50: float = math.nan
    plain_p95: float = math.nan
    tpch_tessera: float = math.nan
    tpch_plain: float = math.nan
    tpch_queries: int = 0
    tpch_failures: list[str] = field(default_factory=list)
    actions: dict[str, list[int]] = field(default_factory=dict)  # kind → [ok, failed]
    action_errors: list[str] = field(default_factory=list)
    failed_codes: dict[str, int] = field(default_factory=dict)
    lost: int = 0
    stuck: int = 0
    exits: int = 0
    engines_live: int = 0
    engines_started: int = 0
    engines_lost: int = 0
    stream: str = ""
    processes: dict[str, Any] = field(default_factory=dict)
    disk_mb: dict[str, float] = field(default_factory=dict)

    @property
    def ratio(self) -> float:
        return self.tpch_tessera / self.tpch_plain if self.tpch_plain else math.nan


@dataclass
class ConfigResult:
    config: str
    label: str
    data_dir: str = ""
    windows: list[Window] = field(default_factory=list)
    exits: list[dict[str, Any]] = field(default_factory=list)
    stream: str = "not started"
    error: str = ""


def supervise(stack: Stack, record: Record, clock: Clock) -> int:
    """Start again (1 s later, as scripts/run.sh) a web or worker process that exited; the
    number of exits seen."""
    seen = 0
    for name, process in list(stack.processes.items()):
        if process.poll() is None:
            continue
        seen += 1
        record.exits.append(
            {
                "process": name,
                "code": process.returncode,
                "minute": (time.monotonic() - clock.start) / 60,
                "log": stack.log_tails(5),
            }
        )
        print(f"!! {name} exited ({process.returncode}); starting it again in 1 s", flush=True)
        time.sleep(1)
        stack.respawn(name)
    return seen


def close_window(
    window: Window,
    clock: Clock,
    stack: Stack,
    record: Record,
    measured: Measured,
    tokens: dict[str, str],
    admin: Api,
    stream_job: str,
    exits: int,
) -> None:
    index = window.index - 1  # 0-based, as the clock counts
    window.minutes = (time.monotonic() - clock.start) / 60
    window.load = load_text()
    window.select1_n = len(measured.rest)
    window.select1_failures = len(measured.failures)
    window.select1_errors = measured.failures[:5]
    if measured.rest:
        window.tessera_p50 = statistics.median(measured.rest) * 1000
        window.tessera_p95 = percentile(measured.rest, 0.95) * 1000
        window.plain_p50 = statistics.median(measured.plain) * 1000
        window.plain_p95 = percentile(measured.plain, 0.95) * 1000
    if len(measured.tpch) == len(SUBSET) and not measured.tpch_failures:
        window.tpch_tessera = sum(t for t, _ in measured.tpch.values())
        window.tpch_plain = sum(p for _, p in measured.tpch.values())
    window.tpch_queries = len(measured.tpch)
    window.tpch_failures = list(measured.tpch_failures)
    for action in record.between(clock.begins(index), clock.begins(index + 1)):
        counts = window.actions.setdefault(action.kind, [0, 0])
        counts[0 if action.ok else 1] += 1
        if not action.ok:
            window.action_errors.append(f"{action.user} {action.kind}: {action.detail}")
    with contextlib.suppress(ApiError, OSError, http.client.HTTPException, ValueError):
        health = job_health(stack.port, tokens, clock.wall_begins(index), stream_job)
        window.failed_codes, window.lost = health["failed"], health["lost"]
        window.stuck = len(health["stuck"])
    window.exits = exits
    engines = engine_list(admin)
    began = clock.wall_begins(index)
    window.engines_live = sum(e["state"] in ("STARTING", "READY", "STOPPING") for e in engines)
    window.engines_started = sum(
        bool(e.get("started_at")) and iso(e["started_at"]) >= began for e in engines
    )
    window.engines_lost = sum(
        e["state"] == "LOST" or e.get("stop_reason") in ("lost", "failed_start") for e in engines
    )
    if stream_job:
        with contextlib.suppress(ApiError, OSError, http.client.HTTPException, ValueError):
            job = admin_job(tokens, stack.port, stream_job)
            stream = (job.get("progress") or {}).get("stream") or {}
            window.stream = (
                f"{job['status']}, {stream.get('batches', '?')} batches, "
                f"{stream.get('rows_committed', '?')} rows"
            )
    window.processes = processes(stack, engines)
    window.disk_mb = disk(stack.data_dir)


def admin_job(tokens: dict[str, str], port: int, job_id: str) -> dict[str, Any]:
    """The stream's job, read as its owner (``soak-u1``)."""
    api = Api(port, tokens[USERS[0]])
    try:
        return api.job(job_id)
    finally:
        api.close()


def run_config(
    config: Config, args: argparse.Namespace, spark: Any, keep: list[Path]
) -> ConfigResult:
    result = ConfigResult(config.name, config.label)
    if config.database_url:
        fresh_pg_database(config.database_url)
    if config.broker_url:
        flush_redis(config.broker_url)
    data_dir = Path(tempfile.mkdtemp(prefix=f"tessera-bench-soak-{config.name}-"))
    keep.append(data_dir)
    result.data_dir = str(data_dir)
    roots = [data_dir / "external"]
    if args.tpch:
        roots.append(args.tpch_dir.resolve())
    stack = Stack(config, data_dir, roots)
    print(f"\n== {config.label}: data dir {data_dir}", flush=True)
    stop = threading.Event()
    record = Record()
    users: list[TeamUser] = []
    measurer: Measurer | None = None
    admin: Api | None = None
    try:
        started = stack.start()
        print(
            f"ready: first SELECT 1 finished {started:.1f} s after the worker's start", flush=True
        )
        tokens = stack.create_users(USERS)
        admin_token = stack.create_users([ADMIN], admin=True)[ADMIN]
        admin = Api(stack.port, admin_token)
        if args.tpch:
            stack.allow_read_files(args.tpch_dir.resolve())
        bench = Api(stack.port, stack.token)
        try:
            tpch_session = ""
            if args.tpch:
                tpch_session = register_tpch(bench, args.tpch_dir, args.tpch_sf)
                # The users read it: USE and SELECT on the catalog, for everyone.
                bench.ok(
                    "PATCH",
                    f"/api/v1/catalogs/{TPCH_CATALOG}/permissions",
                    {
                        "changes": [
                            {
                                "principal": "everyone",
                                "principal_type": "team",
                                "add": ["USE", "SELECT"],
                            }
                        ]
                    },
                )
        finally:
            bench.close()
        for i, name in enumerate(USERS):
            user = TeamUser(i, name, stack.port, tokens[name], args, stop, record)
            user.setup()
            users.append(user)
        print("users ready (catalogs, sessions); starting the stream …", flush=True)
        stream_job = ""
        try:
            stream_job = users[0].start_stream()
            result.stream = f"RUNNING from the start (job {stream_job})"
        except (ApiError, OSError, http.client.HTTPException) as error:
            result.stream = f"not running: {error}"[:300]
        print(f"stream: {result.stream}", flush=True)
        windows = math.ceil(args.minutes / args.window_minutes - 1e-9)
        clock = Clock(args.window_minutes * 60, windows)
        measurer = Measurer(stack.port, stack.token, spark, clock, tpch_session, stop)
        print("warm-up: 5 SELECT 1 pairs, the TPC-H subset once …", flush=True)
        measurer.warm_up()
        clock = measurer.clock = Clock(args.window_minutes * 60, windows)
        measurer.thread.start()
        for user in users:
            user.thread.start()
        all_tokens = {**tokens, "bench": stack.token}
        end = clock.start + args.minutes * 60
        for index in range(windows):
            window = Window(index + 1)
            exits = 0
            window_end = min(clock.begins(index + 1), end)
            while time.monotonic() < window_end:
                exits += supervise(stack, record, clock)
                time.sleep(1)
            # The measurer's pairs and TPC-H subset of this window: let them end.
            measurer.windows[index].done.wait(timeout=300)
            close_window(
                window,
                clock,
                stack,
                record,
                measurer.windows[index],
                all_tokens,
                admin,
                stream_job,
                exits,
            )
            result.windows.append(window)
            print(
                f"window {window.index} ({window.minutes:.1f} min): SELECT 1 p50 "
                f"{window.tessera_p50:.1f} ms (plain {window.plain_p50:.1f}), TPC-H Σ ratio "
                f"{window.ratio:.3f}, actions "
                f"{sum(a[0] for a in window.actions.values())} ok / "
                f"{sum(a[1] for a in window.actions.values())} failed, lost {window.lost}, "
                f"stuck {window.stuck}, exits {window.exits}, load {window.load}",
                flush=True,
            )
        stop.set()
        if stream_job:  # on a connection of its own: the user's thread may still use its own
            owner = Api(stack.port, tokens[USERS[0]])
            try:
                owner.ok("POST", f"/api/v1/jobs/{stream_job}/cancel", {}, (200, 202))
            finally:
                owner.close()
    except (RuntimeError, ApiError, OSError, http.client.HTTPException) as error:
        result.error = f"{type(error).__name__}: {error}"
        print(f"!! {config.name} stopped: {result.error}", file=sys.stderr)
        print(stack.log_tails(), file=sys.stderr)
    finally:
        stop.set()
        # Each thread ends after its current action (a long-poll answers within 30 s).
        deadline = time.monotonic() + 90
        for thread in [u.thread for u in users] + ([measurer.thread] if measurer else []):
            if thread.is_alive():
                thread.join(timeout=max(0.0, deadline - time.monotonic()))
        if admin is not None:
            admin.close()
        result.exits = record.exits
        stack.stop()
    return result


# --- report -------------------------------------------------------------------------------------


def f(value: float, digits: int = 1) -> str:
    return "-" if value != value else f"{value:.{digits}f}"


def report(results: list[ConfigResult], args: argparse.Namespace, commit: str) -> str:
    out: list[str] = []
    for r in results:
        out.append(f"\n### {r.label}\n")
        out.append(
            f"{args.minutes:g} min in windows of {args.window_minutes:g} min; data dir {r.data_dir}"
        )
        out.append(f"streaming INSERT: {r.stream}")
        if r.error:
            out.append(f"\n**stopped early**: {r.error.splitlines()[0]}")
        if not r.windows:
            continue
        rows = []
        for w in r.windows:
            ok = sum(a[0] for a in w.actions.values())
            bad = sum(a[1] for a in w.actions.values())
            rows.append(
                [
                    str(w.index),
                    f(w.minutes),
                    w.load.split()[0] if w.load else "-",
                    f"{f(w.tessera_p50)} / {f(w.plain_p50)} / {f(w.tessera_p50 - w.plain_p50)}",
                    f"{f(w.tessera_p95)} / {f(w.plain_p95)} / {f(w.tessera_p95 - w.plain_p95)}",
                    f"{f(w.tpch_tessera, 2)} / {f(w.tpch_plain, 2)} / {f(w.ratio, 3)}",
                    f"{ok} / {bad}",
                    str(w.lost),
                    str(w.stuck),
                    f"{w.exits} / {w.engines_lost}",
                    w.stream.split(",")[0] if w.stream else "-",
                ]
            )
        out.append("\nlatency and jobs (SELECT 1: POST with wait then GET /result vs collect())\n")
        out.append(
            table(
                [
                    "window",
                    "min",
                    "load",
                    "SELECT 1 p50 T / plain / added ms",
                    "p95 T / plain / added ms",
                    "TPC-H Σ T s / plain s / ratio",
                    "actions ok / failed",
                    "lost",
                    "stuck",
                    "exits / engines lost",
                    "stream",
                ],
                rows,
            )
        )
        rows = []
        for w in r.windows:
            p = w.processes
            web, worker, engines = p.get("web", {}), p.get("worker", {}), p.get("engines", {})
            rows.append(
                [
                    str(w.index),
                    f"{f(web.get('rss_mb', math.nan), 0)} / {web.get('fds', '-')}",
                    f"{f(worker.get('rss_mb', math.nan), 0)} / {worker.get('fds', '-')}",
                    f"{len(engines)}: {f(sum(e['rss_mb'] for e in engines.values()), 0)} / "
                    f"{sum(e['fds'] for e in engines.values())}",
                    f"{w.engines_live} / {w.engines_started}",
                ]
                + [f(w.disk_mb.get(k, math.nan), 1) for k in DISK_COLUMNS]
            )
        out.append("\nprocesses (RSS MB / open fds) and disk (MB under the data dir)\n")
        out.append(
            table(
                [
                    "window",
                    "web",
                    "worker",
                    "engines: RSS / fds",
                    "engines live / started",
                    *DISK_COLUMNS,
                ],
                rows,
            )
        )
        names = sorted({n for w in r.windows for n in w.processes.get("engines", {})})
        if names:
            rows = [
                [n]
                + [
                    (
                        f"{f(e['rss_mb'], 0)} ({f(e['jvm_rss_mb'], 0)} JVM) / {e['fds']}"
                        if (e := w.processes.get("engines", {}).get(n))
                        else "-"
                    )
                    for w in r.windows
                ]
                for n in names
            ]
            out.append("\neach engine: RSS MB (of which its JVM) / open fds, per window\n")
            out.append(table(["engine (owner, pid)", *[f"w{w.index}" for w in r.windows]], rows))
        errors = [e for w in r.windows for e in w.action_errors]
        codes: collections.Counter[str] = collections.Counter()
        for w in r.windows:
            codes.update(w.failed_codes)
        if errors or codes:
            out.append(f"\nfailed jobs by code: {dict(codes) or '-'}; first load errors:")
            out += [f"- {e}" for e in errors[:8]]
        for e in r.exits:
            out.append(f"\nexit: {e['process']} ({e['code']}) at minute {e['minute']:.1f}")
        out.append("\ngoals (first window against the last)\n")
        out.append(table(["goal", "first", "last", "verdict"], goals(r.windows), ()))
    out.append(f"\ncommit measured: {commit}; {machine_line()}")
    return "\n".join(out)


DISK_COLUMNS = ["results", "uploads", "broker", "checkpoints", "versions", "sqlite", "other"]


def drift(first: float, last: float, flat_floor: float = 0.0) -> str:
    if first != first or last != last or first == 0:
        return "not measured"
    within = abs(last - first) <= max(GOAL_DRIFT * abs(first), flat_floor)
    return "met" if within else "missed"


def goals(windows: list[Window]) -> list[list[str]]:
    first, last = windows[0], windows[-1]

    def total(w: Window, key: str) -> float:
        p = w.processes
        engines = p.get("engines", {}).values()
        return float(
            p.get("web", {}).get(key, 0)
            + p.get("worker", {}).get(key, 0)
            + sum(e[key] for e in engines)
        )

    lost = sum(w.lost for w in windows)
    stuck = last.stuck
    exits = sum(w.exits for w in windows)
    engines_lost = last.engines_lost
    disk_first = sum(first.disk_mb.values())
    disk_last = sum(last.disk_mb.values())
    return [
        [
            "SELECT 1 p50 (Tessera) within 10 %",
            f(first.tessera_p50),
            f(last.tessera_p50),
            drift(first.tessera_p50, last.tessera_p50),
        ],
        [
            "SELECT 1 p95 (Tessera) within 10 %",
            f(first.tessera_p95),
            f(last.tessera_p95),
            drift(first.tessera_p95, last.tessera_p95),
        ],
        [
            "TPC-H Σ ratio within 10 %",
            f(first.ratio, 3),
            f(last.ratio, 3),
            drift(first.ratio, last.ratio),
        ],
        [
            "RSS of web + worker + engines flat (within 10 %)",
            f(total(first, "rss_mb"), 0),
            f(total(last, "rss_mb"), 0),
            drift(total(first, "rss_mb"), total(last, "rss_mb")),
        ],
        [
            "open fds flat (within 10 %, or 20)",
            f(total(first, "fds"), 0),
            f(total(last, "fds"), 0),
            drift(total(first, "fds"), total(last, "fds"), 20),
        ],
        ["0 jobs lost", "-", str(lost), "met" if lost == 0 else "missed"],
        ["0 jobs stuck", str(first.stuck), str(stuck), "met" if stuck == 0 else "missed"],
        [
            "0 restarts (process exits, engines lost)",
            "-",
            f"{exits} / {engines_lost}",
            "met" if exits == 0 and engines_lost == 0 else "missed",
        ],
        [
            "disk under the data dir (bounded by retention: not judged in an hour)",
            f(disk_first, 1),
            f(disk_last, 1),
            "reported",
        ],
    ]


# --- main ---------------------------------------------------------------------------------------


def have_tpch(args: argparse.Namespace) -> bool:
    """The TPC-H parquet, generated if ``tpchgen-cli`` is installed; never installed here (a
    missing generator: the soak runs without its TPC-H parts, and says so)."""
    tables = ("region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem")
    if all(any((args.tpch_dir / t).glob("*.parquet")) for t in tables):
        return True
    if shutil.which("tpchgen-cli", path=str(ROOT / ".venv" / "bin")) or shutil.which("tpchgen-cli"):
        ensure_tpch(args.tpch_dir, args.tpch_sf)
        return True
    print(
        f"!! no TPC-H data in {args.tpch_dir} and no tpchgen-cli (pip install -e '.[bench]'): "
        "the soak runs without its TPC-H parts",
        flush=True,
    )
    return False


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    commit = commit_measured()
    began = time.perf_counter()
    print(f"bench/soak.py at {commit}; {machine_line()}", flush=True)
    keep: list[Path] = []
    results: list[ConfigResult] = []
    with terminate_as_interrupt():
        plain_dir = Path(tempfile.mkdtemp(prefix="tessera-bench-soak-plain-"))
        keep.append(plain_dir)
        spark = None
        try:
            args.tpch = have_tpch(args)
            spark = plain_spark(plain_dir / "warehouse")
            if args.tpch:
                plain_tpch_views(spark, args.tpch_dir)
            for name in args.configs:
                config = config_of(name, PG_DATABASE, REDIS_URL)
                results.append(run_config(config, args, spark, keep))
        finally:
            if spark is not None:
                spark.stop()
            for path in keep:
                if args.keep_data:
                    print(f"kept {path}")
                else:
                    shutil.rmtree(path, ignore_errors=True)
    text = report(results, args, commit)
    print(text)
    print(f"\nwhole run: {time.perf_counter() - began:.0f} s")
    if args.json:
        raw = {
            "commit": commit,
            "date": dt.datetime.now(dt.UTC).isoformat(),
            "machine": machine_line(),
            "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
            "results": [asdict(r) for r in results],
        }
        args.json.write_text(json.dumps(raw, indent=1, default=str) + "\n")
        print(f"raw figures: {args.json}")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        print("\ninterrupted: everything it started is stopped", file=sys.stderr)
        sys.exit(130)
