"""Every message to the workers goes through here, and every question about them.

Tasks are sent by name (the names are the worker contract, registered in ``jobs.tasks``),
so the web process never imports the worker's task module (nor, through it, pyspark). The
job row stays the truth: a broker failure leaves the job CREATED with an
``enqueue_failed`` event, and the workers' sweeper sends it again later.

- ``enqueue(job_id)``: tell the workers that job ``job_id`` waits (``tessera.run_job``),
  after the job row is committed. The worker that takes the message claims the fairest
  eligible job then, which may be another one (``jobs.scheduling``): one message per job
  is what matters, not which id it carries.
- ``send_schema_check(check_id, expires)``: ask a worker's Spark analyzer to answer the
  ``SchemaCheck`` row ``check_id`` (``tessera.check_schema``; ``sessions.analysis`` waits for
  the answer). The message expires with the wait: a worker never works on a question
  nobody waits for any more.
- ``live_worker_count()``: how many workers are alive (``/api/v1/health``).
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db.models import F, QuerySet
from django.utils import timezone

from jobs import lifecycle
from jobs.models import Job, Worker
from webapp.celery import app

log = logging.getLogger(__name__)

RUN_JOB_TASK = "tessera.run_job"
CHECK_SCHEMA_TASK = "tessera.check_schema"


def enqueue(job_id: Any) -> bool:
    """Send ``tessera.run_job(job_id)``; True if the broker took it."""
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


def send_schema_check(check_id: Any, expires: float) -> None:
    """Send ``tessera.check_schema(check_id)``, dropped by the workers after ``expires``
    seconds, on ``TESSERA_SCHEMA_CHECK_QUEUE`` (empty: the default queue every worker
    consumes); a broker failure raises (the caller answers UNAVAILABLE)."""
    queue = settings.TESSERA_SCHEMA_CHECK_QUEUE or None  # None: Celery's default queue
    app.send_task(CHECK_SCHEMA_TASK, args=[str(check_id)], expires=max(1.0, expires), queue=queue)


def live_workers() -> QuerySet[Worker]:
    """Worker processes with a fresh heartbeat that have not stopped."""
    cutoff = timezone.now() - timedelta(seconds=settings.TESSERA_WORKER_TIMEOUT_SECONDS)
    return Worker.objects.filter(last_heartbeat__gte=cutoff, stopped_at__isnull=True)


def live_worker_count() -> int:
    """How many workers are alive (``/api/v1/health``)."""
    return live_workers().count()
