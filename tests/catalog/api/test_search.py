"""GET /search: tables, views, functions and columns whose name contains the text."""

from __future__ import annotations

import pytest

from tests.conftest import API, assert_error, simple_schema

pytestmark = pytest.mark.django_db

SEARCH = f"{API}/search"


@pytest.fixture
def objects(make, analyzer):
    make.catalog("demo")
    make.database("demo", "shop")
    make.table(
        "demo",
        "shop",
        "Orders",
        schema=simple_schema("Order_ID BIGINT", "amount DECIMAL(10, 2)"),
        comment="all orders",
    )
    make.table("demo", "shop", "customers", schema=simple_schema("id BIGINT", "last_order DATE"))
    make.view(
        "demo",
        "shop",
        "recent_orders",
        query="SELECT CAST(1 AS BIGINT) AS order_id",
        schema={"columns": [{"name": "order_id", "data_type": "BIGINT"}]},
    )
    make.function("demo", "default", "ORDER_TOTAL", comment="sums")
    make.function("demo", "default", "upper")


def test_search_finds_every_kind_case_insensitively(alice_api, objects):
    response = alice_api.get(f"{SEARCH}?q=ORDER")
    assert response.status_code == 200
    body = response.json()
    assert body["next_page_token"] is None
    assert body["items"] == [
        {"kind": "table", "catalog": "demo", "database": "shop", "name": "Orders",
         "comment": "all orders"},
        {"kind": "view", "catalog": "demo", "database": "shop", "name": "recent_orders",
         "comment": ""},
        {"kind": "function", "catalog": "demo", "database": "default", "name": "ORDER_TOTAL",
         "comment": "sums"},
        {"kind": "column", "catalog": "demo", "database": "shop", "name": "customers",
         "column": "last_order", "data_type": "DATE", "object_kind": "table"},
        {"kind": "column", "catalog": "demo", "database": "shop", "name": "Orders",
         "column": "Order_ID", "data_type": "BIGINT", "object_kind": "table"},
        {"kind": "column", "catalog": "demo", "database": "shop", "name": "recent_orders",
         "column": "order_id", "data_type": "BIGINT", "object_kind": "view"},
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("table", [("table", "Orders", None)]),
        ("view", [("view", "recent_orders", None)]),
        ("function", [("function", "ORDER_TOTAL", None)]),
        (
            "column",
            [
                ("column", "customers", "last_order"),
                ("column", "Orders", "Order_ID"),
                ("column", "recent_orders", "order_id"),
            ],
        ),
    ],
)
def test_kind_filter(alice_api, objects, kind, expected):
    items = alice_api.get(f"{SEARCH}?q=order&kind={kind}").json()["items"]
    assert [(i["kind"], i["name"], i.get("column")) for i in items] == expected


def test_search_is_by_substring_and_wildcards_are_literal(alice_api, objects):
    items = alice_api.get(f"{SEARCH}?q=der_&kind=column").json()["items"]
    assert [i["column"] for i in items] == ["Order_ID", "order_id"]  # not last_order
    items = alice_api.get(f"{SEARCH}?q=r_t").json()["items"]
    assert [i["name"] for i in items] == ["ORDER_TOTAL"]
    assert alice_api.get(f"{SEARCH}?q=%25").json()["items"] == []  # '%' is not a wildcard
    assert alice_api.get(f"{SEARCH}?q=_").json()["items"] != []
    assert alice_api.get(f"{SEARCH}?q=zzz").json() == {"items": [], "next_page_token": None}


def test_search_text_is_trimmed(alice_api, objects):
    items = alice_api.get(f"{SEARCH}?q=%20upper%20").json()["items"]
    assert [(i["kind"], i["name"]) for i in items] == [("function", "upper")]


def test_search_sees_changes(alice_api, make, objects):
    alice_api.delete(f"{API}/catalogs/demo/databases/shop/tables/orders")
    items = alice_api.get(f"{SEARCH}?q=order").json()["items"]
    assert "Orders" not in [i["name"] for i in items]
    alice_api.patch(
        f"{API}/catalogs/demo/databases/shop/tables/customers",
        {"schema": simple_schema("id BIGINT", "first_purchase DATE")},
    )
    columns = alice_api.get(f"{SEARCH}?q=purchase&kind=column").json()["items"]
    assert [(c["name"], c["column"]) for c in columns] == [("customers", "first_purchase")]


def test_unknown_kind_is_refused(alice_api, objects):
    error = assert_error(
        alice_api.get(f"{SEARCH}?q=order&kind=tables"),
        400,
        "VALIDATION_ERROR",
        "Unknown kind 'tables'",
        "table, view, function, column",
    )
    assert error["details"] == {"field": "kind"}


@pytest.mark.parametrize("query", ["", "?q=", "?q=%20%20", "?kind=table"])
def test_empty_search_text_is_refused(alice_api, objects, query):
    error = assert_error(alice_api.get(f"{SEARCH}{query}"), 400, "VALIDATION_ERROR", "?q=")
    assert error["details"] == {"field": "q"}


def test_search_with_nul_finds_nothing(alice_api, objects):
    response = alice_api.get(f"{SEARCH}?q=or%00der")
    assert response.status_code == 200
    assert response.json() == {"items": [], "next_page_token": None}


def test_search_pages_across_kinds(alice_api, objects):
    expected = alice_api.get(f"{SEARCH}?q=o").json()["items"]
    assert len(expected) >= 8  # tables, a view, functions and columns
    assert {i["kind"] for i in expected} == {"table", "view", "function", "column"}
    for size in (1, 2, 3):
        seen, token, pages = [], None, 0
        while True:
            url = f"{SEARCH}?q=o&page_size={size}" + (f"&page_token={token}" if token else "")
            page = alice_api.get(url).json()
            assert len(page["items"]) <= size
            seen.extend(page["items"])
            pages += 1
            token = page["next_page_token"]
            if token is None:
                break
        assert seen == expected
        assert pages == -(-len(expected) // size)


def test_search_token_of_another_list_is_refused(alice_api, objects, make):
    for name in ("a", "b"):
        make.catalog(name)
    token = alice_api.get(f"{API}/catalogs?page_size=1").json()["next_page_token"]
    assert token
    assert_error(
        alice_api.get(f"{SEARCH}?q=o&page_token={token}"), 400, "VALIDATION_ERROR", "page_token"
    )


@pytest.mark.parametrize("fragment", ["ab", "abc_"])  # an in-order walk, and trigrams
def test_column_pages_skip_names_no_column_uses_any_more(alice_api, make, fragment):
    # Names of dropped tables stay in the distinct-name list: pages must step over them.
    make.catalog("c")
    make.database("c", "d")
    for n in range(6):
        make.table("c", "d", f"t{n}", simple_schema(f"abc_{n} BIGINT"))
    for n in (1, 2, 4):
        assert alice_api.delete(f"{API}/catalogs/c/databases/d/tables/t{n}").status_code == 204
    seen, token = [], None
    while True:
        url = f"{SEARCH}?q={fragment}&kind=column&page_size=1"
        body = alice_api.get(url + (f"&page_token={token}" if token else "")).json()
        seen += [i["column"] for i in body["items"]]
        token = body["next_page_token"]
        if not token:
            break
    assert seen == ["abc_0", "abc_3", "abc_5"]
