"""The scheduler tick: due schedules claimed in the database, each due slot run once.

Every live worker calls ``tick`` from its heartbeat loop (``jobs.worker``); there is no
Celery beat (docs/adr/0017-scheduler-in-the-database.md). One transaction per schedule:
the row is locked with ``SELECT … FOR UPDATE SKIP LOCKED`` (another worker's tick passes it
by), the run of the latest due slot is inserted — ``UNIQUE(schedule, scheduled_for)``
makes a second insert of the same slot fail harmlessly — its job is submitted, and
``next_run_at`` moves past now. A process that dies inside the transaction leaves nothing
(the slot is claimed again by the next tick); one that committed ran the slot. Slots
missed while no worker ran are not run one by one: the latest of them runs once.

A run's job is submitted through the statements endpoint's own service
(``sessions.statements.statement_submit``) as the schedule's owner, in a session of
theirs: their grants at run time decide, and a refusal is the job's (``PERMISSION_DENIED``).
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from croniter import CroniterError
from django.db import IntegrityError, transaction
from django.utils import timezone

from core import jobstate
from core.errors import CoreError, PermissionDenied
from jobs.errors import JobError
from jobs.models import ORIGIN_SCHEDULE, Job, Session
from schedules import cron, runs
from schedules.models import FAILED, Schedule, ScheduleRun
from sessions import services as session_services
from sessions import statements
from workbench import selectors as saved_queries

log = logging.getLogger(__name__)

# The most slots one tick runs; the rest wait for the next tick (a few seconds).
BATCH = 50


def tick(now: datetime | None = None) -> list[Any]:
    """Run every due slot once (at most ``BATCH``); the ids of the runs this call made."""
    made: list[Any] = []
    for _ in range(BATCH):
        claimed, run_id = _claim_one(now or timezone.now())
        if not claimed:
            break
        if run_id is not None:
            made.append(run_id)
    return made


def _claim_one(now: datetime) -> tuple[bool, Any]:
    """(False, None): nothing due. (True, run id or None): a due schedule was handled (None:
    its slot had run already)."""
    with transaction.atomic():
        row = (
            Schedule.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("owner", "saved_query")
            .filter(enabled=True, next_run_at__lte=now)
            .order_by("next_run_at")
            .first()
        )
        if row is None:
            return False, None
        try:
            slot = cron.latest_slot(row.cron, row.timezone, now)
            following: datetime | None = cron.next_slot(row.cron, row.timezone, now)
        except (CroniterError, ValueError, OverflowError):
            log.warning("schedule %s has no slot any more; it stays disabled", row.pk)
            Schedule.objects.filter(pk=row.pk).update(next_run_at=None, enabled=False)
            return True, None
        Schedule.objects.filter(pk=row.pk).update(next_run_at=following)
        try:
            with transaction.atomic():
                run = ScheduleRun.objects.create(schedule=row, scheduled_for=slot)
        except IntegrityError:
            return True, None  # this slot ran already (its run is there)
        _submit(row, run)
        return True, run.pk


def _fail(run: ScheduleRun, error: JobError) -> None:
    ScheduleRun.objects.filter(pk=run.pk).update(
        status=FAILED, error=error.to_json(), finished_at=timezone.now()
    )


def _session_of(row: Schedule) -> Session:
    """The schedule's SQL session while it lives; a new one of the owner's otherwise (where
    their workspace starts, as a new editor tab does)."""
    session = (
        Session.objects.select_related("user").filter(pk=row.session_id).first()
        if row.session_id is not None
        else None
    )
    now = timezone.now()
    if session is not None and session.user_id == row.owner_id and session.expires_at > now:
        Session.objects.filter(pk=session.pk).update(last_used_at=now)
        return session
    session, _ = session_services.session_open(user=row.owner, start="workspace")
    Schedule.objects.filter(pk=row.pk).update(session=session)
    return session


def _refusal(row: Schedule) -> PermissionDenied | None:
    """Why the owner may not run the schedule any more, checked at run time."""
    owner = row.owner
    if not owner.is_active:
        return PermissionDenied(
            f"The owner of this schedule, {owner.get_username()}, is deactivated: it cannot run."
        )
    # Only the owner's own query: its SQL is never someone else's to change (services).
    if not saved_queries.visible(owner, "mine").filter(pk=row.saved_query_id).exists():
        return PermissionDenied(
            f"Saved query [{row.saved_query.name}] is not {owner.get_username()}'s own: a "
            "schedule runs only its owner's saved queries."
        )
    return None


def _submit(row: Schedule, run: ScheduleRun) -> None:
    """Submit the run's job as the owner (inside the claim's transaction: the job is sent to
    a worker once it commits); a refusal before any job is the run's error."""
    refused = _refusal(row)
    if refused is not None:
        _fail(run, JobError.of(refused))
        return
    try:
        with transaction.atomic():
            job = statements.statement_submit(
                session=_session_of(row), sql=row.saved_query.sql, wait=0, origin=ORIGIN_SCHEDULE
            )
    except CoreError as exc:  # too many jobs or sessions, a statement over the limits
        _fail(run, JobError.of(exc))
        return
    except Exception:
        log.exception(
            "schedule %s: its run of %s could not be submitted", row.pk, run.scheduled_for
        )
        _fail(run, JobError.internal())
        return
    ScheduleRun.objects.filter(pk=run.pk).update(job=job)
    if job.status in jobstate.TERMINAL:  # refused by the planner, or a command run here
        run.job = job
        runs.finish(run, Job.objects.get(pk=job.pk))
