"""Worker liveness: each Celery worker writes a heartbeat row every few seconds.

Health counts workers with a fresh heartbeat; the job reaper (with the job pipeline)
uses the same rows to find jobs whose worker is gone.
"""

from __future__ import annotations

import logging
import os
import threading
from datetime import timedelta
from typing import Any

from celery.signals import worker_ready, worker_shutdown
from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

log = logging.getLogger(__name__)
_stop = threading.Event()


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


def _heartbeat_loop(hostname: str) -> None:
    started_at = timezone.now()
    while not _stop.is_set():
        try:
            close_old_connections()
            beat(hostname, started_at)
        except Exception:  # a database hiccup must not kill the worker; retry next beat
            log.exception("worker heartbeat failed")
        _stop.wait(settings.TESSERA_WORKER_HEARTBEAT_SECONDS)


@worker_ready.connect  # type: ignore[untyped-decorator]
def _start_heartbeat(sender: Any = None, **kwargs: Any) -> None:
    hostname = getattr(sender, "hostname", None) or f"worker@{os.uname().nodename}.{os.getpid()}"
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
