"""The results store: each finished statement's rows as one Arrow IPC file.

Files live under ``settings.RESULTS_DIR/<job id>.arrow`` and are shared by the web process
(which reads pages and serves downloads) and the workers (which write query results).
Small results are written atomically (temp file + rename): a reader sees no file or a whole
one. Large results (``write_batches``) are written while the job runs, a record batch at a
time, to ``<job id>.arrow-partial``, beside ``<job id>.arrow-progress`` (the bytes and rows
already readable, replaced after each batch): ``ResultTail`` reads what exists and follows
the writer; at the end the file (its footer written) is renamed to ``<job id>.arrow``
(``results.partial``, docs/adr/0020-results-that-stream.md).
A file older than ``TESSERA_RESULT_TTL_SECONDS`` has expired: reading it answers NOT_FOUND.

Values leave the store JSON-native: decimals as strings, dates and times as ISO-8601,
binary as base64, lists/maps/structs as JSON arrays/objects, NULL as null.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import math
import os
import re
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.ipc as ipc  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
from django.conf import settings
from django.http import FileResponse, StreamingHttpResponse
from django.utils import timezone
from django.utils.http import content_disposition_header

from core.errors import CoreError, NotFound
from results.far_values import far_values

Converter = Callable[[Any], Any]
FORMATS = ("csv", "json", "parquet")

# Spark SQL type names of command results (write_rows) and the Arrow types that carry them.
_ARROW_TYPES: dict[str, pa.DataType] = {
    "STRING": pa.string(),
    "BOOLEAN": pa.bool_(),
    "TINYINT": pa.int8(),
    "SMALLINT": pa.int16(),
    "INT": pa.int32(),
    "BIGINT": pa.int64(),
    "FLOAT": pa.float32(),
    "DOUBLE": pa.float64(),
}


def results_dir() -> Path:
    return Path(settings.RESULTS_DIR)


def result_path(job_id: Any) -> Path:
    return results_dir() / f"{job_id}.arrow"


def partial_path(job_id: Any) -> Path:
    """The result file of a job still writing it (an Arrow IPC file without its footer)."""
    return results_dir() / f"{job_id}.arrow-partial"


def progress_path(job_id: Any) -> Path:
    """What of ``partial_path`` is readable: ``{"bytes", "rows", "batches"}``."""
    return results_dir() / f"{job_id}.arrow-progress"


# The magic bytes (and padding) an Arrow IPC file starts with; the stream format follows.
FILE_MAGIC = 8


# --- writing ---------------------------------------------------------------------------------


def result_meta(columns: Sequence[dict[str, Any]], rows: int, truncated: bool) -> dict[str, Any]:
    return {
        "columns": [
            {"name": c["name"], "data_type": c["data_type"]}
            | ({"nullable": bool(c["nullable"])} if "nullable" in c else {})
            | ({"served_as": c["served_as"]} if c.get("served_as") else {})
            for c in columns
        ],
        "row_count": rows,
        "truncated": truncated,
    }


def write_result(
    job_id: Any, table: pa.Table, *, columns: list[dict[str, Any]], truncated: bool
) -> dict[str, Any]:
    """Store ``table`` as the result of ``job_id``; return the ``Job.result`` dict.

    ``columns`` are ``[{"name", "data_type", "nullable"}]`` with Spark SQL type strings, one
    per column of ``table`` (``nullable`` kept when given, as for query results; pages say
    true when absent). The file is written to a temporary name and renamed into place.
    """
    if len(columns) != table.num_columns:
        raise ValueError(
            f"write_result: {len(columns)} column descriptions for {table.num_columns} columns"
        )
    folder = results_dir()
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{job_id}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as raw, ipc.new_file(raw, table.schema) as writer:
            writer.write_table(table, max_chunksize=10_000)
        os.replace(tmp, result_path(job_id))
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return result_meta(columns, table.num_rows, truncated)


def _column_array(values: list[Any], data_type: str) -> pa.Array:
    arrow_type = _ARROW_TYPES.get(data_type.upper())
    if arrow_type is not None:
        try:
            return pa.array(values, type=arrow_type)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            pass
    return pa.array([None if v is None else str(v) for v in values], type=pa.string())


def write_rows(job_id: Any, columns: list[dict[str, Any]], rows: list[list[Any]]) -> dict[str, Any]:
    """Store a small command result (SHOW, DESCRIBE, DDL messages) given as Python rows."""
    names = [c["name"] for c in columns]
    arrays = [
        _column_array([row[i] for row in rows], str(c.get("data_type", "STRING")))
        for i, c in enumerate(columns)
    ]
    schema = pa.schema(
        [pa.field(name, array.type) for name, array in zip(names, arrays, strict=True)]
    )
    table = pa.Table.from_arrays(arrays, schema=schema)
    described = [
        {"name": c["name"], "data_type": str(c.get("data_type", "STRING"))} for c in columns
    ]
    return write_result(job_id, table, columns=described, truncated=False)


def delete_result(job_id: Any) -> bool:
    """Remove a job's result file (and one still being written); True if there was one."""
    partial_path(job_id).unlink(missing_ok=True)
    progress_path(job_id).unlink(missing_ok=True)
    try:
        result_path(job_id).unlink()
    except FileNotFoundError:
        return False
    return True


def expire_results(older_than: datetime | timedelta | None = None) -> int:
    """Delete result files last written before ``older_than`` (a time, or an age); by default
    those older than ``TESSERA_RESULT_TTL_SECONDS``. Returns how many were deleted."""
    if older_than is None:
        older_than = timedelta(seconds=settings.TESSERA_RESULT_TTL_SECONDS)
    cutoff = timezone.now() - older_than if isinstance(older_than, timedelta) else older_than
    limit = cutoff.timestamp()
    removed = 0
    folder = results_dir()
    if not folder.is_dir():
        return 0
    # Partial files too: a worker that died while writing one left it behind.
    for path in [*folder.glob("*.arrow"), *folder.glob("*.arrow-p*")]:
        try:
            if path.stat().st_mtime < limit:
                path.unlink()
                removed += 1
        except FileNotFoundError:
            continue
    return removed


# --- reading ---------------------------------------------------------------------------------


def _expired(job_id: Any) -> NotFound:
    return NotFound(f"The result of job {job_id} has expired; run the statement again.")


def open_result(job_id: Any) -> ipc.RecordBatchFileReader:
    """Open a job's result file (memory-mapped); NOT_FOUND once it has expired."""
    path = result_path(job_id)
    try:
        age = time.time() - path.stat().st_mtime
    except FileNotFoundError:
        raise _expired(job_id) from None
    if age > settings.TESSERA_RESULT_TTL_SECONDS:
        delete_result(job_id)
        raise _expired(job_id)
    try:
        return ipc.open_file(pa.memory_map(str(path)))
    except FileNotFoundError:  # expired between the stat and the open
        raise _expired(job_id) from None


def _iso_duration(value: timedelta) -> str:
    sign = "-" if value < timedelta(0) else ""
    value = abs(value)
    days, seconds, micros = value.days, value.seconds, value.microseconds
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{sign}P{days}DT{hours}H{minutes}M{secs}"
    if micros:
        text += f".{micros:06d}".rstrip("0")
    return text + "S"


def _float(value: float) -> float | str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def _decimal(value: Decimal) -> str:
    return format(value, "f")


def _binary(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")


def _temporal(value: date | datetime | str | Any) -> str:
    return value if isinstance(value, str) else str(value.isoformat())  # str: results.far_values


def _month_day_nano(value: Any) -> str:
    months, days, nanos = value.months, value.days, value.nanoseconds
    return f"P{months}M{days}DT{nanos / 1e9:g}S"


def _key_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _converter(arrow_type: pa.DataType) -> Converter:
    """A function turning a Python value of ``arrow_type`` (as_py) into a JSON-native value."""
    t = pa.types
    if t.is_floating(arrow_type):
        return _float
    if t.is_decimal(arrow_type):
        return _decimal
    if (
        t.is_binary(arrow_type)
        or t.is_large_binary(arrow_type)
        or t.is_fixed_size_binary(arrow_type)
    ):
        return _binary
    if t.is_date(arrow_type) or t.is_timestamp(arrow_type) or t.is_time(arrow_type):
        return _temporal
    if t.is_duration(arrow_type):
        return _iso_duration
    if t.is_interval(arrow_type):
        return _month_day_nano
    if t.is_map(arrow_type):
        key, item = _converter(arrow_type.key_type), _converter(arrow_type.item_type)
        return lambda pairs: {
            _key_text(key(k) if k is not None else None): (item(v) if v is not None else None)
            for k, v in pairs
        }
    if t.is_list(arrow_type) or t.is_large_list(arrow_type) or t.is_fixed_size_list(arrow_type):
        element = _converter(arrow_type.value_type)
        return lambda items: [element(v) if v is not None else None for v in items]
    if t.is_struct(arrow_type):
        fields = [
            (arrow_type.field(i).name, _converter(arrow_type.field(i).type))
            for i in range(arrow_type.num_fields)
        ]
        return lambda obj: {
            name: (convert(obj[name]) if obj[name] is not None else None)
            for name, convert in fields
        }
    if t.is_dictionary(arrow_type):
        return _converter(arrow_type.value_type)
    if (
        t.is_boolean(arrow_type)
        or t.is_integer(arrow_type)
        or t.is_string(arrow_type)
        or t.is_large_string(arrow_type)
        or t.is_null(arrow_type)
    ):
        return lambda value: value
    return str


def _microseconds(column: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
    """Python datetimes hold microseconds: cast nanosecond times down before as_py."""
    arrow_type = column.type
    if pa.types.is_timestamp(arrow_type) and arrow_type.unit == "ns":
        return column.cast(pa.timestamp("us", tz=arrow_type.tz), safe=False)
    if pa.types.is_duration(arrow_type) and arrow_type.unit == "ns":
        return column.cast(pa.duration("us"), safe=False)
    if pa.types.is_time64(arrow_type) and arrow_type.unit == "ns":
        return column.cast(pa.time64("us"), safe=False)
    return column


def _python_values(column: pa.ChunkedArray | pa.Array) -> list[Any]:
    """The column's values as Python objects; its dates and timestamps as text where Python
    cannot hold one of them (``results.far_values``)."""
    try:
        values: list[Any] = _microseconds(column).to_pylist()
    except (OverflowError, ValueError):
        values = far_values(_microseconds(column))
    return values


def _json_values(column: pa.ChunkedArray | pa.Array) -> list[Any]:
    convert = _converter(column.type)
    return [None if v is None else convert(v) for v in _python_values(column)]


def _json_columns(table: pa.Table | pa.RecordBatch) -> list[list[Any]]:
    """The table's columns as lists of JSON-native values."""
    return [_json_values(column) for column in table.columns]


def _rows(table: pa.Table | pa.RecordBatch) -> list[list[Any]]:
    columns = _json_columns(table)
    return [list(row) for row in zip(*columns, strict=True)] if columns else []


def json_rows(table: pa.Table | pa.RecordBatch) -> list[list[Any]]:
    """The rows of ``table`` as lists of JSON-native values."""
    return _rows(table)


def json_column(column: pa.ChunkedArray | pa.Array) -> list[Any]:
    """One column as a list of JSON-native values."""
    return _json_values(column)


def read_page(job_id: Any, offset: int, limit: int) -> tuple[list[list[Any]], int | None]:
    """Rows ``offset .. offset+limit`` of a job's result, JSON-native; and the next offset
    (None after the last row)."""
    if offset < 0 or limit < 1:
        raise CoreError("A result page needs offset >= 0 and limit >= 1.")
    reader = open_result(job_id)
    table = reader.read_all()
    page = table.slice(offset, limit)
    following = offset + page.num_rows
    return _rows(page), following if following < table.num_rows else None


def record_batches(reader: ipc.RecordBatchFileReader) -> Iterator[pa.RecordBatch]:
    for index in range(reader.num_record_batches):
        yield reader.get_batch(index)


def _column_names(schema: pa.Schema) -> list[str]:
    """Column names, made unique for JSON objects (``a``, ``a_2``) as SELECT a, a allows."""
    seen: dict[str, int] = {}
    names: list[str] = []
    for name in schema.names:
        count = seen.get(name, 0) + 1
        seen[name] = count
        names.append(name if count == 1 else f"{name}_{count}")
    return names


# OWASP "CSV injection": a spreadsheet reads a cell starting with one of these as a formula
# (=HYPERLINK(…), +cmd|…, @SUM(…)); a leading single quote makes it text, and shows nothing.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _is_numeric(arrow_type: pa.DataType) -> bool:
    t = pa.types
    return bool(t.is_integer(arrow_type) or t.is_floating(arrow_type) or t.is_decimal(arrow_type))


def neutralise(text: str) -> str:
    """A text cell as a spreadsheet must show it: never a formula."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def _csv_cell(value: Any, numeric: bool = False) -> str:
    """One CSV cell. Cells of numeric columns are numbers (``-5``, ``-1.5E-7``, ``NaN``)
    and stay as they are; every other cell that could start a formula is neutralised, so
    ``-5`` in a string column is written ``'-5``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    nested = isinstance(value, list | dict)
    text = json.dumps(value, ensure_ascii=False) if nested else str(value)
    return text if numeric else neutralise(text)


def _csv_stream(schema: pa.Schema, batches: Iterable[pa.RecordBatch]) -> Iterator[bytes]:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow([neutralise(name) for name in schema.names])
    numeric = [_is_numeric(field.type) for field in schema]
    for batch in batches:
        writer.writerows(
            [_csv_cell(v, numeric[i]) for i, v in enumerate(row)] for row in _rows(batch)
        )
        yield buffer.getvalue().encode("utf-8")
        buffer.seek(0)
        buffer.truncate()
    if buffer.getvalue():  # the header of an empty result
        yield buffer.getvalue().encode("utf-8")


def _json_lines_stream(schema: pa.Schema, batches: Iterable[pa.RecordBatch]) -> Iterator[bytes]:
    names = _column_names(schema)
    for batch in batches:
        lines = [
            json.dumps(dict(zip(names, row, strict=True)), ensure_ascii=False) + "\n"
            for row in _rows(batch)
        ]
        yield "".join(lines).encode("utf-8")


# What a download's name keeps of the name asked for: letters, digits and a few marks; any
# other run of characters (quotes, slashes, control characters…) becomes one "_".
_UNSAFE_IN_FILENAME = re.compile(r"[^\w .,()+-]+")
FILENAME_STEM_MAX = 100


def download_filename(job_id: Any, fmt: str, name: str | None = None) -> str:
    """``<name>.<fmt>`` for a download asked to be named ``name`` (e.g. the editor tab's
    title), made safe for a file name; ``job-<id>.<fmt>`` without one (or with nothing left)."""
    stem = _UNSAFE_IN_FILENAME.sub("_", name or "").strip(" ._")[:FILENAME_STEM_MAX]
    stem = stem.strip(" ._")
    return f"{stem or f'job-{job_id}'}.{fmt}"


def download_response(
    job_id: Any, fmt: str, *, table: pa.Table | None = None, name: str | None = None
) -> StreamingHttpResponse | FileResponse:
    """A job's whole result as a download: ``csv`` (header row; nested values as JSON),
    ``json`` (JSON lines, one object per row) or ``parquet``; ``table``: those rows instead
    (the result sorted and filtered as shown); named after ``name`` (download_filename).
    NOT_FOUND once expired. (``arrow``: ``results.arrow``.)"""
    if fmt not in FORMATS:
        raise NotFound(f"Unknown result format '{fmt}'. Available: {', '.join(FORMATS)}.")
    reader = open_result(job_id) if table is None else None  # raises before the response starts
    filename = download_filename(job_id, fmt, name)
    if fmt == "parquet":
        spool = tempfile.TemporaryFile(dir=results_dir())  # noqa: SIM115  (FileResponse closes it)
        pq.write_table(reader.read_all() if reader is not None else table, spool)
        spool.seek(0)
        return FileResponse(
            spool,
            as_attachment=True,
            filename=filename,
            content_type="application/vnd.apache.parquet",
        )
    if reader is not None:
        schema, batches = reader.schema, record_batches(reader)
    else:
        assert table is not None
        schema, batches = table.schema, iter(table.to_batches(max_chunksize=10_000))
    if fmt == "csv":
        stream, content_type = _csv_stream(schema, batches), "text/csv; charset=utf-8"
    else:
        stream = _json_lines_stream(schema, batches)
        content_type = "application/x-ndjson; charset=utf-8"
    response = StreamingHttpResponse(stream, content_type=content_type)
    response["Content-Disposition"] = content_disposition_header(True, filename) or ""
    return response
