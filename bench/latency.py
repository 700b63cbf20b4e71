"""Interactive latency, end to end over HTTP: ``python bench/latency.py``.

Runs the product for real, as ``make run`` runs it — ``gunicorn webapp.wsgi -c
python:webapp.gunicorn_conf`` (2 processes x 16 threads) and one Celery worker (threads pool,
concurrency 4, its own warm Spark), same environment, cwd the repository root — in each
configuration of ``--configs``:

- ``embedded``: the ``make run`` defaults on a new temporary ``TESSERA_DATA_DIR`` (SQLite,
  kombu's file-system broker under the data dir);
- ``pg-redis``: PostgreSQL database ``tessera_bench_latency`` on 127.0.0.1:5432 (made anew
  for each run) and Redis ``redis://127.0.0.1:6379/13`` (flushed at start).

and drives it over HTTP (``http.client`` keep-alive connections, token auth), against plain
PySpark (``local[*]``) in this process; the two Sparks never run at the same time. With
``--runtime cluster`` both run on one standalone cluster started from the pinned PySpark
(each its own application with the same cores and executor memory):

1. ``SELECT 1``: ``POST /sessions/{id}/statements {"sql": "SELECT 1", "wait": 30,
   "page_size": 100}`` (the first result page comes in the answer; against a server
   without ``page_size``: + ``GET /jobs/{id}/result?page_size=100``), interleaved with
   ``spark.sql("SELECT 1").toArrow()`` (a random pause of 0-1 s before each pair, so that
   pollers are met at random phases); with the job's own timestamps: request → created_at
   (the web process: planning, rows, enqueue), created_at → started_at (queue wait: broker
   and claim), started_at → finished_at (run), finished_at → answer received (the web's
   wait noticing, the answer);
2. TPC-H (``tpchgen-cli`` parquet, the 22 queries of ``bench/tpch``), each query through
   Tessera (POST with wait, ``GET /jobs/{id}?wait=`` long-polls until terminal, every
   result page) then plain (``spark.sql(q).toArrow()`` on temporary views of the same
   files); results compared;
3. cancel: a slow query, cancelled once Spark has tasks; cancel → CANCELED, and cancel →
   a ``SELECT 42`` sent right after in the same session FINISHED; plain PySpark's own
   ``cancelJobGroup`` next to it.

It reports (markdown tables; ``--json`` for the raw figures); it never asserts a bound. The
targets are printed next to the figures. docs/benchmarks.md, "Interactive latency", says
how to read them.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import http.client
import json
import math
import os
import platform
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from types import FrameType
from typing import Any
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import ensure_database, plain_spark

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / ".venv" / "bin"
TPCH_QUERIES = Path(__file__).resolve().parent / "tpch"

PG_SERVER = "postgres://postgres@127.0.0.1:5432"
PG_DATABASE = "tessera_bench_latency"
REDIS_URL = "redis://127.0.0.1:6379/13"
# Never these: CI's database and Redis DB, and another engineer's Redis DB.
FORBIDDEN = {"database": {"test"}, "redis_db": {"12", "15"}}

SLOW_SQL = "SELECT count(*) AS n FROM range(0, 100000000) AS a CROSS JOIN range(0, 100000) AS b"
TPCH_TABLES = ("region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem")
TPCH_CATALOG = "tpch"
TPCH_WARMUP = "q06"
TERMINAL = {"FINISHED", "FAILED", "CANCELED"}
WARMUP = 5
# Before each timed SELECT 1 pair, an untimed pause drawn from [0, PAUSE_MAX_SECONDS) (seeded):
# the path has pollers (kombu's file-system broker polls every 1 s, the POST's wait every
# 50 ms); a loop whose own period is close to theirs would meet them at the same phase every
# time, where a person's click meets them at a random one.
PAUSE_MAX_SECONDS = 1.0
PAUSE_SEED = 12
START_TIMEOUT = 180.0
# What the environment of the bench must not hand the servers (each configuration sets its own).
NOT_INHERITED = (
    "DATABASE_URL",
    "CELERY_BROKER_URL",
    "TESSERA_STORAGE_ROOTS",
    "TESSERA_DATA_DIR",
    "SPARK_MASTER",
    "SPARK_REMOTE",
    "DJANGO_SETTINGS_MODULE",
)
TARGETS = {
    "select1_added_p50_ms": 30.0,
    "select1_added_p95_ms": 60.0,
    "tpch_ratio": 1.05,
    "cancel_p95_ms": 100.0,
}


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--configs", default="embedded,pg-redis", help="comma list of embedded, pg-redis"
    )
    parser.add_argument("-n", type=int, default=50, help="SELECT 1 round trips per side")
    parser.add_argument("--skip-tpch", action="store_true", help="skip the TPC-H part")
    parser.add_argument("--tpch-sf", type=float, default=1.0, help="TPC-H scale factor")
    parser.add_argument(
        "--tpch-dir",
        type=Path,
        default=None,
        help="where the generated parquet is kept (default <repo>/var/bench/tpch-sf<N>)",
    )
    parser.add_argument("--tpch-runs", type=int, default=1, help="runs of each query per side")
    parser.add_argument("--cancel-runs", type=int, default=10, help="cancels per side")
    parser.add_argument(
        "--keep-data", action="store_true", help="keep the data dirs (logs, SQLite, results)"
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the raw figures")
    parser.add_argument(
        "--runtime",
        choices=("local", "cluster"),
        default="local",
        help="local: both sides local[*]; cluster: both sides on one standalone Spark cluster "
        "started here from the pinned PySpark (each side an application of 2 cores)",
    )
    args = parser.parse_args(argv)
    args.configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    unknown = set(args.configs) - {"embedded", "pg-redis"}
    if unknown or not args.configs:
        parser.error(f"--configs: unknown {sorted(unknown)}; use embedded and/or pg-redis")
    if args.tpch_dir is None:
        args.tpch_dir = ROOT / "var" / "bench" / f"tpch-sf{sf_text(args.tpch_sf)}"
    return args


def sf_text(sf: float) -> str:
    return f"{sf:g}"


# --- statistics ------------------------------------------------------------------------------


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest rank: the smallest value with at least ``fraction`` of them at or below it."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def describe(values: Sequence[float]) -> dict[str, float]:
    """p50/p95/mean/min/max in milliseconds of values in seconds."""
    ms = [v * 1000 for v in values]
    return {
        "n": len(ms),
        "p50": statistics.median(ms),
        "p95": percentile(ms, 0.95),
        "mean": statistics.fmean(ms),
        "min": min(ms),
        "max": max(ms),
    }


def load_text() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def machine_line() -> str:
    return (
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, load {load_text()}"
    )


def commit_measured() -> str:
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
        return done.stdout.strip()

    sha = git("rev-parse", "--short", "HEAD") or "unknown"
    return sha + (" (+ uncommitted changes)" if git("status", "--porcelain") else "")


def run_configs(
    title: str,
    prefix: str,
    configs: str,
    json_path: Path | None,
    measure: Callable[[str, Any], tuple[str, Any]],
) -> None:
    """A benchmark's run over its configurations: a plain Spark for the comparisons, the
    machine and commit, then ``measure(name, spark)`` for each configuration (its report,
    printed, and its figures, kept for ``json_path``)."""
    from harness import plain_spark

    spark = plain_spark(Path(tempfile.mkdtemp(prefix=f"tessera-{prefix}-plain-")) / "warehouse")
    print(f"# {title}\n\n{machine_line()}")
    print(f"commit measured: {commit_measured()}")
    results: dict[str, Any] = {}
    for name in [c.strip() for c in configs.split(",") if c.strip()]:
        text, figures = measure(name, spark)
        print(text, flush=True)
        results[name] = figures
    if json_path:
        json_path.write_text(json.dumps(results, indent=1) + "\n")


# --- the product's processes -----------------------------------------------------------------


@dataclass
class Config:
    name: str
    database_url: str | None
    broker_url: str | None

    @property
    def label(self) -> str:
        if self.database_url is None:
            return "embedded (SQLite, kombu file-system broker; the make run defaults)"
        database = self.database_url.rsplit("/", 1)[1]
        return f"pg-redis (PostgreSQL {database}, Redis {self.broker_url})"


def config_of(name: str, database: str = PG_DATABASE, redis_url: str = REDIS_URL) -> Config:
    """``embedded``, or ``pg-redis`` on ``database`` and ``redis_url`` (other benches use
    their own, so that two of them never share a database)."""
    if name == "embedded":
        return Config(name, None, None)
    return Config(name, f"{PG_SERVER}/{database}", redis_url)


def fresh_pg_database(url: str) -> None:
    """The bench's own database, made anew (nothing left from an earlier run)."""
    import psycopg
    from psycopg import sql

    name = url.rsplit("/", 1)[1]
    assert name not in FORBIDDEN["database"], name
    with psycopg.connect(f"{PG_SERVER}/postgres", autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )
    ensure_database(url)


def flush_redis(url: str) -> None:
    import redis

    assert url.rsplit("/", 1)[1] not in FORBIDDEN["redis_db"], url
    redis.Redis.from_url(url).flushdb()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Stack:
    """migrate, a user and its token, then gunicorn and one worker as scripts/run.sh starts
    them; each in its own process group, stopped by the id of the process started."""

    def __init__(self, config: Config, data_dir: Path, storage_roots: Sequence[Path]) -> None:
        self.config = config
        self.data_dir = data_dir
        self.port = free_port()
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in NOT_INHERITED and not k.startswith("PYTEST")
        }
        env["TESSERA_DATA_DIR"] = str(data_dir)
        env["TESSERA_STORAGE_ROOTS"] = ":".join(str(p) for p in storage_roots)
        if config.database_url:
            env["DATABASE_URL"] = config.database_url
        if config.broker_url:
            env["CELERY_BROKER_URL"] = config.broker_url
        env.update(CLUSTER_ENV)
        self.env = env
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.commands: dict[str, list[str]] = {}
        self.token = ""

    def manage(self, *args: str, timeout: float = 300) -> str:
        done = subprocess.run(
            [str(BIN / "python"), "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"manage.py {args[0]} failed:\n{done.stdout}\n{done.stderr}")
        return done.stdout

    def _spawn(self, name: str, command: list[str]) -> None:
        self.commands[name] = command
        log = (self.data_dir / f"{name}.log").open("ab")
        self.processes[name] = subprocess.Popen(
            command,
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()

    def start(self) -> float:
        """Start everything; the seconds from the worker's start until a first SELECT 1
        FINISHED (its Spark's start-up)."""
        self.manage("migrate", "--noinput", "-v", "0")
        self.token = self.create_users(["bench"])["bench"]
        # scripts/run.sh, word for word (the port is free one; the access log goes to a file).
        self._spawn(
            "gunicorn",
            [
                str(BIN / "gunicorn"),
                "webapp.wsgi",
                "-c",
                "python:webapp.gunicorn_conf",
                "--bind",
                f"127.0.0.1:{self.port}",
                "--workers",
                "2",
                "--threads",
                "16",
                "--access-logfile",
                "-",
                "--graceful-timeout",
                "5",
            ],
        )
        worker_started = time.perf_counter()
        self._spawn(
            "worker",
            [
                str(BIN / "celery"),
                "-A",
                "webapp",
                "worker",
                "--pool",
                "threads",
                "--concurrency",
                "4",
                "--loglevel",
                "INFO",
                "--hostname",
                "worker1@%h",
            ],
        )
        deadline = time.monotonic() + START_TIMEOUT
        api = Api(self.port, self.token)
        while True:
            self.check_alive()
            with contextlib.suppress(OSError, http.client.HTTPException, ValueError):
                status, body = api.call("GET", "/api/v1/health")
                if status == 200 and body.get("workers", 0) >= 1:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"not ready after {START_TIMEOUT:.0f} s\n{self.log_tails()}")
            time.sleep(0.2)
        session = api.session()
        job = api.statement(session, "SELECT 1", wait=30)
        while job["status"] not in TERMINAL:
            self.check_alive()
            if time.monotonic() > deadline:
                raise RuntimeError(f"first SELECT 1 still {job['status']}\n{self.log_tails()}")
            time.sleep(0.1)
            job = api.job(job["id"])
        if job["status"] != "FINISHED":
            raise RuntimeError(f"first SELECT 1 ended {job['status']}: {job.get('error')}")
        api.close()
        return time.perf_counter() - worker_started

    def create_users(self, names: Sequence[str], admin: bool = False) -> dict[str, str]:
        """Users ``names`` (made unless they exist; ``admin``: staff) and a new API token of
        each: name → token."""
        out = self.manage(
            "shell",
            "-c",
            "from django.contrib.auth.models import User\n"
            "from accounts.tokens import token_create\n"
            f"for name in {list(names)!r}:\n"
            "    user = User.objects.filter(username=name).first() or "
            f"User.objects.create_user(name, password=None, is_staff={admin!r})\n"
            "    print('TOKEN', name, token_create(user=user, name='bench')[1])\n",
        )
        return {
            line.split()[1]: line.split()[2]
            for line in out.splitlines()
            if line.startswith("TOKEN ")
        }

    def allow_read_files(self, root: Path) -> None:
        """``READ FILES`` on storage root ``root`` for everyone (granted by an admin, made
        here): declaring an external table over a path needs it (docs/security.md)."""
        token = self.create_users(["bench-admin"], admin=True)["bench-admin"]
        api = Api(self.port, token)
        try:
            api.ok(
                "PATCH",
                f"/api/v1/storage-roots/permissions?path={quote(str(root))}",
                {
                    "changes": [
                        {"principal": "everyone", "principal_type": "team", "add": ["READ FILES"]}
                    ]
                },
            )
        finally:
            api.close()

    def respawn(self, name: str) -> None:
        """Start process ``name`` again with its command (as scripts/run.sh starts the
        worker again after it exited)."""
        self._spawn(name, self.commands[name])

    def check_alive(self) -> None:
        for name, process in self.processes.items():
            if process.poll() is not None:
                raise RuntimeError(f"{name} exited ({process.returncode})\n{self.log_tails()}")

    def log_tails(self, lines: int = 40) -> str:
        parts = []
        for name in self.processes:
            path = self.data_dir / f"{name}.log"
            with contextlib.suppress(OSError):
                text = path.read_text(errors="replace").splitlines()[-lines:]
                parts.append(f"--- {path}\n" + "\n".join(text))
        return "\n".join(parts)

    def stop(self) -> None:
        """TERM each process group, then KILL what is still there after 30 s."""
        for process in self.processes.values():
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        for process in self.processes.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(max(0.1, deadline - time.monotonic()))
        for process in self.processes.values():
            # The group may outlive its leader (the worker's JVM): KILL what is left of it.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(10)


# --- HTTP ------------------------------------------------------------------------------------


class ApiError(RuntimeError):
    pass


class Api:
    """A keep-alive ``http.client`` connection with the token; JSON in and out."""

    def __init__(self, port: int, token: str) -> None:
        self.port = port
        self.headers = {"Authorization": f"Token {token}", "Accept": "application/json"}
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)

    def close(self) -> None:
        self.conn.close()

    def call(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> tuple[int, Any]:
        status, answer, _ = self.call_with_etag(method, path, body, headers)
        return status, answer

    def call_with_etag(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> tuple[int, Any, str]:
        data = None if body is None else json.dumps(body).encode()
        sent = dict(headers or {})
        if data is not None:
            sent["Content-Type"] = "application/json"
        status, raw, response = self.raw(method, path, data, sent)
        etag = response.getheader("ETag") or ""
        return status, (json.loads(raw) if raw else None), etag

    def raw(
        self,
        method: str,
        path: str,
        data: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, bytes, http.client.HTTPResponse]:
        """One request with the token and ``data`` as the body as it is: the status, the
        body's bytes and the (read) response, for its headers."""
        sent = {**self.headers, **(headers or {})}
        for attempt in (1, 2):
            try:
                self.conn.request(method, path, body=data, headers=sent)
                response = self.conn.getresponse()
                raw = response.read()
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # The server closed an idle keep-alive connection before reading the request:
                # connect again and send it once more.
                self.conn.close()
                if attempt == 2:
                    raise
            except BaseException:
                self.conn.close()  # else the connection refuses every later request
                raise
        return response.status, raw, response

    def ok(self, method: str, path: str, body: Any = None, expect: Sequence[int] = (200,)) -> Any:
        status, answer = self.call(method, path, body)
        if status not in expect:
            raise ApiError(f"{method} {path}: {status} {answer}")
        return answer

    def session(self, **fields: Any) -> str:
        return str(self.ok("POST", "/api/v1/sessions", fields, (201,))["id"])

    def statement(
        self, session: str, sql: str, wait: float = 0, page_size: int = 0
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"sql": sql}
        if wait:
            body["wait"] = wait
        if page_size:
            body["page_size"] = page_size
        job: dict[str, Any] = self.ok(
            "POST", f"/api/v1/sessions/{session}/statements", body, (201,)
        )
        return job

    def job(self, job_id: str) -> dict[str, Any]:
        job: dict[str, Any] = self.ok("GET", f"/api/v1/jobs/{job_id}")
        return job

    def follow(
        self, job: dict[str, Any], until: Callable[[dict[str, Any]], bool]
    ) -> dict[str, Any]:
        """The job once ``until(job)`` holds, followed as the browser does: a long-poll,
        ``GET /jobs/{id}?wait=30`` with the ETag last seen, answered when the job changes."""
        etag = ""
        while not until(job):
            headers = {"If-None-Match": etag} if etag else {}
            path = f"/api/v1/jobs/{job['id']}" + ("?wait=30" if etag else "")
            status, answer, etag = self.call_with_etag("GET", path, headers=headers)
            if status == 200:
                job = answer
            elif status != 304:
                raise ApiError(f"GET {path}: {status} {answer}")
        return job

    def result(self, job_id: str, page_size: int) -> tuple[list[dict[str, Any]], list[Any]]:
        """Every page of a job's result: its columns and rows."""
        rows: list[Any] = []
        token = ""
        while True:
            query = f"page_size={page_size}" + (f"&page_token={quote(token)}" if token else "")
            page = self.ok("GET", f"/api/v1/jobs/{job_id}/result?{query}")
            rows.extend(page["rows"])
            if not page.get("next_page_token"):
                return page["columns"], rows
            token = page["next_page_token"]


def ended(job: dict[str, Any]) -> bool:
    return job["status"] in TERMINAL


def iso(text: str) -> float:
    """An ISO-8601 timestamp of the API as seconds since the epoch."""
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


# --- 1. SELECT 1 -----------------------------------------------------------------------------


@dataclass
class Select1:
    tessera: list[float] = field(default_factory=list)  # POST (wait, page_size): page inline
    post: list[float] = field(default_factory=list)
    page: list[float] = field(default_factory=list)
    plain: list[float] = field(default_factory=list)  # spark.sql(...).toArrow()
    to_created: list[float] = field(default_factory=list)  # request sent → created_at
    queue: list[float] = field(default_factory=list)  # created_at → started_at
    run: list[float] = field(default_factory=list)  # started_at → finished_at
    back: list[float] = field(default_factory=list)  # finished_at → answer received
    # The way a plain REST client calls: POST with wait (no page_size), then GET /result.
    rest: list[float] = field(default_factory=list)
    rest_run: list[float] = field(default_factory=list)
    plain_collect: list[float] = field(default_factory=list)  # spark.sql(...).collect()


def tessera_select1(
    api: Api, session: str, into: Select1 | None, inline: bool = True, follow: bool = False
) -> None:
    """One ``SELECT 1``: with ``inline`` the first page comes in the POST's answer
    (``page_size``); without, the POST waits and ``GET /jobs/{id}/result`` reads the page.
    ``follow``: a job still queued when the POST's wait ran out is followed to its end (as a
    client would) instead of raising."""
    sent_wall = time.time()
    began = time.perf_counter()
    job = api.statement(session, "SELECT 1", wait=30, page_size=100 if inline else 0)
    if follow and not ended(job):
        job = api.follow(job, ended)
    answered = time.perf_counter()
    answered_wall = time.time()
    if job["status"] != "FINISHED":
        raise ApiError(f"SELECT 1 answered {job['status']} ({job.get('error')})")
    # The first page comes in the answer (page_size); a server without it: GET /result.
    rows = job["result_page"]["rows"] if "result_page" in job else api.result(job["id"], 100)[1]
    done = time.perf_counter()
    if rows != [[1]]:
        raise ApiError(f"SELECT 1 gave {rows}")
    if into is None:
        return
    created, started, finished = (
        iso(job["created_at"]),
        iso(job["started_at"]),
        iso(job["finished_at"]),
    )
    if not inline:
        into.rest.append(done - began)
        into.rest_run.append(finished - started)
        return
    into.tessera.append(done - began)
    into.post.append(answered - began)
    into.page.append(done - answered)
    into.to_created.append(created - sent_wall)
    into.queue.append(started - created)
    into.run.append(finished - started)
    into.back.append(answered_wall - finished)


def plain_select1(spark: Any, into: Select1 | None, collect: bool = False) -> None:
    began = time.perf_counter()
    if collect:
        spark.sql("SELECT 1").collect()
    else:
        spark.sql("SELECT 1").toArrow()
    if into is not None:
        (into.plain_collect if collect else into.plain).append(time.perf_counter() - began)


def measure_select1(api: Api, spark: Any, n: int) -> Select1:
    session = api.session()
    for _ in range(WARMUP):
        tessera_select1(api, session, None)
        plain_select1(spark, None)
    figures = Select1()
    pauses = random.Random(PAUSE_SEED)
    for _ in range(n):
        time.sleep(pauses.uniform(0, PAUSE_MAX_SECONDS))
        tessera_select1(api, session, figures)
        plain_select1(spark, figures)
        time.sleep(pauses.uniform(0, PAUSE_MAX_SECONDS))
        tessera_select1(api, session, figures, inline=False)
        plain_select1(spark, figures, collect=True)
    return figures


# --- 2. TPC-H --------------------------------------------------------------------------------


def ensure_tpch(directory: Path, sf: float) -> None:
    """Generate the eight tables as parquet (one directory per table) unless all are there."""
    if all(any((directory / t).glob("*.parquet")) for t in TPCH_TABLES):
        return
    command = shutil.which("tpchgen-cli", path=str(BIN)) or shutil.which("tpchgen-cli")
    if command is None:
        print("tpchgen-cli is missing: installing it (pip install -e '.[bench]' does too)")
        subprocess.run(
            [
                str(BIN / "python"),
                "-m",
                "pip",
                "install",
                "-q",
                "-c",
                "constraints.txt",
                "tpchgen-cli",
            ],
            cwd=ROOT,
            check=True,
        )
        command = str(BIN / "tpchgen-cli")
    if directory.exists():
        shutil.rmtree(directory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    partial = directory.with_name(directory.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    began = time.perf_counter()
    subprocess.run(
        [
            command,
            "parquet",
            "-s",
            sf_text(sf),
            "--parts",
            "1",
            "--output-dir",
            str(partial),
            "--no-progress",
            "--quiet",
        ],
        check=True,
    )
    partial.rename(directory)
    size = sum(p.stat().st_size for p in directory.rglob("*.parquet")) / 1e6
    print(
        f"TPC-H SF {sf_text(sf)} generated in {time.perf_counter() - began:.1f} s: "
        f"{size:,.0f} MB of parquet in {directory}"
    )


def sql_type(arrow_type: Any) -> str:
    import pyarrow as pa  # type: ignore[import-untyped]

    t = pa.types
    if t.is_int64(arrow_type):
        return "BIGINT"
    if t.is_int32(arrow_type):
        return "INT"
    if t.is_int16(arrow_type):
        return "SMALLINT"
    if t.is_int8(arrow_type):
        return "TINYINT"
    if t.is_float64(arrow_type):
        return "DOUBLE"
    if t.is_float32(arrow_type):
        return "FLOAT"
    if t.is_decimal(arrow_type):
        return f"DECIMAL({arrow_type.precision}, {arrow_type.scale})"
    if t.is_string(arrow_type) or t.is_large_string(arrow_type) or t.is_string_view(arrow_type):
        return "STRING"
    if t.is_date32(arrow_type):
        return "DATE"
    if t.is_timestamp(arrow_type):
        return "TIMESTAMP"
    if t.is_boolean(arrow_type):
        return "BOOLEAN"
    raise ValueError(f"no SQL type for {arrow_type}")


def tpch_columns(directory: Path, table: str) -> list[dict[str, str]]:
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    first = sorted((directory / table).glob("*.parquet"))[0]
    return [{"name": f.name, "data_type": sql_type(f.type)} for f in pq.read_schema(first)]


def tpch_database(sf: float) -> str:
    return "sf" + sf_text(sf).replace(".", "_")


def register_tpch(api: Api, directory: Path, sf: float, catalog: str = TPCH_CATALOG) -> str:
    """The eight tables as external parquet tables of ``catalog`` (made anew) over REST; the
    session to run the queries in."""
    database = tpch_database(sf)
    status, _ = api.call("GET", f"/api/v1/catalogs/{catalog}")
    if status == 200:
        api.ok("DELETE", f"/api/v1/catalogs/{catalog}?cascade=true", expect=(200, 204))
    api.ok("POST", "/api/v1/catalogs", {"name": catalog}, (201,))
    api.ok("POST", f"/api/v1/catalogs/{catalog}/databases", {"name": database}, (201,))
    for table in TPCH_TABLES:
        api.ok(
            "POST",
            f"/api/v1/catalogs/{catalog}/databases/{database}/tables",
            {
                "name": table,
                "schema": {"columns": tpch_columns(directory, table)},
                "options": {"connector": "parquet", "path": str(directory / table)},
            },
            (201,),
        )
    return api.session(current_catalog=catalog, current_database=database)


def plain_tpch_views(spark: Any, directory: Path) -> None:
    for table in TPCH_TABLES:
        spark.read.parquet(str(directory / table)).createOrReplaceTempView(table)


def tpch_queries() -> list[tuple[str, str]]:
    return [(f"q{i:02d}", (TPCH_QUERIES / f"q{i:02d}.sql").read_text()) for i in range(1, 23)]


Row = tuple[Any, ...]


def normal_value(value: Any, decimal_text: bool) -> Any:
    """One value as both sides can be compared: decimals (strings in the API) and floats as
    float, dates and times as ISO text."""
    if value is None:
        return None
    if isinstance(value, Decimal | float) or (decimal_text and isinstance(value, str)):
        return float(value)
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    return value


def sort_key(row: Row) -> tuple[tuple[int, Any], ...]:
    return tuple((1, 0) if v is None else (0, v) for v in row)


def same_rows(a: list[Row], b: list[Row]) -> str:
    """ "" when equal as sorted lists (floats within 1e-9 relative), else what differs."""
    if len(a) != len(b):
        return f"{len(a)} rows against {len(b)}"
    for i, (x, y) in enumerate(zip(sorted(a, key=sort_key), sorted(b, key=sort_key), strict=True)):
        if len(x) != len(y):
            return f"row {i}: {len(x)} columns against {len(y)}"
        for u, v in zip(x, y, strict=True):
            if isinstance(u, float) and isinstance(v, float):
                if not math.isclose(u, v, rel_tol=1e-9, abs_tol=1e-12):
                    return f"row {i}: {x} against {y}"
            elif u != v:
                return f"row {i}: {x} against {y}"
    return ""


@dataclass
class QueryRun:
    query: str
    tessera: list[float] = field(default_factory=list)
    plain: list[float] = field(default_factory=list)
    rows: int = 0
    difference: str = ""  # "" when the results were equal in every run
    failure: str = ""  # a side that did not finish


def tessera_query(api: Api, session: str, sql: str) -> tuple[float, list[Row], list[str], str]:
    """Seconds until the job ended and every result page was read; rows, column names, and
    a failure ("" when FINISHED)."""
    began = time.perf_counter()
    job = api.follow(api.statement(session, sql, wait=30), ended)
    if job["status"] != "FINISHED":
        error = job.get("error") or {}
        return (
            time.perf_counter() - began,
            [],
            [],
            f"{job['status']} {error.get('code')}: " + (str(error.get("message"))[:200]),
        )
    columns, rows = api.result(job["id"], 1000)
    elapsed = time.perf_counter() - began
    decimal = [str(c.get("data_type", "")).upper().startswith("DECIMAL") for c in columns]
    normal = [tuple(normal_value(v, d) for v, d in zip(row, decimal, strict=True)) for row in rows]
    return elapsed, normal, [str(c["name"]) for c in columns], ""


def plain_query(spark: Any, sql: str) -> tuple[float, list[Row], list[str], str]:
    began = time.perf_counter()
    try:
        table = spark.sql(sql).toArrow()
    except Exception as error:  # reported, the run goes on
        return time.perf_counter() - began, [], [], f"{type(error).__name__}: {error}"[:200]
    elapsed = time.perf_counter() - began
    columns = [c.to_pylist() for c in table.columns]
    rows = [tuple(normal_value(v, False) for v in row) for row in zip(*columns, strict=True)]
    return elapsed, rows, list(table.column_names), ""


def measure_tpch(api: Api, spark: Any, session: str, runs: int) -> list[QueryRun]:
    # Warm-up, untimed: Q6 (one scan of lineitem, the cheapest query) once per side, so that
    # Q1 does not carry alone the first parquet scan and code generation of each JVM.
    warm = dict(tpch_queries())[TPCH_WARMUP]
    for failure in (tessera_query(api, session, warm)[3], plain_query(spark, warm)[3]):
        if failure:
            raise RuntimeError(f"TPC-H warm-up ({TPCH_WARMUP}) failed: {failure}")
    results = []
    for name, sql in tpch_queries():
        entry = QueryRun(name)
        for _ in range(runs):
            t_seconds, t_rows, t_names, t_fail = tessera_query(api, session, sql)
            p_seconds, p_rows, p_names, p_fail = plain_query(spark, sql)
            entry.tessera.append(t_seconds)
            entry.plain.append(p_seconds)
            entry.rows = len(p_rows)
            if t_fail or p_fail:
                entry.failure = "; ".join(
                    f"{side}: {text}"
                    for side, text in (("Tessera", t_fail), ("plain", p_fail))
                    if text
                )
                continue
            if [n.lower() for n in t_names] != [n.lower() for n in p_names]:
                entry.difference = entry.difference or f"columns {t_names} against {p_names}"
            entry.difference = entry.difference or same_rows(t_rows, p_rows)
        status = entry.failure or entry.difference or "equal"
        print(
            f"  {name}: Tessera {statistics.median(entry.tessera):.2f} s, plain "
            f"{statistics.median(entry.plain):.2f} s, {entry.rows} rows, {status}",
            flush=True,
        )
        results.append(entry)
    return results


# --- 3. cancel -------------------------------------------------------------------------------


@dataclass
class Cancels:
    canceled: list[float] = field(default_factory=list)  # Tessera: cancel POST → CANCELED
    idle: list[float] = field(default_factory=list)  # Tessera: cancel POST → SELECT 42 FINISHED
    plain_raised: list[float] = field(default_factory=list)  # cancelJobGroup → action raised
    plain_idle: list[float] = field(default_factory=list)  # cancelJobGroup → SELECT 42 done


def until(condition: Callable[[], bool], timeout: float, every: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"gave up after {timeout:.0f} s waiting for {what}")
        time.sleep(every)


def tessera_cancel(api: Api, into: Cancels) -> None:
    session = api.session()
    job = api.statement(session, SLOW_SQL)
    api.follow(job, lambda j: j["progress"]["tasks_total"] > 0)  # Spark's tasks run
    asked = time.perf_counter()
    job = api.ok("POST", f"/api/v1/jobs/{job['id']}/cancel", expect=(200, 202))
    job = api.follow(job, ended)
    canceled = time.perf_counter()
    if job["status"] != "CANCELED":
        raise ApiError(f"the canceled job ended {job['status']} ({job.get('error')})")
    follow = api.follow(api.statement(session, "SELECT 42", wait=30), ended)
    idle = time.perf_counter()
    if follow["status"] != "FINISHED":
        raise ApiError(f"SELECT 42 after the cancel ended {follow['status']}")
    into.canceled.append(canceled - asked)
    into.idle.append(idle - asked)


def plain_cancel(spark: Any, into: Cancels, run: int) -> None:
    sc = spark.sparkContext
    group = f"bench-latency-cancel-{run}"
    ended: dict[str, Any] = {}
    finished = threading.Event()

    def action() -> None:
        sc.setJobGroup(group, "bench/latency.py cancel", interruptOnCancel=True)
        try:
            spark.sql(SLOW_SQL).collect()
            ended["raised"] = False
        except Exception:
            ended["raised"] = True
        ended["at"] = time.perf_counter()
        finished.set()

    def active_tasks() -> bool:
        tracker = sc.statusTracker()
        for job_id in tracker.getJobIdsForGroup(group):
            job = tracker.getJobInfo(job_id)
            for stage_id in job.stageIds if job else ():
                stage = tracker.getStageInfo(stage_id)
                if stage and stage.numActiveTasks > 0:
                    return True
        return False

    thread = threading.Thread(target=action, name="plain-cancel", daemon=True)
    thread.start()
    until(active_tasks, 120, 0.02, "plain Spark's tasks")
    asked = time.perf_counter()
    sc.cancelJobGroup(group)
    if not finished.wait(120):
        raise RuntimeError("plain Spark's canceled action did not end in 120 s")
    if not ended["raised"]:
        raise RuntimeError("plain Spark's canceled action finished instead")
    spark.sql("SELECT 42").toArrow()
    idle = time.perf_counter()
    thread.join(10)
    into.plain_raised.append(ended["at"] - asked)
    into.plain_idle.append(idle - asked)


def measure_cancels(api: Api, spark: Any, runs: int) -> Cancels:
    figures = Cancels()
    for run in range(runs):
        tessera_cancel(api, figures)
        plain_cancel(spark, figures, run)
    return figures


# --- one configuration -----------------------------------------------------------------------


@dataclass
class ConfigResult:
    config: Config
    started_in: float = 0.0
    select1: Select1 | None = None
    tpch: list[QueryRun] | None = None
    cancels: Cancels | None = None
    load: list[str] = field(default_factory=list)
    error: str = ""


def run_config(
    config: Config, args: argparse.Namespace, spark: Any, keep: list[Path]
) -> ConfigResult:
    result = ConfigResult(config, load=[load_text()])
    if config.database_url:
        fresh_pg_database(config.database_url)
    if config.broker_url:
        flush_redis(config.broker_url)
    data_dir = Path(tempfile.mkdtemp(prefix=f"tessera-bench-latency-{config.name}-"))
    keep.append(data_dir)
    roots = [data_dir / "external"]
    if not args.skip_tpch:
        roots.append(args.tpch_dir.resolve())
    stack = Stack(config, data_dir, roots)
    print(f"\n== {config.label}: data dir {data_dir}", flush=True)
    try:
        result.started_in = stack.start()
        print(f"ready: first SELECT 1 finished {result.started_in:.1f} s after the worker's start")
        api = Api(stack.port, stack.token)
        try:
            print(f"SELECT 1 x {args.n} (+{WARMUP} warm-up) …", flush=True)
            result.select1 = measure_select1(api, spark, args.n)
            if not args.skip_tpch:
                stack.allow_read_files(args.tpch_dir.resolve())
                session = register_tpch(api, args.tpch_dir, args.tpch_sf)
                print(f"TPC-H SF {sf_text(args.tpch_sf)}, {args.tpch_runs} run(s) …", flush=True)
                result.tpch = measure_tpch(api, spark, session, args.tpch_runs)
            if args.cancel_runs:
                print(f"cancel x {args.cancel_runs} …", flush=True)
                result.cancels = measure_cancels(api, spark, args.cancel_runs)
        finally:
            api.close()
    except (RuntimeError, ApiError, OSError, http.client.HTTPException) as error:
        result.error = f"{type(error).__name__}: {error}"
        print(f"!! {config.name} stopped: {result.error}", file=sys.stderr)
        print(stack.log_tails(), file=sys.stderr)
    finally:
        result.load.append(load_text())
        stack.stop()
    return result


# --- report ----------------------------------------------------------------------------------


def table(
    header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int] | None = None
) -> str:
    """A markdown table; the columns in ``right`` (default: all but the first) align right."""
    columns = range(1, len(header)) if right is None else right
    align = ["---:" if i in columns else "---" for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def stat_row(name: str, values: Sequence[float]) -> list[str]:
    d = describe(values)
    return [name, str(int(d["n"]))] + [f"{d[k]:.1f}" for k in ("p50", "p95", "mean", "min", "max")]


STAT_HEADER = ["measurement", "n", "p50 ms", "p95 ms", "mean ms", "min ms", "max ms"]


def added(s: Select1, rest: bool = False) -> tuple[float, float]:
    """Tessera - plain at p50 and at p95 (differences of the percentiles), in ms: the inline
    page against ``toArrow()``, or (``rest``) POST + GET /result against ``collect()``."""
    if rest:
        t, p = describe(s.rest), describe(s.plain_collect)
    else:
        t, p = describe(s.tessera), describe(s.plain)
    return t["p50"] - p["p50"], t["p95"] - p["p95"]


def tpch_sums(queries: list[QueryRun]) -> tuple[float, float, list[str], list[str]]:
    """Σ of the per-query medians over the queries both sides finished; the queries whose
    results differ, and those that failed."""
    ok = [q for q in queries if not q.failure]
    tessera = sum(statistics.median(q.tessera) for q in ok)
    plain = sum(statistics.median(q.plain) for q in ok)
    return (
        tessera,
        plain,
        [q.query for q in queries if q.difference],
        [q.query for q in queries if q.failure],
    )


def report(results: list[ConfigResult], args: argparse.Namespace, commit: str) -> str:
    out: list[str] = []
    for r in results:
        out.append(f"\n### {r.config.label}\n")
        out.append(f"load average at start / end: {r.load[0]} / {r.load[-1]}")
        if args.runtime == "cluster":
            out.append(
                f"Spark: standalone cluster {CLUSTER_ENV.get('SPARK_MASTER', '?')}, each side an "
                f"application of {CLUSTER_APP_CORES} cores, {CLUSTER_EXECUTOR_MEMORY} executors"
            )
        if r.started_in:
            out.append(
                f"worker start → first SELECT 1 FINISHED (Spark start-up): {r.started_in:.1f} s"
            )
        if r.error:
            out.append(f"\n**stopped early**: {r.error.splitlines()[0]}")
        s = r.select1
        if s:
            out.append(
                f"\n`SELECT 1` ({len(s.tessera)} interleaved pairs after {WARMUP} warm-up ones, "
                f"each after a random pause of 0-{PAUSE_MAX_SECONDS:g} s)\n"
            )
            out.append(
                table(
                    STAT_HEADER,
                    [
                        stat_row("Tessera: POST (wait, page_size) + result page", s.tessera),
                        stat_row("plain PySpark: `spark.sql(…).toArrow()`", s.plain),
                        stat_row("Tessera: POST with wait=30, page_size=100", s.post),
                        stat_row("Tessera: GET result page (0 when it came in the answer)", s.page),
                        stat_row(
                            "… request sent → created_at (web: plan, rows, enqueue)", s.to_created
                        ),
                        stat_row("… created_at → started_at (queue wait)", s.queue),
                        stat_row("… started_at → finished_at (run)", s.run),
                        stat_row("… finished_at → answer received (answer back)", s.back),
                        stat_row("Tessera: POST with wait=30, then GET /result", s.rest),
                        stat_row("… started_at → finished_at (run)", s.rest_run),
                        stat_row("plain PySpark: `spark.sql(…).collect()`", s.plain_collect),
                    ],
                )
            )
            p50, p95 = added(s)
            out.append(
                f"\nadded by Tessera, page in the answer vs `toArrow()`: p50 {p50:.1f} ms, "
                f"p95 {p95:.1f} ms"
            )
            p50, p95 = added(s, rest=True)
            out.append(
                f"added by Tessera, POST then GET /result vs `collect()`: p50 {p50:.1f} ms, "
                f"p95 {p95:.1f} ms"
            )
        if r.tpch:
            out.append(
                f"\nTPC-H SF {sf_text(args.tpch_sf)} ({args.tpch_runs} run(s) per side, "
                "median per query; Tessera = POST … FINISHED + all result pages)\n"
            )
            rows = []
            for q in r.tpch:
                t, p = statistics.median(q.tessera), statistics.median(q.plain)
                equal_text = "FAILED: " + q.failure if q.failure else (q.difference or "yes")
                rows.append(
                    [
                        q.query,
                        f"{t:.2f}",
                        f"{p:.2f}",
                        f"{t / p:.2f}",
                        str(q.rows),
                        equal_text.replace("|", "/"),
                    ]
                )
            t_sum, p_sum, differ, failed = tpch_sums(r.tpch)
            rows.append(
                [
                    "**Σ**",
                    f"**{t_sum:.2f}**",
                    f"**{p_sum:.2f}**",
                    f"**{t_sum / p_sum:.3f}**",
                    "",
                    "",
                ]
            )
            out.append(
                table(
                    ["query", "Tessera s", "plain s", "ratio", "rows", "equal"], rows, (1, 2, 3, 4)
                )
            )
            equal = (
                "all 22 equal"
                if not differ and not failed
                else (f"differ: {', '.join(differ) or '-'}; failed: {', '.join(failed) or '-'}")
            )
            out.append(f"\nΣ ratio {t_sum / p_sum:.3f}; results: {equal}")
        c = r.cancels
        if c:
            out.append(f"\ncancel of `{SLOW_SQL}` once Spark has tasks\n")
            rows = [
                stat_row("Tessera: cancel POST → GET reads CANCELED", c.canceled),
                stat_row("Tessera: cancel POST → next SELECT 42 FINISHED (Spark idle)", c.idle),
                stat_row("plain: cancelJobGroup → the action raised", c.plain_raised),
                stat_row("plain: cancelJobGroup → next SELECT 42 done", c.plain_idle),
            ]
            if s:
                rows.append(stat_row("(plain SELECT 1, for scale)", s.plain))
            out.append(table(STAT_HEADER, rows))
    out.append("\n### Summary against the issue's targets\n")
    header = ["target", *[r.config.name for r in results]]
    summary: list[list[str]] = []

    def against(value: float | None, bound: float, fmt: str) -> str:
        if value is None:
            return "-"
        return f"{value:{fmt}} ({'met' if value <= bound else 'missed'})"

    p50s = [added(r.select1)[0] if r.select1 else None for r in results]
    p95s = [added(r.select1)[1] if r.select1 else None for r in results]
    summary.append(
        [f"SELECT 1 added p50 ≤ {TARGETS['select1_added_p50_ms']:.0f} ms"]
        + [against(v, TARGETS["select1_added_p50_ms"], ".1f") for v in p50s]
    )
    summary.append(
        [f"SELECT 1 added p95 ≤ {TARGETS['select1_added_p95_ms']:.0f} ms"]
        + [against(v, TARGETS["select1_added_p95_ms"], ".1f") for v in p95s]
    )
    rest_p50s = [added(r.select1, rest=True)[0] if r.select1 else None for r in results]
    summary.append(
        [f"SELECT 1 added p50 ≤ {TARGETS['select1_added_p50_ms']:.0f} ms (POST, then GET /result)"]
        + [against(v, TARGETS["select1_added_p50_ms"], ".1f") for v in rest_p50s]
    )
    ratio_row = [f"TPC-H Σ ratio ≤ {TARGETS['tpch_ratio']}, every result equal"]
    for r in results:
        if not r.tpch:
            ratio_row.append("-")
            continue
        t_sum, p_sum, differ, failed = tpch_sums(r.tpch)
        ratio = t_sum / p_sum
        good = ratio <= TARGETS["tpch_ratio"] and not differ and not failed
        bad = ", ".join(differ + failed)
        ratio_row.append(
            f"{ratio:.3f}, {'all equal' if not bad else 'not equal: ' + bad}"
            f" ({'met' if good else 'missed'})"
        )
    summary.append(ratio_row)
    cancel_p95 = [describe(r.cancels.canceled)["p95"] if r.cancels else None for r in results]
    summary.append(
        [f"cancel → CANCELED p95 ≤ {TARGETS['cancel_p95_ms']:.0f} ms"]
        + [against(v, TARGETS["cancel_p95_ms"], ".0f") for v in cancel_p95]
    )
    out.append(table(header, summary, ()))
    out.append(f"\ncommit measured: {commit}; {machine_line()}")
    return "\n".join(out)


def raw_figures(results: list[ConfigResult], args: argparse.Namespace, commit: str) -> Any:
    def plain(obj: Any) -> Any:
        if obj is None or isinstance(obj, str | int | float):
            return obj
        if isinstance(obj, list):
            return [plain(x) for x in obj]
        return {k: plain(v) for k, v in vars(obj).items()}

    return {
        "commit": commit,
        "date": dt.datetime.now(dt.UTC).isoformat(),
        "machine": machine_line(),
        "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "results": [plain(r) for r in results],
    }


# --- main ------------------------------------------------------------------------------------


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM ends the run as Ctrl-C does: through every ``finally`` (servers stopped)."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


# The Tessera worker's Spark on ``--runtime cluster`` (set by ``start_cluster``).
CLUSTER_ENV: dict[str, str] = {}
# Each side's application on the cluster: as many cores as this machine has, and the
# standalone worker offers twice that, so both applications hold executors at once (they
# never run queries at the same time).
CLUSTER_APP_CORES = os.cpu_count() or 2
CLUSTER_EXECUTOR_MEMORY = "3g"


def start_cluster(folder: Path) -> tuple[Any, str, dict[str, str]]:
    """A standalone master + worker from the pinned PySpark (``tests/runtimes/standalone``,
    what the runtime matrix runs on); the worker's ``SPARK_CONF_DIR`` and plain PySpark's
    configuration give both sides the same executors."""
    sys.path.insert(0, str(ROOT))
    from tests.runtimes.standalone import cluster_defaults, start_standalone_cluster

    cluster = start_standalone_cluster(folder / "cluster", cores=2 * CLUSTER_APP_CORES, memory="8g")
    conf_dir = cluster_defaults(
        folder / "spark-conf", executor_memory=CLUSTER_EXECUTOR_MEMORY, cores=CLUSTER_APP_CORES
    )
    CLUSTER_ENV.update({"SPARK_MASTER": cluster.url, "SPARK_CONF_DIR": str(conf_dir)})
    print(f"standalone cluster {cluster.url} (logs in {cluster.folder})", flush=True)
    conf = {
        "spark.executor.memory": CLUSTER_EXECUTOR_MEMORY,
        "spark.cores.max": str(CLUSTER_APP_CORES),
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
    }
    return cluster, cluster.url, conf


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    commit = commit_measured()
    began = time.perf_counter()
    print(f"bench/latency.py at {commit}; {machine_line()}", flush=True)
    keep: list[Path] = []
    results: list[ConfigResult] = []
    with terminate_as_interrupt():
        plain_dir = Path(tempfile.mkdtemp(prefix="tessera-bench-latency-plain-"))
        keep.append(plain_dir)
        spark = None
        cluster = None
        try:
            if not args.skip_tpch:
                ensure_tpch(args.tpch_dir, args.tpch_sf)
            master, conf = "local[*]", dict[str, str]()
            if args.runtime == "cluster":
                cluster, master, conf = start_cluster(plain_dir)
            spark = plain_spark(plain_dir / "warehouse", master, **conf)
            if not args.skip_tpch:
                plain_tpch_views(spark, args.tpch_dir)
            for name in args.configs:
                results.append(run_config(config_of(name), args, spark, keep))
        finally:
            if spark is not None:
                spark.stop()
            if cluster is not None:
                cluster.stop()
            for path in keep:
                if args.keep_data:
                    print(f"kept {path}")
                else:
                    shutil.rmtree(path, ignore_errors=True)
    text = report(results, args, commit)
    print(text)
    print(f"\nwhole run: {time.perf_counter() - began:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(raw_figures(results, args, commit), indent=1) + "\n")
        print(f"raw figures: {args.json}")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        print("\ninterrupted: everything it started is stopped", file=sys.stderr)
        sys.exit(130)
