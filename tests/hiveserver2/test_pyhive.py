"""PyHive against the HiveServer2 endpoint: sign-in, sessions, statements, results, cancel and
the metadata calls, as a BI tool or a notebook drives them."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from pyhive import hive  # type: ignore[import-untyped]
from TCLIService import ttypes  # type: ignore[import-untyped]

from tests.conftest import API, client_for, token_for

pytestmark = [pytest.mark.slow, pytest.mark.spark]
V6 = ttypes.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V6
OrderRow = tuple[int, int, Decimal, int]
ORDERS: list[OrderRow] = [
    (1, 10, Decimal("2.50"), 4),
    (2, 10, Decimal("10.00"), 1),
    (3, 11, Decimal("1.25"), 8),
    (4, 12, Decimal("99.99"), 1),
]


def rows_of(conn: Any, response: Any) -> list[tuple[Any, ...]]:
    """The rows of a metadata call's operation, read by PyHive's own cursor."""
    assert response.status.statusCode == ttypes.TStatusCode.SUCCESS_STATUS, response.status
    cursor = conn.cursor()
    cursor._operationHandle = response.operationHandle
    cursor._state = cursor._STATE_RUNNING
    return list(cursor.fetchall())


def query(conn: Any, sql: str) -> list[tuple[Any, ...]]:
    cursor = conn.cursor()
    cursor.execute(sql)
    return list(cursor.fetchall())


def test_select_1_with_a_password(hive_as: Callable[..., Any]) -> None:
    conn = hive_as("alice", database="sales")
    cursor = conn.cursor()
    cursor.execute("SELECT 1 AS one")
    assert cursor.fetchall() == [(1,)]
    assert cursor.description[0][:2] == ("one", "INT_TYPE")


def test_select_1_with_an_api_token(hive_as: Callable[..., Any]) -> None:
    conn = hive_as("token", token_for("alice"), database="sales")
    assert query(conn, "SELECT 1") == [(1,)]
    assert query(conn, "SELECT count(*) FROM orders") == [(4,)]  # alice's grants


def test_a_query_over_a_table_equals_its_rows(hive_as: Callable[..., Any]) -> None:
    conn = hive_as("alice", database="sales")
    cursor = conn.cursor()
    cursor.execute("SELECT id, customer, price, qty FROM orders ORDER BY id")
    assert cursor.fetchall() == ORDERS
    types = [column[1] for column in cursor.description]
    assert types == ["BIGINT_TYPE", "BIGINT_TYPE", "DECIMAL_TYPE", "INT_TYPE"]
    joined = query(
        conn,
        "SELECT c.name, sum(o.qty) FROM orders o JOIN customers c ON o.customer = c.id "
        "GROUP BY c.name ORDER BY c.name",
    )
    assert joined == [("Ada", 5), ("Bo", 8), ("Cy", 1)]


def test_fetch_pages_follow_max_rows_and_fetch_first(hive_as: Callable[..., Any]) -> None:
    conn = hive_as("alice", database="sales")
    cursor = conn.cursor(arraysize=3)  # FetchResults with maxRows 3, FETCH_NEXT
    cursor.execute("SELECT id FROM range(10) ORDER BY id")
    assert [row[0] for row in cursor.fetchall()] == list(range(10))
    again = ttypes.TFetchResultsReq(
        operationHandle=cursor._operationHandle,
        orientation=ttypes.TFetchOrientation.FETCH_FIRST,
        maxRows=4,
    )
    response = conn.client.FetchResults(again)
    assert response.results.columns[0].i64Val.values == [0, 1, 2, 3]
    assert response.hasMoreRows is True


def test_the_session_is_a_tessera_session(hive_as: Callable[..., Any], alice: Any) -> None:
    conn = hive_as("alice", database="sales")
    opened = conn.client.OpenSession(
        ttypes.TOpenSessionReq(
            client_protocol=V6, configuration={"use:catalog": "shop", "use:database": "sales"}
        )
    )
    assert opened.status.statusCode == ttypes.TStatusCode.SUCCESS_STATUS, opened.status
    session_id = uuid.UUID(bytes=opened.sessionHandle.sessionId.guid)
    listed = client_for(alice).get(f"{API}/sessions").json()
    found = [s for s in listed["items"] if s["id"] == str(session_id)]
    assert found and found[0]["current_catalog"] == "shop", listed
    assert found[0]["current_database"] == "sales"
    run = conn.client.ExecuteStatement(
        ttypes.TExecuteStatementReq(
            sessionHandle=opened.sessionHandle, statement="SELECT count(*) FROM customers"
        )
    )
    assert run.status.statusCode == ttypes.TStatusCode.SUCCESS_STATUS, run.status
    closed = conn.client.CloseSession(ttypes.TCloseSessionReq(sessionHandle=opened.sessionHandle))
    assert closed.status.statusCode == ttypes.TStatusCode.SUCCESS_STATUS
    listed = client_for(alice).get(f"{API}/sessions").json()
    assert str(session_id) not in [s["id"] for s in listed["items"]]


def test_use_then_an_unqualified_name(hive_as: Callable[..., Any]) -> None:
    conn = hive_as("alice")  # PyHive's USE `default`
    cursor = conn.cursor()
    cursor.execute("USE sales")
    assert query(conn, "SELECT name FROM customers ORDER BY id") == [("Ada",), ("Bo",), ("Cy",)]


def test_a_temporary_view_shadows_a_table_in_its_session_only(
    hive_as: Callable[..., Any],
) -> None:
    mine = hive_as("alice", database="sales")
    mine.cursor().execute("CREATE TEMPORARY VIEW orders AS SELECT 42 AS id")
    assert query(mine, "SELECT id FROM orders") == [(42,)]
    other = hive_as("alice", database="sales")
    assert query(other, "SELECT count(*) FROM orders") == [(4,)]
    # The metadata calls show the session's temporary view in place of the table.
    for conn, kind, columns in ((mine, "VIEW", ["id"]), (other, "TABLE", ["id", "customer"])):
        tables = rows_of(
            conn,
            conn.client.GetTables(
                ttypes.TGetTablesReq(
                    sessionHandle=conn.sessionHandle, catalogName="shop", tableName="orders"
                )
            ),
        )
        assert [t[:4] for t in tables] == [("shop", "sales", "orders", kind)]
        found = rows_of(
            conn,
            conn.client.GetColumns(
                ttypes.TGetColumnsReq(
                    sessionHandle=conn.sessionHandle, catalogName="shop", tableName="orders"
                )
            ),
        )
        assert [c[3] for c in found][:2] == columns


def test_async_execute_poll_and_cancel(hive_as: Callable[..., Any]) -> None:
    conn = hive_as("alice", database="sales")
    cursor = conn.cursor()
    cursor.execute(
        "SELECT count(*) FROM range(1000000000) a CROSS JOIN range(1000000) b", async_=True
    )
    state = ttypes.TOperationState
    deadline = time.monotonic() + 120
    status = cursor.poll().operationState
    while status != state.RUNNING_STATE and time.monotonic() < deadline:
        assert status in (state.PENDING_STATE, state.INITIALIZED_STATE), status
        time.sleep(0.2)
        status = cursor.poll().operationState
    assert status == state.RUNNING_STATE
    cursor.cancel()
    while status != state.CANCELED_STATE and time.monotonic() < deadline:
        time.sleep(0.2)
        status = cursor.poll().operationState
    assert status == state.CANCELED_STATE
    assert "[CANCELED]" in cursor.poll().errorMessage


def test_an_error_carries_the_code_message_and_sqlstate(hive_as: Callable[..., Any]) -> None:
    conn = hive_as("alice", database="sales")
    with pytest.raises(hive.OperationalError) as raised:
        conn.cursor().execute("SELECT * FROM no_such_table")
    status = raised.value.args[0].status
    # Spark's condition and SQLSTATE for a missing table, as its Thrift server gives them.
    assert status.errorMessage.startswith("[NOT_FOUND] [TABLE_OR_VIEW_NOT_FOUND] "), status
    assert "no_such_table" in status.errorMessage
    assert status.sqlState == "42P01"
    with pytest.raises(hive.OperationalError) as raised:
        conn.cursor().execute("SHOW TABLES IN shop.no_such_database")
    status = raised.value.args[0].status
    assert status.errorMessage.startswith("[NOT_FOUND] [SCHEMA_NOT_FOUND] "), status
    assert status.sqlState == "42704"


def test_metadata_calls_answer_from_the_catalog(hive_as: Callable[..., Any]) -> None:
    conn = hive_as("alice", database="sales")
    handle = conn.sessionHandle
    client = conn.client
    catalogs = rows_of(conn, client.GetCatalogs(ttypes.TGetCatalogsReq(sessionHandle=handle)))
    assert ("shop",) in catalogs
    schemas = rows_of(
        conn, client.GetSchemas(ttypes.TGetSchemasReq(sessionHandle=handle, catalogName="shop"))
    )
    assert sorted(schemas) == [("default", "shop"), ("sales", "shop")]
    tables = rows_of(
        conn,
        client.GetTables(
            ttypes.TGetTablesReq(sessionHandle=handle, catalogName="shop", schemaName="sal%")
        ),
    )
    assert [t[:4] for t in tables] == [
        ("shop", "sales", "customers", "TABLE"),
        ("shop", "sales", "orders", "TABLE"),
    ]
    columns = rows_of(
        conn,
        client.GetColumns(
            ttypes.TGetColumnsReq(
                sessionHandle=handle, catalogName="shop", schemaName="sales", tableName="orders"
            )
        ),
    )
    assert [(c[3], c[4], c[5], c[11], c[16]) for c in columns] == [
        ("id", -5, "BIGINT", "", 1),
        ("customer", -5, "BIGINT", "who", 2),
        ("price", 3, "DECIMAL(10,2)", "", 3),
        ("qty", 4, "INT", "", 4),
    ]
    types = rows_of(conn, client.GetTableTypes(ttypes.TGetTableTypesReq(sessionHandle=handle)))
    assert types == [("TABLE",), ("VIEW",)]
    type_info = rows_of(conn, client.GetTypeInfo(ttypes.TGetTypeInfoReq(sessionHandle=handle)))
    assert ("BIGINT", -5) in [t[:2] for t in type_info]
    functions = rows_of(
        conn,
        client.GetFunctions(
            ttypes.TGetFunctionsReq(sessionHandle=handle, catalogName="shop", functionName="%")
        ),
    )
    assert functions == []  # the catalog holds none
    builtins = rows_of(
        conn,
        client.GetFunctions(ttypes.TGetFunctionsReq(sessionHandle=handle, functionName="date_ad%")),
    )
    assert builtins == [(None, None, "date_add", "", 1, "date_add")]
    keys = rows_of(
        conn,
        client.GetPrimaryKeys(
            ttypes.TGetPrimaryKeysReq(sessionHandle=handle, catalogName="shop", tableName="orders")
        ),
    )
    assert keys == []
    cross = rows_of(
        conn, client.GetCrossReference(ttypes.TGetCrossReferenceReq(sessionHandle=handle))
    )
    assert cross == []


def test_name_patterns_are_matched_in_the_database_as_jdbc_reads_them(
    hive_as: Callable[..., Any],
) -> None:
    """``_`` is any one character and ``\\_`` an underscore; case does not count; a pattern
    with a regular expression's characters is only text (no error, no match)."""
    conn = hive_as("alice", database="sales")
    for sql in (
        "CREATE TABLE order_lines (id BIGINT, line INT)",
        "CREATE TABLE orderXlines (id BIGINT)",
    ):
        query(conn, sql)

    def tables(pattern: str) -> list[str]:
        request = ttypes.TGetTablesReq(
            sessionHandle=conn.sessionHandle, catalogName="shop", tableName=pattern
        )
        return sorted(t[2] for t in rows_of(conn, conn.client.GetTables(request)))

    assert tables("order_lines") == ["orderXlines", "order_lines"]
    assert tables("order\\_lines") == ["order_lines"]
    assert tables("ORDER%") == ["orderXlines", "order_lines", "orders"]
    for text in ("order(", "[", "orders)|.*", "(?i).*", "\\"):
        assert tables(text) == [], text
    request = ttypes.TGetColumnsReq(
        sessionHandle=conn.sessionHandle,
        catalogName="shop",
        schemaName="sal_s",
        tableName="order\\_lines",
    )
    assert [(c[2], c[3]) for c in rows_of(conn, conn.client.GetColumns(request))] == [
        ("order_lines", "id"),
        ("order_lines", "line"),
    ]


def test_metadata_respects_grants(hive_as: Callable[..., Any]) -> None:
    alice = hive_as("alice", database="sales")
    bob = hive_as("bob")
    handle = bob.sessionHandle
    catalogs = rows_of(bob, bob.client.GetCatalogs(ttypes.TGetCatalogsReq(sessionHandle=handle)))
    assert ("bobs",) in catalogs and ("shop",) not in catalogs
    for sql in (
        "GRANT USE ON CATALOG shop TO USER bob",
        "GRANT USE ON DATABASE shop.sales TO USER bob",
        "GRANT SELECT ON TABLE shop.sales.customers TO USER bob",
    ):
        alice.cursor().execute(sql)
    catalogs = rows_of(bob, bob.client.GetCatalogs(ttypes.TGetCatalogsReq(sessionHandle=handle)))
    assert ("shop",) in catalogs
    tables = rows_of(
        bob,
        bob.client.GetTables(
            ttypes.TGetTablesReq(sessionHandle=handle, catalogName="shop", schemaName="sales")
        ),
    )
    assert [t[2] for t in tables] == ["customers"]  # not orders
    # SHOW TABLE EXTENDED (what dbt-spark lists relations by) is filtered alike.
    listed = query(bob, "SHOW TABLE EXTENDED IN shop.sales LIKE '*'")
    assert [row[:3] for row in listed] == [("sales", "customers", False)]
    assert "Type: MANAGED\n" in listed[0][3]
    everything = query(alice, "SHOW TABLE EXTENDED IN shop.sales LIKE '*'")
    assert [row[1] for row in everything] == ["customers", "orders"]
    assert query(bob, "SELECT count(*) FROM shop.sales.customers") == [(3,)]
    with pytest.raises(hive.OperationalError) as raised:
        bob.cursor().execute("SELECT * FROM shop.sales.orders")
    assert raised.value.args[0].status.errorMessage.startswith("[PERMISSION_DENIED]")
