"""Scripts (``"script": true``): one job per statement, run in order, stopping at the first
failure.

The jobs are made up front; each statement is planned only when its turn comes (it may
depend on what the ones before it did) and started with ``sessions.statements.start_job``, like a
single statement. The next one starts when the one before it FINISHED — from whichever
process saw it finish: ``start_next_statement`` is a step of every job's end (``jobs.steps``).
The first failure or cancel stops the script: the jobs after it end CANCELED with an error
saying why.
"""

from __future__ import annotations

import threading
import uuid
from typing import Any

from django.db import transaction

from core import jobstate
from core.errors import CoreError, NotFound
from core.jobstate import JobView, Record
from core.limits import StatementLimits, StatementTooLarge, check_statement
from core.planner import Plan, split_script_spans
from core.session_properties import check_wait
from jobs import lifecycle, scheduling
from jobs.errors import CANCELED, JobError
from jobs.models import Job, Session
from jobs.selectors import held, wait_for
from sessions import commands, planning
from sessions.statements import (
    check_sql,
    fail_job,
    new_job,
    plan_or_error,
    runs_here,
    start_job,
    with_parameters,
)


def script_submit(*, session: Session, sql: str, wait: float | None = 0) -> list[Job]:
    """One job per statement of a script, run in order, stopping at the first failure.

    The script as a whole must be within the statement limits (characters, tokens) and
    hold at most ``max_statements``; its first statement is planned in a planning slot.
    Each statement is scanned for the limits again, alone, when its turn comes and it is
    planned (``_start_statement``): that may be in another process, later, under the
    limits then in force, and only the text crosses that gap."""
    seconds = check_wait(wait)
    check_sql(sql)
    limits = planning.statement_limits()
    scheduling.check_room(session.user_id)  # a script counts once, however long
    with planning.GATE.slot(session.user_id, held):  # waits briefly for a slot
        check_statement(sql, limits, what="script")
        jobs = _submit_script(session, sql, limits)
    return wait_for([job.id for job in jobs], seconds)


def _submit_script(session: Session, sql: str, limits: StatementLimits) -> list[Job]:
    try:
        statements = split_script_spans(sql)
    except CoreError as exc:  # e.g. an unterminated string: the script as one failed job
        return [fail_job(new_job(session, sql), JobError.of(exc))]
    if not statements:
        raise CoreError("The script holds no statement.", details={"field": "sql"})
    if len(statements) > limits.max_statements:
        raise StatementTooLarge(
            f"The script has {len(statements):,} statements; the server runs at most "
            f"{limits.max_statements:,} in one script. Split it.",
            details={"field": "sql", "limit": "statements", "maximum": limits.max_statements},
        )
    script_id = uuid.uuid4()
    with transaction.atomic():
        scheduling.reserve_room(session.user_id)
        jobs = []
        for index, (offset, text) in enumerate(statements):
            job = new_job(
                session, text, script_id=script_id, script_index=index, script_offset=offset
            )
            job.save()
            detail = {"script_id": str(script_id), "index": index, "count": len(statements)}
            lifecycle.record_event(job.id, "queued", detail)
            jobs.append(job)
    advance_script(script_id)
    return jobs


_advancing = threading.local()


def advance_script(script_id: Any) -> None:
    """Start the next statement of a script whose turn has come, or stop the script.

    Called after a script's jobs are made and whenever one of its jobs ends
    (``start_next_statement``). A statement run here ends inside this call and comes back
    here through that step; that nested call only notes the script, and the loop below takes
    the next step (no recursion).
    """
    pending: set[Any] | None = getattr(_advancing, "pending", None)
    if pending is not None:
        pending.add(script_id)
        return
    _advancing.pending = pending = {script_id}
    try:
        while pending:
            to_run = _advance_once(pending.pop())
            if to_run is not None:
                commands.run_command(to_run)
    finally:
        _advancing.pending = None


def _stop_error(job: Job, stopped_by: Job) -> JobError:
    how = "failed" if stopped_by.status == jobstate.FAILED else "was canceled"
    return JobError(
        CANCELED,
        f"Statement {job.script_index + 1} of the script did not run because statement "
        f"{stopped_by.script_index + 1} {how}.",
        {
            "script_id": str(job.script_id),
            "stopped_by": str(stopped_by.id),
            "stopped_by_index": stopped_by.script_index,
        },
    )


def _advance_once(script_id: Any) -> Job | None:
    """One step under a lock on the script's rows; returns a job to run as a command now."""
    with transaction.atomic():
        jobs = list(
            Job.objects.select_for_update().filter(script_id=script_id).order_by("script_index")
        )
        stopped_by: Job | None = None
        for job in jobs:
            if stopped_by is not None:
                if job.status == jobstate.CREATED:
                    lifecycle.try_transition(
                        job.id,
                        jobstate.CREATED,
                        jobstate.CANCELED,
                        error=_stop_error(job, stopped_by),
                    )
                continue
            if job.status == jobstate.FINISHED:
                continue
            if job.status in (jobstate.FAILED, jobstate.CANCELED):
                stopped_by = job
                continue
            if job.status == jobstate.RUNNING or job.typed_plan is not None:
                return None  # a statement is under way; its end brings us back
            return _start_statement(job)
    return None


def _start_statement(job: Job) -> Job | None:
    """Plan a script's statement now that its turn came and start it; the job if it is a
    command to run here (after the lock on the script is released)."""
    session = (
        Session.objects.select_related("user").filter(pk=job.session_id).first()
        if job.session_id is not None
        else None
    )
    if session is None:
        gone = NotFound("The session was closed before this statement of the script ran.")
        fail_job(job, JobError.of(gone))
        return None
    job.session = session
    outcome = plan_or_error(session, job.sql)
    if not isinstance(outcome, Plan):
        fail_job(job, outcome)
        return None
    started = start_job(job, with_parameters(outcome, {}, session))
    return started if runs_here(started) else None


def start_next_statement(job: JobView, record: Record) -> None:
    """FINISHED / FAILED / CANCELED, after the transaction: a script moves on when one of its
    jobs ends (the next statement starts, or the rest are canceled)."""
    if job.script is not None:
        advance_script(job.script)
