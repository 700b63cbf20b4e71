"""Flight's session actions on the Flight SQL endpoint, by ADBC and pyarrow.flight, hostile
cases beside the happy ones: CloseSession ends the sign-in's Tessera session (its temporary
objects go, its bearer is refused after), SetSessionOptions moves the session as ``USE`` does
and sets properties as ``SET`` does — a catalog the caller may not use, a key outside SET's
allow-list, a value out of range or huge is a per-option error, never a failed call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.flight as flight  # type: ignore[import-untyped]
import pytest

from flightsql.proto import Flight_pb2 as wire
from flightsql.proto import FlightSql_pb2 as sql
from jobs.models import Job, Session, TemporaryObject
from tests.flightsql.test_clients import fetch
from tests.flightsql.test_hostile import query

pytestmark = [pytest.mark.slow, pytest.mark.spark]
Result = wire.SetSessionOptionsResult


def act(client: flight.FlightClient, options: Any, name: str, body: bytes) -> list[bytes]:
    return [r.body.to_pybytes() for r in client.do_action(flight.Action(name, body), options)]


def set_options(client: flight.FlightClient, options: Any, values: dict[str, Any]) -> Any:
    """SetSessionOptions; a value None is sent valueless (clear)."""
    request = wire.SetSessionOptionsRequest()
    for name, value in values.items():
        option = request.session_options[name]
        if isinstance(value, bool):
            option.bool_value = value
        elif isinstance(value, int):
            option.int64_value = value
        elif isinstance(value, float):
            option.double_value = value
        elif isinstance(value, str):
            option.string_value = value
    (body,) = act(client, options, "SetSessionOptions", request.SerializeToString())
    return Result.FromString(body)


def get_options(client: flight.FlightClient, options: Any) -> dict[str, Any]:
    (body,) = act(client, options, "GetSessionOptions", b"")
    found = wire.GetSessionOptionsResult.FromString(body).session_options
    return {name: getattr(v, str(v.WhichOneof("option_value"))) for name, v in found.items()}


def errors(result: Any) -> dict[str, int]:
    return {name: error.value for name, error in result.errors.items()}


def rows(client: flight.FlightClient, options: Any, text: str) -> list[dict[str, Any]]:
    info = query(client, options, text)
    return list(client.do_get(info.endpoints[0].ticket, options).read_all().to_pylist())


def session_of(client: flight.FlightClient, options: Any) -> Session:
    marker = "SELECT 'which session' AS s"
    rows(client, options, marker)
    job = Job.objects.filter(sql=marker).order_by("-created_at").first()
    assert job is not None and job.session_id is not None
    return Session.objects.get(pk=job.session_id)


# --- happy ------------------------------------------------------------------------------------


def test_session_actions_are_listed(flight_as: Callable[..., Any]) -> None:
    client, options = flight_as("alice")
    names = {action.type for action in client.list_actions(options)}
    assert {"SetSessionOptions", "GetSessionOptions", "CloseSession"} <= names


def test_adbc_current_catalog_and_schema_move_the_session(adbc_as: Callable[..., Any]) -> None:
    conn = adbc_as("alice")
    conn.adbc_current_catalog = "shop"
    conn.adbc_current_db_schema = "sales"
    assert (conn.adbc_current_catalog, conn.adbc_current_db_schema) == ("shop", "sales")
    cursor = conn.cursor()
    cursor.execute("SELECT count(*) AS n FROM orders")  # resolved in shop.sales
    assert cursor.fetchall() == [(4,)]
    # Any other session option through the driver's prefix: a property, as SET sets it.
    option = "adbc.flight.sql.session.option.spark.sql.ansi.enabled"
    conn.adbc_connection.set_options(**{option: "true"})
    cursor.execute("SET spark.sql.ansi.enabled")
    assert cursor.fetchall() == [("spark.sql.ansi.enabled", "true")]


def test_options_set_get_and_clear_through_pyarrow(flight_as: Callable[..., Any]) -> None:
    client, options = flight_as("alice")
    values = {
        "catalog": "SHOP",  # names are case-insensitive; stored as the catalog spells them
        "schema": "sales",
        "spark.sql.shuffle.partitions": 8,
        "spark.sql.ansi.enabled": False,
        "spark.sql.session.timeZone": "Europe/Paris",
    }
    assert errors(set_options(client, options, values)) == {}
    assert get_options(client, options) == {
        "catalog": "shop",
        "schema": "sales",
        "spark.sql.shuffle.partitions": "8",
        "spark.sql.ansi.enabled": "false",
        "spark.sql.session.timeZone": "Europe/Paris",
    }
    # The same session's SET sees them, and its statements run where USE would put them.
    shown = rows(client, options, "SET spark.sql.shuffle.partitions")
    assert shown == [{"key": "spark.sql.shuffle.partitions", "value": "8"}]
    assert rows(client, options, "SELECT count(*) AS n FROM customers") == [{"n": 3}]
    session = session_of(client, options)
    assert (session.current_catalog, session.current_database) == ("shop", "sales")
    # Valueless options clear: the database, then a property (as RESET key).
    cleared = {"schema": None, "spark.sql.shuffle.partitions": None}
    assert errors(set_options(client, options, cleared)) == {}
    now = get_options(client, options)
    assert "schema" not in now and "spark.sql.shuffle.partitions" not in now
    assert now["catalog"] == "shop" and now["spark.sql.ansi.enabled"] == "false"


def test_close_session_ends_the_tessera_session(
    adbc_as: Callable[..., Any], flight_as: Callable[..., Any], alice: Any
) -> None:
    conn = adbc_as("alice")
    cursor = conn.cursor()
    cursor.execute("USE shop.sales")
    cursor.execute("CREATE TEMPORARY VIEW mine AS SELECT 1 AS x")
    job = Job.objects.get(sql="CREATE TEMPORARY VIEW mine AS SELECT 1 AS x")
    session_id = job.session_id
    assert session_id is not None
    assert TemporaryObject.objects.filter(session_id=session_id, name="mine").exists()
    cursor.close()
    conn.close()  # ADBC sends CloseSession
    assert not Session.objects.filter(pk=session_id).exists()
    assert not TemporaryObject.objects.filter(session_id=session_id).exists()
    assert Job.objects.filter(pk=job.pk, session=None).exists()  # the history stays
    # pyarrow.flight: the answer is CLOSED.
    client, options = flight_as("alice")
    (body,) = act(client, options, "CloseSession", b"")
    assert wire.CloseSessionResult.FromString(body).status == wire.CloseSessionResult.CLOSED


# --- hostile ------------------------------------------------------------------------------------


def test_a_closed_sessions_bearer_is_refused(flight_as: Callable[..., Any]) -> None:
    client, options = flight_as("alice")
    other, other_options = flight_as("alice")  # another sign-in of hers: another session
    bob, bob_options = flight_as("bob")
    session = session_of(client, options)
    act(client, options, "CloseSession", wire.CloseSessionRequest().SerializeToString())
    assert not Session.objects.filter(pk=session.pk).exists()
    refused = r"\[NOT_AUTHENTICATED\]"
    with pytest.raises(flight.FlightUnauthenticatedError, match=refused):
        query(client, options, "SELECT 1")
    with pytest.raises(flight.FlightUnauthenticatedError, match=refused):
        fetch(client, options, sql.CommandGetCatalogs())
    with pytest.raises(flight.FlightUnauthenticatedError, match=refused):
        set_options(client, options, {"catalog": "shop"})
    with pytest.raises(flight.FlightUnauthenticatedError, match=refused):
        act(client, options, "CloseSession", b"")  # twice: the bearer is gone
    # Her other sign-in and bob's are untouched.
    assert rows(other, other_options, "SELECT 1 AS n") == [{"n": 1}]
    assert rows(bob, bob_options, "SELECT 2 AS n") == [{"n": 2}]


def test_a_catalog_not_the_callers_is_a_per_option_error(
    flight_as: Callable[..., Any], adbc_as: Callable[..., Any]
) -> None:
    client, options = flight_as("alice")
    assert errors(set_options(client, options, {"catalog": "shop"})) == {}
    before = get_options(client, options)
    # bob's catalog (no grant of alice's), a missing one, a reserved name, a name that tries
    # to end the statement it is planned in: all the same answer, and nothing moves.
    for name in ("bobs", "no_such_catalog", "spark_catalog", "shop` ; DROP CATALOG shop; --"):
        result = set_options(client, options, {"catalog": name})
        assert errors(result) == {"catalog": Result.INVALID_VALUE}, name
    result = set_options(client, options, {"catalog": "bobs", "spark.sql.ansi.enabled": "true"})
    assert errors(result) == {"catalog": Result.INVALID_VALUE}  # the other option is set
    after = get_options(client, options)
    assert after["catalog"] == before["catalog"] == "shop"
    assert after["spark.sql.ansi.enabled"] == "true"
    assert errors(set_options(client, options, {"schema": "no_such_db"})) == {
        "schema": Result.INVALID_VALUE
    }
    assert errors(set_options(client, options, {"catalog": 7})) == {"catalog": Result.INVALID_VALUE}
    # ADBC reports the refusal as an error of the call that set it.
    conn = adbc_as("alice")
    with pytest.raises(Exception, match=r"option\(s\) 'catalog' \(invalid value\)"):
        conn.adbc_current_catalog = "bobs"
    cursor = conn.cursor()
    cursor.execute("SELECT 1 AS n")
    assert cursor.fetchall() == [(1,)]
    # Once bob grants her USE on it, the same option moves her session there.
    bob, bob_options = flight_as("bob")
    query(bob, bob_options, "GRANT USE ON CATALOG bobs TO USER alice")
    assert errors(set_options(client, options, {"catalog": "bobs"})) == {}
    assert get_options(client, options)["catalog"] == "bobs"


def test_a_setting_outside_sets_allow_list_is_a_per_option_error(
    flight_as: Callable[..., Any],
) -> None:
    client, options = flight_as("alice")
    result = set_options(
        client,
        options,
        {
            "spark.executor.memory": "64g",  # not settable: SET refuses it too
            "spark.sql.warehouse.dir": "/tmp/elsewhere",
            "no.such.option": "x",
            "spark.sql.shuffle.partitions": "100000000",  # settable, out of its range
            "spark.sql.adaptive.enabled": 1.5,  # a double: no property takes one
            "spark.sql.ansi.enabled": "true",  # fine, and set
        },
    )
    assert errors(result) == {
        "spark.executor.memory": Result.INVALID_NAME,
        "spark.sql.warehouse.dir": Result.INVALID_NAME,
        "no.such.option": Result.INVALID_NAME,
        "spark.sql.shuffle.partitions": Result.INVALID_VALUE,
        "spark.sql.adaptive.enabled": Result.INVALID_VALUE,
    }
    now = get_options(client, options)
    assert now.get("spark.sql.ansi.enabled") == "true"
    assert "spark.executor.memory" not in now and "spark.sql.shuffle.partitions" not in now
    with pytest.raises(flight.FlightUnauthorizedError, match=r"\[FORBIDDEN_SQL\]"):
        query(client, options, "SET spark.executor.memory = 64g")  # the same list


def test_huge_malformed_and_too_many_options_are_clear_errors(
    flight_as: Callable[..., Any],
) -> None:
    client, options = flight_as("alice")
    before = get_options(client, options)
    huge = "x" * (1024 * 1024)
    result = set_options(client, options, {"catalog": huge, "spark.sql.session.timeZone": huge})
    assert errors(result) == {
        "catalog": Result.INVALID_VALUE,
        "spark.sql.session.timeZone": Result.INVALID_VALUE,
    }
    assert errors(set_options(client, options, {huge: "1"})) == {huge: Result.INVALID_NAME}
    many = {f"spark.option{i}": "1" for i in range(101)}
    with pytest.raises(pa.ArrowInvalid, match=r"\[VALIDATION_ERROR\] At most 100 session"):
        set_options(client, options, many)
    with pytest.raises(pa.ArrowInvalid, match=r"\[VALIDATION_ERROR\] A malformed"):
        act(client, options, "SetSessionOptions", b"\xff\xff\xff")
    with pytest.raises((flight.FlightError, pa.ArrowException)):
        set_options(client, options, {"catalog": "x" * (6 * 1024 * 1024)})  # over gRPC's limit
    # The endpoint and the sign-in go on.
    assert rows(client, options, "SELECT 3 AS n") == [{"n": 3}]
    assert get_options(client, options) == before
