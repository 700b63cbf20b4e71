"""Sessions: CRUD, ownership, current catalog/database, properties, idle expiry."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from jobs.models import Session
from tests.conftest import API, assert_error

pytestmark = pytest.mark.django_db

SESSIONS = f"{API}/sessions"
SESSION_KEYS = {
    "id",
    "user",
    "current_catalog",
    "current_database",
    "properties",
    "idle_timeout_seconds",
    "created_at",
    "last_used_at",
    "expires_at",
}


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def create(client, status: int = 201, **body):
    response = client.post(SESSIONS, body)
    assert response.status_code == status, response.content
    return response.json()


def test_a_new_session_is_empty_and_belongs_to_its_user(alice_api, settings):
    settings.TESSERA_SESSION_IDLE_SECONDS = 600
    body = create(alice_api)
    assert set(body) == SESSION_KEYS | {"started_in"}  # where it started: on create only
    uuid.UUID(body["id"])
    assert body["user"] == "alice"
    assert body["current_catalog"] is None and body["current_database"] is None
    assert body["properties"] == {}
    assert body["idle_timeout_seconds"] == 600
    assert _time(body["expires_at"]) - _time(body["last_used_at"]) == timedelta(seconds=600)
    assert alice_api.get(f"{SESSIONS}/{body['id']}").json()["id"] == body["id"]


def test_naming_a_catalog_selects_its_default_database(alice_api, make):
    make.catalog("Sales", default_database="Main")
    body = create(alice_api, current_catalog="sales")
    assert (body["current_catalog"], body["current_database"]) == ("Sales", "Main")


def test_catalog_and_database_are_checked(alice_api, make):
    make.catalog("sales")
    make.database("sales", "eu")
    body = create(alice_api, current_catalog="SALES", current_database="EU")
    assert (body["current_catalog"], body["current_database"]) == ("sales", "eu")
    assert_error(
        alice_api.post(SESSIONS, {"current_catalog": "nope"}),
        404,
        "NOT_FOUND",
        "A catalog with name [nope] does not exist.",
    )
    assert_error(
        alice_api.post(SESSIONS, {"current_catalog": "sales", "current_database": "us"}),
        404,
        "NOT_FOUND",
        "Database `sales`.`us` does not exist.",
    )
    error = assert_error(
        alice_api.post(SESSIONS, {"current_database": "eu"}), 400, "VALIDATION_ERROR", "catalog"
    )
    assert error["details"]["field"] == "current_database"
    assert Session.objects.count() == 1


def test_patch_moves_the_session(alice_api, make):
    make.catalog("a")
    make.catalog("b", default_database="main")
    make.database("a", "x")
    session = create(alice_api, current_catalog="a")
    url = f"{SESSIONS}/{session['id']}"
    assert alice_api.patch(url, {"current_database": "x"}).json()["current_database"] == "x"
    moved = alice_api.patch(url, {"current_catalog": "b"}).json()
    assert (moved["current_catalog"], moved["current_database"]) == ("b", "main")
    assert_error(alice_api.patch(url, {"current_database": "x"}), 404, "NOT_FOUND", "`b`.`x`")
    assert_error(alice_api.patch(url, {"current_catalog": "zzz"}), 404, "NOT_FOUND", "[zzz]")
    unchanged = alice_api.get(url).json()
    assert (unchanged["current_catalog"], unchanged["current_database"]) == ("b", "main")
    cleared = alice_api.patch(url, {"current_catalog": None}).json()
    assert (cleared["current_catalog"], cleared["current_database"]) == (None, None)


def test_two_sessions_of_one_user_are_independent(alice_api, make):
    make.catalog("a")
    make.catalog("b")
    one = create(alice_api, current_catalog="a", properties={"result.max_rows": "10"})
    two = create(alice_api, current_catalog="b")
    alice_api.patch(f"{SESSIONS}/{two['id']}", {"properties": {"spark.sql.ansi.enabled": "false"}})
    first = alice_api.get(f"{SESSIONS}/{one['id']}").json()
    second = alice_api.get(f"{SESSIONS}/{two['id']}").json()
    assert (first["current_catalog"], first["properties"]) == ("a", {"result.max_rows": "10"})
    assert (second["current_catalog"], second["properties"]) == (
        "b",
        {"spark.sql.ansi.enabled": "false"},
    )


def test_properties_come_only_from_the_allowlist(alice_api):
    ok = create(
        alice_api,
        properties={"spark.sql.shuffle.partitions": "8", "spark.sql.session.timeZone": "UTC"},
    )
    assert ok["properties"] == {
        "spark.sql.shuffle.partitions": "8",
        "spark.sql.session.timeZone": "UTC",
    }
    error = assert_error(
        alice_api.post(SESSIONS, {"properties": {"spark.sql.warehouse.dir": "/tmp"}}),
        400,
        "VALIDATION_ERROR",
        "'spark.sql.warehouse.dir' cannot be set",
    )
    assert error["details"]["field"] == "properties.spark.sql.warehouse.dir"
    assert "result.max_rows" in error["message"]  # says what may be set
    assert_error(
        alice_api.post(SESSIONS, {"properties": {"result.max_rows": 10}}),
        400,
        "VALIDATION_ERROR",
        "must be a string",
    )
    assert_error(
        alice_api.post(SESSIONS, {"properties": {"result.max_rows": "-1"}}),
        400,
        "VALIDATION_ERROR",
        "whole number from 1 to",
    )
    assert_error(
        alice_api.patch(
            f"{SESSIONS}/{ok['id']}", {"properties": {"spark.sql.ansi.enabled": "maybe"}}
        ),
        400,
        "VALIDATION_ERROR",
        "true or false",
    )
    # PATCH replaces the whole map.
    replaced = alice_api.patch(
        f"{SESSIONS}/{ok['id']}", {"properties": {"job.timeout_seconds": "60"}}
    )
    assert replaced.json()["properties"] == {"job.timeout_seconds": "60"}


def test_others_sessions_are_not_found(alice_api, bob_api):
    session = create(alice_api)
    url = f"{SESSIONS}/{session['id']}"
    assert_error(bob_api.get(url), 404, "NOT_FOUND", session["id"])
    assert_error(bob_api.patch(url, {"properties": {}}), 404, "NOT_FOUND")
    assert_error(bob_api.delete(url), 404, "NOT_FOUND")
    assert_error(bob_api.post(f"{url}/statements", {"sql": "SHOW CATALOGS"}), 404, "NOT_FOUND")
    assert bob_api.get(SESSIONS).json() == {"items": [], "next_page_token": None}
    assert alice_api.get(url).status_code == 200
    assert_error(alice_api.get(f"{SESSIONS}/{uuid.uuid4()}"), 404, "NOT_FOUND")
    assert_error(alice_api.get(f"{SESSIONS}/nonsense"), 404, "NOT_FOUND")


def test_delete_closes_the_session(alice_api):
    session = create(alice_api)
    url = f"{SESSIONS}/{session['id']}"
    assert alice_api.delete(url).status_code == 204
    assert_error(alice_api.get(url), 404, "NOT_FOUND")
    assert not Session.objects.filter(pk=session["id"]).exists()


def test_list_shows_own_sessions_newest_first_in_pages(alice_api, bob_api):
    made = [create(alice_api)["id"] for _ in range(3)]
    create(bob_api)
    body = alice_api.get(SESSIONS).json()
    assert [item["id"] for item in body["items"]] == made[::-1]
    assert body["next_page_token"] is None
    first = alice_api.get(f"{SESSIONS}?page_size=2").json()
    assert [item["id"] for item in first["items"]] == made[:0:-1]
    rest = alice_api.get(f"{SESSIONS}?page_size=2&page_token={first['next_page_token']}").json()
    assert [item["id"] for item in rest["items"]] == made[:1]
    assert rest["next_page_token"] is None


def test_list_costs_the_same_queries_for_any_page_size(alice_api):
    create(alice_api)

    def count() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert alice_api.get(SESSIONS).status_code == 200
        return len(ctx.captured_queries)

    one = count()
    for _ in range(5):
        create(alice_api)
    assert count() == one


def _age(session_id: str, seconds: int) -> None:
    session = Session.objects.get(pk=session_id)
    Session.objects.filter(pk=session_id).update(
        last_used_at=session.last_used_at - timedelta(seconds=seconds)
    )


def test_an_idle_session_expires_and_is_deleted(alice_api):
    session = create(alice_api, idle_timeout_seconds=60)
    assert session["idle_timeout_seconds"] == 60
    _age(session["id"], 61)
    url = f"{SESSIONS}/{session['id']}"
    assert_error(alice_api.get(url), 404, "NOT_FOUND", f"Session {session['id']} has expired.")
    assert not Session.objects.filter(pk=session["id"]).exists()
    assert_error(alice_api.get(url), 404, "NOT_FOUND", "does not exist")


def test_expired_sessions_take_no_statements_and_leave_the_list(alice_api, settings):
    settings.TESSERA_SESSION_IDLE_SECONDS = 100
    idle = create(alice_api)
    alive = create(alice_api)
    _age(idle["id"], 101)
    _age(alive["id"], 99)
    assert_error(
        alice_api.post(f"{SESSIONS}/{idle['id']}/statements", {"sql": "SHOW CATALOGS"}),
        404,
        "NOT_FOUND",
        "has expired",
    )
    assert [item["id"] for item in alice_api.get(SESSIONS).json()["items"]] == [alive["id"]]


def test_every_use_moves_last_used_at(alice_api):
    session = create(alice_api, idle_timeout_seconds=100)
    _age(session["id"], 90)
    aged = Session.objects.get(pk=session["id"]).last_used_at
    body = alice_api.get(f"{SESSIONS}/{session['id']}").json()
    assert _time(body["last_used_at"]) > aged + timedelta(seconds=80)
    _age(session["id"], 90)
    alice_api.post(f"{SESSIONS}/{session['id']}/statements", {"sql": "SET"})
    assert Session.objects.get(pk=session["id"]).last_used_at > aged + timedelta(seconds=80)
    _age(session["id"], 90)
    # Still alive 90 s after the last use (of 100): the use moved the deadline.
    assert alice_api.get(f"{SESSIONS}/{session['id']}").status_code == 200


def test_bad_bodies_are_validation_errors(alice_api):
    assert_error(alice_api.post(SESSIONS, ["x"]), 400, "VALIDATION_ERROR")
    assert_error(alice_api.post(SESSIONS, {"idle_timeout_seconds": 0}), 400, "VALIDATION_ERROR")
    assert_error(alice_api.post(SESSIONS, {"properties": "x"}), 400, "VALIDATION_ERROR")
