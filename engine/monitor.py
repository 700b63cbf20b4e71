"""The monitor thread of a RUNNING job (``engine.run``, ``engine.pipeline``).

While Spark works, the monitor watches the job's row: it is woken by the job's ``cancel``
notification (``jobs.notify``) and reads the row then, and at least every
``HEARTBEAT_SECONDS``. On ``cancel_requested`` it stops the Spark work (job tag + job group)
and moves the job to CANCELED; past its timeout it stops it and fails the job with
``TIMEOUT``; every ``HEARTBEAT_SECONDS`` it writes ``heartbeat_at`` and ``progress``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from django.db import close_old_connections, connection
from django.utils import timezone

from core import jobstate
from engine import errors
from engine.control import SparkJobControl
from jobs import lifecycle, notify
from jobs.errors import CANCELED, JobError
from jobs.identity import current_identity
from jobs.models import Job
from sessions.planning import session_properties

log = logging.getLogger(__name__)


def job_properties(job: Job) -> dict[str, Any]:
    """The session properties in force for this job: the session's, each checked again by
    the registry (unknown keys and unreadable values dropped, numbers clamped to the
    server's limits): a value stored before a limit existed is never trusted as it was
    stored. (The plan carries no properties: ``Plan`` has no such field.)"""
    properties = dict(job.session.properties or {}) if job.session is not None else {}
    return dict(session_properties().effective(properties))


def timeout_seconds(job: Job, properties: Mapping[str, Any]) -> int:
    """The job's own timeout (the web copies the session's ``job.timeout_seconds`` into it),
    within the server's range: a job stored with a larger one is held to the maximum."""
    registry = session_properties()
    if job.timeout_seconds:
        return registry.clamp_timeout(int(job.timeout_seconds))
    return registry.job_timeout_seconds(properties)


HEARTBEAT_SECONDS = 1.0
# Once a cancel or a timeout is decided, Spark is told again this often until the job's
# thread gives up (an action that had not started at the first cancel starts with the tag).
RECANCEL_SECONDS = 0.2
# How long the monitor waits for Spark to take a cancel, or to tell progress: a JVM that
# does not answer must not stop the heartbeat, nor a cancel from ending the job.
CANCEL_WAIT_SECONDS = 3.0
PROGRESS_WAIT_SECONDS = 0.5


class JobMonitor(threading.Thread):
    """Watches a RUNNING job's row while its Spark work runs in another thread.

    It never waits on Spark for long (``SparkJobControl.cancel_within``/``progress_within``):
    with a JVM that does not answer, the job still heartbeats, and a cancel or a timeout
    still ends it within seconds (the worker's watchdog then restarts that JVM)."""

    def __init__(
        self,
        job_id: Any,
        control: SparkJobControl,
        timeout: float,
        watch: notify.Watch,
        extra: Callable[[], Mapping[str, Any]] | None = None,
        *,
        stages: bool = True,
    ) -> None:
        super().__init__(name=f"tessera-monitor-{job_id}", daemon=True)
        # Whether the progress counts Spark's stages and tasks: a stream's Spark jobs never
        # end (the count would only grow, and reading it walks every retained job of the
        # group at each heartbeat); it reports its ``stream`` figures instead.
        self.stages = stages
        self.job_id = job_id
        self.control = control
        self.timeout = timeout
        # What the job adds to its progress (a stream's ``stream`` figures).
        self.extra = extra
        self.outcome: str | None = None  # "canceled" | "timeout" | "gone"
        self.cancel_latency: float | None = None
        self._done = threading.Event()
        self._watch = watch
        self._began = time.monotonic()
        # The worker the job must stay on (``Job.worker``): this process's identity, which
        # every claim here records — not what the row says at the first look, which may
        # already name another worker (this one paused right after its claim, taken for
        # lost, the stream requeued and claimed elsewhere: ``jobs.maintenance.lose_job``).
        # Without an identity (a process that is no Celery worker): the first look's.
        self._worker: str | None = current_identity()

    def stop(self) -> None:
        self._done.set()
        self._watch.wake()
        self.join()

    def _pause(self, last_beat: float) -> float:
        """How long to wait for a notification before the next look at the row."""
        if self.outcome is not None:
            return RECANCEL_SECONDS
        now = time.monotonic()
        return max(0.0, min(last_beat + HEARTBEAT_SECONDS, self._began + self.timeout) - now)

    def run(self) -> None:
        last_beat = time.monotonic()
        try:
            # The first look waits too: a job that ends within a heartbeat, and is not
            # canceled, never costs the monitor a database connection.
            while not self._done.is_set():
                self._watch.wait(self._pause(last_beat))
                if self._done.is_set():
                    break
                try:
                    last_beat = self._tick(last_beat)
                except Exception:  # a database hiccup: try again a heartbeat later
                    log.exception("job %s: monitor tick failed", self.job_id)
                    close_old_connections()
                    last_beat = time.monotonic()  # else it would retry at once, in a loop
        finally:
            connection.close()

    def _tick(self, last_beat: float) -> float:
        if self.outcome is not None:
            # Already decided: keep stopping Spark until the job's thread gives up (an
            # action that had not started at the first cancel starts with the same tag).
            self.control.cancel_within(0)
            return last_beat
        row = (
            Job.objects.filter(pk=self.job_id)
            .values("status", "cancel_requested", "worker")
            .first()
        )
        if self._worker is None and row is not None:
            self._worker = row["worker"]  # the process that claimed it: this one
        if row is None or row["status"] != jobstate.RUNNING or row["worker"] != self._worker:
            # Reaped or otherwise ended — or, a stream, requeued by the reaper (this worker
            # was taken for lost) and claimed by another worker since: stop, write nothing.
            self.outcome = "gone"
            self.control.cancel_within(0)
            return last_beat
        if row["cancel_requested"]:
            self._cancel()
            return last_beat
        if time.monotonic() - self._began > self.timeout:
            self._time_out()
            return last_beat
        now = time.monotonic()
        if now - last_beat >= HEARTBEAT_SECONDS:
            progress = self._with_extra(self._stage_progress(PROGRESS_WAIT_SECONDS))
            if Job.objects.filter(
                pk=self.job_id, status=jobstate.RUNNING, worker=self._worker
            ).update(heartbeat_at=timezone.now(), progress=progress):
                notify.announce(self.job_id, notify.PROGRESS)
            return now
        return last_beat

    def _stage_progress(self, wait: float) -> Mapping[str, Any]:
        return self.control.progress_within(wait) if self.stages else {}

    def _with_extra(self, progress: Mapping[str, Any]) -> dict[str, Any]:
        result = dict(progress)
        if self.extra is not None:
            try:
                result.update(self.extra())
            except Exception:  # figures must never stop the heartbeat
                log.debug("job %s: extra progress unavailable", self.job_id, exc_info=True)
        return result

    def _stop_spark(self) -> tuple[bool, dict[str, Any]]:
        """Cancel the job's Spark work, waiting at most ``CANCEL_WAIT_SECONDS``; whether
        Spark took it, and the progress to record."""
        stopped = self.control.cancel_within(CANCEL_WAIT_SECONDS)
        progress = self._with_extra(self._stage_progress(PROGRESS_WAIT_SECONDS if stopped else 0))
        if not stopped:
            log.warning("job %s: Spark did not take the cancel in time", self.job_id)
        return stopped, progress

    def _cancel(self) -> None:
        begin = time.monotonic()
        self.outcome = "canceled"
        stopped, progress = self._stop_spark()
        message = (
            "Canceled while running; its Spark work was stopped."
            if stopped
            else "Canceled while running; Spark did not answer, so its work is stopped as "
            "soon as it does or when the worker restarts Spark."
        )
        lifecycle.try_transition(
            self.job_id,
            jobstate.RUNNING,
            jobstate.CANCELED,
            held_by=self._worker,
            progress=progress,
            error=JobError(CANCELED, message, {}),
        )
        self.cancel_latency = time.monotonic() - begin
        log.info("job %s canceled (Spark stopped in %.3f s)", self.job_id, self.cancel_latency)

    def _time_out(self) -> None:
        self.outcome = "timeout"
        _, progress = self._stop_spark()
        seconds = int(self.timeout)
        lifecycle.try_transition(
            self.job_id,
            jobstate.RUNNING,
            jobstate.FAILED,
            held_by=self._worker,
            progress=progress,
            error=JobError(
                errors.TIMEOUT,
                f"The job ran longer than its timeout of {seconds} s and was stopped.",
                {"timeout_seconds": seconds},
            ),
        )
        log.info("job %s timed out after %s s", self.job_id, seconds)
