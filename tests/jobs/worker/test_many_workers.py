"""Two real Celery workers (separate processes, each with its own small Spark) against one
PostgreSQL, Redis and storage (docs/adr/0009-fair-claim.md): jobs spread over both, one
user's queue does not starve another user's statement, a user's running limit holds across
both, too many unfinished jobs are refused, a killed worker fails only its own jobs, and a
duplicated message runs nothing twice.

Each worker runs 2 jobs at once (``--concurrency 2``, ``local[1]``): 4 slots in all, and a
user may have 3 running (``TESSERA_USER_RUNNING_JOBS``), so a limit of 3 is a real limit.
The module stops the shared worker (it would take the jobs) and runs after the other worker
tests (``own_workers_only``); the kill test is its last.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from celery import current_app
from django.contrib.auth.models import User
from django.db.models import Q

from jobs.models import Job, JobEvent
from tests.conftest import API, assert_error
from tests.waiting import wait_until
from tests.worker_helpers import (
    TERMINAL,
    api_for,
    create_user,
    events,
    open_session,
    submit_sql,
    wait_for_status,
)
from tests.workers import WorkerProcess, start_worker

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

RUNNING_LIMIT = 3
SLOTS_PER_WORKER = 2
WORKER_ENV = {
    "SPARK_MASTER": "local[1]",
    "TESSERA_SPARK_DRIVER_MEMORY": "512m",
    "TESSERA_USER_RUNNING_JOBS": str(RUNNING_LIMIT),
}
# A job of a few seconds on one core (a nested-loop join that only counts), and a longer
# one; every job of a test has its own bounds so that no result comes from a cache.
SLOW_ISH = "SELECT count(*) AS n FROM range(0, {n}) AS a CROSS JOIN range(0, 40000) AS b"
SLOW_ISH_ROWS = 6000
LONG_ROWS = 40000


def slow_ish(index: int, rows: int = SLOW_ISH_ROWS) -> str:
    return SLOW_ISH.format(n=rows + index)


@pytest.fixture(scope="module")
def workers(
    django_db_setup: None,
    django_db_blocker: Any,
    tmp_path_factory: pytest.TempPathFactory,
    own_workers_only: None,
) -> Iterator[tuple[WorkerProcess, WorkerProcess]]:
    first = start_worker(
        "fair-a", tmp_path_factory, django_db_blocker, WORKER_ENV, SLOTS_PER_WORKER
    )
    worker_a = next(first)
    second = start_worker(
        "fair-b", tmp_path_factory, django_db_blocker, WORKER_ENV, SLOTS_PER_WORKER
    )
    try:
        worker_b = next(second)
        try:
            yield worker_a, worker_b
        finally:
            next(second, None)
    finally:
        next(first, None)


@pytest.fixture(autouse=True)
def web_limits(settings: Any) -> None:
    settings.TESSERA_USER_RUNNING_JOBS = RUNNING_LIMIT  # as the workers were told
    settings.TESSERA_WORKER_TIMEOUT_SECONDS = 4


def users(prefix: str, count: int) -> list[User]:
    tag = uuid.uuid4().hex[:6]
    return [create_user(f"{prefix}{i}{tag}") for i in range(count)]


def wait_all(jobs: list[Job], timeout: float = 300) -> list[Job]:
    ids = [job.pk for job in jobs]

    def ended() -> list[Job] | None:
        rows = list(Job.objects.filter(pk__in=ids))
        return rows if all(row.status in TERMINAL for row in rows) else None

    return wait_until(ended, timeout, 0.25, "the jobs to end")


def running_of(user: User) -> int:
    return Job.objects.filter(user=user, status="RUNNING").count()


def test_jobs_of_several_users_spread_over_both_workers(
    workers: tuple[WorkerProcess, WorkerProcess],
) -> None:
    crowd = users("spread", 3)
    jobs = [submit_sql(user, slow_ish(i)) for i in range(4) for user in crowd]
    done = wait_all(jobs)
    assert {job.status for job in done} == {"FINISHED"}, [job.error for job in done]
    assert {job.worker for job in done} == {worker.hostname for worker in workers}
    for job in done:
        # A job held back for a while says so (``queued``); none is lost or sent again.
        assert [e for e in events(job.id) if e != "queued"] == ["created", "running", "finished"]


def test_one_user_s_queue_does_not_starve_another_user_s_statement(
    workers: tuple[WorkerProcess, WorkerProcess],
) -> None:
    heavy, other, light = users("heavy", 1)[0], users("other", 1)[0], users("light", 1)[0]
    queue = [submit_sql(heavy, slow_ish(i)) for i in range(12)]
    queue += [submit_sql(other, slow_ish(100 + i)) for i in range(12)]
    slots = 2 * SLOTS_PER_WORKER
    # Every slot runs a queued job, or all but the last free one, which a claim keeps for a
    # user with nothing running (docs/adr/0009-fair-claim.md, amendment).
    wait_until(
        lambda: (
            Job.objects.filter(pk__in=[j.pk for j in queue], status="RUNNING").count() >= slots - 1
        ),
        120,
        0.1,
        "every slot but the kept one to run a queued job",
    )
    single = submit_sql(light, slow_ish(200))
    done = {job.pk: job for job in wait_all([*queue, single])}
    assert {job.status for job in done.values()} == {"FINISHED"}
    started = {job_id: job.started_at for job_id, job in done.items() if job.started_at}
    assert len(started) == len(done)
    mine = done[single.pk]
    waiting_then = [j.pk for j in queue if started[j.pk] > mine.created_at]
    # In FIFO order the statement would start after every job queued before it: the test
    # means something only if many were still waiting when it came.
    assert len(waiting_then) >= 12, len(waiting_then)
    overtaking = [job_id for job_id in waiting_then if started[job_id] < started[single.pk]]
    # The first free slot takes it (one claim may have been choosing as it was committed).
    assert len(overtaking) <= 1, [(done[j].user_id, started[j]) for j in overtaking]
    # The two heavy users share too: the first slots went to both, not to the first one's
    # twelve jobs (the first one's three, the running limit, then the slot kept for a user
    # with nothing running went to the second).
    first_slots = sorted((j.pk for j in queue), key=lambda job_id: started[job_id])[:slots]
    assert {done[job_id].user_id for job_id in first_slots} == {heavy.pk, other.pk}


def test_a_user_s_running_limit_holds_across_both_workers(
    workers: tuple[WorkerProcess, WorkerProcess],
) -> None:
    user = users("limited", 1)[0]
    jobs = [submit_sql(user, slow_ish(300 + i)) for i in range(8)]
    ids = [job.pk for job in jobs]
    most = 0
    placements: set[str] = set()
    deadline = time.monotonic() + 300
    while Job.objects.filter(pk__in=ids).exclude(status__in=TERMINAL).exists():
        assert time.monotonic() < deadline, "the jobs did not end"
        running = list(Job.objects.filter(pk__in=ids, status="RUNNING").values_list("worker"))
        most = max(most, len(running))
        if len(running) > 1:
            placements |= {worker for (worker,) in running}
        time.sleep(0.05)
    done = wait_all(jobs)
    assert {job.status for job in done} == {"FINISHED"}
    # Four slots were free: without the limit four would have run at once.
    assert most == RUNNING_LIMIT, most
    assert placements == {worker.hostname for worker in workers}  # on both at once


def test_over_the_queued_limit_statements_are_429_and_make_no_job(
    workers: tuple[WorkerProcess, WorkerProcess], settings: Any
) -> None:
    settings.TESSERA_USER_QUEUED_JOBS = 5  # the web's setting: it refuses
    user = users("queued", 1)[0]
    api = api_for(user)
    session = open_session(api)
    url = f"{API}/sessions/{session}/statements"
    first = [api.post(url, {"sql": slow_ish(400 + i, LONG_ROWS)}) for i in range(5)]
    assert [response.status_code for response in first] == [201] * 5
    before = Job.objects.filter(user=user).count()
    response = api.post(url, {"sql": "SELECT 1 AS one"})
    error = assert_error(response, 429, "TOO_MANY_JOBS", "5 unfinished jobs", "at most 5")
    assert int(response["Retry-After"]) == error["details"]["retry_after"] >= 1
    assert error["details"]["running"] + error["details"]["queued"] == 5
    assert error["details"]["running"] <= RUNNING_LIMIT
    assert Job.objects.filter(user=user).count() == before
    for body in first:  # make room for the next tests
        api.post(f"{API}/jobs/{body.json()['id']}/cancel")
    wait_all(list(Job.objects.filter(user=user)))


def test_a_duplicated_message_does_not_run_a_job_twice(
    workers: tuple[WorkerProcess, WorkerProcess],
) -> None:
    user = users("dup", 1)[0]
    job = submit_sql(user, "SELECT sum(id) AS s FROM range(3000000)")
    for _ in range(4):
        current_app.send_task("tessera.run_job", args=[str(job.id)])
    done = wait_for_status(job.id, {"FINISHED"}, 120)
    for _ in range(2):
        current_app.send_task("tessera.run_job", args=[str(job.id)])  # after the end too

    def dropped() -> bool:
        lines = [
            line
            for worker in workers
            for line in worker.log_path.read_text(errors="replace").splitlines()
            if f"job {job.id} " in line and "message dropped" in line
        ]
        return len(lines) >= 6 + events(job.id, requeued=True).count("requeued")

    wait_until(dropped, 60, 0.2, "the workers to drop the duplicated messages")
    assert events(job.id) == ["created", "running", "finished"]
    assert done.worker in {worker.hostname for worker in workers}


def test_a_killed_worker_fails_only_its_own_jobs_and_the_queue_still_runs(
    workers: tuple[WorkerProcess, WorkerProcess],
) -> None:
    doomed, survivor = workers
    crowd = users("kill", 4)
    long_jobs = [submit_sql(user, slow_ish(500 + i, LONG_ROWS)) for i, user in enumerate(crowd)]
    long_ids = [job.pk for job in long_jobs]
    wait_until(
        lambda: Job.objects.filter(pk__in=long_ids, status="RUNNING").count() == 4,
        120,
        0.1,
        "every slot of both workers to run a long job",
    )
    queued_user = users("after", 1)[0]
    queued = [submit_sql(queued_user, slow_ish(600 + i)) for i in range(3)]
    queued_ids = [job.pk for job in queued]
    # Queued while every slot runs a long job (the long jobs are still RUNNING after the
    # last one was queued): they wait; the events' order below shows that none started
    # before a slot freed, however slow the machine.
    assert Job.objects.filter(pk__in=long_ids, status="RUNNING").count() == 4
    assert Job.objects.filter(pk__in=queued_ids, status="CREATED").count() == 3
    on_doomed = set(
        Job.objects.filter(pk__in=long_ids, worker=doomed.hostname).values_list("pk", flat=True)
    )
    on_survivor = set(long_ids) - on_doomed
    assert len(on_doomed) == len(on_survivor) == SLOTS_PER_WORKER

    doomed.kill()
    # The survivor's heartbeat notices on this machine that the process is gone and reaps
    # its jobs; its own jobs and the queue go on.
    done = {job.pk: job for job in wait_all([*long_jobs, *queued])}
    for job_id in on_doomed:
        job = done[job_id]
        assert job.status == "FAILED", (job.status, job.error)
        assert (job.error or {})["code"] == "WORKER_LOST"
        assert doomed.hostname in (job.error or {})["message"]
    for job_id in on_survivor:
        assert done[job_id].status == "FINISHED", done[job_id].error
        assert done[job_id].worker == survivor.hostname
    for job in queued:
        assert done[job.pk].status == "FINISHED", done[job.pk].error
        assert done[job.pk].worker == survivor.hostname
    # Event ids follow the order of their inserts: every queued job started (``running``)
    # after one of the survivor's long jobs had finished, the first slot that freed.
    first_freed = min(
        JobEvent.objects.filter(job_id__in=on_survivor, type="finished").values_list(
            "id", flat=True
        )
    )
    started = JobEvent.objects.filter(job_id__in=queued_ids, type="running")
    assert started.count() == 3
    assert min(started.values_list("id", flat=True)) > first_freed
    assert not Job.objects.filter(
        Q(pk__in=on_survivor) | Q(pk__in=[j.pk for j in queued]), error__code="WORKER_LOST"
    ).exists()
