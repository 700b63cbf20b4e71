"""Hand a job to the workers: one Celery message carrying only the job id.

The task is sent by name, so the web process never imports the worker's task module (nor,
through it, pyspark). The job row stays the truth: a broker failure leaves the job CREATED
with an ``enqueue_failed`` event, and the workers' sweeper sends it again later.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db.models import F
from django.utils import timezone

from jobs import lifecycle
from jobs.models import Job

log = logging.getLogger(__name__)

RUN_JOB_TASK = "tessera.run_job"


def enqueue(job_id: Any) -> bool:
    """Send ``tessera.run_job(job_id)``; True if the broker took it."""
    from webapp.celery import app

    try:
        app.send_task(RUN_JOB_TASK, args=[str(job_id)])
    except Exception as exc:  # any broker trouble: keep the job, let the sweeper retry
        log.exception("job %s: could not enqueue %s", job_id, RUN_JOB_TASK)
        lifecycle.record_event(
            job_id, "enqueue_failed", {"error": f"{type(exc).__name__}: {exc}"[:1000]}
        )
        return False
    Job.objects.filter(pk=job_id).update(
        enqueued_at=timezone.now(), enqueue_count=F("enqueue_count") + 1
    )
    return True
