"""Engines (docs/api.md §6, engine/pool.py), measured on a real stack: ``python
bench/engines.py`` (``--quick``: a short look).

Starts the product as ``bench/latency.py`` does (``Stack``: gunicorn with
``webapp.gunicorn_conf``, 2 processes x 16 threads, and one Celery worker, threads pool,
concurrency 4) against PostgreSQL database ``bench_engines`` on 127.0.0.1:5432 (made anew
at each run) and Redis ``redis://127.0.0.1:6379/9`` (flushed), and drives it over HTTP with
API tokens, in four phases, each with its own servers (the database stays):

- **cold** (``TESSERA_ENGINE_SHARE_LEVEL=user``, ``TESSERA_ENGINE_SPARES=0``):
  1. a new user's first ``SELECT 1`` with no spare: the job's creation → FINISHED, the
     engine's ``started_at`` → ``ready_at``; plain PySpark's cold start next to it, in a
     fresh subprocess each time (``SparkSession.builder.master("local[1]").getOrCreate()``
     and ``SELECT 1``);
  4. the memory of the engines left idle after that one statement (below);
- **alone** (``user``, one spare, ``TESSERA_ENGINES_MAX=1``): 2 below, while no
  replacement spare starts (the worker has no room for one): what the first statement on
  a spare costs by itself;
- **user** (``user``, ``TESSERA_ENGINE_SPARES=1``):
  4. the memory of a spare that has run nothing;
  2. a new user's first ``SELECT 1`` when a spare is ready: ``waited_ms`` of its
     ``engine_assigned`` event, creation → FINISHED;
  3. ``kill -9`` of a user's driver JVM (``Engine.pid``), a ready spare waiting: the time
     from the kill until that user's next ``SELECT 1`` FINISHES (sent at once after the
     kill, or once the engine's row is LOST; sent again at once if it fails), which engine
     ran it, and another user's ``SELECT 1`` latency meanwhile (a loop from before the kill
     until the next spare is ready);
  5. isolation: bob sends four long cross joins, alice 20 ``SELECT 1`` meanwhile, against
     her 20 before bob started; whether any of hers waited (``queued`` events);
  6. one user, three clients: three threads, one API token and one session, 30 ``SELECT 1``
     each (REST, ``wait``): statuses, 429s (sent again after ``retry_after``), wall time;
- **server** (``server``: every job in the worker's own Spark, the shape before engines):
  the worker's own memory, then 5 and 6 again.

Memory (4) is read from /proc: an engine is a child of the worker started as ``manage.py
engine_host``, its driver JVM a child of it; RSS and PSS (``smaps_rollup``) of both, at the
default ``TESSERA_SPARK_DRIVER_MEMORY`` unless ``--driver-memory``. Between parts the
engines of the users done with are stopped as a restart asks (``Engine.stop_requested``,
the write of ``jobs.engines.request_stop``), so that each part starts with one ready spare.

It reports (markdown tables, targets marked met/missed; ``--json`` for the raw figures) and
never asserts. docs/benchmarks.md, "Engines", has a run and how to read it.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from latency import (
    BIN,
    PG_SERVER,
    Api,
    ApiError,
    Config,
    Stack,
    commit_measured,
    ended,
    flush_redis,
    fresh_pg_database,
    load_text,
    machine_line,
    percentile,
    table,
    terminate_as_interrupt,
)

DB_NAME = "bench_engines"
REDIS_URL = "redis://127.0.0.1:6379/9"
LONG = "SELECT count(*) AS n FROM range(0, {n}) AS a CROSS JOIN range(0, 60000) AS b"
LIVE = ("STARTING", "READY", "STOPPING")
START_TIMEOUT = 240.0
NAN = float("nan")
TARGETS = {"spare_s": 5.0, "recovery_s": 5.0, "isolation_ratio": 2.0}
# What the phases set themselves; never inherited from the caller's environment.
OWN_ENV = ("TESSERA_ENGINE_", "TESSERA_SPARK_DRIVER_MEMORY", "TESSERA_ENGINES_MAX")
PLAIN_COLD = """
import json, sys, time
t0 = time.time()
from pyspark.sql import SparkSession
spark = SparkSession.builder.master("local[1]").getOrCreate()
t1 = time.time()
spark.sql("SELECT 1").collect()
t2 = time.time()
print(json.dumps({"started": t0, "session": t1, "selected": t2}), flush=True)
spark.stop()
"""


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs, smaller joins")
    parser.add_argument("--parts", default="cold,spare,kill,isolation,clients")
    parser.add_argument("--levels", default="user,server", help="share levels of parts 5, 6")
    parser.add_argument("--cold-runs", type=int, default=None, help="3 (quick: 1)")
    parser.add_argument("--spare-runs", type=int, default=None, help="3 (quick: 2)")
    parser.add_argument("--kill-runs", type=int, default=None, help="3 (quick: 1)")
    parser.add_argument("--alice-runs", type=int, default=None, help="20 (quick: 10)")
    parser.add_argument("--bob-jobs", type=int, default=4)
    parser.add_argument(
        "--bob-rows", type=int, default=None, help="N of bob's cross join (100000; quick: 50000)"
    )
    parser.add_argument("--clients", type=int, default=3)
    parser.add_argument("--client-statements", type=int, default=None, help="30 (quick: 10)")
    parser.add_argument("--driver-memory", default="", help="default: the product's (1g)")
    parser.add_argument("--spark-master", default="", help="default: the product's (local[*])")
    parser.add_argument("--db-name", default=DB_NAME)
    parser.add_argument("--redis-url", default=REDIS_URL)
    parser.add_argument("--keep-data", action="store_true", help="keep the data dirs (logs)")
    parser.add_argument("--json", type=Path, default=None, help="also write the raw figures")
    args = parser.parse_args(argv)
    quick = args.quick
    defaults = {
        "cold_runs": (3, 1),
        "spare_runs": (3, 2),
        "kill_runs": (3, 1),
        "alice_runs": (20, 10),
        "bob_rows": (100_000, 50_000),
        "client_statements": (30, 10),
    }
    for name, (full, short) in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, short if quick else full)
    args.parts = {p.strip() for p in args.parts.split(",") if p.strip()}
    args.levels = [v.strip() for v in args.levels.split(",") if v.strip()]
    unknown = args.parts - {"cold", "spare", "kill", "isolation", "clients"}
    if unknown or set(args.levels) - {"user", "server"}:
        parser.error(f"unknown parts {sorted(unknown)} or levels {args.levels}")
    return args


# --- statistics ------------------------------------------------------------------------------


def p50(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def p95(values: Sequence[float]) -> float:
    return percentile(values, 0.95) if values else float("nan")


def s(value: float | None, digits: int = 2) -> str:
    return "-" if value is None or value != value else f"{value:.{digits}f}"


def ms(value: float | None) -> str:
    return "-" if value is None or value != value else f"{value * 1000:.0f}"


def against(value: float, bound: float, text: str) -> str:
    return f"{text} ({'met' if value <= bound else 'MISSED'})"


# --- /proc -----------------------------------------------------------------------------------


def parents() -> dict[int, int]:
    """pid → parent pid of every process."""
    table_: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):
            stat = Path(f"/proc/{entry}/stat").read_text()
            table_[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    return table_


def children(pid: int, table_: dict[int, int]) -> list[int]:
    return sorted(child for child, parent in table_.items() if parent == pid)


def descendants(pid: int, table_: dict[int, int]) -> list[int]:
    found: list[int] = []
    for child in children(pid, table_):
        found += [child, *descendants(child, table_)]
    return found


def cmdline(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    return ""


def memory_kb(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of a process in kB."""
    rss = pss = 0
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                pss = int(line.split()[1])
    return rss, pss


@dataclass
class Memory:
    what: str
    process: int
    python_rss_kb: int
    python_pss_kb: int
    jvm_rss_kb: int
    jvm_pss_kb: int

    @property
    def rss_mb(self) -> float:
        return (self.python_rss_kb + self.jvm_rss_kb) / 1024

    @property
    def pss_mb(self) -> float:
        return (self.python_pss_kb + self.jvm_pss_kb) / 1024


def process_memory(pid: int, what: str, table_: dict[int, int]) -> Memory:
    """A Python process and the JVM(s) below it (any descendant that runs java)."""
    rss, pss = memory_kb(pid)
    jvm_rss = jvm_pss = 0
    for child in descendants(pid, table_):
        if "java" in cmdline(child):
            r, p = memory_kb(child)
            jvm_rss, jvm_pss = jvm_rss + r, jvm_pss + p
    return Memory(what, pid, rss, pss, jvm_rss, jvm_pss)


def engine_processes(worker: int) -> list[int]:
    table_ = parents()
    return [p for p in children(worker, table_) if "engine_host" in cmdline(p)]


def engines_memory(worker: int, what: str) -> list[Memory]:
    table_ = parents()
    return [
        process_memory(p, what, table_)
        for p in children(worker, table_)
        if "engine_host" in cmdline(p)
    ]


# --- the database (reads; the stop request is the write of jobs.engines.request_stop) --------


class Db:
    def __init__(self, url: str) -> None:
        import psycopg
        from psycopg.rows import dict_row

        self.conn = psycopg.connect(url, autocommit=True, row_factory=dict_row)

    def one(self, sql: str, *params: Any) -> dict[str, Any]:
        row = self.conn.execute(sql, params).fetchone()
        assert row is not None, (sql, params)
        return dict(row)

    def rows(self, sql: str, *params: Any) -> list[dict[str, Any]]:
        return [dict(r) for r in self.conn.execute(sql, params).fetchall()]

    def job(self, job_id: str) -> dict[str, Any]:
        return self.one(
            "SELECT id, status, created_at, started_at, finished_at, engine_id, error"
            " FROM jobs_job WHERE id = %s",
            job_id,
        )

    def engine(self, engine_id: Any) -> dict[str, Any]:
        return self.one("SELECT * FROM jobs_engine WHERE id = %s", engine_id)

    def events(self, job_ids: Sequence[str], *types: str) -> list[dict[str, Any]]:
        return self.rows(
            "SELECT job_id, type, detail, at FROM jobs_jobevent"
            " WHERE job_id = ANY(%s::uuid[]) AND type = ANY(%s) ORDER BY at, id",
            [*job_ids],
            [*types],
        )

    def assigned(self, job_id: str) -> dict[str, Any]:
        """The detail of the job's last ``engine_assigned`` event, and its time (``at``)."""
        found = self.events([job_id], "engine_assigned")
        return {**found[-1]["detail"], "at": found[-1]["at"]} if found else {}

    def ready_spare(self, since: dt.datetime) -> dict[str, Any] | None:
        found = self.rows(
            "SELECT * FROM jobs_engine WHERE share_key = '' AND state = 'READY'"
            " AND started_at >= %s ORDER BY ready_at LIMIT 1",
            since,
        )
        return found[0] if found else None

    def live_engines(self, keys: Sequence[str]) -> list[dict[str, Any]]:
        return self.rows(
            "SELECT * FROM jobs_engine WHERE share_key = ANY(%s) AND state = ANY(%s)",
            [*keys],
            [*LIVE],
        )

    def request_stop(self, keys: Sequence[str]) -> None:
        self.conn.execute(
            "UPDATE jobs_engine SET stop_requested = 'restart', stop_requested_by = 'bench'"
            " WHERE share_key = ANY(%s) AND state = ANY(%s)",
            ([*keys], [*LIVE]),
        )

    def now(self) -> dt.datetime:
        value: dt.datetime = self.one("SELECT now() AS t")["t"]
        return value


def until(check: Callable[[], Any], timeout: float, what: str, every: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(every)


def seconds_between(a: dt.datetime | None, b: dt.datetime | None) -> float:
    if a is None or b is None:
        return float("nan")
    return (b - a).total_seconds()


# --- HTTP --------------------------------------------------------------------------------------


class Client(Api):
    """``latency.Api`` with a session of its own and the answers of refused statements."""

    def __init__(self, port: int, token: str, session: str = "") -> None:
        super().__init__(port, token)
        self.sid = session or self.session()

    def select(self, sql: str = "SELECT 1") -> tuple[float, dict[str, Any]]:
        """POST with ``wait`` and follow it to its end: (seconds, the job)."""
        began = time.perf_counter()
        job = self.follow(self.statement(self.sid, sql, wait=30), ended)
        return time.perf_counter() - began, job

    def try_statement(self, sql: str) -> tuple[int, dict[str, Any]]:
        status, body = self.call(
            "POST", f"/api/v1/sessions/{self.sid}/statements", {"sql": sql, "wait": 30}
        )
        return status, body or {}

    def cancel_job(self, job_id: str) -> None:
        self.ok("POST", f"/api/v1/jobs/{job_id}/cancel", {}, (200, 202))


# --- the stack -----------------------------------------------------------------------------------


@dataclass
class User:
    name: str
    id: int
    token: str

    @property
    def key(self) -> str:
        return f"user:{self.id}"


class Phase:
    """gunicorn and one worker with the share level and spares of one phase."""

    def __init__(self, name: str, args: argparse.Namespace, folder: Path, env: dict[str, str]):
        self.name = name
        data = folder / name
        data.mkdir()
        (data / "external").mkdir()
        config = Config(name, f"{PG_SERVER}/{args.db_name}", args.redis_url)
        self.stack = Stack(config, data, [data / "external"])
        for key in [k for k in self.stack.env if k.startswith(OWN_ENV)]:
            del self.stack.env[key]
        if args.driver_memory:
            env["TESSERA_SPARK_DRIVER_MEMORY"] = args.driver_memory
        if args.spark_master:
            env["SPARK_MASTER"] = args.spark_master
        self.stack.env.update(env)
        self.env = env
        self.began = dt.datetime.now(dt.UTC)
        self.worker_started = 0.0
        self.load = [load_text()]

    @property
    def port(self) -> int:
        return self.stack.port

    @property
    def worker(self) -> int:
        return self.stack.processes["worker"].pid

    def boot(self, names: Sequence[str], users: dict[str, User]) -> None:
        """Migrate, make the users that do not exist yet (and tokens), start the servers and
        wait until the web answers with a live worker."""
        stack = self.stack
        stack.manage("migrate", "--noinput", "-v", "0")
        missing = [n for n in names if n not in users]
        if missing:
            out = stack.manage(
                "shell",
                "-c",
                "from django.contrib.auth.models import User\n"
                "from accounts.tokens import token_create\n"
                f"for name in {missing!r}:\n"
                "    user = User.objects.filter(username=name).first() or "
                "User.objects.create_user(name, password=None)\n"
                "    print('USER', name, user.pk, token_create(user=user, name='bench')[1])\n",
            )
            for line in out.splitlines():
                if line.startswith("USER "):
                    _, name, pk, token = line.split()
                    users[name] = User(name, int(pk), token)
        self.began = dt.datetime.now(dt.UTC)
        stack._spawn(
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
        self.worker_started = time.perf_counter()
        stack._spawn(
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
                f"{self.name}@%h",
            ],
        )
        api = Api(self.port, next(iter(users.values())).token)
        try:

            def live() -> bool:
                stack.check_alive()
                with contextlib.suppress(Exception):
                    status, body = api.call("GET", "/api/v1/health")
                    return status == 200 and body.get("workers", 0) >= 1
                return False

            until(live, START_TIMEOUT, "the web and a live worker", 0.2)
        finally:
            api.close()

    def stop(self) -> None:
        """Stop the servers (the worker stops its engines), then end any engine process of
        this worker still there (identity ``<phase>@host/<worker pid>/…``) with its JVM."""
        self.load.append(load_text())
        worker = self.stack.processes.get("worker")
        self.stack.stop()
        if worker is None:
            return

        def leftovers() -> list[int]:
            mark = f"--identity {self.name}@"
            return [
                pid
                for pid in parents()
                if "engine_host" in (line := cmdline(pid))
                and mark in line
                and f"/{worker.pid}/" in line
            ]

        with contextlib.suppress(RuntimeError):
            until(lambda: not leftovers(), 15, "the engines to end", 0.5)
        for pid in leftovers():
            print(f"engine process {pid} outlived its worker: killed", file=sys.stderr)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)  # its own session: it and its JVM


# --- 1. cold start ---------------------------------------------------------------------------


@dataclass
class Cold:
    created_to_finished: float
    post_to_answer: float
    engine_start_to_ready: float
    waited_ms: int
    spare: bool
    # engine_assigned (the engine ready and given the job) → FINISHED: the first statement's
    # own run on the new engine; and a second SELECT 1 right after (POST → answer).
    first_run: float = 0.0
    second: float = 0.0


@dataclass
class PlainCold:
    spawn_to_selected: float
    session: float  # import + getOrCreate
    select: float
    whole_process: float


def plain_cold() -> PlainCold:
    """Plain PySpark's cold start in a fresh subprocess of the same interpreter."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_"))}
    spawned = time.time()
    process = subprocess.Popen(
        [str(BIN / "python"), "-c", PLAIN_COLD],
        cwd=tempfile.gettempdir(),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    process.wait(120)
    done = time.time()
    times = json.loads(line)
    return PlainCold(
        spawn_to_selected=times["selected"] - spawned,
        session=times["session"] - times["started"],
        select=times["selected"] - times["session"],
        whole_process=done - spawned,
    )


def first_select(db: Db, phase: Phase, user: User) -> tuple[Cold, dict[str, Any]]:
    """A new user's first ``SELECT 1``, and a second one right after."""
    client = Client(phase.port, user.token)
    try:
        took, job = client.select()
        second, again = client.select()
    finally:
        client.close()
    for one in (job, again):
        if one["status"] != "FINISHED":
            raise ApiError(f"{user.name}'s SELECT 1 ended {one['status']}: {one.get('error')}")
    row = db.job(job["id"])
    engine = db.engine(row["engine_id"])
    detail = db.assigned(job["id"])
    cold = Cold(
        created_to_finished=seconds_between(row["created_at"], row["finished_at"]),
        post_to_answer=took,
        engine_start_to_ready=seconds_between(engine["started_at"], engine["ready_at"]),
        waited_ms=int(detail.get("waited_ms", -1)),
        spare=bool(detail.get("spare")),
        first_run=seconds_between(detail.get("at"), row["finished_at"]),
        second=second,
    )
    return cold, engine


# --- 3. recovery -------------------------------------------------------------------------------


@dataclass
class Recovery:
    sent: str  # when the user's next SELECT 1 was sent: "at once", "once LOST"
    kill_to_finished: float
    attempts: list[str]  # status (error code) of each SELECT 1 sent after the kill
    noticed: float  # kill → the engine row LOST (its stopped_at); NaN: it never was
    recovered_on_spare: bool
    waited_ms: int
    same_engine: bool  # the next SELECT 1 ran on the engine whose JVM was killed
    first_run: float = 0.0  # its engine_assigned → FINISHED
    bystander_during: list[float] = field(default_factory=list)  # kill → victim FINISHED
    bystander_after: list[float] = field(default_factory=list)  # → the next spare ready
    bystander_failed: list[str] = field(default_factory=list)


class Loop(threading.Thread):
    """One user's ``SELECT 1`` one after another until told to stop: (sent, seconds, status)."""

    def __init__(self, port: int, user: User, session: str) -> None:
        super().__init__(daemon=True)
        self.client = Client(port, user.token, session)
        self.stop = threading.Event()
        self.samples: list[tuple[float, float, str]] = []
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                sent = time.time()
                took, job = self.client.select()
                code = (job.get("error") or {}).get("code", "")
                self.samples.append((sent, took, job["status"] + (f" {code}" if code else "")))
        except BaseException as error:  # reported by the caller
            self.error = error
        finally:
            self.client.close()


def checked_jvm(pid: int, worker: int) -> int:
    """``pid`` if it is a java process below our worker (never anything else)."""
    table_ = parents()
    chain, at = [], pid
    while at in table_ and at > 1:
        at = table_[at]
        chain.append(at)
    if worker not in chain or "java" not in cmdline(pid):
        raise RuntimeError(f"pid {pid} is not a JVM of worker {worker}: {cmdline(pid)[:200]}")
    return pid


def recovery(
    db: Db,
    phase: Phase,
    victim: User,
    bystander: User,
    session: str,
    spare_timeout: float,
    once_lost: bool,
) -> Recovery:
    """Kill ``victim``'s driver JVM; send their next ``SELECT 1`` at once, or once the
    engine's row is LOST (``once_lost``: the worker has seen the engine end)."""
    _, engine = first_select(db, phase, victim)
    wait_spare(db, phase, spare_timeout)
    jvm = checked_jvm(int(engine["pid"]), phase.worker)
    loop = Loop(phase.port, bystander, session)
    loop.start()
    time.sleep(1.0)
    client = Client(phase.port, victim.token)
    attempts: list[str] = []
    try:
        killed_wall, killed = time.time(), time.perf_counter()
        os.kill(jvm, signal.SIGKILL)
        if once_lost:
            row = {"id": engine["id"]}
            until(lambda: db.engine(row["id"])["state"] == "LOST", 120, "the engine LOST", 0.05)
        job: dict[str, Any] = {}
        while True:
            _, job = client.select()
            code = (job.get("error") or {}).get("code", "")
            attempts.append(job["status"] + (f" {code}" if code else ""))
            if job["status"] == "FINISHED" or len(attempts) >= 5:
                break
        recovered_wall, took = time.time(), time.perf_counter() - killed
        wait_spare(db, phase, spare_timeout)
        spare_wall = time.time()
        time.sleep(1.0)
    finally:
        loop.stop.set()
        loop.join(120)
        client.close()
    if loop.error is not None:
        raise RuntimeError(f"the bystander's loop failed: {loop.error!r}")
    detail = db.assigned(job["id"])
    lost = db.engine(engine["id"])
    stopped = lost["stopped_at"] if lost["state"] == "LOST" else None
    result = Recovery(
        sent="once LOST" if once_lost else "at once",
        kill_to_finished=took,
        attempts=attempts,
        noticed=stopped.timestamp() - killed_wall if stopped is not None else NAN,
        recovered_on_spare=bool(detail.get("spare")),
        waited_ms=int(detail.get("waited_ms", -1)),
        same_engine=str(db.job(job["id"])["engine_id"]) == str(engine["id"]),
        first_run=seconds_between(detail.get("at"), db.job(job["id"])["finished_at"]),
    )
    for sent, seconds, status in loop.samples:
        if sent + seconds < killed_wall:
            continue
        if status != "FINISHED":
            result.bystander_failed.append(status)
        elif sent <= recovered_wall:
            result.bystander_during.append(seconds)
        elif sent <= spare_wall:
            result.bystander_after.append(seconds)
    return result


def wait_spare(db: Db, phase: Phase, timeout: float) -> dict[str, Any]:
    def ready() -> dict[str, Any] | None:
        phase.stack.check_alive()
        return db.ready_spare(phase.began)

    found: dict[str, Any] = until(ready, timeout, "a ready spare", 0.2)
    return found


def retire(db: Db, users: Sequence[User]) -> None:
    """Stop the engines of ``users`` as a restart does; wait until they have ended."""
    keys = [u.key for u in users]
    db.request_stop(keys)
    until(lambda: not db.live_engines(keys), 90, "the engines to stop", 0.2)


# --- 5. isolation -------------------------------------------------------------------------------


@dataclass
class Isolation:
    level: str
    idle: list[float] = field(default_factory=list)
    loaded: list[float] = field(default_factory=list)
    loaded_queue: list[float] = field(default_factory=list)  # created → started
    queued: list[str] = field(default_factory=list)  # reasons of alice's queued events
    waiting_for_engine: int = 0
    overlapped: int = 0  # alice's loaded runs that ran while bob had a job RUNNING
    during: list[float] = field(default_factory=list)  # those runs' seconds (FINISHED)
    alice_engines: int = 0
    bob: list[str] = field(default_factory=list)  # bob's jobs: status and seconds run
    bob_queued: list[str] = field(default_factory=list)


def isolation(
    db: Db, phase: Phase, alice: User, bob: User, args: argparse.Namespace, spares: bool
) -> Isolation:
    result = Isolation(phase.name)
    a = Client(phase.port, alice.token)
    b = Client(phase.port, bob.token)
    try:
        for _ in range(3):
            a.select()
        if spares:
            wait_spare(db, phase, START_TIMEOUT)
        b.select()
        if spares:
            wait_spare(db, phase, START_TIMEOUT)
        for _ in range(args.alice_runs):
            took, job = a.select()
            if job["status"] == "FINISHED":
                result.idle.append(took)
        bob_jobs = [
            b.statement(b.sid, LONG.format(n=args.bob_rows + i))["id"] for i in range(args.bob_jobs)
        ]

        def spark_busy() -> bool:
            for job_id in bob_jobs:
                job = b.job(job_id)
                if job["status"] == "RUNNING" and (job.get("progress") or {}).get("tasks_total"):
                    return True
            return False

        until(spark_busy, START_TIMEOUT, "bob's joins to run in Spark", 0.2)
        time.sleep(2.0)  # the others start too
        alice_jobs: list[str] = []
        took_of: dict[str, float] = {}
        for _ in range(args.alice_runs):
            took, job = a.select()
            alice_jobs.append(job["id"])
            if job["status"] == "FINISHED":
                result.loaded.append(took)
                took_of[job["id"]] = took
        for job_id in bob_jobs:
            if not ended(b.job(job_id)):
                b.cancel_job(job_id)
        for job_id in bob_jobs:
            b.follow(b.job(job_id), ended)
    finally:
        a.close()
        b.close()
    bob_rows = [db.job(j) for j in bob_jobs]
    spans = [(r["started_at"], r["finished_at"]) for r in bob_rows if r["started_at"] is not None]
    for r in bob_rows:
        run = seconds_between(r["started_at"], r["finished_at"])
        result.bob.append(f"{r['status']} " + ("never ran" if run != run else f"{run:.0f} s"))
    engines = set()
    for job_id in alice_jobs:
        r = db.job(job_id)
        engines.add(r["engine_id"])
        result.loaded_queue.append(seconds_between(r["created_at"], r["started_at"]))
        if any(
            st <= r["finished_at"] and (fin is None or fin >= r["created_at"]) for st, fin in spans
        ):
            result.overlapped += 1
            if job_id in took_of:
                result.during.append(took_of[job_id])
    result.alice_engines = len(engines)
    for event in db.events(alice_jobs, "queued", "waiting_for_engine"):
        if event["type"] == "queued":
            started = db.job(str(event["job_id"]))["started_at"]
            after = seconds_between(event["at"], started)
            detail = event["detail"]
            result.queued.append(
                f"{detail.get('reason')} (her running jobs {detail.get('running')}; "
                f"started {after * 1000:.0f} ms later)"
            )
        else:
            result.waiting_for_engine += 1
    for event in db.events(bob_jobs, "queued"):
        result.bob_queued.append(str(event["detail"].get("reason")))
    return result


# --- 6. one user, three clients -------------------------------------------------------------


@dataclass
class Clients:
    level: str
    statuses: dict[str, int] = field(default_factory=dict)
    refused: dict[str, int] = field(default_factory=dict)  # 429 codes
    latencies: list[float] = field(default_factory=list)
    wall: float = 0.0
    errors: list[str] = field(default_factory=list)


def clients(phase: Phase, user: User, args: argparse.Namespace) -> Clients:
    result = Clients(phase.name)
    first = Client(phase.port, user.token)
    session = first.sid
    first.select()
    first.close()
    lock = threading.Lock()

    def one_client() -> None:
        client = Client(phase.port, user.token, session)
        try:
            for _ in range(args.client_statements):
                while True:
                    began = time.perf_counter()
                    status, body = client.try_statement("SELECT 1")
                    if status == 429:
                        error = body.get("error") or {}
                        with lock:
                            code = str(error.get("code"))
                            result.refused[code] = result.refused.get(code, 0) + 1
                        time.sleep(float((error.get("details") or {}).get("retry_after", 1)))
                        continue
                    if status != 201:
                        raise ApiError(f"POST statement: {status} {body}")
                    job = client.follow(body, ended)
                    with lock:
                        result.latencies.append(time.perf_counter() - began)
                        result.statuses[job["status"]] = result.statuses.get(job["status"], 0) + 1
                    break
        except Exception as error:
            with lock:
                result.errors.append(repr(error))
        finally:
            client.close()

    threads = [threading.Thread(target=one_client) for _ in range(args.clients)]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    result.wall = time.perf_counter() - began
    return result


# --- the run ---------------------------------------------------------------------------------


@dataclass
class Results:
    commit: str = ""
    date: str = ""
    machine: str = ""
    args: dict[str, Any] = field(default_factory=dict)
    loads: dict[str, list[str]] = field(default_factory=dict)
    cold: list[Cold] = field(default_factory=list)
    plain: list[PlainCold] = field(default_factory=list)
    spare: list[Cold] = field(default_factory=list)
    spare_alone: list[Cold] = field(default_factory=list)  # no replacement spare starting
    recovery: list[Recovery] = field(default_factory=list)
    bystander_idle: list[float] = field(default_factory=list)
    memory: list[Memory] = field(default_factory=list)
    isolation: list[Isolation] = field(default_factory=list)
    clients: list[Clients] = field(default_factory=list)
    server_first_select: float = 0.0
    errors: list[str] = field(default_factory=list)


def phase_cold(
    db: Db, args: argparse.Namespace, folder: Path, users: dict[str, User], r: Results
) -> None:
    phase = Phase(
        "cold", args, folder, {"TESSERA_ENGINE_SHARE_LEVEL": "user", "TESSERA_ENGINE_SPARES": "0"}
    )
    names = [f"cold{i}" for i in range(args.cold_runs)]
    try:
        phase.boot(names, users)
        for name in names:
            print(f"cold start: {name} …", flush=True)
            cold, _ = first_select(db, phase, users[name])
            r.cold.append(cold)
            took, ready = cold.created_to_finished, cold.engine_start_to_ready
            print(f"  Tessera {took:.1f} s (engine started in {ready:.1f} s)", flush=True)
            r.plain.append(plain_cold())
            print(f"  plain {r.plain[-1].spawn_to_selected:.1f} s", flush=True)
        time.sleep(2.0)
        r.memory += engines_memory(phase.worker, "engine after one SELECT 1 (idle)")
    finally:
        phase.stop()
        r.loads["cold"] = phase.load


def phase_alone(
    db: Db, args: argparse.Namespace, folder: Path, users: dict[str, User], r: Results
) -> None:
    """Part 2 again with at most one engine: the spare's first statement runs while no
    replacement spare starts (the worker has no room for one until the engine stops)."""
    env = {
        "TESSERA_ENGINE_SHARE_LEVEL": "user",
        "TESSERA_ENGINE_SPARES": "1",
        "TESSERA_ENGINES_MAX": "1",
    }
    phase = Phase("alone", args, folder, env)
    names = [f"alone{i}" for i in range(args.spare_runs)]
    try:
        phase.boot(names, users)
        for name in names:
            wait_spare(db, phase, START_TIMEOUT)
            print(f"spare, none starting meanwhile: {name} …", flush=True)
            cold, _ = first_select(db, phase, users[name])
            r.spare_alone.append(cold)
            took = cold.created_to_finished
            print(f"  {took:.2f} s (waited {cold.waited_ms} ms, spare {cold.spare})")
            retire(db, [users[name]])
    finally:
        phase.stop()
        r.loads["alone"] = phase.load


def phase_user(
    db: Db, args: argparse.Namespace, folder: Path, users: dict[str, User], r: Results
) -> None:
    phase = Phase(
        "user", args, folder, {"TESSERA_ENGINE_SHARE_LEVEL": "user", "TESSERA_ENGINE_SPARES": "1"}
    )
    spare_names = [f"spare{i}" for i in range(args.spare_runs)]
    victims = [f"victim{i}-{how}" for i in range(args.kill_runs) for how in ("now", "lost")]
    others = ["bystander", "alice-user", "bob-user", "carol-user"]
    try:
        phase.boot(spare_names + victims + others, users)
        wait_spare(db, phase, START_TIMEOUT)
        time.sleep(2.0)
        r.memory += engines_memory(phase.worker, "spare, never used (idle)")
        if "spare" in args.parts:
            for name in spare_names:
                wait_spare(db, phase, START_TIMEOUT)
                print(f"spare: {name} …", flush=True)
                cold, _ = first_select(db, phase, users[name])
                r.spare.append(cold)
                took = cold.created_to_finished
                print(f"  {took:.2f} s (waited {cold.waited_ms} ms, spare {cold.spare})")
            retire(db, [users[n] for n in spare_names])
        if "kill" in args.parts:
            bystander = users["bystander"]
            wait_spare(db, phase, START_TIMEOUT)
            by = Client(phase.port, bystander.token)
            session = by.sid
            try:
                for _ in range(3):
                    by.select()
                wait_spare(db, phase, START_TIMEOUT)
                for _ in range(10):
                    took, _ = by.select()
                    r.bystander_idle.append(took)
            finally:
                by.close()
            for name in victims:
                print(f"kill -9: {name} …", flush=True)
                wait_spare(db, phase, START_TIMEOUT)
                once_lost = name.endswith("-lost")
                rec = recovery(db, phase, users[name], bystander, session, START_TIMEOUT, once_lost)
                r.recovery.append(rec)
                took = rec.kill_to_finished
                print(f"  next SELECT 1 FINISHED {took:.2f} s after the kill: {rec.attempts}")
                retire(db, [users[name]])
            retire(db, [bystander])
        if "isolation" in args.parts and "user" in args.levels:
            print("isolation (user) …", flush=True)
            wait_spare(db, phase, START_TIMEOUT)
            r.isolation.append(
                isolation(db, phase, users["alice-user"], users["bob-user"], args, True)
            )
            retire(db, [users["alice-user"], users["bob-user"]])
        if "clients" in args.parts and "user" in args.levels:
            print("three clients (user) …", flush=True)
            wait_spare(db, phase, START_TIMEOUT)
            carol = users["carol-user"]
            first = Client(phase.port, carol.token)
            first.select()
            first.close()
            wait_spare(db, phase, START_TIMEOUT)
            r.clients.append(clients(phase, carol, args))
    finally:
        phase.stop()
        r.loads["user"] = phase.load


def phase_server(
    db: Db, args: argparse.Namespace, folder: Path, users: dict[str, User], r: Results
) -> None:
    phase = Phase("server", args, folder, {"TESSERA_ENGINE_SHARE_LEVEL": "server"})
    try:
        phase.boot(["alice-server", "bob-server", "carol-server"], users)
        first = Client(phase.port, users["carol-server"].token)
        first.select()
        first.close()
        r.server_first_select = time.perf_counter() - phase.worker_started
        time.sleep(2.0)
        r.memory.append(
            process_memory(phase.worker, "server: the worker and its JVM (idle)", parents())
        )
        if "isolation" in args.parts:
            print("isolation (server) …", flush=True)
            r.isolation.append(
                isolation(db, phase, users["alice-server"], users["bob-server"], args, False)
            )
        if "clients" in args.parts:
            print("three clients (server) …", flush=True)
            r.clients.append(clients(phase, users["carol-server"], args))
    finally:
        phase.stop()
        r.loads["server"] = phase.load


# --- report ------------------------------------------------------------------------------------


def spread(values: Sequence[float]) -> str:
    """p50 / max in ms, and n."""
    return f"{ms(p50(values))} / {ms(max(values, default=NAN))} (n={len(values)})"


def median_row(label: str, columns: Sequence[Sequence[float]]) -> list[str]:
    return [label, *(s(p50(c)) for c in columns)]


def report_cold(r: Results) -> list[str]:
    header = [
        "run",
        "Tessera: job created → FINISHED s",
        "POST → answer s",
        "engine started_at → ready_at s",
        "engine_assigned waited s",
        "engine assigned → FINISHED s",
        "second SELECT 1 s",
        "plain: spawn → SELECT 1 done s",
        "of which import + getOrCreate s",
        "plain SELECT 1 s",
        "plain whole process s",
    ]
    columns = [
        [c.created_to_finished for c in r.cold],
        [c.post_to_answer for c in r.cold],
        [c.engine_start_to_ready for c in r.cold],
        [c.waited_ms / 1000 for c in r.cold],
        [c.first_run for c in r.cold],
        [c.second for c in r.cold],
        [p.spawn_to_selected for p in r.plain],
        [p.session for p in r.plain],
        [p.select for p in r.plain],
        [p.whole_process for p in r.plain],
    ]
    rows = [
        [str(i + 1), *(s(c[i]) if i < len(c) else "-" for c in columns)] for i in range(len(r.cold))
    ]
    rows.append(median_row("median", columns))
    return [
        "1. Cold start: a new user's first `SELECT 1`, no spare (`TESSERA_ENGINE_SPARES=0`); "
        "plain PySpark `local[1]` in a fresh process\n",
        table(header, rows),
    ]


def report_spare(r: Results) -> list[str]:
    runs = [("yes", c) for c in r.spare] + [
        ("no (`TESSERA_ENGINES_MAX=1`)", c) for c in r.spare_alone
    ]
    rows = [
        [
            str(i + 1),
            starting,
            str(c.spare),
            str(c.waited_ms),
            against(c.created_to_finished, TARGETS["spare_s"], s(c.created_to_finished)),
            s(c.post_to_answer),
            s(c.first_run),
            s(c.second),
        ]
        for i, (starting, c) in enumerate(runs)
    ]
    header = [
        "run",
        "the next spare starts meanwhile",
        "spare",
        "waited_ms",
        "created → FINISHED s (≤ 5 s)",
        "POST → answer s",
        "engine assigned → FINISHED s",
        "second SELECT 1 s",
    ]
    return [
        "2. Spare assignment: a new user's first `SELECT 1` with a ready spare\n",
        table(header, rows),
    ]


def report_recovery(r: Results) -> list[str]:
    rows = [
        [
            str(i + 1),
            c.sent,
            against(c.kill_to_finished, TARGETS["recovery_s"], s(c.kill_to_finished)),
            ", ".join(c.attempts),
            s(c.noticed) if c.noticed == c.noticed else "never",
            "the same engine (a new JVM in it)"
            if c.same_engine
            else f"a fresh engine, spare {c.recovered_on_spare} ({c.waited_ms} ms)",
            s(c.first_run),
            spread(c.bystander_during),
            spread(c.bystander_after),
            ", ".join(c.bystander_failed) or "none",
        ]
        for i, c in enumerate(r.recovery)
    ]
    header = [
        "run",
        "next SELECT 1 sent",
        "kill → next SELECT 1 FINISHED s (≤ 5 s)",
        "that user's SELECT 1s after the kill",
        "kill → engine row LOST s",
        "ran on",
        "engine assigned → FINISHED s",
        "other user p50 / max ms: kill → recovered",
        "… recovered → next spare ready",
        "other user's failures",
    ]
    idle = r.bystander_idle
    return [
        "3. Recovery after `kill -9` of a user's driver JVM (`Engine.pid`), a spare ready\n",
        table(header, rows, ()),
        f"\nthe other user before the kills: p50 {ms(p50(idle))} ms, p95 {ms(p95(idle))} ms, "
        f"max {ms(max(idle, default=NAN))} ms (n={len(idle)})",
    ]


def report_memory(r: Results, args: argparse.Namespace) -> list[str]:
    rows = [
        [
            m.what,
            str(m.process),
            f"{m.python_rss_kb / 1024:.0f}",
            f"{m.jvm_rss_kb / 1024:.0f}",
            f"{m.rss_mb:.0f}",
            f"{m.pss_mb:.0f}",
        ]
        for m in r.memory
    ]
    for what in dict.fromkeys(m.what for m in r.memory):
        group = [m for m in r.memory if m.what == what]
        if len(group) > 1:
            rows.append(
                [
                    f"mean of {len(group)}: {what}",
                    "",
                    f"{statistics.fmean(m.python_rss_kb for m in group) / 1024:.0f}",
                    f"{statistics.fmean(m.jvm_rss_kb for m in group) / 1024:.0f}",
                    f"{statistics.fmean(m.rss_mb for m in group):.0f}",
                    f"{statistics.fmean(m.pss_mb for m in group):.0f}",
                ]
            )
    header = ["process", "pid", "Python RSS", "JVM RSS", "RSS total", "PSS total"]
    return [
        f"4. Memory, MB (driver memory {args.driver_memory or 'the default, 1g'})\n",
        table(header, rows, (2, 3, 4, 5)),
    ]


def report_isolation(r: Results, args: argparse.Namespace) -> list[str]:
    figures, what = [], []
    for c in r.isolation:
        idle = p50(c.idle)
        ratio = p50(c.loaded) / idle if c.idle and c.loaded else NAN
        during = p50(c.during) / idle if c.idle and c.during else NAN
        slow = sum(1 for x in c.loaded if x > TARGETS["isolation_ratio"] * idle)
        figures.append(
            [
                c.level,
                f"{ms(idle)} / {ms(p95(c.idle))}",
                f"{ms(p50(c.loaded))} / {ms(p95(c.loaded))} / {ms(max(c.loaded, default=NAN))}",
                against(ratio, TARGETS["isolation_ratio"], f"{ratio:.2f}x"),
                f"{len(c.during)}: {ms(p50(c.during))} / {ms(p95(c.during))} / "
                f"{ms(max(c.during, default=NAN))}",
                against(during, TARGETS["isolation_ratio"], f"{during:.2f}x"),
                f"{slow}/{len(c.loaded)}",
            ]
        )
        events = (", ".join(c.queued) or "none") + (
            f"; waiting_for_engine {c.waiting_for_engine}" if c.waiting_for_engine else ""
        )
        bob = ", ".join(c.bob) + (f" (queued: {', '.join(c.bob_queued)})" if c.bob_queued else "")
        what.append(
            [
                c.level,
                f"{ms(p50(c.loaded_queue))} / {ms(max(c.loaded_queue, default=NAN))}",
                events,
                str(c.alice_engines),
                bob,
            ]
        )
    header = [
        "share level",
        "alice idle p50 / p95 ms",
        "alice, all runs under load: p50 / p95 / max ms",
        "p50 / idle p50 (≤ 2x)",
        "her runs during bob's jobs: n: p50 / p95 / max ms",
        "their p50 / idle p50",
        "her runs > 2x idle p50",
    ]
    header_what = [
        "share level",
        "her queue wait (created → started) p50 / max ms",
        "her `queued` events",
        "her engines",
        "bob's jobs (status, seconds run)",
    ]
    return [
        f"5. Isolation: bob's {args.bob_jobs} cross joins (`range(0, {args.bob_rows})` x "
        f"`range(0, 60000)`) while alice runs {args.alice_runs} `SELECT 1`\n",
        table(header, figures, ()),
        "",
        table(header_what, what, ()),
    ]


def report_clients(r: Results, args: argparse.Namespace) -> list[str]:
    total = args.clients * args.client_statements
    rows = []
    for c in r.clients:
        others = {k: v for k, v in c.statuses.items() if k != "FINISHED"}
        rows.append(
            [
                c.level,
                f"{c.statuses.get('FINISHED', 0)}/{total}" + (f" ({others})" if others else ""),
                str(sum(c.refused.values())) + (f" ({c.refused})" if c.refused else ""),
                s(c.wall, 1),
                f"{ms(p50(c.latencies))} / {ms(p95(c.latencies))}",
                "; ".join(c.errors) or "none",
            ]
        )
    header = ["share level", "FINISHED", "429s", "wall s", "per statement p50 / p95 ms", "errors"]
    return [
        f"6. One user, {args.clients} clients (one token, one session), "
        f"{args.client_statements} `SELECT 1` each\n",
        table(header, rows, ()),
    ]


def report(r: Results, args: argparse.Namespace) -> str:
    loads = "; ".join(f"{k}: {' → '.join(v)}" for k, v in r.loads.items())
    out = [
        f"bench/engines.py at {r.commit}, {r.date}; {r.machine}",
        f"load average (1/5/15 min) at each phase's start → end: {loads}",
    ]
    parts: list[tuple[Sequence[Any], Callable[[], list[str]]]] = [
        (r.cold, lambda: report_cold(r)),
        ([*r.spare, *r.spare_alone], lambda: report_spare(r)),
        (r.recovery, lambda: report_recovery(r)),
        (r.memory, lambda: report_memory(r, args)),
        (r.isolation, lambda: report_isolation(r, args)),
        (r.clients, lambda: report_clients(r, args)),
    ]
    for present, lines in parts:
        if present:
            out.append("")
            out += lines()
    if r.server_first_select:
        out.append(
            f"\nserver: worker start → first SELECT 1 FINISHED {r.server_first_select:.1f} s "
            "(the worker's own Spark starts with it)"
        )
    for error in r.errors:
        out.append(f"\n!! {error}")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    r = Results(
        commit=commit_measured(),
        date=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        machine=machine_line(),
        args={k: str(v) for k, v in vars(args).items()},
    )
    print(f"bench/engines.py at {r.commit}; {r.machine}", flush=True)
    began = time.perf_counter()
    url = f"{PG_SERVER}/{args.db_name}"
    fresh_pg_database(url)
    flush_redis(args.redis_url)
    folder = Path(tempfile.mkdtemp(prefix="tessera-bench-engines-"))
    users: dict[str, User] = {}
    db = Db(url)
    with terminate_as_interrupt():
        try:
            phases = (
                ("cold", phase_cold),
                ("alone", phase_alone),
                ("user", phase_user),
                ("server", phase_server),
            )
            for name, run in phases:
                if name in ("cold", "alone") and name.replace("alone", "spare") not in args.parts:
                    continue
                if name == "server" and "server" not in args.levels:
                    continue
                try:
                    run(db, args, folder, users, r)
                except (RuntimeError, ApiError, OSError, AssertionError) as error:
                    r.errors.append(f"{name}: {type(error).__name__}: {error}")
                    print(f"!! {name} stopped: {error}", file=sys.stderr)
                    with contextlib.suppress(OSError):
                        for log in sorted((folder / name).glob("*.log")):
                            tail = log.read_text(errors="replace").splitlines()[-30:]
                            print(f"--- {log}\n" + "\n".join(tail), file=sys.stderr)
        finally:
            db.conn.close()
            if args.keep_data:
                print(f"kept {folder}")
            else:
                shutil.rmtree(folder, ignore_errors=True)
    print()
    print(report(r, args))
    print(f"\nwhole run: {time.perf_counter() - began:.0f} s; load now {load_text()}")
    if args.json:
        args.json.write_text(json.dumps(asdict(r), indent=1, default=str) + "\n")
        print(f"raw figures: {args.json}")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        print("\ninterrupted: everything it started is stopped", file=sys.stderr)
        sys.exit(130)
