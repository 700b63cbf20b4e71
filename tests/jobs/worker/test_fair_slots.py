"""The slot kept for whoever comes next, on a real worker (docs/adr/0009-fair-claim.md,
"Amendment: the kept slot"): bob's four long jobs, within his running limit of 4, take
three of the worker's four slots and the fourth waits CREATED, saying why; alice's
``SELECT 1`` takes the kept slot at once and finishes while bob's jobs run; when one of
bob's ends, the worker hands the slot on and his waiting job runs.

The shared worker (``--concurrency 4``, ``TESSERA_USER_RUNNING_JOBS`` 4 by default) serves;
bob's jobs are canceled at the end.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from jobs.models import Job, JobEvent, Worker
from tests.conftest import API
from tests.waiting import wait_until
from tests.worker_helpers import TERMINAL, api_for, create_user, submit_sql, wait_for_status
from tests.workers import WorkerProcess

pytestmark = [pytest.mark.spark, pytest.mark.django_db(transaction=True)]

# A nested-loop join that only counts: minutes on the test machine's two cores, so it runs
# until canceled; each job has its own bounds so that no result comes from a cache.
LONG = "SELECT count(*) AS n FROM range(0, {n}) AS a CROSS JOIN range(0, 200000) AS b"


def test_bob_s_long_jobs_leave_a_slot_that_alice_s_select_takes_at_once(
    worker: WorkerProcess,
) -> None:
    # The pool's size is the heartbeat row's: an earlier test's flush deletes it until the
    # worker's next beat, and without it nothing is kept.
    wait_until(
        lambda: Worker.objects.filter(hostname=worker.hostname, concurrency=4).exists(),
        60,
        0.1,
        "the shared worker's heartbeat row with its concurrency",
    )
    tag = uuid.uuid4().hex[:6]
    bob, alice = create_user(f"bob{tag}"), create_user(f"alice{tag}")
    bobs = [submit_sql(bob, LONG.format(n=200000 + i)) for i in range(4)]
    ids = [job.pk for job in bobs]

    def state() -> dict[str, Any]:
        rows = Job.objects.filter(pk__in=ids)
        return {
            "running": rows.filter(status="RUNNING").count(),
            "held": list(rows.filter(status="CREATED", held=True).values_list("pk", flat=True)),
        }

    try:
        # Three run; the fourth slot took a message and kept itself for another user.
        seen = wait_until(
            lambda: (s := state())["running"] == 3 and len(s["held"]) == 1 and s,
            120,
            0.1,
            lambda: f"3 of bob's jobs running and 1 held back ({state()})",
        )
        waiting = seen["held"][0]
        queued = JobEvent.objects.get(job_id=waiting, type="queued")
        assert queued.detail == {"reason": "reserved_slot", "running": 3, "position": 1}

        mine = submit_sql(alice, "SELECT 1 AS one")
        done = wait_for_status(mine.id, {"FINISHED"}, 120)
        assert done.worker == worker.hostname
        # Alice did not wait for bob: his jobs still run, his fourth still waits.
        assert state()["running"] == 3
        assert Job.objects.get(pk=waiting).status == "CREATED"

        # One of bob's ends: the worker hands the slot on and his fourth job runs.
        client = api_for(bob)
        first = next(job_id for job_id in ids if job_id != waiting)
        assert client.post(f"{API}/jobs/{first}/cancel").status_code == 200
        wait_for_status(first, {"CANCELED"}, 60)
        wait_until(
            lambda: Job.objects.filter(pk=waiting, status="RUNNING").exists(),
            60,
            0.1,
            "bob's held-back job to run once a slot freed",
        )
    finally:
        client = api_for(bob)
        for job_id in ids:
            client.post(f"{API}/jobs/{job_id}/cancel")
        wait_until(
            lambda: all(j.status in TERMINAL for j in Job.objects.filter(pk__in=ids)),
            120,
            0.2,
            "bob's jobs to end",
        )
