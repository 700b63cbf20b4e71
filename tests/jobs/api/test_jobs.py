"""Jobs: listing, isolation, cancel, events, hooks, transitions, enqueueing, reaping.

Jobs here are made through the services with plans built by hand (the same dicts the
planner makes), so that these tests do not depend on SQL parsing.
"""

from __future__ import annotations

import threading
import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core import jobstate
from core.jobstate import IllegalTransition, JobView, NoOpHook
from jobs import dispatch, lifecycle
from jobs.models import Job, JobEvent, Session
from sessions import statements
from tests.conftest import API, assert_error

pytestmark = pytest.mark.django_db


# --- fixtures --------------------------------------------------------------------------------


class SentTasks(list[tuple[str, list[Any]]]):
    fail_with: Exception | None = None


@pytest.fixture(autouse=True)
def sent_tasks(monkeypatch) -> SentTasks:
    """Record what would go to the broker (and keep the shared Redis out of these tests)."""
    from webapp.celery import app

    sent = SentTasks()

    def send_task(name: str, args: list[Any] | None = None, **kwargs: Any) -> None:
        if sent.fail_with is not None:
            raise sent.fail_with
        sent.append((name, list(args or [])))

    monkeypatch.setattr(app, "send_task", send_task)
    return sent


@pytest.fixture(autouse=True)
def results_dir(settings, tmp_path):
    settings.RESULTS_DIR = tmp_path / "results"
    return settings.RESULTS_DIR


class RecordingHook(NoOpHook):
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str]] = []
        self.lock = threading.Lock()

    def _note(self, method: str, job: JobView, record: Any) -> None:
        with self.lock:
            self.calls.append((method, job.id, job.status))
        record("hook_saw", {"method": method})

    def on_created(self, job: JobView, record: Any) -> None:
        self._note("on_created", job, record)

    def on_running(self, job: JobView, record: Any) -> None:
        self._note("on_running", job, record)

    def on_finished(self, job: JobView, record: Any) -> None:
        self._note("on_finished", job, record)

    def on_failed(self, job: JobView, record: Any) -> None:
        self._note("on_failed", job, record)

    def on_canceled(self, job: JobView, record: Any) -> None:
        self._note("on_canceled", job, record)


@pytest.fixture
def hook():
    recording = RecordingHook()
    lifecycle.register_hook(recording)
    yield recording
    lifecycle.unregister_hook(recording)


def open_session(client, **body: Any) -> dict[str, Any]:
    response = client.post(f"{API}/sessions", body)
    assert response.status_code == 201, response.content
    return dict(response.json())


def spark_plan(sql: str = "SELECT 1") -> dict[str, Any]:
    return {
        "kind": "query",
        "action": "query",
        "needs_spark": True,
        "sql": sql,
        "relations": [],
        "functions": [],
        "target": None,
        "args": {},
    }


def command_plan(action: str, kind: str = "show", **args: Any) -> dict[str, Any]:
    return {
        "kind": kind,
        "action": action,
        "needs_spark": False,
        "sql": "",
        "relations": [],
        "functions": [],
        "target": None,
        "args": args,
    }


def submit(session_id: str, plan: dict[str, Any], sql: str = "SELECT 1") -> Job:
    session = Session.objects.select_related("user").get(pk=session_id)
    return statements.submit_plan(session=session, sql=sql, plan=plan)


def event_types(client, job_id: Any) -> list[str]:
    response = client.get(f"{API}/jobs/{job_id}/events")
    assert response.status_code == 200, response.content
    return [event["type"] for event in response.json()["items"]]


# --- the job JSON, listing and isolation -----------------------------------------------------


def test_a_spark_job_waits_created_with_the_job_json_of_the_contract(alice_api):
    session = open_session(alice_api)
    job = submit(session["id"], spark_plan("SELECT 42"), sql="SELECT 42")
    body = alice_api.get(f"{API}/jobs/{job.id}").json()
    assert set(body) == {
        "id",
        "session",
        "parent",
        "user",
        "sql",
        "kind",
        "status",
        "target",
        "progress",
        "error",
        "created_at",
        "started_at",
        "finished_at",
        "result",
        "parameters",
        "streaming",
        "engine",
        "origin",
    }
    assert body["streaming"] is False
    assert body["engine"] is None  # no worker ran it yet
    assert body["origin"] == "user"  # a user's statement (a scheduled run says "schedule")
    assert body["id"] == str(job.id)
    assert body["session"] == session["id"]
    assert body["user"] == "alice"
    assert body["sql"] == "SELECT 42"
    assert body["kind"] == "query"
    assert body["status"] == "CREATED"
    assert body["target"] is None
    assert body["progress"] == {
        "stages_total": 0,
        "stages_done": 0,
        "tasks_total": 0,
        "tasks_done": 0,
        "stages": None,
    }
    assert body["error"] is None and body["result"] is None
    assert body["started_at"] is None and body["finished_at"] is None
    assert event_types(alice_api, job.id) == ["created"]


def test_the_job_takes_its_timeout_from_the_session_or_the_setting(alice_api, settings):
    settings.TESSERA_JOB_TIMEOUT_SECONDS = 77
    plain = open_session(alice_api)
    tuned = open_session(alice_api, properties={"job.timeout_seconds": "5"})
    assert submit(plain["id"], spark_plan()).timeout_seconds == 77
    assert submit(tuned["id"], spark_plan()).timeout_seconds == 5


def test_others_jobs_are_not_found(alice_api, bob_api):
    session = open_session(alice_api)
    job = submit(session["id"], spark_plan())
    for url in (f"jobs/{job.id}", f"jobs/{job.id}/events", f"jobs/{job.id}/result"):
        assert_error(bob_api.get(f"{API}/{url}"), 404, "NOT_FOUND", str(job.id))
    assert_error(bob_api.post(f"{API}/jobs/{job.id}/cancel"), 404, "NOT_FOUND")
    assert_error(bob_api.get(f"{API}/jobs/{job.id}/result.csv"), 404, "NOT_FOUND")
    assert bob_api.get(f"{API}/jobs").json() == {"items": [], "next_page_token": None}
    assert Job.objects.get(pk=job.id).status == "CREATED"  # bob's cancel did nothing


def test_unknown_and_malformed_job_ids_are_not_found(alice_api):
    assert_error(alice_api.get(f"{API}/jobs/{uuid.uuid4()}"), 404, "NOT_FOUND")
    assert_error(alice_api.get(f"{API}/jobs/not-a-uuid"), 404, "NOT_FOUND", "not-a-uuid")


def test_jobs_list_newest_first_with_filters_and_pages(alice_api, bob_api):
    first = open_session(alice_api)
    second = open_session(alice_api)
    made = [submit(first["id"], spark_plan(f"SELECT {i}")) for i in range(3)]
    made.append(submit(second["id"], command_plan("show_catalogs", like=None)))
    submit(open_session(bob_api)["id"], spark_plan())
    newest_first = [str(job.id) for job in reversed(made)]

    listed = alice_api.get(f"{API}/jobs").json()
    assert [item["id"] for item in listed["items"]] == newest_first
    assert listed["next_page_token"] is None

    seen: list[str] = []
    token = None
    while True:
        query = f"?page_size=1{f'&page_token={token}' if token else ''}"
        page = alice_api.get(f"{API}/jobs{query}").json()
        seen += [item["id"] for item in page["items"]]
        token = page["next_page_token"]
        if token is None:
            break
    assert seen == newest_first

    by_session = alice_api.get(f"{API}/jobs?session={second['id']}").json()["items"]
    assert [item["id"] for item in by_session] == [str(made[3].id)]
    finished = alice_api.get(f"{API}/jobs?status=finished").json()["items"]
    assert [item["id"] for item in finished] == [str(made[3].id)]
    created = alice_api.get(f"{API}/jobs?status=CREATED&kind=query").json()["items"]
    assert len(created) == 3
    both = alice_api.get(f"{API}/jobs?status=CREATED,FINISHED").json()["items"]
    assert len(both) == 4
    assert alice_api.get(f"{API}/jobs?kind=show").json()["items"][0]["kind"] == "show"

    assert_error(alice_api.get(f"{API}/jobs?status=DONE"), 400, "VALIDATION_ERROR", "DONE")
    assert_error(alice_api.get(f"{API}/jobs?session=nope"), 400, "VALIDATION_ERROR", "nope")
    assert_error(alice_api.get(f"{API}/jobs?page_token=xyz"), 400, "VALIDATION_ERROR")


def test_jobs_list_costs_the_same_queries_for_any_page_size(alice_api):
    session = open_session(alice_api)
    for i in range(3):
        submit(session["id"], spark_plan(f"SELECT {i}"))

    def count(size: int) -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert alice_api.get(f"{API}/jobs?page_size={size}").status_code == 200
        return len(ctx.captured_queries)

    small = count(1)
    for i in range(10):
        submit(session["id"], spark_plan(f"SELECT {i}"))
    assert count(50) == small


# --- cancel ----------------------------------------------------------------------------------


def test_cancel_a_created_job_cancels_it_and_the_workers_claim_loses(alice_api, hook):
    session = open_session(alice_api)
    job = submit(session["id"], spark_plan())
    response = alice_api.post(f"{API}/jobs/{job.id}/cancel")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "CANCELED"
    assert body["error"]["code"] == "CANCELED"
    assert "alice" in body["error"]["message"]
    assert body["finished_at"] is not None and body["started_at"] is None
    # The worker's claim (CREATED → RUNNING) now changes no row and runs no hook.
    before = list(hook.calls)
    assert lifecycle.try_transition(job.id, jobstate.CREATED, jobstate.RUNNING) is None
    assert hook.calls == before
    assert Job.objects.get(pk=job.id).status == "CANCELED"
    assert [call[0] for call in hook.calls] == ["on_created", "on_canceled"]
    assert event_types(alice_api, job.id) == ["created", "hook_saw", "canceled", "hook_saw"]


def test_cancel_a_running_job_asks_its_worker(alice_api):
    session = open_session(alice_api)
    job = submit(session["id"], spark_plan())
    lifecycle.transition(job.id, jobstate.CREATED, jobstate.RUNNING, worker="w1")
    body = alice_api.post(f"{API}/jobs/{job.id}/cancel").json()
    assert body["status"] == "RUNNING"
    row = Job.objects.get(pk=job.id)
    assert row.cancel_requested is True
    events = alice_api.get(f"{API}/jobs/{job.id}/events").json()["items"]
    assert [e["type"] for e in events] == ["created", "running", "cancel_requested"]
    assert events[-1]["detail"] == {"by": "alice"}
    # Asking twice is harmless and records nothing new.
    assert alice_api.post(f"{API}/jobs/{job.id}/cancel").status_code == 200
    assert event_types(alice_api, job.id) == ["created", "running", "cancel_requested"]
    # The worker stops Spark and ends the job.
    lifecycle.transition(job.id, jobstate.RUNNING, jobstate.CANCELED)
    assert alice_api.get(f"{API}/jobs/{job.id}").json()["status"] == "CANCELED"


def test_cancel_of_an_ended_job_is_409(alice_api):
    session = open_session(alice_api)
    job = submit(session["id"], command_plan("show_catalogs", like=None))
    assert job.status == "FINISHED"
    error = assert_error(
        alice_api.post(f"{API}/jobs/{job.id}/cancel"), 409, "ILLEGAL_TRANSITION", "FINISHED"
    )
    assert "already ended" in error["message"]
    assert Job.objects.get(pk=job.id).status == "FINISHED"


# --- transitions and hooks -------------------------------------------------------------------


def test_a_command_runs_through_every_transition_with_its_hooks_once(alice_api, hook):
    session = open_session(alice_api)
    job = submit(session["id"], command_plan("show_catalogs", like=None))
    assert job.status == "FINISHED"
    assert [(m, s) for m, _, s in hook.calls] == [
        ("on_created", "CREATED"),
        ("on_running", "RUNNING"),
        ("on_finished", "FINISHED"),
    ]
    events = alice_api.get(f"{API}/jobs/{job.id}/events").json()["items"]
    assert [e["type"] for e in events] == [
        "created",
        "hook_saw",
        "running",
        "hook_saw",
        "finished",
        "hook_saw",
    ]
    assert events[2]["detail"] == {"from": "CREATED", "to": "RUNNING"}
    assert events[4]["detail"] == {"from": "RUNNING", "to": "FINISHED"}
    times = [e["at"] for e in events]
    assert times == sorted(times)


def test_events_are_paged(alice_api):
    session = open_session(alice_api)
    job = submit(session["id"], command_plan("show_catalogs", like=None))
    first = alice_api.get(f"{API}/jobs/{job.id}/events?page_size=2").json()
    assert [e["type"] for e in first["items"]] == ["created", "running"]
    rest = alice_api.get(f"{API}/jobs/{job.id}/events?page_token={first['next_page_token']}").json()
    assert [e["type"] for e in rest["items"]] == ["finished"]
    assert rest["next_page_token"] is None


def test_the_transition_service_refuses_illegal_transitions(alice_api, hook):
    session = open_session(alice_api)
    job = submit(session["id"], spark_plan())
    with pytest.raises(IllegalTransition, match="cannot go from CREATED to FINISHED"):
        lifecycle.transition(job.id, jobstate.CREATED, jobstate.FINISHED)
    lifecycle.transition(job.id, jobstate.CREATED, jobstate.FAILED, error={"code": "X"})
    with pytest.raises(IllegalTransition, match="already ended"):
        lifecycle.transition(job.id, jobstate.FAILED, jobstate.RUNNING)
    # A stale "current" status: the row is FAILED, not CREATED.
    with pytest.raises(IllegalTransition, match="is FAILED, not CREATED"):
        lifecycle.transition(job.id, jobstate.CREATED, jobstate.CANCELED)
    assert [m for m, _, _ in hook.calls] == ["on_created", "on_failed"]
    assert Job.objects.get(pk=job.id).status == "FAILED"


@pytest.mark.django_db(transaction=True)
def test_two_racing_transitions_change_exactly_one_row(alice_api, hook):
    session = open_session(alice_api)
    job = submit(session["id"], spark_plan())
    barrier = threading.Barrier(2)
    outcomes: list[Any] = []

    def race(target: str) -> None:
        try:
            barrier.wait()
            outcomes.append((target, lifecycle.try_transition(job.id, jobstate.CREATED, target)))
        finally:
            connection.close()

    threads = [
        threading.Thread(target=race, args=(jobstate.RUNNING,)),
        threading.Thread(target=race, args=(jobstate.CANCELED,)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [target for target, won in outcomes if won is not None]
    assert len(outcomes) == 2 and len(winners) == 1
    assert Job.objects.get(pk=job.id).status == winners[0]
    ended = [m for m, _, _ in hook.calls if m != "on_created"]
    assert ended == [jobstate.HOOK_METHOD[winners[0]]]
    transitions = JobEvent.objects.filter(job_id=job.id, type__in=["running", "canceled"])
    assert transitions.count() == 1


# --- enqueueing ------------------------------------------------------------------------------


def test_a_spark_job_is_enqueued_by_name_once_committed(
    alice_api, sent_tasks, django_capture_on_commit_callbacks
):
    session = open_session(alice_api)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        job = submit(session["id"], spark_plan())
        assert sent_tasks == []  # nothing leaves before the row is committed
    assert len(callbacks) == 1
    assert sent_tasks == [("tessera.run_job", [str(job.id)])]
    row = Job.objects.get(pk=job.id)
    assert row.status == "CREATED" and row.enqueue_count == 1 and row.enqueued_at is not None


def test_a_broker_failure_keeps_the_job_and_says_so(
    alice_api, sent_tasks, django_capture_on_commit_callbacks
):
    from kombu.exceptions import OperationalError

    sent_tasks.fail_with = OperationalError("Error 111 connecting to 127.0.0.1:6399")
    session = open_session(alice_api)
    with django_capture_on_commit_callbacks(execute=True):
        job = submit(session["id"], spark_plan())
    row = Job.objects.get(pk=job.id)
    assert row.status == "CREATED" and row.enqueue_count == 0 and row.enqueued_at is None
    events = alice_api.get(f"{API}/jobs/{job.id}/events").json()["items"]
    assert [e["type"] for e in events] == ["created", "enqueue_failed"]
    assert "Error 111" in events[1]["detail"]["error"]
    # Sending again later (the sweeper's way) works once the broker is back.
    sent_tasks.fail_with = None
    assert dispatch.enqueue(job.id) is True
    assert Job.objects.get(pk=job.id).enqueue_count == 1


# --- reaping ---------------------------------------------------------------------------------


def test_get_of_a_job_with_a_stale_heartbeat_reaps_it(alice_api, settings, hook):
    settings.TESSERA_WORKER_TIMEOUT_SECONDS = 30
    session = open_session(alice_api)
    job = submit(session["id"], spark_plan())
    lifecycle.transition(job.id, jobstate.CREATED, jobstate.RUNNING, worker="gone-worker")
    Job.objects.filter(pk=job.id).update(heartbeat_at=timezone.now() - timedelta(minutes=5))
    body = alice_api.get(f"{API}/jobs/{job.id}").json()
    assert body["status"] == "FAILED"
    assert body["error"]["code"] == "WORKER_LOST"
    assert [m for m, _, _ in hook.calls] == ["on_created", "on_running", "on_failed"]


def test_get_of_a_job_with_a_fresh_heartbeat_leaves_it_running(alice_api):
    session = open_session(alice_api)
    job = submit(session["id"], spark_plan())
    lifecycle.transition(job.id, jobstate.CREATED, jobstate.RUNNING, worker="busy-worker")
    assert alice_api.get(f"{API}/jobs/{job.id}").json()["status"] == "RUNNING"


# --- unexpected failures and the admin -------------------------------------------------------


def test_an_unexpected_error_fails_the_job_without_a_traceback(alice_api, monkeypatch, caplog):
    from sessions import commands

    def broken(job: Any, args: Any) -> Any:
        raise RuntimeError("secret internals")

    monkeypatch.setitem(commands._HANDLERS, "show_catalogs", broken)
    session = open_session(alice_api)
    job = submit(session["id"], command_plan("show_catalogs", like=None))
    body = alice_api.get(f"{API}/jobs/{job.id}").json()
    assert body["status"] == "FAILED"
    assert body["error"]["code"] == "INTERNAL_ERROR"
    assert "secret" not in body["error"]["message"]
    assert "Traceback" not in str(body)
    assert any("secret internals" in (r.exc_text or "") for r in caplog.records)


def test_the_admin_shows_sessions_jobs_and_events_read_only(client, admin, alice_api):
    session = open_session(alice_api)
    job = submit(session["id"], command_plan("show_catalogs", like=None))
    client.force_login(admin)
    page = client.get(f"/admin/jobs/job/{job.id}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "finished" in html and "show_catalogs" in html
    assert 'name="_save"' not in html  # read-only: nothing to save
    for url in ("/admin/jobs/job/", "/admin/jobs/session/", "/admin/jobs/jobevent/"):
        assert client.get(url).status_code == 200, url
    assert client.get("/admin/jobs/job/add/").status_code == 403
