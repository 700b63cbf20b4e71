"""Writes of a job by its user: cancel."""

from __future__ import annotations

from core import jobstate
from core.jobstate import IllegalTransition
from jobs import lifecycle, notify
from jobs.errors import CANCELED, JobError
from jobs.models import Job
from jobs.selectors import User, reload_job


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
