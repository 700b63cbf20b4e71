"""The worker process's one SparkSession, a fresh isolated session per job, and the health
of the driver JVM behind them.

A worker creates the SparkSession once (``start_in_background`` at worker start, so the
first job does not pay Spark's start-up) and every job runs in ``new_job_session()``, a
``spark.newSession()`` that shares the SparkContext but has its own temporary views, UDFs
and SQL conf. Configuration: ``SPARK_REMOTE`` (Spark Connect, ``sc://host:15002``) when
set, else ``SPARK_MASTER`` (default ``local[*]``); how the session is built is
``engine.spark_config``.

The driver JVM is protected (classic Spark; docs/security.md §4):

- its heap is ``TESSERA_SPARK_DRIVER_MEMORY``, and what one action may bring to the driver
  (``spark.driver.maxResultSize``) or broadcast is a fraction of it;
- it runs with ``-XX:+ExitOnOutOfMemoryError``: a JVM out of heap exits at once instead of
  thrashing for minutes, which makes "unhealthy" "dead", and detectable;
- a watchdog thread checks that the JVM process runs, answers a trivial call within
  ``TESSERA_SPARK_UNRESPONSIVE_SECONDS`` (else it is killed) and that its SparkContext is
  not stopped. A JVM found dead is dropped and a new SparkSession started in the
  background; ``get_spark()`` does the same when a job comes first.
- ``failure_of(spark, exc)`` tells a job whose Spark call failed whether its JVM died
  under it, as an error with a clear code (``SPARK_OUT_OF_MEMORY``, ``ENGINE_LOST``).

Which Spark this is comes from ``engine.runtimes`` (``local``, ``cluster``,
``connect``). On the Connect runtime the JVM this process launches and watches is the
small parser JVM of the SQL guard, and jobs execute in sessions of the Spark Connect
client (``Engine.remote``): a job whose server connection broke fails ``ENGINE_LOST``, the
client is dropped, and the next job connects again. The server's JVM is not this
process's to watch.

What a failed call says about the engine (out of memory, exited, connection lost…) is
``engine.spark_failures``; the parser session paired with a Connect job session,
``engine.parser_sessions``.
"""

from __future__ import annotations

import contextlib
import logging
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from pyspark import SparkContext
from pyspark.sql import SparkSession

from engine import parser_sessions
from engine.errors import EngineLost, SparkLost
from engine.runtimes import Engine, close_remote, current_runtime, is_remote_session
from engine.spark_failures import (
    chain,
    connection_lost,
    context_stopped,
    database_error,
    exit_error,
    first_line,
    jvm_answered,
    remote_lost,
    stopped_error,
    unresponsive_error,
)

log = logging.getLogger(__name__)

_lock = threading.Lock()  # the state below; never held while a JVM starts
_create_lock = threading.Lock()
_starter: threading.Thread | None = None
_watchdog: threading.Thread | None = None
_start_error: BaseException | None = None

WATCH_SECONDS = 1.0  # how often the watchdog looks at the JVM process
PING_SECONDS = 5.0  # how often it asks the JVM something
# After a Spark call failed with a broken connection: how long the JVM gets to finish exiting.
EXIT_GRACE_SECONDS = 10.0
# After another unexplained failure: how long to look whether the JVM is exiting.
EXITING_SECONDS = 2.0


@dataclass(eq=False)
class _Jvm:
    """One driver JVM launched by this process and the SparkSession on it (on the Connect
    runtime: the parser JVM, and the client session jobs execute in)."""

    spark: SparkSession
    process: subprocess.Popen[bytes] | None
    remote: SparkSession | None = None
    started: float = field(default_factory=time.monotonic)
    lost: BaseException | None = None  # why it was dropped (SparkLost / SparkOutOfMemory)


_current: _Jvm | None = None
_retired: list[_Jvm] = []  # dropped JVMs whose jobs may still ask why (kept briefly)
RETIRED_KEPT = 8


def _process_of(spark: SparkSession) -> subprocess.Popen[bytes] | None:
    gateway = getattr(spark.sparkContext, "_gateway", None)
    process = getattr(gateway, "proc", None)
    return process if isinstance(process, subprocess.Popen) else None


# --- the JVM's health ----------------------------------------------------------------------


def _reset_pyspark_globals(jvm: _Jvm) -> None:
    """Forget the dead JVM in PySpark's process-wide singletons, so that the next
    ``getOrCreate()`` launches a new JVM instead of reusing a dead gateway."""
    from pyspark.sql.context import SQLContext

    sc: Any = jvm.spark.sparkContext
    gateway = getattr(sc, "_gateway", None)
    try:
        if gateway is not None:
            gateway.shutdown()
    except Exception:
        log.debug("closing the dead JVM's gateway failed", exc_info=True)
    accumulators = getattr(sc, "_accumulatorServer", None)
    if accumulators is not None:
        try:
            accumulators.shutdown()
        except Exception:
            log.debug("closing the accumulator server failed", exc_info=True)
        sc._accumulatorServer = None
    with SparkContext._lock:
        if SparkContext._gateway is gateway:
            SparkContext._gateway = None
            SparkContext._jvm = None
        if SparkContext._active_spark_context is sc:
            SparkContext._active_spark_context = None
    SparkSession._instantiatedSession = None
    SparkSession._activeSession = None
    SQLContext._instantiatedContext = None


def _drop(jvm: _Jvm, why: BaseException) -> None:
    """Kill (if needed) and forget a JVM; its jobs learn ``why`` from ``failure_of``.
    Call with ``_lock`` held."""
    global _current
    if jvm.lost is None:
        jvm.lost = why
    process = jvm.process
    if process is not None and process.poll() is None:
        process.kill()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            log.error("the driver JVM (pid %s) did not exit after SIGKILL", process.pid)
    if jvm.remote is not None:
        with contextlib.suppress(Exception):
            close_remote(jvm.remote)
        jvm.remote = None
    _reset_pyspark_globals(jvm)
    if _current is jvm:
        _current = None
    _retired.append(jvm)
    del _retired[:-RETIRED_KEPT]
    log.error("Spark's driver JVM was dropped: %s", why)


def _dead(jvm: _Jvm) -> BaseException | None:
    """Why ``jvm`` is dead (its process exited), or None while it runs."""
    if jvm.lost is not None:
        return jvm.lost
    process = jvm.process
    if process is None:
        return None
    code = process.poll()
    return None if code is None else exit_error(code)


def _jvm_of(spark: SparkSession) -> _Jvm | None:
    sc = getattr(spark, "_sc", None)
    for jvm in [_current, *reversed(_retired)]:
        if jvm is not None and jvm.spark._sc is sc:
            return jvm
    return None


def _exit_within(jvm: _Jvm, seconds: float) -> BaseException:
    """A JVM whose connection broke: its exit code once it has exited (a dying JVM closes
    its sockets a moment before), or, still running after ``seconds``, a lost connection."""
    process = jvm.process
    if process is not None:
        try:
            return exit_error(process.wait(seconds))
        except subprocess.TimeoutExpired:
            pass
    return SparkLost(
        "Spark on this worker lost its connection while this job was running; it was "
        "restarted. Run the statement again.",
        details={},
    )


# In an engine process (``engine.host``): told when its JVM is lost, instead of a restart
# here (the engine ends; its worker gives the share key a fresh, usually warm, engine).
_on_lost: Callable[[BaseException], None] | None = None
_engine_ended: BaseException | None = None  # why, once its JVM is gone


def on_lost(callback: Callable[[BaseException], None] | None) -> None:
    global _on_lost
    _on_lost = callback


def _end_engine(why: BaseException) -> None:
    """In an engine process: remember that its JVM is gone (call with ``_lock`` held)."""
    global _engine_ended
    if _on_lost is not None and _engine_ended is None:
        _engine_ended = why


def _drop_and_restart(jvm: _Jvm, why: BaseException) -> BaseException:
    with _lock:
        if jvm.lost is None:
            _drop(jvm, why)
        _end_engine(jvm.lost or why)
    if _on_lost is not None:
        _on_lost(jvm.lost or why)
    else:
        _restart_soon()
    return jvm.lost or why


def failure_of(spark: SparkSession | None, exc: BaseException) -> BaseException:
    """The error to report for ``exc``, raised by a Spark call of a job on ``spark``: a
    ``SparkOutOfMemory``/``SparkLost`` if the job's JVM died, stopped or stopped answering
    under it (the JVM is dropped then, so the next job gets a new one), else ``exc``."""
    if spark is None or database_error(exc):
        return exc
    if is_remote_session(spark):
        # The server's SparkContext stopped (a server shutting down) is the server lost too.
        if remote_lost(exc) or context_stopped(exc):
            return _drop_remote(exc)
        parser = parser_sessions.paired(spark)
        if parser is None:
            return exc
        if not any(type(item).__module__.startswith("py4j") for item in chain(exc)):
            # A server's error: the parser JVM is to blame only if it is dead.
            with _lock:
                jvm = _jvm_of(parser)
            why = _dead(jvm) if jvm is not None else None
            return exc if why is None or jvm is None else _drop_and_restart(jvm, why)
        spark = parser  # a call to the parser JVM failed: did it die under the job?
    with _lock:
        jvm = _jvm_of(spark)
    if jvm is None:
        return exc
    why = _dead(jvm)
    if why is None and context_stopped(exc):
        why = stopped_error()
    elif why is None and connection_lost(exc):
        why = _exit_within(jvm, EXIT_GRACE_SECONDS)
    elif why is None and not jvm_answered(exc) and jvm.process is not None:
        # Some other failure (an Arrow stream cut short…): did the JVM just exit?
        with contextlib.suppress(subprocess.TimeoutExpired):
            why = exit_error(jvm.process.wait(EXITING_SECONDS))
    if why is None:
        return exc
    return _drop_and_restart(jvm, why)


def _drop_remote(exc: BaseException) -> BaseException:
    """Forget the Connect client after its server went away: the next job connects again."""
    if isinstance(exc, EngineLost):
        return exc
    runtime = current_runtime()
    with _lock:
        jvm = _current
        remote = jvm.remote if jvm is not None else None
        if jvm is not None:
            jvm.remote = None
    if remote is not None:
        with contextlib.suppress(Exception):
            close_remote(remote)
        log.error("the connection to %s was lost: %s", runtime.title, exc)
    return EngineLost(
        f"The connection to {runtime.title} broke while this job was running "
        f"({first_line(exc)}). Run the statement again; the worker connects anew.",
        details={"runtime": runtime.name},
    )


def _ping(spark: SparkSession, answer: list[BaseException | bool]) -> None:
    try:
        sc: Any = spark.sparkContext
        answer.append(bool(sc._jsc.sc().isStopped()))
    except Exception as exc:
        answer.append(exc)


def check_health(unresponsive_seconds: float | None = None) -> BaseException | None:
    """Look at the current JVM once: dropped when its process exited, its SparkContext is
    stopped, or it did not answer within ``unresponsive_seconds``. Returns why, or None."""
    with _lock:
        jvm = _current
    if jvm is None:
        return None
    why = _dead(jvm)
    if why is None:
        limit = unresponsive_seconds or settings.TESSERA_SPARK_UNRESPONSIVE_SECONDS
        answer: list[BaseException | bool] = []
        caller = threading.Thread(
            target=_ping, args=(jvm.spark, answer), name="tessera-spark-ping", daemon=True
        )
        caller.start()
        caller.join(limit)
        if caller.is_alive():
            why = unresponsive_error(limit)
        elif answer and answer[0] is True:
            why = stopped_error()
        elif answer and isinstance(answer[0], BaseException):
            why = _exit_within(jvm, EXIT_GRACE_SECONDS)
    if why is None:
        return None
    return _drop_and_restart(jvm, why)


def _watch() -> None:
    """The watchdog: a dead JVM is noticed within ``WATCH_SECONDS``, a stopped or silent
    one within ``PING_SECONDS`` (+ the unresponsive limit)."""
    last_ping = time.monotonic()
    while True:
        time.sleep(WATCH_SECONDS)
        try:
            with _lock:
                jvm = _current
            if jvm is None:
                continue
            if _dead(jvm) is not None or time.monotonic() - last_ping >= PING_SECONDS:
                last_ping = time.monotonic()
                check_health()
        except Exception:
            log.exception("the Spark watchdog failed; it carries on")


def _start_watchdog() -> None:
    global _watchdog
    if _watchdog is not None and _watchdog.is_alive():
        return
    _watchdog = threading.Thread(target=_watch, name="tessera-spark-watchdog", daemon=True)
    _watchdog.start()


# --- sessions ---------------------------------------------------------------------------------


def _healthy(jvm: _Jvm | None) -> bool:
    return (
        jvm is not None and jvm.lost is None and (jvm.process is None or jvm.process.poll() is None)
    )


def get_spark() -> SparkSession:
    """The process-wide session jobs execute in (the Connect client on the Connect runtime),
    created on first use and again after its JVM died or its server was lost (thread-safe)."""
    global _current
    jvm = _current
    if jvm is not None and _healthy(jvm):
        executing = _executing(jvm)
        if executing is not None:
            return executing
    # One start at a time; ``_lock`` is not held while a JVM starts (jobs learn why meanwhile).
    with _create_lock:
        with _lock:
            if _current is not None:
                why = _dead(_current)
                if why is not None:
                    _drop(_current, why)
                    _end_engine(why)
            jvm = _current
        if _on_lost is not None and _engine_ended is not None:
            _on_lost(_engine_ended)  # an engine process ends with its JVM: no second one
            raise _engine_ended
        if jvm is None:
            spark = create_session()
            with _lock:
                jvm = _current = _Jvm(spark, _process_of(spark))
            _start_watchdog()
        executing = _executing(jvm)
        if executing is None:  # the Connect runtime, not connected (yet, or any more)
            remote = current_runtime().connect()
            try:
                current_runtime().check_storage(remote)
            except BaseException:
                close_remote(remote)  # the next job connects and checks again
                raise
            with _lock:
                jvm.remote = remote
            executing = remote
        return executing


def _executing(jvm: _Jvm) -> SparkSession | None:
    return jvm.remote if current_runtime().remote else jvm.spark


def create_session() -> SparkSession:
    """Launch this process's classic driver JVM for the current runtime."""
    runtime = current_runtime()
    spark = runtime.start_classic()
    runtime.after_start(spark)
    # PySpark logs every failed query with its whole JVM stack trace; we report errors ourselves.
    logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)
    logging.getLogger("py4j").setLevel(logging.WARNING)
    log.info("Spark %s is ready (%s runtime)", spark.version, runtime.name)
    if not runtime.remote:
        runtime.check_storage(spark)
    return spark


def _restart_soon() -> None:
    """After a JVM was dropped: start the next one now, so the next job does not wait."""
    global _starter
    with _lock:
        if _starter is not None and _starter.is_alive():
            return
        _starter = None
    start_in_background()


def start_in_background() -> threading.Thread:
    """Start Spark in a thread so the worker takes messages while the JVM comes up."""
    global _starter

    def start() -> None:
        global _start_error
        try:
            get_spark()
        except BaseException as exc:  # kept for the log; jobs retry get_spark() themselves
            _start_error = exc
            log.exception("Spark did not start")

    with _lock:
        if _starter is None:
            _starter = threading.Thread(target=start, name="tessera-spark-start", daemon=True)
            _starter.start()
        return _starter


def new_job_session() -> SparkSession:
    """A new isolated session for one job: private temp views, functions and SQL conf
    (``newSession()`` on the shared SparkContext, or a new server-side session on Spark
    Connect, paired with a parser session of this process's JVM)."""
    get_spark()
    with _lock:
        jvm = _current
    if jvm is None:  # dropped between the two lines: start again
        get_spark()
        jvm = _current
    assert jvm is not None
    session, parser = current_runtime().job_sessions(Engine(jvm.spark, jvm.remote))
    if parser is not session:
        parser_sessions.pair(session, parser)
    return session


def lost() -> BaseException | None:
    """Why this process's JVM is gone (dropped, or its process exited), or None while it
    runs or before one was started."""
    with _lock:
        jvm = _current
        ended = _engine_ended
    return ended or (_dead(jvm) if jvm is not None else None)


def driver_pid() -> int | None:
    """The pid of the current driver JVM (classic Spark launched here), if any."""
    jvm = _current
    return jvm.process.pid if jvm is not None and jvm.process is not None else None


def stop() -> None:
    """Stop the SparkSession (worker shutdown)."""
    global _current
    with _lock:
        if _current is not None:
            try:
                if _current.remote is not None:
                    with contextlib.suppress(Exception):
                        close_remote(_current.remote)
                _current.spark.stop()
            finally:
                _current = None
