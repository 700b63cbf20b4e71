"""Every message to the workers goes through here, and every question about them.

Tasks are sent by name (the names are the worker contract, registered in ``jobs.tasks``),
so the web process never imports the worker's task module (nor, through it, pyspark). The
job row stays the truth: a broker failure leaves the job CREATED with an
``enqueue_failed`` event, and the workers' sweeper sends it again later.

- ``enqueue(job_id)``: run a job (``tessera.run_job``), after the job row is committed.
- ``request_expression_typing(table_id)``: type a table's computed columns and watermarks
  with Spark's analyzer (``tessera.type_table_expressions``); connected to
  ``catalog.signals.expressions_untyped`` by ``JobsConfig.ready``, so that the catalog,
  which depends on no other app, need not know who answers.
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
TYPE_TABLE_EXPRESSIONS_TASK = "tessera.type_table_expressions"


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


def request_expression_typing(table_id: int, **_signal: Any) -> None:
    """Send ``tessera.type_table_expressions(table_id)``; a broker failure is logged (the
    table keeps ``expressions_resolved: false``)."""
    try:
        app.send_task(TYPE_TABLE_EXPRESSIONS_TASK, args=[table_id])
    except Exception:
        log.exception("table %s: could not ask a worker to type its expressions", table_id)


def live_workers() -> QuerySet[Worker]:
    """Worker processes with a fresh heartbeat that have not stopped."""
    cutoff = timezone.now() - timedelta(seconds=settings.TESSERA_WORKER_TIMEOUT_SECONDS)
    return Worker.objects.filter(last_heartbeat__gte=cutoff, stopped_at__isnull=True)


def live_worker_count() -> int:
    """How many workers are alive (``/api/v1/health``)."""
    return live_workers().count()
