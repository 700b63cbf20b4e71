"""Dashboards: CRUD by the owner, read-only sharing with teammates, tiles on a checked grid,
and a tile's run as the viewer through the statements service (no worker here: a query that
passes stays CREATED with its bound values on the plan)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.contrib.auth.models import Group, User

from catalog.models import Table
from core import jobstate
from dashboards.models import Dashboard, Tile
from jobs.models import Job
from tests.conftest import API, assert_error
from tests.grants_support import share

pytestmark = pytest.mark.django_db
URL = f"{API}/dashboards"


@pytest.fixture(autouse=True)
def _no_broker(monkeypatch):
    from webapp.celery import app

    monkeypatch.setattr(app, "send_task", lambda *args, **kwargs: None)


def join(*users: User, team: str = "analysts") -> None:
    group, _ = Group.objects.get_or_create(name=team)
    for user in users:
        user.groups.add(group)


def save_query(client: Any, name: str = "q", sql: str = "SELECT 1 AS n", **extra: Any) -> str:
    made = client.post(f"{API}/saved-queries", {"name": name, "sql": sql, **extra})
    assert made.status_code == 201, made.content
    return str(made.json()["id"])


def create(client: Any, **body: Any) -> dict[str, Any]:
    made = client.post(URL, {"title": "Sales", **body})
    assert made.status_code == 201, made.content
    return dict(made.json())


def add_tile(client: Any, board: str, query: str, **body: Any) -> dict[str, Any]:
    made = client.post(f"{URL}/{board}/tiles", {"saved_query": query, **body})
    assert made.status_code == 201, made.content
    return dict(made.json()["tiles"][-1])


def run(client: Any, board: str, tile: str, **body: Any) -> Any:
    return client.post(f"{URL}/{board}/tiles/{tile}/run", body)


def test_the_owner_creates_lists_changes_and_deletes_a_dashboard(alice_api):
    made = create(
        alice_api,
        refresh_interval_seconds=300,
        parameters=[{"name": "region", "default": "EU"}, {"name": "n", "default": 3}],
    )
    assert made["owner"] == "alice" and made["editable"] and made["tiles"] == []
    assert made["parameters"] == [{"name": "region", "default": "EU"}, {"name": "n", "default": 3}]
    query = save_query(
        alice_api, chart={"type": "bar", "x": "n", "y": ["n"], "aggregation": "none"}
    )
    tile = add_tile(alice_api, made["id"], query, kind="chart", x=6, y=2, w=6, h=3)
    assert (tile["kind"], tile["x"], tile["y"], tile["w"], tile["h"]) == ("chart", 6, 2, 6, 3)
    assert tile["saved_query_name"] == "q" and tile["query_chart"]["type"] == "bar"
    [listed] = alice_api.get(URL).json()["items"]
    assert listed["id"] == made["id"] and len(listed["tiles"]) == 1
    changed = alice_api.patch(f"{URL}/{made['id']}", {"title": "Sales 2", "shared": True})
    assert changed.status_code == 200 and changed.json()["title"] == "Sales 2"
    moved = alice_api.patch(f"{URL}/{made['id']}/tiles/{tile['id']}", {"x": 0, "kind": "table"})
    assert moved.status_code == 200, moved.content
    assert moved.json()["tiles"][0]["x"] == 0 and moved.json()["tiles"][0]["kind"] == "table"
    assert alice_api.delete(f"{URL}/{made['id']}/tiles/{tile['id']}").status_code == 204
    assert alice_api.delete(f"{URL}/{made['id']}").status_code == 204
    assert not Dashboard.objects.exists() and not Tile.objects.exists()


def test_another_users_dashboard_is_not_found_unless_shared_with_a_team(alice_api, bob, bob_api):
    made = create(alice_api)
    for response in (
        bob_api.get(f"{URL}/{made['id']}"),
        bob_api.patch(f"{URL}/{made['id']}", {"title": "mine"}),
        bob_api.delete(f"{URL}/{made['id']}"),
        bob_api.post(f"{URL}/{made['id']}/tiles", {"saved_query": str(uuid.uuid4())}),
    ):
        assert_error(response, 404, "NOT_FOUND", "does not exist")
    assert bob_api.get(URL).json()["items"] == []
    alice_api.patch(f"{URL}/{made['id']}", {"shared": True})
    assert bob_api.get(f"{URL}/{made['id']}").status_code == 404  # no common team yet
    join(bob, User.objects.get(username="alice"))
    seen = bob_api.get(f"{URL}/{made['id']}")
    assert seen.status_code == 200 and seen.json()["editable"] is False


def test_a_teammate_who_may_view_cannot_edit(alice, alice_api, bob, bob_api):
    join(alice, bob)
    made = create(alice_api, shared=True)
    tile = add_tile(alice_api, made["id"], save_query(alice_api, shared=True))
    assert_error(bob_api.patch(f"{URL}/{made['id']}", {"title": "x"}), 403, "PERMISSION_DENIED")
    assert_error(bob_api.delete(f"{URL}/{made['id']}"), 403, "PERMISSION_DENIED", "alice")
    mine = save_query(bob_api, name="bobs")
    added = bob_api.post(f"{URL}/{made['id']}/tiles", {"saved_query": mine})
    assert_error(added, 403, "PERMISSION_DENIED")
    moved = bob_api.patch(f"{URL}/{made['id']}/tiles/{tile['id']}", {"x": 1})
    assert_error(moved, 403, "PERMISSION_DENIED")
    assert_error(bob_api.delete(f"{URL}/{made['id']}/tiles/{tile['id']}"), 403, "PERMISSION_DENIED")
    assert Dashboard.objects.get().title == "Sales" and Tile.objects.get().x == 0


def test_a_tile_needs_a_saved_query_its_owner_may_read(alice_api, bob_api):
    made = create(alice_api)
    hidden = save_query(bob_api, name="secret")  # bob's, not shared
    for forged in (hidden, str(uuid.uuid4()), "not-an-id", "x" * 5000):
        response = alice_api.post(f"{URL}/{made['id']}/tiles", {"saved_query": forged})
        error = assert_error(response, 400, "VALIDATION_ERROR", "does not exist")
        assert error["details"]["field"] == "saved_query"
    tile = add_tile(alice_api, made["id"], save_query(alice_api))
    swapped = alice_api.patch(f"{URL}/{made['id']}/tiles/{tile['id']}", {"saved_query": hidden})
    assert assert_error(swapped, 400, "VALIDATION_ERROR")["details"]["field"] == "saved_query"
    for bad_tile in (str(uuid.uuid4()), "nope"):
        assert_error(run(alice_api, made["id"], bad_tile), 404, "NOT_FOUND")


@pytest.mark.parametrize(
    ("place", "field"),
    [
        ({"x": 12}, "x"),
        ({"x": 7, "w": 6}, "x"),
        ({"x": -1}, "x"),
        ({"w": 0}, "w"),
        ({"w": 13}, "w"),
        ({"y": 10**30}, "y"),
        ({"y": -5}, "y"),
        ({"h": 0}, "h"),
        ({"h": 10**6}, "h"),
        ({"x": "1"}, "x"),
        ({"w": 2.5}, "w"),
        ({"h": True}, "h"),
        ({"y": None}, "y"),
        ({"kind": "pie-chart"}, "kind"),
        ({"chart": {"type": "bar"}}, "chart"),
        ({"chart": "bar"}, "chart"),
    ],
)
def test_malformed_or_huge_grid_positions_are_refused(alice_api, place, field):
    made = create(alice_api)
    query = save_query(alice_api)
    response = alice_api.post(f"{URL}/{made['id']}/tiles", {"saved_query": query, **place})
    error = assert_error(response, 400, "VALIDATION_ERROR")
    assert error["details"]["field"] == field, error
    assert not Tile.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"title": ""}, "title"),
        ({"title": "t" * 201}, "title"),
        ({"title": "a\x00b"}, "title"),
        ({"refresh_interval_seconds": 5}, "refresh_interval_seconds"),
        ({"refresh_interval_seconds": 10**12}, "refresh_interval_seconds"),
        ({"refresh_interval_seconds": "60"}, "refresh_interval_seconds"),
        ({"parameters": {"region": "EU"}}, "parameters"),
        ({"parameters": [{"name": "1bad"}]}, "parameters.1bad"),
        ({"parameters": [{"name": "__tessera_x"}]}, "parameters.__tessera_x"),
        ({"parameters": [{"name": "a"}, {"name": "a"}]}, "parameters.1"),
        ({"parameters": [{"name": "a"}, {"name": "A"}]}, "parameters.A"),
        ({"parameters": [{"name": "a", "default": {"x": 1}}]}, "parameters.a"),
        ({"parameters": [{"name": "a", "default": "v" * 1001}]}, "parameters.0"),
        ({"parameters": [{"name": "a", "extra": 1}]}, "parameters.0"),
        ({"parameters": [{"name": f"p{i}"} for i in range(21)]}, "parameters"),
        ({"parameters": ["a"]}, "parameters.0"),
    ],
)
def test_malformed_titles_intervals_and_parameters_are_refused(alice_api, body, field):
    response = alice_api.post(URL, {"title": "ok", **body})
    error = assert_error(response, 400, "VALIDATION_ERROR")
    assert error["details"]["field"] == field, error
    assert not Dashboard.objects.exists()


def test_limits_are_settings(alice_api, settings):
    settings.TESSERA_DASHBOARD_MAX_TILES = 2
    settings.TESSERA_DASHBOARDS_PER_USER = 1
    settings.TESSERA_DASHBOARD_TITLE_MAX_CHARS = 10
    assert_error(alice_api.post(URL, {"title": "x" * 11}), 400, "VALIDATION_ERROR", "10")
    made = create(alice_api)
    assert_error(alice_api.post(URL, {"title": "two"}), 400, "VALIDATION_ERROR", "1 dashboards")
    query = save_query(alice_api)
    add_tile(alice_api, made["id"], query)
    add_tile(alice_api, made["id"], query)
    refused = alice_api.post(f"{URL}/{made['id']}/tiles", {"saved_query": query})
    assert_error(refused, 400, "VALIDATION_ERROR", "at most 2 tiles")


def test_a_tile_runs_with_the_dashboards_parameters_bound(alice_api):
    made = create(
        alice_api, parameters=[{"name": "low", "default": 2}, {"name": "tag", "default": "x"}]
    )
    query = save_query(alice_api, sql="SELECT id FROM range(10) WHERE id > :LOW")
    tile = add_tile(alice_api, made["id"], query)
    first = run(alice_api, made["id"], tile["id"])
    assert first.status_code == 201, first.content
    job = first.json()
    assert job["parameters"] == {"LOW": 2} and job["sql"].endswith(":LOW")
    again = run(alice_api, made["id"], tile["id"], parameters={"LOW": 7}, session=job["session"])
    assert again.status_code == 201, again.content
    assert again.json()["parameters"] == {"LOW": 7}
    assert again.json()["session"] == job["session"]  # the same session, reused
    stored = Job.objects.get(pk=again.json()["id"])
    assert stored.plan["args"]["parameters"] == {"LOW": 7}
    undeclared = run(alice_api, made["id"], tile["id"], parameters={"other": 1})
    assert_error(undeclared, 400, "VALIDATION_ERROR", ":other")
    hostile = run(alice_api, made["id"], tile["id"], parameters={"low": {"nested": 1}})
    assert_error(hostile, 400, "VALIDATION_ERROR")
    assert_error(
        run(alice_api, made["id"], tile["id"], parameters="low=1"), 400, "VALIDATION_ERROR"
    )
    foreign = run(alice_api, made["id"], tile["id"], session=str(uuid.uuid4()))
    assert_error(foreign, 404, "NOT_FOUND")
    for body in ({"wait": -1}, {"wait": 10**9}, {"page_size": 0}, {"page_size": 10**9}):
        assert_error(run(alice_api, made["id"], tile["id"], **body), 400, "VALIDATION_ERROR")
    many = {f"p{i}": i for i in range(200)}
    assert_error(run(alice_api, made["id"], tile["id"], parameters=many), 400, "VALIDATION_ERROR")


def test_a_viewers_session_of_another_user_is_not_found(alice, alice_api, bob, bob_api):
    join(alice, bob)
    made = create(alice_api, shared=True)
    tile = add_tile(alice_api, made["id"], save_query(alice_api, shared=True))
    alices = run(alice_api, made["id"], tile["id"]).json()["session"]
    assert_error(run(bob_api, made["id"], tile["id"], session=alices), 404, "NOT_FOUND")
    assert not Job.objects.filter(user=bob).exists()


def test_a_deleted_saved_query_takes_its_tiles_with_it(alice_api):
    made = create(alice_api)
    query = save_query(alice_api)
    add_tile(alice_api, made["id"], query)
    assert alice_api.delete(f"{API}/saved-queries/{query}").status_code == 204
    assert alice_api.get(f"{URL}/{made['id']}").json()["tiles"] == []


def test_a_marker_the_dashboard_does_not_declare_fails_that_tile(alice_api):
    made = create(alice_api)
    tile = add_tile(alice_api, made["id"], save_query(alice_api, sql="SELECT :missing AS m"))
    assert_error(run(alice_api, made["id"], tile["id"]), 400, "VALIDATION_ERROR", ":missing")


def test_tiles_run_as_the_viewer_and_only_the_denied_tile_fails(
    make, alice, alice_api, bob, bob_api
):
    make.catalog("demo", shared=False)
    make.database("demo", "d")
    make.table("demo", "d", "open")
    make.table("demo", "d", "closed")
    share("demo", ["USE"], user=bob)
    share(Table.objects.get(name="open"), ["USE", "SELECT"], user=bob)
    share(Table.objects.get(name="closed"), ["USE"], user=bob)  # he sees it, without SELECT
    join(alice, bob)
    made = create(alice_api, shared=True)
    open_tile = add_tile(
        alice_api, made["id"], save_query(alice_api, "a", "SELECT * FROM demo.d.open", shared=True)
    )
    closed_tile = add_tile(
        alice_api,
        made["id"],
        save_query(alice_api, "b", "SELECT * FROM demo.d.closed", shared=True),
        x=6,
    )
    for tile in (open_tile, closed_tile):  # the owner may read both
        owner_run = run(alice_api, made["id"], tile["id"])
        assert owner_run.json()["status"] == jobstate.CREATED, owner_run.content
    allowed = run(bob_api, made["id"], open_tile["id"])
    assert allowed.status_code == 201 and allowed.json()["status"] == jobstate.CREATED
    denied = run(bob_api, made["id"], closed_tile["id"])
    assert denied.status_code == 201, denied.content
    assert denied.json()["status"] == jobstate.FAILED
    assert denied.json()["error"]["code"] == "PERMISSION_DENIED", denied.json()["error"]
    for answer in (allowed, denied):  # run as bob, in a session of his
        job = Job.objects.select_related("session").get(pk=answer.json()["id"])
        assert job.user_id == bob.pk and job.session is not None and job.session.user_id == bob.pk


def test_a_tile_of_a_query_no_longer_shared_with_the_viewer_is_denied(
    alice, alice_api, bob, bob_api
):
    join(alice, bob)
    made = create(alice_api, shared=True)
    query = save_query(alice_api, shared=True)
    tile = add_tile(alice_api, made["id"], query)
    assert run(bob_api, made["id"], tile["id"]).status_code == 201
    alice_api.patch(f"{API}/saved-queries/{query}", {"shared": False})
    denied = run(bob_api, made["id"], tile["id"])
    assert_error(denied, 403, "PERMISSION_DENIED", "not shared with you")
    assert Job.objects.filter(user=bob).count() == 1
