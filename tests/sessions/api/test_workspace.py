"""Where new sessions start (``POST /sessions {"start": "workspace"}``, ``/workspace``), and
a query's ``current_catalog()``/``current_database()`` answering the session's values."""

from __future__ import annotations

from typing import Any

import pytest

from jobs.models import Job
from tests.conftest import API, assert_error

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_broker(monkeypatch):
    from webapp.celery import app

    monkeypatch.setattr(app, "send_task", lambda *args, **kwargs: None)


def open_session(client: Any, **body: Any) -> dict[str, Any]:
    response = client.post(f"{API}/sessions", body)
    assert response.status_code == 201, response.content
    data: dict[str, Any] = response.json()
    return data


def where(session: dict[str, Any]) -> tuple[Any, Any, Any]:
    return session["current_catalog"], session["current_database"], session["started_in"]


def test_a_new_user_starts_nowhere_unless_the_server_names_a_default(alice_api, make, settings):
    settings.TESSERA_PERSONAL_CATALOG = ""  # (else their own: test_personal_catalog.py)
    make.catalog("alpha")
    make.catalog("zeta")
    # Never the alphabetically first catalog.
    assert where(open_session(alice_api, start="workspace")) == (None, None, "none")
    settings.TESSERA_DEFAULT_CATALOG = "zeta"
    assert where(open_session(alice_api, start="workspace")) == (
        "zeta",
        "default",
        "server_default",
    )
    settings.TESSERA_DEFAULT_CATALOG = "gone"
    assert where(open_session(alice_api, start="workspace")) == (None, None, "none")


def test_new_sessions_start_where_the_user_last_moved_one(alice_api, bob_api, make, settings):
    settings.TESSERA_PERSONAL_CATALOG = ""  # (else their own: test_personal_catalog.py)
    make.catalog("alpha")
    make.catalog("zeta")
    make.database("zeta", "sales")
    first = open_session(alice_api, start="workspace")
    response = alice_api.patch(
        f"{API}/sessions/{first['id']}", {"current_catalog": "zeta", "current_database": "sales"}
    )
    assert response.status_code == 200, response.content
    assert where(open_session(alice_api, start="workspace")) == ("zeta", "sales", "last_used")
    # USE moves it too.
    response = alice_api.post(
        f"{API}/sessions/{first['id']}/statements", {"sql": "USE CATALOG alpha"}
    )
    assert response.json()["status"] == "FINISHED", response.content
    assert where(open_session(alice_api, start="workspace")) == ("alpha", "default", "last_used")
    # Another user's moves are theirs only; a plain POST /sessions is unchanged.
    assert where(open_session(bob_api, start="workspace")) == (None, None, "none")
    assert where(open_session(alice_api)) == (None, None, "none")
    asked = open_session(alice_api, current_catalog="zeta", start="workspace")
    assert where(asked) == ("zeta", "default", "requested")


def test_the_users_default_is_used_when_the_last_place_is_gone(alice_api, make):
    make.catalog("alpha")
    make.catalog("temp")
    make.database("alpha", "sales")
    response = alice_api.patch(
        f"{API}/workspace", {"default_catalog": "alpha", "default_database": "sales"}
    )
    assert response.status_code == 200, response.content
    assert response.json()["default_catalog"] == "alpha"
    assert where(open_session(alice_api, start="workspace")) == ("alpha", "sales", "user_default")
    open_session(alice_api, current_catalog="temp")  # opened in a named catalog: remembered
    assert where(open_session(alice_api, start="workspace"))[2] == "last_used"
    response = alice_api.delete(f"{API}/catalogs/temp?cascade=true")
    assert response.status_code == 204, response.content
    assert where(open_session(alice_api, start="workspace")) == ("alpha", "sales", "user_default")
    body = alice_api.get(f"{API}/workspace").json()
    assert body["last_catalog"] == "temp" and body["default_database"] == "sales"


def test_a_default_must_exist(alice_api, make):
    make.catalog("alpha")
    assert_error(alice_api.patch(f"{API}/workspace", {"default_catalog": "nope"}), 404, "NOT_FOUND")
    response = alice_api.patch(
        f"{API}/workspace", {"default_catalog": "alpha", "default_database": "nope"}
    )
    assert_error(response, 404, "NOT_FOUND")
    response = alice_api.patch(f"{API}/workspace", {"default_database": "default"})
    assert_error(response, 400, "VALIDATION_ERROR", "default_catalog")
    response = alice_api.patch(f"{API}/workspace", {"default_catalog": "x" * 100_000})
    assert_error(response, 400, "VALIDATION_ERROR")
    response = alice_api.post(f"{API}/sessions", {"start": "anywhere"})
    assert_error(response, 400, "VALIDATION_ERROR")


def test_current_catalog_in_a_query_is_the_sessions(alice_api, make):
    make.catalog("alpha")
    session = open_session(alice_api, current_catalog="alpha")
    sql = (
        "SELECT current_catalog() AS c, current_database() AS d, current_schema(), "
        "'current_catalog()'"
    )
    response = alice_api.post(f"{API}/sessions/{session['id']}/statements", {"sql": sql})
    job = response.json()
    assert job["sql"] == sql and job["parameters"] == {}
    plan = Job.objects.get(pk=job["id"]).plan
    assert plan["sql"] == (
        "SELECT :__tessera_current_catalog AS c, :__tessera_current_database AS d, "
        ":__tessera_current_database, 'current_catalog()'"
    )
    assert plan["args"]["parameters"] == {
        "__tessera_current_catalog": "alpha",
        "__tessera_current_database": "default",
    }


def test_tesseras_own_parameter_names_cannot_be_sent(alice_api):
    session = open_session(alice_api)
    response = alice_api.post(
        f"{API}/sessions/{session['id']}/statements",
        {
            "sql": "SELECT :__tessera_current_catalog",
            "parameters": {"__tessera_current_catalog": "x"},
        },
    )
    assert_error(response, 400, "VALIDATION_ERROR", "Tessera's own")
