"""The Python client (``client/``, import ``tessera``) against the live server.

The server is pytest-django's live server (a real HTTP server in a thread) on the real
PostgreSQL test database; the run's shared Celery worker with its own Spark runs the
statements (tests/workers.py). Tests take ``transactional_db`` so the worker sees their rows.

Fixtures:
- ``server``: the live server's URL (worker running).
- ``t_env``: a ``TableEnvironment`` of alice in catalog ``shop``, database ``sales``, which
  holds ``orders`` (id, customer, price DECIMAL(10, 2), qty) with 4 rows and ``customers``
  (id, name) with 3 rows.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from tests.conftest import PASSWORD

ROOT = Path(__file__).resolve().parents[2]

# The client is its own distribution (client/); without `pip install ./client` in the test
# environment, import it from its source tree.
try:
    import tessera
except ImportError:  # pragma: no cover - depends on the environment
    sys.path.insert(0, str(ROOT / "client" / "src"))
    import tessera

__all__ = ["PASSWORD", "tessera"]


@pytest.fixture
def server(live_server: Any, transactional_db: None, worker: Any, alice: User, bob: User) -> str:
    """The live server's URL, with a worker running and users alice and bob."""
    return str(live_server.url)


def connect_as(url: str, username: str, **kwargs: Any) -> tessera.TableEnvironment:
    """A TableEnvironment of ``username`` (password login)."""
    return tessera.connect(url, username=username, password=PASSWORD, **kwargs)


@pytest.fixture
def shop(server: str) -> str:
    """Catalog ``shop`` (database ``sales``) with ``orders`` and ``customers``, made through
    the client itself; returns the server URL."""
    with connect_as(server, "alice") as env:
        env.execute_sql("CREATE CATALOG shop").wait()
        env.execute_sql("CREATE DATABASE shop.sales").wait()
        env.use_catalog("shop")
        env.use_database("sales")
        orders = (
            tessera.Schema.new_builder()
            .column("id", "BIGINT")
            .column("customer", "BIGINT")
            .column("price", "DECIMAL(10, 2)")
            .column("qty", "INT")
            .build()
        )
        env.create_table("orders", tessera.TableDescriptor.for_managed().schema(orders).build())
        customers = (
            tessera.Schema.new_builder().column("id", "BIGINT").column("name", "STRING").build()
        )
        env.create_table(
            "customers", tessera.TableDescriptor.for_managed().schema(customers).build()
        )
        env.execute_sql(
            "INSERT INTO orders VALUES (1, 10, 2.50, 4), (2, 10, 10.00, 1), "
            "(3, 11, 1.25, 8), (4, 12, 99.99, 1)"
        ).wait()
        env.execute_sql("INSERT INTO customers VALUES (10, 'Ada'), (11, 'Bo'), (12, 'Cy')").wait()
    return server


@pytest.fixture
def t_env(shop: str) -> Iterator[tessera.TableEnvironment]:
    """alice's TableEnvironment in shop.sales."""
    with connect_as(shop, "alice", catalog="shop", database="sales") as env:
        yield env
