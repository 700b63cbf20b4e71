"""``parameters`` of POST /sessions/{id}/statements: the values of a query's ``:name``
markers are checked against the markers before anything is planned (no worker here: a
query that passes stays CREATED with its values on the plan)."""

from __future__ import annotations

from typing import Any

import pytest

from core.planner.parameters import MAX_PARAMETERS, MAX_VALUE_CHARS
from jobs.models import Job
from tests.conftest import API, assert_error

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_broker(monkeypatch):
    from webapp.celery import app

    monkeypatch.setattr(app, "send_task", lambda *args, **kwargs: None)


@pytest.fixture
def session(alice_api) -> str:
    response = alice_api.post(f"{API}/sessions", {})
    assert response.status_code == 201, response.content
    return str(response.json()["id"])


def post(client: Any, session: str, body: dict[str, Any]) -> Any:
    return client.post(f"{API}/sessions/{session}/statements", body)


def test_values_are_kept_on_the_plan_and_the_text_is_not_touched(alice_api, session):
    sql = "SELECT id FROM range(10) WHERE id > :min_qty AND id <> :Min_Qty -- :not_a_marker"
    response = post(alice_api, session, {"sql": sql, "parameters": {"min_qty": "1; DROP x"}})
    assert response.status_code == 201, response.content
    job = response.json()
    assert job["sql"] == sql
    assert job["parameters"] == {"min_qty": "1; DROP x", "Min_Qty": "1; DROP x"}
    stored = Job.objects.get(pk=job["id"])
    assert stored.plan["sql"] == sql
    assert stored.plan["args"]["parameters"] == job["parameters"]


def test_markers_in_strings_comments_and_struct_types_are_not_parameters(alice_api, session):
    sql = "SELECT ':a', CAST(NULL AS STRUCT<a:INT, b: STRING>) /* :b */, :c"
    response = post(alice_api, session, {"sql": sql, "parameters": {"c": 1}})
    assert response.status_code == 201, response.content
    assert response.json()["parameters"] == {"c": 1}


def test_a_marker_without_a_value_is_a_400_naming_it(alice_api, session):
    response = post(alice_api, session, {"sql": "SELECT :a, :b", "parameters": {"a": 1}})
    error = assert_error(response, 400, "VALIDATION_ERROR", ":b", "no value")
    assert error["details"]["parameter"] == "b"
    assert not Job.objects.exists()


def test_a_value_without_a_marker_is_a_400_naming_it(alice_api, session):
    response = post(alice_api, session, {"sql": "SELECT :a", "parameters": {"a": 1, "zz": 2}})
    error = assert_error(response, 400, "VALIDATION_ERROR", ":zz", "no :zz marker")
    assert error["details"]["field"] == "parameters.zz"


@pytest.mark.parametrize(
    ("parameters", "fragment"),
    [
        ({"a": [1, 2]}, "string, a number"),
        ({"a": {"nested": 1}}, "string, a number"),
        ({"a": 2**70}, "BIGINT"),
        ({"a": "x" * (MAX_VALUE_CHARS + 1)}, "characters"),
        ({"1a": 1}, "plain identifier"),
        ({"a b": 1}, "plain identifier"),
        ({"a": 1, "A": 2}, "same name"),
        ("a=1", "Expected a dictionary"),
    ],
)
def test_hostile_or_malformed_values_are_refused(alice_api, session, parameters, fragment):
    response = post(alice_api, session, {"sql": "SELECT :a", "parameters": parameters})
    assert_error(response, 400, "VALIDATION_ERROR", fragment)
    assert not Job.objects.exists()


def test_too_many_parameters_are_refused(alice_api, session):
    names = [f"p{i}" for i in range(MAX_PARAMETERS + 1)]
    sql = "SELECT " + ", ".join(f":{name}" for name in names)
    response = post(alice_api, session, {"sql": sql, "parameters": dict.fromkeys(names, 1)})
    error = assert_error(response, 400, "VALIDATION_ERROR", f"at most {MAX_PARAMETERS}")
    assert error["details"]["maximum"] == MAX_PARAMETERS


def test_parameters_only_go_with_queries(alice_api, session):
    response = post(alice_api, session, {"sql": "EXPLAIN SELECT :a", "parameters": {"a": 1}})
    assert_error(response, 400, "VALIDATION_ERROR", "only be used in queries")
    response = post(
        alice_api, session, {"sql": "SELECT :a", "parameters": {"a": 1}, "script": True}
    )
    assert_error(response, 400, "VALIDATION_ERROR", "not with a script")
    assert not Job.objects.exists()


def test_another_users_session_takes_no_parameters(bob_api, session):
    response = post(bob_api, session, {"sql": "SELECT :a", "parameters": {"a": 1}})
    assert_error(response, 404, "NOT_FOUND")


def test_a_query_with_markers_but_no_parameters_is_a_400(alice_api, session):
    response = post(alice_api, session, {"sql": "SELECT :a"})
    assert_error(response, 400, "VALIDATION_ERROR", ":a", "no value")
    assert not Job.objects.exists()
