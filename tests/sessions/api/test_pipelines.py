"""``POST /sessions/{id}/pipelines`` and ``EXECUTE PIPELINE`` without a worker: what is
refused before a job could run (docs/pipelines.md)."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from jobs.models import Job
from tests.conftest import API, assert_error

pytestmark = pytest.mark.django_db


def _session(api: APIClient) -> str:
    response = api.post(f"{API}/sessions", {}, format="json")
    assert response.status_code == 201
    return str(response.json()["id"])


def _post(api: APIClient, session: str, body: Any) -> Any:
    return api.post(f"{API}/sessions/{session}/pipelines", body, format="json")


def test_a_pipeline_becomes_a_created_job_of_kind_pipeline(alice_api: APIClient) -> None:
    session = _session(alice_api)
    response = _post(
        alice_api, session, {"entry_point": "tessera_pipelines.x:run", "args": {"a": 1}}
    )
    assert response.status_code == 201, response.content
    job = response.json()
    assert job["kind"] == "pipeline" and job["status"] == "CREATED"
    assert job["sql"] == "EXECUTE PIPELINE 'tessera_pipelines.x:run' WITH ('a' = '1')"
    plan = Job.objects.get(pk=job["id"]).plan
    assert plan["args"] == {"entry_point": "tessera_pipelines.x:run", "args": {"a": 1}}
    assert plan["needs_spark"] is True


@pytest.mark.parametrize(
    "entry_point",
    ["os:system", "tessera_pipelines_evil.x:run", "tessera_pipelines.x:__import__", 7, ""],
)
def test_outside_the_allow_list_is_a_failed_job_forbidden(
    alice_api: APIClient, entry_point: Any
) -> None:
    session = _session(alice_api)
    response = _post(alice_api, session, {"entry_point": entry_point})
    assert response.status_code == 201, response.content
    job = response.json()
    assert job["status"] == "FAILED" and job["error"]["code"] == "FORBIDDEN", job
    assert job["error"]["message"]


def test_the_allow_list_comes_from_the_settings(alice_api: APIClient, settings: Any) -> None:
    settings.TESSERA_PIPELINE_PACKAGES = ("acme.jobs",)
    session = _session(alice_api)
    job = _post(alice_api, session, {"entry_point": "tessera_pipelines.x:run"}).json()
    assert job["error"]["code"] == "FORBIDDEN"
    assert "acme.jobs" in job["error"]["message"]
    job = _post(alice_api, session, {"entry_point": "acme.jobs.daily:run"}).json()
    assert job["status"] == "CREATED", job


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ({f"k{i}": "v" for i in range(65)}, "at most 64"),
        ({"k": "x" * 5000}, "longer than"),
        ({"__class__": "x"}, "not allowed"),
        ({"t_env": "x"}, "not allowed"),
        ({"k": {"nested": 1}}, "string, number"),
        (["a"], "object"),
    ],
)
def test_bad_arguments_are_refused(alice_api: APIClient, args: Any, fragment: str) -> None:
    session = _session(alice_api)
    before = Job.objects.count()
    response = _post(alice_api, session, {"entry_point": "tessera_pipelines.x:run", "args": args})
    assert_error(response, 400, "VALIDATION_ERROR", fragment)
    assert Job.objects.count() == before


def test_another_users_session_is_not_found(alice_api: APIClient, bob_api: APIClient) -> None:
    session = _session(alice_api)
    response = _post(bob_api, session, {"entry_point": "tessera_pipelines.x:run"})
    assert_error(response, 404, "NOT_FOUND")
    assert not Job.objects.filter(session_id=session).exists()


def test_execute_pipeline_over_sql(alice_api: APIClient) -> None:
    session = _session(alice_api)
    response = alice_api.post(
        f"{API}/sessions/{session}/statements",
        {"sql": "EXECUTE PIPELINE 'os:system' WITH ('command' = 'id')"},
        format="json",
    )
    job = response.json()
    assert job["kind"] == "pipeline" and job["error"]["code"] == "FORBIDDEN", job
    assert settings.TESSERA_PIPELINE_PACKAGES == ("tessera_pipelines",)
