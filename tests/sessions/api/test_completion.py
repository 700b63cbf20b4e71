"""GET /complete: names that complete a partly typed SQL path, for the editor."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog.models import Catalog, Database, Table
from core.errors import CoreError
from jobs.models import Session, TemporaryObject
from sessions.names import split_path
from tests.conftest import API, assert_error

pytestmark = pytest.mark.django_db


def complete(client, path: str, session: str | None = None, **params: Any) -> list[dict[str, Any]]:
    query = f"path={quote(path)}"
    if session:
        query += f"&session={session}"
    query += "".join(f"&{key}={value}" for key, value in params.items())
    response = client.get(f"{API}/complete?{query}")
    assert response.status_code == 200, response.content
    items: list[dict[str, Any]] = response.json()["items"]
    for item in items:
        assert set(item) == {"label", "insert", "kind", "detail", "identifier", "staged"}, item
    return items


def labels(items: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(item["kind"], item["label"]) for item in items]


def open_session(client, **body: Any) -> str:
    response = client.post(f"{API}/sessions", body)
    assert response.status_code == 201, response.content
    return str(response.json()["id"])


def temporary(session_id: str, kind: str, *parts: str, system: bool = False) -> None:
    catalog, database, name = ("", "", parts[0]) if system else parts
    TemporaryObject(
        session=Session.objects.get(pk=session_id),
        kind=kind,
        system=system,
        catalog=catalog,
        database=database,
        name=name,
    ).save()


@pytest.fixture
def demo(make, analyzer):
    """demo.default: orders, orders_2023 (view), order_total (function); demo.sales; shop."""
    make.catalog("demo")
    make.database("demo", "sales")
    make.table("demo", "default", "orders")
    make.view("demo", "default", "orders_2023")
    make.function("demo", "default", "order_total")
    make.table("demo", "default", "customers")
    make.table("demo", "sales", "Orders_EU")
    make.catalog("Shop")
    make.database("Shop", "ordering")


def test_no_session_completes_catalogs_only(alice_api, demo):
    assert labels(complete(alice_api, "")) == [("catalog", "demo"), ("catalog", "Shop")]
    assert labels(complete(alice_api, "s")) == [("catalog", "Shop")]
    assert labels(complete(alice_api, "S")) == [("catalog", "Shop")]
    shop = complete(alice_api, "sh")[0]
    assert shop == {
        "label": "Shop",
        "insert": "Shop",
        "kind": "catalog",
        "detail": "",
        "identifier": ["Shop"],
        "staged": False,
    }


def test_no_parts_in_a_session(alice_api, demo):
    session = open_session(alice_api, current_catalog="demo")  # database: default
    assert labels(complete(alice_api, "ord", session)) == [
        ("table", "orders"),
        ("view", "orders_2023"),
        ("function", "order_total"),
    ]
    everything = labels(complete(alice_api, "", session))
    assert everything == [
        ("table", "customers"),
        ("table", "orders"),
        ("view", "orders_2023"),
        ("function", "order_total"),
        ("database", "default"),
        ("database", "sales"),
        ("catalog", "demo"),
        ("catalog", "Shop"),
    ]
    orders = complete(alice_api, "ORDERS", session)[0]
    assert orders["detail"] == "demo.default"
    assert orders["identifier"] == ["demo", "default", "orders"]
    assert orders["insert"] == "orders"


def test_one_part_is_a_database_of_the_current_catalog_or_a_catalog(alice_api, demo):
    session = open_session(alice_api, current_catalog="demo")
    assert labels(complete(alice_api, "sales.", session)) == [("table", "Orders_EU")]
    assert labels(complete(alice_api, "sales.o", session)) == [("table", "Orders_EU")]
    assert labels(complete(alice_api, "default.o", session)) == [
        ("table", "orders"),
        ("view", "orders_2023"),
        ("function", "order_total"),
    ]
    # A catalog's databases.
    assert labels(complete(alice_api, "shop.", session)) == [
        ("database", "default"),
        ("database", "ordering"),
    ]
    demo_dbs = complete(alice_api, "DEMO.", session)
    assert labels(demo_dbs) == [("database", "default"), ("database", "sales")]
    assert demo_dbs[1]["identifier"] == ["demo", "sales"]
    assert demo_dbs[1]["detail"] == "demo"
    # Without a session, the catalog's databases only.
    assert labels(complete(alice_api, "demo.s")) == [("database", "sales")]


def test_two_parts_are_a_database(alice_api, demo):
    assert labels(complete(alice_api, "demo.sales.")) == [("table", "Orders_EU")]
    assert labels(complete(alice_api, "demo.default.c")) == [("table", "customers")]
    assert labels(complete(alice_api, " demo . default . ORD")) == [
        ("table", "orders"),
        ("view", "orders_2023"),
        ("function", "order_total"),
    ]
    assert complete(alice_api, "demo.nowhere.") == []
    assert complete(alice_api, "nowhere.default.") == []


def test_quoted_names(alice_api, make):
    make.catalog("my cat")
    make.database("my cat", "my.db")
    make.table("my cat", "my.db", "a`b")
    make.table("my cat", "my.db", "select")
    make.table("my cat", "my.db", "1st")
    make.table("my cat", "my.db", "plain_2")
    make.table("my cat", "my.db", "café")
    items = complete(alice_api, "`my cat`.`my.db`.")
    by_label = {item["label"]: item for item in items}
    assert {label: item["insert"] for label, item in by_label.items()} == {
        "1st": "`1st`",
        "a`b": "`a``b`",
        "café": "`café`",
        "plain_2": "plain_2",
        "select": "`select`",
    }
    assert by_label["a`b"]["detail"] == "`my cat`.`my.db`"
    assert by_label["a`b"]["identifier"] == ["my cat", "my.db", "a`b"]
    # The last part may start with a backtick, with doubled backticks inside.
    assert labels(complete(alice_api, "`my cat`.`my.db`.`a``")) == [("table", "a`b")]
    assert labels(complete(alice_api, "`my cat`.`my.db`.`a``b`")) == [("table", "a`b")]
    assert labels(complete(alice_api, "`my cat`.`my.")) == [("database", "my.db")]
    assert complete(alice_api, "`my")[0]["insert"] == "`my cat`"
    assert labels(complete(alice_api, "`my cat`.")) == [
        ("database", "default"),
        ("database", "my.db"),
    ]


def test_temporaries_come_first(alice_api, demo):
    session = open_session(alice_api, current_catalog="demo")
    temporary(session, "table", "demo", "default", "orders_tmp")
    temporary(session, "view", "demo", "default", "orders")  # shadows the permanent table
    temporary(session, "function", "demo", "default", "order_fn")
    temporary(session, "function", "ord_sys", system=True)
    temporary(session, "table", "demo", "sales", "orders_sales_tmp")
    temporary(session, "table", "Shop", "ordering", "orders_shop_tmp")
    items = complete(alice_api, "ord", session)
    assert labels(items) == [
        ("temporary_function", "ord_sys"),
        ("temporary_function", "order_fn"),
        ("temporary_view", "orders"),
        ("temporary_table", "orders_tmp"),
        ("table", "orders"),
        ("view", "orders_2023"),
        ("function", "order_total"),
    ]
    assert items[0]["identifier"] == ["ord_sys"]
    assert items[0]["detail"] == ""
    assert items[3]["identifier"] == ["demo", "default", "orders_tmp"]
    assert items[3]["detail"] == "demo.default"
    # One part: temporaries of that database in the current catalog.
    assert labels(complete(alice_api, "sales.", session))[0] == (
        "temporary_table",
        "orders_sales_tmp",
    )
    # Two parts.
    assert labels(complete(alice_api, "shop.ordering.", session)) == [
        ("temporary_table", "orders_shop_tmp")
    ]
    # Without the session, no temporaries.
    assert all(
        not item["kind"].startswith("temporary") for item in complete(alice_api, "demo.default.")
    )


def test_staged_tables_are_marked(alice_api, demo):
    Table.objects.filter(name_key="customers").update(status=Table.STATUS_STAGED)
    items = {item["label"]: item for item in complete(alice_api, "demo.default.")}
    assert items["customers"]["staged"] is True
    assert items["orders"]["staged"] is False


def test_limit(alice_api, demo):
    session = open_session(alice_api, current_catalog="demo")
    assert len(complete(alice_api, "", session, limit=3)) == 3
    assert labels(complete(alice_api, "", session, limit=1)) == [("table", "customers")]
    assert len(complete(alice_api, "", session, limit=100)) == 8
    for bad in ("0", "101", "x", "-1"):
        error = assert_error(
            alice_api.get(f"{API}/complete?path=&limit={bad}"), 400, "VALIDATION_ERROR"
        )
        assert error["details"]["field"] == "limit"


def test_wildcards_are_literal(alice_api, make):
    make.catalog("c_1")
    make.catalog("cx1")
    assert labels(complete(alice_api, "c_")) == [("catalog", "c_1")]
    assert complete(alice_api, "%") == []


def test_sessions_of_others_are_404(alice_api, bob_api, demo):
    session = open_session(bob_api, current_catalog="demo")
    assert_error(alice_api.get(f"{API}/complete?path=&session={session}"), 404, "NOT_FOUND")
    assert_error(alice_api.get(f"{API}/complete?path=&session=nope"), 404, "NOT_FOUND")


def test_malformed_paths_are_400(alice_api):
    for path in ("a..b", "a.b.c.", "`open.x"):
        response = alice_api.get(f"{API}/complete?path={quote(path)}")
        if path == "`open.x":  # a dot inside an open quote is part of the prefix
            assert response.status_code == 200
            continue
        error = assert_error(response, 400, "VALIDATION_ERROR")
        assert error["details"]["field"] == "path"


def test_anonymous_is_401(anon_api):
    assert_error(anon_api.get(f"{API}/complete?path="), 401, "NOT_AUTHENTICATED")


def test_split_path():
    assert split_path("") == ((), "")
    assert split_path("ab") == ((), "ab")
    assert split_path("a.") == (("a",), "")
    assert split_path("a.b.c") == (("a", "b"), "c")
    assert split_path("`x.y`.`z.") == (("x.y",), "z.")
    assert split_path("`a``b`.`c``") == (("a`b",), "c`")
    with pytest.raises(CoreError):
        split_path("a.b.c.d")


@pytest.fixture
def big_catalog(alice):
    """One database of 2,000 tables and 500 functions, and 300 databases, made in bulk."""
    from catalog.models import Function

    catalog = Catalog(name="big", owner=alice, default_database="default")
    catalog.save()
    databases = [
        Database(catalog=catalog, name=f"db{i:04d}", name_key=f"db{i:04d}") for i in range(300)
    ]
    Database.objects.bulk_create(databases)
    home = Database.objects.get(catalog=catalog, name_key="db0000")
    Table.objects.bulk_create(
        Table(database=home, name=f"T{i:05d}", name_key=f"t{i:05d}") for i in range(2000)
    )
    Function.objects.bulk_create(
        Function(
            database=home,
            name=f"t_fn{i:04d}",
            name_key=f"t_fn{i:04d}",
            language="python",
            implementation="m.f",
        )
        for i in range(500)
    )
    return catalog


def test_a_constant_number_of_queries_whatever_the_catalog_size(alice_api, big_catalog):
    session = open_session(alice_api, current_catalog="big", current_database="db0000")
    temporary(session, "table", "big", "db0000", "t_tmp")
    # Authentication (1), what the user holds (1), the session (1), the database and the
    # catalog whose names complete (one each; the current catalog comes with its database),
    # then one query per kind: temporaries, relations, functions, databases, catalogs.
    for path, limit in (("", 100), ("t", 100), ("t0", 5), ("db", 100), ("big.db0000.t", 100)):
        with CaptureQueriesContext(connection) as queries:
            items = complete(alice_api, path, session, limit=limit)
        assert len(items) == limit, (path, len(items))
        assert len(queries) <= 9, (path, [q["sql"] for q in queries])
    first = complete(alice_api, "t", session, limit=3)
    assert labels(first) == [("temporary_table", "t_tmp"), ("table", "T00000"), ("table", "T00001")]


@pytest.mark.parametrize("prefix", ["t0199", ""])
def test_prefix_search_reads_the_prefix_index_in_name_order(alice_api, big_catalog, prefix):
    """The relations query is a range of the (database, name_key COLLATE "C") index, read
    in name order: no sort of a database's tables, whatever their number."""
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL plans only")
    session = open_session(alice_api, current_catalog="big", current_database="db0000")
    with CaptureQueriesContext(connection) as queries:
        complete(alice_api, prefix, session, limit=10)
    relations = next(q["sql"] for q in queries if "catalog_table" in q["sql"])
    with connection.cursor() as cursor:
        # No ANALYZE here: its row counts outlive the test's rollback and would skew the plans
        # of later tests. On these few rows, forbid the alternatives to show what is possible.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        try:
            cursor.execute("EXPLAIN " + relations)
            plan = "\n".join(row[0] for row in cursor.fetchall())
        finally:
            cursor.execute("RESET enable_seqscan; RESET enable_sort; RESET enable_bitmapscan")
    assert "catalog_table_prefix_idx" in plan, plan
    assert "Sort" not in plan, plan
    if prefix:
        assert "'t0199'::text" in plan and "'t019:'::text" in plan, plan  # a range, not a scan


def test_completion_is_in_the_openapi_document(anon_api):
    paths = anon_api.get(f"{API}/schema?format=json").json()["paths"]
    params = {p["name"] for p in paths["/api/v1/complete"]["get"]["parameters"]}
    assert {"path", "session", "limit"} <= params
