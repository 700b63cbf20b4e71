"""The worker protects its JVM (docs/security.md §4).

The attack it closes: ≈2 MB statements ran the worker's JVM out of heap; the jobs stayed
RUNNING for minutes, cancel had no effect and everybody else's jobs queued behind them.

A worker of this module's own runs Spark with a small heap (``TESSERA_SPARK_DRIVER_MEMORY``)
so that exhausting it is cheap, and with a short unresponsive limit. A job that exhausts
the heap ends FAILED ``SPARK_OUT_OF_MEMORY`` and the next one on the same worker process
FINISHES (a new JVM); a job whose JVM stops answering is canceled within seconds and the
JVM is replaced; a result bigger than the driver may hold fails cleanly, the JVM lives on.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from jobs.models import Job
from tests.conftest import API
from tests.waiting import wait_until
from tests.worker_helpers import api_for, create_user, open_session, statement, wait_job
from tests.workers import WorkerProcess, exists, java_children, start_worker

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

HEAP = "512m"  # Spark refuses less than ≈450 MB
UNRESPONSIVE_SECONDS = 10
# ≈2 GB of strings in one aggregation buffer: far past a 512 MB heap.
EXHAUSTING_SQL = "SELECT size(collect_list(repeat('x', 1000000))) AS n FROM range(0, 2000)"
SLOW_SQL = "SELECT count(*) AS n FROM range(0, 100000000) AS a CROSS JOIN range(0, 100000) AS b"


@pytest.fixture(scope="module")
def small_heap_worker(
    django_db_setup: None,
    django_db_blocker: Any,
    tmp_path_factory: pytest.TempPathFactory,
    own_workers_only: None,
) -> Iterator[WorkerProcess]:
    env = {
        "TESSERA_SPARK_DRIVER_MEMORY": HEAP,
        "TESSERA_SPARK_UNRESPONSIVE_SECONDS": str(UNRESPONSIVE_SECONDS),
    }
    yield from start_worker("small-heap", tmp_path_factory, django_db_blocker, env)


@pytest.fixture
def api() -> Any:
    return api_for(create_user(f"oli{uuid.uuid4().hex[:6]}"))


def run(api: Any, session: str, sql: str, timeout: float = 180) -> dict[str, Any]:
    return wait_job(api, statement(api, session, sql)["id"], timeout=timeout)


def test_a_job_that_exhausts_the_heap_fails_and_the_next_one_finishes(
    small_heap_worker: WorkerProcess, api: Any
) -> None:
    session = open_session(api)
    [first_jvm] = java_children(small_heap_worker.pid)
    # Two at once, as in the report: neither stays RUNNING.
    ids = [statement(api, session, EXHAUSTING_SQL)["id"] for _ in range(2)]
    started = time.monotonic()
    for job_id in ids:
        job = wait_job(api, job_id, timeout=180)
        assert job["status"] == "FAILED", job
        error = job["error"]
        assert error["code"] == "SPARK_OUT_OF_MEMORY", error
        assert "ran out of memory" in error["message"] and HEAP in error["message"]
        assert set(error) == {"code", "message", "details"}
    print(f"\nboth exhausting jobs FAILED {time.monotonic() - started:.1f} s after submission")
    assert not exists(first_jvm)

    after = run(api, session, "SELECT 40 + 2 AS answer")
    assert after["status"] == "FINISHED", after
    # The same worker process (the same identity), on a new JVM.
    assert small_heap_worker.alive()
    assert Job.objects.get(pk=after["id"]).worker == small_heap_worker.hostname
    assert java_children(small_heap_worker.pid) not in ([], [first_jvm])


def test_a_result_bigger_than_the_driver_may_hold_fails_and_the_jvm_lives_on(
    small_heap_worker: WorkerProcess, api: Any
) -> None:
    session = open_session(api)
    run(api, session, "SELECT 1 AS warm")
    jvms = java_children(small_heap_worker.pid)
    # ≈300 MB of result rows, over spark.driver.maxResultSize (a quarter of the heap).
    job = run(api, session, "SELECT repeat('x', 1000000) AS s FROM range(0, 300, 1, 30)")
    assert job["status"] == "FAILED", job
    assert job["error"]["code"] == "SPARK_ERROR", job["error"]
    assert "maxResultSize" in job["error"]["message"], job["error"]
    assert java_children(small_heap_worker.pid) == jvms  # the same JVM
    assert run(api, session, "SELECT 7 AS seven")["status"] == "FINISHED"


def test_cancel_ends_the_job_when_spark_does_not_answer_and_the_jvm_is_replaced(
    small_heap_worker: WorkerProcess, api: Any
) -> None:
    session = open_session(api)
    run(api, session, "SELECT 1 AS warm")
    [jvm] = java_children(small_heap_worker.pid)
    job_id = statement(api, session, SLOW_SQL)["id"]
    wait_until(
        lambda: Job.objects.filter(pk=job_id, status="RUNNING").exclude(progress={}).exists(),
        90,
        message="the slow job to run",
    )
    os.kill(jvm, signal.SIGSTOP)  # the JVM stops answering anything (as when it thrashes)
    try:
        stopped = time.monotonic()
        response = api.post(f"{API}/jobs/{job_id}/cancel")
        assert response.status_code == 200, response.content
        # Ended without Spark's answer: within 15 s (a deadline, not a measurement).
        job = wait_job(api, job_id, {"CANCELED", "FAILED"}, timeout=15)
        assert job["status"] == "CANCELED", job
        # The job heartbeat went on meanwhile: nothing else marked it lost.
        assert job["error"]["code"] == "CANCELED"

        # The watchdog kills the silent JVM and starts a new one; the next job finishes.
        wait_until(lambda: not exists(jvm), UNRESPONSIVE_SECONDS + 30, 0.5, "the JVM killed")
        print(f"silent JVM killed {time.monotonic() - stopped:.1f} s after it stopped answering")
        after = run(api, session, "SELECT 'still here' AS s")
        assert after["status"] == "FINISHED", after
        assert small_heap_worker.alive()
    finally:
        if exists(jvm):
            os.kill(jvm, signal.SIGKILL)
