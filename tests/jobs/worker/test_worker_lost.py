"""A worker killed mid-query: its job ends FAILED with WORKER_LOST (the web's lazy reap on
``GET /jobs/{id}``, or any other live worker's reaper), and its hooks run."""

from __future__ import annotations

from typing import Any

import pytest

from jobs.models import Job
from tests.waiting import wait_until
from tests.worker_helpers import api_for, create_user, events, get_job, submit_sql
from tests.workers import WorkerProcess

# The shared worker is the one killed (the ``worker`` fixture starts it again if a test
# after this one needs it): these tests run after the others.
pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.kills_shared_worker,
]

SLOW_SQL = "SELECT count(*) AS n FROM range(0, 100000000) AS a CROSS JOIN range(0, 100000) AS b"


def test_killed_worker_ends_the_job_worker_lost(worker: WorkerProcess, settings: Any) -> None:
    doomed_worker = worker
    settings.TESSERA_WORKER_TIMEOUT_SECONDS = 4  # as the worker was told (tests/workers.py)
    user = create_user("gina")
    api = api_for(user)
    job = submit_sql(user, SLOW_SQL)
    wait_until(
        lambda: (
            Job.objects.filter(pk=job.id, status="RUNNING", worker=doomed_worker.hostname)
            .exclude(progress={})
            .exists()
        ),
        60,
        message="the job to run on the doomed worker",
    )
    doomed_worker.kill()

    def failed() -> dict[str, Any] | None:
        body = get_job(api, job.id)  # GET reaps lazily once the heartbeat is stale
        return body if body["status"] != "RUNNING" else None

    body = wait_until(failed, 30, 0.25, "the lost job to fail")
    assert body["status"] == "FAILED"
    assert body["error"]["code"] == "WORKER_LOST"
    assert doomed_worker.hostname in body["error"]["message"]
    assert events(job.id) == ["created", "running", "failed"]
