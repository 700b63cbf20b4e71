"""The HiveServer2 endpoint against hostile clients (docs/security.md, "HiveServer2"): wrong,
revoked and expired credentials, the sign-in throttle, other users' handles, forged handles,
statements REST refuses, oversized frames and statements, malformed SASL, the sessions cap.
After each attack the endpoint still serves."""

from __future__ import annotations

import socket
import struct
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.core.cache import caches
from django.utils import timezone
from pyhive import hive  # type: ignore[import-untyped]
from TCLIService import ttypes  # type: ignore[import-untyped]

from accounts.models import ApiToken
from accounts.tokens import key_digest, token_revoke
from hiveserver2.server import HiveServer2
from tests.conftest import API, PASSWORD, client_for, token_for
from tests.hiveserver2.conftest import connect

pytestmark = [pytest.mark.slow, pytest.mark.spark]
OK = ttypes.TStatusCode.SUCCESS_STATUS


def still_serves(port: int) -> None:
    conn = connect(port, "alice", configuration={"use:catalog": "shop"}, database="sales")
    try:
        cursor = conn.cursor()
        cursor.execute("SELECT 1")
        assert cursor.fetchall() == [(1,)]
    finally:
        conn.close()


def refused_sign_in(port: int, username: str, password: str) -> str:
    with pytest.raises(Exception) as raised:  # thrift_sasl: "Bad status: 3 (b'…')"
        connect(port, username, password)
    return str(raised.value)


def test_wrong_password_is_refused(shop: HiveServer2) -> None:
    assert "[INVALID_CREDENTIALS]" in refused_sign_in(shop.port, "alice", "not-it")
    assert "[INVALID_CREDENTIALS]" in refused_sign_in(shop.port, "nobody", PASSWORD)
    still_serves(shop.port)


def test_revoked_expired_and_unknown_tokens_are_refused(shop: HiveServer2, alice: Any) -> None:
    key = token_for("alice")
    conn = connect(shop.port, "token", key, configuration={"use:catalog": "shop"})
    conn.cursor().execute("SELECT 1")
    token = ApiToken.objects.get(digest=key_digest(key))
    ApiToken.objects.filter(pk=token.pk).update(expires=timezone.now() - timedelta(seconds=1))
    # The open connection's next call checks the token again.
    with pytest.raises(hive.OperationalError) as raised:
        conn.cursor().execute("SELECT 1")
    assert raised.value.args[0].status.errorMessage.startswith("[NOT_AUTHENTICATED] ")
    conn._transport.close()
    assert "[TOKEN_EXPIRED]" in refused_sign_in(shop.port, "token", key)
    token_revoke(token=token, actor=alice)
    assert "Invalid token. [NOT_AUTHENTICATED]" in refused_sign_in(shop.port, "token", key)
    assert "[NOT_AUTHENTICATED]" in refused_sign_in(shop.port, "token", "x" * 40)


def test_sign_in_is_throttled(shop: HiveServer2, settings: Any) -> None:
    settings.TESSERA_AUTH_THROTTLE_RATE = "3/min"
    caches["throttle"].clear()
    for _ in range(3):
        assert "[INVALID_CREDENTIALS]" in refused_sign_in(shop.port, "alice", "guess")
    # The fourth attempt is refused before its credentials are looked at, right ones too.
    assert "[TOO_MANY_REQUESTS]" in refused_sign_in(shop.port, "alice", PASSWORD)
    settings.TESSERA_AUTH_THROTTLE_RATE = None
    still_serves(shop.port)


def test_another_users_session_handle_is_refused(hive_as: Callable[..., Any]) -> None:
    alice = hive_as("alice", database="sales")
    bob = hive_as("bob")
    stolen = alice.sessionHandle
    run = bob.client.ExecuteStatement(
        ttypes.TExecuteStatementReq(sessionHandle=stolen, statement="SELECT * FROM orders")
    )
    assert run.status.statusCode != OK
    assert run.status.errorMessage.startswith("[INVALID_HANDLE]"), run.status
    tables = bob.client.GetTables(ttypes.TGetTablesReq(sessionHandle=stolen, catalogName="shop"))
    assert tables.status.errorMessage.startswith("[INVALID_HANDLE]")
    closed = bob.client.CloseSession(ttypes.TCloseSessionReq(sessionHandle=stolen))
    assert closed.status.statusCode != OK
    cursor = alice.cursor()
    cursor.execute("SELECT count(*) FROM orders")  # alice's session is untouched
    assert cursor.fetchall() == [(4,)]


def _status(conn: Any, handle: Any) -> Any:
    return conn.client.GetOperationStatus(ttypes.TGetOperationStatusReq(operationHandle=handle))


def test_forged_and_borrowed_operation_handles_are_refused(hive_as: Callable[..., Any]) -> None:
    alice = hive_as("alice", database="sales")
    bob = hive_as("bob")
    cursor = alice.cursor()
    cursor.execute("SELECT id FROM orders")
    real = cursor._operationHandle
    assert _status(alice, real).status.statusCode == OK
    session = alice.sessionHandle.sessionId.guid
    for guid, secret in (
        (uuid.uuid4().bytes, session),  # a guessed operation in alice's session
        (real.operationId.guid, uuid.uuid4().bytes),  # alice's job in another session
        (real.operationId.guid[:8], session),  # not an id at all
    ):
        forged = ttypes.TOperationHandle(
            operationId=ttypes.THandleIdentifier(guid=guid, secret=secret),
            operationType=ttypes.TOperationType.EXECUTE_STATEMENT,
            hasResultSet=True,
        )
        assert _status(alice, forged).status.errorMessage.startswith("[INVALID_HANDLE]")
    # bob holding alice's exact handle (job and session ids) reads nothing of it.
    assert _status(bob, real).status.errorMessage.startswith("[INVALID_HANDLE]")
    fetched = bob.client.FetchResults(
        ttypes.TFetchResultsReq(
            operationHandle=real, orientation=ttypes.TFetchOrientation.FETCH_FIRST, maxRows=10
        )
    )
    assert fetched.status.errorMessage.startswith("[INVALID_HANDLE]")
    assert fetched.results is None
    # The operation's log and its columns are alice's too: by GetLog and by FetchResults' log.
    log = bob.client.GetLog(ttypes.TGetLogReq(operationHandle=real))
    assert log.status.errorMessage.startswith("[INVALID_HANDLE]") and not log.log
    logged = bob.client.FetchResults(
        ttypes.TFetchResultsReq(operationHandle=real, orientation=0, maxRows=10, fetchType=1)
    )
    assert logged.status.errorMessage.startswith("[INVALID_HANDLE]") and logged.results is None
    columns = bob.client.GetResultSetMetadata(ttypes.TGetResultSetMetadataReq(operationHandle=real))
    assert columns.status.errorMessage.startswith("[INVALID_HANDLE]") and columns.schema is None
    canceled = bob.client.CancelOperation(ttypes.TCancelOperationReq(operationHandle=real))
    assert canceled.status.statusCode != OK
    meta = alice.client.GetCatalogs(ttypes.TGetCatalogsReq(sessionHandle=alice.sessionHandle))
    assert _status(bob, meta.operationHandle).status.statusCode != OK


def _rest_code(alice: Any, sql: str) -> str:
    api = client_for(alice)
    session = api.post(f"{API}/sessions", {"current_catalog": "shop"}).json()["id"]
    response = api.post(f"{API}/sessions/{session}/statements", {"sql": sql, "wait": 30})
    body = response.json()
    if response.status_code >= 400:
        return str(body["error"]["code"])
    assert body["status"] == "FAILED", body
    return str(body["error"]["code"])


@pytest.mark.parametrize(
    "sql",
    [
        "SET spark.master = local",
        "SELECT * FROM parquet.`/etc`",
        "SELECT java_method('java.lang.System', 'exit', 1)",
    ],
)
def test_a_statement_rest_refuses_is_refused_with_the_same_code(
    hive_as: Callable[..., Any], alice: Any, sql: str
) -> None:
    expected = _rest_code(alice, sql)
    conn = hive_as("alice", database="sales")
    with pytest.raises(hive.OperationalError) as raised:
        conn.cursor().execute(sql)
    assert raised.value.args[0].status.errorMessage.startswith(f"[{expected}] ")


def _signed_in_socket(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(struct.pack(">BI", 1, 5) + b"PLAIN")
    plain = b"\x00alice\x00" + PASSWORD.encode()
    sock.sendall(struct.pack(">BI", 2, len(plain)) + plain)
    assert sock.recv(5) == struct.pack(">BI", 5, 0)  # COMPLETE
    return sock


def _closed(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def test_an_oversized_frame_ends_only_its_connection(shop: HiveServer2) -> None:
    sock = _signed_in_socket(shop.port)
    sock.sendall(struct.pack(">I", shop.max_frame + 1) + b"\x80\x01\x00\x01")
    assert _closed(sock)
    sock.close()
    sock = _signed_in_socket(shop.port)
    lying = b"\x80\x01\x00\x01" + struct.pack(">i", 100_000_000)  # a 100 MB method name
    sock.sendall(struct.pack(">I", len(lying)) + lying)
    assert _closed(sock)
    sock.close()
    still_serves(shop.port)


def test_a_huge_statement_is_refused(hive_as: Callable[..., Any], shop: HiveServer2) -> None:
    conn = hive_as("alice", database="sales")
    big = "SELECT '" + "x" * (2 * 1024 * 1024) + "'"  # over TESSERA_SQL_MAX_CHARS, in a frame
    with pytest.raises(hive.OperationalError) as raised:
        conn.cursor().execute(big)
    assert raised.value.args[0].status.errorMessage.startswith("[STATEMENT_TOO_LARGE]")
    cursor = conn.cursor()
    cursor.execute("SELECT 2")  # the same connection goes on
    assert cursor.fetchall() == [(2,)]
    with pytest.raises(Exception):  # noqa: B017 - over the frame limit: the connection ends
        conn.cursor().execute("SELECT '" + "x" * (shop.max_frame + 1) + "'")
    still_serves(shop.port)


@pytest.mark.parametrize(
    "opening",
    [
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",  # HTTP to the binary port
        struct.pack(">BI", 1, 6) + b"GSSAPI",  # a mechanism not offered
        struct.pack(">BI", 1, 0x7FFFFFFF),  # a message claiming 2 GiB
        struct.pack(">BI", 2, 5) + b"PLAIN",  # no START
        struct.pack(">BI", 1, 5) + b"PLAIN" + struct.pack(">BI", 2, 5) + b"alice",  # no NULs
    ],
)
def test_a_malformed_sasl_exchange_is_refused(shop: HiveServer2, opening: bytes) -> None:
    sock = socket.create_connection(("127.0.0.1", shop.port), timeout=15)
    sock.sendall(opening)
    answer = b""
    try:
        while chunk := sock.recv(4096):
            answer += chunk
    except ConnectionResetError:
        pass  # closed with our bytes unread
    sock.close()
    assert answer == b"" or answer[0] == 3, answer  # nothing, or BAD with a reason
    still_serves(shop.port)


def test_the_sessions_cap_closes_the_oldest_idle_session(
    hive_as: Callable[..., Any], settings: Any
) -> None:
    settings.TESSERA_USER_SESSIONS = 2
    first = hive_as("alice", database="sales")
    hive_as("alice", database="sales")
    third = hive_as("alice", database="sales")  # the user's oldest idle session is closed
    with pytest.raises(hive.OperationalError) as raised:
        first.cursor().execute("SELECT 1")
    assert raised.value.args[0].status.errorMessage.startswith("[INVALID_HANDLE]")
    cursor = third.cursor()
    cursor.execute("SELECT 1")
    assert cursor.fetchall() == [(1,)]
