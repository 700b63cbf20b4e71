"""``GET /jobs/{id}`` as a long-poll: ``ETag``, ``If-None-Match`` and ``wait``.

The browser follows a job this way instead of polling it: the request is held until the
job differs from the version the client holds, woken by the job's notifications
(``jobs.notify``). The fallback re-read is raised to a minute here, so an answer that
arrives with the new state was woken by the notification.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection

from core import jobstate
from jobs import lifecycle, notify, selectors
from jobs.models import Job
from sessions import services
from tests.conftest import API, assert_error


@pytest.fixture(autouse=True)
def slow_fallback(settings) -> None:
    settings.TESSERA_NOTIFY_FALLBACK_SECONDS = 60


def make_job(user: Any, status: str = jobstate.CREATED) -> Job:
    session = services.session_create(user=user)
    return Job.objects.create(
        session=session, user=user, sql="SELECT 1", kind="query", status=status
    )


def etag_of(response: Any) -> str:
    etag = response["ETag"]
    assert etag.startswith('"') and etag.endswith('"') and len(etag) > 10, etag
    return str(etag)


def start_follower(client: Any, job: Job, etag: str) -> tuple[threading.Thread, list[Any]]:
    """A thread holding ``GET /jobs/{id}?wait=30`` with ``etag``; its answer lands in the list."""
    answers: list[Any] = []

    def follow() -> None:
        try:
            answers.append(client.get(f"{API}/jobs/{job.id}?wait=30", HTTP_IF_NONE_MATCH=etag))
        finally:
            connection.close()

    follower = threading.Thread(target=follow)
    follower.start()
    return follower, answers


@pytest.mark.django_db
def test_the_job_carries_an_etag_and_an_unchanged_job_answers_304(alice_api, alice) -> None:
    job = make_job(alice)
    first = alice_api.get(f"{API}/jobs/{job.id}")
    assert first.status_code == 200 and first.json()["status"] == "CREATED"
    assert first["Cache-Control"] == "no-cache"
    etag = etag_of(first)
    again = alice_api.get(f"{API}/jobs/{job.id}", HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304 and again.content == b""
    assert again["ETag"] == etag
    # Weak and listed forms name the same version.
    weak = alice_api.get(f"{API}/jobs/{job.id}", HTTP_IF_NONE_MATCH=f'W/{etag}, "other"')
    assert weak.status_code == 304
    # A change of what the job shows is a new version.
    Job.objects.filter(pk=job.pk).update(progress={"tasks_total": 4, "tasks_done": 1})
    changed = alice_api.get(f"{API}/jobs/{job.id}", HTTP_IF_NONE_MATCH=etag)
    assert changed.status_code == 200 and changed.json()["progress"]["tasks_done"] == 1
    assert etag_of(changed) != etag


@pytest.mark.django_db(transaction=True)
def test_a_held_request_answers_as_soon_as_the_job_changes(alice_api, alice) -> None:
    job = make_job(alice)
    etag = etag_of(alice_api.get(f"{API}/jobs/{job.id}"))
    with notify.watch([job.pk], (notify.STATUS,)):  # the listener is up before the change
        follower, answers = start_follower(alice_api, job, etag)
        # The follower is held (no answer) until the job changes.
        follower.join(0.5)
        assert not answers
        lifecycle.transition(job.pk, jobstate.CREATED, jobstate.RUNNING)
        follower.join(40)
    assert len(answers) == 1
    answer = answers[0]
    assert answer.status_code == 200, answer.content
    assert answer.json()["status"] == "RUNNING"
    assert etag_of(answer) != etag


@pytest.mark.django_db(transaction=True)
def test_a_cancel_request_wakes_a_held_request_too(alice_api, alice) -> None:
    job = make_job(alice, jobstate.RUNNING)
    etag = etag_of(alice_api.get(f"{API}/jobs/{job.id}"))
    follower, answers = start_follower(alice_api, job, etag)
    follower.join(0.5)
    assert not answers
    assert alice_api.post(f"{API}/jobs/{job.id}/cancel").status_code == 200
    follower.join(40)
    assert len(answers) == 1 and answers[0].status_code == 200
    assert answers[0].json()["status"] == "RUNNING"  # its worker ends it; the version moved


@pytest.mark.django_db
def test_an_ended_job_is_never_held(alice_api, alice, settings) -> None:
    job = make_job(alice, jobstate.FINISHED)
    etag = etag_of(alice_api.get(f"{API}/jobs/{job.id}"))
    # Held, it would wait 30 s; the test's own timeout (pytest-timeout) would end it first
    # if it were.
    answer = alice_api.get(f"{API}/jobs/{job.id}?wait=30", HTTP_IF_NONE_MATCH=etag)
    assert answer.status_code == 304


@pytest.mark.django_db
@pytest.mark.parametrize("wait", ["abc", "-1", "31", "nan", "inf", "1e400", "0x10", "true"])
def test_a_wait_that_is_not_0_to_30_seconds_is_a_400(alice_api, alice, wait: str) -> None:
    job = make_job(alice)
    response = alice_api.get(f"{API}/jobs/{job.id}?wait={wait}")
    error = assert_error(response, 400, "VALIDATION_ERROR", "wait")
    assert error["details"]["field"] == "wait"


@pytest.mark.django_db
def test_another_users_job_is_404_with_or_without_wait(bob_api, alice) -> None:
    job = make_job(alice)
    assert_error(bob_api.get(f"{API}/jobs/{job.id}?wait=30"), 404, "NOT_FOUND")
    assert_error(
        bob_api.get(f"{API}/jobs/{job.id}?wait=30", HTTP_IF_NONE_MATCH='"x"'), 404, "NOT_FOUND"
    )


@pytest.mark.django_db
def test_a_process_holds_only_so_many_requests_at_once(settings) -> None:
    """Past the limit a request is answered at once (threads stay free for other users)."""
    selectors.set_held_limit(2)
    try:
        with selectors.held(30) as first, selectors.held(30) as second, selectors.held(30) as third:
            assert (first, second, third) == (30, 30, 0)
        with selectors.held(30) as again:  # released: free again
            assert again == 30
        with selectors.held(0) as none:
            assert none == 0
    finally:
        selectors.set_held_limit(settings.TESSERA_HELD_REQUESTS_PER_PROCESS)
