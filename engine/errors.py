"""Turn Spark's exceptions into a job's ``error``: a code and Spark's first line(s), never a
Java stack trace nor a Python traceback, and never a path of the server.

Spark's messages name files (``Path does not exist: file:/srv/tessera/warehouse/…``): the
data dir, the warehouse, the storage roots, Spark's local dirs, the Python environment,
home directories. ``scrub_paths`` replaces them with what a user understands: the table
whose location it is (``<location of table c.d.t>/part-0.parquet``, from the job's plan,
see ``known_locations``), else a placeholder (``<warehouse>``, ``<storage>``, ``<path>``…).
"""

from __future__ import annotations

import logging
import re
import site
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import InterfaceError, OperationalError

from core.errors import CoreError
from core.planner import Plan
from engine.error_positions import error_details, message_position
from jobs.errors import INTERNAL_ERROR, JobError

log = logging.getLogger(__name__)

SPARK_ERROR = "SPARK_ERROR"
TIMEOUT = "TIMEOUT"
MAX_MESSAGE = 2000

SPARK_OUT_OF_MEMORY = "SPARK_OUT_OF_MEMORY"
STORAGE_FULL = "STORAGE_FULL"
NO_SPACE = "No space left on device"  # ENOSPC, as Java and Python word it
# The worker's Spark died, stopped or stopped answering; or the Spark Connect server went
# away under a job, or cannot be reached.
ENGINE_LOST = "ENGINE_LOST"
DATABASE_UNAVAILABLE = "DATABASE_UNAVAILABLE"
UNSUPPORTED = "UNSUPPORTED"


class SparkOutOfMemory(CoreError):
    """The worker's Spark driver ran out of memory while the job ran (it was restarted)."""

    code = SPARK_OUT_OF_MEMORY


class SparkLost(CoreError):
    """The worker's Spark driver died, stopped or stopped answering while the job ran."""

    code = ENGINE_LOST


class EngineLost(CoreError):
    """The Spark Connect server cannot be reached, or its connection broke under the job."""

    code = ENGINE_LOST


class UnsupportedRuntime(CoreError):
    """What the worker's Spark runtime cannot do (a job error, never an HTTP one); the
    message names the runtime."""

    code = UNSUPPORTED


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


def _java_tree(java: Any, limit: int = 24) -> Iterator[Any]:
    """A Java exception, then its causes and suppressed exceptions, breadth first (AQE's
    ``STAGE_MATERIALIZATION_MULTIPLE_FAILURES`` keeps the other stages' failures suppressed)."""
    queue, seen = [java], 0
    while queue and seen < limit:
        current = queue.pop(0)
        if current is None:
            continue
        seen += 1
        yield current
        try:
            queue.append(current.getCause())
            queue.extend(current.getSuppressed() or ())
        except Exception:
            continue


def java_messages(exc: BaseException) -> list[str]:
    """The messages (as shown) of ``exc``'s Java exception and of its causes and suppressed
    ones."""
    java = getattr(exc, "java_exception", None)
    if java is None:
        return []
    messages: list[str] = []
    try:
        for node in _java_tree(java):
            messages.append(_shown(str(node.getMessage() or "")))
    except Exception:
        pass
    return messages


def _java_message(java: Any) -> str:
    """The message of a Java exception; a wrapper's (``Exception thrown in awaitResult:``,
    a message ending in a colon, or none) gives way to its causes' or suppressed ones'."""
    first = ""
    for node in _java_tree(java):
        message = str(node.getMessage() or "").strip()
        if message and not message.endswith(":"):
            return message
        first = first or message
    return first


def spark_message(exc: BaseException) -> str:
    """Spark's message for ``exc`` without stack traces (first line(s) only)."""
    java = getattr(exc, "java_exception", None)
    text = ""
    if java is not None:
        try:
            text = _java_message(java)
        except Exception:
            text = ""
    if not text:
        text = str(exc)
        if text.startswith("An error occurred while calling"):
            # Py4JJavaError: "An error occurred while calling o80.x.\n: org.apache…: msg\n\tat …"
            text = text.split("\n: ", 1)[-1]
    return _shown(text) or type(exc).__name__


def _shown(text: str) -> str:
    """A Java message as shown: no class prefix, first sentence lines, at most MAX_MESSAGE."""
    text = _JAVA_PREFIX.sub("", text.strip())
    message = _POSITION_SUFFIX.sub("", _first_lines(text)).strip()
    if len(message) > MAX_MESSAGE:
        message = message[: MAX_MESSAGE - 1] + "…"
    return message


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


def _no_space(exc: BaseException) -> bool:
    """Did a write fail because its disk is full (ENOSPC), anywhere in the Python chain or
    in the Java causes (a task's ``IOException`` under ``TASK_WRITE_FAILED``)?"""
    current: BaseException | None = exc
    for _ in range(10):
        if current is None:
            break
        if NO_SPACE in str(current) or getattr(current, "errno", None) == 28:
            return True
        java = getattr(current, "java_exception", None)
        for _ in range(12):
            if java is None:
                break
            try:
                if NO_SPACE in str(java.toString()):
                    return True
                java = java.getCause()
            except Exception:
                break
        current = current.__cause__ or current.__context__
    return False


def error_from_exception(
    exc: BaseException, aliases: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """``job_error`` as JSON (a schema check's answer)."""
    return job_error(exc, aliases).to_json()


def job_error(
    exc: BaseException,
    aliases: Mapping[str, str] | None = None,
    *,
    texts: tuple[str, str] | None = None,
) -> JobError:
    """The job's error for an exception raised while running it.

    ``aliases`` maps the plan's internal names (``__tessera_r1``) back to what the user wrote,
    so messages speak of the user's tables and functions. Spark's and unexpected errors'
    messages lose their server paths (``scrub_paths``); ours (``CoreError``) are kept.
    ``texts``: the SQL Spark ran (the plan's spliced text) and the statement the user wrote;
    a Spark parse or analysis error then carries its place in the latter
    (``engine.error_positions``: ``line``, ``column``, ``span`` in ``details``).
    """
    if isinstance(exc, CoreError):
        return JobError.of(exc, empty_details=False, retryable=exc.code == ENGINE_LOST)
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
        placed = error_details(exc, *texts) if texts is not None else {}
        details.update(placed)
        message = message_position(message, placed)
        if _no_space(exc):
            return JobError(
                STORAGE_FULL,
                re.sub(r"\.?\s*SQLSTATE: \w+$", "", scrub_paths(message)).rstrip(". ")
                + ": the disk it writes to is full (no space left on device). Nothing was "
                "committed and what the job wrote was deleted; free space or write less.",
                details or None,
            )
        return JobError(SPARK_ERROR, scrub_paths(message), details or None)
    if _database_lost(exc):
        log.warning("a job lost Tessera's database: %s", exc)
        return JobError(
            DATABASE_UNAVAILABLE,
            "Tessera's database was unavailable (restarted or unreachable) while "
            "this job ran, so the job was stopped; nothing it would have written was "
            "committed. Run the statement again.",
            retryable=True,
        )
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    message = scrub_paths(f"{type(exc).__name__}: {first}"[:MAX_MESSAGE])
    return JobError(INTERNAL_ERROR, message)


def _database_lost(exc: BaseException) -> bool:
    """Did the job fail because the connection to Tessera's own database broke (a restart:
    "terminating connection due to administrator command", "server closed the connection")?"""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen and len(seen) < 10:
        if isinstance(current, OperationalError | InterfaceError):
            return True
        seen.append(current)
        current = current.__cause__ or current.__context__
    return False


# --- server paths out of messages -------------------------------------------------------------

# Locations of the running job's tables (path → "c.d.t"), set around the job (run.py).
_locations: ContextVar[Mapping[str, str] | None] = ContextVar("tessera_job_locations", default=None)


@contextmanager
def known_locations(locations: Mapping[str, str]) -> Iterator[None]:
    """While the block runs (in this thread), messages name these paths by their table."""
    token = _locations.set(dict(locations))
    try:
        yield
    finally:
        _locations.reset(token)


def plan_locations(
    plan: Plan | None,
    staging: Mapping[str, Any] | None = None,
    access: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, str]:
    """Path → table name for the tables a job reads (plan relations) and writes (its
    ``Job.staging`` entries: staging and final locations).

    ``access`` (``Job.access``, the privileges the planner checked): a table the job's user
    reads only through a view — never with SELECT of their own — is not named, since the
    user may not see it; its location becomes ``<location of a table read by view
    c.d.v>``. Without records (a job planned before grants existed) every table is named."""
    found: dict[str, str] = {}
    unnamed = _read_through_views(access or ())
    for relation in plan.relations if plan is not None else ():
        path = str(relation.path or relation.options.get("path") or "")
        identifier = relation.identifier
        if path and identifier:
            lowered = tuple(str(part).lower() for part in identifier)
            if lowered in unnamed:
                view = ".".join(str(part) for part in unnamed[lowered])
                found[path] = f"<location of a table read by view {view}>"
            else:
                found[path] = ".".join(str(part) for part in identifier if part)
    for entry in (staging or {}).values():
        if not isinstance(entry, Mapping):
            continue
        name = ".".join(str(part) for part in entry.get("identifier") or [] if part)
        for key in ("location", "final"):
            if entry.get(key) and name:
                found[str(entry[key])] = name
    return found


def _read_through_views(
    access: Sequence[Mapping[str, Any]],
) -> dict[tuple[str, ...], tuple[str, ...]]:
    """Tables (lower-cased identifiers) the records show read through a view only, with the
    outermost such view the user reads themselves (the one they may name)."""
    direct: set[tuple[str, ...]] = set()
    parent: dict[tuple[str, ...], tuple[str, ...]] = {}  # what it was (first) read through
    for record in access:
        if not isinstance(record, Mapping) or not record.get("identifier"):
            continue
        ident = tuple(str(part) for part in record["identifier"])
        key = tuple(part.lower() for part in ident)
        via = record.get("via")
        if via:
            parent.setdefault(key, tuple(str(part) for part in via))
        elif record.get("privilege") in ("SELECT", "MODIFY"):
            direct.add(key)
    outer: dict[tuple[str, ...], tuple[str, ...]] = {}
    for key, view in parent.items():
        if key in direct:
            continue
        seen = 0
        while (up := tuple(p.lower() for p in view)) in parent and up not in direct and seen < 64:
            view, seen = parent[up], seen + 1
        outer[key] = view
    return outer


def _forms(path: str) -> set[str]:
    """The spellings of a directory in Spark's messages (as given and resolved)."""
    text = path.rstrip("/")
    if not text.startswith("/"):
        return set()
    try:
        resolved = str(Path(text).resolve())
    except OSError:
        resolved = text
    return {text, resolved} - {"", "/"}


def _server_roots() -> tuple[tuple[str, str], ...]:
    """(directory, placeholder) of every server directory that may appear in a message,
    the longest first (the most specific name wins). Computed again whenever the settings
    it is made of change (tests move the warehouse and the storage roots)."""
    return _server_roots_of(
        str(settings.WAREHOUSE_DIR),
        str(settings.DATA_DIR),
        str(settings.BASE_DIR),
        tuple(str(root) for root in settings.TESSERA_STORAGE_ROOTS),
    )


@lru_cache(maxsize=4)
def _server_roots_of(
    warehouse: str, data_dir: str, base_dir: str, storage_roots: tuple[str, ...]
) -> tuple[tuple[str, str], ...]:
    data = Path(data_dir)
    named: list[tuple[str, str]] = [
        (warehouse, "<warehouse>"),
        (str(data / "spark" / "warehouse"), "<warehouse>"),
        (str(data / "spark" / "tmp"), "<spark-local>"),
        (str(data / "spark"), "<spark>"),
        (str(data), "<data>"),
        (base_dir, "<app>"),
        (tempfile.gettempdir(), "<tmp>"),
        (str(Path.home()), "<home>"),
        (sys.prefix, "<python>"),
        (sys.base_prefix, "<python>"),
        *((path, "<python>") for path in site.getsitepackages()),
    ]
    named += [(root, "<storage>") for root in storage_roots]
    roots = {form: label for path, label in named for form in _forms(path)}
    return tuple(sorted(roots.items(), key=lambda item: -len(item[0])))


# What may follow a directory name for it to be that directory (not /data2 for /data).
_END = r"(?=[/\s'\"`\]),;:]|\.(?:\s|$)|\.?$)"
# An absolute path left over (after the known ones), with an optional file: or Hadoop URI
# scheme. Not a URL (http…), not part of a word, a number or a placeholder (``<x>/a``).
_ANY_PATH = re.compile(
    r"(?<![\w/:.>\\])"
    r"(?:(?:file|hdfs|viewfs|s3a?|s3n|gs|abfss?|wasbs?|har|ftp|sftp):(?://[^/\s'\"`]*)?)?"
    r"/[\w.~-][^\s'\"`<>()\[\]{},;]*"
)
# Spark names the executor's host: "(192.0.2.2 executor driver)".
_EXECUTOR_HOST = re.compile(r"\((?:[\w.-]+|\[[\w:]+\]) (executor [\w.-]+)\)")


def _replace_directory(message: str, directory: str, label: str) -> str:
    pattern = re.compile(r"(?:file:(?://)?)?" + re.escape(directory) + _END)
    return pattern.sub(lambda _: label, message)


def scrub_paths(message: str, locations: Mapping[str, str] | None = None) -> str:
    """``message`` without server paths: a table's location becomes ``<location of table
    c.d.t>`` (a table the user reads only through a view: ``<location of a table read by
    view c.d.v>``, see ``plan_locations``), a server directory its placeholder, any other
    absolute path ``<path>``. ``locations`` values are table names, or whole labels
    (starting with ``<``)."""
    if "/" not in message and "(" not in message:
        return message
    known = {**(_locations.get() or {}), **(locations or {})}
    pairs = [
        (form, name if name.startswith("<") else f"<location of table {name}>")
        for path, name in known.items()
        for form in _forms(path)
    ]
    for directory, label in sorted(pairs, key=lambda item: -len(item[0])):
        message = _replace_directory(message, directory, label)
    for directory, label in _server_roots():
        message = _replace_directory(message, directory, label)
    # Keep a sentence's full stop or colon after a path.
    message = _ANY_PATH.sub(
        lambda m: "<path>" + m.group(0)[len(m.group(0).rstrip(".:")) :], message
    )
    return _EXECUTOR_HOST.sub(r"(\1)", message)
