"""A worker killed mid-query: its job ends FAILED with WORKER_LOST (the web's lazy reap on
``GET /jobs/{id}``, or any other live worker's reaper), and its hooks run."""

from __future__ import annotations

import time
from typing import Any

import pytest

from jobs.models import Job
from tests.worker.conftest import wait_until
from tests.worker.helpers import api_for, create_user, events, get_job, hand_plan, submit_plan

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SLOW_SQL = "SELECT count(*) AS n FROM range(0, 100000000) AS a CROSS JOIN range(0, 100000) AS b"


@pytest.fixture(scope="module")
def doomed_worker(django_db_setup, django_db_blocker, tmp_path_factory) -> Any:
    from tests.worker.conftest import start_worker

    yield from start_worker("doomed-worker", tmp_path_factory, django_db_blocker)


def test_killed_worker_ends_the_job_worker_lost(doomed_worker, settings):
    settings.TESSERA_WORKER_TIMEOUT_SECONDS = 4  # as the worker was told (conftest)
    user = create_user("gina")
    api = api_for(user)
    job = submit_plan(user, hand_plan(SLOW_SQL))
    wait_until(
        lambda: (
            Job.objects.filter(pk=job.id, status="RUNNING", worker=doomed_worker.hostname)
            .exclude(progress={})
            .exists()
        ),
        60,
        what="the job to run on the doomed worker",
    )
    doomed_worker.kill()
    killed = time.monotonic()

    def failed() -> dict[str, Any] | None:
        body = get_job(api, job.id)  # GET reaps lazily once the heartbeat is stale
        return body if body["status"] != "RUNNING" else None

    body = wait_until(failed, 30, 0.25, "the lost job to fail")
    assert time.monotonic() - killed < 30
    assert body["status"] == "FAILED"
    assert body["error"]["code"] == "WORKER_LOST"
    assert doomed_worker.hostname in body["error"]["message"]
    assert events(job.id) == ["created", "running", "failed"]
