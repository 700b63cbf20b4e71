"""The registry of jobs this process runs (``jobs.running``), which the orphan sweep reads."""

from __future__ import annotations

import uuid

from jobs.running import mark_running, running_here, running_now


def test_a_job_claimed_again_before_its_first_run_let_go_stays_running() -> None:
    # Its engine died: the job was requeued and another thread claimed it again before the
    # first thread, woken by the engine's end, let go of it.
    job = str(uuid.uuid4())
    mark_running(job, True)  # the first run (the thread that sent it to the engine)
    with running_here(job):  # the second claim
        mark_running(job, False)  # the first run lets go
        assert job in running_now()
    assert job not in running_now()


def test_marks_come_in_pairs() -> None:
    job = str(uuid.uuid4())
    mark_running(job, True)
    mark_running(job, True)
    mark_running(job, False)
    assert job in running_now()
    mark_running(job, False)
    assert job not in running_now()
