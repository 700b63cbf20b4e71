"""``GET …/tables/{t}/schema-changes``: a table's creation and schema changes from the audit log
(who, when, what changed), newest first, paged, for anyone who may see the table."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from catalog.models import Table
from tests.conftest import API, assert_error, json_client, simple_schema

pytestmark = pytest.mark.django_db

TABLES = f"{API}/catalogs/shop/databases/d/tables"
CHANGES = f"{TABLES}/orders/schema-changes"


def api_of(user: User) -> APIClient:
    client = json_client()
    client.force_authenticate(user=user)
    return client


@pytest.fixture
def shop(alice: User) -> APIClient:
    api = api_of(alice)
    assert api.post(f"{API}/catalogs", {"name": "shop", "default_database": "d"}).status_code == 201
    body = {"name": "orders", "schema": simple_schema("id BIGINT", "qty INT")}
    assert api.post(TABLES, body).status_code == 201
    return api


def alter(api: APIClient, *columns: str) -> None:
    response = api.patch(f"{TABLES}/orders", {"schema": simple_schema(*columns)})
    assert response.status_code == 200, response.content


def summary(item: dict[str, Any]) -> list[tuple[str, str | None, Any, Any]]:
    return [(c["change"], c["column"], c["before"], c["after"]) for c in item["changes"]]


def test_lists_the_creation_and_each_change_with_what_changed(shop, admin):
    alter(shop, "id BIGINT", "qty BIGINT", "note STRING")
    narrower = simple_schema("id BIGINT", "note STRING")
    assert api_of(admin).patch(f"{TABLES}/orders", {"schema": narrower}).status_code == 200
    body = shop.get(CHANGES).json()
    items = body["items"]
    assert [(i["action"], i["actor"]) for i in items] == [
        ("alter", "admin"),
        ("alter", "alice"),
        ("create", "alice"),
    ]
    assert summary(items[0]) == [("dropped", "qty", "BIGINT", None)]
    assert summary(items[1]) == [
        ("type", "qty", "INT", "BIGINT"),
        ("added", "note", None, "STRING"),
    ]
    assert summary(items[2]) == [("added", "id", None, "BIGINT"), ("added", "qty", None, "INT")]
    assert items[0]["at"] >= items[1]["at"] >= items[2]["at"]
    assert body["next_page_token"] is None


def test_pages_keep_what_each_change_left(shop):
    alter(shop, "id BIGINT", "a INT")
    alter(shop, "id BIGINT", "a INT", "b INT")
    alter(shop, "id BIGINT", "b INT")
    first = shop.get(f"{CHANGES}?page_size=2").json()
    assert [summary(i) for i in first["items"]] == [
        [("dropped", "a", "INT", None)],
        [("added", "b", None, "INT")],
    ]
    token = first["next_page_token"]
    assert token
    rest = shop.get(f"{CHANGES}?page_size=2&page_token={token}").json()
    # The older changes are told against the schema each left, not the table's schema now.
    assert [summary(i) for i in rest["items"]] == [
        [("added", "a", None, "INT"), ("dropped", "qty", "INT", None)],
        [("added", "id", None, "BIGINT"), ("added", "qty", None, "INT")],
    ]
    assert rest["next_page_token"] is None


def test_idle_patches_add_nothing_and_another_table_is_apart(shop):
    shop.patch(f"{TABLES}/orders", {"comment": "hello"})
    alter(shop, "id BIGINT", "qty INT")  # the same schema
    assert shop.post(TABLES, {"name": "other", "schema": simple_schema()}).status_code == 201
    alter_other = shop.patch(f"{TABLES}/other", {"schema": simple_schema("id BIGINT", "x INT")})
    assert alter_other.status_code == 200
    items = shop.get(CHANGES).json()["items"]
    assert [i["action"] for i in items] == ["create"]


def test_a_dropped_and_recreated_table_starts_a_new_history(shop):
    assert shop.delete(f"{TABLES}/orders").status_code == 204
    body = {"name": "orders", "schema": simple_schema("id STRING")}
    assert shop.post(TABLES, body).status_code == 201
    items = shop.get(CHANGES).json()["items"]
    assert [summary(i) for i in items] == [[("added", "id", None, "STRING")]]


def test_who_may_not_see_the_table_gets_not_found(shop, bob):
    assert_error(api_of(bob).get(CHANGES), 404, "NOT_FOUND")
    assert_error(shop.get(f"{TABLES}/nope/schema-changes"), 404, "NOT_FOUND")


def test_a_reader_sees_the_changes(shop, bob):
    for url, privileges in (
        (f"{API}/catalogs/shop", ["USE"]),
        (f"{API}/catalogs/shop/databases/d", ["USE"]),
        (f"{TABLES}/orders", ["SELECT"]),
    ):
        grant = {"principal": "bob", "principal_type": "user", "add": privileges, "remove": []}
        response = shop.patch(f"{url}/permissions", {"changes": [grant]})
        assert response.status_code == 200, response.content
    items = api_of(bob).get(CHANGES).json()["items"]
    assert [i["action"] for i in items] == ["create"]


@pytest.mark.parametrize("token", ["garbage", "WzEsMl0", "e30"])
def test_a_page_token_not_issued_here_is_a_validation_error(shop, token):
    assert_error(shop.get(f"{CHANGES}?page_token={token}"), 400, "VALIDATION_ERROR")


def test_a_view_has_no_schema_changes_here(shop, alice):
    from catalog import services
    from catalog.models import Database
    from tests.schemas import ID_SCHEMA

    d = Database.objects.get(catalog__name_key="shop", name_key="d")
    services.view_create(
        user=alice,
        database=d,
        name="big",
        query="SELECT id FROM shop.d.orders",
        expanded_query="SELECT id FROM `shop`.`d`.`orders`",
        derived=ID_SCHEMA,
    )
    assert Table.objects.filter(name_key="big", kind=Table.KIND_VIEW).exists()
    assert_error(shop.get(f"{TABLES}/big/schema-changes"), 404, "NOT_FOUND", "is a view")
