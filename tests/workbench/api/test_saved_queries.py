"""Saved queries: CRUD by the owner, sharing with teammates (read-only), names unique per
owner case-insensitively, listing with scope/q and pages."""

from __future__ import annotations

import threading
import uuid

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection

from tests.conftest import API, PASSWORD, assert_error, client_for
from workbench import services
from workbench.models import SavedQuery

pytestmark = pytest.mark.django_db

URL = f"{API}/saved-queries"
ITEM_KEYS = {
    "id",
    "name",
    "description",
    "sql",
    "shared",
    "chart",
    "owner",
    "editable",
    "created_at",
    "updated_at",
}


def join(user: User, *teams: str) -> None:
    for team in teams:
        group, _ = Group.objects.get_or_create(name=team)
        user.groups.add(group)


@pytest.fixture
def carol(db: None) -> User:
    return User.objects.create_user("carol", "carol@example.com", PASSWORD)


@pytest.fixture
def carol_api(carol):
    return client_for(carol)


def save(client, name: str = "revenue", sql: str = "SELECT 1", **extra):
    response = client.post(URL, {"name": name, "sql": sql, **extra})
    assert response.status_code == 201, response.content
    return response.json()


def names(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [item["name"] for item in response.json()["items"]]


def test_create_and_read_back(alice_api):
    body = save(alice_api, "Top customers", "SELECT * FROM orders", description="by revenue")
    assert set(body) == ITEM_KEYS
    assert body["name"] == "Top customers"
    assert body["description"] == "by revenue"
    assert body["sql"] == "SELECT * FROM orders"
    assert body["shared"] is False
    assert body["owner"] == "alice"
    assert body["editable"] is True
    uuid.UUID(body["id"])
    assert alice_api.get(f"{URL}/{body['id']}").json() == body
    assert alice_api.get(f"{URL}/{body['id']}/").json() == body


def test_patch_changes_only_what_is_given(alice_api):
    body = save(alice_api, description="d")
    response = alice_api.patch(f"{URL}/{body['id']}", {"sql": "SELECT 2", "shared": True})
    assert response.status_code == 200, response.content
    changed = response.json()
    assert changed["sql"] == "SELECT 2"
    assert changed["shared"] is True
    assert changed["name"] == body["name"]
    assert changed["description"] == "d"
    assert changed["updated_at"] >= body["updated_at"]
    assert changed["created_at"] == body["created_at"]
    renamed = alice_api.patch(f"{URL}/{body['id']}", {"name": "Renamed"}).json()
    assert renamed["name"] == "Renamed"
    # Changing only the case of one's own name is allowed.
    assert alice_api.patch(f"{URL}/{body['id']}", {"name": "RENAMED"}).status_code == 200


def test_delete(alice_api):
    body = save(alice_api)
    assert alice_api.delete(f"{URL}/{body['id']}").status_code == 204
    assert_error(alice_api.get(f"{URL}/{body['id']}"), 404, "NOT_FOUND", body["id"])
    assert_error(alice_api.delete(f"{URL}/{body['id']}"), 404, "NOT_FOUND")


def test_names_are_unique_per_owner_case_insensitively(alice_api, bob_api):
    first = save(alice_api, "Revenue")
    error = assert_error(
        alice_api.post(URL, {"name": "REVENUE", "sql": "SELECT 2"}), 409, "ALREADY_EXISTS"
    )
    assert "Revenue" in error["message"]
    other = save(alice_api, "Costs")
    assert_error(
        alice_api.patch(f"{URL}/{other['id']}", {"name": "revenue"}), 409, "ALREADY_EXISTS"
    )
    # Another owner may use the name.
    assert save(bob_api, "revenue")["name"] == "revenue"
    assert alice_api.get(f"{URL}/{first['id']}").json()["name"] == "Revenue"


@pytest.mark.django_db(transaction=True)
def test_a_raced_create_is_already_exists_not_a_500(alice):
    """Two creates of one name at once: the unique constraint decides, the loser gets 409."""
    barrier = threading.Barrier(2)
    outcomes: list[str] = []
    real_filter = SavedQuery.objects.filter

    def slow_check(*args, **kwargs):
        qs = real_filter(*args, **kwargs)
        if "name_key" in kwargs:
            barrier.wait(timeout=10)  # both pass the "is it free?" check before inserting
        return qs

    def create() -> None:
        try:
            services.saved_query_create(user=alice, name="Race", sql="SELECT 1")
            outcomes.append("created")
        except Exception as exc:
            outcomes.append(getattr(exc, "code", repr(exc)))
        finally:
            connection.close()

    SavedQuery.objects.filter = slow_check  # type: ignore[method-assign]
    try:
        threads = [threading.Thread(target=create) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
    finally:
        del SavedQuery.objects.filter
    assert sorted(outcomes) == ["ALREADY_EXISTS", "created"]
    assert SavedQuery.objects.filter(name_key="race").count() == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"sql": "SELECT 1"}, "name"),
        ({"name": "", "sql": "SELECT 1"}, "name"),
        ({"name": "   ", "sql": "SELECT 1"}, "name"),
        ({"name": "x" * 201, "sql": "SELECT 1"}, "name"),
        ({"name": "tab\there", "sql": "SELECT 1"}, "name"),
        ({"name": "n"}, "sql"),
        ({"name": "n", "sql": ""}, "sql"),
        ({"name": "n", "sql": " \n "}, "sql"),
        ({"name": "n", "sql": "SELECT 1", "shared": "maybe"}, "shared"),
        ({"name": "n", "sql": "SELECT 1", "description": 5 * [1]}, "description"),
    ],
)
def test_validation_names_the_field(alice_api, body, field):
    error = assert_error(alice_api.post(URL, body), 400, "VALIDATION_ERROR")
    assert error["details"]["field"] == field, error


def test_a_name_of_200_characters_is_fine(alice_api):
    assert len(save(alice_api, "n" * 200)["name"]) == 200


def test_patch_validation(alice_api):
    body = save(alice_api)
    for change, field in (({"name": " "}, "name"), ({"sql": ""}, "sql")):
        error = assert_error(
            alice_api.patch(f"{URL}/{body['id']}", change), 400, "VALIDATION_ERROR"
        )
        assert error["details"]["field"] == field
    assert_error(
        alice_api.patch(f"{URL}/{body['id']}", ["x"], format="json"), 400, "VALIDATION_ERROR"
    )


def test_private_queries_are_invisible_to_others(alice, bob, alice_api, bob_api):
    join(alice, "sales")
    join(bob, "sales")
    private = save(alice_api, "private")
    assert_error(bob_api.get(f"{URL}/{private['id']}"), 404, "NOT_FOUND")
    assert_error(bob_api.patch(f"{URL}/{private['id']}", {"sql": "x"}), 404, "NOT_FOUND")
    assert_error(bob_api.delete(f"{URL}/{private['id']}"), 404, "NOT_FOUND")
    assert names(bob_api.get(URL)) == []


def test_shared_queries_are_read_only_for_teammates(alice, bob, alice_api, bob_api):
    join(alice, "sales", "eng")
    join(bob, "eng")
    shared = save(alice_api, "shared one", shared=True)
    seen = bob_api.get(f"{URL}/{shared['id']}")
    assert seen.status_code == 200
    assert seen.json()["owner"] == "alice"
    assert seen.json()["editable"] is False
    assert_error(
        bob_api.patch(f"{URL}/{shared['id']}", {"sql": "DROP TABLE x"}),
        403,
        "PERMISSION_DENIED",
        "alice",
    )
    assert_error(bob_api.delete(f"{URL}/{shared['id']}"), 403, "PERMISSION_DENIED")
    assert alice_api.get(f"{URL}/{shared['id']}").json()["sql"] == "SELECT 1"
    # Unsharing hides it again.
    alice_api.patch(f"{URL}/{shared['id']}", {"shared": False})
    assert_error(bob_api.get(f"{URL}/{shared['id']}"), 404, "NOT_FOUND")


def test_shared_queries_stay_inside_teams(alice, bob, carol, alice_api, bob_api, carol_api):
    join(alice, "sales")
    join(bob, "sales")
    join(carol, "eng")
    shared = save(alice_api, "team query", shared=True)
    assert names(bob_api.get(URL)) == ["team query"]
    assert names(carol_api.get(URL)) == []
    assert_error(carol_api.get(f"{URL}/{shared['id']}"), 404, "NOT_FOUND")
    # A user in no team sees no one's shared queries.
    User.objects.create_user("dave", "d@example.com", PASSWORD)
    dave_api = client_for(User.objects.get(username="dave"))
    assert names(dave_api.get(URL)) == []
    # Joining the team makes it visible; one shared team is enough.
    join(carol, "sales")
    assert names(carol_api.get(URL)) == ["team query"]


def test_list_scopes_and_search(alice, bob, alice_api, bob_api):
    join(alice, "sales")
    join(bob, "sales")
    save(alice_api, "Alpha mine")
    save(alice_api, "beta mine shared", shared=True)
    save(bob_api, "Gamma bob shared", shared=True)
    save(bob_api, "delta bob private")
    assert names(alice_api.get(URL)) == ["Alpha mine", "beta mine shared", "Gamma bob shared"]
    assert names(alice_api.get(f"{URL}?scope=all")) == names(alice_api.get(URL))
    assert names(alice_api.get(f"{URL}?scope=mine")) == ["Alpha mine", "beta mine shared"]
    assert names(alice_api.get(f"{URL}?scope=shared")) == ["Gamma bob shared"]
    assert names(alice_api.get(f"{URL}?q=SHARED")) == ["beta mine shared", "Gamma bob shared"]
    assert names(alice_api.get(f"{URL}?q=mine&scope=shared")) == []
    assert names(alice_api.get(f"{URL}?q=%25")) == []  # LIKE wildcards are literal
    items = {i["name"]: i for i in alice_api.get(URL).json()["items"]}
    assert items["Gamma bob shared"]["editable"] is False
    assert items["Alpha mine"]["editable"] is True
    error = assert_error(alice_api.get(f"{URL}?scope=everyone"), 400, "VALIDATION_ERROR")
    assert error["details"]["field"] == "scope"


def test_pages(alice_api, bob_api, alice, bob):
    join(alice, "t")
    join(bob, "t")
    for index in range(5):
        save(alice_api, f"q{index}")
        save(bob_api, f"q{index}", shared=True)  # same names, other owner
    seen: list[tuple[str, str]] = []
    token = None
    while True:
        url = f"{URL}?page_size=3" + (f"&page_token={token}" if token else "")
        body = alice_api.get(url).json()
        seen.extend((item["name"], item["owner"]) for item in body["items"])
        token = body["next_page_token"]
        if token is None:
            break
    assert len(seen) == 10
    assert len(set(seen)) == 10
    assert [name for name, _ in seen] == sorted(name for name, _ in seen)
    assert_error(alice_api.get(f"{URL}?page_size=0"), 400, "VALIDATION_ERROR")
    assert_error(alice_api.get(f"{URL}?page_token=bm9wZQ"), 400, "VALIDATION_ERROR")


def test_list_costs_a_constant_number_of_queries(
    alice, bob, alice_api, bob_api, django_assert_max_num_queries
):
    join(alice, "t")
    join(bob, "t")
    for index in range(30):
        save(bob_api, f"b{index}", shared=True)
    # Token lookup (1) + the page (1): owners come in the same query.
    with django_assert_max_num_queries(3):
        assert len(names(alice_api.get(f"{URL}?page_size=100"))) == 30


def test_anonymous_is_401_and_bad_ids_are_404(anon_api, alice_api):
    assert_error(anon_api.get(URL), 401, "NOT_AUTHENTICATED")
    assert_error(anon_api.post(URL, {"name": "n", "sql": "s"}), 401, "NOT_AUTHENTICATED")
    assert_error(alice_api.get(f"{URL}/not-a-uuid"), 404, "NOT_FOUND")
    assert_error(alice_api.get(f"{URL}/{uuid.uuid4()}"), 404, "NOT_FOUND")


def test_deleting_the_owner_deletes_their_queries(alice, alice_api):
    save(alice_api)
    alice.delete()
    assert SavedQuery.objects.count() == 0


def test_saved_queries_are_in_the_openapi_document(anon_api):
    paths = anon_api.get(f"{API}/schema?format=json").json()["paths"]
    assert {"get", "post"} <= set(paths["/api/v1/saved-queries"])
    assert {"get", "patch", "delete"} <= set(paths["/api/v1/saved-queries/{query}"])
    params = {p["name"] for p in paths["/api/v1/saved-queries"]["get"]["parameters"]}
    assert {"scope", "q", "page_size", "page_token"} <= params


def test_saved_queries_are_in_the_admin(admin, alice_api, client):
    body = save(alice_api, "for the admin")
    client.force_login(admin)
    listing = client.get("/admin/workbench/savedquery/")
    assert listing.status_code == 200
    assert b"for the admin" in listing.content
    assert client.get(f"/admin/workbench/savedquery/{body['id']}/change/").status_code == 200
