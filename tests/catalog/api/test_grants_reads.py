"""What grants let a user see in lists, search, completion, resolve, object pages, sessions,
their workspace and table statistics (issue 18, ADR 0011 §2.2, §3.2).

Alice owns the catalog ``acme`` (databases ``sales`` and ``hr``) and the catalog ``vault``.
Team ``analysts`` (Bob) holds ``USE`` on ``acme`` — it may enter the catalog and see its
databases, no object inside — and ``SELECT`` on ``acme.sales.orders``. Dave holds ``SELECT``
on ``acme.hr.salaries`` only. Carol holds nothing: what she may not see answers exactly as a
name that does not exist (the same code, the same message), so she learns nothing from it.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest
from django.contrib.auth.models import Group, User
from rest_framework.test import APIClient

from catalog import services
from catalog.models import Database, Grant, Table
from core.datatypes import parse_data_type
from core.schema import PhysicalColumn, Schema
from jobs.models import Workspace
from tests.conftest import API, PASSWORD, assert_error, client_for
from tests.grants_support import share
from webapp.pagination import encode_page_token

pytestmark = pytest.mark.django_db

BIGINT = parse_data_type("BIGINT")


def schema(*names: str) -> Schema:
    return Schema(columns=tuple(PhysicalColumn(name, BIGINT) for name in names))


@pytest.fixture(autouse=True)
def _files_for_admins_only(settings: Any) -> None:
    settings.TESSERA_READ_FILES_FOR = "admins"


@pytest.fixture
def world(alice: User, bob: User) -> dict[str, Any]:
    carol = User.objects.create_user("carol", password=PASSWORD)
    dave = User.objects.create_user("dave", password=PASSWORD)
    bob.groups.add(Group.objects.create(name="analysts"))
    acme = services.catalog_create(user=alice, name="acme", default_database="sales")
    sales = acme.databases.get()
    hr = services.database_create(user=alice, catalog=acme, name="hr")
    orders = services.table_create(
        user=alice, database=sales, name="orders", schema=schema("order_id", "amount")
    )
    services.table_create(
        user=alice, database=sales, name="secret_plans", schema=schema("plan_code")
    )
    services.table_create(
        user=alice, database=sales, name="customers", schema=schema("customer_id")
    )
    services.view_create(
        user=alice,
        database=sales,
        name="orders_v",
        query="SELECT order_id FROM acme.sales.orders",
        expanded_query="SELECT order_id FROM `acme`.`sales`.`orders`",
        derived=schema("order_id"),
    )
    services.function_create(
        user=alice,
        database=sales,
        name="order_total",
        language="sql",
        implementation="x + 1",
        parameters=[{"name": "x", "data_type": "BIGINT"}],
        return_type="BIGINT",
    )
    salaries = services.table_create(
        user=alice, database=hr, name="salaries", schema=schema("salary_amount")
    )
    vault = services.catalog_create(user=alice, name="vault", default_database="gold")
    services.table_create(
        user=alice, database=vault.databases.get(), name="bars", schema=schema("bar_weight")
    )
    share(acme, ["USE"], team="analysts")
    share(orders, ["SELECT"], team="analysts")
    share(salaries, ["SELECT"], user=dave)
    return {
        "alice": client_for(alice),
        "bob": client_for(bob),
        "carol": client_for(carol),
        "dave": client_for(dave),
        "users": {"alice": alice, "bob": bob, "carol": carol, "dave": dave},
        "orders": orders,
    }


def names(client: APIClient, url: str) -> list[str]:
    response = client.get(url)
    assert response.status_code == 200, response.content
    return [item["name"] for item in response.json()["items"]]


def error_of(response: Any) -> tuple[int, str, str]:
    body = response.json()["error"]
    return response.status_code, body["code"], body["message"]


def as_missing(hidden: Any, missing: Any, hidden_name: str, missing_name: str) -> None:
    """``hidden`` answers exactly as ``missing`` (a name nothing has), the name aside."""
    assert hidden.status_code == missing.status_code == 404, (hidden.content, missing.content)
    a, b = hidden.json(), missing.json()
    assert a["error"]["code"] == b["error"]["code"] == "NOT_FOUND"
    assert a["error"]["message"].replace(hidden_name, "X") == b["error"]["message"].replace(
        missing_name, "X"
    )
    assert set(a["error"]) == set(b["error"])


# --- lists ----------------------------------------------------------------------------------


def test_lists_show_what_each_user_may_see(world: dict[str, Any]) -> None:
    bob, carol, dave, alice = world["bob"], world["carol"], world["dave"], world["alice"]
    base = f"{API}/catalogs/acme/databases"
    assert names(alice, f"{API}/catalogs") == ["acme", "vault"]
    assert names(alice, f"{base}/sales/tables") == ["customers", "orders", "secret_plans"]
    # USE on the catalog shows its databases, no object inside; SELECT shows the table.
    assert names(bob, f"{API}/catalogs") == ["acme"]
    assert names(bob, base) == ["hr", "sales"]
    assert names(bob, f"{base}/sales/tables") == ["orders"]
    assert names(bob, f"{base}/sales/views") == []
    assert names(bob, f"{base}/sales/functions") == []
    assert names(bob, f"{base}/hr/tables") == []
    # A grant inside a database shows it and its catalog, nothing else there.
    assert names(dave, f"{API}/catalogs") == ["acme"]
    assert names(dave, base) == ["hr"]
    assert names(dave, f"{base}/hr/tables") == ["salaries"]
    # Nothing granted: nothing listed, and a hidden catalog's lists answer as a missing one's.
    assert names(carol, f"{API}/catalogs") == []
    as_missing(carol.get(base), carol.get(f"{API}/catalogs/nocat/databases"), "acme", "nocat")
    as_missing(
        carol.get(f"{base}/sales/tables"),
        carol.get(f"{API}/catalogs/nocat/databases/sales/tables"),
        "acme",
        "nocat",
    )


def test_a_revoke_counts_from_the_next_request(world: dict[str, Any]) -> None:
    bob = world["bob"]
    url = f"{API}/catalogs/acme/databases/sales/tables"
    assert names(bob, url) == ["orders"]
    Grant.objects.filter(table=world["orders"], privilege="SELECT").delete()
    assert names(bob, url) == []
    assert bob.get(f"{API}/search?q=orders&kind=table").json()["items"] == []
    assert_error(
        bob.get(f"{url}/orders"), 403, "PERMISSION_DENIED", "USE", "`acme`.`sales`.`orders`"
    )


def test_page_tokens_carry_nothing_hidden(world: dict[str, Any]) -> None:
    """A page token is a name: one made after a hidden name (guessed or forged) pages on
    through the visible names only, and a restricted walk ends where the visible names do."""
    bob = world["bob"]
    url = f"{API}/catalogs/acme/databases/sales/tables?page_size=1"
    first = bob.get(url).json()
    assert [item["name"] for item in first["items"]] == ["orders"]
    assert first["next_page_token"] is None
    forged = bob.get(f"{url}&page_token={encode_page_token('customers')}").json()
    assert [item["name"] for item in forged["items"]] == ["orders"]
    assert forged["next_page_token"] is None
    after = bob.get(f"{url}&page_token={encode_page_token('orders')}").json()
    assert after == {"items": [], "next_page_token": None}


# --- object pages ---------------------------------------------------------------------------


def test_an_object_page_is_refused_in_a_visible_database_and_missing_elsewhere(
    world: dict[str, Any],
) -> None:
    bob, carol, dave = world["bob"], world["carol"], world["dave"]
    sales = f"{API}/catalogs/acme/databases/sales"
    assert bob.get(f"{sales}/tables/orders").status_code == 200
    # Bob may use the database: a name in it he holds nothing on is refused, naming it.
    error = assert_error(
        bob.get(f"{sales}/tables/secret_plans"),
        403,
        "PERMISSION_DENIED",
        "`acme`.`sales`.`secret_plans`",
    )
    assert error["details"] == {
        "kind": "table",
        "privilege": "USE",
        "identifier": ["acme", "sales", "secret_plans"],
    }
    assert_error(bob.get(f"{sales}/views/orders_v"), 403, "PERMISSION_DENIED", "orders_v")
    assert_error(bob.get(f"{sales}/functions/order_total"), 403, "PERMISSION_DENIED")
    assert_error(bob.get(f"{sales}/tables/nothing"), 404, "NOT_FOUND", "does not exist")
    # Dave sees the catalog (through hr) but not sales: the database is refused, named.
    assert_error(dave.get(sales), 403, "PERMISSION_DENIED", "`acme`.`sales`")
    assert_error(dave.get(f"{sales}/tables/orders"), 403, "PERMISSION_DENIED", "`acme`.`sales`")
    assert_error(dave.get(f"{API}/catalogs/acme/databases/nodb"), 404, "NOT_FOUND")
    # Carol sees nothing of acme: every page answers as in a catalog that does not exist.
    nocat = f"{API}/catalogs/nocat/databases/sales"
    for tail in ("", "/tables/orders", "/tables/secret_plans", "/views/orders_v",
                 "/functions/order_total", "/tables/orders/versions",
                 "/tables/orders/properties", "/tables/orders/statistics"):  # fmt: skip
        as_missing(carol.get(f"{sales}{tail}"), carol.get(f"{nocat}{tail}"), "acme", "nocat")
    as_missing(
        carol.get(f"{API}/catalogs/vault"), carol.get(f"{API}/catalogs/vaulz"), "vault", "vaulz"
    )


def test_a_database_seen_through_an_owned_table_refuses_the_same_in_rest_and_sql(
    world: dict[str, Any],
) -> None:
    """Eve holds no grant; she owns one table of acme.hr (its ownership was moved to her).
    She sees hr through it: its other tables are refused by name, in REST and in SQL alike
    (before, SQL answered them missing); names it does not hold, and the databases she sees
    nothing in, stay missing."""
    users = world["users"]
    eve = User.objects.create_user("eve", password=PASSWORD)
    hr = Database.objects.get(catalog__name="acme", name="hr")
    notes = services.table_create(
        user=users["alice"], database=hr, name="notes", schema=schema("n")
    )
    Table.objects.filter(pk=notes.pk).update(owner=eve)
    client = client_for(eve)
    hr_url = f"{API}/catalogs/acme/databases/hr"
    assert client.get(hr_url).status_code == 200
    assert_error(client.get(f"{hr_url}/tables/salaries"), 403, "PERMISSION_DENIED", "salaries")
    session = client.post(f"{API}/sessions", {}).json()["id"]

    def error(sql: str) -> dict[str, Any]:
        job = client.post(f"{API}/sessions/{session}/statements", {"sql": sql}).json()
        assert job["status"] == "FAILED", job
        return dict(job["error"])

    refused = error("SELECT * FROM acme.hr.salaries")
    assert refused["code"] == "PERMISSION_DENIED"
    assert refused["message"] == (
        "You need SELECT on table `acme`.`hr`.`salaries` to read it; you have none."
    )
    assert error("SELECT * FROM acme.hr.nothing")["code"] == "NOT_FOUND"
    hidden, missing = error("SELECT * FROM acme.sales.orders"), error("SELECT * FROM acme.sales.x")
    assert hidden["code"] == missing["code"] == "NOT_FOUND"
    assert hidden["message"].replace("orders", "x") == missing["message"]


def test_a_hidden_object_cannot_be_changed_or_dropped_by_its_guessed_name(
    world: dict[str, Any],
) -> None:
    carol = world["carol"]
    url = f"{API}/catalogs/acme/databases/sales/tables/orders"
    missing = f"{API}/catalogs/nocat/databases/sales/tables/orders"
    as_missing(
        carol.patch(url, {"comment": "x"}), carol.patch(missing, {"comment": "x"}), "acme", "nocat"
    )
    as_missing(carol.delete(url), carol.delete(missing), "acme", "nocat")
    assert Table.objects.filter(name="orders", comment="").exists()


def test_table_statistics_need_select(world: dict[str, Any]) -> None:
    alice, bob = world["alice"], world["bob"]
    sales = f"{API}/catalogs/acme/databases/sales"
    assert alice.get(f"{sales}/tables/orders/statistics").status_code == 200
    assert bob.get(f"{sales}/tables/orders/statistics").status_code == 200
    # USE on the table shows it, its figures are data: SELECT.
    share(Table.objects.get(name="customers"), ["USE"], team="analysts")
    assert bob.get(f"{sales}/tables/customers").status_code == 200
    assert_error(
        bob.get(f"{sales}/tables/customers/statistics"),
        403,
        "PERMISSION_DENIED",
        "SELECT",
        "`acme`.`sales`.`customers`",
    )


# --- search ---------------------------------------------------------------------------------


def hits(client: APIClient, q: str, kind: str | None = None) -> list[tuple[str, ...]]:
    url = f"{API}/search?q={quote(q)}&page_size=1000" + (f"&kind={kind}" if kind else "")
    response = client.get(url)
    assert response.status_code == 200, response.content
    return [
        (item["kind"], item["catalog"], item["database"], item["name"], item.get("column") or "")
        for item in response.json()["items"]
    ]


def test_search_finds_only_what_the_user_may_see(world: dict[str, Any]) -> None:
    alice, bob, carol, dave = world["alice"], world["bob"], world["carol"], world["dave"]
    assert hits(alice, "order") == [
        ("table", "acme", "sales", "orders", ""),
        ("view", "acme", "sales", "orders_v", ""),
        ("function", "acme", "sales", "order_total", ""),
        ("column", "acme", "sales", "orders", "order_id"),
        ("column", "acme", "sales", "orders_v", "order_id"),
    ]
    assert hits(bob, "order") == [
        ("table", "acme", "sales", "orders", ""),
        ("column", "acme", "sales", "orders", "order_id"),
    ]
    assert hits(dave, "a") == [
        ("table", "acme", "hr", "salaries", ""),
        ("column", "acme", "hr", "salaries", "salary_amount"),
    ]
    # Fragments of hidden names and of their columns find nothing, as fragments of nothing.
    for q in ("secret", "ecre", "plan_code", "bar", "bars", "bar_weight", "gold", "vault"):
        assert hits(bob, q) == hits(carol, q) == hits(carol, "zzzz" + q) == [], q
    assert hits(carol, "o") == []
    assert hits(bob, "customer_id", "column") == []


def test_search_pages_through_visible_columns_only(alice: User, bob: User) -> None:
    """Column search for a restricted user takes, per name, only columns of visible tables
    (PostgreSQL: a LATERAL per name): walking the pages one hit at a time gives exactly the
    visible columns, in (name, id) order, and then stops."""
    catalog = services.catalog_create(user=alice, name="wide", default_database="d")
    database = catalog.databases.get()
    visible: list[tuple[str, str]] = []
    for i in range(12):
        table = services.table_create(
            user=alice,
            database=database,
            name=f"t{i:02d}",
            schema=schema("key_shared", f"key_own_{i:02d}", "key_rare" if i % 5 == 0 else "x"),
        )
        if i % 3 == 0:
            share(table, ["SELECT"], user=bob)
            visible += [(f"t{i:02d}", "key_shared"), (f"t{i:02d}", f"key_own_{i:02d}")]
            if i % 5 == 0:
                visible.append((f"t{i:02d}", "key_rare"))
    expected = sorted(visible, key=lambda hit: hit[1])  # by name, then id (= table order)
    client = client_for(bob)
    seen: list[tuple[str, str]] = []
    token = None
    for _ in range(50):
        url = f"{API}/search?q=key_&kind=column&page_size=2"
        page = client.get(url + (f"&page_token={token}" if token else "")).json()
        seen += [(item["name"], item["column"]) for item in page["items"]]
        token = page["next_page_token"]
        if token is None:
            break
    assert seen == expected
    everything = hits(client_for(alice), "key_", "column")
    assert len(everything) == 12 * 2 + 3


def test_search_with_huge_text_or_a_forged_token_stays_an_answer(world: dict[str, Any]) -> None:
    bob = world["bob"]
    response = bob.get(f"{API}/search?q={'o' * 5000}")
    assert response.status_code == 200 and response.json()["items"] == []
    hidden = Table.objects.get(name="secret_plans")
    forged = encode_page_token([0, "secret_plans", hidden.pk])
    response = bob.get(f"{API}/search?q=s&page_token={forged}&page_size=1000")
    assert response.status_code == 200
    assert [item["name"] for item in response.json()["items"]] == []  # nothing visible after it
    assert_error(bob.get(f"{API}/search?q=s&page_token=bad"), 400, "VALIDATION_ERROR")


# --- completion -----------------------------------------------------------------------------


def completed(client: APIClient, path: str, session: str | None = None) -> list[tuple[str, str]]:
    url = f"{API}/complete?path={quote(path)}&limit=100" + (
        f"&session={session}" if session else ""
    )
    response = client.get(url)
    assert response.status_code == 200, response.content
    return [(item["kind"], item["label"]) for item in response.json()["items"]]


def test_completion_offers_only_what_the_user_may_see(world: dict[str, Any]) -> None:
    alice, bob, carol, dave = world["alice"], world["bob"], world["carol"], world["dave"]
    assert completed(alice, "acme.sales.") == [
        ("table", "customers"),
        ("table", "orders"),
        ("view", "orders_v"),
        ("table", "secret_plans"),
        ("function", "order_total"),
    ]
    assert completed(bob, "acme.sales.") == [("table", "orders")]
    assert completed(bob, "acme.sales.s") == []
    assert completed(bob, "acme.") == [("database", "hr"), ("database", "sales")]
    assert ("catalog", "acme") in completed(bob, "")
    assert ("catalog", "vault") not in completed(bob, "")
    assert completed(dave, "acme.") == [("database", "hr")]
    # A hidden catalog's or database's path completes to nothing, exactly as a missing one.
    for path in ("acme.", "acme.sales.", "acme.sales.o", "`acme`.`sales`.", "vault.gold.",
                 "ACME.Sales.", "vault."):  # fmt: skip
        assert completed(carol, path) == [], path
        other = path.replace("acme", "nocat").replace("vault", "nocat")
        assert (
            carol.get(f"{API}/complete?path={quote(path)}").json()
            == carol.get(f"{API}/complete?path={quote(other)}").json()
        )
    assert completed(dave, "acme.sales.") == []
    assert completed(carol, "") == []


def test_completion_keeps_the_session_s_temporary_objects(world: dict[str, Any]) -> None:
    from jobs.models import Session, TemporaryObject

    carol = world["carol"]
    session = carol.post(f"{API}/sessions", {}).json()["id"]
    TemporaryObject.objects.create(
        session=Session.objects.get(pk=session),
        kind="table",
        catalog="acme",
        catalog_key="acme",
        database="sales",
        database_key="sales",
        name="scratch",
        name_key="scratch",
        definition={},
    )
    assert completed(carol, "acme.sales.", session) == [("temporary_table", "scratch")]


# --- resolve --------------------------------------------------------------------------------


def test_resolve_answers_as_a_statement_would(world: dict[str, Any]) -> None:
    bob, carol = world["bob"], world["carol"]
    bob_session = bob.post(f"{API}/sessions", {}).json()["id"]
    carol_session = carol.post(f"{API}/sessions", {}).json()["id"]

    def resolve(client: APIClient, session: str, path: str, *extra: str) -> Any:
        query = "&".join([f"path={quote(path)}", *extra])
        return client.get(f"{API}/sessions/{session}/resolve?{query}")

    assert resolve(bob, bob_session, "acme.sales.orders").status_code == 200
    assert_error(
        resolve(bob, bob_session, "acme.sales.secret_plans"), 403, "PERMISSION_DENIED", "secret"
    )
    assert_error(
        resolve(bob, bob_session, "acme.sales.order_total", "kind=function"),
        403,
        "PERMISSION_DENIED",
    )
    for path, twin in (("acme.sales.orders", "acme.sales.ordersz"), ("vault.gold.bars", "v.g.b")):
        hidden = resolve(carol, carol_session, path)
        missing = resolve(carol, carol_session, twin)
        assert error_of(hidden)[:2] == error_of(missing)[:2] == (404, "NOT_FOUND")
        assert hidden.json()["error"]["message"] == missing.json()["error"]["message"].replace(
            f"`{'`.`'.join(twin.split('.'))}`", f"`{'`.`'.join(path.split('.'))}`"
        )
        # As the user types: nothing there, the same answer as a missing name's.
        lookup = resolve(carol, carol_session, path, "missing=ok").json()
        assert lookup["found"] is False and lookup["object"] is None
    function = resolve(carol, carol_session, "acme.sales.order_total", "kind=function")
    assert_error(function, 404, "NOT_FOUND", "`acme`.`sales`.`order_total`")


# --- sessions and the workspace -------------------------------------------------------------


def test_a_session_cannot_start_in_what_the_user_may_not_see(world: dict[str, Any]) -> None:
    bob, carol = world["bob"], world["carol"]
    as_missing(
        carol.post(f"{API}/sessions", {"current_catalog": "acme"}),
        carol.post(f"{API}/sessions", {"current_catalog": "nocat"}),
        "acme",
        "nocat",
    )
    session = carol.post(f"{API}/sessions", {}).json()["id"]
    as_missing(
        carol.patch(f"{API}/sessions/{session}", {"current_catalog": "vault"}),
        carol.patch(f"{API}/sessions/{session}", {"current_catalog": "nocat"}),
        "vault",
        "nocat",
    )
    # Bob may enter acme (USE): its default database too, which he may see.
    body = bob.post(f"{API}/sessions", {"current_catalog": "acme"}).json()
    assert (body["current_catalog"], body["current_database"]) == ("acme", "sales")
    assert_error(
        world["dave"].post(
            f"{API}/sessions", {"current_catalog": "acme", "current_database": "sales"}
        ),
        403,
        "PERMISSION_DENIED",
        "`acme`.`sales`",
    )
    # Dave sees acme (through hr) but not its default database: he enters no database.
    body = world["dave"].post(f"{API}/sessions", {"current_catalog": "acme"}).json()
    assert (body["current_catalog"], body["current_database"]) == ("acme", None)


def test_a_remembered_place_the_user_may_not_see_is_skipped(
    world: dict[str, Any], settings: Any
) -> None:
    carol, bob = world["users"]["carol"], world["users"]["bob"]
    settings.TESSERA_DEFAULT_CATALOG = "acme"
    settings.TESSERA_PERSONAL_CATALOG = ""  # carol would start in her own catalog
    Workspace.objects.create(
        user=carol, last_catalog="vault", last_database="gold", default_catalog="acme"
    )
    body = world["carol"].post(f"{API}/sessions", {"start": "workspace"}).json()
    assert (body["current_catalog"], body["current_database"]) == (None, None)
    Workspace.objects.create(user=bob, last_catalog="vault", last_database="gold")
    body = world["bob"].post(f"{API}/sessions", {"start": "workspace"}).json()
    assert (body["current_catalog"], body["current_database"]) == ("acme", "sales")
    # A database of a visible catalog the user may not see falls back to what they may.
    Workspace.objects.filter(user=bob).update(last_catalog="acme", last_database="hr")
    Grant.objects.filter(principal_key__startswith="team:").delete()
    share(Table.objects.get(name="salaries"), ["SELECT"], user=bob)
    body = world["bob"].post(f"{API}/sessions", {"start": "workspace"}).json()
    assert (body["current_catalog"], body["current_database"]) == ("acme", "hr")
    Workspace.objects.filter(user=bob).update(last_database="sales")
    body = world["bob"].post(f"{API}/sessions", {"start": "workspace"}).json()
    assert (body["current_catalog"], body["current_database"]) == ("acme", None)
    assert Database.objects.filter(name="sales").exists()
