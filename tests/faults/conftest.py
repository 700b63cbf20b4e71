"""The fault-injection suite's servers, workers and tally (docs/faults.md).

This package restarts PostgreSQL and Redis, so it runs as its own pytest run
(``scripts/test-faults.sh``, called by ``make test`` after the main suite) against servers
of its own: the script picks the ports and sets ``DATABASE_URL``/``CELERY_BROKER_URL``
before Django reads its settings; the session fixture ``fault_servers`` starts them before
pytest-django creates the test database (through ``django_db_modify_db_settings``).

Every fault is injected ``TESSERA_FAULT_REPEATS`` times (``inject``); each injection is
counted (injected / survived), the counts are printed at the end of the run and written
to ``faults.json`` in the run's temporary directory (or ``TESSERA_FAULT_REPORT``).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings

from tests.faults.servers import PostgresServer, RedisServer
from tests.faults.tally import REPEATS, TALLY, WORKER_TIMEOUT_SECONDS
from tests.workers import WorkerProcess, purge_queue, start_worker


def _ports() -> tuple[Path, int, int]:
    try:
        return (
            Path(os.environ["TESSERA_FAULT_SERVER_DIR"]),
            int(os.environ["TESSERA_FAULT_PG_PORT"]),
            int(os.environ["TESSERA_FAULT_REDIS_PORT"]),
        )
    except (KeyError, ValueError):
        pytest.exit(
            "tests/faults restarts PostgreSQL and Redis: run it with scripts/test-faults.sh "
            "(its own servers), not with scripts/test.sh.",
            returncode=4,
        )


class Servers:
    def __init__(self, postgres: PostgresServer, redis: RedisServer) -> None:
        self.postgres = postgres
        self.redis = redis


@pytest.fixture(scope="session")
def fault_servers() -> Iterator[Servers]:
    root, pg_port, redis_port = _ports()
    postgres = PostgresServer(root, pg_port)
    redis = RedisServer(root, redis_port)
    postgres.init()
    postgres.start()
    redis.start()
    try:
        yield Servers(postgres, redis)
    finally:
        redis.stop()
        try:
            postgres.stop("fast")
        except Exception:
            postgres.stop("immediate")


@pytest.fixture(scope="session")
def django_db_modify_db_settings(
    fault_servers: Servers, django_db_modify_db_settings_parallel_suffix: None
) -> None:
    """pytest-django creates the test database on the fault suite's own server: it must run
    first."""
    Path(django_settings.STATIC_ROOT).mkdir(parents=True, exist_ok=True)


@pytest.fixture(scope="session", autouse=True)
def _fault_report(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    yield
    path = Path(
        os.environ.get("TESSERA_FAULT_REPORT") or tmp_path_factory.getbasetemp() / "faults.json"
    )
    path.write_text(
        json.dumps({"repeats": REPEATS, "faults": TALLY.counts, "failures": TALLY.failures})
    )
    sys.stderr.write(f"\nfault report: {path}\n")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if TALLY.counts:
        terminalreporter.section("fault injection: survived/injected")
        for line in TALLY.lines():
            terminalreporter.write_line(line)


# --- settings and workers -----------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _as_the_workers_were_told(settings: Any) -> None:
    settings.TESSERA_WORKER_TIMEOUT_SECONDS = WORKER_TIMEOUT_SECONDS


_steady: list[WorkerProcess] = []


@pytest.fixture(scope="session")
def _steady_worker(
    django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[WorkerProcess]:
    workers = start_worker("steady", tmp_path_factory, django_db_blocker)
    worker = next(workers)
    _steady.append(worker)
    yield worker
    _steady.remove(worker)
    next(workers, None)


@pytest.fixture
def steady(_steady_worker: WorkerProcess, django_db_blocker: Any) -> WorkerProcess:
    """The suite's long-lived worker (it survives JVM kills and server restarts); started
    again if a test stopped it."""
    if not _steady_worker.alive():
        from tests.workers import _warm_up

        purge_queue()
        _steady_worker.start()
        _warm_up(django_db_blocker)
    return _steady_worker


@pytest.fixture(scope="module")
def without_steady(django_db_setup: None) -> None:
    """For faults that need their own workers only (the steady one would take their jobs)."""
    for worker in _steady:
        worker.stop()
