"""The Python client (``client/``, import ``tessera``) against the live server.

The server is pytest-django's live server (a real HTTP server in a thread) on the real
PostgreSQL test database; the run's shared Celery worker with its own Spark runs the
statements (tests/workers.py). Tests take ``transactional_db`` so the worker sees their rows.

Fixtures (``server`` and ``connect_as`` come from the plugin tests.live_client):
- ``t_env``: a ``TableEnvironment`` of alice in catalog ``shop``, database ``sales``, which
  holds ``orders`` (id, customer, price DECIMAL(10, 2), qty) with 4 rows and ``customers``
  (id, name) with 3 rows.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

# ``server`` (a fixture) and ``connect_as`` live in the plugin tests.live_client, shared with
# tests/conformance and tests/examples; ``tessera`` is re-exported for this package's modules.
from tests.live_client import PASSWORD, connect_as, tessera

__all__ = ["PASSWORD", "connect_as", "tessera"]


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
