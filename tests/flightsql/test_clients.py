"""Flight SQL with real clients, happy paths: a query and its Arrow types, the metadata
commands (ADBC's get_objects, table types, table schema, info; GetPrimaryKeys and GetTables
with schemas by pyarrow.flight), the session it runs in, and cancel."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.flight as flight  # type: ignore[import-untyped]
import pytest
from google.protobuf import any_pb2

from core import jobstate
from flightsql.proto import FlightSql_pb2 as sql
from jobs.models import Job, Session
from tests.flightsql.conftest import flight_client
from tests.live_client import PASSWORD

pytestmark = [pytest.mark.slow, pytest.mark.spark]


def command(message: Any) -> flight.FlightDescriptor:
    wrapped = any_pb2.Any()
    wrapped.Pack(message)
    return flight.FlightDescriptor.for_command(wrapped.SerializeToString())


def fetch(client: flight.FlightClient, options: Any, message: Any) -> pa.Table:
    info = client.get_flight_info(command(message), options)
    return client.do_get(info.endpoints[0].ticket, options).read_all()


def test_a_query_through_adbc_is_a_job_of_a_session(
    adbc_as: Callable[..., Any], alice: Any
) -> None:
    conn = adbc_as("alice")
    cursor = conn.cursor()
    cursor.execute("SELECT id, price, qty FROM shop.sales.orders ORDER BY id")
    table = cursor.fetch_arrow_table()
    assert table.column("id").to_pylist() == [1, 2, 3, 4]
    assert table.schema.field("price").type == pa.decimal128(10, 2)
    assert table.column("price").to_pylist()[3] == Decimal("99.99")
    cursor.execute("SELECT 'x' AS a, 2 AS b")
    assert cursor.fetchall() == [("x", 2)]
    # Both statements are jobs of one session of alice's, as REST's and HiveServer2's are.
    jobs = list(Job.objects.filter(user=alice).exclude(session=None).order_by("created_at"))
    flight_jobs = [j for j in jobs if "ORDER BY id" in j.sql or "AS a" in j.sql]
    assert len(flight_jobs) == 2
    assert flight_jobs[0].session_id == flight_jobs[1].session_id
    assert Session.objects.filter(pk=str(flight_jobs[0].session_id), user=alice).exists()
    assert all(j.status == jobstate.FINISHED for j in flight_jobs)


def test_a_statement_without_rows_and_a_failing_one(adbc_as: Callable[..., Any]) -> None:
    cursor = adbc_as("alice").cursor()
    cursor.execute("CREATE TABLE shop.sales.notes (note STRING)")
    cursor.execute("SELECT count(*) AS n FROM shop.sales.notes")
    assert cursor.fetchall() == [(0,)]
    with pytest.raises(Exception, match=r"\[NOT_FOUND\]"):
        cursor.execute("SELECT * FROM shop.sales.no_such_table")


def test_metadata_through_adbc(adbc_as: Callable[..., Any]) -> None:
    conn = adbc_as("alice")
    objects = conn.adbc_get_objects(depth="tables").read_all().to_pylist()
    catalogs = {c["catalog_name"]: c for c in objects}
    assert "shop" in catalogs and "bobs" not in catalogs  # bob's catalog: not alice's to see
    schemas = {s["db_schema_name"]: s for s in catalogs["shop"]["catalog_db_schemas"]}
    names = sorted(t["table_name"] for t in schemas["sales"]["db_schema_tables"])
    assert names == ["customers", "orders"]
    assert sorted(conn.adbc_get_table_types()) == ["TABLE", "VIEW"]
    schema = conn.adbc_get_table_schema("orders", catalog_filter="shop", db_schema_filter="sales")
    assert schema.names == ["id", "customer", "price", "qty"]
    assert schema.field("price").type == pa.decimal128(10, 2)
    assert schema.field("qty").type == pa.int32()
    info = conn.adbc_get_info()
    assert info["vendor_name"] == "Tessera"


def test_metadata_through_pyarrow_flight(flight_as: Callable[..., Any]) -> None:
    client, options = flight_as("alice")
    catalogs = fetch(client, options, sql.CommandGetCatalogs())
    assert "shop" in catalogs.column("catalog_name").to_pylist()
    schemas = fetch(client, options, sql.CommandGetDbSchemas(catalog="shop"))
    assert {"catalog_name": "shop", "db_schema_name": "sales"} in schemas.to_pylist()
    assert {s["catalog_name"] for s in schemas.to_pylist()} == {"shop"}
    tables = fetch(
        client,
        options,
        sql.CommandGetTables(catalog="shop", table_name_filter_pattern="ord%", include_schema=True),
    )
    assert tables.column("table_name").to_pylist() == ["orders"]
    columns = pa.ipc.read_schema(pa.py_buffer(tables.column("table_schema")[0].as_py()))
    assert columns.field("id").type == pa.int64() and not columns.field("id").nullable
    keys = fetch(
        client,
        options,
        sql.CommandGetPrimaryKeys(catalog="shop", db_schema="sales", table="orders"),
    )
    assert [(k["column_name"], k["key_sequence"]) for k in keys.to_pylist()] == [("id", 1)]
    info = fetch(client, options, sql.CommandGetSqlInfo(info=[sql.FLIGHT_SQL_SERVER_NAME]))
    assert info.column("value").to_pylist() == ["Tessera"]
    kinds = fetch(client, options, sql.CommandGetTableTypes())
    assert kinds.column("table_type").to_pylist() == ["TABLE", "VIEW"]


SLOW = "SELECT count(*) FROM range(1000000000) a CROSS JOIN range(1000000) b"


def _running(user: Any) -> Job:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        job = Job.objects.filter(user=user, sql=SLOW).order_by("-created_at").first()
        if job is not None and job.status == jobstate.RUNNING:
            return job
        time.sleep(0.2)
    raise AssertionError("the slow statement did not start")


def _until_ended(job: Job) -> Job:
    deadline = time.monotonic() + 60
    while job.status not in jobstate.TERMINAL and time.monotonic() < deadline:
        time.sleep(0.2)
        job.refresh_from_db()
    return job


def test_adbc_cancel_cancels_the_job(adbc_as: Callable[..., Any], alice: Any) -> None:
    cursor = adbc_as("alice").cursor()
    failed: list[BaseException] = []

    def run() -> None:
        try:
            cursor.execute(SLOW)
        except BaseException as exc:
            failed.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    job = _running(alice)
    cursor.adbc_cancel()
    thread.join(60)
    assert failed, "the canceled statement returned rows"
    assert _until_ended(job).status == jobstate.CANCELED


def test_a_call_the_client_drops_cancels_its_job(shop: Any, alice: Any) -> None:
    client = flight_client(shop)
    header = client.authenticate_basic_token("alice", PASSWORD)
    options = flight.FlightCallOptions(headers=[header], timeout=8)
    with pytest.raises(flight.FlightTimedOutError):
        client.get_flight_info(command(sql.CommandStatementQuery(query=SLOW)), options)
    job = Job.objects.filter(user=alice, sql=SLOW).get()
    assert _until_ended(job).status == jobstate.CANCELED
    client.close()


def test_prepared_statement_with_named_parameters(adbc_as: Callable[..., Any]) -> None:
    cursor = adbc_as("alice").cursor()
    text = "SELECT id FROM shop.sales.orders WHERE qty > :n AND customer = :who ORDER BY id"
    # ADBC's Flight SQL driver binds Arrow data; its columns name the markers.
    cursor.execute(text, pa.record_batch({"n": [1], "who": [10]}))
    assert cursor.fetchall() == [(1,)]
    cursor.execute(text, pa.record_batch({"n": [0], "who": [10]}))  # same statement, new values
    assert cursor.fetchall() == [(1,), (2,)]
    job = Job.objects.filter(sql=text).order_by("-created_at").first()
    assert job is not None and ":n" in job.sql  # bound by Spark, never spliced


def test_a_temporary_view_shows_in_its_sessions_metadata_only(
    adbc_as: Callable[..., Any],
) -> None:
    mine = adbc_as("alice")
    cursor = mine.cursor()
    cursor.execute("USE shop.sales")  # the sign-in's session moves, as over REST
    cursor.execute("CREATE TEMPORARY VIEW orders AS SELECT 42 AS id")
    cursor.execute("SELECT id FROM orders")
    assert cursor.fetchall() == [(42,)]
    schema = mine.adbc_get_table_schema("orders", catalog_filter="shop", db_schema_filter="sales")
    assert schema.names == ["id"]
    other = adbc_as("alice")  # another sign-in: another session, the permanent table
    schema = other.adbc_get_table_schema("orders", catalog_filter="shop", db_schema_filter="sales")
    assert schema.names == ["id", "customer", "price", "qty"]
