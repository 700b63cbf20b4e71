"""``tessera.dbapi`` (PEP 249) against the live server and its worker: connections, cursors,
named parameters bound by Spark, executemany, fetching, description, rowcount, and the
exception hierarchy mapped from Tessera's codes. Fixtures: tests/client/conftest.py."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from accounts.models import ApiToken
from accounts.tokens import token_create
from jobs.models import Job
from tests.client.conftest import PASSWORD
from tests.live_client import tessera  # noqa: F401 - puts client/src on the path if needed

from tessera import dbapi  # isort: skip

pytestmark = [pytest.mark.slow, pytest.mark.spark]


@pytest.fixture
def conn(shop: str) -> Iterator[dbapi.Connection]:
    """alice's DB-API connection in shop.sales."""
    with dbapi.connect(
        shop, username="alice", password=PASSWORD, catalog="shop", database="sales"
    ) as connection:
        yield connection


def test_module_globals_are_pep_249() -> None:
    assert (dbapi.apilevel, dbapi.threadsafety, dbapi.paramstyle) == ("2.0", 1, "named")
    assert issubclass(dbapi.Error, Exception) and issubclass(dbapi.Warning, Exception)
    for cls in (
        dbapi.DataError,
        dbapi.OperationalError,
        dbapi.IntegrityError,
        dbapi.InternalError,
        dbapi.ProgrammingError,
        dbapi.NotSupportedError,
    ):
        assert issubclass(cls, dbapi.DatabaseError)
    assert issubclass(dbapi.InterfaceError, dbapi.Error)
    assert issubclass(dbapi.DatabaseError, dbapi.Error)


def test_execute_fetch_description_and_rowcount(conn: dbapi.Connection) -> None:
    cur = conn.cursor()
    assert cur.description is None and cur.rowcount == -1
    cur.execute("SELECT id, price, qty, CAST(id AS STRING) AS label FROM orders ORDER BY id")
    assert cur.rowcount == 4
    description = cur.description
    assert description is not None
    assert [d[0] for d in description] == ["id", "price", "qty", "label"]
    codes = [d[1] for d in description]
    assert [codes[0], codes[1].replace(" ", ""), codes[2], codes[3]] == [
        "BIGINT",
        "DECIMAL(10,2)",
        "INT",
        "STRING",
    ]
    assert codes[0] == dbapi.NUMBER and codes[2] == dbapi.NUMBER and codes[3] == dbapi.STRING
    assert codes[1] == dbapi.NUMBER and codes[1] != dbapi.STRING
    assert description[1][4:6] == (10, 2)  # precision, scale of DECIMAL(10, 2)
    assert all(len(d) == 7 for d in description)
    assert cur.fetchone() == (1, Decimal("2.50"), 4, "1")
    assert cur.rownumber == 1
    assert cur.fetchmany(2) == [(2, Decimal("10.00"), 1, "2"), (3, Decimal("1.25"), 8, "3")]
    cur.arraysize = 5
    assert cur.fetchmany() == [(4, Decimal("99.99"), 1, "4")]
    assert cur.fetchone() is None and cur.fetchall() == []
    # Iteration, and an empty result.
    assert [row[0] for row in cur.execute("SELECT id FROM orders WHERE id > 2 ORDER BY id")] == [
        3,
        4,
    ]
    cur.execute("SELECT id FROM orders WHERE id > 100")
    assert cur.rowcount == 0 and cur.fetchall() == [] and cur.description is not None
    assert cur.job_id and Job.objects.filter(pk=cur.job_id, user__username="alice").exists()
    conn.commit()  # no transaction to end: each statement committed on its own
    conn.rollback()


def test_a_small_result_comes_with_the_answer_and_a_large_one_from_arrow(
    conn: dbapi.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A result the statement's answer holds whole, of types JSON keeps exactly, needs no
    second request; past one page, or with a type JSON would change, rows come from Arrow."""
    http = conn.env._http
    paths: list[str] = []
    send = http.request

    def recorded(method: str, path: str, **kwargs: Any) -> Any:
        paths.append(path)
        return send(method, path, **kwargs)

    monkeypatch.setattr(http, "request", recorded)
    cur = conn.cursor()
    cur.execute("SELECT id, CAST(id AS STRING) AS s, id % 2 = 0 AS even FROM range(3)")
    assert cur.fetchall() == [(0, "0", True), (1, "1", False), (2, "2", True)]
    assert not [p for p in paths if "/result" in p], paths
    cur.execute("SELECT id FROM range(1500)")
    assert [row[0] for row in cur.fetchall()] == list(range(1500))
    assert [p for p in paths if p.endswith("/result.arrow")], paths
    paths.clear()
    cur.execute("SELECT DATE'2024-01-02' AS d, 9007199254740993 AS big")
    assert cur.fetchall() == [(date(2024, 1, 2), 9007199254740993)]
    assert [p for p in paths if p.endswith("/result.arrow")], paths


def test_named_parameters_are_bound_by_spark(conn: dbapi.Connection) -> None:
    cur = conn.cursor()
    cur.execute(
        "SELECT id FROM orders WHERE qty >= :min_qty AND customer = :who ORDER BY id",
        {"min_qty": 1, "who": 10},
    )
    assert cur.fetchall() == [(1,), (2,)]
    assert cur.job_id is not None
    job = Job.objects.get(pk=cur.job_id)
    assert ":min_qty" in job.sql and "10" not in job.sql  # the text kept its markers
    # A value that would change the query if it were spliced into the text is a value.
    cur.execute("SELECT count(*) AS n FROM customers WHERE name = :name", {"name": "x' OR '1'='1"})
    assert cur.fetchone() == (0,)
    cur.execute(
        "SELECT :d AS d, :n AS n, :b AS b, :f AS f, :s AS s",
        {"d": date(2024, 2, 29), "n": Decimal("1.50"), "b": True, "f": 0.5, "s": None},
    )
    assert cur.fetchone() == ("2024-02-29", "1.50", True, 0.5, None)


def test_parameters_that_do_not_match_the_markers_are_programming_errors(
    conn: dbapi.Connection,
) -> None:
    cur = conn.cursor()
    with pytest.raises(dbapi.ProgrammingError) as missing:
        cur.execute("SELECT id FROM orders WHERE qty >= :min_qty")
    assert missing.value.code == "VALIDATION_ERROR"
    assert missing.value.details.get("parameter") == "min_qty"
    with pytest.raises(dbapi.ProgrammingError) as extra:
        cur.execute("SELECT 1 AS one", {"nothing": 1})
    assert extra.value.code == "VALIDATION_ERROR"
    with pytest.raises(dbapi.ProgrammingError, match="named"):
        cur.execute("SELECT 1 AS one", (1,))  # type: ignore[arg-type]
    with pytest.raises(dbapi.ProgrammingError) as kind:
        cur.execute("CREATE VIEW by_id AS SELECT * FROM orders WHERE id = :id", {"id": 1})
    # Spark binds parameters in queries only: a marker elsewhere is refused, never spliced.
    assert kind.value.code in ("VALIDATION_ERROR", "FORBIDDEN_SQL")


def test_executemany_inserts_every_row_as_uploaded_data(conn: dbapi.Connection) -> None:
    cur = conn.cursor()
    cur.execute("CREATE TABLE notes (id BIGINT, body STRING, day DATE, amount DECIMAL(10, 2))")
    hostile = "Robert'); DROP TABLE notes; --`"
    rows = [
        {"id": 1, "body": "plain", "day": date(2024, 1, 2), "amount": Decimal("1.10")},
        {"id": 2, "body": hostile, "day": None, "amount": Decimal("-3.00")},
        {"id": 3, "body": None, "day": date(2024, 3, 4), "amount": None},
    ]
    cur.executemany(
        "INSERT INTO notes (id, body, day, amount) VALUES (:id, :body, :day, :amount)", rows
    )
    assert cur.rowcount == 3
    insert = Job.objects.filter(user__username="alice", kind="insert").latest("created_at")
    assert "Robert" not in insert.sql and "plain" not in insert.sql  # values are data
    # One row through execute, with an expression over a marker.
    cur.execute(
        "INSERT INTO notes VALUES (:id + 1, upper(:body), NULL, NULL)", {"id": 3, "body": "x"}
    )
    assert cur.rowcount == 1
    # Markers whose values are all None are NULLs (no column type to upload).
    cur.execute(
        "INSERT INTO notes (id, body, day, amount) VALUES (:id, :body, :day, :amount)",
        {"id": 5, "body": None, "day": None, "amount": None},
    )
    cur.execute("SELECT * FROM notes ORDER BY id")
    assert cur.fetchall() == [
        (1, "plain", date(2024, 1, 2), Decimal("1.10")),
        (2, hostile, None, Decimal("-3.00")),
        (3, None, date(2024, 3, 4), None),
        (4, "X", None, None),
        (5, None, None, None),
    ]
    # The uploads went with temporary tables that were dropped again.
    assert conn.env.list_temporary_tables() == []
    with pytest.raises(dbapi.ProgrammingError) as mismatch:
        cur.executemany("INSERT INTO notes (id) VALUES (:id)", [{"id": 5}, {"idx": 6}])
    assert mismatch.value.details["index"] == 1
    jobs = Job.objects.count()
    cur.executemany("INSERT INTO notes (id) VALUES (:id)", [])  # no sets: nothing runs
    assert cur.rowcount == 0 and Job.objects.count() == jobs
    # A query run per set: rowcount adds up.
    cur.executemany("SELECT id FROM notes WHERE id = :id", [{"id": 1}, {"id": 2}, {"id": 9}])
    assert cur.rowcount == 2


def test_statements_without_a_result(conn: dbapi.Connection) -> None:
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY VIEW big AS SELECT * FROM orders WHERE qty > 1")
    cur.execute("SELECT count(*) FROM big")
    assert cur.fetchone() == (2,)
    cur.execute("INSERT INTO customers VALUES (13, 'Di')")
    assert cur.rowcount == 1 and cur.description is None
    with pytest.raises(dbapi.InterfaceError):
        cur.fetchall()  # an INSERT has no rows to fetch


def test_server_errors_map_to_the_pep_249_classes(conn: dbapi.Connection) -> None:
    cur = conn.cursor()
    with pytest.raises(dbapi.ProgrammingError) as parse:
        cur.execute("SELEC id FROM orders")
    assert parse.value.code == "PARSE_ERROR" and parse.value.job_id
    with pytest.raises(dbapi.ProgrammingError) as missing:
        cur.execute("SELECT * FROM no_such_table")
    assert missing.value.code == "NOT_FOUND"
    with pytest.raises(dbapi.ProgrammingError) as exists:
        cur.execute("CREATE TABLE orders (id BIGINT)")
    assert exists.value.code == "ALREADY_EXISTS"
    with pytest.raises(dbapi.DataError) as data:
        cur.execute("SELECT 1 / (qty - qty) FROM orders")  # ANSI: division by zero
    assert data.value.code == "SPARK_ERROR"
    assert str(data.value.details.get("sqlstate", "")).startswith("22")
    assert isinstance(data.value, dbapi.DatabaseError)
    with pytest.raises(dbapi.NotSupportedError):
        cur.callproc("anything")


def test_an_expired_or_unknown_token_is_an_operational_error(shop: str, alice: User) -> None:
    with pytest.raises(dbapi.OperationalError) as unknown:
        dbapi.connect(shop, token="not-a-token")
    assert unknown.value.code == "NOT_AUTHENTICATED"
    _, key = token_create(user=alice, name="dbapi")
    conn = dbapi.connect(shop, token=key, catalog="shop", database="sales")
    cur = conn.cursor()
    cur.execute("SELECT 1 AS one")
    ApiToken.objects.filter(user=alice).update(expires=timezone.now() - timedelta(seconds=1))
    with pytest.raises(dbapi.OperationalError) as expired:
        cur.execute("SELECT 1 AS one")
    assert expired.value.code == "TOKEN_EXPIRED"
    with pytest.raises(dbapi.OperationalError):
        conn.close()  # ending the session needs the token too
    with pytest.raises(dbapi.InterfaceError):
        conn.cursor()  # closed all the same


def test_another_users_table_is_not_there(shop: str) -> None:
    with dbapi.connect(shop, username="bob", password=PASSWORD) as conn:
        with pytest.raises(dbapi.ProgrammingError) as caught:
            conn.cursor().execute("SELECT * FROM shop.sales.orders")
        assert caught.value.code in ("NOT_FOUND", "PERMISSION_DENIED")


def test_huge_input_is_refused_cleanly(conn: dbapi.Connection, settings: Any) -> None:
    cur = conn.cursor()
    with pytest.raises(dbapi.ProgrammingError) as too_long:
        cur.execute("SELECT '" + "x" * (settings.TESSERA_SQL_MAX_CHARS + 1) + "'")
    assert too_long.value.code == "STATEMENT_TOO_LARGE"
    with pytest.raises(dbapi.ProgrammingError) as big_value:
        cur.execute("SELECT length(:v) AS n", {"v": "x" * 70_000})
    assert big_value.value.code == "VALIDATION_ERROR"
    with pytest.raises(dbapi.ProgrammingError) as many:
        cur.execute(
            "SELECT " + ", ".join(f":p{i}" for i in range(101)),
            {f"p{i}": i for i in range(101)},
        )
    assert many.value.code == "VALIDATION_ERROR"
    cur.execute("SELECT 1 AS one")  # the connection still works
    assert cur.fetchall() == [(1,)]


def test_closed_cursors_and_connections_raise_interface_error(shop: str) -> None:
    conn = dbapi.connect(shop, username="alice", password=PASSWORD, catalog="shop")
    cur = conn.cursor()
    with pytest.raises(dbapi.InterfaceError):
        cur.fetchone()  # nothing executed yet
    cur.execute("SELECT 1 AS one")
    cur.close()
    for use in (lambda: cur.execute("SELECT 1"), cur.fetchone, cur.fetchall):
        with pytest.raises(dbapi.InterfaceError):
            use()
    other = conn.cursor()
    conn.close()
    conn.close()  # twice is no error
    for use in (conn.cursor, conn.commit, lambda: other.execute("SELECT 1")):
        with pytest.raises(dbapi.InterfaceError):
            use()
