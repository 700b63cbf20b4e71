"""Live Celery workers for the tests (threads pool, each with its own Spark JVM) on the real
Redis broker and the real PostgreSQL test database.

Spark's start-up is the suite's most expensive step, so one **shared worker** serves every
test that only needs "a worker" (``tests/<room>/worker``, ``tests/security``, ``tests/browser``):
it starts the first time a test asks for the ``worker`` fixture and lives for the session.
Tests that kill it (marked ``kills_shared_worker``) or that need workers of their own
(``own_workers_only``: a small heap, a successor with the same name) run after all the others
(``order_worker_tests``); if a test still needs the shared worker after that, the ``worker``
fixture starts it again. Tests using it take ``transactional_db``: rows must be committed for
the worker process to see them.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.db import connection

from tests.conftest import require_postgresql
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[1]
WORKER_START_TIMEOUT = 120.0

# The worker's housekeeping runs fast in tests: beats every second, a worker silent for
# 4 s is lost, an unclaimed job is re-sent after 2 s.
WORKER_ENV = {
    "TESSERA_WORKER_HEARTBEAT_SECONDS": "1",
    "TESSERA_WORKER_TIMEOUT_SECONDS": "4",
    "TESSERA_SWEEP_AFTER_SECONDS": "2",
    "SPARK_MASTER": "local[2]",
    # One Spark in the worker for every user (the suite's JVM budget); the engines' own tests
    # (tests/jobs/worker/test_engines.py) run workers with engines per user.
    "TESSERA_ENGINE_SHARE_LEVEL": "server",
    # The pipelines the tests run (tests/pipelines, tests/conformance) beside the shipped ones.
    "TESSERA_PIPELINE_PACKAGES": "tessera_pipelines:tests.pipelines:tests.conformance",
    # As the tests' own settings (tests/conftest.py): a stream's batches re-check the READ
    # FILES of what they read in the worker, which must judge as the web did.
    "TESSERA_READ_FILES_FOR": "everyone",
    # As the tests' own settings: a script's streaming statement planned on the worker.
    "TESSERA_USER_STREAMS": "0",
}


def _database_url() -> str:
    db = connection.settings_dict
    auth = db["USER"] or "postgres"
    if db.get("PASSWORD"):
        auth += f":{db['PASSWORD']}"
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def purge_queue() -> None:
    from webapp.celery import app

    app.control.purge()


class WorkerProcess:
    """``celery -A webapp worker --pool threads`` in a subprocess, logging to a file."""

    def __init__(
        self,
        name: str,
        log_path: Path,
        blocker: Any,
        env: dict[str, str] | None = None,
        concurrency: int = 4,
    ) -> None:
        self.name = name
        self.concurrency = concurrency
        self.log_path = log_path
        self.blocker = blocker
        self.env = dict(env or {})  # on top of WORKER_ENV (e.g. a small driver heap)
        self.process: subprocess.Popen[bytes] | None = None
        self.hostname = ""

    def start(self) -> None:
        env = {**os.environ, **WORKER_ENV, **self.env, "DATABASE_URL": _database_url()}
        env.setdefault("TESSERA_LOG_LEVEL", "INFO")
        command = [
            str(ROOT / ".venv" / "bin" / "celery"),
            "-A",
            "webapp",
            "worker",
            "--pool",
            "threads",
            "--concurrency",
            str(self.concurrency),
            "-n",
            f"{self.name}@%h",
            "--loglevel",
            "INFO",
            "--without-gossip",
            "--without-mingle",
        ]
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
        )
        self.hostname = self._wait_for_heartbeat()

    def _wait_for_heartbeat(self) -> str:
        from jobs.models import Worker

        def registered() -> str | None:
            assert self.process is not None
            if self.process.poll() is not None:
                pytest.fail(f"the worker exited early:\n{self.log_tail()}")
            with self.blocker.unblock():
                row = Worker.objects.filter(
                    hostname__startswith=f"{self.name}@", pid=self.process.pid
                ).first()
            return row.hostname if row else None

        return str(wait_until(registered, WORKER_START_TIMEOUT, 0.2, "the worker's heartbeat"))

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL: no shutdown handlers, no goodbye (its JVM child exits with it)."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(30)

    def stop(self) -> None:
        if not self.alive():
            return
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(30)

    def log_tail(self, lines: int = 80) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


def _warm_up(blocker: Any) -> None:
    """Run one ``SELECT 1`` so the worker's Spark is up before its first test."""
    from tests.worker_helpers import create_user, submit_sql, wait_for_status

    with blocker.unblock():
        user = create_user(f"warmup{uuid.uuid4().hex[:8]}")
        job = submit_sql(user, "SELECT 1 AS one")
        wait_for_status(job.id, {"FINISHED"}, WORKER_START_TIMEOUT)
        user.delete()


def start_worker(
    name: str,
    tmp_path_factory: pytest.TempPathFactory,
    blocker: Any,
    env: dict[str, str] | None = None,
    concurrency: int = 4,
) -> Iterator[WorkerProcess]:
    with blocker.unblock():
        require_postgresql()
    Path(django_settings.STATIC_ROOT).mkdir(parents=True, exist_ok=True)
    purge_queue()
    worker = WorkerProcess(
        name, tmp_path_factory.mktemp(name) / "worker.log", blocker, env, concurrency
    )
    worker.start()
    try:
        _warm_up(blocker)
        yield worker
    except BaseException:
        sys.stderr.write(worker.log_tail())
        raise
    finally:
        worker.stop()
        purge_queue()


# The shared worker once started (at most one), for ``own_workers_only`` to stop.
_shared: list[WorkerProcess] = []
# Session-long workers of other kinds (the runtime matrix's, tests/runtimes): stopped when
# the shared worker or a module's own workers need the queue to themselves.
_session_workers: list[WorkerProcess] = []


def stop_session_workers() -> None:
    for other in _session_workers:
        other.stop()


@pytest.fixture(scope="session")
def _shared_worker(
    django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[WorkerProcess]:
    workers = start_worker("test-worker", tmp_path_factory, django_db_blocker)
    worker = next(workers)
    _shared.append(worker)
    yield worker
    _shared.remove(worker)
    next(workers, None)  # start_worker's clean-up: stop it, purge the queue


@pytest.fixture
def worker(_shared_worker: WorkerProcess, django_db_blocker: Any) -> WorkerProcess:
    """The shared live worker, started again (and warmed up) if a test killed or paused it."""
    if not _shared_worker.alive():
        stop_session_workers()
        purge_queue()
        _shared_worker.start()
        _warm_up(django_db_blocker)
    return _shared_worker


@pytest.fixture(scope="module")
def own_workers_only(django_db_setup: None, django_db_blocker: Any) -> None:
    """For modules that kill, restart or starve workers of their own: the shared worker (if
    this run started it) is stopped, since it would take their jobs. It stays stopped (these
    modules run last); the ``worker`` fixture starts it again if a later test needs it."""
    for worker in _shared:
        worker.stop()
    stop_session_workers()


def order_worker_tests(items: list[pytest.Item]) -> None:
    """Tests that stop the shared worker run after every other test (in their own order),
    so it starts once; tests/smoke stays last (it checks what the run left behind)."""

    def rank(item: pytest.Item) -> int:
        if "tests/smoke/" in item.nodeid:
            return 3
        if "own_workers_only" in getattr(item, "fixturenames", ()):
            return 2
        if item.get_closest_marker("runtime_matrix"):
            return 2  # the matrix's workers stop the shared one too
        if item.get_closest_marker("kills_shared_worker"):
            return 1
        return 0

    items.sort(key=rank)  # stable: the order within each rank is kept


def java_children(pid: int) -> list[int]:
    """The JVMs started by process ``pid`` (its Spark driver), read from ``/proc``
    (a process that ends while it is read is skipped)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError):
            text = stat.read_text()
            name = text[text.index("(") + 1 : text.rindex(")")]
            ppid = int(text.rpartition(")")[2].split()[1])
            if ppid == pid and name == "java":
                found.append(int(stat.parent.name))
    return found


def exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
