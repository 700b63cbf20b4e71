"""Writes of the jobs API: a job's cancel by its user; an engine's restart (its share key's
users, admins) and stop (admins), recorded for the worker that runs it (``jobs.engines``)."""

from __future__ import annotations

from typing import cast

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from accounts.teams import is_admin
from audit import models as audit_models
from audit.services import record
from core import jobstate
from core.errors import PermissionDenied
from core.jobstate import IllegalTransition
from jobs import engines, lifecycle, notify
from jobs.errors import CANCELED, EngineStopped, JobError
from jobs.models import Engine, Job
from jobs.selectors import User, engine_get, engine_owners, reload_job


def job_cancel(*, user: User, job: Job) -> Job:
    """Cancel a job: CREATED ends CANCELED at once (a stream requeued after a lost worker
    too: its cancel hooks run); RUNNING gets ``cancel_requested`` and its worker stops Spark
    and ends it CANCELED; an ended job cannot be canceled (409)."""
    by = user.get_username()
    if job.status == jobstate.CREATED:
        when = (
            "while it waited to resume after its worker was lost"
            if job.started_at is not None
            else "before it started"
        )
        error = JobError(CANCELED, f"Canceled by {by} {when}.", {})
        if lifecycle.try_transition(job.id, jobstate.CREATED, jobstate.CANCELED, error=error):
            return reload_job(job.pk)
        job = reload_job(job.pk)  # it started (or ended) meanwhile
    if job.status == jobstate.RUNNING:
        asked = Job.objects.filter(pk=job.pk, status=jobstate.RUNNING, cancel_requested=False)
        if asked.update(cancel_requested=True):
            lifecycle.record_event(job.pk, "cancel_requested", {"by": by})
            notify.announce(job.pk, notify.CANCEL)
        return reload_job(job.pk)
    raise IllegalTransition(
        f"Job {job.pk} has already ended ({job.status}); there is nothing to cancel."
    )


# --- engines ------------------------------------------------------------------------------------


AUDIT_ACTIONS = {
    engines.RESTART: audit_models.ENGINE_RESTART,
    engines.STOP: audit_models.ENGINE_STOP,
}


def _stopped(engine: Engine, what: str) -> EngineStopped:
    return EngineStopped(
        f"Engine {engine.pk} has already stopped ({engine.state}); there is nothing to {what}. "
        "The next statement of its users starts a fresh engine.",
        details={"state": engine.state},
    )


def _principal(engine: Engine) -> tuple[str, str] | None:
    """Whose engine it is, as the audit names principals (a spare's and the server's: no
    one's)."""
    owner = engine_owners([engine]).get(engine.share_key)
    if engine.share_key.startswith("user:") and owner and owner != engine.share_key:
        return ("user", owner)
    if engine.share_key.startswith("team:") and owner:
        return ("team", owner)
    return None


def _request(*, user: User, engine_id: str, what: str) -> Engine:
    """Record ``what`` (``restart`` or ``stop``) on a live engine the caller may see, for
    its worker to act on, with an audit event (none when the same request is recorded
    already); 409 ENGINE_STOPPED for an engine that has stopped, also meanwhile."""
    engine = engine_get(user=user, engine_id=engine_id)
    if engine.state not in engines.LIVE_STATES:
        raise _stopped(engine, what)
    already = engine.stop_requested == what
    by = cast(AbstractBaseUser, user)
    with transaction.atomic():
        engine = engines.request_stop(engine, what, by)
        if engine.state not in engines.LIVE_STATES:
            raise _stopped(engine, what)
        if not already:
            record(
                AUDIT_ACTIONS[what],
                actor=by,
                object_kind="engine",
                principal=_principal(engine),
                detail={
                    "engine": str(engine.pk),
                    "share_key": engine.share_key,
                    "state": engine.state,
                    "runtime": engine.runtime,
                    "worker": engine.worker,
                },
            )
    return engine_get(user=user, engine_id=engine.pk)


def engine_restart(*, user: User, engine_id: str) -> Engine:
    """Ask for a fresh engine: its worker stops this one, and the next statement of its
    share key starts another. The caller's own share key's engine, or any for an admin;
    another's is NOT_FOUND, as one that does not exist."""
    return _request(user=user, engine_id=engine_id, what=engines.RESTART)


def engine_stop(*, user: User, engine_id: str) -> Engine:
    """Stop an engine (admins only: 403 PERMISSION_DENIED for others, whatever the id)."""
    if not is_admin(user):
        raise PermissionDenied("Only admins may stop an engine; restart your own instead.")
    return _request(user=user, engine_id=engine_id, what=engines.STOP)
