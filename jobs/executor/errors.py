"""Turn Spark's exceptions into a job's ``error``: a code and Spark's first line(s), never a
Java stack trace nor a Python traceback."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from core.errors import CoreError

SPARK_ERROR = "SPARK_ERROR"
INTERNAL_ERROR = "INTERNAL_ERROR"
TIMEOUT = "TIMEOUT"
WORKER_LOST = "WORKER_LOST"
MAX_MESSAGE = 2000

_JAVA_PREFIX = re.compile(r"^(?:[a-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error): ")
_POSITION_SUFFIX = re.compile(r";?\s*line \d+ pos \d+;?$")


def _first_lines(text: str) -> str:
    """The human part of a Spark message: up to the first stack or plan line."""
    if "Traceback (most recent call last)" in text:
        # A Python UDF failed: Spark's sentence and the exception line, not the traceback.
        head, _, rest = text.partition("Traceback (most recent call last)")
        raised = [
            line.strip()
            for line in rest.splitlines()[1:]
            if line.strip() and not line.startswith((" ", "\t"))
        ]
        last = raised[-1] if raised else ""
        head = head.strip().rstrip(":").strip()
        return f"{head}: {last}" if head and last else head or last
    lines: list[str] = []
    for raw in text.strip().splitlines():
        line = raw.rstrip()
        if not line.strip() or line.startswith(("\tat ", "\t", "JVM stacktrace:")):
            break
        if lines and (line.startswith(("'", "+-", ":-", "== ")) or line[:1].isspace()):
            break  # an analysed plan or a query context follows the sentence
        lines.append(line)
    message = " ".join(lines) if lines else text.strip().splitlines()[0] if text.strip() else ""
    return message


def spark_message(exc: BaseException) -> str:
    """Spark's message for ``exc`` without stack traces (first line(s) only)."""
    java = getattr(exc, "java_exception", None)
    text = ""
    if java is not None:
        try:
            text = str(java.getMessage() or "")
        except Exception:
            text = ""
    if not text:
        text = str(exc)
        if text.startswith("An error occurred while calling"):
            # Py4JJavaError: "An error occurred while calling o80.x.\n: org.apache…: msg\n\tat …"
            text = text.split("\n: ", 1)[-1]
    text = text.strip()
    text = _JAVA_PREFIX.sub("", text)
    message = _POSITION_SUFFIX.sub("", _first_lines(text)).strip()
    if len(message) > MAX_MESSAGE:
        message = message[: MAX_MESSAGE - 1] + "…"
    return message or type(exc).__name__


def _condition(exc: BaseException) -> str | None:
    get = getattr(exc, "getCondition", None)
    if callable(get):
        try:
            value = get()
        except Exception:
            return None
        return str(value) if value else None
    return None


def _sqlstate(exc: BaseException) -> str | None:
    get = getattr(exc, "getSqlState", None)
    if callable(get):
        try:
            value = get()
        except Exception:
            return None
        return str(value) if value else None
    return None


def is_spark_exception(exc: BaseException) -> bool:
    module = type(exc).__module__
    return module.startswith(("pyspark", "py4j"))


def error_from_exception(
    exc: BaseException, aliases: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The job's ``error`` for an exception raised while running it.

    ``aliases`` maps the plan's internal names (``__tessera_r1``) back to what the user wrote,
    so messages speak of the user's tables and functions.
    """
    if isinstance(exc, CoreError):
        error: dict[str, Any] = {"code": exc.code, "message": exc.message}
        if exc.details:
            error["details"] = dict(exc.details)
        return error
    if is_spark_exception(exc):
        message = spark_message(exc)
        for alias, name in sorted((aliases or {}).items(), key=lambda i: -len(i[0])):
            message = message.replace(f"`{alias}`", name).replace(alias, name)
        details: dict[str, Any] = {}
        condition, sqlstate = _condition(exc), _sqlstate(exc)
        if condition:
            details["condition"] = condition
        if sqlstate:
            details["sqlstate"] = sqlstate
        error = {"code": SPARK_ERROR, "message": message}
        if details:
            error["details"] = details
        return error
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return {"code": INTERNAL_ERROR, "message": f"{type(exc).__name__}: {first}"[:MAX_MESSAGE]}
