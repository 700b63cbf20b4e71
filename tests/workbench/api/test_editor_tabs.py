"""Editor tabs kept on the server per user: CRUD, order, the active tab, the version check
against stale writes, the limits, and hostile input (others' tabs, forged ids, huge or
malformed bodies, no credentials)."""

from __future__ import annotations

import threading
import uuid

import pytest
from django.db import connection

from tests.conftest import API, assert_error
from workbench import tab_services

pytestmark = pytest.mark.django_db

URL = f"{API}/editor-tabs"
ITEM_KEYS = {
    "id",
    "title",
    "sql",
    "position",
    "active",
    "saved_query_id",
    "catalog",
    "database",
    "version",
    "created_at",
    "updated_at",
}


def make(client, title: str = "Query 1", **extra):
    response = client.post(URL, {"title": title, **extra})
    assert response.status_code == 201, response.content
    return response.json()


def listed(client):
    response = client.get(URL)
    assert response.status_code == 200, response.content
    return response.json()


def test_create_list_and_read_back(alice_api):
    first = make(alice_api, "Revenue", sql="SELECT 1", catalog="main", database="sales")
    assert set(first) == ITEM_KEYS
    assert (first["title"], first["sql"], first["version"]) == ("Revenue", "SELECT 1", 1)
    assert (first["catalog"], first["database"], first["saved_query_id"]) == ("main", "sales", None)
    second = make(alice_api, "Costs")
    assert second["sql"] == "" and second["position"] == first["position"] + 1
    body = listed(alice_api)
    assert [tab["id"] for tab in body["items"]] == [first["id"], second["id"]]
    assert body["active"] is None
    assert body["limits"] == {"max_tabs": 50, "max_chars": 1024**2}
    assert alice_api.get(f"{URL}/{first['id']}").json() == first
    assert alice_api.get(f"{URL}/{first['id']}/").json() == first


def test_patch_with_the_version_and_a_stale_one_is_409(alice_api):
    tab = make(alice_api, sql="SELECT 1")
    url = f"{URL}/{tab['id']}"
    changed = alice_api.patch(url, {"version": 1, "sql": "SELECT 2", "title": "T"}).json()
    assert (changed["sql"], changed["title"], changed["version"]) == ("SELECT 2", "T", 2)
    assert changed["updated_at"] >= tab["updated_at"]
    # A second browser still on version 1: refused, nothing overwritten, the version told.
    error = assert_error(
        alice_api.patch(url, {"version": 1, "sql": "stale"}), 409, "CONFLICT", "version 2"
    )
    assert error["details"] == {"field": "version", "version": 2}
    assert alice_api.get(url).json()["sql"] == "SELECT 2"
    # Without a version: 400, the field named.
    error = assert_error(alice_api.patch(url, {"sql": "x"}), 400, "VALIDATION_ERROR")
    assert error["details"]["field"] == "version"


def test_order_and_delete(alice_api):
    a, b, c = (make(alice_api, t) for t in "abc")
    alice_api.patch(f"{URL}/{c['id']}", {"version": 1, "position": 0})
    alice_api.patch(f"{URL}/{a['id']}", {"version": 1, "position": 5})
    assert [t["title"] for t in listed(alice_api)["items"]] == ["c", "b", "a"]
    assert alice_api.delete(f"{URL}/{b['id']}").status_code == 204
    assert [t["title"] for t in listed(alice_api)["items"]] == ["c", "a"]
    assert_error(alice_api.delete(f"{URL}/{b['id']}"), 404, "NOT_FOUND")
    assert_error(alice_api.patch(f"{URL}/{b['id']}", {"version": 1}), 404, "NOT_FOUND")


def test_one_active_tab(alice_api):
    a = make(alice_api, "a", active=True)
    b = make(alice_api, "b")
    assert a["active"] is True and b["active"] is False
    assert listed(alice_api)["active"] == a["id"]
    response = alice_api.put(f"{URL}/active", {"id": b["id"]})
    assert response.status_code == 200, response.content
    assert response.json()["active"] is True
    body = listed(alice_api)
    assert body["active"] == b["id"]
    assert [t["active"] for t in body["items"]] == [False, True]
    # A new active tab takes it over; deleting the active tab leaves none active.
    c = make(alice_api, "c", active=True)
    assert listed(alice_api)["active"] == c["id"]
    alice_api.delete(f"{URL}/{c['id']}")
    assert listed(alice_api)["active"] is None


def test_client_chosen_id_makes_a_create_idempotent(alice_api, bob_api):
    chosen = str(uuid.uuid4())
    first = make(alice_api, "a", id=chosen)
    assert first["id"] == chosen
    again = alice_api.post(URL, {"id": chosen, "title": "a"})
    assert again.status_code == 200 and again.json() == first
    assert len(listed(alice_api)["items"]) == 1
    # Another user's id cannot be taken over (nor read).
    assert_error(bob_api.post(URL, {"id": chosen, "title": "mine"}), 409, "ALREADY_EXISTS")
    assert listed(bob_api)["items"] == []
    assert alice_api.get(f"{URL}/{chosen}").json()["title"] == "a"


def test_saved_query_link(alice_api, bob_api):
    saved = alice_api.post(f"{API}/saved-queries", {"name": "q", "sql": "SELECT 1"}).json()
    tab = make(alice_api, saved_query_id=saved["id"])
    assert tab["saved_query_id"] == saved["id"]
    # Bob cannot link a query he may not read.
    error = assert_error(
        bob_api.post(URL, {"title": "t", "saved_query_id": saved["id"]}), 400, "VALIDATION_ERROR"
    )
    assert error["details"]["field"] == "saved_query_id"
    # The query deleted: the tab stays, unlinked.
    alice_api.delete(f"{API}/saved-queries/{saved['id']}")
    assert alice_api.get(f"{URL}/{tab['id']}").json()["saved_query_id"] is None


# --- hostile ---------------------------------------------------------------------------------


def test_another_users_tab_is_not_found(alice_api, bob_api):
    tab = make(alice_api, sql="SELECT secret")
    url = f"{URL}/{tab['id']}"
    assert_error(bob_api.get(url), 404, "NOT_FOUND")
    assert_error(bob_api.patch(url, {"version": 1, "sql": "x"}), 404, "NOT_FOUND")
    assert_error(bob_api.delete(url), 404, "NOT_FOUND")
    assert_error(bob_api.put(f"{URL}/active", {"id": tab["id"]}), 404, "NOT_FOUND")
    assert listed(bob_api)["items"] == []
    assert alice_api.get(url).json() == tab


@pytest.mark.parametrize(
    "forged", ["not-a-uuid", "0", "%00", "' OR 1=1 --", "x" * 5000, str(uuid.uuid4())]
)
def test_forged_ids_are_not_found(alice_api, forged):
    make(alice_api)
    url = f"{URL}/{forged}"
    assert_error(alice_api.get(url), 404, "NOT_FOUND")
    assert_error(alice_api.patch(url, {"version": 1}), 404, "NOT_FOUND")
    assert_error(alice_api.delete(url), 404, "NOT_FOUND")


def test_forged_ids_in_bodies(alice_api):
    error = assert_error(alice_api.post(URL, {"id": "nope", "title": "t"}), 400, "VALIDATION_ERROR")
    assert error["details"]["field"] == "id"
    assert_error(alice_api.put(f"{URL}/active", {"id": "nope"}), 400, "VALIDATION_ERROR")
    assert_error(alice_api.put(f"{URL}/active", {"id": str(uuid.uuid4())}), 404, "NOT_FOUND")
    error = assert_error(
        alice_api.post(URL, {"title": "t", "saved_query_id": str(uuid.uuid4())}),
        400,
        "VALIDATION_ERROR",
    )
    assert error["details"]["field"] == "saved_query_id"


def test_oversize_sql_is_413(alice_api, settings):
    settings.TESSERA_EDITOR_TAB_MAX_CHARS = 1000
    error = assert_error(
        alice_api.post(URL, {"title": "t", "sql": "x" * 1001}), 413, "STATEMENT_TOO_LARGE"
    )
    assert error["details"] == {
        "field": "sql",
        "limit": "characters",
        "maximum": 1000,
        "found": 1001,
    }
    tab = make(alice_api, sql="x" * 1000)
    assert_error(
        alice_api.patch(f"{URL}/{tab['id']}", {"version": 1, "sql": "y" * 1001}),
        413,
        "STATEMENT_TOO_LARGE",
    )
    assert alice_api.get(f"{URL}/{tab['id']}").json()["version"] == 1


def test_default_size_limit_and_a_body_over_the_request_limit(alice_api):
    assert_error(
        alice_api.post(URL, {"title": "t", "sql": "x" * (1024**2 + 1)}), 413, "STATEMENT_TOO_LARGE"
    )
    assert_error(
        alice_api.post(URL, {"title": "t", "sql": "x" * 3_000_000}), 413, "PAYLOAD_TOO_LARGE"
    )
    assert listed(alice_api)["items"] == []


def test_too_many_tabs(alice_api, bob_api, settings):
    settings.TESSERA_EDITOR_TABS_PER_USER = 3
    tabs = [make(alice_api, f"t{n}") for n in range(3)]
    error = assert_error(alice_api.post(URL, {"title": "one more"}), 409, "TOO_MANY_TABS")
    assert error["details"] == {"tabs": 3, "maximum": 3}
    make(bob_api)  # the limit is per user
    alice_api.delete(f"{URL}/{tabs[0]['id']}")
    make(alice_api, "now it fits")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "title"),
        ({"title": ""}, "title"),
        ({"title": "   "}, "title"),
        ({"title": "a\nb"}, "title"),
        ({"title": "x" * 201}, "title"),
        ({"title": ["x"]}, "title"),
        ({"title": "t", "sql": {"a": 1}}, "sql"),
        ({"title": "t", "sql": ["SELECT 1"]}, "sql"),
        ({"title": "t", "position": -1}, "position"),
        ({"title": "t", "position": "first"}, "position"),
        ({"title": "t", "position": 10**12}, "position"),
        ({"title": "t", "catalog": ""}, "catalog"),
        ({"title": "t", "database": "a\x01"}, "database"),
        ({"title": "t", "database": "d" * 300}, "database"),
        ({"title": "t", "active": "maybe"}, "active"),
    ],
)
def test_malformed_creates_are_400(alice_api, body, field):
    error = assert_error(alice_api.post(URL, body), 400, "VALIDATION_ERROR")
    assert error["details"]["field"] == field, error
    assert listed(alice_api)["items"] == []


def test_unstorable_sql_is_400(alice_api):
    """A lone surrogate (valid JSON escape, no text PostgreSQL can hold) and NUL."""
    for raw in (
        b'{"title": "t", "sql": "SELECT \'\\ud800\'"}',
        b'{"title": "t", "sql": "a\\u0000"}',
    ):
        response = alice_api.generic("POST", URL, raw, content_type="application/json")
        assert_error(response, 400, "VALIDATION_ERROR")
    assert listed(alice_api)["items"] == []


def test_malformed_patches_and_bodies(alice_api):
    tab = make(alice_api)
    url = f"{URL}/{tab['id']}"
    for body in ({"version": "one"}, {"version": True, "sql": "x"}, {"version": 1, "title": ""}):
        assert_error(alice_api.patch(url, body), 400, "VALIDATION_ERROR")
    for raw in (b"[1, 2]", b'"text"', b"null"):
        response = alice_api.generic("PATCH", url, raw, content_type="application/json")
        assert_error(response, 400, "VALIDATION_ERROR")
    response = alice_api.generic("POST", URL, b"{not json", content_type="application/json")
    assert_error(response, 400, "MALFORMED_REQUEST")
    assert alice_api.get(url).json()["version"] == 1


def test_unauthenticated(anon_api, alice_api):
    tab = make(alice_api)
    for method, url in (
        ("get", URL),
        ("post", URL),
        ("get", f"{URL}/{tab['id']}"),
        ("patch", f"{URL}/{tab['id']}"),
        ("delete", f"{URL}/{tab['id']}"),
        ("put", f"{URL}/active"),
    ):
        assert_error(getattr(anon_api, method)(url, {}), 401, "NOT_AUTHENTICATED")
    assert alice_api.get(f"{URL}/{tab['id']}").json() == tab


@pytest.mark.django_db(transaction=True)
def test_two_creates_at_once_do_not_pass_the_limit(alice, settings):
    """Both count 1 of 2 before inserting without the user's lock; with it, one waits."""
    settings.TESSERA_EDITOR_TABS_PER_USER = 2
    tab_services.editor_tab_create(user=alice, title="first")
    barrier = threading.Barrier(2)
    outcomes: list[str] = []
    real_lock = tab_services._lock_user

    def lock_then_meet(user_id):
        barrier.wait(timeout=10)  # both are in their transaction; one holds the lock
        real_lock(user_id)

    def create() -> None:
        try:
            tab_services.editor_tab_create(user=alice, title="raced")
            outcomes.append("created")
        except Exception as exc:
            outcomes.append(getattr(exc, "code", repr(exc)))
        finally:
            connection.close()

    tab_services._lock_user = lock_then_meet
    try:
        threads = [threading.Thread(target=create) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
    finally:
        tab_services._lock_user = real_lock
    assert sorted(outcomes) == ["TOO_MANY_TABS", "created"]
