"""One engine: a process of its own with its own driver JVM, started by a worker's pool
(``engine.pool``) and running the jobs of one share key (``jobs.engines``).

The worker claims a job (``jobs.scheduling``, under the worker's identity, which this
process shares) and sends its id here over a socket pair; a thread here runs it exactly as
the worker would in its own Spark (``engine.run``) and answers with the status it ended in.
Messages are JSON lines:

- worker → engine: ``{"op": "run", "job": id}``, ``{"op": "check", "id": id}`` (a schema
  check, ``engine.schema_check``), ``{"op": "stop"}``;
- engine → worker: ``ready`` (``pid``: the JVM's), ``failed_start`` (``message``),
  ``running`` (``job``, ``on``: a job thread starts or ends, pipeline statements too, so
  that the worker never takes them for orphans), ``done`` (``job``, ``status``; a check's
  ``job`` is ``check:<id>``), ``dying`` (the JVM died: no more jobs here).

When its JVM dies (out of memory: ``-XX:+ExitOnOutOfMemoryError``; killed) the engine does
not start another: its running jobs end (``jobs.engines.lose_with_engine``: a read that
shared the engine runs again once on a fresh one), it says ``dying`` and exits, and the
worker gives the key a fresh engine, a warm spare when it has one. It also exits when the
worker's end of the socket closes (the worker is gone).
"""

from __future__ import annotations

import json
import logging
import os
import queue
import signal
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from django.db import close_old_connections

from engine import run, schema_check, spark_session, sqlguard
from jobs import engines, notify, running
from jobs.errors import JobError
from jobs.identity import set_identity
from jobs.models import Job

log = logging.getLogger(__name__)

# The answer to a job sent while the engine is dying: it did not touch the job.
REFUSED = "REFUSED"
# After its JVM died: how long the engine waits for its job threads to end before it exits.
DYING_GRACE_SECONDS = 30.0


class _Threads:
    """Daemon threads that are used again: a job's thread keeps its database connection
    (Django's are per thread; a new PostgreSQL connection per job costs 5-10 ms) and its
    py4j connection, as the worker's own Celery threads do. Daemons: never hold up the end."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._tasks: queue.SimpleQueue[tuple[Callable[..., None], tuple[Any, ...]]] = (
            queue.SimpleQueue()
        )
        self._lock = threading.Lock()
        self._idle = 0
        self._count = 0

    def submit(self, call: Callable[..., None], *args: Any) -> None:
        with self._lock:
            if self._idle:
                self._idle -= 1
            else:
                self._count += 1
                name = f"{self._name}-{self._count}"
                threading.Thread(target=self._serve, name=name, daemon=True).start()
        self._tasks.put((call, args))

    def _serve(self) -> None:
        while True:
            call, args = self._tasks.get()
            try:
                call(*args)
            except Exception:  # the calls log their own failures; a thread is never lost
                log.exception("%s: a call failed", self._name)
            with self._lock:
                self._idle += 1


class Host:
    def __init__(self, sock: socket.socket, engine_id: str) -> None:
        self.sock = sock
        self.engine_id = engine_id
        self._send_lock = threading.Lock()
        self._lock = threading.Lock()
        self._running: set[str] = set()
        self._idle = threading.Condition(self._lock)
        self.dying = threading.Event()
        self.shared_at_death = 0
        self._threads = _Threads("tessera-engine-job")

    # --- messages ---

    def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message) + "\n").encode()
        with self._send_lock:
            try:
                self.sock.sendall(data)
            except OSError:  # the worker is gone: this process ends from the reader
                log.warning("engine %s: the worker cannot be told %s", self.engine_id, message)

    def report_running(self, job_id: str, on: bool) -> None:
        self.send({"op": "running", "job": job_id, "on": on})

    # --- the JVM's end ---

    def jvm_lost(self, why: BaseException) -> None:
        with self._lock:
            if self.dying.is_set():
                return
            self.shared_at_death = len(self._running)
            self.dying.set()
        log.error("engine %s: its Spark is lost (%s); the engine ends", self.engine_id, why)
        self.send({"op": "dying", "message": str(why)[:2000]})

    def lose_job(self, job: Job, error: JobError) -> None:
        engines.lose_with_engine(
            job.pk,
            engine_id=self.engine_id,
            shared=max(self.shared_at_death, 1),
            error=error,
        )

    # --- jobs ---

    def run_job(self, job_id: str) -> None:
        status: str | None = None
        gone = spark_session.lost()  # the JVM died before anybody noticed: do not start one
        if gone is not None:
            self.jvm_lost(gone)
        with self._lock:
            if self.dying.is_set():
                # Sent before the worker heard ``dying``: untouched, the worker sends it to a
                # fresh engine (no JVM is started in a dying engine).
                self.send({"op": "done", "job": job_id, "status": REFUSED})
                return
            self._running.add(job_id)
        try:
            close_old_connections()
            job = Job.objects.select_related("user", "session").get(pk=job_id)
            with notify.watch([job_id], (notify.CANCEL,)) as watch:
                status = run.run_claimed_job(job, watch)
        except Exception:
            log.exception("engine %s: job %s failed outside its run", self.engine_id, job_id)
        finally:
            with self._lock:
                self._running.discard(job_id)
                self._idle.notify_all()
            close_old_connections()
            self.send({"op": "done", "job": job_id, "status": status})

    def check(self, check_id: str) -> None:
        """A schema check (Spark's analyzer only) asked of this engine by its worker."""
        answered = False
        try:
            close_old_connections()
            answered = schema_check.answer_check(check_id)
        except Exception:
            log.exception("engine %s: schema check %s failed", self.engine_id, check_id)
        finally:
            close_old_connections()
            self.send({"op": "done", "job": f"check:{check_id}", "status": answered})

    def wait_idle(self, seconds: float) -> None:
        with self._lock:
            self._idle.wait_for(lambda: not self._running, timeout=seconds)

    def serve(self) -> None:
        reader = self.sock.makefile("rb")
        for line in reader:
            try:
                message = json.loads(line)
            except ValueError:
                log.error("engine %s: unreadable message %r", self.engine_id, line[:200])
                continue
            op = message.get("op")
            if op == "run":
                self._threads.submit(self.run_job, str(message["job"]))
            elif op == "check":
                self._threads.submit(self.check, str(message["id"]))
            elif op == "stop":
                return
        log.warning("engine %s: the worker closed its socket; the engine ends", self.engine_id)


def _end_with_worker(worker_pid: int) -> None:
    """The worker died (this process was handed to another parent): end now, with the JVM
    (this process's group), even while Spark is still starting and nothing reads the socket."""
    while os.getppid() == worker_pid:
        time.sleep(1.0)
    log.warning("the worker (pid %s) is gone; this engine ends", worker_pid)
    os.killpg(0, signal.SIGKILL)


def _warm_up(engine_id: str) -> None:
    """Before ``ready``: one statement through the guard, Spark's parser and an Arrow
    result, so that the first user's statement does not pay their first use (~4 s here)."""
    try:
        spark = spark_session.new_job_session()
        sqlguard.guard(spark).sql("SELECT 1 AS one", "query", None).toArrow()
    except Exception:  # a cold engine still serves; its first statement is slower
        log.warning("engine %s: the warm-up statement failed", engine_id, exc_info=True)


def main(fd: int, engine_id: str, identity: str) -> None:
    """The engine process: start Spark, say ``ready``, serve until told to stop, the worker
    goes away, or the JVM dies."""
    threading.Thread(
        target=_end_with_worker, args=(os.getppid(),), name="tessera-engine-orphan", daemon=True
    ).start()
    sock = socket.socket(fileno=fd)
    host = Host(sock, engine_id)
    set_identity(identity)  # jobs here are the worker's claims (``Job.worker``)
    running.report_running_to(host.report_running)
    spark_session.on_lost(host.jvm_lost)
    run.lost_with_engine = host.lose_job
    try:
        spark_session.get_spark()
    except BaseException as exc:
        log.exception("engine %s: Spark did not start", engine_id)
        host.send({"op": "failed_start", "message": str(exc)[:2000]})
        os._exit(1)
    _warm_up(engine_id)
    try:
        notify.listen()  # a cancel reaches the job's monitor at once
    except Exception:
        log.exception("engine %s: job notifications could not start", engine_id)
    host.send({"op": "ready", "pid": spark_session.driver_pid(), "process": os.getpid()})
    server = threading.Thread(target=host.serve, name="tessera-engine-serve", daemon=True)
    server.start()
    while server.is_alive() and not host.dying.is_set():
        server.join(0.5)
    if host.dying.is_set():
        host.wait_idle(DYING_GRACE_SECONDS)
    else:
        spark_session.stop()
    sock.close()
    # Daemon threads and a JVM gateway: a plain exit could wait on them.
    os._exit(0)
