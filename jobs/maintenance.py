"""Housekeeping of jobs, sessions, table versions and the audit log: reaping, sweeping, expiry.

Every live worker runs these from its heartbeat loop (``jobs.worker``), so any worker
reaps the jobs of a dead one; the web may call ``reap_lost_jobs(job_id)`` lazily (e.g. on
``GET /jobs/{id}``). All of them are safe to run concurrently: each change is a
conditional UPDATE (or a lifecycle transition) that only one caller wins.
No pyspark here: the web process imports this module.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Collection, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db.models import BooleanField, ExpressionWrapper, Q
from django.utils import timezone

from audit import services as audit
from catalog import versions
from core import jobstate
from jobs import lifecycle, scheduling
from jobs.dispatch import enqueue
from jobs.errors import CANCELED, WORKER_LOST, JobError
from jobs.models import Job, Session, Worker
from results import store
from sessions import uploads
from tabledata import stream_commit
from tabledata.commit_files import warehouse

log = logging.getLogger(__name__)

# A CREATED job is re-sent after TESSERA_SWEEP_AFTER_SECONDS, then after twice as long each
# time (up to 64 times): a message that is only waiting behind busy workers is not multiplied.
MAX_BACKOFF_EXPONENT = 6
SWEEP_BATCH = 100


def _now(now: datetime | None) -> datetime:
    return now or timezone.now()


def reap_lost_jobs(job_id: Any = None, now: datetime | None = None) -> list[str]:
    """End or requeue the RUNNING jobs whose worker process is gone (``lose_job``).

    Jobs are judged by the identity of the process that claimed them (``Job.worker``, one
    per process start, see ``jobs.worker``), never by a node name a restarted process
    shares. A job is lost when

    - its worker's row is marked stopped (the process ended: a clean shutdown, or another
      process on its machine found it gone), at once; or
    - its own heartbeat (written by the job's monitor every second) is older than
      ``TESSERA_WORKER_TIMEOUT_SECONDS`` and its worker has no fresh heartbeat row.

    A batch job fails (``WORKER_LOST``, its FAILED steps run); a stream is requeued to
    resume from its checkpoint (``lose_job``). ``job_id`` limits the check to one job.
    Returns the ids of the jobs failed, canceled or requeued here.
    """
    current = _now(now)
    cutoff = current - timedelta(seconds=settings.TESSERA_WORKER_TIMEOUT_SECONDS)
    stopped = Worker.objects.filter(stopped_at__isnull=False).values("hostname")
    lost = Job.objects.filter(status=jobstate.RUNNING).filter(
        Q(heartbeat_at__lt=cutoff)
        | Q(heartbeat_at__isnull=True, started_at__lt=cutoff)
        | Q(worker__in=stopped)
    )
    if job_id is not None:
        lost = lost.filter(pk=job_id)
    candidates = list(lost.values_list("id", "worker")[:SWEEP_BATCH])
    if not candidates:
        return []
    live = set(
        Worker.objects.filter(last_heartbeat__gte=cutoff, stopped_at__isnull=True).values_list(
            "hostname", flat=True
        )
    )
    reaped: list[str] = []
    for candidate_id, worker in candidates:
        if worker and worker in live:
            continue  # its worker is alive: the job's monitor is only late
        who = f"Worker {worker}" if worker else "The process running the job"
        status = lose_job(candidate_id, worker, f"{who} stopped responding")
        if status is not None:
            log.warning("job %s → %s: worker %r lost", candidate_id, status, worker)
            reaped.append(str(candidate_id))
    return reaped


def max_restarts() -> int:
    """How many times a stream is resumed after lost workers (``TESSERA_STREAM_MAX_RESTARTS``)."""
    return max(int(settings.TESSERA_STREAM_MAX_RESTARTS), 0)


def lose_job(job_id: Any, worker: str, what: str, batch_message: str = "") -> str | None:
    """A RUNNING job whose worker process is gone (``what``: "Worker w stopped responding")
    ends as ``jobstate.after_worker_lost`` says:

    - CANCELED when a cancel was asked (the worker died before it could end it); the
      cancel's steps run;
    - CREATED for a stream resumed fewer than ``TESSERA_STREAM_MAX_RESTARTS`` times: event
      ``worker_lost``, no steps (``lifecycle.requeue``: its staging, stage table and
      checkpoint stay), and a message to the workers; the worker that claims it records
      ``resumed`` and continues from the checkpoint;
    - FAILED otherwise, code ``WORKER_LOST`` (``batch_message`` for a batch job, else a
      sentence of ``what``); the FAILED steps run.

    Returns the status reached, or None when somebody else moved the job first."""
    row = Job.objects.filter(pk=job_id, status=jobstate.RUNNING).first()
    if row is None:
        return None
    try:
        plan = row.typed_plan
    except (KeyError, TypeError, ValueError):
        plan = None
    streaming = jobstate.is_streaming(plan)
    restarts = lifecycle.restarts_of(job_id) if streaming else 0
    most = max_restarts()
    target = jobstate.after_worker_lost(
        plan, cancel_requested=row.cancel_requested, restarts=restarts, max_restarts=most
    )
    details: dict[str, Any] = {"worker": worker}
    if target == jobstate.CANCELED:
        error = JobError(
            CANCELED, f"{what} while the job was being canceled; it is canceled.", details
        )
        done = lifecycle.try_transition(job_id, jobstate.RUNNING, target, error=error)
        return target if done is not None else None
    if target == jobstate.CREATED:
        detail = {
            **details,
            "restart": restarts + 1,
            "max_restarts": most,
            "message": (
                f"{what} while the stream was running; it waits for a worker to resume it "
                f"from its checkpoint (restart {restarts + 1} of at most {most})."
            ),
        }
        if not lifecycle.requeue(job_id, detail):
            return None
        enqueue(job_id)  # committed already (``requeue``'s own transaction)
        return target
    if not streaming:
        message = batch_message or f"{what} while the job was running."
    elif most == 0:
        message = (
            f"{what} while the stream was running; streams are not resumed after a lost "
            "worker on this server (TESSERA_STREAM_MAX_RESTARTS is 0)."
        )
    else:
        message = (
            f"{what} while the stream was running; it had been resumed {restarts:,} times "
            f"after lost workers, the most TESSERA_STREAM_MAX_RESTARTS allows, so it is not "
            "resumed again."
        )
        details = {**details, "restarts": restarts, "max_restarts": most}
    lost = JobError(WORKER_LOST, message, details, retryable=True)
    done = lifecycle.try_transition(job_id, jobstate.RUNNING, jobstate.FAILED, error=lost)
    return jobstate.FAILED if done is not None else None


# A job claimed this long ago and run by no thread of its worker is an orphan (the claim and
# the registration of the job's thread are moments apart; this covers the gap).
ORPHAN_GRACE_SECONDS = 5


def fail_orphaned_jobs(
    identity: str, running_here: Collection[str], now: datetime | None = None
) -> list[str]:
    """Fail the RUNNING jobs claimed by this worker process (``identity``) that none of its
    threads runs any more (``running_here``): code ``WORKER_LOST``.

    The reaper spares the jobs of a live worker, and a job's thread may end without ending
    the job when the database is gone at that moment (PostgreSQL restarted while the job
    made its last transition, and the FAILED transition of its error handler failed too):
    the job would stay RUNNING for ever. Its worker, which knows what it runs, fails it
    once the database answers again (the FAILED steps drop a stage table, delete staging).
    """
    current = _now(now)
    claimed_before = current - timedelta(seconds=ORPHAN_GRACE_SECONDS)
    candidates = (
        Job.objects.filter(status=jobstate.RUNNING, worker=identity, started_at__lt=claimed_before)
        .exclude(pk__in=list(running_here))
        .values_list("id", flat=True)[:SWEEP_BATCH]
    )
    failed: list[str] = []
    for candidate_id in list(candidates):
        if str(candidate_id) in running_here:
            continue
        status = lose_job(
            candidate_id,
            identity,
            f"Worker {identity} lost track of the job (its database connection broke "
            "while the job was ending)",
            batch_message=(
                f"Worker {identity} lost track of the job (its database connection broke "
                "while the job was ending); nothing of it was committed. Run the "
                "statement again."
            ),
        )
        if status is not None:
            log.warning(
                "job %s → %s: its thread on %s ended without ending it",
                candidate_id,
                status,
                identity,
            )
            failed.append(str(candidate_id))
    return failed


def _earlier_script_jobs_finished(job: Job) -> bool:
    if job.script_id is None:
        return True
    earlier = Job.objects.filter(script_id=job.script_id, script_index__lt=job.script_index)
    return not earlier.exclude(status=jobstate.FINISHED).exists()


def sweep_unclaimed_jobs(now: datetime | None = None) -> list[str]:
    """Re-enqueue CREATED Spark jobs whose message seems lost (not claimed in time).

    Due when created/enqueued more than ``TESSERA_SWEEP_AFTER_SECONDS`` ago (doubling with
    each re-send; not for a stream, which may wait for a worker with a stream slot free).
    Jobs of a script wait for the jobs before them. A job whose user is at
    ``TESSERA_USER_RUNNING_JOBS`` is not re-sent: it waits for one of that user's jobs to
    end, and the worker where it ends sends a message then (``scheduling.hand_on``); its
    back-off does not grow meanwhile. A re-sent message claims the fairest job, which may
    be another one (``jobs.scheduling``). Two sweepers never send
    the same job twice: each takes it with a conditional UPDATE of ``enqueued_at``.
    Duplicate messages are harmless anyway (the claim decides). Returns the ids re-sent.
    """
    current = _now(now)
    after = settings.TESSERA_SWEEP_AFTER_SECONDS
    cutoff = current - timedelta(seconds=after)
    due = (
        scheduling.with_user_running()
        .exclude(scheduling.held_back())
        .filter(Q(enqueued_at__lt=cutoff) | Q(enqueued_at__isnull=True, created_at__lt=cutoff))
        .annotate(stream=ExpressionWrapper(scheduling.streaming(), output_field=BooleanField()))
        .order_by("created_at")
        .only("id", "enqueued_at", "enqueue_count", "created_at", "script_id", "script_index")
    )
    sent: list[str] = []
    for job in due[:SWEEP_BATCH]:
        last = job.enqueued_at or job.created_at
        # A stream waits for a stream slot, which a message to a worker without one cannot
        # take: its messages are re-sent at the base interval, never backed off.
        exponent = 0 if job.stream else min(max(job.enqueue_count - 1, 0), MAX_BACKOFF_EXPONENT)
        backoff = after * 2**exponent
        if current - last < timedelta(seconds=backoff):
            continue
        if not _earlier_script_jobs_finished(job):
            continue
        taken = Job.objects.filter(
            pk=job.pk, status=jobstate.CREATED, enqueued_at=job.enqueued_at
        ).update(enqueued_at=current)
        if taken != 1:
            continue
        enqueue(job.pk)
        lifecycle.record_event(job.pk, "requeued", {"after_seconds": int(backoff)})
        log.warning("job %s was not claimed in time; enqueued again", job.pk)
        sent.append(str(job.pk))
    return sent


def expire_sessions(now: datetime | None = None) -> int:
    """Delete sessions idle past their ``idle_timeout_seconds`` (and nothing running in
    them). Returns how many were deleted."""
    current = _now(now)
    active = Job.objects.filter(status__in=[jobstate.CREATED, jobstate.RUNNING]).values(
        "session_id"
    )
    deleted = 0
    timeouts = Session.objects.values_list("idle_timeout_seconds", flat=True).distinct()
    for seconds in list(timeouts):
        expired = Session.objects.filter(
            idle_timeout_seconds=seconds, last_used_at__lt=current - timedelta(seconds=seconds)
        ).exclude(pk__in=active)
        _, per_model = expired.delete()
        deleted += per_model.get(Session._meta.label, 0)
    if deleted:
        log.info("expired %d idle sessions", deleted)
    # Their uploads' files go after each deletion's commit; this catches what a process
    # that died in between left behind.
    uploads.sweep_orphans()
    return deleted


def expire_results() -> int:
    """Delete stored results older than ``TESSERA_RESULT_TTL_SECONDS``; returns how many."""
    return store.expire_results(timedelta(seconds=settings.TESSERA_RESULT_TTL_SECONDS))


def expire_table_versions(now: datetime | None = None) -> list[str]:
    """Remove the data of managed tables' versions replaced more than
    ``TESSERA_VERSION_RETENTION`` ago (``catalog.versions.expire``); returns their
    directories."""
    return versions.expire(now)


def expire_audit_events(now: datetime | None = None) -> int:
    """Delete the audit log's ``read``/``write``/``denied`` events older than
    ``TESSERA_AUDIT_ACCESS_RETENTION`` (``audit.services.expire``; grants, revokes, ownership
    and team changes and drops stay); returns how many."""
    return audit.expire(now)


def _job_dirs(root: Path) -> Iterator[str]:
    """The names of ``root``'s directories that are job ids (as ``str(uuid)`` writes them);
    anything else there, links included, is not ours and left alone."""
    if not root.is_dir() or root.is_symlink():
        return
    for child in root.iterdir():
        try:
            name = str(uuid.UUID(child.name))
        except ValueError:
            continue
        if name == child.name and child.is_dir() and not child.is_symlink():
            yield name


def sweep_ended_streams() -> list[str]:
    """Remove the checkpoint (``<data dir>/checkpoints/<job>``) and batch staging
    (``<warehouse>/.tessera-streams/<job>``) of streams that have ended — or whose job is
    gone — and that nobody removed: a streaming SELECT ended by the reaper
    (``lose_job``: FAILED ``WORKER_LOST`` past ``TESSERA_STREAM_MAX_RESTARTS``, or
    CANCELED) has no runner and no write step to clean up after it. A job that is CREATED
    (a stream requeued to resume from its checkpoint) or RUNNING keeps both. Idempotent;
    each path is checked to be strictly under its root and no link
    (``stream_commit.clean_stream``). Run by the workers only (the web may not see the
    data dir). Returns the ids of the jobs whose directories were removed."""
    roots = (
        Path(settings.DATA_DIR) / stream_commit.CHECKPOINTS_DIR,
        warehouse() / stream_commit.STREAMS_DIR,
    )
    found = sorted({name for root in roots for name in _job_dirs(root)})[: SWEEP_BATCH * 10]
    if not found:
        return []
    unfinished = {
        str(pk)
        for pk in Job.objects.filter(pk__in=found)
        .exclude(status__in=jobstate.TERMINAL)
        .values_list("id", flat=True)
    }
    removed = [
        name for name in found if name not in unfinished and stream_commit.clean_stream(name)
    ]
    if removed:
        log.info("removed the checkpoints and staging of %d ended streams", len(removed))
    return removed
