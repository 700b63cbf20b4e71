"""Streams and workers without a worker (docs/streaming.md): hand-made job rows and
heartbeat rows on the real database, moved as a worker and the reaper would.

- A RUNNING stream whose worker process is gone is requeued (RUNNING → CREATED, event
  ``worker_lost``, no hooks, staging and stage table kept, a message sent); the next claim
  resumes it (event ``resumed``, first start kept). A batch job still fails WORKER_LOST.
- The restart bound (``TESSERA_STREAM_MAX_RESTARTS``), a cancel asked before the worker
  died, a cancel of a requeued stream.
- Stream slots: a worker takes at most its ``stream_slots`` streams (never its last slot);
  a streaming statement with no slot free on any live worker is ``TOO_MANY_STREAMS``.

The real thing (a worker killed under a running stream) is
tests/engine/worker/test_stream_recovery.py.
"""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.utils import timezone

from catalog.models import Table
from core import jobstate
from core.errors import TooManyStreams
from core.jobstate import JobView, NoOpHook, Record
from jobs import lifecycle, maintenance, scheduling, worker
from jobs import services as job_services
from jobs.models import Job, JobEvent, Session, Worker
from sessions import statements
from tests.conftest import API, assert_error
from tests.races import LockWait

pytestmark = pytest.mark.django_db

STREAMING = {"trigger_ms": 1000}


@pytest.fixture(autouse=True)
def sent_tasks(monkeypatch) -> list[Any]:
    """What would go to the broker (the shared Redis stays out of these tests)."""
    from webapp.celery import app

    sent: list[Any] = []
    monkeypatch.setattr(app, "send_task", lambda name, args=None, **_: sent.append(args[0]))
    return sent


@pytest.fixture(autouse=True)
def limits(settings) -> Any:
    settings.TESSERA_USER_RUNNING_JOBS = 0
    settings.TESSERA_STREAM_MAX_RESTARTS = 5
    settings.TESSERA_WORKER_MAX_STREAMS = 2
    return settings


class Recording(NoOpHook):
    """Which hook methods ran, per job."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def on_created(self, job: JobView, record: Record) -> None:
        self.calls.append(("created", job.id))

    def on_running(self, job: JobView, record: Record) -> None:
        self.calls.append(("running", job.id))

    def on_failed(self, job: JobView, record: Record) -> None:
        self.calls.append(("failed", job.id))

    def on_canceled(self, job: JobView, record: Record) -> None:
        self.calls.append(("canceled", job.id))


@pytest.fixture
def hooks() -> Any:
    hook = Recording()
    lifecycle.register_hook(hook)
    yield hook
    lifecycle.unregister_hook(hook)


def _plan(streaming: bool = True, sql: str = "SELECT * FROM s") -> dict[str, Any]:
    return {
        "kind": "query",
        "action": "query",
        "needs_spark": True,
        "sql": sql,
        "relations": [],
        "functions": [],
        "target": None,
        "args": {"streaming": dict(STREAMING)} if streaming else {},
    }


def _user(name: str = "alice") -> User:
    user, _ = User.objects.get_or_create(username=name)
    return user


def _worker(identity: str, stream_slots: int = 2, *, alive: bool = True) -> Worker:
    """A heartbeat row: fresh, or stopped (its process found gone)."""
    now = timezone.now()
    return Worker.objects.create(
        hostname=identity,
        node=identity.split("/")[0],
        pid=4242,
        started_at=now - timedelta(minutes=5),
        last_heartbeat=now,
        stopped_at=None if alive else now,
        stream_slots=stream_slots,
    )


def _job(
    status: str = jobstate.CREATED, *, streaming: bool = True, worker_: str = "", **fields: Any
) -> Job:
    fields.setdefault("plan", _plan(streaming))
    if status == jobstate.RUNNING:
        now = timezone.now()
        fields.setdefault("started_at", now - timedelta(minutes=1))
        fields.setdefault("heartbeat_at", now)
    return Job.objects.create(
        user=_user(), sql="SELECT * FROM s", kind="query", status=status, worker=worker_, **fields
    )


def _types(job: Job) -> list[str]:
    return list(JobEvent.objects.filter(job=job).order_by("id").values_list("type", flat=True))


def _event(job: Job, type_: str) -> dict[str, Any]:
    found = JobEvent.objects.filter(job=job, type=type_).order_by("-id").first()
    assert found is not None, f"no {type_} event in {_types(job)}"
    return dict(found.detail)


def _lose(job: Job, n: int) -> None:
    """``n`` earlier requeues after lost workers, as the reaper records them."""
    for i in range(n):
        lifecycle.record_event(job.pk, "worker_lost", {"restart": i + 1})


# --- the pure decision --------------------------------------------------------------------------


def test_stream_slots_leave_the_last_slot_to_interactive_work() -> None:
    assert worker.stream_slots_for(2, 4) == 2
    assert worker.stream_slots_for(5, 4) == 3  # never all four
    assert worker.stream_slots_for(2, 2) == 1
    assert worker.stream_slots_for(2, 1) == 0  # one slot: no streams at all
    assert worker.stream_slots_for(0, 8) == 0
    assert worker.stream_slots_for(-3, 8) == 0
    assert worker.stream_slots_for(2, None) == 2  # concurrency not known


# --- a lost worker ------------------------------------------------------------------------------


def test_a_stream_whose_worker_is_gone_is_requeued_without_hooks(sent_tasks, hooks) -> None:
    _worker("w1@h/1/a", alive=False)
    job = _job(jobstate.RUNNING, worker_="w1@h/1/a", staging={"x": {"final": "/somewhere"}})
    started = Job.objects.get(pk=job.pk).started_at

    assert maintenance.reap_lost_jobs() == [str(job.pk)]

    row = Job.objects.get(pk=job.pk)
    assert row.status == jobstate.CREATED
    assert row.worker == "" and row.heartbeat_at is None and row.error is None
    assert row.started_at == started  # its first start: the mark of a requeued job
    assert row.staging == {"x": {"final": "/somewhere"}}  # kept for the resumed run
    assert _types(job) == ["worker_lost"]
    lost = _event(job, "worker_lost")
    assert lost["from"] == "RUNNING" and lost["to"] == "CREATED"
    assert lost["worker"] == "w1@h/1/a"
    assert lost["restart"] == 1 and lost["max_restarts"] == 5
    assert "resume it from its checkpoint" in lost["message"]
    assert hooks.calls == []  # no CREATED hooks again (a CTAS's stage table exists already)
    assert sent_tasks == [str(job.pk)]  # a worker is told at once
    assert Job.objects.get(pk=job.pk).enqueue_count == 1
    # Reaping again finds nothing: it is not RUNNING any more.
    assert maintenance.reap_lost_jobs() == []


def test_a_stream_whose_heartbeat_is_stale_is_requeued_too(settings) -> None:
    old = timezone.now() - timedelta(seconds=settings.TESSERA_WORKER_TIMEOUT_SECONDS * 3)
    job = _job(jobstate.RUNNING, worker_="w9@h/9/z", heartbeat_at=old)  # no worker row
    assert maintenance.reap_lost_jobs(job.pk) == [str(job.pk)]
    assert Job.objects.get(pk=job.pk).status == jobstate.CREATED


def test_a_stream_of_a_live_worker_is_left_alone(settings) -> None:
    _worker("w1@h/1/a")
    old = timezone.now() - timedelta(seconds=settings.TESSERA_WORKER_TIMEOUT_SECONDS * 3)
    job = _job(jobstate.RUNNING, worker_="w1@h/1/a", heartbeat_at=old)
    assert maintenance.reap_lost_jobs() == []
    assert Job.objects.get(pk=job.pk).status == jobstate.RUNNING


def test_a_batch_job_whose_worker_is_gone_still_fails(hooks, sent_tasks) -> None:
    _worker("w1@h/1/a", alive=False)
    job = _job(jobstate.RUNNING, streaming=False, worker_="w1@h/1/a")
    assert maintenance.reap_lost_jobs() == [str(job.pk)]
    row = Job.objects.get(pk=job.pk)
    assert row.status == jobstate.FAILED
    assert row.error is not None and row.error["code"] == "WORKER_LOST"
    assert row.error["message"] == "Worker w1@h/1/a stopped responding while the job was running."
    assert _types(job) == ["failed"]
    assert hooks.calls == [("failed", str(job.pk))]
    assert sent_tasks == []


def test_a_stream_lost_after_its_last_restart_fails(settings, hooks, sent_tasks) -> None:
    _worker("w1@h/1/a", alive=False)
    job = _job(jobstate.RUNNING, worker_="w1@h/1/a")
    _lose(job, 5)  # resumed five times already: the default bound
    assert maintenance.reap_lost_jobs() == [str(job.pk)]
    row = Job.objects.get(pk=job.pk)
    assert row.status == jobstate.FAILED
    assert row.error is not None and row.error["code"] == "WORKER_LOST"
    assert "resumed 5 times" in row.error["message"]
    assert "TESSERA_STREAM_MAX_RESTARTS" in row.error["message"]
    assert row.error["details"] == {"worker": "w1@h/1/a", "restarts": 5, "max_restarts": 5}
    assert hooks.calls == [("failed", str(job.pk))]  # the FAILED hooks run
    assert sent_tasks == []


def test_one_restart_left_is_taken(settings) -> None:
    _worker("w1@h/1/a", alive=False)
    job = _job(jobstate.RUNNING, worker_="w1@h/1/a")
    _lose(job, 4)
    assert maintenance.reap_lost_jobs() == [str(job.pk)]
    assert Job.objects.get(pk=job.pk).status == jobstate.CREATED
    assert _event(job, "worker_lost")["restart"] == 5


def test_no_restarts_when_the_bound_is_zero(settings) -> None:
    settings.TESSERA_STREAM_MAX_RESTARTS = 0
    _worker("w1@h/1/a", alive=False)
    job = _job(jobstate.RUNNING, worker_="w1@h/1/a")
    assert maintenance.reap_lost_jobs() == [str(job.pk)]
    row = Job.objects.get(pk=job.pk)
    assert row.status == jobstate.FAILED and row.error is not None
    assert "TESSERA_STREAM_MAX_RESTARTS is 0" in row.error["message"]


def test_a_stream_whose_cancel_was_asked_ends_canceled_not_requeued(hooks, sent_tasks) -> None:
    _worker("w1@h/1/a", alive=False)
    job = _job(jobstate.RUNNING, worker_="w1@h/1/a", cancel_requested=True)
    assert maintenance.reap_lost_jobs() == [str(job.pk)]
    row = Job.objects.get(pk=job.pk)
    assert row.status == jobstate.CANCELED
    assert row.error is not None and row.error["code"] == "CANCELED"
    assert "being canceled" in row.error["message"]
    assert hooks.calls == [("canceled", str(job.pk))]
    assert sent_tasks == []


def test_an_orphan_stream_of_a_live_worker_is_requeued(sent_tasks) -> None:
    _worker("w1@h/1/a")
    job = _job(
        jobstate.RUNNING, worker_="w1@h/1/a", started_at=timezone.now() - timedelta(minutes=1)
    )
    batch = _job(jobstate.RUNNING, streaming=False, worker_="w1@h/1/a")
    failed = maintenance.fail_orphaned_jobs("w1@h/1/a", running_here=set())
    assert sorted(failed) == sorted([str(job.pk), str(batch.pk)])
    assert Job.objects.get(pk=job.pk).status == jobstate.CREATED
    assert Job.objects.get(pk=batch.pk).status == jobstate.FAILED
    assert "lost track of the job" in _event(job, "worker_lost")["message"]
    assert sent_tasks == [str(job.pk)]


# --- resuming -----------------------------------------------------------------------------------


def test_the_next_claim_resumes_a_requeued_stream(hooks) -> None:
    _worker("w1@h/1/a", alive=False)
    _worker("w2@h/2/b")
    job = _job(jobstate.RUNNING, worker_="w1@h/1/a")
    first_start = Job.objects.get(pk=job.pk).started_at
    maintenance.reap_lost_jobs()

    claimed = scheduling.claim_next("w2@h/2/b")

    assert claimed is not None and claimed.pk == job.pk
    row = Job.objects.get(pk=job.pk)
    assert row.status == jobstate.RUNNING and row.worker == "w2@h/2/b"
    assert row.started_at == first_start
    assert _types(job) == ["worker_lost", "running", "resumed"]
    assert _event(job, "resumed") == {"worker": "w2@h/2/b", "restart": 1}
    assert hooks.calls == [("running", str(job.pk))]  # a new RUNNING: its hooks, not CREATED's


def test_a_new_stream_claimed_the_first_time_is_not_resumed() -> None:
    _worker("w2@h/2/b")
    job = _job()
    claimed = scheduling.claim_next("w2@h/2/b")
    assert claimed is not None and claimed.pk == job.pk
    assert _types(job) == ["running"]


def test_canceling_a_requeued_stream_ends_it_at_once_with_the_cancel_hooks(hooks) -> None:
    _worker("w1@h/1/a", alive=False)
    job = _job(jobstate.RUNNING, worker_="w1@h/1/a")
    maintenance.reap_lost_jobs()
    alice = _user()

    canceled = job_services.job_cancel(user=alice, job=Job.objects.get(pk=job.pk))

    assert canceled.status == jobstate.CANCELED
    assert canceled.error is not None
    assert canceled.error["message"] == (
        "Canceled by alice while it waited to resume after its worker was lost."
    )
    assert _types(job) == ["worker_lost", "canceled"]
    assert hooks.calls == [("canceled", str(job.pk))]
    assert scheduling.claim_next("w2@h/2/b") is None


# --- a streaming CTAS keeps its stage table over a requeue ---------------------------------------


def _ctas_plan(name: str) -> dict[str, Any]:
    ident = ["demo", "sales", name]
    return {
        "kind": "ctas",
        "action": "ctas",
        "needs_spark": True,
        "sql": "SELECT * FROM s",
        "relations": [],
        "functions": [],
        "target": ident,
        "args": {
            "identifier": ident,
            "if_not_exists": False,
            "options": {"format": "parquet"},
            "partition_by": [],
            "comment": "",
            "atomic": False,
            "streaming": dict(STREAMING),
        },
    }


@pytest.fixture
def session(make, alice) -> Session:
    make.catalog("demo")
    make.database("demo", "sales")
    return Session.objects.create(
        user=alice,
        current_catalog="demo",
        current_database="sales",
        last_used_at=timezone.now(),
        idle_timeout_seconds=3600,
    )


def test_a_requeued_streaming_ctas_keeps_its_table_and_staging(session) -> None:
    _worker("w1@h/1/a")
    session = Session.objects.select_related("user").get(pk=session.pk)
    job = statements.submit_plan(session=session, sql="CREATE TABLE t AS …", plan=_ctas_plan("t"))
    assert job.status == jobstate.CREATED, job.error
    staging = Job.objects.get(pk=job.pk).staging
    assert staging
    claimed = scheduling.claim_next("w1@h/1/a")
    assert claimed is not None and claimed.pk == job.pk
    Worker.objects.filter(hostname="w1@h/1/a").update(stopped_at=timezone.now())

    assert maintenance.reap_lost_jobs() == [str(job.pk)]

    row = Job.objects.get(pk=job.pk)
    assert row.status == jobstate.CREATED and row.staging == staging
    assert Table.objects.filter(name="t").count() == 1  # its table stays
    assert _types(job) == ["created", "stage_table_created", "running", "worker_lost"]
    _worker("w2@h/2/b")
    resumed = scheduling.claim_next("w2@h/2/b")
    assert resumed is not None and resumed.pk == job.pk
    assert Table.objects.filter(name="t").count() == 1  # not created a second time


# --- stream slots: the claim --------------------------------------------------------------------


def test_a_worker_with_its_stream_slots_full_passes_streams_over() -> None:
    _worker("w1@h/1/a", stream_slots=1)
    _job(jobstate.RUNNING, worker_="w1@h/1/a")  # its one stream
    stream = _job()
    batch = _job(streaming=False)
    Job.objects.filter(pk=stream.pk).update(created_at=timezone.now() - timedelta(minutes=1))

    claimed = scheduling.claim_next("w1@h/1/a")
    assert claimed is not None and claimed.pk == batch.pk  # the older stream is passed over
    assert scheduling.claim_next("w1@h/1/a") is None
    assert Job.objects.get(pk=stream.pk).status == jobstate.CREATED

    _worker("w2@h/2/b", stream_slots=1)  # a worker with a stream slot free takes it
    claimed = scheduling.claim_next("w2@h/2/b")
    assert claimed is not None and claimed.pk == stream.pk
    assert scheduling.claim_next("w2@h/2/b") is None


def test_a_worker_without_stream_slots_takes_no_stream_at_all() -> None:
    _worker("w1@h/1/a", stream_slots=0)  # --concurrency 1, or TESSERA_WORKER_MAX_STREAMS=0
    _job()
    assert scheduling.claim_next("w1@h/1/a") is None


def test_a_stream_ending_frees_its_slot() -> None:
    _worker("w1@h/1/a", stream_slots=1)
    running = _job(jobstate.RUNNING, worker_="w1@h/1/a")
    waiting = _job()
    assert scheduling.claim_next("w1@h/1/a") is None
    lifecycle.transition(running.pk, jobstate.RUNNING, jobstate.CANCELED)
    claimed = scheduling.claim_next("w1@h/1/a")
    assert claimed is not None and claimed.pk == waiting.pk


def _alone() -> None:
    """Committed rows (``transactional_db``) are seen by a live test worker, whose claims and
    stream slots would count: the shared worker is stopped (``own_workers_only``) and its
    heartbeat rows go."""
    Worker.objects.all().delete()


def test_racing_claims_keep_a_workers_stream_limit(transactional_db, own_workers_only) -> None:
    _alone()
    _worker("w1@h/1/a", stream_slots=2)
    for _ in range(6):
        _job()
    start = threading.Barrier(4)

    def claimer() -> None:
        try:
            start.wait()
            for _ in range(3):
                scheduling.claim_next("w1@h/1/a")
        finally:
            connection.close()

    threads = [threading.Thread(target=claimer) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert Job.objects.filter(status=jobstate.RUNNING, worker="w1@h/1/a").count() == 2


def test_the_sweeper_resends_a_waiting_stream_without_backing_off(settings, sent_tasks) -> None:
    settings.TESSERA_SWEEP_AFTER_SECONDS = 1
    stream = _job()
    batch = _job(streaming=False)
    long_ago = timezone.now() - timedelta(seconds=10)
    Job.objects.filter(pk__in=[stream.pk, batch.pk]).update(
        created_at=long_ago, enqueued_at=long_ago, enqueue_count=5
    )
    # Sent 5 times: a batch job now waits 16 s between messages, a stream only 1 s.
    assert maintenance.sweep_unclaimed_jobs() == [str(stream.pk)]


# --- stream slots: admission ----------------------------------------------------------------------


def _submit_stream(session: Session, sql: str = "SELECT * FROM s") -> Job:
    found = Session.objects.select_related("user").get(pk=session.pk)
    return statements.submit_plan(session=found, sql=sql, plan=_plan())


@pytest.fixture
def plain_session(alice) -> Session:
    return Session.objects.create(user=alice, last_used_at=timezone.now(), idle_timeout_seconds=60)


def test_a_stream_is_admitted_while_a_live_worker_has_a_slot(plain_session) -> None:
    _worker("w1@h/1/a", stream_slots=2)
    _worker("w2@h/2/b", stream_slots=1, alive=False)  # a stopped worker's slots do not count
    first, second = _submit_stream(plain_session), _submit_stream(plain_session)
    assert first.status == second.status == jobstate.CREATED
    before = Job.objects.count()
    with pytest.raises(TooManyStreams) as caught:
        _submit_stream(plain_session)
    assert Job.objects.count() == before  # nothing created
    error = caught.value
    assert error.code == "TOO_MANY_STREAMS"
    assert "2 streams for 2 slots on 1 worker)" in error.message
    assert "POST /jobs/{id}/cancel" in error.message
    assert error.details == {"workers": 1, "slots": 2, "streams": 2, "retry_after": 30}
    # A batch statement is not concerned.
    batch = statements.submit_plan(
        session=Session.objects.select_related("user").get(pk=plain_session.pk),
        sql="SELECT 1",
        plan=_plan(streaming=False),
    )
    assert batch.status == jobstate.CREATED
    # A stream that ends frees its slot.
    lifecycle.transition(first.pk, jobstate.CREATED, jobstate.CANCELED)
    assert _submit_stream(plain_session).status == jobstate.CREATED


def test_requeued_streams_count_against_the_slots(plain_session) -> None:
    _worker("w1@h/1/a", stream_slots=1, alive=False)
    _worker("w2@h/2/b", stream_slots=1)
    _job(jobstate.RUNNING, worker_="w1@h/1/a")
    maintenance.reap_lost_jobs()  # requeued: it will take w2's slot
    with pytest.raises(TooManyStreams):
        _submit_stream(plain_session)


def test_without_live_workers_a_stream_waits_and_without_stream_slots_it_is_refused(
    plain_session,
) -> None:
    # No worker at all (none started yet, or one restarting): it waits, as every job does.
    assert _submit_stream(plain_session).status == jobstate.CREATED
    _worker("w1@h/1/a", stream_slots=0)
    with pytest.raises(TooManyStreams, match="The live worker runs no streams"):
        _submit_stream(plain_session)
    _worker("w2@h/2/b", stream_slots=0)
    with pytest.raises(TooManyStreams, match="None of the 2 live workers runs streams"):
        _submit_stream(plain_session)


def test_two_streams_at_once_cannot_both_take_the_last_slot(
    transactional_db, own_workers_only, alice
) -> None:
    _alone()
    _worker("w1@h/1/a", stream_slots=1)
    session = Session.objects.create(
        user=alice, last_used_at=timezone.now(), idle_timeout_seconds=60
    )
    hold = SlowInsert()
    lifecycle.register_hook(hold)
    outcomes: list[str] = []

    def submit(second: bool) -> None:
        try:
            if second:
                assert hold.inserting.wait(10)
                hold.race.second_starts()
            _submit_stream(session)
            outcomes.append("created")
        except TooManyStreams:
            outcomes.append("refused")
        finally:
            if second:
                hold.race.second_ended()
            connection.close()

    try:
        threads = [threading.Thread(target=submit, args=(i == 1,)) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    finally:
        lifecycle.unregister_hook(hold)
    assert sorted(outcomes) == ["created", "refused"]
    # The second stream waited for the first's uncommitted insert: the race was run.
    assert hold.race.waited, "the second never waited for the first's lock: no race was run"


class SlowInsert(NoOpHook):
    """Holds the first insert's transaction open (an in-transaction hook) until the second
    is seen waiting for its lock (``tests.races.LockWait``)."""

    in_transaction = True

    def __init__(self) -> None:
        self.inserting = threading.Event()
        self.race = LockWait()

    def on_created(self, job: JobView, record: Record) -> None:
        if not self.inserting.is_set():
            self.inserting.set()
            self.race.hold_until_the_second_waits()


def test_too_many_streams_is_http_429_with_retry_after() -> None:
    from webapp.errors import api_exception_handler

    refused = TooManyStreams("Every stream slot is taken.", details={"slots": 2})
    response = api_exception_handler(refused, {})
    assert response is not None and response.status_code == 429
    assert response["Retry-After"] == "30"
    assert response.data == {
        "error": {
            "code": "TOO_MANY_STREAMS",
            "message": "Every stream slot is taken.",
            "details": {"slots": 2, "retry_after": 30},
        }
    }


def test_a_requeued_stream_is_canceled_over_the_api(alice, alice_api) -> None:
    _worker("w1@h/1/a", alive=False)
    job = _job(jobstate.RUNNING, worker_="w1@h/1/a")
    maintenance.reap_lost_jobs()
    waiting = alice_api.get(f"{API}/jobs/{job.pk}").json()
    assert waiting["status"] == "CREATED"
    response = alice_api.post(f"{API}/jobs/{job.pk}/cancel")
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "CANCELED"
    assert_error(alice_api.post(f"{API}/jobs/{job.pk}/cancel"), 409, "ILLEGAL_TRANSITION")


def test_a_streaming_statement_over_rest_is_429_when_no_slot_is_free(
    make, alice, alice_api, storage
) -> None:
    source = storage.external / "events"
    source.mkdir()
    make.catalog("demo")
    make.database("demo", "sales")
    created = alice_api.post(
        f"{API}/sessions",
        {
            "properties": {"execution.runtime-mode": "streaming"},
            "current_catalog": "demo",
            "current_database": "sales",
        },
        format="json",
    )
    assert created.status_code == 201, created.content
    url = f"{API}/sessions/{created.json()['id']}/statements"
    made = alice_api.post(
        url,
        {
            "sql": "CREATE TEMPORARY TABLE r (`value` BIGINT) "
            f"WITH ('connector' = 'parquet', 'path' = '{source}')"
        },
        format="json",
    )
    assert made.status_code == 201 and made.json()["status"] == "FINISHED", made.json()["error"]
    _worker("w1@h/1/a", stream_slots=1)
    admitted = alice_api.post(url, {"sql": "SELECT `value` FROM r"}, format="json")
    assert admitted.status_code == 201, admitted.content
    assert admitted.json()["status"] == "CREATED"
    before = Job.objects.count()
    refused = alice_api.post(url, {"sql": "SELECT `value` FROM r"}, format="json")
    error = assert_error(
        refused, 429, "TOO_MANY_STREAMS", "(1 stream for 1 slot on 1 worker)", "cancel"
    )
    assert refused["Retry-After"] == "30"
    assert error["details"] == {"workers": 1, "slots": 1, "streams": 1, "retry_after": 30}
    assert Job.objects.count() == before  # no job
    # A batch statement in a batch session is not concerned.
    batch = alice_api.post(url, {"sql": "SET 'execution.runtime-mode' = 'batch'"}, format="json")
    assert batch.status_code == 201, batch.content
    assert alice_api.post(url, {"sql": "SELECT 1"}, format="json").status_code == 201


# --- a stale runner: transitions guarded by the worker that holds the job -----------------


def test_a_transition_held_by_another_worker_is_refused(hooks) -> None:
    """A runner whose worker was taken for lost passes the identity it claimed the job
    under (``held_by``): once the job was requeued and claimed by another worker it can no
    longer end it (docs/streaming.md)."""
    _worker("w1@h/1/a", alive=False)
    _worker("w2@h/2/b")
    job = _job(jobstate.RUNNING, worker_="w1@h/1/a")
    maintenance.reap_lost_jobs()
    assert scheduling.claim_next("w2@h/2/b") is not None  # resumed on w2

    error = {"code": "INTERNAL_ERROR", "message": "w1's copy failed", "details": {}}
    stale = lifecycle.try_transition(
        job.pk, jobstate.RUNNING, jobstate.FAILED, held_by="w1@h/1/a", error=error
    )
    assert stale is None
    with pytest.raises(jobstate.IllegalTransition, match="held by worker w2@h/2/b now"):
        lifecycle.transition(job.pk, jobstate.RUNNING, jobstate.FAILED, held_by="w1@h/1/a")
    row = Job.objects.get(pk=job.pk)
    assert row.status == jobstate.RUNNING and row.worker == "w2@h/2/b" and row.error is None
    assert "failed" not in _types(job) and ("failed", str(job.pk)) not in hooks.calls
    # The worker that holds it ends it.
    done = lifecycle.try_transition(
        job.pk, jobstate.RUNNING, jobstate.FAILED, held_by="w2@h/2/b", error=error
    )
    assert done is not None and Job.objects.get(pk=job.pk).status == jobstate.FAILED


# --- the sweep of ended streams' checkpoints and staging -----------------------------------


def test_the_sweep_removes_only_ended_streams_directories(settings, tmp_path) -> None:
    settings.DATA_DIR = tmp_path / "data"
    settings.WAREHOUSE_DIR = tmp_path / "data" / "warehouse"
    from tabledata import stream_commit

    ended = [_job(status) for status in (jobstate.FAILED, jobstate.CANCELED, jobstate.FINISHED)]
    waiting = _job(jobstate.CREATED)  # e.g. requeued: it resumes from its checkpoint
    running = _job(jobstate.RUNNING, worker_="w1@h/1/a")
    gone = "0b0e7b9e-6a55-4b5e-9c43-3c1f0a4f2d11"  # a job row deleted since
    ids = [str(j.pk) for j in (*ended, waiting, running)] + [gone]
    for job_id in ids:
        (stream_commit.checkpoint_dir(job_id) / "offsets").mkdir(parents=True)
        (stream_commit.streams_dir(job_id) / "batch-3").mkdir(parents=True)
    checkpoints = stream_commit.checkpoint_dir(gone).parent
    (checkpoints / "not-a-job").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("x")
    link = str(ended[0].pk)  # its checkpoint is a link leading out: not followed
    stream_commit.checkpoint_dir(link).rename(tmp_path / "moved")
    stream_commit.checkpoint_dir(link).symlink_to(outside)

    removed = maintenance.sweep_ended_streams()

    assert sorted(removed) == sorted([*(str(j.pk) for j in ended), gone])
    for job_id in (*(str(j.pk) for j in ended[1:]), gone):
        assert not stream_commit.checkpoint_dir(job_id).exists()
        assert not stream_commit.streams_dir(job_id).exists()
    assert not stream_commit.streams_dir(ended[0].pk).exists()
    assert stream_commit.checkpoint_dir(link).is_symlink() and (outside / "keep").exists()
    for job in (waiting, running):
        assert (stream_commit.checkpoint_dir(job.pk) / "offsets").is_dir()
        assert (stream_commit.streams_dir(job.pk) / "batch-3").is_dir()
    assert (checkpoints / "not-a-job").is_dir()
    assert maintenance.sweep_ended_streams() == []  # idempotent
