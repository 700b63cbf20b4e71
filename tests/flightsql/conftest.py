"""Arrow Flight SQL (flightsql/) driven by real clients: ADBC's Flight SQL driver and
pyarrow.flight's own client.

The endpoint is the same ``FlightSqlServer`` that ``manage.py flightsql`` serves, in a thread
of the test process on a free port, on the real PostgreSQL test database beside pytest-django's
live server; the run's shared worker runs the statements (tests/workers.py).

- ``fsql``: the running endpoint (``.port``), users alice and bob, a worker.
- ``shop``: alice's catalog ``shop`` (database ``sales``: ``orders`` with 4 rows and a primary
  key, ``customers`` with 3) and bob's catalog ``bobs``, made through the REST client.
- ``adbc_as(user, password)``: an ADBC DB-API connection; ``flight_as(user, password)``: a
  pyarrow ``FlightClient`` signed in, and the call options that carry its bearer.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import adbc_driver_flightsql.dbapi as adbc
import pyarrow.flight as flight  # type: ignore[import-untyped]
import pytest

from flightsql.server import FlightSqlServer
from tests.live_client import PASSWORD, connect_as


@pytest.fixture
def fsql(server: str) -> Iterator[FlightSqlServer]:
    endpoint = FlightSqlServer("127.0.0.1", 0)
    thread = threading.Thread(target=endpoint.serve, daemon=True)
    thread.start()
    yield endpoint
    endpoint.shutdown()
    thread.join(10)


@pytest.fixture
def shop(fsql: FlightSqlServer, server: str) -> FlightSqlServer:
    with connect_as(server, "alice") as env:
        for sql in (
            "CREATE CATALOG shop",
            "CREATE DATABASE shop.sales",
            "CREATE TABLE shop.sales.orders (id BIGINT NOT NULL, customer BIGINT COMMENT 'who', "
            "price DECIMAL(10, 2), qty INT, PRIMARY KEY (id) NOT ENFORCED)",
            "CREATE TABLE shop.sales.customers (id BIGINT, name STRING)",
            "INSERT INTO shop.sales.orders VALUES (1, 10, 2.50, 4), (2, 10, 10.00, 1), "
            "(3, 11, 1.25, 8), (4, 12, 99.99, 1)",
            "INSERT INTO shop.sales.customers VALUES (10, 'Ada'), (11, 'Bo'), (12, 'Cy')",
        ):
            env.execute_sql(sql).wait()
    with connect_as(server, "bob") as env:
        env.execute_sql("CREATE CATALOG bobs").wait()
    return fsql


def uri(endpoint: FlightSqlServer) -> str:
    return f"grpc://127.0.0.1:{endpoint.port}"


@pytest.fixture
def adbc_as(shop: FlightSqlServer) -> Iterator[Callable[..., Any]]:
    opened: list[Any] = []

    def open_as(username: str, password: str = PASSWORD) -> Any:
        conn = adbc.connect(uri(shop), db_kwargs={"username": username, "password": password})
        opened.append(conn)
        return conn

    yield open_as
    for conn in opened:
        with contextlib.suppress(Exception):
            conn.close()


def flight_client(endpoint: FlightSqlServer) -> flight.FlightClient:
    return flight.FlightClient(uri(endpoint))


@pytest.fixture
def flight_as(shop: FlightSqlServer) -> Iterator[Callable[..., Any]]:
    opened: list[flight.FlightClient] = []

    def open_as(
        username: str, password: str = PASSWORD
    ) -> tuple[flight.FlightClient, flight.FlightCallOptions]:
        client = flight_client(shop)
        opened.append(client)
        header = client.authenticate_basic_token(username, password)
        return client, flight.FlightCallOptions(headers=[header])

    yield open_as
    for client in opened:
        with contextlib.suppress(Exception):
            client.close()
