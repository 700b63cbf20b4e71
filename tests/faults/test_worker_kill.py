"""kill -9 of a worker (and its JVM) mid-CTAS, repeatedly.

Invariant each time: the CTAS ends FAILED ``WORKER_LOST`` within the reaper's bound (here
the web's lazy reap on ``GET /jobs/{id}``), its stage table is dropped, its staging
directory deleted, the permanent table of the catalog unchanged, and the job ran once.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.faults.harness import (
    SLOW_CTAS_QUERY,
    assert_ran_once,
    kill_worker_and_jvm,
    make_keep,
    new_owner,
    wait_left_nothing,
    wait_writing,
)
from tests.faults.tally import WORKER_TIMEOUT_SECONDS, inject, time_limit
from tests.waiting import wait_until
from tests.worker_helpers import api_for, get_job, submit_sql
from tests.workers import WorkerProcess

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    time_limit(150),
]

# The reaper's bound: the worker's timeout, plus a loaded machine's slack.
REAP_BOUND = WORKER_TIMEOUT_SECONDS + 20


def test_kill_9_of_a_worker_mid_ctas_leaves_nothing_behind(
    without_steady: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    owner = new_owner("kill")
    api = api_for(owner.user)
    workers: list[WorkerProcess] = []

    def start(number: int) -> WorkerProcess:
        log = tmp_path_factory.mktemp(f"doomed{number}") / "worker.log"
        worker = WorkerProcess(f"doomed{number}", log, django_db_blocker)
        workers.append(worker)
        worker.start()
        return worker

    def attempt(number: int) -> None:
        worker = start(number)
        if number == 0 or not owner.keep_rows:
            make_keep(owner)
        before = owner.snapshot()
        name = f"lost{number}"
        job = submit_sql(owner.user, f"CREATE TABLE {owner.catalog}.d.{name} AS {SLOW_CTAS_QUERY}")
        running = wait_writing(job.id)
        assert running.worker == worker.hostname
        kill_worker_and_jvm(worker)
        killed = time.monotonic()

        def ended() -> dict[str, Any] | None:
            body = get_job(api, job.id)  # GET reaps lazily once the heartbeat is stale
            return body if body["status"] != "RUNNING" else None

        body = wait_until(ended, REAP_BOUND, 0.25, "the killed worker's CTAS to be reaped")
        print(f"kill #{number + 1}: reaped {time.monotonic() - killed:.1f} s after kill -9")
        assert body["status"] == "FAILED", body
        assert body["error"]["code"] == "WORKER_LOST", body["error"]
        types = assert_ran_once(job.id)
        assert {"stage_table_dropped", "data_cleaned"} <= set(types), types
        running.refresh_from_db()
        wait_left_nothing(running, owner, name)
        assert owner.snapshot() == before

    try:
        inject("worker kills (kill -9) mid-CTAS", attempt)
    finally:
        for worker in workers:
            if worker.alive():
                worker.stop()
