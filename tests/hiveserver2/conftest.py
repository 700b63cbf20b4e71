"""HiveServer2 (hiveserver2/) driven by real clients: PyHive over Thrift binary + SASL PLAIN.

The endpoint is the same ``HiveServer2`` that ``manage.py hiveserver2`` serves, started in a
thread of the test process on a free port, on the real PostgreSQL test database beside
pytest-django's live server; the run's shared worker runs the statements (tests/workers.py).

- ``hs2``: the running endpoint (``.port``), users alice and bob, a worker.
- ``shop``: alice's catalog ``shop`` (database ``sales``: ``orders`` with 4 rows,
  ``customers`` with 3) and bob's catalog ``bobs``, made through the REST client.
- ``hive_as(user, **kwargs)``: a PyHive connection (password sign-in), in ``shop`` (bob: in
  ``bobs``) unless ``configuration`` says otherwise.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pyhive import hive  # type: ignore[import-untyped]

from hiveserver2.server import HiveServer2
from tests.live_client import PASSWORD, connect_as

# dbt's adapter cases run in a venv of their own (test_dbt.py), by a pytest of their own.
collect_ignore = ["dbt_suite"]


@pytest.fixture
def hs2(server: str) -> Iterator[HiveServer2]:
    endpoint = HiveServer2("127.0.0.1", 0)
    endpoint.start()
    yield endpoint
    endpoint.stop()


@pytest.fixture
def shop(hs2: HiveServer2, server: str) -> HiveServer2:
    with connect_as(server, "alice") as env:
        for sql in (
            "CREATE CATALOG shop",
            "CREATE DATABASE shop.sales",
            "CREATE TABLE shop.sales.orders (id BIGINT, customer BIGINT COMMENT 'who', "
            "price DECIMAL(10, 2), qty INT)",
            "CREATE TABLE shop.sales.customers (id BIGINT, name STRING)",
            "INSERT INTO shop.sales.orders VALUES (1, 10, 2.50, 4), (2, 10, 10.00, 1), "
            "(3, 11, 1.25, 8), (4, 12, 99.99, 1)",
            "INSERT INTO shop.sales.customers VALUES (10, 'Ada'), (11, 'Bo'), (12, 'Cy')",
        ):
            env.execute_sql(sql).wait()
    with connect_as(server, "bob") as env:
        env.execute_sql("CREATE CATALOG bobs").wait()
    return hs2


def connect(port: int, username: str, password: str = PASSWORD, **kwargs: Any) -> Any:
    """A PyHive connection (``auth="CUSTOM"``: SASL PLAIN with the password)."""
    return hive.connect(
        host="127.0.0.1", port=port, username=username, password=password, auth="CUSTOM", **kwargs
    )


@pytest.fixture
def hive_as(shop: HiveServer2) -> Iterator[Callable[..., Any]]:
    opened: list[Any] = []

    def open_as(username: str, password: str = PASSWORD, **kwargs: Any) -> Any:
        # PyHive sends USE `default` (or its database) first: it needs a current catalog.
        kwargs.setdefault("configuration", {"use:catalog": "bobs" if username == "bob" else "shop"})
        conn = connect(shop.port, username, password, **kwargs)
        opened.append(conn)
        return conn

    yield open_as
    for conn in opened:
        with contextlib.suppress(Exception):
            conn.close()
