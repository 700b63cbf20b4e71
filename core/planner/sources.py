"""Where a table's data lives: its file format, path and remaining options.

Used when a table is created (``CREATE TABLE … USING … OPTIONS … LOCATION``) and when it
is read or written (the relation's stored options), with the same rules both times: the
format is a file format, the path passes ``core.locations`` (Hadoop's reading, the storage
roots) and every other option passes the format's allow-list (``core.options``). What the
allow-list or the storage boundary refuses is ``FORBIDDEN_SQL`` here; a value of the wrong
shape stays a ``VALIDATION_ERROR``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from core import options as table_options
from core.errors import CoreError
from core.locations import LocationRefused
from core.planner import guard
from core.planner.errors import ForbiddenSql, UnsupportedStatement
from core.planner.model import Relation, UploadLookup, UploadRef

# The connector of a temporary table over data the session's user uploaded.
UPLOAD_CONNECTOR = "upload"
UPLOAD_OPTION = "upload"
UPLOAD_NOT_PERMANENT = (
    "Only a temporary table can read an upload ('connector' = 'upload'): an upload lives only "
    "as long as its session. To keep the data, create the temporary table and copy it with "
    "CREATE TABLE … AS SELECT or INSERT INTO … SELECT."
)

# The connector of a temporary table over a live DataFrame of a running pipeline job
# (``t_env.from_data_frame`` on the worker): its options name the hidden Spark temporary
# view in the pipeline's SparkSession and the pipeline job; nothing else may use it.
DATAFRAME_CONNECTOR = "dataframe"
DATAFRAME_VIEW = "view"
DATAFRAME_JOB = "job"
DATAFRAME_VIEW_PREFIX = "__tessera_df_"
DATAFRAME_VIEW_NAME = re.compile(r"^__tessera_df_[0-9a-f]{32}$")
DATAFRAME_ONLY_IN_PIPELINES = (
    "A table with 'connector' = 'dataframe' reads a live DataFrame of a running pipeline "
    "job; only that pipeline's own t_env.from_data_frame() / create_temporary_view() "
    "declares and reads it. Upload the data instead (from_pandas, from_arrow, "
    "POST /sessions/{id}/uploads)."
)


# Spark's rate source as a demo stream (docs/streaming.md): a temporary table
# ``WITH ('connector' = 'rate', 'rows-per-second' = '100')`` of the columns Spark's source
# gives (``timestamp``, ``value``); read only in streaming mode. Option → Spark's name, range.
RATE_CONNECTOR = "rate"
RATE_COLUMNS = (("timestamp", "TIMESTAMP"), ("value", "BIGINT"))
RATE_OPTIONS: dict[str, tuple[str, int, int, int]] = {
    "rows-per-second": ("rowsPerSecond", 1, 1_000_000, 1),
    "num-partitions": ("numPartitions", 1, 64, 1),
}


class DataFrameRefused(ForbiddenSql):
    """A ``'connector' = 'dataframe'`` table declared or read outside its own pipeline."""


@dataclass(frozen=True)
class TableSource:
    """A table's data: ``path`` is "" for a managed table until it has a location."""

    format: str
    path: str
    options: Mapping[str, str] = field(default_factory=dict)
    external: bool = False


@contextmanager
def _as_forbidden(prefix: str = "") -> Iterator[None]:
    """Refusals of the storage boundary become FORBIDDEN_SQL (the SQL guard's code);
    ``prefix`` names the stored table they were found in."""
    try:
        yield
    except (table_options.OptionRefused, LocationRefused) as exc:
        raise ForbiddenSql(prefix + exc.message, details=exc.details) from None
    except CoreError as exc:
        if prefix:
            exc.message = prefix + exc.message
            exc.args = (exc.message,)
        raise


def _names_connector(using: str | None, options: Mapping[str, str], connector: str) -> bool:
    values = [using or ""] + [v for k, v in options.items() if k.lower() in ("connector", "format")]
    return any(str(value).strip().lower() == connector for value in values)


def _names_upload(using: str | None, options: Mapping[str, str]) -> bool:
    return _names_connector(using, options, UPLOAD_CONNECTOR)


def names_dataframe(using: str | None, options: Mapping[str, str]) -> bool:
    """Whether a declaration names the ``dataframe`` connector (USING or an option)."""
    return _names_connector(using, options, DATAFRAME_CONNECTOR)


def names_delta(options: Mapping[str, str], using: str | None = None) -> bool:
    """Whether a declaration or a stored table names Delta Lake (USING or an option)."""
    return _names_connector(using, options, table_options.DELTA)


def is_managed_delta(table: Relation) -> bool:
    """A managed Delta table (``USING delta`` without LOCATION): Tessera's jobs write it."""
    return (
        table.kind == "table"
        and not table.temporary
        and bool(table.location)
        and not any(str(k).lower() in ("path", "connector") for k in table.options)
        and names_delta(table.options)
    )


def refuse_delta_writes(
    options: Mapping[str, str], using: str | None = None, what: str = "This statement"
) -> None:
    """Nothing writes an external Delta table (INSERT, OVERWRITE, CTAS, streams)."""
    if names_delta(options, using):
        raise UnsupportedStatement(
            f"{what} cannot write Delta. {table_options.DELTA_WRITES_REFUSED}"
        )


def dataframe_source(
    using: str | None,
    options: Mapping[str, str],
    location: str | None,
    pipeline_job: str | None,
) -> dict[str, str] | None:
    """A temporary table over a live DataFrame (``'connector' = 'dataframe', 'view' =
    '__tessera_df_<hex>', 'job' = '<pipeline job id>'``): the options to store; None when
    the table names no DataFrame. Only the statement of the running pipeline job the
    options name may declare one (``pipeline_job``, from the plan context); the view name
    must be a generated one, and no path, LOCATION or other option goes with it."""
    if not names_dataframe(using, options):
        return None
    if pipeline_job is None:
        raise DataFrameRefused(DATAFRAME_ONLY_IN_PIPELINES)
    keys = {k.lower(): k for k in options}
    rest = set(keys) - {"connector", "format", DATAFRAME_VIEW, DATAFRAME_JOB}
    if location is not None or rest:
        raise DataFrameRefused(
            "A table over a DataFrame takes only the options 'view' and 'job'; drop "
            f"{'LOCATION' if location is not None else repr(keys[min(rest)])}."
        )
    view = str(options.get(keys.get(DATAFRAME_VIEW, ""), "")).strip()
    job = str(options.get(keys.get(DATAFRAME_JOB, ""), "")).strip()
    if not DATAFRAME_VIEW_NAME.match(view):
        raise DataFrameRefused(
            "A table over a DataFrame names the hidden view t_env.from_data_frame() made "
            f"('{DATAFRAME_VIEW_PREFIX}' and 32 hex digits), not '{view[:80]}'.",
            details={"view": view[:80]},
        )
    if job != pipeline_job:
        raise DataFrameRefused(
            f"A table over a DataFrame can only name the pipeline job that declares it "
            f"({pipeline_job}), not '{job[:80]}'.",
            details={"job": job[:80]},
        )
    return {"connector": DATAFRAME_CONNECTOR, DATAFRAME_VIEW: view, DATAFRAME_JOB: job}


def names_rate(using: str | None, options: Mapping[str, str]) -> bool:
    """Whether a declaration names the ``rate`` connector (USING or an option)."""
    return _names_connector(using, options, RATE_CONNECTOR)


def rate_source(
    using: str | None, options: Mapping[str, str], location: str | None
) -> dict[str, str] | None:
    """A temporary table over Spark's rate source: the options to store (every one given,
    canonical), None when the table names no rate source."""
    if not names_rate(using, options):
        return None
    stored = {"connector": RATE_CONNECTOR}
    if location is not None:
        raise CoreError("A table over the rate connector reads no files: drop LOCATION.")
    for key, value in options.items():
        lowered = key.lower()
        if lowered in ("connector", "format"):
            continue
        known = RATE_OPTIONS.get(lowered)
        if known is None:
            raise CoreError(
                f"A table over the rate connector takes only the options "
                f"{', '.join(repr(k) for k in RATE_OPTIONS)}; drop '{key}'.",
                details={"key": key},
            )
        _, low, high, _ = known
        text = str(value).strip()
        if not text.isdigit() or not low <= int(text) <= high:
            raise CoreError(
                f"The option '{lowered}' of the rate connector must be a whole number from "
                f"{low:,} to {high:,}, not '{text[:40]}'.",
                details={"key": key},
            )
        stored[lowered] = str(int(text))
    return stored


def _rate_options(options: Mapping[str, str]) -> dict[str, str]:
    """Spark's rate-source options of a stored rate table (checked again: defaults for what
    is missing or out of range)."""
    lowered = {str(k).lower(): str(v).strip() for k, v in options.items()}
    result: dict[str, str] = {}
    for key, (spark_name, low, high, default) in RATE_OPTIONS.items():
        text = lowered.get(key, "")
        value = int(text) if text.isdigit() and low <= int(text) <= high else default
        result[spark_name] = str(value)
    return result


def upload_source(
    using: str | None,
    options: Mapping[str, str],
    location: str | None,
    uploads: UploadLookup | None,
) -> tuple[dict[str, str], UploadRef] | None:
    """A temporary table over an upload (``'connector' = 'upload', 'upload' = '<id>'``): the
    options to store and the upload; None when the table names no upload. The upload must
    be one of the session's own; no path, LOCATION or reader option goes with it."""
    if not _names_upload(using, options):
        return None
    source, rest = table_options.split_source(
        {k: v for k, v in options.items() if k.lower() != UPLOAD_OPTION}
    )
    given = [v for k, v in options.items() if k.lower() == UPLOAD_OPTION]
    if location is not None or "path" in source:
        raise CoreError(
            "A table over an upload reads the upload's own files: drop LOCATION and 'path'."
        )
    extra = [*rest, *(k for k in source if k in table_options.TESSERA_KEYS)]
    if extra:
        raise CoreError(
            f"A table over an upload takes only the option 'upload'; drop '{extra[0]}'."
        )
    if len(given) != 1 or not str(given[0]).strip():
        raise CoreError(
            "A table with 'connector' = 'upload' needs the option 'upload' = '<upload id>' "
            "(the id POST /sessions/{id}/uploads answered)."
        )
    found = uploads(str(given[0])) if uploads is not None else None
    if found is None:
        raise CoreError(
            f"Upload '{given[0]}' does not exist in this session; a table can read only its own "
            "session's uploads.",
            details={"upload": str(given[0])},
        )
    return {"connector": UPLOAD_CONNECTOR, UPLOAD_OPTION: found.id}, found


def _check_keys(rest: Mapping[str, str]) -> None:
    """The format-independent refusals first (``fs.*``, ``spark.*``, ``paths``, …)."""
    for key in rest:
        table_options.check_key(key)


def declared_source(
    using: str | None,
    options: Mapping[str, str],
    location: str | None,
    roots: Sequence[str],
    *,
    writes: bool = False,
) -> dict[str, str]:
    """The options to store for ``CREATE TABLE … USING using OPTIONS options LOCATION``
    (``writes``: of a CTAS, which writes the table's files: Delta only as a managed table).

    USING sets ``format`` (managed table) or ``connector`` (external: a path is given);
    ``path`` is normalised and must lie under the storage roots; every other option must be
    one the format takes.
    """
    if _names_upload(using, options):
        raise CoreError(UPLOAD_NOT_PERMANENT)
    if names_rate(using, options):
        raise CoreError(
            "Only a temporary table can read the rate connector (a demo stream): CREATE "
            "TEMPORARY TABLE r (`timestamp` TIMESTAMP, `value` BIGINT) WITH ('connector' = "
            "'rate', 'rows-per-second' = '10')."
        )
    if names_dataframe(using, options):
        raise DataFrameRefused(DATAFRAME_ONLY_IN_PIPELINES)
    external = location is not None or any(str(k).lower() in ("path", "connector") for k in options)
    if writes and external and names_delta(options, using):
        raise UnsupportedStatement(
            f"CREATE TABLE … AS cannot write Delta. {table_options.DELTA_WRITES_REFUSED}"
        )
    with _as_forbidden():
        return _declared_source(using, options, location, roots)


def _declared_source(
    using: str | None,
    options: Mapping[str, str],
    location: str | None,
    roots: Sequence[str],
) -> dict[str, str]:
    source, rest = table_options.split_source(options)
    path = source.get("path")
    if location is not None and path is not None:
        raise CoreError("Give the table path once: either LOCATION or the 'path' option.")
    if location is not None:
        path = location
    connector = source.get("connector")
    fmt = source.get("format")
    # The guard first: a non-file source is refused whatever else is wrong.
    if connector is not None:
        connector = guard.check_file_format(connector, "The connector")
    if fmt is not None:
        fmt = guard.check_file_format(fmt, "The table format")
    if using is not None:
        using_fmt = guard.check_file_format(using, "USING")
        for value in (connector, fmt):
            if value is not None and value.strip().lower() != using_fmt:
                raise CoreError(
                    f"USING {using} contradicts the option value '{value}'; give the format once."
                )
        fmt = using_fmt
    _check_keys(rest)
    if path is None and connector is None:
        checked = table_options.check_options(fmt or "parquet", rest)
        checked = {**table_options.tessera_options(source, managed=True), **checked}
        if fmt is None:
            return checked
        return {"format": fmt, **checked}
    table_options.tessera_options(source, managed=False)  # refuses write.mode
    if path is None:
        raise CoreError("An external table needs a path: add LOCATION '…' or a 'path' option.")
    source_fmt = connector if connector is not None else fmt
    if source_fmt is None:
        raise CoreError(
            "An external table needs a format: add USING "
            f"{'|'.join(guard.FILE_FORMATS)} or a 'connector' option."
        )
    if connector is not None and fmt is not None and fmt != connector:
        raise CoreError(
            f"The options 'connector' ('{connector}') and 'format' ('{fmt}') contradict each other."
        )
    checked_path = guard.check_storage_path(path, roots)
    checked = table_options.check_options(source_fmt, rest)
    return {"connector": source_fmt, "path": checked_path, **checked}


def written_source(table: Relation, roots: Sequence[str]) -> TableSource:
    """``stored_source`` of a table a statement writes (INSERT [OVERWRITE], a stream's
    sink): an external Delta table is never written, whatever the user's rights on it; a
    managed one is (ADR 0019)."""
    shown = table.identifier.quoted()
    if names_delta(table.options) and not is_managed_delta(table):
        raise UnsupportedStatement(
            f"Table {shown} cannot be written. {table_options.DELTA_WRITES_REFUSED}",
            details={"identifier": list(table.identifier.parts)},
        )
    return stored_source(table.options, table.location, roots, shown)


def stored_source(
    options: Mapping[str, str],
    location: str,
    roots: Sequence[str],
    table: str = "",
    uploads: UploadLookup | None = None,
    pipeline_job: str | None = None,
) -> TableSource:
    """How to read or write a stored table (``table``: its quoted name, for messages).
    Checked again at every use: the row may predate today's rules or come from the REST
    API; managed tables read their warehouse location, tables over an upload its parquet
    file (when the upload is still the session's), tables over a DataFrame the pipeline's
    hidden view (only in a statement of that pipeline, ``pipeline_job``)."""
    prefix = f"Table {table} cannot be used: " if table else ""
    if any(
        k.lower() == "connector" and str(v).strip().lower() == DATAFRAME_CONNECTOR
        for k, v in options.items()
    ):
        lowered = {str(k).lower(): str(v) for k, v in options.items()}
        job = lowered.get(DATAFRAME_JOB, "")
        view = lowered.get(DATAFRAME_VIEW, "")
        if pipeline_job is None or job != pipeline_job or not DATAFRAME_VIEW_NAME.match(view):
            raise DataFrameRefused(
                f"{prefix}it reads a live DataFrame of the pipeline job {job or '?'}, which "
                "only that pipeline's own statements can read.",
                details={"job": job},
            )
        return TableSource(
            DATAFRAME_CONNECTOR,
            "",
            {DATAFRAME_VIEW: view, DATAFRAME_JOB: job},
            external=True,
        )
    if any(
        k.lower() == "connector" and str(v).strip().lower() == RATE_CONNECTOR
        for k, v in options.items()
    ):
        return TableSource(RATE_CONNECTOR, "", _rate_options(options), external=True)
    if any(
        k.lower() == "connector" and str(v).strip().lower() == UPLOAD_CONNECTOR
        for k, v in options.items()
    ):
        given = next((str(v) for k, v in options.items() if k.lower() == UPLOAD_OPTION), "")
        found = uploads(given) if uploads is not None and given else None
        if found is None:
            raise CoreError(
                f"{prefix}its upload '{given}' no longer exists in this session (it was deleted).",
                details={"upload": given},
            )
        return TableSource("parquet", found.path, {}, external=True)
    with _as_forbidden(prefix):
        source, rest = table_options.split_source(options)
        _check_keys(rest)
        connector = source.get("connector")
        path = source.get("path")
        if connector is not None or path is not None:
            fmt = guard.check_file_format(
                connector if connector is not None else source.get("format", ""),
                "The table format",
            )
            checked_path = guard.check_storage_path(path or "", roots)
            checked = table_options.check_options(fmt, rest)
            return TableSource(fmt, checked_path, checked, external=True)
        fmt = guard.check_file_format(
            source.get("format") or "parquet", "The table format", table_options.MANAGED_FORMATS
        )
        return TableSource(fmt, location, table_options.check_options(fmt, rest))
