"""Flight SQL's hostile cases beside the happy ones: wrong password, expired and revoked
tokens, no credentials, a bearer nobody was given, another user's (and another sign-in's)
ticket, forged and malformed tickets, statements REST refuses (their codes shown), a huge
statement, another user's cancel. Each is a clear Flight error carrying Tessera's code, never
an internal error, and the endpoint goes on serving."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.flight as flight  # type: ignore[import-untyped]
import pytest
from django.core.cache import caches
from django.utils import timezone
from google.protobuf import any_pb2

from accounts.models import ApiToken
from accounts.tokens import key_digest, token_revoke
from flightsql.proto import Flight_pb2 as wire
from flightsql.proto import FlightSql_pb2 as sql
from tests.conftest import PASSWORD, token_for
from tests.flightsql.conftest import flight_client
from tests.flightsql.test_clients import command, fetch

pytestmark = [pytest.mark.slow, pytest.mark.spark]


def query(client: flight.FlightClient, options: Any, text: str) -> flight.FlightInfo:
    return client.get_flight_info(command(sql.CommandStatementQuery(query=text)), options)


def packed_ticket(handle: bytes) -> flight.Ticket:
    wrapped = any_pb2.Any()
    wrapped.Pack(sql.TicketStatementQuery(statement_handle=handle))
    return flight.Ticket(wrapped.SerializeToString())


def test_wrong_password_and_no_credentials(shop: Any, flight_as: Callable[..., Any]) -> None:
    client = flight_client(shop)
    with pytest.raises(flight.FlightUnauthenticatedError, match=r"\[INVALID_CREDENTIALS\]"):
        client.authenticate_basic_token("alice", "not her password")
    with pytest.raises(flight.FlightUnauthenticatedError, match=r"\[INVALID_CREDENTIALS\]"):
        client.authenticate_basic_token("nobody", "x")
    # No authorization header at all, a bearer nobody was given, a scheme not served.
    with pytest.raises(flight.FlightUnauthenticatedError, match=r"\[NOT_AUTHENTICATED\]"):
        client.get_flight_info(command(sql.CommandGetCatalogs()))
    for header in (b"Bearer " + b"x" * 43, b"Digest abc", b"Basic !!!"):
        options = flight.FlightCallOptions(headers=[(b"authorization", header)])
        with pytest.raises(flight.FlightUnauthenticatedError, match=r"\[NOT_AUTHENTICATED\]"):
            client.get_flight_info(command(sql.CommandGetCatalogs()), options)
    client.close()
    # The right password still signs in.
    alice, options = flight_as("alice")
    assert "shop" in fetch(alice, options, sql.CommandGetCatalogs()).column(0).to_pylist()


def test_expired_and_revoked_tokens_are_refused(shop: Any, alice: Any) -> None:
    key = token_for("alice")
    client = flight_client(shop)
    options = flight.FlightCallOptions(headers=[client.authenticate_basic_token("token", key)])
    assert fetch(client, options, sql.CommandGetCatalogs()).num_rows >= 1
    token = ApiToken.objects.get(digest=key_digest(key))
    ApiToken.objects.filter(pk=token.pk).update(expires=timezone.now() - timedelta(seconds=1))
    # The bearer given for the token is checked again at each call.
    with pytest.raises(flight.FlightUnauthenticatedError, match=r"\[NOT_AUTHENTICATED\]"):
        fetch(client, options, sql.CommandGetCatalogs())
    with pytest.raises(flight.FlightUnauthenticatedError, match=r"\[TOKEN_EXPIRED\]"):
        client.authenticate_basic_token("token", key)
    token_revoke(token=token, actor=alice)
    with pytest.raises(flight.FlightUnauthenticatedError, match=r"\[NOT_AUTHENTICATED\]"):
        client.authenticate_basic_token("token", key)
    client.close()


def test_another_users_or_sign_ins_ticket_is_refused(flight_as: Callable[..., Any]) -> None:
    alice, alice_options = flight_as("alice")
    info = query(alice, alice_options, "SELECT id FROM shop.sales.orders")
    ticket = info.endpoints[0].ticket
    assert alice.do_get(ticket, alice_options).read_all().num_rows == 4
    bob, bob_options = flight_as("bob")
    with pytest.raises(flight.FlightUnauthorizedError, match=r"\[INVALID_HANDLE\]"):
        bob.do_get(ticket, bob_options).read_all()
    # alice again, signed in anew: another session, where that job did not run.
    again, again_options = flight_as("alice")
    with pytest.raises(flight.FlightUnauthorizedError, match=r"\[INVALID_HANDLE\]"):
        again.do_get(ticket, again_options).read_all()
    # bob cannot cancel it either (CancelFlightInfo, Flight.proto's messages).
    request = wire.CancelFlightInfoRequest(info=wire.FlightInfo.FromString(info.serialize()))
    cancel = flight.Action("CancelFlightInfo", request.SerializeToString())
    with pytest.raises(flight.FlightUnauthorizedError, match=r"\[INVALID_HANDLE\]"):
        list(bob.do_action(cancel, bob_options))
    # alice's cancel of an ended statement: nothing to cancel.
    done = list(alice.do_action(cancel, alice_options))
    result = wire.CancelFlightInfoResult.FromString(done[0].body.to_pybytes())
    assert result.status == wire.CANCEL_STATUS_NOT_CANCELLABLE
    # Flight SQL's older CancelQuery action, the same rules.
    legacy = any_pb2.Any()
    legacy.Pack(sql.ActionCancelQueryRequest(info=info.serialize()))
    old_cancel = flight.Action("CancelQuery", legacy.SerializeToString())
    with pytest.raises(flight.FlightUnauthorizedError, match=r"\[INVALID_HANDLE\]"):
        list(bob.do_action(old_cancel, bob_options))
    [reply] = list(alice.do_action(old_cancel, alice_options))
    answer = any_pb2.Any.FromString(reply.body.to_pybytes())
    unpacked = sql.ActionCancelQueryResult()
    assert answer.Unpack(unpacked)
    assert unpacked.result == sql.ActionCancelQueryResult.CANCEL_RESULT_NOT_CANCELLABLE


def test_forged_and_malformed_tickets_are_refused(flight_as: Callable[..., Any]) -> None:
    alice, options = flight_as("alice")
    with pytest.raises(flight.FlightUnauthorizedError, match=r"\[INVALID_HANDLE\]"):
        alice.do_get(packed_ticket(os.urandom(16)), options).read_all()
    with pytest.raises(flight.FlightUnauthorizedError, match=r"\[INVALID_HANDLE\]"):
        alice.do_get(packed_ticket(b"short"), options).read_all()
    for garbage in (b"", b"\xff" * 64, b"not a protobuf at all"):
        with pytest.raises(pa.ArrowInvalid, match=r"\[(VALIDATION_ERROR|INVALID_HANDLE)\]"):
            alice.do_get(flight.Ticket(garbage), options).read_all()
    with pytest.raises(pa.ArrowInvalid, match=r"\[VALIDATION_ERROR\]"):
        alice.get_flight_info(flight.FlightDescriptor.for_command(b"\x0a\x03abc"), options)
    with pytest.raises(pa.ArrowInvalid, match=r"\[VALIDATION_ERROR\]"):
        alice.get_flight_info(flight.FlightDescriptor.for_path("x"), options)
    # An unknown prepared statement handle.
    unknown = sql.CommandPreparedStatementQuery(prepared_statement_handle=os.urandom(16))
    with pytest.raises(flight.FlightUnauthorizedError, match=r"\[INVALID_HANDLE\]"):
        alice.get_flight_info(command(unknown), options)
    assert query(alice, options, "SELECT 1").total_records == -1  # still serving


def test_statements_rest_refuses_show_their_code(
    flight_as: Callable[..., Any], adbc_as: Callable[..., Any]
) -> None:
    alice, alice_options = flight_as("alice")
    for grant in (
        "GRANT USE ON CATALOG shop TO USER bob",
        "GRANT USE ON DATABASE shop.sales TO USER bob",
    ):
        query(alice, alice_options, grant)
    bob, options = flight_as("bob")
    with pytest.raises(flight.FlightUnauthorizedError, match=r"\[PERMISSION_DENIED\]"):
        query(bob, options, "SELECT * FROM shop.sales.orders")
    with pytest.raises(flight.FlightUnauthorizedError, match=r"\[FORBIDDEN_SQL\]"):
        query(bob, options, "SELECT reflect('java.lang.System', 'exit', 0)")
    with pytest.raises(Exception, match=r"\[FORBIDDEN_SQL\]"):
        adbc_as("bob").cursor().execute("SELECT reflect('java.lang.System', 'exit', 0)")
    with pytest.raises(pa.ArrowInvalid, match=r"\[PARSE_ERROR\]"):
        query(bob, options, "SELEC nonsense")


def test_a_huge_statement_is_refused(flight_as: Callable[..., Any]) -> None:
    alice, options = flight_as("alice")
    big = "SELECT '" + "x" * (2 * 1024 * 1024) + "'"  # over TESSERA_SQL_MAX_CHARS
    with pytest.raises(pa.ArrowInvalid, match=r"\[STATEMENT_TOO_LARGE\]"):
        query(alice, options, big)
    bigger = "SELECT '" + "x" * (6 * 1024 * 1024) + "'"  # over gRPC's message limit
    with pytest.raises((flight.FlightError, pa.ArrowException)):
        query(alice, options, bigger)
    table = alice.do_get(query(alice, options, "SELECT 2 AS n").endpoints[0].ticket, options)
    assert table.read_all().to_pylist() == [{"n": 2}]


def test_parameters_that_do_not_fit_are_refused(adbc_as: Callable[..., Any]) -> None:
    cursor = adbc_as("alice").cursor()
    with pytest.raises(Exception, match=r"\[(VALIDATION_ERROR|PARSE_ERROR)\]") as raised:
        cursor.execute("SELECT :n AS n", (1,))  # positional: no marker is named "0"
    assert "INTERNAL_ERROR" not in str(raised.value)
    with pytest.raises(Exception, match=r"\[VALIDATION_ERROR\] Bind exactly one row"):
        cursor.execute("SELECT :n AS n", pa.record_batch({"n": [1, 2]}))
    cursor.execute("SELECT :n AS n", pa.record_batch({"n": [5]}))
    assert cursor.fetchall() == [(5,)]


def test_sign_in_is_throttled_per_name(shop: Any, settings: Any) -> None:
    settings.TESSERA_AUTH_THROTTLE_RATE = "3/min"
    caches["throttle"].clear()
    client = flight_client(shop)
    for _ in range(3):
        with pytest.raises(flight.FlightUnauthenticatedError, match=r"\[INVALID_CREDENTIALS\]"):
            client.authenticate_basic_token("alice", "guess")
    # The fourth attempt is refused before its credentials are looked at, right ones too.
    with pytest.raises(flight.FlightUnauthenticatedError, match=r"\[TOO_MANY_REQUESTS\]"):
        client.authenticate_basic_token("alice", PASSWORD)
    # The count is this door's, per name (pyarrow gives no address): bob still signs in.
    client.authenticate_basic_token("bob", PASSWORD)
    settings.TESSERA_AUTH_THROTTLE_RATE = None
    caches["throttle"].clear()
    client.close()
