"""A real Celery worker (threads pool, its own Spark) on the real Redis broker and the
real PostgreSQL test database, plus a plain PySpark session in the test process to compare.

Tests here use ``transactional_db`` (``django_db(transaction=True)``): rows are committed,
so the worker process sees them. One worker starts per test module (Spark starts in 7 to 15 s).
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.db import connection

from tests.conftest import require_postgresql

ROOT = Path(__file__).resolve().parents[2]
WORKER_START_TIMEOUT = 120.0

# The worker's housekeeping runs fast in tests: beats every second, a worker silent for
# 4 s is lost, an unclaimed job is re-sent after 2 s.
WORKER_ENV = {
    "TESSERA_WORKER_HEARTBEAT_SECONDS": "1",
    "TESSERA_WORKER_TIMEOUT_SECONDS": "4",
    "TESSERA_SWEEP_AFTER_SECONDS": "2",
    "SPARK_MASTER": "local[2]",
}


def wait_until(
    condition: Callable[[], Any], timeout: float, interval: float = 0.05, what: str = ""
) -> Any:
    """Poll ``condition`` until it returns something truthy; fail after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout} s waiting for {what or condition}")
        time.sleep(interval)


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
        self, name: str, log_path: Path, blocker: Any, env: dict[str, str] | None = None
    ) -> None:
        self.name = name
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
            "4",
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


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _warm_up(blocker: Any) -> None:
    """Run one ``SELECT 1`` so the worker's Spark is up before the first timed test."""
    from tests.worker.helpers import create_user, hand_plan, submit_plan, wait_for_status

    with blocker.unblock():
        user = create_user("warmup")
        job = submit_plan(user, hand_plan("SELECT 1 AS one"))
        wait_for_status(job.id, {"FINISHED"}, WORKER_START_TIMEOUT)
        user.delete()


def start_worker(
    name: str,
    tmp_path_factory: pytest.TempPathFactory,
    blocker: Any,
    env: dict[str, str] | None = None,
) -> Iterator[WorkerProcess]:
    with blocker.unblock():
        require_postgresql()
    Path(django_settings.STATIC_ROOT).mkdir(parents=True, exist_ok=True)
    purge_queue()
    worker = WorkerProcess(name, tmp_path_factory.mktemp(name) / "worker.log", blocker, env)
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


@pytest.fixture(scope="module")
def worker(
    django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[WorkerProcess]:
    """One live worker for the module's tests."""
    yield from start_worker("test-worker", tmp_path_factory, django_db_blocker)


@pytest.fixture(scope="session")
def plain_spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Plain PySpark in the test process: writes test data and computes expected answers."""
    from pyspark.sql import SparkSession

    base = tmp_path_factory.mktemp("plain-spark")
    spark = (
        SparkSession.builder.master("local[1]")
        .appName("tessera-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.warehouse.dir", str(base / "warehouse"))
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={base}")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    logging.getLogger("py4j").setLevel(logging.WARNING)  # no INFO lines at interpreter exit
    yield spark
    spark.stop()
