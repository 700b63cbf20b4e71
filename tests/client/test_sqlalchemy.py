"""The SQLAlchemy dialect ``tessera://`` (``tessera.dialect``) against the live server: engine
URLs, reflection from Tessera's catalog (schemas = databases, tables, views, columns with
types and comments, primary keys; grants respected; temporary objects left out),
``pandas.read_sql`` and ``DataFrame.to_sql``. Fixtures: tests/client/conftest.py."""

from __future__ import annotations

import threading
import time
import tomllib
from collections.abc import Iterator
from datetime import timedelta
from decimal import Decimal
from importlib.metadata import entry_points
from typing import Any
from urllib.parse import quote, urlsplit

import pandas as pd  # type: ignore[import-untyped]
import pytest
import sqlalchemy as sa
from django.contrib.auth.models import User
from django.utils import timezone
from sqlalchemy.dialects import registry

from accounts.models import ApiToken
from accounts.tokens import token_create
from catalog.models import Database, Table
from jobs.models import Job
from tests.client.conftest import PASSWORD
from tests.grants_support import share
from tests.live_client import ROOT, tessera  # noqa: F401 - puts client/src on the path
from tests.waiting import wait_until

from tessera import dbapi  # isort: skip

pytestmark = [pytest.mark.slow, pytest.mark.spark]

# The shared environment may hold an older editable install of the client, made before the
# entry point existed; the dialect is then registered here the way the entry point does.
if not any(e.name == "tessera" for e in entry_points(group="sqlalchemy.dialects")):
    registry.register("tessera", "tessera.dialect", "TesseraDialect")


def engine_url(server: str, user: str = "alice", password: str = PASSWORD, path: str = "") -> str:
    where = urlsplit(server)
    return f"tessera://{quote(user)}:{quote(password, safe='')}@{where.netloc}{path}"


@pytest.fixture
def engine(shop: str) -> Iterator[sa.Engine]:
    """alice's engine on shop.sales, with a view, a keyed table with comments, and a
    temporary view in one of its sessions."""
    made = sa.create_engine(engine_url(shop, path="/shop/sales"))
    with made.connect() as connection:
        for sql in (
            "CREATE TABLE keyed (id BIGINT NOT NULL COMMENT 'the key', name STRING, "
            "at TIMESTAMP, day DATE, PRIMARY KEY (id) NOT ENFORCED) COMMENT 'keyed rows'",
            "CREATE VIEW big_orders AS SELECT id, qty FROM orders WHERE qty > 1",
            "CREATE DATABASE other",
            "CREATE TEMPORARY VIEW session_only AS SELECT 1 AS one",
        ):
            connection.exec_driver_sql(sql)
    yield made
    made.dispose()


def test_the_entry_point_is_declared_by_the_sqlalchemy_extra() -> None:
    project = tomllib.loads((ROOT / "client" / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["sqlalchemy.dialects"]["tessera"] == (
        "tessera.dialect:TesseraDialect"
    )
    assert any(
        r.lower().startswith("sqlalchemy") for r in project["optional-dependencies"]["sqlalchemy"]
    )
    url = sa.engine.make_url("tessera://token:abc@example.org:8443/shop/sales?protocol=https")
    dialect = sa.create_engine(url).dialect
    assert dialect.name == "tessera" and dialect.paramstyle == "named"
    assert dialect.create_connect_args(url) == (
        [],
        {"url": "https://example.org:8443", "token": "abc", "catalog": "shop", "database": "sales"},
    )


def test_reflection_reads_the_catalog(engine: sa.Engine) -> None:
    inspector = sa.inspect(engine)
    assert {"default", "other", "sales"} <= set(inspector.get_schema_names())
    assert inspector.default_schema_name == "sales"
    assert inspector.get_table_names() == ["customers", "keyed", "orders"]
    assert inspector.get_view_names() == ["big_orders"]
    assert inspector.get_table_names(schema="other") == []
    # Temporary objects belong to a session: never reflected.
    assert "session_only" not in inspector.get_view_names()
    assert inspector.get_temp_view_names() == []
    columns = {c["name"]: c for c in inspector.get_columns("keyed")}
    assert list(columns) == ["id", "name", "at", "day"]
    assert isinstance(columns["id"]["type"], sa.BigInteger) and not columns["id"]["nullable"]
    assert columns["id"]["comment"] == "the key" and columns["name"]["comment"] is None
    assert isinstance(columns["name"]["type"], sa.String) and columns["name"]["nullable"]
    assert isinstance(columns["at"]["type"], sa.DateTime) and columns["at"]["type"].timezone
    assert isinstance(columns["day"]["type"], sa.Date)
    price = {c["name"]: c for c in inspector.get_columns("orders", schema="sales")}["price"]
    assert isinstance(price["type"], sa.Numeric) and (
        price["type"].precision,
        price["type"].scale,
    ) == (10, 2)
    assert inspector.get_pk_constraint("keyed")["constrained_columns"] == ["id"]
    assert inspector.get_pk_constraint("orders")["constrained_columns"] == []
    assert inspector.get_table_comment("keyed") == {"text": "keyed rows"}
    assert inspector.get_foreign_keys("keyed") == [] and inspector.get_indexes("keyed") == []
    assert [c["name"] for c in inspector.get_columns("big_orders")] == ["id", "qty"]
    assert "orders" in inspector.get_view_definition("big_orders")
    assert inspector.has_table("keyed") and not inspector.has_table("session_only")
    with pytest.raises(sa.exc.NoSuchTableError):
        inspector.get_columns("no_such_table")
    # A Table reflected whole, and a query built from it.
    keyed = sa.Table("orders", sa.MetaData(), autoload_with=engine)
    query = sa.select(keyed.c.id).where(keyed.c.qty > sa.bindparam("q")).order_by(keyed.c.id)
    with engine.connect() as connection:
        assert connection.execute(query, {"q": 1}).scalars().all() == [1, 3]
        assert connection.execute(sa.select(keyed.c.id).limit(1).offset(3)).scalar() == 4


def test_reflection_respects_grants(shop: str, engine: sa.Engine, bob: User) -> None:
    sales = Database.objects.get(catalog__name_key="shop", name_key="sales")
    share(sales.catalog, ("USE",), user=bob)
    share(sales, ("USE",), user=bob)
    share(Table.objects.get(database=sales, name_key="orders"), ("SELECT",), user=bob)
    bobs = sa.create_engine(engine_url(shop, user="bob", path="/shop/sales"))
    try:
        inspector = sa.inspect(bobs)
        assert inspector.get_table_names() == ["orders"]
        assert inspector.get_view_names() == []
        assert not inspector.has_table("no_such_table")
        # A table of the database bob may not use: its name is taken, its columns refused.
        assert inspector.has_table("customers")
        with pytest.raises(dbapi.ProgrammingError) as denied:
            inspector.get_columns("customers")
        assert denied.value.code == "PERMISSION_DENIED"
        assert [c["name"] for c in inspector.get_columns("orders")] == [
            "id",
            "customer",
            "price",
            "qty",
        ]
        with bobs.connect() as connection, pytest.raises(sa.exc.ProgrammingError) as caught:
            connection.exec_driver_sql("SELECT * FROM customers")
        assert isinstance(caught.value.orig, dbapi.ProgrammingError)
    finally:
        bobs.dispose()


def test_pandas_read_sql_and_to_sql(engine: sa.Engine) -> None:
    frame = pd.read_sql("SELECT id, price FROM orders ORDER BY id", engine)
    assert list(frame["id"]) == [1, 2, 3, 4]
    assert list(frame["price"]) == [2.5, 10.0, 1.25, 99.99]  # pandas' coerce_float
    exact = pd.read_sql("SELECT price FROM orders ORDER BY id", engine, coerce_float=False)
    assert list(exact["price"]) == [
        Decimal("2.50"),
        Decimal("10.00"),
        Decimal("1.25"),
        Decimal("99.99"),
    ]
    with engine.connect() as connection:
        few = pd.read_sql(
            sa.text("SELECT id FROM orders WHERE qty >= :q ORDER BY id"),
            connection,
            params={"q": 4},
        )
    assert list(few["id"]) == [1, 3]
    table = pd.read_sql_table("customers", engine, schema="sales")
    assert sorted(table["name"]) == ["Ada", "Bo", "Cy"]
    out = pd.DataFrame(
        {
            "n": [1, 2, 3],
            "x": [0.5, None, 2.25],
            "label": ["a", "b'`c", None],
            "ok": [True, False, True],
            "at": pd.to_datetime(
                ["2024-01-01 10:00:00", "2024-01-02 00:00:00", "2024-01-03 23:59:59"]
            ),
        }
    )
    written = out.to_sql("frame_out", engine, schema="sales", index=False)
    assert written == 3
    back = pd.read_sql("SELECT * FROM frame_out ORDER BY n", engine)
    assert list(back["n"]) == [1, 2, 3] and list(back["label"])[:2] == ["a", "b'`c"]
    assert back["label"].isna().tolist() == [False, False, True]
    assert back["x"].isna().tolist() == [False, True, False]
    assert list(back["ok"]) == [True, False, True]
    assert list(back["at"]) == list(out["at"])
    # Again with the index (Spark has no indexes: SQLAlchemy's CREATE INDEX is left out),
    # replacing the table, then appending to it.
    out.to_sql("frame_out", engine, schema="sales", if_exists="replace")
    out.to_sql("frame_out", engine, schema="sales", if_exists="append")
    again = pd.read_sql("SELECT `index`, n FROM frame_out ORDER BY n, `index`", engine)
    assert len(again) == 6 and sorted(set(again["index"])) == [0, 1, 2]
    columns = [c["name"] for c in sa.inspect(engine).get_columns("frame_out")]
    assert columns == ["index", "n", "x", "label", "ok", "at"]


def test_a_temporary_view_shadows_a_table_in_its_connection_only(engine: sa.Engine) -> None:
    """Each SQLAlchemy connection is its own Tessera session (FLIP-64's shadowing)."""
    with engine.connect() as mine:
        mine.exec_driver_sql("CREATE TEMPORARY VIEW orders AS SELECT 42 AS id")
        assert mine.exec_driver_sql("SELECT id FROM orders").all() == [(42,)]
        with engine.connect() as other:
            assert sorted(r[0] for r in other.exec_driver_sql("SELECT id FROM orders")) == [
                1,
                2,
                3,
                4,
            ]
        mine.exec_driver_sql("DROP TEMPORARY VIEW orders")
        assert sorted(r[0] for r in mine.exec_driver_sql("SELECT id FROM orders")) == [1, 2, 3, 4]


def test_a_long_query_is_canceled_from_another_thread(engine: sa.Engine) -> None:
    """Superset's "stop": the raw cursor's cancel() while execute waits in another thread."""
    outcome: dict[str, Any] = {}
    with engine.connect() as connection:
        cursor = connection.connection.cursor()

        def run() -> None:
            try:
                cursor.execute(
                    "SELECT count(*) AS n FROM range(0, 100000000) AS a "
                    "CROSS JOIN range(0, 100000) AS b"
                )
                outcome["rows"] = cursor.fetchall()
            except dbapi.Error as exc:
                outcome["error"] = exc

        worker = threading.Thread(target=run)
        started = time.monotonic()
        worker.start()
        # Handshake: the job exists and runs before cancel is sent.
        job = wait_until(
            lambda: (
                cursor.job_id and Job.objects.filter(pk=cursor.job_id, status="RUNNING").first()
            ),
            120,
            0.2,
            "the long query to run",
        )
        cursor.cancel()
        worker.join(120)
        assert not worker.is_alive()
        error = outcome.get("error")
        assert isinstance(error, dbapi.OperationalError) and error.code == "CANCELED", outcome
        assert time.monotonic() - started < 120
        job.refresh_from_db()
        assert job.status == "CANCELED"


def test_an_expired_token_is_an_operational_error(shop: str, alice: User) -> None:
    _, key = token_create(user=alice, name="superset")
    made = sa.create_engine(engine_url(shop, user="token", password=key, path="/shop/sales"))
    try:
        with made.connect() as connection:
            assert connection.exec_driver_sql("SELECT 1 AS one").scalar() == 1
        made.dispose()
        ApiToken.objects.filter(user=alice).update(expires=timezone.now() - timedelta(seconds=1))
        with pytest.raises(sa.exc.OperationalError) as caught:
            made.connect()
        assert isinstance(caught.value.orig, dbapi.OperationalError)
        assert caught.value.orig.code == "TOKEN_EXPIRED"
    finally:
        made.dispose()
    bad = sa.create_engine(engine_url(shop, password="wrong", path="/shop/sales"))
    with pytest.raises(sa.exc.DBAPIError) as refused:
        bad.connect()
    assert isinstance(refused.value.orig, dbapi.DatabaseError)
    bad.dispose()


def test_huge_input_is_refused_cleanly(engine: sa.Engine, settings: Any) -> None:
    with engine.connect() as connection:
        with pytest.raises(sa.exc.ProgrammingError) as caught:
            connection.exec_driver_sql("SELECT '" + "x" * settings.TESSERA_SQL_MAX_CHARS + "'")
        assert caught.value.orig.code == "STATEMENT_TOO_LARGE"  # type: ignore[union-attr]
        assert connection.exec_driver_sql("SELECT 2 AS two").scalar() == 2
