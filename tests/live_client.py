"""Fixtures of the tests that use the Python client (``client/``, import ``tessera``) against
the live server — tests/client, tests/conformance, tests/examples. A pytest plugin module,
loaded for every package by tests/conftest.py (like tests.workers).

The server is pytest-django's live server (a real HTTP server in a thread, one per run) on
the real PostgreSQL test database; the run's shared Celery worker with its own Spark runs the
statements (tests/workers.py). Tests take ``transactional_db`` so the worker sees their rows.

- ``server``: the live server's URL (worker running, users alice and bob).
- ``connect_as(url, username, **kwargs)``: a ``TableEnvironment`` of that user.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from tests.conftest import PASSWORD

ROOT = Path(__file__).resolve().parents[1]

# The client is its own distribution (client/); without `pip install ./client` in the test
# environment, import it from its source tree.
try:
    import tessera
except ImportError:  # pragma: no cover - depends on the environment
    sys.path.insert(0, str(ROOT / "client" / "src"))
    import tessera

__all__ = ["PASSWORD", "connect_as", "tessera"]


@pytest.fixture
def server(live_server: Any, transactional_db: None, worker: Any, alice: User, bob: User) -> str:
    """The live server's URL, with a worker running and users alice and bob."""
    return str(live_server.url)


def connect_as(url: str, username: str, **kwargs: Any) -> tessera.TableEnvironment:
    """A TableEnvironment of ``username`` (password login)."""
    return tessera.connect(url, username=username, password=PASSWORD, **kwargs)
