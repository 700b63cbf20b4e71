"""Worker liveness and housekeeping: each Celery worker writes a heartbeat row every few
seconds and, from the same loop, runs the job housekeeping of ``jobs.maintenance``.

Health counts workers with a fresh heartbeat; the reaper uses the same rows to find jobs
whose worker is gone. Any live worker reaps the jobs of dead ones. On ``worker_ready`` the
worker also starts its SparkSession in the background (``jobs.executor.runtime``), so the
first job does not wait for the JVM. This module is imported by the web process too
(``JobsConfig.ready``) and so must not import pyspark at module level.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from celery.signals import worker_ready, worker_shutdown
from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

log = logging.getLogger(__name__)
_stop = threading.Event()

# Reaping and sweeping run on every beat; expiry (sessions, results) every this many beats.
EXPIRY_EVERY_BEATS = 12


def default_hostname() -> str:
    return f"worker@{os.uname().nodename}.{os.getpid()}"


def live_worker_count() -> int:
    from jobs.models import Worker

    cutoff = timezone.now() - timedelta(seconds=settings.TESSERA_WORKER_TIMEOUT_SECONDS)
    return Worker.objects.filter(last_heartbeat__gte=cutoff).count()


def beat(hostname: str, started_at: Any) -> None:
    from jobs.models import Worker

    Worker.objects.update_or_create(
        hostname=hostname,
        defaults={"pid": os.getpid(), "started_at": started_at, "last_heartbeat": timezone.now()},
    )


def run_maintenance(beat_number: int) -> None:
    """The housekeeping due at this beat; each part fails alone (logged, retried later)."""
    from jobs import maintenance

    due: list[Callable[[], Any]] = [maintenance.reap_lost_jobs, maintenance.sweep_unclaimed_jobs]
    if beat_number % EXPIRY_EVERY_BEATS == 0:
        due += [maintenance.expire_sessions, maintenance.expire_results]
    for task in due:
        try:
            task()
        except Exception:
            log.exception("maintenance %s failed", getattr(task, "__name__", task))


def _heartbeat_loop(hostname: str) -> None:
    started_at = timezone.now()
    beat_number = 0
    while not _stop.is_set():
        try:
            close_old_connections()
            beat(hostname, started_at)
        except Exception:  # a database hiccup must not kill the worker; retry next beat
            log.exception("worker heartbeat failed")
        else:
            run_maintenance(beat_number)
        beat_number += 1
        _stop.wait(settings.TESSERA_WORKER_HEARTBEAT_SECONDS)


def _start_spark() -> None:
    try:
        from jobs.executor import runtime
    except ImportError:
        log.warning("pyspark is not installed: this worker cannot run Spark jobs")
        return
    runtime.start_in_background()


@worker_ready.connect  # type: ignore[untyped-decorator]
def _start_heartbeat(sender: Any = None, **kwargs: Any) -> None:
    hostname = getattr(sender, "hostname", None) or default_hostname()
    _start_spark()
    threading.Thread(
        target=_heartbeat_loop, args=(hostname,), name="tessera-heartbeat", daemon=True
    ).start()


@worker_shutdown.connect  # type: ignore[untyped-decorator]
def _stop_heartbeat(sender: Any = None, **kwargs: Any) -> None:
    from jobs.models import Worker

    _stop.set()
    hostname = getattr(sender, "hostname", None)
    if hostname:
        try:
            Worker.objects.filter(hostname=hostname).delete()
        except Exception:
            log.exception("could not remove the worker row on shutdown")
