"""A worker's engines: one process per share key (``engine.host``), started on demand, kept
warm, stopped when idle, replaced when they die (share levels ``user`` and ``team``;
``jobs.engines``, docs/deploy.md "Engines").

The worker's Celery threads stay its slots: a thread claims a job (``jobs.scheduling``) and
``run(job)`` hands it to the engine of the job's share key and waits for its end, so the
claim order, the per-user limits and the slot kept free work as with one Spark. What the
pool adds is that a job runs in its key's own JVM: a statement that exhausts or kills an
engine takes down only the jobs of that key.

- **Start.** An engine is a ``manage.py engine_host`` process given one end of a socket
  pair; it says ``ready`` once its Spark has started. ``TESSERA_ENGINE_SPARES`` engines
  are started ahead with no key: a new key takes a ready spare (its first statement does
  not wait for a JVM) and another spare starts in the background.
- **Limits.** At most ``TESSERA_ENGINES_MAX`` engines (spares included) per worker; a new
  key stops the least recently used idle engine, or waits for one to be idle.
- **Stop.** Unused for ``TESSERA_ENGINE_IDLE_SECONDS``; asked (a user's restart, an admin's
  stop: ``Engine.stop_requested``, read every second); the worker's shutdown.
- **Death.** The engine process ends (its JVM died, it was killed): its running jobs end as
  ``jobs.engines.lose_with_engine`` says, the engine row is LOST, and the key's next
  statement gets a fresh engine.

This module does not import pyspark: the engines do.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import close_old_connections, transaction

from core import jobstate
from jobs import engines, lifecycle, running
from jobs.errors import JobError
from jobs.models import Job

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[1]
# How long a new engine may take to start its Spark.
START_TIMEOUT_SECONDS = 180.0
# How long a stopped engine gets to end before it is killed.
STOP_GRACE_SECONDS = 10.0
HOUSEKEEPING_SECONDS = 1.0
# The next spare starts this long after one was taken: a JVM start on the same cores would
# slow the taken spare's first statement (bench/engines.py measured it).
SPARE_AFTER_ASSIGNMENT_SECONDS = 5.0
ENGINE_START_FAILED = "ENGINE_START_FAILED"
# An engine's answer for a job it did not touch because it is dying (``engine.host``).
REFUSED = "REFUSED"


class EngineStartFailed(Exception):
    pass


@dataclass(eq=False)
class Host:
    """The worker's side of one engine process."""

    engine_id: str
    key: str  # "" for a spare
    process: subprocess.Popen[bytes]
    sock: socket.socket
    runtime: str
    pid: int | None = None  # its driver JVM's, once ready
    state: str = "starting"  # starting | ready | dying | stopping | dead
    ready: threading.Event = field(default_factory=threading.Event)
    start_error: str = ""
    last_used: float = field(default_factory=time.monotonic)
    # Jobs sent here and not answered yet: id → [event, status].
    waiting: dict[str, list[Any]] = field(default_factory=dict)
    reported: set[str] = field(default_factory=set)  # jobs it says it runs (pipelines too)
    stop_reason: str = ""
    stopped_by: str = ""
    dying_message: str = ""
    send_lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def usable(self) -> bool:
        return self.state in {"starting", "ready"}

    def send(self, message: dict[str, Any]) -> bool:
        with self.send_lock:
            try:
                self.sock.sendall((json.dumps(message) + "\n").encode())
            except OSError:
                return False
        return True


class Pool:
    def __init__(self, identity: str) -> None:
        self.identity = identity
        self.hosts: dict[str, Host] = {}  # engine id → host, every live one
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._stop = threading.Event()
        self._last_assigned = 0.0

    # --- starting ------------------------------------------------------------------------------

    def _start_host(self, key: str) -> Host:
        """Launch an engine process (call with the lock held; the JVM starts in the child)."""
        from engine.runtimes import current_runtime

        runtime = current_runtime().name
        row = engines.record_started(
            worker=self.identity,
            runtime=runtime,
            key=key,
            driver_memory=str(settings.TESSERA_SPARK_DRIVER_MEMORY or ""),
        )
        ours, theirs = socket.socketpair()
        command = [
            sys.executable,
            str(ROOT / "manage.py"),
            "engine_host",
            "--fd",
            str(theirs.fileno()),
            "--engine",
            str(row.pk),
            "--identity",
            self.identity,
        ]
        # Its own process group: a stop ends the engine and the JVM it launched together.
        process = subprocess.Popen(
            command,
            pass_fds=(theirs.fileno(),),
            cwd=ROOT,
            start_new_session=True,
            env={**os.environ, "TESSERA_ENGINE_ID": str(row.pk)},
        )
        theirs.close()
        host = Host(engine_id=str(row.pk), key=key, process=process, sock=ours, runtime=runtime)
        self.hosts[host.engine_id] = host
        threading.Thread(
            target=self._read, args=(host,), name=f"tessera-engine-{row.pk}", daemon=True
        ).start()
        log.info("engine %s starting for %s (pid %s)", row.pk, key or "a spare", process.pid)
        return host

    def _live(self) -> list[Host]:
        return [h for h in self.hosts.values() if h.state != "dead"]

    def _of_key(self, key: str) -> Host | None:
        for host in self.hosts.values():
            if host.key == key and host.usable:
                return host
        return None

    def _spare(self) -> Host | None:
        spares = [h for h in self.hosts.values() if not h.key and h.usable]
        spares.sort(key=lambda h: (h.state != "ready", h.last_used))
        return spares[0] if spares else None

    def _evict_one(self) -> bool:
        """Stop the least recently used idle engine (a spare first); True if one was."""
        idle = [h for h in self._live() if h.usable and not h.waiting]
        if not idle:
            return False
        idle.sort(key=lambda h: (bool(h.key), h.last_used))
        self._stop_host(idle[0], "evicted")
        return True

    def acquire(self, key: str, job_id: Any) -> tuple[Host, bool]:
        """The engine of ``key``, started or assigned (a spare) when it has none; waits while
        the worker holds ``TESSERA_ENGINES_MAX`` busy engines. (host, True if a spare)."""
        waited = False
        with self._lock:
            while True:
                host = self._of_key(key)
                if host is not None:
                    return host, False
                spare = self._spare()
                if spare is not None:
                    spare.key = key
                    spare.last_used = self._last_assigned = time.monotonic()
                    engines.record_assigned(spare.engine_id, key)
                    self._changed.notify_all()  # the housekeeping starts the next spare
                    return spare, True
                live = self._live()
                if len(live) < max(settings.TESSERA_ENGINES_MAX, 1):
                    return self._start_host(key), False
                if not any(h.state == "stopping" for h in live):
                    self._evict_one()  # room once it has ended (``_ended`` notifies)
                if not waited:
                    waited = True
                    lifecycle.record_event(
                        job_id,
                        "waiting_for_engine",
                        {"engines": len(self._live()), "max": settings.TESSERA_ENGINES_MAX},
                    )
                self._changed.wait(HOUSEKEEPING_SECONDS)

    # --- running a job -----------------------------------------------------------------------

    def run(self, job: Job) -> str | None:
        """Run the claimed ``job`` on its key's engine; the status it ended in."""
        key = engines.share_key(job.user)
        for _attempt in range(3):
            began = time.monotonic()
            host, spare = self.acquire(key, job.pk)
            if not host.ready.wait(START_TIMEOUT_SECONDS) or host.start_error:
                message = host.start_error or f"it did not start within {START_TIMEOUT_SECONDS} s"
                if host.state == "dead" and not host.start_error:
                    continue  # died while starting (killed): try a fresh one
                error = JobError(
                    ENGINE_START_FAILED, f"The engine for this job could not start: {message}"
                )
                lifecycle.try_transition(job.pk, jobstate.RUNNING, jobstate.FAILED, error=error)
                return jobstate.FAILED
            job_id = str(job.pk)
            slot: list[Any] = [threading.Event(), None]
            with self._lock:
                if not host.usable:
                    continue  # dying or stopping since: another engine
                host.waiting[job_id] = slot
                host.last_used = time.monotonic()
            with transaction.atomic():  # one commit, not three, before the job can start
                engines.record_used(
                    host.engine_id,
                    job.pk,
                    key=key,
                    worker=self.identity,
                    runtime=host.runtime,
                    pid=host.pid,
                )
                lifecycle.record_event(
                    job.pk,
                    "engine_assigned",
                    {
                        "engine": host.engine_id,
                        "share_key": key,
                        "spare": spare,
                        "waited_ms": round((time.monotonic() - began) * 1000),
                    },
                )
            running.mark_running(job_id, True)
            if not host.send({"op": "run", "job": job_id}):
                with self._lock:
                    host.waiting.pop(job_id, None)
                running.mark_running(job_id, False)
                continue
            slot[0].wait()
            running.mark_running(job_id, False)
            status: str | None = slot[1]
            if status == REFUSED:  # the engine was dying: the job is untouched, go on
                continue
            return status
        error = JobError(engines.ENGINE_LOST, "No engine could take the job; run it again.")
        lifecycle.try_transition(job.pk, jobstate.RUNNING, jobstate.FAILED, error=error)
        return jobstate.FAILED

    # --- schema checks --------------------------------------------------------------------------

    def _any_ready(self) -> Host | None:
        ready = [h for h in self.hosts.values() if h.state == "ready"]
        return min(ready, key=lambda h: len(h.waiting)) if ready else None

    def check(self, check_id: Any, timeout: float) -> bool:
        """Answer a schema check (``engine.schema_check``: Spark's analyzer only, nothing
        runs) on any ready engine, a spare included; one is started when there is none.
        False when no engine answered within ``timeout``."""
        deadline = time.monotonic() + timeout
        key = f"check:{check_id}"
        slot: list[Any] = [threading.Event(), None]
        with self._lock:
            host = self._any_ready()
            while host is None:
                if not any(h.usable for h in self.hosts.values()):
                    self._start_host("")  # nobody to ask (no spares configured)
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(min(left, HOUSEKEEPING_SECONDS))
                host = self._any_ready()
            host.waiting[key] = slot
        if not host.send({"op": "check", "id": str(check_id)}):
            with self._lock:
                host.waiting.pop(key, None)
            return False
        slot[0].wait(max(deadline - time.monotonic(), 0))
        with self._lock:
            host.waiting.pop(key, None)
        return slot[1] is True

    # --- messages from an engine -------------------------------------------------------------

    def _read(self, host: Host) -> None:
        reader = host.sock.makefile("rb")
        try:
            for line in reader:
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                self._on_message(host, message)
        except OSError:
            pass
        finally:
            self._ended(host)

    def _on_message(self, host: Host, message: dict[str, Any]) -> None:
        op = message.get("op")
        if op == "ready":
            host.pid = message.get("pid")
            close_old_connections()
            engines.record_ready(host.engine_id, message.get("pid"))
            with self._lock:
                if host.state == "starting":
                    host.state = "ready"
                self._changed.notify_all()
            host.ready.set()
        elif op == "failed_start":
            host.start_error = str(message.get("message") or "Spark did not start")
        elif op == "running":
            job_id, on = str(message.get("job")), bool(message.get("on"))
            with self._lock:  # each report once; those of an engine that dies undone then
                changed = (job_id not in host.reported) if on else (job_id in host.reported)
                if changed:
                    (host.reported.add if on else host.reported.discard)(job_id)
            if changed:
                running.mark_running(job_id, on)
        elif op == "done":
            with self._lock:
                slot = host.waiting.pop(str(message.get("job")), None)
                host.last_used = time.monotonic()
                self._changed.notify_all()
            if slot is not None:
                slot[1] = message.get("status")
                slot[0].set()
        elif op == "dying":
            with self._lock:
                host.state = "dying"
                host.dying_message = str(message.get("message") or "")
                self._changed.notify_all()

    def _ended(self, host: Host) -> None:
        """The engine process has closed its socket: it ended, or is about to."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            host.process.wait(STOP_GRACE_SECONDS)
        _kill(host.process)  # and whatever of its group is left (its JVM)
        close_old_connections()
        with self._lock:
            orphaned = dict(host.waiting)
            host.waiting.clear()
            reported = list(host.reported)
            host.reported.clear()
            reason = host.stop_reason or "lost"
            host.state = "dead"
            self.hosts.pop(host.engine_id, None)
            self._changed.notify_all()
        code = host.process.returncode
        message = host.dying_message or host.start_error or f"the engine process ended ({code})"
        if not host.ready.is_set():
            reason = "failed_start" if reason == "lost" else reason
            host.start_error = host.start_error or message
            host.ready.set()
        engines.record_stopped(host.engine_id, reason, message if reason != "idle" else "")
        jobs = [key for key in orphaned if not key.startswith("check:")]
        if jobs:
            log.warning("engine %s ended with %d job(s) on it", host.engine_id, len(jobs))
        error = JobError(
            engines.ENGINE_LOST,
            f"The job's engine ended while the job was running ({message}).",
            {"engine": host.engine_id},
            retryable=True,
        )
        for job_id, slot in orphaned.items():
            if job_id.startswith("check:"):
                slot[0].set()  # unanswered: the web's wait ends UNAVAILABLE
                continue
            try:
                slot[1] = engines.lose_with_engine(
                    job_id,
                    engine_id=host.engine_id,
                    shared=len(jobs),
                    error=error,
                    stopped_by=host.stopped_by,
                )
            except Exception:
                log.exception("job %s: could not end it after its engine ended", job_id)
            slot[0].set()
        for job_id in reported:  # the engine's "running" reports whose end never came
            running.mark_running(job_id, False)

    # --- stopping -----------------------------------------------------------------------------

    def _stop_host(self, host: Host, reason: str, by: str = "") -> None:
        """Stop an engine (call with the lock held): asked to end when idle, killed when it
        runs jobs (a restart or stop someone asked for)."""
        if host.state in {"stopping", "dead"}:
            return
        host.state = "stopping"
        host.stop_reason = reason
        host.stopped_by = by
        log.info("engine %s (%s) stops: %s", host.engine_id, host.key or "spare", reason)
        if host.waiting or not host.send({"op": "stop"}):
            _kill(host.process)
            return
        threading.Thread(target=_kill_later, args=(host.process,), daemon=True).start()

    def housekeeping(self) -> None:
        """Every second: stops asked for, idle engines, spares."""
        requests = engines.stop_requests(self.identity)
        idle_after = float(settings.TESSERA_ENGINE_IDLE_SECONDS)
        now = time.monotonic()
        with self._lock:
            for engine_id, what, by in requests:
                host = self.hosts.get(engine_id)
                if host is not None:
                    self._stop_host(host, what, by)
            for host in self._live():
                unused = now - host.last_used >= idle_after
                if host.key and host.state == "ready" and not host.waiting and unused:
                    self._stop_host(host, "idle")
            if now - self._last_assigned < SPARE_AFTER_ASSIGNMENT_SECONDS:
                return  # the spare just taken runs its first statement on these cores first
            spares = [h for h in self._live() if not h.key and h.usable]
            room = max(settings.TESSERA_ENGINES_MAX, 1) - len(self._live())
            for _ in range(min(max(settings.TESSERA_ENGINE_SPARES, 0) - len(spares), room)):
                self._start_host("")

    def loop(self) -> None:
        while not self._stop.is_set():
            try:
                close_old_connections()
                self.housekeeping()
            except Exception:
                log.exception("engine housekeeping failed; it carries on")
            with self._lock:
                self._changed.wait(HOUSEKEEPING_SECONDS)

    def shutdown(self) -> None:
        self._stop.set()
        with self._lock:
            hosts = list(self._live())
            for host in hosts:
                self._stop_host(host, "shutdown")
        for host in hosts:
            try:
                host.process.wait(STOP_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                _kill(host.process)


def _kill(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def _kill_later(process: subprocess.Popen[bytes]) -> None:
    try:
        process.wait(STOP_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        _kill(process)


_pool: Pool | None = None


def start(identity: str) -> Pool:
    """Start this worker's pool (its spares start now)."""
    global _pool
    if _pool is None:
        _pool = Pool(identity)
        threading.Thread(target=_pool.loop, name="tessera-engines", daemon=True).start()
    return _pool


def current() -> Pool | None:
    return _pool


def shutdown() -> None:
    if _pool is not None:
        _pool.shutdown()
