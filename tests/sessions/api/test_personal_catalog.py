"""A user with no place at all starts in a catalog of their own (``TESSERA_PERSONAL_CATALOG``,
sessions/personal_catalog.py): created on first use, owned by them, audited, private; the
workspace's order (last used, user default, server default) comes first; collisions, users
whose name is no identifier, switching it off, and two sessions opened at once."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction

from audit.models import AuditEvent
from catalog.models import Catalog
from sessions import services
from tests.conftest import API, PASSWORD, assert_error, client_for
from tests.races import LockWait

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_broker(monkeypatch):
    from webapp.celery import app

    monkeypatch.setattr(app, "send_task", lambda *args, **kwargs: None)


def open_session(client: Any, **body: Any) -> tuple[Any, Any, Any]:
    response = client.post(f"{API}/sessions", {"start": "workspace", **body})
    assert response.status_code == 201, response.content
    data = response.json()
    return data["current_catalog"], data["current_database"], data["started_in"]


def creates_of(name: str) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(action="create", object_kind="catalog", object=[name]))


def test_a_new_user_starts_in_a_catalog_of_their_own(alice, alice_api, bob_api) -> None:
    assert open_session(alice_api) == ("user_alice", "default", "personal")
    made = Catalog.objects.get(name="user_alice")
    assert made.owner_id == alice.pk and made.default_database == "default"
    assert [e.actor_id for e in creates_of("user_alice")] == [alice.pk]
    # The next session finds it: no second catalog, no second event.
    assert open_session(alice_api) == ("user_alice", "default", "personal")
    assert Catalog.objects.filter(name_key__startswith="user_alice").count() == 1
    assert len(creates_of("user_alice")) == 1
    # Private: bob neither lists nor reads it, and his own is another one.
    listed = bob_api.get(f"{API}/catalogs").json()["items"]
    assert "user_alice" not in [c["name"] for c in listed]
    assert_error(bob_api.get(f"{API}/catalogs/user_alice"), 404, "NOT_FOUND")
    assert open_session(bob_api) == ("user_bob", "default", "personal")
    # SQL works there at once (a command needs no worker).
    session = alice_api.post(f"{API}/sessions", {"start": "workspace"}).json()
    response = alice_api.post(
        f"{API}/sessions/{session['id']}/statements", {"sql": "CREATE DATABASE scratch"}
    )
    assert response.json()["status"] == "FINISHED", response.content
    assert made.databases.filter(name="scratch").exists()


def test_a_user_with_a_place_keeps_it(alice, alice_api, make, settings) -> None:
    make.catalog("zeta")
    settings.TESSERA_DEFAULT_CATALOG = "zeta"
    assert open_session(alice_api) == ("zeta", "default", "server_default")
    assert not Catalog.objects.filter(name="user_alice").exists()
    settings.TESSERA_DEFAULT_CATALOG = ""
    make.catalog("alpha")
    session = alice_api.post(f"{API}/sessions", {"current_catalog": "alpha"}).json()
    assert session["current_catalog"] == "alpha"
    alice_api.patch(f"{API}/sessions/{session['id']}", {"current_catalog": "alpha"})
    assert open_session(alice_api) == ("alpha", "default", "last_used")
    assert not Catalog.objects.filter(name="user_alice").exists()
    # A plain POST /sessions (start "empty") is still empty.
    plain = alice_api.post(f"{API}/sessions", {}).json()
    assert (plain["current_catalog"], plain["started_in"]) == (None, "none")


def test_a_taken_name_gets_the_user_id(alice, alice_api, bob_api) -> None:
    # bob took alice's name first: hers carries her id, bob's catalog is untouched.
    response = bob_api.post(f"{API}/catalogs", {"name": "user_alice"})
    assert response.status_code == 201, response.content
    own = f"user_alice_{alice.pk}"
    assert open_session(alice_api) == (own, "default", "personal")
    assert Catalog.objects.get(name="user_alice").owner_id == User.objects.get(username="bob").pk
    assert Catalog.objects.get(name=own).owner_id == alice.pk
    # Both names taken by others: no catalog, the session starts nowhere (no error).
    Catalog.objects.filter(name=own).update(owner=User.objects.get(username="bob"))
    assert open_session(alice_api) == (None, None, "none")


def test_a_name_that_is_no_identifier_becomes_one(db) -> None:
    user = User.objects.create_user("Ann.Lee@Corp-1.io", password=PASSWORD)
    assert open_session(client_for(user)) == ("user_ann_lee_corp_1_io", "default", "personal")
    digits = User.objects.create_user("42", password=PASSWORD)
    assert open_session(client_for(digits)) == ("user_42", "default", "personal")


def test_a_template_starting_with_the_name_starts_with_a_letter(db, settings) -> None:
    settings.TESSERA_PERSONAL_CATALOG = "{user}"
    user = User.objects.create_user("7of9", password=PASSWORD)
    assert open_session(client_for(user)) == ("u7of9", "default", "personal")


def test_an_admin_turns_it_off(alice, alice_api, settings) -> None:
    settings.TESSERA_PERSONAL_CATALOG = ""
    assert open_session(alice_api) == (None, None, "none")
    settings.TESSERA_PERSONAL_CATALOG = "home_{user}"
    settings.TESSERA_CATALOG_CREATORS = "admins"  # a user who may not create catalogs
    assert open_session(alice_api) == (None, None, "none")
    assert not Catalog.objects.exists()
    settings.TESSERA_CATALOG_CREATORS = "everyone"
    assert open_session(alice_api) == ("home_alice", "default", "personal")


def test_two_sessions_opened_at_once_share_one_catalog(transactional_db) -> None:
    """The first session's transaction holds its new catalog uncommitted until PostgreSQL
    shows the second waiting on the catalog's unique name; the second then reads the row the
    first committed instead of failing or making a second catalog."""
    alice = User.objects.create_user("alice", password=PASSWORD)
    race = LockWait()
    created = threading.Event()
    places: dict[str, Any] = {}
    errors: list[BaseException] = []

    def first() -> None:
        try:
            with transaction.atomic():
                session, started = services.session_open(user=alice, start="workspace")
                places["first"] = (session.current_catalog, session.current_database, started)
                created.set()
                race.hold_until_the_second_waits()
        except BaseException as exc:  # the main thread reports it
            errors.append(exc)
            created.set()
        finally:
            connection.close()

    def second() -> None:
        try:
            created.wait(30)
            race.second_starts()
            session, started = services.session_open(user=alice, start="workspace")
            places["second"] = (session.current_catalog, session.current_database, started)
        except BaseException as exc:
            errors.append(exc)
        finally:
            race.second_ended()
            connection.close()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors
    assert race.waited, "the second session never waited for the first's catalog"
    assert places["first"] == places["second"] == ("user_alice", "default", "personal")
    assert Catalog.objects.filter(owner=alice).count() == 1
    assert len(creates_of("user_alice")) == 1
