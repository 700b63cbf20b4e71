"""Who runs next and how many jobs a user may have (jobs.scheduling), on the real database
without a worker: the fair claim's order, the per-user running limit, the sweeper and the
hand-on of held-back jobs, and ``429 TOO_MANY_JOBS`` (docs/api.md, docs/adr/0009).

The many-workers behaviour itself (two real Celery workers) is
tests/jobs/worker/test_many_workers.py.
"""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.utils import timezone

from core import jobstate
from core.jobstate import JobView, NoOpHook
from jobs import lifecycle, maintenance, scheduling
from jobs.models import Job, JobEvent, Session, Worker
from sessions import statements
from tests.conftest import API, PASSWORD, assert_error, client_for
from tests.races import LockWait

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def sent_tasks(monkeypatch) -> list[list[Any]]:
    """What would go to the broker (the shared Redis stays out of these tests)."""
    from webapp.celery import app

    sent: list[list[Any]] = []
    monkeypatch.setattr(app, "send_task", lambda name, args=None, **_: sent.append(list(args)))
    return sent


@pytest.fixture(autouse=True)
def limits(settings) -> Any:
    settings.TESSERA_USER_RUNNING_JOBS = 2
    settings.TESSERA_USER_QUEUED_JOBS = 100
    return settings


def _plan(sql: str = "SELECT 1") -> dict[str, Any]:
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


def _user(name: str) -> User:
    user, _ = User.objects.get_or_create(username=name)
    return user


def _job(user: User, status: str = jobstate.CREATED, age: float = 0, **fields: Any) -> Job:
    """A Spark job row, created ``age`` seconds ago."""
    fields.setdefault("plan", _plan())
    job = Job.objects.create(user=user, sql="SELECT 1", kind="query", status=status, **fields)
    Job.objects.filter(pk=job.pk).update(created_at=timezone.now() - timedelta(seconds=age))
    return job


def _claim(worker: str = "w1@h/1/a") -> Job | None:
    return scheduling.claim_next(worker)


# --- the claim -------------------------------------------------------------------------------


def test_the_user_with_fewest_running_jobs_goes_first_then_the_oldest_job() -> None:
    alice, bob, carol = _user("alice"), _user("bob"), _user("carol")
    _job(alice, jobstate.RUNNING, age=100)
    alice_queue = [_job(alice, age=90 - i) for i in range(5)]  # the oldest jobs of all
    bob_job = _job(bob, age=10)
    carol_old, carol_new = _job(carol, age=20), _job(carol, age=5)
    # FIFO would run alice's five first; fair: bob and carol (0 running) before alice (1),
    # carol's older job before bob's, then each user's jobs oldest first.
    order = [_claim() for _ in range(5)]
    assert [job.pk if job else None for job in order] == [
        carol_old.pk,
        bob_job.pk,
        alice_queue[0].pk,  # alice 1 running, bob 1, carol 1: the oldest job is alice's
        carol_new.pk,  # alice now 2 = the limit: held back; bob has none left
        None,
    ]
    claimed = Job.objects.get(pk=carol_old.pk)
    assert claimed.status == jobstate.RUNNING and claimed.worker == "w1@h/1/a"
    assert claimed.started_at is not None
    assert list(JobEvent.objects.filter(job=claimed).values_list("type", flat=True)) == ["running"]


def test_a_user_at_the_running_limit_waits_and_is_next_when_one_ends(limits) -> None:
    alice = _user("alice")
    running = [_job(alice, jobstate.RUNNING) for _ in range(2)]
    waiting = _job(alice, age=50)
    assert _claim() is None  # at the limit: the job stays CREATED
    assert Job.objects.get(pk=waiting.pk).status == jobstate.CREATED
    lifecycle.transition(running[0].pk, jobstate.RUNNING, jobstate.FINISHED)
    claimed = _claim()
    assert claimed is not None and claimed.pk == waiting.pk
    limits.TESSERA_USER_RUNNING_JOBS = 0  # no limit
    more = _job(alice)
    claimed = _claim()
    assert claimed is not None and claimed.pk == more.pk


def test_only_spark_jobs_whose_turn_came_are_claimed_and_web_commands_do_not_count() -> None:
    alice, bob = _user("alice"), _user("bob")
    _job(alice, status=jobstate.CREATED, plan={})  # a script's statement before its turn
    _job(alice, status=jobstate.CREATED, plan={**_plan(), "needs_spark": False})
    # Running commands of the web process do not hold a Spark slot.
    _job(bob, status=jobstate.RUNNING, plan={**_plan(), "needs_spark": False})
    _job(bob, status=jobstate.RUNNING, plan={**_plan(), "needs_spark": False})
    bob_job = _job(bob)
    claimed = _claim()
    assert claimed is not None and claimed.pk == bob_job.pk
    assert _claim() is None


def test_a_job_is_claimed_once_by_racing_claims(transactional_db, settings) -> None:
    settings.TESSERA_USER_RUNNING_JOBS = 0
    alice = _user("alice")
    jobs = {str(_job(alice, age=10 - i).pk) for i in range(6)}
    claimed: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(4)

    def claimer(index: int) -> None:
        try:
            start.wait()
            while (job := scheduling.claim_next(f"w{index}@h/1/a")) is not None:
                with lock:
                    claimed.append(str(job.pk))
        finally:
            connection.close()

    threads = [threading.Thread(target=claimer, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(claimed) == sorted(jobs)  # each once, none lost
    for job_id in jobs:
        assert JobEvent.objects.filter(job_id=job_id, type="running").count() == 1


def test_racing_claims_keep_the_running_limit(transactional_db, settings) -> None:
    settings.TESSERA_USER_RUNNING_JOBS = 3
    alice = _user("alice")
    for i in range(10):
        _job(alice, age=10 - i)
    start = threading.Barrier(6)

    def claimer(index: int) -> None:
        try:
            start.wait()
            scheduling.claim_next(f"w{index}@h/1/a")
            scheduling.claim_next(f"w{index}@h/1/a")
        finally:
            connection.close()

    threads = [threading.Thread(target=claimer, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert Job.objects.filter(user=alice, status=jobstate.RUNNING).count() == 3


# --- messages: hand-on and the sweeper ----------------------------------------------------------


def test_hand_on_sends_a_message_only_when_a_job_of_the_user_is_eligible(
    sent_tasks, limits
) -> None:
    alice, bob = _user("alice"), _user("bob")
    running = [_job(alice, jobstate.RUNNING) for _ in range(2)]
    waiting = _job(alice)
    _job(bob)  # has its own message; not handed on for alice's end
    assert scheduling.hand_on(alice.pk) is False and sent_tasks == []  # held back
    lifecycle.transition(running[0].pk, jobstate.RUNNING, jobstate.FINISHED)
    assert scheduling.hand_on(alice.pk) is True
    assert sent_tasks == [[str(waiting.pk)]]
    assert Job.objects.get(pk=waiting.pk).enqueue_count == 1
    assert scheduling.hand_on(bob.pk) is True  # bob's job is eligible: his end would send
    limits.TESSERA_USER_RUNNING_JOBS = 0  # without a limit nothing is held back
    assert scheduling.hand_on(alice.pk) is False


def test_the_sweeper_does_not_resend_jobs_held_back_by_the_running_limit(
    settings, sent_tasks
) -> None:
    settings.TESSERA_SWEEP_AFTER_SECONDS = 1
    alice, bob = _user("alice"), _user("bob")
    running = [_job(alice, jobstate.RUNNING) for _ in range(2)]
    held = _job(alice, age=60)
    lost = _job(bob, age=60)
    assert maintenance.sweep_unclaimed_jobs() == [str(lost.pk)]
    assert maintenance.sweep_unclaimed_jobs() == []
    assert Job.objects.get(pk=held.pk).enqueue_count == 0  # its back-off did not grow
    # One of alice's jobs is lost with its worker: the held-back job is due at once.
    lifecycle.transition(running[0].pk, jobstate.RUNNING, jobstate.FAILED)
    assert maintenance.sweep_unclaimed_jobs() == [str(held.pk)]


# --- the queued limit -------------------------------------------------------------------------


class StatementsOf:
    def __init__(self, user: User) -> None:
        self.client = client_for(user)
        response = self.client.post(f"{API}/sessions", {})
        assert response.status_code == 201, response.content
        self.url = f"{API}/sessions/{response.json()['id']}/statements"

    def post(self, sql: str, **extra: Any) -> Any:
        return self.client.post(self.url, {"sql": sql, **extra}, format="json")


def test_over_the_queued_limit_a_statement_is_429_too_many_jobs_and_makes_no_job(
    limits,
) -> None:
    limits.TESSERA_USER_QUEUED_JOBS = 3
    alice = User.objects.create_user("alice", password=PASSWORD)
    console = StatementsOf(alice)
    for _ in range(3):  # range() needs Spark: these wait CREATED (no worker here)
        assert console.post("SELECT * FROM range(3)").status_code == 201
    before = Job.objects.count()
    response = console.post("SELECT * FROM range(3)")
    error = assert_error(response, 429, "TOO_MANY_JOBS", "3 unfinished jobs", "at most 3")
    assert "cancel" in error["message"]
    assert response["Retry-After"] == str(scheduling.RETRY_AFTER_SECONDS)
    assert error["details"] == {
        "running": 0,
        "queued": 3,
        "maximum": 3,
        "retry_after": scheduling.RETRY_AFTER_SECONDS,
    }
    # Every other way to make a job is refused too: a statement the web runs at once, a
    # statement the planner refuses, a script.
    assert_error(console.post("SHOW CATALOGS"), 429, "TOO_MANY_JOBS")
    assert_error(console.post("SELEC nonsense"), 429, "TOO_MANY_JOBS")
    assert_error(console.post("SHOW CATALOGS; SHOW CATALOGS", script=True), 429, "TOO_MANY_JOBS")
    assert Job.objects.count() == before
    # Another user is not concerned; a job of alice's that ends makes room again.
    assert (
        StatementsOf(User.objects.create_user("bob", password=PASSWORD))
        .post("SHOW CATALOGS")
        .status_code
        == 201
    )
    first = Job.objects.filter(user=alice).order_by("created_at").first()
    assert first is not None
    lifecycle.transition(first.pk, jobstate.CREATED, jobstate.CANCELED)
    assert console.post("SHOW CATALOGS").status_code == 201


def test_a_script_counts_once_and_running_jobs_count(limits) -> None:
    limits.TESSERA_USER_QUEUED_JOBS = 2
    alice = User.objects.create_user("alice", password=PASSWORD)
    console = StatementsOf(alice)
    script = "SELECT * FROM range(1); SELECT * FROM range(2); SELECT * FROM range(3)"
    response = console.post(script, script=True)
    assert response.status_code == 201, response.content
    assert len(response.json()["jobs"]) == 3
    running = _job(alice, jobstate.RUNNING)
    error = assert_error(console.post("SHOW CATALOGS"), 429, "TOO_MANY_JOBS", "1 running")
    assert error["details"]["running"] == 1 and error["details"]["queued"] == 1
    lifecycle.transition(running.pk, jobstate.RUNNING, jobstate.FINISHED)
    assert console.post("SHOW CATALOGS").status_code == 201


class SlowInsert(NoOpHook):
    """Holds the transaction that inserts the first job open (in-transaction hook) until the
    second request of the same user is seen waiting for its lock (``tests.races.LockWait``),
    so that the second request runs while the first is not committed."""

    in_transaction = True

    def __init__(self) -> None:
        self.inserting = threading.Event()
        self.race = LockWait()

    def on_created(self, job: JobView, record: Any) -> None:
        if not self.inserting.is_set():
            self.inserting.set()
            self.race.hold_until_the_second_waits()


def test_two_requests_at_once_cannot_both_take_the_last_place(transactional_db, limits) -> None:
    limits.TESSERA_USER_QUEUED_JOBS = 1
    alice = User.objects.create_user("alice", password=PASSWORD)
    session = Session.objects.create(
        user=alice, last_used_at=timezone.now(), idle_timeout_seconds=3600
    )
    hook = SlowInsert()
    lifecycle.register_hook(hook)
    outcomes: list[str] = []

    def submit(second: bool) -> None:
        try:
            if second:
                assert hook.inserting.wait(10)
                hook.race.second_starts()
            found = Session.objects.select_related("user").get(pk=session.pk)
            statements.submit_plan(session=found, sql="SELECT 1", plan=_plan())
            outcomes.append("created")
        except scheduling.TooManyJobs:
            outcomes.append("refused")
        finally:
            if second:
                hook.race.second_ended()
            connection.close()

    try:
        threads = [threading.Thread(target=submit, args=(i == 1,)) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    finally:
        lifecycle.unregister_hook(hook)
    assert sorted(outcomes) == ["created", "refused"]
    assert Job.objects.filter(user=alice).count() == 1
    # The second request waited for the first's uncommitted insert: the race was run.
    assert hook.race.waited, "the second never waited for the first's lock: no race was run"


def test_no_queued_limit_when_zero(limits) -> None:
    limits.TESSERA_USER_QUEUED_JOBS = 0
    alice = User.objects.create_user("alice", password=PASSWORD)
    for _ in range(3):
        _job(alice)
    scheduling.check_room(alice.pk, 1000)  # no error


# --- the slot kept for whoever comes next -----------------------------------------------------


def _worker(hostname: str = "w1@h/1/a", concurrency: int = 4) -> str:
    now = timezone.now()
    Worker.objects.create(
        hostname=hostname, pid=1, started_at=now, last_heartbeat=now, concurrency=concurrency
    )
    return hostname


def _queued(job: Job) -> list[dict[str, Any]]:
    return list(JobEvent.objects.filter(job=job, type="queued").values_list("detail", flat=True))


def test_a_user_running_jobs_never_takes_the_pool_s_last_free_slot(limits, sent_tasks) -> None:
    limits.TESSERA_USER_RUNNING_JOBS = 4
    worker = _worker(concurrency=4)
    bob, alice = _user("bob"), _user("alice")
    bobs = [_job(bob, age=50 - i) for i in range(4)]
    claimed = [_claim(worker) for _ in range(4)]
    # Three of bob's four: the fourth would take the last free slot while he runs jobs.
    assert [job.pk if job else None for job in claimed] == [j.pk for j in bobs[:3]] + [None]
    waiting = Job.objects.get(pk=bobs[3].pk)
    assert waiting.status == jobstate.CREATED and waiting.held
    assert _queued(waiting) == [{"reason": "reserved_slot", "running": 3, "position": 1}]
    assert _claim(worker) is None  # a second spent message: no second event, no new debt
    assert len(_queued(waiting)) == 1
    # Alice, with nothing running, takes it at once.
    mine = _job(alice)
    took = _claim(worker)
    assert took is not None and took.pk == mine.pk
    # Alice's job ends: the slot is free again, but still the last one: bob waits.
    lifecycle.transition(mine.pk, jobstate.RUNNING, jobstate.FINISHED)
    assert scheduling.hand_on(alice.pk) is True  # bob's held job gets its message again
    assert sent_tasks == [[str(waiting.pk)]]
    assert not Job.objects.get(pk=waiting.pk).held
    assert _claim(worker) is None  # the message finds the last slot kept: owed again
    assert Job.objects.get(pk=waiting.pk).held
    # One of bob's own jobs ends: two slots are free, his fourth takes one.
    lifecycle.transition(bobs[0].pk, jobstate.RUNNING, jobstate.FINISHED)
    assert scheduling.hand_on(bob.pk) is True
    took = _claim(worker)
    assert took is not None and took.pk == waiting.pk and not took.held


def test_the_kept_slot_counts_every_live_worker_and_none_with_one_slot(limits) -> None:
    limits.TESSERA_USER_RUNNING_JOBS = 0
    bob = _user("bob")
    for i in range(6):
        _job(bob, age=60 - i)
    # Two workers of two slots: bob gets three of the four, wherever they are.
    first, second = _worker("w1@h/1/a", 2), _worker("w2@h/1/b", 2)
    assert _claim(first) and _claim(second) and _claim(first)
    assert _claim(second) is None
    # A worker that stopped does not count; one of unknown concurrency keeps nothing.
    Worker.objects.filter(hostname=second).update(stopped_at=timezone.now())
    assert _claim(first) is None  # its own two slots are taken
    assert _claim("w9@h/1/z") is not None  # no heartbeat row: nothing is kept
    # A pool of one slot keeps nothing: bob's next job takes it.
    Worker.objects.all().delete()
    Job.objects.filter(user=bob, status=jobstate.RUNNING).update(status=jobstate.FINISHED)
    alone = _worker("w3@h/1/c", 1)
    lifecycle.transition(
        Job.objects.filter(user=bob, status=jobstate.CREATED).first().pk,  # type: ignore[union-attr]
        jobstate.CREATED,
        jobstate.CANCELED,
    )
    _job(bob, jobstate.RUNNING, worker="gone@h/1/x")  # his job on a worker no longer live
    assert _claim(alone) is not None


def test_a_held_back_job_says_once_that_its_user_is_at_the_running_limit(limits) -> None:
    alice = _user("alice")
    _job(alice, jobstate.RUNNING), _job(alice, jobstate.RUNNING)
    first, second = _job(alice, age=20), _job(alice, age=10)
    assert _claim() is None
    assert scheduling.note_waiting(second.pk) is True
    assert scheduling.note_waiting(second.pk) is False  # once per job and reason
    assert _queued(Job.objects.get(pk=second.pk)) == [
        {"reason": "running_limit", "running": 2, "position": 2, "limit": 2}
    ]
    assert scheduling.note_waiting(first.pk) is True
    assert _queued(Job.objects.get(pk=first.pk))[0]["position"] == 1
