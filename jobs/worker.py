"""Worker identity, liveness and housekeeping.

Each start of a worker process has its own identity, ``<node>/<pid>/<start id>`` (e.g.
``worker1@host/4242/9f3c1a7e``): the Celery node name stays the same across restarts, the
identity never does. The process writes a heartbeat row under that identity every few
seconds (``jobs.models.Worker``) and records it on every job it claims (``Job.worker``), so
the reaper judges a job by the process that claimed it: a restarted worker never vouches
for the jobs of the process before it.

The row also says how many jobs the process runs at once (``concurrency``: its Celery
slots, which the claims count to keep one slot of all the live workers free for a user with
nothing running) and how many of them may be streams (``stream_slots``:
``TESSERA_WORKER_MAX_STREAMS``, never its last Celery slot; ``jobs.scheduling``).

From the same loop the worker runs the job housekeeping of ``jobs.maintenance`` and ticks
the scheduler (``schedules.scheduler``: due schedules claimed in the database). It also
notices, on its own machine, worker processes that have ended without saying so (killed,
crashed): their rows are marked stopped at once and their jobs reaped, without waiting for
the heartbeat timeout. Health counts rows with a fresh heartbeat that are not stopped.

On ``worker_ready`` the worker also starts its SparkSession in the background
(``engine.spark_session``), so the first job does not wait for the JVM. This module is
imported by the web process too (``JobsConfig.ready``) and so must not import pyspark at
module level.
"""

from __future__ import annotations

import logging
import os
import secrets
import threading
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from celery.signals import worker_ready, worker_shutdown
from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

from jobs import engines, maintenance, notify, running
from jobs.identity import current_identity, set_identity
from jobs.models import Worker
from schedules import scheduler

log = logging.getLogger(__name__)
_stop = threading.Event()
# This process's Celery concurrency (slots), once ``worker_ready`` has told it.
_concurrency: int | None = None

# Reaping and sweeping run on every beat; expiry (sessions, results) every this many beats.
EXPIRY_EVERY_BEATS = 12
# Rows of processes gone this long are deleted (each restart adds a row).
FORGET_WORKERS_AFTER = timedelta(days=1)


# --- identity -----------------------------------------------------------------------------


def default_hostname() -> str:
    """A Celery-like node name for processes that were not given one."""
    return f"worker@{os.uname().nodename}.{os.getpid()}"


def make_identity(node: str, pid: int | None = None) -> str:
    """A new identity for one start of a worker process: ``<node>/<pid>/<start id>``."""
    return f"{node}/{pid or os.getpid()}/{secrets.token_hex(4)}"


def _machine() -> str:
    """Boot id and PID namespace: two processes with the same value see the same pids."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""
    return f"{boot}:{namespace}"


def _start_ticks(pid: int) -> str:
    """The process's start time (clock ticks since boot): tells a reused pid apart."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    # Fields 3 (state) and 22 (start time); the command name (field 2) may hold spaces.
    fields = stat.rpartition(")")[2].split()
    if len(fields) < 20 or fields[0] in {"Z", "X"}:  # a zombie has ended already
        return ""
    return fields[19]


def process_token(pid: int | None = None) -> str:
    """``<machine>/<pid>/<start ticks>`` of a process, or "" where /proc is not available."""
    pid = pid or os.getpid()
    machine, ticks = _machine(), _start_ticks(pid)
    return f"{machine}/{pid}/{ticks}" if machine and ticks else ""


def process_gone(token: str) -> bool:
    """True only when ``token`` names a process of this machine and PID namespace that no
    longer runs (its pid is free or belongs to a later process). Processes elsewhere, or a
    token we cannot judge, are never called gone: their heartbeat decides."""
    parts = token.split("/")
    if len(parts) != 3 or not parts[0] or parts[0] != _machine():
        return False
    try:
        pid = int(parts[1])
    except ValueError:
        return False
    return _start_ticks(pid) != parts[2]


# --- slots ---------------------------------------------------------------------------------


def stream_slots_for(max_streams: int, concurrency: int | None) -> int:
    """How many streaming jobs a worker process runs at once: ``max_streams``
    (``TESSERA_WORKER_MAX_STREAMS``), and never all of its ``concurrency`` slots (threads):
    one is always left for interactive work, so a worker with one slot runs no streams.
    ``concurrency`` None (not known): ``max_streams``."""
    limit = max(int(max_streams), 0)
    if concurrency is None:
        return limit
    return min(limit, max(int(concurrency) - 1, 0))


def stream_slots() -> int:
    """This process's stream slots (its Celery concurrency, once ``worker_ready`` told it)."""
    return stream_slots_for(settings.TESSERA_WORKER_MAX_STREAMS, _concurrency)


def _concurrency_of(consumer: Any) -> int | None:
    """The slots (pool threads or processes) of the Celery worker ``consumer`` belongs to."""
    for value in (
        getattr(getattr(consumer, "controller", None), "concurrency", None),
        getattr(getattr(consumer, "pool", None), "limit", None),
    ):
        if isinstance(value, int) and value > 0:
            return value
    return None


# --- heartbeat rows -----------------------------------------------------------------------


def beat(
    identity: str,
    started_at: Any,
    node: str = "",
    process: str = "",
    streams: int | None = None,
    concurrency: int | None = None,
) -> None:
    """Write this process's heartbeat row (``streams``: its stream slots, default
    ``stream_slots()``; ``concurrency``: its slots, default what ``worker_ready`` told, 0
    when not known)."""
    Worker.objects.update_or_create(
        hostname=identity,
        defaults={
            "node": node,
            "pid": os.getpid(),
            "process": process,
            "started_at": started_at,
            "last_heartbeat": timezone.now(),
            "stream_slots": stream_slots() if streams is None else streams,
            "concurrency": (_concurrency or 0) if concurrency is None else concurrency,
        },
    )


def mark_stopped(identity: str) -> bool:
    """Record that the process ``identity`` has ended; True if this call did."""
    changed: int = Worker.objects.filter(hostname=identity, stopped_at__isnull=True).update(
        stopped_at=timezone.now()
    )
    return changed == 1


def retire_gone_workers(own: str | None = None) -> list[str]:
    """Mark stopped the worker rows of processes on this machine that no longer run
    (``kill -9``, a crash, a container restart with the same hostname). Their jobs are
    then reaped at once instead of after the heartbeat timeout. Returns their identities."""
    machine = _machine()
    if not machine:
        return []
    rows = Worker.objects.filter(stopped_at__isnull=True, process__startswith=f"{machine}/")
    if own:
        rows = rows.exclude(hostname=own)
    retired: list[str] = []
    for identity, token in rows.values_list("hostname", "process"):
        if process_gone(token) and mark_stopped(identity):
            log.warning("worker %s has ended without stopping cleanly; its jobs are lost", identity)
            engines.retire_engines_of(identity)  # its engine processes ended with it
            retired.append(identity)
    return retired


def forget_old_workers() -> int:
    """Delete rows of processes silent for ``FORGET_WORKERS_AFTER``; returns how many."""
    deleted, _ = Worker.objects.filter(
        last_heartbeat__lt=timezone.now() - FORGET_WORKERS_AFTER
    ).delete()
    return deleted


def _fail_orphans(identity: str | None) -> list[str]:
    if not identity:
        return []
    return maintenance.fail_orphaned_jobs(identity, running.running_now())


# --- the heartbeat loop -------------------------------------------------------------------


def run_maintenance(beat_number: int, identity: str | None = None) -> None:
    """The housekeeping due at this beat; each part fails alone (logged, retried later)."""
    due: list[Callable[[], Any]] = [
        lambda: retire_gone_workers(identity),
        maintenance.reap_lost_jobs,
        lambda: _fail_orphans(identity),
        maintenance.sweep_unclaimed_jobs,
        scheduler.tick,  # due schedules, claimed in the database (one runner per slot)
    ]
    if beat_number % EXPIRY_EVERY_BEATS == 0:
        due += [
            maintenance.expire_sessions,
            maintenance.expire_results,
            maintenance.expire_table_versions,
            maintenance.expire_audit_events,
            maintenance.sweep_ended_streams,
            forget_old_workers,
        ]
    for task in due:
        try:
            task()
        except Exception:
            log.exception("maintenance %s failed", getattr(task, "__name__", task))


def _heartbeat_loop(identity: str, node: str) -> None:
    started_at = timezone.now()
    process = process_token()
    beat_number = 0
    while not _stop.is_set():
        try:
            close_old_connections()
            beat(identity, started_at, node=node, process=process)
        except Exception:  # a database hiccup must not kill the worker; retry next beat
            log.exception("worker heartbeat failed")
        else:
            run_maintenance(beat_number, identity)
        beat_number += 1
        _stop.wait(settings.TESSERA_WORKER_HEARTBEAT_SECONDS)


def _start_spark(identity: str) -> None:
    """The worker's own Spark (share level ``server``), or its engine pool (``user``,
    ``team``: engine processes, one spare started now; ``engine.pool``)."""
    try:
        from engine import pool, spark_session
    except ImportError:
        log.warning("pyspark is not installed: this worker cannot run Spark jobs")
        return
    if engines.hosted():
        pool.start(identity)
    else:
        spark_session.start_in_background()


def warn_if_root() -> bool:
    """Log a warning when the worker runs as root (docs/security.md §6); True if it does."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return False
    log.warning(
        "This worker runs as root. Spark runs users' SQL in this process: run workers as an "
        "unprivileged user that can write only TESSERA_DATA_DIR and the storage roots "
        "(docs/security.md, section 6)."
    )
    return True


@worker_ready.connect  # type: ignore[untyped-decorator]
def _start_heartbeat(sender: Any = None, **kwargs: Any) -> None:
    global _concurrency
    node = getattr(sender, "hostname", None) or default_hostname()
    identity = make_identity(node)
    set_identity(identity)
    _concurrency = _concurrency_of(sender)
    log.info(
        "worker identity %s, %s slots, %d for streams",
        identity,
        _concurrency or "?",
        stream_slots(),
    )
    warn_if_root()
    _start_spark(identity)
    try:
        notify.listen()  # cancels reach the first job's monitor without a listener to start
    except Exception:
        log.exception("job notifications could not start; monitors re-read the rows")
    threading.Thread(
        target=_heartbeat_loop, args=(identity, node), name="tessera-heartbeat", daemon=True
    ).start()


@worker_shutdown.connect  # type: ignore[untyped-decorator]
def _stop_heartbeat(sender: Any = None, **kwargs: Any) -> None:
    _stop.set()
    identity = current_identity()
    if engines.hosted():
        try:
            from engine import pool

            pool.shutdown()
        except Exception:
            log.exception("could not stop the engine processes on shutdown")
    if identity:
        try:
            # Kept (stopped), not deleted: a job this process left RUNNING is reaped at once.
            mark_stopped(identity)
        except Exception:
            log.exception("could not mark the worker row stopped on shutdown")
