"""kill -9 of a worker's JVM mid-query and mid-CTAS, repeatedly.

Invariant each time: the job ends FAILED ``ENGINE_LOST`` (a sentence, no traceback) within
a bound; a CTAS's stage table is dropped and its staging deleted, the permanent table is
unchanged; the worker process lives on, starts a new JVM, and its next job finishes.
"""

from __future__ import annotations

import os
import signal
import time

import pytest

from jobs.models import Job
from tests.faults.harness import (
    SLOW_CTAS_QUERY,
    SLOW_QUERY,
    assert_ran_once,
    make_keep,
    new_owner,
    wait_left_nothing,
    wait_running,
    wait_terminal,
    wait_writing,
)
from tests.faults.tally import inject, time_limit
from tests.waiting import wait_until
from tests.worker_helpers import submit_sql
from tests.workers import WorkerProcess, exists, java_children

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    time_limit(240),
]

FAIL_BOUND = 60.0  # the job's end after its JVM died (the watchdog looks every second)
RESTART_BOUND = 180.0  # a new JVM and the next job, on a loaded machine


def _kill_jvm(worker: WorkerProcess) -> int:
    [jvm] = java_children(worker.pid)
    os.kill(jvm, signal.SIGKILL)
    wait_until(lambda: not exists(jvm), 30, 0.1, "the JVM gone")
    return jvm


def _check_engine_lost(job: Job) -> None:
    assert job.status == "FAILED", (job.status, job.error)
    error = job.error or {}
    assert error.get("code") == "ENGINE_LOST", error
    message = str(error.get("message"))
    assert "Spark on this worker" in message and "Traceback" not in message, message
    assert_ran_once(job.id)


def _next_job_finishes(worker: WorkerProcess, owner_user: object, killed: int) -> None:
    after = submit_sql(owner_user, "SELECT 40 + 2 AS answer")  # type: ignore[arg-type]
    done = wait_terminal(after.id, RESTART_BOUND, "the next job on a new JVM")
    assert done.status == "FINISHED", (done.status, done.error)
    assert worker.alive() and done.worker == worker.hostname  # the same worker process
    assert java_children(worker.pid) not in ([], [killed])


def test_kill_9_of_the_jvm_mid_query_fails_the_query_and_the_worker_serves_on(
    steady: WorkerProcess,
) -> None:
    owner = new_owner("jvmq")

    def attempt(number: int) -> None:
        job = submit_sql(owner.user, SLOW_QUERY)
        wait_running(job.id)
        killed = _kill_jvm(steady)
        started = time.monotonic()
        _check_engine_lost(wait_terminal(job.id, FAIL_BOUND))
        print(f"JVM kill #{number + 1} (query): FAILED {time.monotonic() - started:.1f} s after")
        _next_job_finishes(steady, owner.user, killed)

    inject("JVM kills mid-query", attempt)


def test_kill_9_of_the_jvm_mid_ctas_leaves_nothing_behind(steady: WorkerProcess) -> None:
    owner = new_owner("jvmc")
    make_keep(owner)

    def attempt(number: int) -> None:
        before = owner.snapshot()
        name = f"half{number}"
        job = submit_sql(owner.user, f"CREATE TABLE {owner.catalog}.d.{name} AS {SLOW_CTAS_QUERY}")
        wait_writing(job.id)
        killed = _kill_jvm(steady)
        started = time.monotonic()
        ended = wait_terminal(job.id, FAIL_BOUND)
        _check_engine_lost(ended)
        print(f"JVM kill #{number + 1} (CTAS): FAILED {time.monotonic() - started:.1f} s after")
        wait_until(
            lambda: "data_cleaned" in [e.type for e in ended.events.all()],
            30,
            0.1,
            "the staging clean-up",
        )
        wait_left_nothing(ended, owner, name)
        assert owner.snapshot() == before
        _next_job_finishes(steady, owner.user, killed)

    inject("JVM kills mid-CTAS", attempt)
