"""Fixtures of the hostile-input suite.

One live worker (a real Celery worker with its own Spark) serves every module of this
package: the escapes are many and cheap to try, Spark's start-up is not. Tests that need it
take ``security_worker`` and ``transactional_db`` (rows must be committed for the worker to
see them). Tests that only need the web side use the ordinary API fixtures of
``tests/conftest.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.worker.conftest import WorkerProcess, start_worker
from tests.worker.conftest import _fast_password_hashing as _fast_password_hashing

# The shared worker once started: modules with workers of their own pause it.
_shared: list[WorkerProcess] = []


@pytest.fixture(scope="package")
def security_worker(
    django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[WorkerProcess]:
    """One live worker for the whole security suite, stopped when the package is done (so
    it never competes with the workers of ``tests/worker`` for the queue)."""
    workers = start_worker("security-worker", tmp_path_factory, django_db_blocker)
    worker = next(workers)
    _shared.append(worker)
    yield worker
    _shared.remove(worker)
    next(workers, None)  # start_worker's clean-up: stop it, purge the queue


@pytest.fixture(scope="module")
def own_workers_only(django_db_setup: None, django_db_blocker: Any) -> Iterator[None]:
    """For modules that kill, restart or starve workers of their own: the shared worker
    (if this run started it) is stopped meanwhile, since it would take their jobs, and
    started again afterwards."""
    paused = [worker for worker in _shared if worker.alive()]
    for worker in paused:
        worker.stop()
    yield
    for worker in paused:
        worker.start()
