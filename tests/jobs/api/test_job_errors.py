"""``jobs.errors.JobError``: every job failure's one type, and the JSON a job's ``error``
keeps (the REST API's ``error``): ``code``, ``message`` and ``details`` only when the error
has them; ``retryable`` is the server's own."""

from __future__ import annotations

from typing import Any

import pytest

from core import jobstate
from core.errors import CoreError, NotFound
from engine.errors import job_error
from jobs import lifecycle
from jobs.errors import INTERNAL_ERROR, JobError
from jobs.models import Job, JobEvent, Session
from sessions import statements
from tests.conftest import API
from tests.jobs.api.test_jobs import open_session, spark_plan, submit


def test_the_json_leaves_out_details_it_does_not_have() -> None:
    assert JobError("X", "m").to_json() == {"code": "X", "message": "m"}
    assert JobError("X", "m", {}).to_json() == {"code": "X", "message": "m", "details": {}}
    assert JobError("X", "m", {"a": 1}, retryable=True).to_json() == {
        "code": "X",
        "message": "m",
        "details": {"a": 1},
    }
    assert list(JobError("X", "m", {}).to_json()) == ["code", "message", "details"]


@pytest.mark.parametrize(
    "body",
    [
        {"code": "X", "message": "m"},
        {"code": "X", "message": "m", "details": {}},
        {"code": "X", "message": "m", "details": {"field": "sql"}},
    ],
)
def test_the_json_reads_back_as_it_was(body: dict[str, Any]) -> None:
    assert JobError.from_json(body).to_json() == body


def test_a_refusal_keeps_its_details_empty_or_not() -> None:
    refused = NotFound("gone", details={"job": "j"})
    assert JobError.of(refused) == JobError("NOT_FOUND", "gone", {"job": "j"})
    assert JobError.of(CoreError("bad")).to_json() == {
        "code": "VALIDATION_ERROR",
        "message": "bad",
        "details": {},
    }
    # A worker's errors have always left empty details out.
    assert JobError.of(CoreError("bad"), empty_details=False).to_json() == {
        "code": "VALIDATION_ERROR",
        "message": "bad",
    }
    assert job_error(CoreError("bad")).to_json() == {"code": "VALIDATION_ERROR", "message": "bad"}


def test_an_internal_error_says_nothing_of_itself() -> None:
    assert JobError.internal().to_json() == {
        "code": INTERNAL_ERROR,
        "message": "The statement failed because of an internal error; it was logged.",
        "details": {},
    }
    assert not JobError.internal().retryable


def test_a_transition_stores_the_json_and_the_api_returns_it(alice_api) -> None:
    session = open_session(alice_api)
    job = submit(session["id"], spark_plan())
    error = JobError("X", "went wrong", {"n": 1}, retryable=True)
    lifecycle.transition(job.id, jobstate.CREATED, jobstate.FAILED, error=error)
    expected = {"code": "X", "message": "went wrong", "details": {"n": 1}}
    assert Job.objects.get(pk=job.id).error == expected
    assert JobEvent.objects.get(job_id=job.id, type="failed").detail["error"] == expected
    assert alice_api.get(f"{API}/jobs/{job.id}").json()["error"] == expected


def test_a_refused_statement_fails_with_the_planners_error(alice_api) -> None:
    session = Session.objects.select_related("user").get(pk=open_session(alice_api)["id"])
    failed = statements.fail_job(statements.new_job(session, "SELEC 1"), JobError("X", "m"))
    assert Job.objects.get(pk=failed.pk).error == {"code": "X", "message": "m"}


@pytest.mark.django_db
def test_a_job_deleted_while_it_was_held_is_not_found(alice: Any) -> None:
    # A held result page reloads its job on each wake-up: a deleted job is a 404, not a 500.
    import uuid

    from jobs.selectors import reload_job

    with pytest.raises(NotFound, match="no longer exists"):
        reload_job(uuid.uuid4())
