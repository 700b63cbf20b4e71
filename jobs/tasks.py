"""Celery tasks. Thin and idempotent: they carry ids only and load the rows themselves.

The executor (and so pyspark) is imported inside the task functions: the web process
imports this module through Celery's autodiscovery and must never start a JVM.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task
from django.conf import settings
from django.db import close_old_connections

from jobs.worker import default_hostname

log = logging.getLogger(__name__)


def _worker_name(task: Any) -> str:
    hostname = getattr(getattr(task, "request", None), "hostname", None)
    if hostname:
        return str(hostname)
    return default_hostname()


@shared_task(name="tessera.run_job", bind=True, acks_late=True, ignore_result=True)  # type: ignore[untyped-decorator]
def run_job(self: Any, job_id: str) -> str | None:
    """A slot of this worker is free: run the fairest eligible job on its Spark (usually
    ``job_id``, the one the message was sent for; see jobs.scheduling), or nothing."""
    from engine.run import run_job as execute

    close_old_connections()  # per task, as Django per request (see CELERY_DB_REUSE_MAX)
    return execute(job_id, _worker_name(self))


@shared_task(name="tessera.check_schema", acks_late=True, ignore_result=True)  # type: ignore[untyped-decorator]
def check_schema(check_id: str) -> bool:
    """Spark's analyzer answers a catalog write that waits (``sessions.analysis``): a table's
    expressions typed or a view's schema derived (see engine.schema_check)."""
    from engine import pool
    from engine.schema_check import answer_check

    close_old_connections()
    engines = pool.current()
    if engines is not None:  # share level user/team: asked of an engine, not this process
        return engines.check(check_id, settings.TESSERA_SCHEMA_CHECK_SECONDS)
    return answer_check(check_id)
