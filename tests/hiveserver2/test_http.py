"""PyHive over HiveServer2's HTTP transport: ``POST /cliservice`` on the web port (pytest-
django's live server), Basic credentials, every call a request that any web process may
serve (operations and fetch positions in the shared cache)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest
from django.contrib.auth.models import User
from pyhive import hive  # type: ignore[import-untyped]
from TCLIService import ttypes  # type: ignore[import-untyped]

from hiveserver2.server import HiveServer2
from tests.conftest import PASSWORD, token_for
from tests.hiveserver2.test_pyhive import rows_of

pytestmark = [pytest.mark.slow, pytest.mark.spark]


def over_http(server: str, username: str, password: str = PASSWORD) -> Any:
    url = urlsplit(server)
    return hive.connect(
        host=url.hostname,
        port=url.port,
        scheme="http",
        username=username,
        password=password,
        auth="BASIC",
        configuration={"use:catalog": "shop"},
        database="sales",
    )


def test_queries_fetches_and_metadata_over_http(shop: HiveServer2, server: str) -> None:
    conn = over_http(server, "alice")
    try:
        cursor = conn.cursor()
        cursor.execute("SELECT count(*) FROM orders")
        assert cursor.fetchall() == [(4,)]
        cursor.execute("SELECT id FROM range(2500) ORDER BY id")  # three FetchResults
        assert [row[0] for row in cursor.fetchall()] == list(range(2500))
        tables = rows_of(
            conn,
            conn.client.GetTables(
                ttypes.TGetTablesReq(sessionHandle=conn.sessionHandle, catalogName="shop")
            ),
        )
        assert [t[2] for t in tables] == ["customers", "orders"]
    finally:
        conn.close()
    token = over_http(server, "token", token_for("alice"))
    try:
        cursor = token.cursor()
        cursor.execute("SELECT 1")
        assert cursor.fetchall() == [(1,)]
    finally:
        token.close()


def test_wrong_credentials_over_http_are_refused(shop: HiveServer2, server: str) -> None:
    with pytest.raises(Exception):  # noqa: B017 - THttpClient: the 401 is not a Thrift answer
        over_http(server, "alice", "not-it")
    with pytest.raises(Exception):  # noqa: B017
        over_http(server, "token", "tsr_not-a-token")


def test_a_changed_password_ends_a_remembered_http_sign_in(shop: HiveServer2, server: str) -> None:
    conn = over_http(server, "alice")
    try:
        cursor = conn.cursor()
        cursor.execute("SELECT 1")
        assert cursor.fetchall() == [(1,)]
        alice = User.objects.get(username="alice")
        alice.set_password("a-new-one-entirely")
        alice.save()
        # The same header answered a moment ago: now it is checked again, and refused.
        with pytest.raises(Exception):  # noqa: B017 - THttpClient: the 401 is not a Thrift answer
            cursor.execute("SELECT 2")
    finally:
        alice = User.objects.get(username="alice")
        alice.set_password(PASSWORD)
        alice.save()
    with pytest.raises(Exception):  # noqa: B017 - the old header is not remembered any more
        over_http(server, "alice", "not-it")
