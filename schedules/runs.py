"""A run's end: its job's status on the run, then its schedule's alerts judged on the result.

``run_ended`` is a step of the job transitions FINISHED, FAILED and CANCELED
(``jobs.steps``), run after their commit in whichever process ended the job; a job the
scheduler's own transaction ended (a refusal, a command run at once) is finished by the
scheduler once the run names it.
"""

from __future__ import annotations

from django.utils import timezone

from core import jobstate
from core.jobstate import JobView, Record
from jobs.models import ORIGIN_SCHEDULE, Job
from schedules import alerts
from schedules.models import SUBMITTED, ScheduleRun


def run_ended(job: JobView, record: Record) -> None:
    """The step: nothing for a job no schedule started."""
    if job.origin != ORIGIN_SCHEDULE:
        return
    run = ScheduleRun.objects.select_related("schedule").filter(job_id=job.id).first()
    if run is None:
        return  # the scheduler links it and finishes it itself
    found = Job.objects.filter(pk=job.id).first()
    if found is not None:
        finish(run, found)


def finish(run: ScheduleRun, job: Job) -> None:
    """Give the run its job's end (once: whoever moves it from SUBMITTED), then judge the
    alerts on a FINISHED job's result."""
    if job.status not in jobstate.TERMINAL:
        return
    changed = ScheduleRun.objects.filter(pk=run.pk, status=SUBMITTED).update(
        status=job.status, error=job.error, finished_at=job.finished_at or timezone.now()
    )
    if changed == 1 and job.status == jobstate.FINISHED:
        alerts.judge(run, job)
