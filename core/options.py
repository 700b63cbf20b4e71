"""Table options: one allow-list per file format, used wherever options enter or are used.

Spark passes a data source's options to Hadoop's configuration for that read or write, so
an option such as ``fs.defaultFS`` or ``fs.viewfs.mounttable.*`` changes which file system a
path means. Only the documented reader and writer options of Spark 4's parquet, csv, json,
orc and text sources (and the generic file-source options) are accepted, keys compared
case-insensitively as Spark reads them; every other key — ``fs.*``, ``hadoop.*``,
``spark.*``, ``paths``, ``basePath`` or anything unknown — is refused with an error naming
it. Values are checked where a value could hurt (class names instead of codec names,
numbers that size buffers, strings that are not what the option takes).

Used by the SQL planner (``core/planner/sources.py``: CREATE [TEMPORARY] TABLE, CTAS), the
REST services (``catalog/services.check_options``: POST/PATCH tables, properties,
temporary tables) and the worker (registration for reading, writing). Keys are read here
only: ``split_source`` separates a table's own format and path from its other options,
``check_options`` checks those; both refuse two spellings of one key.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from core.errors import CoreError

# Option keys that describe the source itself (stored, never passed as reader options).
SOURCE_KEYS: frozenset[str] = frozenset({"connector", "format", "path"})
# Tessera's own options of a managed table: stored with it, read by Tessera, never passed to
# Spark (``split_source`` returns them with the source keys). ``write.mode`` = ``upsert``
# makes INSERT upsert by the table's primary key (docs/writes.md, "Upserts").
WRITE_MODE = "write.mode"
WRITE_MODES: tuple[str, ...] = ("append", "upsert")
TESSERA_KEYS: frozenset[str] = frozenset({WRITE_MODE})
FILE_FORMATS: tuple[str, ...] = ("csv", "json", "orc", "parquet", "text")
# Delta Lake: an external table's format (read-only), or a managed table's (``USING delta``
# without LOCATION: written by Tessera's jobs, committed at FINISHED, ADR 0019).
DELTA = "delta"
TABLE_FORMATS: tuple[str, ...] = (*FILE_FORMATS, DELTA)
# What a managed table may be stored as.
MANAGED_FORMATS: tuple[str, ...] = TABLE_FORMATS
# The table properties every managed Delta table is created with (set by the engine, never
# by a user's option: Delta's readers have an empty option allow-list).
DELTA_MANAGED_PROPERTIES: dict[str, str] = {
    "delta.enableDeletionVectors": "true",
    "delta.columnMapping.mode": "name",
    "delta.enableChangeDataFeed": "true",
}
DELTA_WRITES_REFUSED = (
    "An external Delta table is read-only in Tessera: only managed Delta tables (CREATE "
    "TABLE … USING delta without LOCATION) are written by Tessera's jobs."
)
DELTA_CONNECT_REFUSED = (
    "Managed Delta tables are written through the Spark driver's own Delta API, which the "
    "Spark Connect runtime does not expose: run this write on a local or cluster engine."
)
FIELD_PREFIX = "options"

# Prefixes of keys that configure Spark or Hadoop rather than the table's files.
_FORBIDDEN_PREFIXES: tuple[tuple[str, str], ...] = (
    ("fs.", "it configures Hadoop's file systems, not the table's files"),
    ("hadoop.", "it configures Hadoop, not the table's files"),
    ("spark.", "it changes Spark's configuration, not the table's files"),
    ("parquet.", "it configures the Parquet library (class names included), not the table"),
    ("orc.", "it configures the ORC library (key providers included), not the table"),
    ("mapreduce.", "it configures Hadoop, not the table's files"),
    ("io.", "it configures Hadoop's input and output (codec classes included)"),
)
_FORBIDDEN_KEYS: dict[str, str] = {
    "paths": "a table reads exactly one path, given as 'path' or LOCATION",
    "basepath": "a table reads exactly its own path, so there is no other base path",
}

Check = Callable[[str], str | None]  # returns why the value is wrong, or None


def _boolean(value: str) -> str | None:
    return None if value.strip().lower() in ("true", "false") else "must be 'true' or 'false'"


def _integer(low: int, high: int, *also: int) -> Check:
    def check(value: str) -> str | None:
        text = value.strip()
        if re.fullmatch(r"-?\d{1,12}", text) and (low <= int(text) <= high or int(text) in also):
            return None
        extra = "".join(f" or {a}" for a in also)
        return f"must be a whole number from {low} to {high}{extra}"

    return check


def _fraction(value: str) -> str | None:
    try:
        number = float(value.strip())
    except ValueError:
        number = -1.0
    return None if 0 < number <= 1 else "must be a number greater than 0 and at most 1"


def _one_of(*choices: str) -> Check:
    allowed = {c.lower() for c in choices}

    def check(value: str) -> str | None:
        if value.strip().lower() in allowed:
            return None
        return f"must be one of {', '.join(choices)}"

    return check


def _pattern(regex: str, what: str) -> Check:
    compiled = re.compile(regex)

    def check(value: str) -> str | None:
        return None if compiled.fullmatch(value) else f"must be {what}"

    return check


def _text(limit: int, controls: bool = False) -> Check:
    """Free text up to ``limit`` characters; control characters only where the option is
    about them (separators)."""

    def check(value: str) -> str | None:
        if len(value) > limit:
            return f"must be at most {limit} characters long"
        if "\x00" in value or (not controls and any(not c.isprintable() for c in value)):
            return "must not contain control characters"
        return None

    return check


def _character(value: str) -> str | None:
    # Spark reads "" (off) and one character; "\u0000" spelled out means the NUL character.
    if (len(value) <= 1 and value != "\x00") or value == "\\u0000":
        return None
    return "must be a single character (or empty)"


_TEXT = _text(200)
_SEPARATOR = _text(10, controls=True)
_FORMAT_STRING = _text(100)
_TIMESTAMP = _pattern(
    r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}", "a timestamp like 2024-06-01T13:00:00"
)
_CHARSET = _pattern(r"[A-Za-z0-9][A-Za-z0-9._:+-]{0,39}", "a character set name such as UTF-8")
_LOCALE = _pattern(r"[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8}){0,4}", "a language tag such as en-US")
_TIME_ZONE = _pattern(r"[A-Za-z0-9/_+:-]{1,64}", "a time zone such as Europe/Paris or +01:00")
_COLUMN_NAME = _text(128)
_GLOB_FILTER = _pattern(r"[^/\x00-\x1f\x7f]{1,100}", "a file-name pattern without '/'")
_REBASE = _one_of("EXCEPTION", "CORRECTED", "LEGACY")
_PARSE_MODE = _one_of("PERMISSIVE", "DROPMALFORMED", "FAILFAST")
# Short codec names only: any other value is taken as a Java class name and loaded.
_TEXT_CODECS = _one_of("none", "uncompressed", "bzip2", "deflate", "gzip", "lz4", "snappy", "zstd")
_PARQUET_CODECS = _one_of(
    "none", "uncompressed", "snappy", "gzip", "lzo", "brotli", "lz4", "lz4_raw", "zstd"
)
_ORC_CODECS = _one_of("none", "uncompressed", "snappy", "zlib", "lzo", "lz4", "zstd", "brotli")

# Generic file-source options (docs: sql-data-sources-generic-options), every format.
_GENERIC: dict[str, Check] = {
    "ignoreCorruptFiles": _boolean,
    "ignoreMissingFiles": _boolean,
    "pathGlobFilter": _GLOB_FILTER,  # matches file names inside the path only
    "recursiveFileLookup": _boolean,
    "modifiedBefore": _TIMESTAMP,
    "modifiedAfter": _TIMESTAMP,
    # Structured Streaming's file source (a streaming read of the table's directory; batch
    # reads ignore it): how many new files one micro-batch takes. Its other options stay
    # refused: ``cleanSource``/``sourceArchiveDir`` delete or move the table's files.
    "maxFilesPerTrigger": _integer(1, 100_000),
}

_DATETIME: dict[str, Check] = {
    "dateFormat": _FORMAT_STRING,
    "timestampFormat": _FORMAT_STRING,
    "timestampNTZFormat": _FORMAT_STRING,
    "enableDateTimeParsingFallback": _boolean,
    "timeZone": _TIME_ZONE,
    "locale": _LOCALE,
}

_CSV: dict[str, Check] = {
    **_DATETIME,
    "sep": _SEPARATOR,
    "delimiter": _SEPARATOR,
    "extension": _pattern(r"[A-Za-z]{3}", "three letters"),
    "encoding": _CHARSET,
    "charset": _CHARSET,
    "quote": _character,
    "quoteAll": _boolean,
    "escape": _character,
    "escapeQuotes": _boolean,
    "comment": _character,
    "header": _boolean,
    "inferSchema": _boolean,
    "preferDate": _boolean,
    "enforceSchema": _boolean,
    "ignoreLeadingWhiteSpace": _boolean,
    "ignoreTrailingWhiteSpace": _boolean,
    "nullValue": _TEXT,
    "nanValue": _TEXT,
    "positiveInf": _TEXT,
    "negativeInf": _TEXT,
    # The parser allocates arrays of these sizes: bounded so one table cannot exhaust memory.
    "maxColumns": _integer(1, 100_000),
    "maxCharsPerColumn": _integer(1, 10_000_000, -1),
    "mode": _PARSE_MODE,
    "columnNameOfCorruptRecord": _COLUMN_NAME,
    "multiLine": _boolean,
    "charToEscapeQuoteEscaping": _character,
    "samplingRatio": _fraction,
    "emptyValue": _TEXT,
    "lineSep": _SEPARATOR,
    "unescapedQuoteHandling": _one_of(
        "STOP_AT_CLOSING_QUOTE",
        "BACK_TO_DELIMITER",
        "STOP_AT_DELIMITER",
        "SKIP_VALUE",
        "RAISE_ERROR",
    ),
    "compression": _TEXT_CODECS,
    "codec": _TEXT_CODECS,
}

_JSON: dict[str, Check] = {
    **_DATETIME,
    "primitivesAsString": _boolean,
    "prefersDecimal": _boolean,
    "allowComments": _boolean,
    "allowUnquotedFieldNames": _boolean,
    "allowSingleQuotes": _boolean,
    "allowNumericLeadingZero": _boolean,
    "allowBackslashEscapingAnyCharacter": _boolean,
    "mode": _PARSE_MODE,
    "columnNameOfCorruptRecord": _COLUMN_NAME,
    "multiLine": _boolean,
    "allowUnquotedControlChars": _boolean,
    "encoding": _CHARSET,
    "lineSep": _SEPARATOR,
    "samplingRatio": _fraction,
    "dropFieldIfAllNull": _boolean,
    "allowNonNumericNumbers": _boolean,
    "compression": _TEXT_CODECS,
    "ignoreNullFields": _boolean,
}

_PARQUET: dict[str, Check] = {
    "datetimeRebaseMode": _REBASE,
    "int96RebaseMode": _REBASE,
    "mergeSchema": _boolean,
    "compression": _PARQUET_CODECS,
}

_ORC: dict[str, Check] = {
    "mergeSchema": _boolean,
    "compression": _ORC_CODECS,
}

_TEXT_FORMAT: dict[str, Check] = {
    "wholetext": _boolean,
    "lineSep": _SEPARATOR,
    "compression": _TEXT_CODECS,
}

# Delta's reader takes no user option: Delta reads its log, not a directory listing, so the
# generic file-source options do not apply; time travel (versionAsOf/timestampAsOf) is set
# by the engine from the plan's VERSION/TIMESTAMP AS OF, never stored with the table.
_DELTA: dict[str, Check] = {}

# format -> key (as Spark documents it) -> value check: the allow-list.
ALLOWED: dict[str, dict[str, Check]] = {
    DELTA: _DELTA,
    "csv": {**_GENERIC, **_CSV},
    "json": {**_GENERIC, **_JSON},
    "orc": {**_GENERIC, **_ORC},
    "parquet": {**_GENERIC, **_PARQUET},
    "text": {**_GENERIC, **_TEXT_FORMAT},
}
# Spark reads option keys case-insensitively: so do the checks.
_BY_LOWER_KEY: dict[str, dict[str, Check]] = {
    fmt: {key.lower(): check for key, check in keys.items()} for fmt, keys in ALLOWED.items()
}
_ANY_FORMAT = frozenset(key for keys in _BY_LOWER_KEY.values() for key in keys)


class OptionRefused(CoreError):
    """An option key outside every allow-list (``fs.*``, ``hadoop.*``, ``spark.*``,
    unknown, …): code VALIDATION_ERROR; the SQL planner reports it as FORBIDDEN_SQL.
    ``details``: ``field`` (``options.<key>``) and ``key``."""


def _field(key: str, prefix: str) -> dict[str, str]:
    return {"field": f"{prefix}.{key}", "key": key}


def refused_key(key: str) -> str | None:
    """Why ``key`` is never a table option (whatever the format), or None."""
    lowered = key.lower()
    for prefix, reason in _FORBIDDEN_PREFIXES:
        if lowered.startswith(prefix):
            return reason
    if lowered in _FORBIDDEN_KEYS:
        return _FORBIDDEN_KEYS[lowered]
    if lowered not in _ANY_FORMAT:
        return "it is not an option of any file format Tessera reads or writes"
    return None


def check_key(key: str, *, prefix: str = FIELD_PREFIX) -> None:
    """Refuse a key that no format takes (the format-independent part of the check)."""
    reason = refused_key(key)
    if reason is not None:
        raise OptionRefused(
            f"The option '{key}' is not allowed: {reason}.", details=_field(key, prefix)
        )


def check_format(
    value: str, what: str = "The table format", formats: tuple[str, ...] = FILE_FORMATS
) -> str:
    """The file format in lower case; refuse anything else (jdbc, hive, class names …).
    ``formats``: FILE_FORMATS where a table is written, TABLE_FORMATS where it is read."""
    fmt = str(value).strip().lower()
    if fmt not in formats:
        if fmt == DELTA:
            raise OptionRefused(f"{what} '{value}' is not allowed here. {DELTA_WRITES_REFUSED}")
        raise OptionRefused(
            f"{what} '{value}' is not allowed: tables can only use the file formats "
            f"{', '.join(FILE_FORMATS)} (and {DELTA} for external tables, read-only), whose "
            "data the catalog can locate."
        )
    return fmt


def spellings(options: Mapping[str, object], *, prefix: str = FIELD_PREFIX) -> dict[str, str]:
    """Each key lower-cased -> the key as given. Spark reads keys case-insensitively, so
    two spellings of one key (``path`` and ``PATH``) would leave which one wins to Spark:
    refused."""
    seen: dict[str, str] = {}
    for key in options:
        lowered = key.lower()
        if lowered in seen:
            raise CoreError(
                f"The option '{key}' is given twice (as '{seen[lowered]}' and '{key}'); "
                "option keys are case-insensitive.",
                details=_field(key, prefix),
            )
        seen[lowered] = key
    return seen


def split_source(
    options: Mapping[str, str], *, prefix: str = FIELD_PREFIX
) -> tuple[dict[str, str], dict[str, str]]:
    """A table's options as (its source keys ``connector``/``format``/``path`` and Tessera's
    own keys (``write.mode``) under their lower-case names, every other option as given).
    Nothing is checked but the spellings: callers check the source keys their way (Tessera's
    with ``tessera_options``) and the rest with ``check_options``."""
    keys = spellings(options, prefix=prefix)
    own = SOURCE_KEYS | TESSERA_KEYS
    source = {lowered: options[key] for lowered, key in keys.items() if lowered in own}
    rest = {key: options[key] for lowered, key in keys.items() if lowered not in own}
    return source, rest


def write_mode_value(value: object, key: str = WRITE_MODE, prefix: str = FIELD_PREFIX) -> str:
    """``write.mode``'s value in lower case: ``append`` or ``upsert``."""
    mode = str(value).strip().lower() if isinstance(value, str) else ""
    if mode not in WRITE_MODES:
        raise CoreError(
            f"The value of option '{key}' ('{str(value)[:60]}') is not allowed: it must be one "
            f"of {', '.join(WRITE_MODES)}.",
            details=_field(key, prefix),
        )
    return mode


def tessera_options(
    source: Mapping[str, str], *, managed: bool, prefix: str = FIELD_PREFIX
) -> dict[str, str]:
    """Tessera's own keys of ``source`` (as ``split_source`` returns it), checked: only a
    managed table takes ``write.mode`` (an external table's files are shared with other
    tools, which a copy-on-write upsert would not keep). Whether the table has the primary
    key an upsert needs is checked where the schema is known."""
    result: dict[str, str] = {}
    if WRITE_MODE in source:
        if not managed:
            raise CoreError(
                f"The option '{WRITE_MODE}' applies to managed tables only: an upsert rewrites "
                "the table copy-on-write, which Tessera does for its own warehouse tables.",
                details=_field(WRITE_MODE, prefix),
            )
        result[WRITE_MODE] = write_mode_value(source[WRITE_MODE], prefix=prefix)
    return result


def check_options(
    fmt: str, options: Mapping[str, str], *, prefix: str = FIELD_PREFIX
) -> dict[str, str]:
    """Check every option of a ``fmt`` table (source keys excluded by the caller, see
    ``split_source``) and return them unchanged. Keys are case-insensitive, as Spark reads
    them: two spellings of one key are refused."""
    fmt = check_format(fmt, formats=TABLE_FORMATS)
    allowed = _BY_LOWER_KEY[fmt]
    for lowered, key in spellings(options, prefix=prefix).items():
        value = options[key]
        if lowered in SOURCE_KEYS:
            raise OptionRefused(
                f"The option '{key}' is not allowed here: the table's {lowered} is given once, "
                "as the table's own format and path.",
                details=_field(key, prefix),
            )
        check_key(key, prefix=prefix)
        check = allowed.get(lowered)
        if check is None:
            takes = ", ".join(sorted(ALLOWED[fmt], key=str.lower)) or "no options"
            raise CoreError(
                f"The option '{key}' does not apply to {fmt} tables; {fmt} tables take: {takes}.",
                details=_field(key, prefix),
            )
        if not isinstance(value, str):
            raise CoreError(
                f"The value of option '{key}' must be a string.", details=_field(key, prefix)
            )
        problem = check(value)
        if problem is not None:
            raise CoreError(
                f"The value of option '{key}' ('{value[:60]}') is not allowed: it {problem}.",
                details=_field(key, prefix),
            )
    return dict(options)
