"""Redis restarted, PostgreSQL restarted, a broker message dropped: repeatedly, with jobs
queued and running each time.

Invariant each time: every job submitted reaches a terminal status within a bound (none
stuck in CREATED or RUNNING, none lost), each ran at most once (one ``running`` event, one
end), a CTAS is either fully committed (every row) or left nothing behind, and the worker
serves the next job. A Redis restart or a dropped message fails no job: the sweeper sends
the lost messages again.
"""

from __future__ import annotations

import time

import pytest
import redis
from django.conf import settings

from catalog.models import Table
from jobs.models import Job
from tests.faults.conftest import Servers
from tests.faults.harness import (
    Owner,
    assert_ran_once,
    db,
    event_types,
    make_keep,
    new_owner,
    wait_left_nothing,
    wait_terminal,
)
from tests.faults.tally import WORKER_TIMEOUT_SECONDS, inject, time_limit
from tests.waiting import wait_until
from tests.worker_helpers import api_for, result_rows, submit_sql
from tests.workers import WorkerProcess

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    time_limit(400),
]

END_BOUND = 180.0  # every job of a batch terminal after the restart (loaded machine)
MEDIUM_QUERY = "SELECT sum(id % 7) AS s FROM range(0, 300000000, 1, 2)"
CTAS_ROWS = 200000
QUICK = 4  # more jobs than the worker's 4 threads take at once: some wait in the queue


def _batch(owner: Owner, tag: str) -> tuple[list[Job], str]:
    """Two medium queries, a CTAS and quick queries; returns them and the CTAS's name."""
    name = f"t{tag}"
    jobs = [submit_sql(owner.user, MEDIUM_QUERY) for _ in range(2)]
    jobs.append(
        submit_sql(
            owner.user,
            f"CREATE TABLE {owner.catalog}.d.{name} AS "
            f"SELECT id, sha2(CAST(id AS STRING), 256) AS h FROM range(0, {CTAS_ROWS})",
        )
    )
    jobs += [submit_sql(owner.user, f"SELECT {n} AS n") for n in range(QUICK)]
    return jobs, name


def _some_running(jobs: list[Job]) -> str:
    """Until a job of the batch runs; how many were queued and running then."""
    ids = [job.id for job in jobs]
    wait_until(
        lambda: Job.objects.filter(pk__in=ids, status="RUNNING").exists(),
        120,
        0.05,
        "a job of the batch to run",
    )
    statuses = list(Job.objects.filter(pk__in=ids).values_list("status", flat=True))
    return f"{statuses.count('CREATED')} queued, {statuses.count('RUNNING')} running"


def _count(owner: Owner, name: str) -> int:
    job = submit_sql(owner.user, f"SELECT count(*) AS n FROM {owner.catalog}.d.{name}")
    done = wait_terminal(job.id, END_BOUND)
    assert done.status == "FINISHED", (done.status, done.error)
    _, rows = result_rows(api_for(owner.user), job.id)
    return int(rows[0][0])


def _check_batch(owner: Owner, jobs: list[Job], name: str, *, all_finish: bool) -> str:
    """The invariant for a batch; returns how the jobs ended."""
    ended = [wait_terminal(job.id, END_BOUND) for job in jobs]
    for job in ended:
        assert_ran_once(job.id)
        if all_finish:
            assert job.status == "FINISHED", (job.sql, job.status, job.error, event_types(job.id))
        else:
            assert job.status in {"FINISHED", "FAILED"}, (job.status, job.error)
            if job.status == "FAILED":
                error = job.error or {}
                assert error.get("code") and error.get("message"), error
                assert "Traceback" not in str(error.get("message")), error
                # A restart is named as such, not an unexpected failure.
                assert error.get("code") != "INTERNAL_ERROR", error
        if job.status == "FINISHED" and job.kind == "query":
            assert job.result, job.id
    ctas = next(job for job in ended if job.kind == "ctas")
    if ctas.status == "FINISHED":
        table = Table.objects.get(database__catalog__name=owner.catalog, name_key=name)
        assert table.status == "active"
        assert _count(owner, name) == CTAS_ROWS  # fully committed
    else:
        wait_left_nothing(ctas, owner, name)
    outcomes = [
        job.status if job.status == "FINISHED" else f"{job.status} {(job.error or {}).get('code')}"
        for job in ended
    ]
    return ", ".join(f"{outcomes.count(o)} {o}" for o in sorted(set(outcomes)))


def test_redis_restarts_lose_no_job_and_run_none_twice(
    steady: WorkerProcess, fault_servers: Servers
) -> None:
    owner = new_owner("redis")
    make_keep(owner)

    def attempt(number: int) -> None:
        before = owner.snapshot()
        jobs, name = _batch(owner, f"r{number}")
        state = _some_running(jobs)
        fault_servers.redis.restart()  # the queued messages are gone with it
        started = time.monotonic()
        _check_batch(owner, jobs, name, all_finish=True)
        print(
            f"Redis restart #{number + 1} ({state}): batch ended "
            f"{time.monotonic() - started:.1f} s after"
        )
        assert owner.snapshot() == before

    inject("Redis restarts with jobs queued and running", attempt)


def test_postgresql_restarts_lose_no_job_and_run_none_twice(
    steady: WorkerProcess, fault_servers: Servers
) -> None:
    owner = new_owner("pg")
    make_keep(owner)

    def attempt(number: int) -> None:
        before = db(owner.snapshot)
        jobs, name = _batch(owner, f"p{number}")
        state = _some_running(jobs)
        # Alternately a clean fast shutdown and a crash (immediate: WAL recovery); every
        # other outage outlasts the workers' timeout (heartbeats and job ends fail meanwhile).
        mode = "immediate" if number % 2 else "fast"
        down = WORKER_TIMEOUT_SECONDS + 3.0 if number % 4 >= 2 else 0.0
        fault_servers.postgres.restart(mode, down)
        started = time.monotonic()
        outcome = _check_batch(owner, jobs, name, all_finish=False)
        print(
            f"PostgreSQL restart #{number + 1} ({mode}, down {down:.0f} s, {state}): {outcome} "
            f"{time.monotonic() - started:.1f} s after"
        )
        assert "ENGINE_LOST" not in outcome  # a database restart is no reason to kill Spark
        assert db(owner.snapshot) == before
        after = submit_sql(owner.user, "SELECT 1 AS still_serving")
        assert wait_terminal(after.id, END_BOUND).status == "FINISHED"

    inject("PostgreSQL restarts with jobs queued and running", attempt)


def test_a_dropped_broker_message_is_sent_again_and_runs_once(steady: WorkerProcess) -> None:
    from webapp.celery import app

    owner = new_owner("drop")
    queue = app.conf.task_default_queue
    node = steady.hostname.split("/")[0]
    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)

    def attempt(number: int) -> None:
        # The worker stops taking messages, so the message waits in Redis to be dropped.
        replies = app.control.cancel_consumer(queue, destination=[node], reply=True, timeout=10)
        assert replies, "the worker did not answer cancel_consumer"
        try:
            jobs = [submit_sql(owner.user, f"SELECT {number} AS n, {k} AS k") for k in range(2)]
            wait_until(lambda: broker.llen(queue) >= len(jobs), 30, 0.05, "the messages queued")
            dropped = broker.delete(queue)
            assert dropped == 1
        finally:
            app.control.add_consumer(queue, destination=[node], reply=True, timeout=10)
        for job in jobs:
            done = wait_terminal(job.id, END_BOUND)
            types = assert_ran_once(job.id)
            assert done.status == "FINISHED", (done.status, done.error, types)
            assert "requeued" in event_types(job.id), types
            _, rows = result_rows(api_for(owner.user), job.id)
            assert len(rows) == 1

    inject("broker messages dropped", attempt)
