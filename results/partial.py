"""A result still being written: ``ResultWriter`` (the worker) and ``ResultTail`` (readers).

The worker writes ``<job id>.arrow-partial`` with ``ipc.new_file``, a record batch at a time,
flushed, then replaces ``<job id>.arrow-progress`` (how many bytes of it are readable, the
rows, the batches, the columns) and announces ``"<job id> rows"`` (``jobs.notify.ROWS``).
An Arrow IPC file is magic bytes, then the stream format, then a footer: up to the progress
mark the partial file is a readable stream. At the end the footer is written and the file
renamed to ``<job id>.arrow``, the finished result every other reader reads
(docs/adr/0020-results-that-stream.md).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.ipc as ipc  # type: ignore[import-untyped]

from results.store import (
    FILE_MAGIC,
    partial_path,
    progress_path,
    result_meta,
    result_path,
    results_dir,
)


class ResultWriter:
    """Writes a job's result a record batch at a time, readable as it grows (``ResultTail``):
    each batch is flushed, then the progress file says how far the file may be read and
    readers are told (``jobs.notify.ROWS``). ``finish`` renames the whole file into place;
    ``abort`` removes it."""

    def __init__(self, job_id: Any, schema: pa.Schema, columns: list[dict[str, Any]]) -> None:
        self.job_id = job_id
        self.columns = result_meta(columns, 0, False)["columns"]
        self.rows = 0
        self.batches = 0
        folder = results_dir()
        folder.mkdir(parents=True, exist_ok=True)
        self._raw = open(partial_path(job_id), "wb")  # noqa: SIM115  (closed by finish/abort)
        try:
            self._writer = ipc.new_file(self._raw, schema)
            self._commit()
        except BaseException:
            self.abort()
            raise

    def _commit(self) -> None:
        self._raw.flush()
        mark = {
            "bytes": self._raw.tell(),
            "rows": self.rows,
            "batches": self.batches,
            "columns": self.columns,
        }
        fd, tmp = tempfile.mkstemp(prefix=f".{self.job_id}.", suffix=".tmp", dir=results_dir())
        with os.fdopen(fd, "w") as out:
            json.dump(mark, out)
        os.replace(tmp, progress_path(self.job_id))
        from jobs import notify  # the store is read in processes that never write

        notify.hub().publish(self.job_id, notify.ROWS)

    def write(self, batch: pa.RecordBatch) -> None:
        self._writer.write_batch(batch)
        self.rows += batch.num_rows
        self.batches += 1
        self._commit()

    def finish(self) -> int:
        """The footer written, the file renamed to the job's result; returns its rows."""
        self._writer.close()
        self._raw.close()
        os.replace(partial_path(self.job_id), result_path(self.job_id))
        progress_path(self.job_id).unlink(missing_ok=True)
        return self.rows

    def abort(self) -> None:
        with contextlib.suppress(Exception):
            self._raw.close()
        partial_path(self.job_id).unlink(missing_ok=True)
        progress_path(self.job_id).unlink(missing_ok=True)


def write_batches(
    job_id: Any,
    schema: pa.Schema,
    batches: Iterable[pa.RecordBatch],
    *,
    columns: list[dict[str, Any]],
    limit: int,
) -> dict[str, Any]:
    """Store the first ``limit`` rows of ``batches`` (each of ``schema``) as the result of
    ``job_id``, one batch in memory at a time, each readable once written (``ResultWriter``);
    ``truncated`` when a row beyond ``limit`` came. Return the ``Job.result`` dict."""
    if len(columns) != len(schema):
        raise ValueError(f"write_batches: {len(columns)} column descriptions for {len(schema)}")
    writer = ResultWriter(job_id, schema, columns)
    rows, truncated = 0, False
    try:
        for batch in batches:
            if rows + batch.num_rows > limit:
                truncated = True
                batch = batch.slice(0, limit - rows)
            if batch.num_rows:
                writer.write(batch)
                rows += batch.num_rows
            if truncated:
                break
        writer.finish()
    except BaseException:
        writer.abort()
        raise
    return result_meta(columns, rows, truncated)


def read_progress(job_id: Any) -> dict[str, Any] | None:
    """What of a result still being written is readable (``bytes``, ``rows``, ``batches``)
    and its ``columns``; None when none is being written."""
    try:
        mark = json.loads(progress_path(job_id).read_text())
    except (FileNotFoundError, ValueError):
        return None
    counts = {key: int(mark.get(key, 0)) for key in ("bytes", "rows", "batches")}
    return counts | {"columns": list(mark.get("columns") or [])}


class ResultTail:
    """A job's result read as it is written: ``batches()`` yields the record batches readable
    now (of the partial file, up to its progress mark; of the whole file, to its end) and
    stops; call it again for those written since. ``complete`` once the whole file has been
    read; ``gone`` when the partial file was removed (the job failed or was canceled)."""

    def __init__(self, job_id: Any) -> None:
        self.job_id = job_id
        self.schema: pa.Schema | None = None
        self.rows = 0
        self.complete = False
        self.gone = False
        self._file: Any = None
        self._whole = False

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> ResultTail:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _open(self) -> bool:
        for path, whole in ((partial_path(self.job_id), False), (result_path(self.job_id), True)):
            try:
                self._file = open(path, "rb")  # noqa: SIM115  (closed by close)
            except FileNotFoundError:
                continue
            self._whole = whole
            self._file.seek(FILE_MAGIC)
            return True
        return False

    def _readable_bytes(self) -> int | None:
        """How far the file may be read now; None: to its end (it is whole)."""
        if self._whole:
            return None
        mark = read_progress(self.job_id)
        if mark is not None and partial_path(self.job_id).exists():
            return int(mark["bytes"])
        if result_path(self.job_id).exists():  # renamed since: the same file, now whole
            self._whole = True
            return None
        self.gone = True
        return 0

    def batches(self) -> Iterator[pa.RecordBatch]:
        if self.complete or self.gone or (self._file is None and not self._open()):
            return
        end = self._readable_bytes()
        while end is None or self._file.tell() < end:
            try:
                message = ipc.read_message(self._file)
            except EOFError:  # the end-of-stream marker of the whole file
                self.complete = True
                return
            if self.schema is None:
                self.schema = ipc.read_schema(message)
                continue
            batch = ipc.read_record_batch(message, self.schema)
            self.rows += batch.num_rows
            yield batch


def read_written(job_id: Any) -> tuple[pa.Table | None, bool]:
    """The rows of a job's result already written (None: nothing yet), and whether that is
    the whole result."""
    with ResultTail(job_id) as tail:
        batches = list(tail.batches())
        if tail.schema is None:
            return None, False
        return pa.Table.from_batches(batches, schema=tail.schema), tail.complete
