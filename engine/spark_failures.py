"""What a failed Spark call says about the engine behind it: the JVM ran out of memory,
exited, stopped or stopped answering; the connection to it (or to the Spark Connect server)
broke; or the failure was the job's own (an analysis error, the database). The errors a job
then reports (``SPARK_OUT_OF_MEMORY``, ``ENGINE_LOST``…) are made here too;
``engine.spark_session`` decides what to drop and restart.
"""

from __future__ import annotations

import logging
import re

from django.db import DatabaseError

from core.errors import CoreError
from engine.errors import EngineLost, SparkLost, SparkOutOfMemory
from engine.spark_config import driver_memory

log = logging.getLogger(__name__)

# -XX:+ExitOnOutOfMemoryError exits with 3; Spark's own handler (an executor thread out of
# memory, in local mode the driver) with 52.
OOM_EXIT_CODES = frozenset({3, 52})
# Messages of py4j and sockets when the JVM went away under a call.
_CONNECTION_LOST = re.compile(
    r"Answer from Java side is empty|Error while (?:sending|receiving)|Connection refused"
    r"|Connection reset|Broken pipe|Gateway is closed|JAVA_GATEWAY_EXITED",
    re.IGNORECASE,
)
# Messages of the Spark Connect client when its server went away (or came back as a new
# process that does not know the session).
_REMOTE_LOST = re.compile(
    r"StatusCode\.UNAVAILABLE|failed to connect to all addresses|Connection refused"
    r"|Socket closed|Connection reset|RetriesExceeded|SESSION_CHANGED|SESSION_NOT_FOUND"
    r"|SESSION_CLOSED",
    re.IGNORECASE,
)
_CONTEXT_STOPPED = re.compile(r"stopped SparkContext|SparkContext (?:was|has been) shut down")


def _heap_advice() -> str:
    return (
        f"Spark on this worker ran out of memory (driver heap {driver_memory()}) while this "
        "job was running, and was restarted. The statement that exhausted it may be this one "
        "or another one running on the same worker: run it again, and if it fails again make "
        "it hold less in memory (fewer or narrower rows, no huge collect_list or string)."
    )


def exit_error(code: int) -> BaseException:
    if code in OOM_EXIT_CODES:
        return SparkOutOfMemory(_heap_advice(), details={"exit_code": code})
    return SparkLost(
        f"Spark on this worker stopped (exit code {code}) while this job was running, and was "
        "restarted. Run the statement again.",
        details={"exit_code": code},
    )


def unresponsive_error(seconds: float) -> BaseException:
    return SparkLost(
        f"Spark on this worker did not answer for {seconds:.0f} s while this job was running; "
        "it was stopped and restarted. Run the statement again.",
        details={"unresponsive_seconds": int(seconds)},
    )


def stopped_error() -> BaseException:
    return SparkLost(
        "Spark on this worker was stopped while this job was running, and was restarted. "
        "Run the statement again.",
        details={},
    )


def chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen and len(seen) < 10:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def connection_lost(exc: BaseException) -> bool:
    """Did this call fail because the JVM went away (socket closed, gateway gone)?"""
    for item in chain(exc):
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


def database_error(exc: BaseException) -> bool:
    """A failure of the job's database connection (PostgreSQL restarted under a write's
    bookkeeping), not of Spark: its "Connection refused" must not make the worker kill a
    healthy JVM and every job on it (the fault suite's PostgreSQL restarts did)."""
    return any(
        isinstance(item, DatabaseError) or type(item).__module__.startswith("psycopg")
        for item in chain(exc)
    )


def context_stopped(exc: BaseException) -> bool:
    return any(_CONTEXT_STOPPED.search(str(item)) for item in chain(exc))


def remote_lost(exc: BaseException) -> bool:
    """Did this call fail because the Spark Connect server went away?"""
    if isinstance(exc, EngineLost):
        return True
    for item in chain(exc):
        code = getattr(item, "code", None)
        if callable(code) and not isinstance(item, CoreError):
            try:
                if str(code()) == "StatusCode.UNAVAILABLE":
                    return True
            except Exception:
                log.debug("no gRPC status", exc_info=True)
        if type(item).__name__ == "RetriesExceeded" or _REMOTE_LOST.search(str(item)):
            return True
    return False


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]


def jvm_answered(exc: BaseException) -> bool:
    """An error the JVM itself raised (an analysis error, a failed Spark job), or one of
    ours: the JVM was alive to answer."""
    return isinstance(exc, CoreError) or any(
        getattr(item, "java_exception", None) is not None
        or callable(getattr(item, "getCondition", None))
        for item in chain(exc)
    )
