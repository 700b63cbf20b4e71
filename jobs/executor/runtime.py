"""The worker process's one SparkSession, a fresh isolated session per job, and the health
of the driver JVM behind them.

A worker creates the SparkSession once (``start_in_background`` at worker start, so the
first job does not pay Spark's start-up) and every job runs in ``new_job_session()``, a
``spark.newSession()`` that shares the SparkContext but has its own temporary views, UDFs
and SQL conf. Configuration: ``SPARK_REMOTE`` (Spark Connect, ``sc://host:15002``) when
set, else ``SPARK_MASTER`` (default ``local[*]``); how the session is built is
``jobs.executor.spark_config``.

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
  under it, as an error with a clear code (``SPARK_OUT_OF_MEMORY``, ``SPARK_LOST``).

Spark Connect has no SparkContext in the client: cancellation uses session tags
(``addTag``/``interruptTag``) and there is no status tracker, so progress stays empty
(see ``jobs.executor.control``). Its server's JVM is not this process's to watch.
"""

from __future__ import annotations

import contextlib
import logging
import re
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from pyspark import SparkContext
from pyspark.sql import SparkSession

from core.errors import CoreError
from jobs.executor.errors import SparkLost, SparkOutOfMemory
from jobs.executor.spark_config import create_session, driver_memory, is_connect

log = logging.getLogger(__name__)

_lock = threading.Lock()  # the state below; never held while a JVM starts
_create_lock = threading.Lock()
_starter: threading.Thread | None = None
_watchdog: threading.Thread | None = None
_start_error: BaseException | None = None

# -XX:+ExitOnOutOfMemoryError exits with 3; Spark's own handler (an executor thread out of
# memory, in local mode the driver) with 52.
OOM_EXIT_CODES = frozenset({3, 52})
WATCH_SECONDS = 1.0  # how often the watchdog looks at the JVM process
PING_SECONDS = 5.0  # how often it asks the JVM something
# After a Spark call failed with a broken connection: how long the JVM gets to finish exiting.
EXIT_GRACE_SECONDS = 10.0
# After another unexplained failure: how long to look whether the JVM is exiting.
EXITING_SECONDS = 2.0
# Messages of py4j and sockets when the JVM went away under a call.
_CONNECTION_LOST = re.compile(
    r"Answer from Java side is empty|Error while (?:sending|receiving)|Connection refused"
    r"|Connection reset|Broken pipe|Gateway is closed|JAVA_GATEWAY_EXITED",
    re.IGNORECASE,
)
_CONTEXT_STOPPED = re.compile(r"stopped SparkContext|SparkContext (?:was|has been) shut down")


@dataclass(eq=False)
class _Jvm:
    """One driver JVM and the SparkSession on it."""

    spark: SparkSession
    process: subprocess.Popen[bytes] | None
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


def _heap_advice() -> str:
    return (
        f"Spark on this worker ran out of memory (driver heap {driver_memory()}) while this "
        "job was running, and was restarted. The statement that exhausted it may be this one "
        "or another one running on the same worker: run it again, and if it fails again make "
        "it hold less in memory (fewer or narrower rows, no huge collect_list or string)."
    )


def _exit_error(jvm: _Jvm, code: int) -> BaseException:
    if code in OOM_EXIT_CODES:
        return SparkOutOfMemory(_heap_advice(), details={"exit_code": code})
    return SparkLost(
        f"Spark on this worker stopped (exit code {code}) while this job was running, and was "
        "restarted. Run the statement again.",
        details={"exit_code": code},
    )


def _unresponsive_error(seconds: float) -> BaseException:
    return SparkLost(
        f"Spark on this worker did not answer for {seconds:.0f} s while this job was running; "
        "it was stopped and restarted. Run the statement again.",
        details={"unresponsive_seconds": int(seconds)},
    )


def _stopped_error() -> BaseException:
    return SparkLost(
        "Spark on this worker was stopped while this job was running, and was restarted. "
        "Run the statement again.",
        details={},
    )


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
    return None if code is None else _exit_error(jvm, code)


def _jvm_of(spark: SparkSession) -> _Jvm | None:
    sc = getattr(spark, "_sc", None)
    for jvm in [_current, *reversed(_retired)]:
        if jvm is not None and jvm.spark._sc is sc:
            return jvm
    return None


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen and len(seen) < 10:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _connection_lost(exc: BaseException) -> bool:
    """Did this call fail because the JVM went away (socket closed, gateway gone)?"""
    for item in _chain(exc):
        if isinstance(item, ConnectionError | EOFError) or type(item).__name__ == (
            "Py4JNetworkError"
        ):
            return True
        if _CONNECTION_LOST.search(str(item)):
            return True
        # py4j turns a network failure into a bare error answer: "An error occurred while
        # calling o177.getResult", with no Java exception and no trace.
        text = str(item)
        if (
            type(item).__name__ == "Py4JError"
            and "Trace:" not in text
            and text.startswith("An error occurred while calling")
        ):
            return True
    return False


def _context_stopped(exc: BaseException) -> bool:
    return any(_CONTEXT_STOPPED.search(str(item)) for item in _chain(exc))


def _exit_within(jvm: _Jvm, seconds: float) -> BaseException:
    """A JVM whose connection broke: its exit code once it has exited (a dying JVM closes
    its sockets a moment before), or, still running after ``seconds``, a lost connection."""
    process = jvm.process
    if process is not None:
        try:
            return _exit_error(jvm, process.wait(seconds))
        except subprocess.TimeoutExpired:
            pass
    return SparkLost(
        "Spark on this worker lost its connection while this job was running; it was "
        "restarted. Run the statement again.",
        details={},
    )


def _drop_and_restart(jvm: _Jvm, why: BaseException) -> BaseException:
    with _lock:
        if jvm.lost is None:
            _drop(jvm, why)
    _restart_soon()
    return jvm.lost or why


def failure_of(spark: SparkSession | None, exc: BaseException) -> BaseException:
    """The error to report for ``exc``, raised by a Spark call of a job on ``spark``: a
    ``SparkOutOfMemory``/``SparkLost`` if the job's JVM died, stopped or stopped answering
    under it (the JVM is dropped then, so the next job gets a new one), else ``exc``."""
    if spark is None or is_connect():
        return exc
    with _lock:
        jvm = _jvm_of(spark)
    if jvm is None:
        return exc
    why = _dead(jvm)
    if why is None and _context_stopped(exc):
        why = _stopped_error()
    elif why is None and _connection_lost(exc):
        why = _exit_within(jvm, EXIT_GRACE_SECONDS)
    elif why is None and not _jvm_answered(exc) and jvm.process is not None:
        # Some other failure (an Arrow stream cut short…): did the JVM just exit?
        with contextlib.suppress(subprocess.TimeoutExpired):
            why = _exit_error(jvm, jvm.process.wait(EXITING_SECONDS))
    if why is None:
        return exc
    return _drop_and_restart(jvm, why)


def _jvm_answered(exc: BaseException) -> bool:
    """An error the JVM itself raised (an analysis error, a failed Spark job), or one of
    ours: the JVM was alive to answer."""
    return isinstance(exc, CoreError) or any(
        getattr(item, "java_exception", None) is not None
        or callable(getattr(item, "getCondition", None))
        for item in _chain(exc)
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
    if is_connect():
        return None
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
            why = _unresponsive_error(limit)
        elif answer and answer[0] is True:
            why = _stopped_error()
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
    if is_connect() or (_watchdog is not None and _watchdog.is_alive()):
        return
    _watchdog = threading.Thread(target=_watch, name="tessera-spark-watchdog", daemon=True)
    _watchdog.start()


# --- sessions ---------------------------------------------------------------------------------


def _healthy(jvm: _Jvm | None) -> bool:
    return (
        jvm is not None and jvm.lost is None and (jvm.process is None or jvm.process.poll() is None)
    )


def get_spark() -> SparkSession:
    """The process-wide SparkSession, created on first use and again after its JVM died
    (thread-safe)."""
    global _current
    jvm = _current
    if jvm is not None and _healthy(jvm):
        return jvm.spark
    # One start at a time; ``_lock`` is not held while the JVM starts (seconds), so jobs of
    # a dead JVM can learn why meanwhile.
    with _create_lock:
        with _lock:
            if _current is not None:
                why = _dead(_current)
                if why is not None:
                    _drop(_current, why)
            if _current is not None:
                return _current.spark
        spark = create_session()
        with _lock:
            _current = _Jvm(spark, None if is_connect() else _process_of(spark))
        _start_watchdog()
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
    """A new session on the shared SparkContext: private temp views, functions and SQL conf."""
    return get_spark().newSession()


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
                _current.spark.stop()
            finally:
                _current = None
