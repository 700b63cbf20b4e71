"""Fixtures of the hostile-input suite.

The run's shared live worker (``tests/workers.py``: a real Celery worker with its own Spark)
serves every module of this package: the escapes are many and cheap to try, Spark's start-up
is not. Tests that need it take ``security_worker`` and ``transactional_db`` (rows must be
committed for the worker to see them). Modules that kill, restart or starve workers of their
own take ``own_workers_only``. Tests that only need the web side use the ordinary API
fixtures of ``tests/conftest.py``.
"""

from __future__ import annotations

import pytest

from tests.workers import WorkerProcess


@pytest.fixture
def security_worker(worker: WorkerProcess) -> WorkerProcess:
    """The shared live worker (the name the security tests know it by)."""
    return worker
