"""Session properties: the one registry of what a session may set, and what each value means.

Every key a user may ``SET`` (or send in a session's ``properties``) is listed here with
its parser, its range, its canonical form and its default. The same registry answers
everywhere a property is read: the planner (``SET``), the web side (``SET``/``RESET``,
``POST``/``PATCH /sessions``, a job's timeout) and the worker (rows kept, timeout, the
Spark settings of a job's session). Values are checked when they are set, and again where
they are used, so that values stored before a limit existed (or before a server lowered
its limits) are clamped or dropped, never trusted.

Tessera's own limits come from the server's settings (``SessionProperties(...)``); the
ranges of Spark settings are fixed here, each with the reason for it. Pure: standard
library only.
"""

from __future__ import annotations

import re
import zoneinfo
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from core import spark_semantics
from core.errors import CoreError

MiB = 1024 * 1024
GiB = 1024 * MiB

# --- Spark settings: the allow-list and its ranges ------------------------------------------

# Shuffle partitions are tasks per shuffle stage; the driver keeps shuffle status per map
# task and partition. 0 or less is an error in Spark, and hundreds of millions made a job
# build task lists until its worker wedged. 10,000 is ~3 tasks per core on a 3,000-core
# cluster: more than any cluster Tessera runs on needs.
SHUFFLE_PARTITIONS_MAX = 10_000
# A broadcast join collects the small side on the driver, which every job of a worker
# shares (one JVM, several jobs at a time). Spark's default is 10 MiB; 64 MiB lets users
# broadcast a bigger dimension table while a few concurrent broadcasts (whose in-memory
# size can be several times the estimate) stay far below a driver's heap. -1 disables.
BROADCAST_THRESHOLD_MAX = 64 * MiB
# The split size when reading files. Tiny values turn one file into millions of tasks;
# huge ones give one task a whole dataset. Spark's default is 128 MiB.
MAX_PARTITION_BYTES_MIN = 1 * MiB
MAX_PARTITION_BYTES_MAX = 1 * GiB

_INTEGER = re.compile(r"[+]?([0-9]{1,1000})")
# Spark's byte strings (JavaUtils.byteStringAs): a whole number and an optional unit.
_BYTES = re.compile(r"([0-9]{1,1000})\s*(b|k|kb|m|mb|g|gb|t|tb|p|pb)?", re.IGNORECASE)
_BYTE_UNITS = {"b": 1, "k": 1024, "m": MiB, "g": GiB, "t": 1024 * GiB, "p": 1024 * 1024 * GiB}
# Spark's documented zone forms: region IDs "Area/City", offsets (+|-)HH[:mm[:ss]], UTC, Z.
_OFFSET = re.compile(r"([+-])([0-9]{2})(?::([0-9]{2})(?::([0-9]{2}))?)?")
_REGION = re.compile(r"[A-Za-z][A-Za-z0-9_+-]*(?:/[A-Za-z0-9_+-]+)+")


class PropertyValueError(ValueError):
    """A value a property's parser refuses; the message completes "must be …"."""


@dataclass(frozen=True)
class Range:
    """Whole numbers from ``low`` to ``high``; ``special`` values are allowed besides."""

    low: int
    high: int
    special: tuple[int, ...] = ()

    def clamp(self, value: int) -> int:
        if value in self.special:
            return value
        return max(self.low, min(self.high, value))

    def describe(self, size: bool = False) -> str:
        shown = _size if size else (lambda value: f"{value:,}")
        text = f"from {shown(self.low)} to {shown(self.high)}"
        if self.special:
            text += ", or " + " or ".join(str(v) for v in self.special)
        return text


def _size(value: int) -> str:
    """Bytes as people write them: 64 MiB, 1 GiB, 512 bytes."""
    for unit, name in ((GiB, "GiB"), (MiB, "MiB"), (1024, "KiB")):
        if value >= unit and value % unit == 0:
            return f"{value // unit:,} {name}"
    return f"{value:,} bytes"


@dataclass(frozen=True)
class PropertySpec:
    """One settable key: how its text is read, its range, its default, and what it is."""

    key: str
    kind: str  # "integer" | "bytes" | "boolean" | "time zone" | "runtime mode" | "duration"
    description: str
    range: Range | None = None
    default: str | None = None  # None: Spark's own default (or unset)
    range_note: str = ""  # why the range is what it is (in messages: "the server's limit")
    choices: tuple[str, ...] = ()  # kind "choice": one of these, any case; stored as listed

    @property
    def spark(self) -> bool:
        """Whether the worker passes it to the job's Spark session."""
        return self.key.startswith("spark.")

    def parse(self, text: str) -> tuple[str, int | None]:
        """The canonical text of a value and, for numbers, the number (unclamped);
        ``PropertyValueError`` when it cannot be read at all."""
        raw = text.strip()
        if self.kind == "boolean":
            if raw.lower() not in ("true", "false"):
                raise PropertyValueError("true or false")
            return raw.lower(), None
        if self.kind == "time zone":
            return _time_zone(raw), None
        if self.kind == "choice":
            if raw.upper() not in self.choices:
                raise PropertyValueError(self.expected())
            return raw.upper(), None
        if self.kind == "runtime mode":
            if raw.lower() not in RUNTIME_MODES:
                raise PropertyValueError("'batch' or 'streaming'")
            return raw.lower(), None
        if self.kind == "duration":
            milliseconds = _milliseconds(raw)
            return _show_milliseconds(milliseconds), milliseconds
        number = _integer(raw) if self.kind == "integer" else _bytes(raw)
        return str(number), number

    def check(self, text: str) -> str:
        """The canonical value; ``PropertyValueError`` when it is unreadable or out of range."""
        canonical, number = self.parse(text)
        if number is not None and self.range is not None and self.range.clamp(number) != number:
            raise PropertyValueError(self.expected())
        return canonical

    def expected(self) -> str:
        """What a value must be, completing "must be …"."""
        if self.kind == "boolean":
            return "true or false"
        if self.kind == "time zone":
            return "a time zone: a region such as Europe/Paris, an offset such as +01:00, or UTC"
        if self.kind == "runtime mode":
            return "'batch' or 'streaming'"
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        if self.kind == "duration":
            return "a duration from 100 ms to 1 h, such as '500 ms', '2 s' or '1 min'"
        what = "a whole number" if self.kind == "integer" else "a size in bytes (e.g. 10m)"
        if self.range is None:
            return what
        text = f"{what} {self.range.describe(size=self.kind == 'bytes')}"
        return f"{text} ({self.range_note})" if self.range_note else text


def _integer(raw: str) -> int:
    match = _INTEGER.fullmatch(raw)
    if match is None:
        raise PropertyValueError("a whole number")
    return int(match.group(1))


# Durations as Flink writes them ('500 ms', '2 s', '1 min'), in milliseconds.
_DURATION = re.compile(
    r"([0-9]{1,9})\s*(ms|milli|millis|s|sec|secs|second|seconds|min|mins|minute|minutes|h|hour|hours)?",
    re.IGNORECASE,
)
_DURATION_UNITS = {
    **dict.fromkeys(("ms", "milli", "millis"), 1),
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), 1000),
    **dict.fromkeys(("min", "mins", "minute", "minutes"), 60_000),
    **dict.fromkeys(("h", "hour", "hours"), 3_600_000),
}


def _milliseconds(raw: str) -> int:
    match = _DURATION.fullmatch(raw)
    if match is None:
        raise PropertyValueError("a duration such as '500 ms', '2 s' or '1 min'")
    return int(match.group(1)) * _DURATION_UNITS[(match.group(2) or "ms").lower()]


def _show_milliseconds(value: int) -> str:
    for size, unit in ((3_600_000, "h"), (60_000, "min"), (1000, "s")):
        if value >= size and value % size == 0:
            return f"{value // size} {unit}"
    return f"{value} ms"


def _bytes(raw: str) -> int:
    if raw == "-1":
        return -1
    match = _BYTES.fullmatch(raw)
    if match is None:
        raise PropertyValueError("a size in bytes (e.g. 10485760 or 10m)")
    unit = (match.group(2) or "b")[0].lower()
    return int(match.group(1)) * _BYTE_UNITS[unit]


@cache
def _zone_database_present() -> bool:
    return bool(zoneinfo.available_timezones())


def _time_zone(raw: str) -> str:
    if raw in ("UTC", "Z"):
        return raw
    offset = _OFFSET.fullmatch(raw)
    if offset is not None:
        sign, hours, minutes, seconds = offset.groups()
        total = int(hours) * 3600 + int(minutes or 0) * 60 + int(seconds or 0)
        if int(minutes or 0) > 59 or int(seconds or 0) > 59 or total > 18 * 3600:
            raise PropertyValueError("an offset from -18:00 to +18:00")
        text = f"{sign}{hours}:{minutes or '00'}"
        return text + (f":{seconds}" if seconds else "")
    if _REGION.fullmatch(raw) is None:
        raise PropertyValueError(
            "a time zone: a region such as Europe/Paris, an offset such as +01:00, or UTC"
        )
    if _zone_database_present():
        try:
            zoneinfo.ZoneInfo(raw)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
            raise PropertyValueError("a time zone of the time zone database") from None
    return raw


def _bool(key: str, description: str) -> PropertySpec:
    return PropertySpec(key, "boolean", description)


SPARK_PROPERTIES: tuple[PropertySpec, ...] = (
    PropertySpec(
        "spark.sql.shuffle.partitions",
        "integer",
        "Partitions of shuffles (joins, aggregations).",
        Range(1, SHUFFLE_PARTITIONS_MAX),
    ),
    _bool("spark.sql.ansi.enabled", "ANSI SQL semantics (errors on overflow, invalid casts)."),
    PropertySpec(
        "spark.sql.session.timeZone",
        "time zone",
        "The session's time zone (timestamps, current_timestamp()).",
    ),
    _bool("spark.sql.adaptive.enabled", "Adaptive query execution."),
    PropertySpec(
        "spark.sql.files.maxPartitionBytes",
        "bytes",
        "The most bytes of files one task reads.",
        Range(MAX_PARTITION_BYTES_MIN, MAX_PARTITION_BYTES_MAX),
    ),
    PropertySpec(
        "spark.sql.autoBroadcastJoinThreshold",
        "bytes",
        "Tables up to this size are broadcast in joins (-1: never).",
        Range(0, BROADCAST_THRESHOLD_MAX, special=(-1,)),
        range_note="-1 disables; a broadcast is built on the driver that every job shares",
    ),
    *(_bool(key, description) for key, description in spark_semantics.BOOLEAN_KEYS),
    *(
        PropertySpec(key, "choice", description, choices=choices)
        for key, choices, description in spark_semantics.CHOICE_KEYS
    ),
)

# Streaming (docs/streaming.md): Flink's keys. The mode a statement is planned in, and the
# micro-batch trigger of a stream (each micro-batch is one commit: Flink's checkpoint).
RUNTIME_MODE = "execution.runtime-mode"
RUNTIME_MODES = ("batch", "streaming")
CHECKPOINT_INTERVAL = "execution.checkpointing.interval"
CHECKPOINT_INTERVAL_RANGE = Range(100, 3_600_000)  # 100 ms .. 1 h, in milliseconds
STREAMING_PROPERTIES: tuple[PropertySpec, ...] = (
    PropertySpec(
        RUNTIME_MODE,
        "runtime mode",
        "batch runs a statement once over the data there is; streaming runs CREATE TABLE … AS "
        "SELECT, INSERT and SELECT as long-running streams (Structured Streaming).",
        default="batch",
    ),
    PropertySpec(
        CHECKPOINT_INTERVAL,
        "duration",
        "How often a stream runs a micro-batch; each micro-batch is committed.",
        CHECKPOINT_INTERVAL_RANGE,
        default="1 s",
    ),
)


def runtime_mode_value(key: str, value: str) -> str:
    """``batch`` or ``streaming`` (any case) given per statement (a CTAS's WITH, an INSERT's
    hint); a CoreError otherwise."""
    mode = value.strip().lower()
    if mode not in RUNTIME_MODES:
        raise CoreError(
            f"The option '{key}' must be 'batch' or 'streaming', not '{value.strip()[:40]}'.",
            details={"key": key},
        )
    return mode


RESULT_MAX_ROWS = "result.max_rows"
JOB_TIMEOUT_SECONDS = "job.timeout_seconds"
CTAS_ATOMIC = "table.ctas.atomic"

PROPERTY_KEYS: frozenset[str] = frozenset(
    {spec.key for spec in (*SPARK_PROPERTIES, *STREAMING_PROPERTIES)}
    | {RESULT_MAX_ROWS, JOB_TIMEOUT_SECONDS, CTAS_ATOMIC}
)


# How long a statements request may hold its answer for the job to end (``"wait"``).
WAIT_MAX_SECONDS = 30
# How long a session may stay idle before it expires (``idle_timeout_seconds``).
IDLE_TIMEOUT_MAX_SECONDS = 30 * 86400


def check_wait(wait: Any) -> float:
    """A statements request's ``wait``: seconds from 0 to ``WAIT_MAX_SECONDS`` (None: 0)."""
    if wait is None:
        return 0.0
    if (
        isinstance(wait, bool)
        or not isinstance(wait, int | float)
        or not 0 <= wait <= WAIT_MAX_SECONDS
    ):
        raise CoreError(
            f"'wait' must be a number of seconds from 0 to {WAIT_MAX_SECONDS}.",
            details={"field": "wait"},
        )
    return float(wait)


class SessionProperties:
    """The registry, bound to the server's limits.

    ``result_max_rows``: the most rows a result keeps (``result.max_rows`` may only lower
    it; also its default). ``job_timeout_seconds``: a job's default timeout;
    ``job_timeout_max_seconds``: the most ``job.timeout_seconds`` may ask for.
    """

    def __init__(
        self,
        *,
        result_max_rows: int,
        job_timeout_seconds: int,
        job_timeout_max_seconds: int | None = None,
    ) -> None:
        timeout_max = max(1, job_timeout_max_seconds or job_timeout_seconds)
        rows_max = max(1, result_max_rows)
        specs = (
            *SPARK_PROPERTIES,
            *STREAMING_PROPERTIES,
            PropertySpec(
                RESULT_MAX_ROWS,
                "integer",
                "The most rows of a query's result that are kept.",
                Range(1, rows_max),
                default=str(rows_max),
                range_note="the server's limit",
            ),
            PropertySpec(
                JOB_TIMEOUT_SECONDS,
                "integer",
                "A job running longer than this many seconds is stopped (TIMEOUT).",
                Range(1, timeout_max),
                default=str(max(1, min(job_timeout_seconds, timeout_max))),
                range_note="the server's limit",
            ),
            _bool(CTAS_ATOMIC, "CREATE TABLE … AS SELECT creates the table only at commit."),
        )
        self._specs: dict[str, PropertySpec] = {spec.key: spec for spec in specs}

    @classmethod
    def from_settings(cls, settings: Any) -> SessionProperties:
        """The registry bound to a settings object's ``TESSERA_*`` limits (Django's
        settings on the server; any object with those attributes in tests)."""
        return cls(
            result_max_rows=settings.TESSERA_RESULT_MAX_ROWS,
            job_timeout_seconds=settings.TESSERA_JOB_TIMEOUT_SECONDS,
            job_timeout_max_seconds=settings.TESSERA_JOB_TIMEOUT_MAX_SECONDS,
        )

    # -- what exists ------------------------------------------------------------------------

    @property
    def keys(self) -> frozenset[str]:
        return frozenset(self._specs)

    def spec(self, key: str) -> PropertySpec | None:
        return self._specs.get(key)

    def specs(self) -> list[PropertySpec]:
        """Every settable key, by name."""
        return [self._specs[key] for key in sorted(self._specs)]

    def default(self, key: str) -> str | None:
        """Tessera's default of ``key`` (None: unset, Spark's own default applies)."""
        spec = self._specs.get(key)
        return spec.default if spec is not None else None

    # -- setting --------------------------------------------------------------------------

    def check(self, key: Any, value: Any, *, field: str = "properties") -> str:
        """The canonical text of ``value`` for ``key``; a ``CoreError`` (VALIDATION_ERROR)
        naming ``field.key`` when the key is not settable or the value not allowed."""
        spec = self._specs.get(key) if isinstance(key, str) else None
        details = {"field": f"{field}.{key}", "key": key}
        if spec is None:
            allowed = ", ".join(sorted(self._specs))
            raise CoreError(
                f"The session property '{key}' cannot be set. Settable properties: {allowed}.",
                details=details,
            )
        if not isinstance(value, str):
            raise CoreError(
                f"The value of session property '{key}' must be a string, e.g. \"{value}\".",
                details=details,
            )
        try:
            return spec.check(value)
        except PropertyValueError as error:
            shown = value if len(value) <= 40 else value[:40] + "…"
            # Numbers say their range even when the text is not a number at all.
            expected = str(error) if spec.kind == "time zone" else spec.expected()
            raise CoreError(
                f"The session property '{key}' must be {expected}, got '{shown}'.",
                details={**details, "expected": spec.expected()},
            ) from None

    def check_all(self, properties: Any, *, field: str = "properties") -> dict[str, str]:
        """A whole map (``POST``/``PATCH /sessions``), every value canonical."""
        if not isinstance(properties, Mapping):
            raise CoreError(f"'{field}' must be a JSON object.", details={"field": field})
        return {key: self.check(key, value, field=field) for key, value in properties.items()}

    # -- using ------------------------------------------------------------------------------

    def effective(self, properties: Mapping[str, Any] | None) -> dict[str, str]:
        """The values in force for stored ``properties``: unknown keys and unreadable values
        are dropped (their default applies), numbers out of range are clamped into it."""
        return _effective(self._specs, properties)

    def integer(self, properties: Mapping[str, Any] | None, key: str) -> int:
        """A Tessera number in force (``result.max_rows``, ``job.timeout_seconds``)."""
        value = self.effective(properties).get(key) or self.default(key)
        if value is None:
            raise KeyError(key)
        return int(value)

    def result_max_rows(self, properties: Mapping[str, Any] | None) -> int:
        return self.integer(properties, RESULT_MAX_ROWS)

    def runtime_mode(self, properties: Mapping[str, Any] | None) -> str:
        """``batch`` or ``streaming``: the mode the session's statements are planned in."""
        return self.effective(properties).get(RUNTIME_MODE) or "batch"

    def checkpoint_interval_ms(self, properties: Mapping[str, Any] | None) -> int:
        """A stream's micro-batch trigger, in milliseconds (clamped into its range)."""
        value = self.effective(properties).get(CHECKPOINT_INTERVAL)
        return _milliseconds(value) if value else 1000

    def job_timeout_seconds(self, properties: Mapping[str, Any] | None) -> int:
        return self.integer(properties, JOB_TIMEOUT_SECONDS)

    def clamp_timeout(self, seconds: int | None) -> int:
        """A timeout stored on a job, within the server's range (its default when unset)."""
        spec = self._specs[JOB_TIMEOUT_SECONDS]
        if not seconds or spec.range is None:
            return int(spec.default or 1)
        return spec.range.clamp(int(seconds))


def _effective(specs: Mapping[str, PropertySpec], properties: Any) -> dict[str, str]:
    result: dict[str, str] = {}
    if not isinstance(properties, Mapping):
        return result
    for key, value in properties.items():
        spec = specs.get(key) if isinstance(key, str) else None
        if spec is None or isinstance(value, bool) or not isinstance(value, str | int):
            continue
        try:
            canonical, number = spec.parse(str(value))
        except PropertyValueError:
            continue
        if number is not None and spec.range is not None:
            canonical = str(spec.range.clamp(number))
        result[key] = canonical
    return result


_SPARK_SPECS: dict[str, PropertySpec] = {spec.key: spec for spec in SPARK_PROPERTIES}


def spark_settings(properties: Mapping[str, Any] | None) -> dict[str, str]:
    """The Spark settings in force for stored ``properties``: allow-listed ``spark.*`` keys
    only, values canonical and clamped into their ranges, unreadable ones dropped. Needs
    no server limits (the Spark ranges are fixed here)."""
    return _effective(_SPARK_SPECS, properties)
