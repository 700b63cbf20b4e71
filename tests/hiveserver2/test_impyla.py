"""impyla (``impala.dbapi``, Impala's and Hive's DB-API client) against the HiveServer2
endpoint, over the binary transport (SASL PLAIN) and over HTTP (``/cliservice``, Basic).

impyla opens one HiveServer2 session per cursor; metadata calls name patterns as Hive's
servers read them (``.*`` for all)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

import pytest
from impala import dbapi  # type: ignore[import-untyped]
from impala.error import Error as ImpylaError  # type: ignore[import-untyped]

from hiveserver2.server import HiveServer2
from tests.conftest import PASSWORD, token_for

pytestmark = [pytest.mark.slow, pytest.mark.spark]
SHOP = {"use:catalog": "shop", "use:database": "sales"}
ORDERS = [
    (1, 10, Decimal("2.50"), 4),
    (2, 10, Decimal("10.00"), 1),
    (3, 11, Decimal("1.25"), 8),
    (4, 12, Decimal("99.99"), 1),
]


@pytest.fixture
def impyla(shop: HiveServer2) -> Iterator[Callable[..., Any]]:
    """``impyla(user, password, **connect_kwargs)``: an impyla connection (binary transport,
    ``auth_mechanism="PLAIN"``), closed after the test."""
    opened: list[Any] = []

    def open_as(user: str, password: str = PASSWORD, **kwargs: Any) -> Any:
        kwargs.setdefault("host", "127.0.0.1")
        kwargs.setdefault("port", shop.port)
        conn = dbapi.connect(auth_mechanism="PLAIN", user=user, password=password, **kwargs)
        opened.append(conn)
        return conn

    yield open_as
    for conn in opened:
        with contextlib.suppress(Exception):
            conn.close()


def query(cursor: Any, sql: str) -> list[tuple[Any, ...]]:
    cursor.execute(sql)
    return list(cursor.fetchall())


def test_password_sign_in_query_and_types(impyla: Callable[..., Any]) -> None:
    cursor = impyla("alice").cursor(configuration=SHOP)
    assert query(cursor, "SELECT id, customer, price, qty FROM orders ORDER BY id") == ORDERS
    assert [(d[0], d[1]) for d in cursor.description] == [
        ("id", "BIGINT"),
        ("customer", "BIGINT"),
        ("price", "DECIMAL"),
        ("qty", "INT"),
    ]
    joined = query(
        cursor,
        "SELECT c.name, sum(o.qty) FROM orders o JOIN customers c ON o.customer = c.id "
        "GROUP BY c.name ORDER BY c.name",
    )
    assert joined == [("Ada", 5), ("Bo", 8), ("Cy", 1)]
    assert query(cursor, "SELECT id FROM range(2500) ORDER BY id") == [(i,) for i in range(2500)]


def test_an_api_token_and_the_connections_database(impyla: Callable[..., Any]) -> None:
    # impyla's `database` is a `USE` on every new cursor, after the configuration's catalog.
    conn = impyla("token", token_for("alice"), database="sales")
    cursor = conn.cursor(configuration={"use:catalog": "shop"})
    assert query(cursor, "SELECT count(*) FROM customers") == [(3,)]


def test_metadata_calls(impyla: Callable[..., Any]) -> None:
    cursor = impyla("alice").cursor(configuration=SHOP)
    cursor.get_databases()
    assert {("sales", "shop"), ("default", "shop")} <= set(cursor.fetchall())
    cursor.get_tables("sales")
    assert [t[:4] for t in cursor.fetchall() if t[0] == "shop"] == [
        ("shop", "sales", "customers", "TABLE"),
        ("shop", "sales", "orders", "TABLE"),
    ]
    assert cursor.get_table_schema("orders", "sales") == [
        ("id", "BIGINT"),
        ("customer", "BIGINT"),
        ("price", "DECIMAL(10,2)"),
        ("qty", "INT"),
    ]
    assert cursor.database_exists("sales") and not cursor.database_exists("nowhere")
    assert cursor.table_exists("orders", "sales") and not cursor.table_exists("nothing", "sales")


def test_metadata_and_queries_follow_grants(impyla: Callable[..., Any]) -> None:
    bob = impyla("bob").cursor(configuration={"use:catalog": "bobs"})
    bob.get_tables()
    assert [t for t in bob.fetchall() if t[0] == "shop"] == []
    with pytest.raises(ImpylaError, match=r"\[NOT_FOUND\]"):
        query(bob, "SELECT * FROM shop.sales.orders")
    alice = impyla("alice").cursor(configuration=SHOP)
    for sql in (
        "GRANT USE ON CATALOG shop TO USER bob",
        "GRANT USE ON DATABASE shop.sales TO USER bob",
        "GRANT SELECT ON TABLE shop.sales.customers TO USER bob",
    ):
        alice.execute(sql)
    bob.get_tables("sales")
    assert [t[2] for t in bob.fetchall() if t[0] == "shop"] == ["customers"]
    assert query(bob, "SELECT count(*) FROM shop.sales.customers") == [(3,)]
    with pytest.raises(ImpylaError, match=r"\[PERMISSION_DENIED\]"):
        query(bob, "SELECT * FROM shop.sales.orders")


def test_execute_async_then_cancel(impyla: Callable[..., Any]) -> None:
    cursor = impyla("alice").cursor(configuration=SHOP)
    cursor.execute_async("SELECT count(*) FROM range(1000000000) a CROSS JOIN range(1000000) b")
    deadline = time.monotonic() + 120
    while cursor.status() != "RUNNING_STATE" and time.monotonic() < deadline:
        assert cursor.status() in ("PENDING_STATE", "INITIALIZED_STATE"), cursor.status()
        time.sleep(0.2)
    assert cursor.status() == "RUNNING_STATE"
    cursor.cancel_operation(reset_state=False)
    while cursor.status() != "CANCELED_STATE" and time.monotonic() < deadline:
        time.sleep(0.2)
    assert cursor.status() == "CANCELED_STATE"


def test_a_temporary_view_shadows_a_table_in_its_cursors_session(
    impyla: Callable[..., Any],
) -> None:
    conn = impyla("alice")
    mine = conn.cursor(configuration=SHOP)
    mine.execute("CREATE TEMPORARY VIEW orders AS SELECT 42 AS id")
    assert query(mine, "SELECT id FROM orders") == [(42,)]
    other = conn.cursor(configuration=SHOP)  # a session of its own
    assert query(other, "SELECT count(*) FROM orders") == [(4,)]


def test_wrong_credentials_are_refused(impyla: Callable[..., Any]) -> None:
    for user, password in (("alice", "not-" + PASSWORD), ("token", "tsr_not_a_token")):
        with pytest.raises(Exception) as raised:  # thrift's or impyla's error
            impyla(user, password).cursor(configuration=SHOP)
        assert "INVALID_CREDENTIALS" in str(raised.value) or "Bad status" in str(raised.value)


def test_over_http(shop: HiveServer2, server: str) -> None:
    url = urlsplit(server)
    for user, password in (("alice", PASSWORD), ("token", token_for("alice"))):
        conn = dbapi.connect(
            host=url.hostname,
            port=url.port,
            auth_mechanism="PLAIN",
            user=user,
            password=password,
            use_http_transport=True,
            http_path="cliservice",
        )
        try:
            cursor = conn.cursor(configuration=SHOP)
            assert query(cursor, "SELECT count(*) FROM orders") == [(4,)]
            cursor.get_tables("sales")
            assert [t[2] for t in cursor.fetchall() if t[0] == "shop"] == ["customers", "orders"]
        finally:
            conn.close()
    refused = dbapi.connect(
        host=url.hostname,
        port=url.port,
        auth_mechanism="PLAIN",
        user="alice",
        password="wrong",
        use_http_transport=True,
        http_path="cliservice",
    )
    with pytest.raises(Exception, match="401"):  # impyla's HTTP error
        refused.cursor(configuration=SHOP)
