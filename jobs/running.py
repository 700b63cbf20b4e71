"""Which jobs this process runs now, for the orphan sweep (``maintenance.fail_orphaned_jobs``):
a worker's job threads, and the jobs its engine processes report (``engine.pool``)."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

# Counted, not a set: a job requeued when its engine died may be claimed again by another
# thread before the first one let go of it; the first one's end must not unmark the second.
_running: Counter[str] = Counter()
_running_lock = threading.Lock()


def running_now() -> set[str]:
    with _running_lock:
        return set(_running)


# An engine process (``engine.host``) tells its worker which jobs run in it: set there.
_report_running: Callable[[str, bool], None] | None = None


def mark_running(job_id: Any, running: bool) -> None:
    """Count ``job_id`` as run (or no longer run) by a thread of this process: the worker
    does for the jobs its engine processes report (``engine.pool``). Calls come in pairs."""
    key = str(job_id)
    with _running_lock:
        if running:
            _running[key] += 1
        elif _running[key] > 1:
            _running[key] -= 1
        else:
            del _running[key]


def report_running_to(report: Callable[[str, bool], None] | None) -> None:
    """In an engine process: ``running_here`` also tells the worker (``report``)."""
    global _report_running
    _report_running = report


@contextmanager
def running_here(job_id: Any) -> Iterator[None]:
    """Around a job's thread, from before its claim to after its end: while it is inside,
    the job is not an orphan of this process (``maintenance.fail_orphaned_jobs``), nor of
    the worker whose engine process runs it."""
    key = str(job_id)
    report = _report_running
    mark_running(key, True)
    if report is not None:
        report(key, True)
    try:
        yield
    finally:
        mark_running(key, False)
        if report is not None:
            report(key, False)
