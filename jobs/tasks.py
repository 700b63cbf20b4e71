"""Celery tasks. Thin and idempotent: they carry ids only and load the rows themselves.

The executor (and so pyspark) is imported inside the task functions: the web process
imports this module through Celery's autodiscovery and must never start a JVM.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task
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
    """Run job ``job_id`` on this worker's Spark, if it is still CREATED (see jobs.executor)."""
    from jobs.executor.run import run_job as execute

    close_old_connections()  # per task, as Django per request (see CELERY_DB_REUSE_MAX)
    return execute(job_id, _worker_name(self))


@shared_task(name="tessera.type_table_expressions", acks_late=True, ignore_result=True)  # type: ignore[untyped-decorator]
def type_table_expressions(table_id: int) -> bool:
    """Type the computed columns/watermarks of a REST-created table with Spark's analyzer
    and save its resolved schema (see jobs.executor.table_typing)."""
    from jobs.executor import runtime
    from jobs.executor.table_typing import retype_table
    from jobs.executor.typing import SparkExpressionTyper

    close_old_connections()
    return retype_table(table_id, SparkExpressionTyper(runtime.new_job_session()))
