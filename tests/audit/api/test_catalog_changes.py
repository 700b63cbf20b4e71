"""Creating and changing catalog objects leaves audit events (``create``, ``alter``), each in
the write's transaction, and an EXPLAIN is logged as ``explain``, not as a read; refused or
idle writes leave none (docs/api.md "Audit")."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from audit.models import AuditEvent
from catalog import services
from catalog.models import Database
from tests.conftest import API, assert_error, json_client, simple_schema
from tests.schemas import ID_SCHEMA

pytestmark = pytest.mark.django_db

TABLES = f"{API}/catalogs/shop/databases/d/tables"


def api_of(user: User) -> APIClient:
    client = json_client()
    client.force_authenticate(user=user)
    return client


def events(action: str) -> list[tuple[str, str, list[str], dict[str, Any]]]:
    return [
        (e.actor_name, e.object_kind, list(e.object), dict(e.detail))
        for e in AuditEvent.objects.filter(action=action).order_by("id")
    ]


@pytest.fixture
def shop(alice: User) -> APIClient:
    api = api_of(alice)
    assert api.post(f"{API}/catalogs", {"name": "shop", "default_database": "d"}).status_code == 201
    return api


def test_creating_a_catalog_database_table_view_and_function_is_audited(shop, alice, admin):
    assert shop.post(f"{API}/catalogs/shop/databases", {"name": "more"}).status_code == 201
    body = {"name": "orders", "schema": simple_schema("id BIGINT", "qty INT")}
    assert shop.post(TABLES, body).status_code == 201
    d = Database.objects.get(catalog__name_key="shop", name_key="d")
    services.view_create(
        user=alice,
        database=d,
        name="big",
        query="SELECT id FROM shop.d.orders",
        expanded_query="SELECT id FROM `shop`.`d`.`orders`",
        derived=ID_SCHEMA,
    )
    services.function_create(
        user=alice,
        database=d,
        name="twice",
        language="sql",
        implementation="x * 2",
        parameters=[{"name": "x", "data_type": "INT"}],
        return_type="INT",
    )
    assert events("create") == [
        ("alice", "catalog", ["shop"], {}),
        ("alice", "database", ["shop", "more"], {}),
        ("alice", "table", ["shop", "d", "orders"], {}),
        ("alice", "view", ["shop", "d", "big"], {}),
        ("alice", "function", ["shop", "d", "twice"], {}),
    ]
    # Listed by the audit API, with the object's securable for its page's recent events.
    items = api_of(admin).get(f"{API}/audit?action=create&object=shop.d").json()["items"]
    assert [item["object"] for item in items] == [
        ["shop", "d", "twice"],
        ["shop", "d", "big"],
        ["shop", "d", "orders"],
    ]
    assert {item["action"] for item in items} == {"create"}


def test_a_refused_create_leaves_no_create_event(shop, bob):
    body = {"name": "orders", "schema": simple_schema()}
    assert shop.post(TABLES, body).status_code == 201
    before = len(events("create"))
    assert_error(shop.post(TABLES, body), 409, "ALREADY_EXISTS")
    assert_error(shop.post(f"{API}/catalogs", {"name": "SHOP"}), 409, "ALREADY_EXISTS")
    bad = {"name": "bad", "schema": simple_schema("id INTEGR")}
    assert_error(shop.post(TABLES, bad), 400, "VALIDATION_ERROR")
    # Bob may not see the catalog: missing to him, and nothing recorded as his.
    assert_error(
        api_of(bob).post(TABLES, {"name": "x", "schema": simple_schema()}), 404, "NOT_FOUND"
    )
    assert len(events("create")) == before


def test_editing_a_schema_is_an_alter_event_with_the_schema_before(shop, bob):
    assert shop.post(TABLES, {"name": "orders", "schema": simple_schema()}).status_code == 201
    old = shop.get(f"{TABLES}/orders").json()["schema"]
    wider = simple_schema("id BIGINT", "note STRING")
    response = shop.patch(f"{TABLES}/orders", {"schema": wider})
    assert response.status_code == 200, response.content
    ((actor, kind, path, detail),) = events("alter")
    assert (actor, kind, path) == ("alice", "table", ["shop", "d", "orders"])
    assert detail["changed"] == ["schema"]
    assert [c["name"] for c in detail["schema_before"]["columns"]] == [
        c["name"] for c in old["columns"]
    ]
    # The same schema again, or only a comment: no schema change, no event.
    assert shop.patch(f"{TABLES}/orders", {"schema": wider}).status_code == 200
    assert shop.patch(f"{TABLES}/orders", {"comment": "hello"}).status_code == 200
    # A refused change (a bad type; another user) changes nothing and records no alter.
    bad = simple_schema("id BIGINT", "note STRNG")
    assert_error(shop.patch(f"{TABLES}/orders", {"schema": bad}), 400, "VALIDATION_ERROR")
    response = api_of(bob).patch(f"{TABLES}/orders", {"schema": simple_schema()})
    assert_error(response, 404, "NOT_FOUND")
    assert len(events("alter")) == 1


def test_explain_is_logged_as_explain_and_a_query_as_a_read(shop, admin):
    assert shop.post(TABLES, {"name": "orders", "schema": simple_schema()}).status_code == 201
    session = shop.post(f"{API}/sessions", {}).json()["id"]
    for sql in ("EXPLAIN SELECT * FROM shop.d.orders", "SELECT * FROM shop.d.orders"):
        response = shop.post(f"{API}/sessions/{session}/statements", {"sql": sql})
        assert response.status_code == 201, response.content
    explained, selected = (
        AuditEvent.objects.filter(action=action).get() for action in ("explain", "read")
    )
    assert explained.object == ["shop", "d", "orders"] and explained.privileges == ["SELECT"]
    assert selected.object == ["shop", "d", "orders"]
    assert str(explained.job_id) != str(selected.job_id)
    items = api_of(admin).get(f"{API}/audit?action=explain").json()["items"]
    assert [item["job"] for item in items] == [str(explained.job_id)]
