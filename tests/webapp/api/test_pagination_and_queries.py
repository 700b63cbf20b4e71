"""Page-token pagination on every list endpoint, and a constant number of SQL queries per
list request whatever the page size (no N+1)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog import services
from catalog.models import Catalog, Column, ColumnName, Database, Function, Table
from core.schema import Schema
from tests.conftest import API, assert_error
from tests.schemas import RICH_SCHEMA

pytestmark = pytest.mark.django_db

N = 250  # more than the largest page size compared below


def _name(prefix: str, i: int) -> str:
    # Alternate the case so that the order must be case-insensitive.
    return f"{prefix.upper() if i % 2 else prefix}{i:04d}"


def _named(model: type, prefix: str, n: int = N, **fields: Any) -> list[Any]:
    """Unsaved rows with the name_key that Named.save() would give them (bulk_create skips save)."""
    rows = []
    for i in range(n):
        name = _name(prefix, i)
        rows.append(model(name=name, name_key=name.lower(), **fields))
    return rows


@pytest.fixture
def big(alice, make):
    """N catalogs, N databases, and N tables, views and functions in one database."""
    make.catalog("big")
    catalog = Catalog.objects.get(name="big")
    database = Database.objects.get(catalog=catalog, name="default")
    schema = Schema.from_dict(RICH_SCHEMA)
    resolved = services.resolve_schema(schema).to_dict()
    Catalog.objects.bulk_create(_named(Catalog, "cat", owner=alice))
    Database.objects.bulk_create(_named(Database, "db", catalog=catalog, owner=alice))
    tables = Table.objects.bulk_create(
        _named(
            Table,
            "tbl",
            database=database,
            kind=Table.KIND_TABLE,
            options={"format": "parquet"},
            schema=schema.to_dict(),
            resolved_schema=resolved,
            created_by=alice,
        )
    )
    views = Table.objects.bulk_create(
        _named(Table, "vw", database=database, kind=Table.KIND_VIEW, query="SELECT 1")
    )
    Column.objects.bulk_create(
        Column(table=t, position=0, name=f"col_{t.name}", name_key=f"col_{t.name_key}", kind="p")
        for t in (*tables, *views)
    )
    # What catalog.services keeps beside the columns (as the fill command does too).
    ColumnName.objects.bulk_create(
        ColumnName(name_key=f"col_{t.name_key}") for t in (*tables, *views)
    )
    Function.objects.bulk_create(
        _named(Function, "fn", database=database, language="python", implementation="a.b")
    )
    return catalog


LISTS = {
    "catalogs": (f"{API}/catalogs", "cat"),
    "databases": (f"{API}/catalogs/big/databases", "db"),
    "tables": (f"{API}/catalogs/big/databases/default/tables", "tbl"),
    "views": (f"{API}/catalogs/big/databases/default/views", "vw"),
    "functions": (f"{API}/catalogs/big/databases/default/functions", "fn"),
}


def _join(url: str, **params: Any) -> str:
    query = "&".join(f"{k}={v}" for k, v in params.items() if v is not None)
    return f"{url}{'&' if '?' in url else '?'}{query}" if query else url


def walk(client, url: str, page_size: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    token = None
    while True:
        response = client.get(_join(url, page_size=page_size, page_token=token))
        assert response.status_code == 200, response.content
        page = response.json()
        assert set(page) == {"items", "next_page_token"}
        assert len(page["items"]) <= page_size
        items.extend(page["items"])
        token = page["next_page_token"]
        if token is None:
            return items
        assert len(page["items"]) == page_size


def queries(client, url: str) -> tuple[int, dict[str, Any]]:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200, response.content
    return len(captured.captured_queries), response.json()


# --- pagination ------------------------------------------------------------------------------


def test_default_page_size_is_50_and_max_is_1000(alice_api, big):
    page = alice_api.get(f"{API}/catalogs").json()
    assert len(page["items"]) == 50
    assert page["next_page_token"]
    everything = alice_api.get(f"{API}/catalogs?page_size=1000").json()
    assert len(everything["items"]) == N + 1  # and "big"
    assert everything["next_page_token"] is None


@pytest.mark.parametrize("size", ["0", "1001", "abc", "-1", "1.5", "%20"])
@pytest.mark.parametrize("endpoint", [*LISTS, "search"])
def test_bad_page_size_is_refused(alice_api, make, endpoint, size):
    make.catalog("big")
    url = f"{API}/search?q=x" if endpoint == "search" else LISTS[endpoint][0]
    error = assert_error(
        alice_api.get(_join(url, page_size=size)), 400, "VALIDATION_ERROR", "page_size", "1000"
    )
    assert error["details"] == {"field": "page_size"}


@pytest.mark.parametrize("endpoint", list(LISTS))
def test_walking_pages_yields_every_item_once_in_name_order(alice_api, big, endpoint):
    url, prefix = LISTS[endpoint]
    items = walk(alice_api, url, page_size=37)
    names = [item["name"] for item in items]
    expected = sorted(
        [_name(prefix, i) for i in range(N)]
        + {"catalogs": ["big"], "databases": ["default"]}.get(endpoint, []),
        key=str.lower,
    )
    assert names == expected
    assert len(set(names)) == len(names)


def test_pages_of_one(alice_api, make):
    for name in ("b", "A", "c"):
        make.catalog(name)
    assert [c["name"] for c in walk(alice_api, f"{API}/catalogs", 1)] == ["A", "b", "c"]
    exact = alice_api.get(f"{API}/catalogs?page_size=3").json()
    assert exact["next_page_token"] is None  # no empty last page


def _token(value: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


GARBAGE_TOKENS = [
    "garbage!",
    "%25%25%25",
    "abc",
    _token(["not", "a", "name"]),
    _token({"after": "x"}),
    _token(42),
    _token("a\u0000b"),
]


@pytest.mark.parametrize("token", GARBAGE_TOKENS)
@pytest.mark.parametrize("endpoint", [*LISTS, "search"])
def test_garbage_page_token_is_refused(alice_api, make, endpoint, token):
    make.catalog("big")
    url = f"{API}/search?q=x" if endpoint == "search" else LISTS[endpoint][0]
    error = assert_error(
        alice_api.get(_join(url, page_token=token)), 400, "VALIDATION_ERROR", "page_token"
    )
    assert error["details"] == {"field": "page_token"}


@pytest.mark.parametrize(
    "token", [_token([0, "a", "x"]), _token([0, 1, 2]), _token([0.5, "a", 1]), _token([0, "a"])]
)
def test_forged_search_token_is_refused(alice_api, make, token):
    make.catalog("big")
    assert_error(
        alice_api.get(f"{API}/search?q=x&page_token={token}"),
        400,
        "VALIDATION_ERROR",
        "page_token",
    )


# --- query counts ----------------------------------------------------------------------------


@pytest.mark.parametrize("endpoint", list(LISTS))
def test_list_endpoints_run_a_constant_number_of_queries(alice_api, big, endpoint):
    url = LISTS[endpoint][0]
    small_count, small = queries(alice_api, _join(url, page_size=5))
    large_count, large = queries(alice_api, _join(url, page_size=200))
    next_count, _ = queries(
        alice_api, _join(url, page_size=200, page_token=large["next_page_token"])
    )
    assert len(small["items"]) == 5
    assert len(large["items"]) == 200
    assert small_count == large_count == next_count
    # One query authenticates the token, one loads what the user holds (issue 18: `can`
    # and the visibility filters), (one finds the parent,) one reads the page.
    assert large_count == (3 if endpoint == "catalogs" else 4)


@pytest.mark.parametrize("kind", ["table", "view", "function", "column"])
def test_search_runs_a_constant_number_of_queries(alice_api, big, kind):
    q = {"table": "tbl", "view": "vw", "function": "fn", "column": "col_"}[kind]
    small_count, small = queries(alice_api, f"{API}/search?q={q}&kind={kind}&page_size=5")
    large_count, large = queries(alice_api, f"{API}/search?q={q}&kind={kind}&page_size=200")
    assert len(small["items"]) == 5
    assert len(large["items"]) == 200
    assert {i["kind"] for i in large["items"]} == {kind}
    # The token, what the user holds, then one query for the kind.
    assert small_count == large_count == 3


def test_search_over_all_kinds_is_at_most_one_query_per_kind(alice_api, big):
    # "0" is in every generated name: N tables, N views, N functions and 2N columns.
    count, body = queries(alice_api, f"{API}/search?q=0&page_size=1000")
    assert len(body["items"]) == 1000
    assert {i["kind"] for i in body["items"]} == {"table", "view", "function", "column"}
    assert count == 2 + 4
    small_count, small = queries(alice_api, f"{API}/search?q=0&page_size=5")
    assert [i["kind"] for i in small["items"]] == ["table"] * 5
    assert small_count == 2 + 1
