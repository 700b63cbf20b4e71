"""A job's whole result as an Arrow IPC stream (``GET /jobs/{id}/result.arrow``).

The stored result is an Arrow IPC *file* (``results.store``); programs (the Python Table API)
read it as a *stream*, in the types it is stored in. The file is memory-mapped and sent
record batch by record batch: the web process never holds the whole result.

A job still writing its result is followed (``follow_response``): the batches written so
far, then each new one as the worker announces it (``jobs.notify.ROWS``), until the job
ends. A job that ends FAILED or CANCELED ends the stream with a zero-row batch whose
custom metadata ``tessera.error`` is the job's error (JSON), and no end-of-stream marker.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.ipc as ipc  # type: ignore[import-untyped]
from django.conf import settings
from django.http import StreamingHttpResponse

from core import jobstate
from jobs import notify
from jobs.models import Job
from results.partial import ResultTail
from results.store import open_result, record_batches

ARROW_STREAM = "application/vnd.apache.arrow.stream"
# The stream is sent in chunks of about this many bytes (whole record batches).
ARROW_CHUNK_BYTES = 1 << 20


class _Chunks:
    """A write-only sink for ``ipc.new_stream``: the bytes written since the last ``take``."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self.size = 0
        self.closed = False

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self._parts.append(chunk)
        self.size += len(chunk)
        return len(chunk)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True

    def take(self) -> bytes:
        data = b"".join(self._parts)
        self._parts, self.size = [], 0
        return data


def _arrow_stream(reader: ipc.RecordBatchFileReader) -> Iterator[bytes]:
    """The stored file's batches as an Arrow IPC stream, a chunk of whole batches at a time
    (the file is memory-mapped: only the batch being sent is read)."""
    sink = _Chunks()
    with ipc.new_stream(sink, reader.schema) as writer:
        for batch in record_batches(reader):
            writer.write_batch(batch)
            if sink.size >= ARROW_CHUNK_BYTES:
                yield sink.take()
    yield sink.take()  # the schema of an empty result, the last batches, the end marker


def arrow_response(job_id: Any, meta: dict[str, Any]) -> StreamingHttpResponse:
    """A job's whole result as an Arrow IPC stream, with the types it is stored in; its
    row count and whether it was truncated in ``X-Tessera-Row-Count``/``-Truncated``."""
    reader = open_result(job_id)  # raises before the response starts
    response = StreamingHttpResponse(_arrow_stream(reader), content_type=ARROW_STREAM)
    response["Content-Disposition"] = f'attachment; filename="job-{job_id}.arrows"'
    response["X-Tessera-Row-Count"] = str(int(meta.get("row_count") or 0))
    response["X-Tessera-Truncated"] = "true" if meta.get("truncated") else "false"
    return response


ERROR_METADATA = b"tessera.error"


def _ending(job_id: Any) -> tuple[str | None, dict[str, Any]]:
    """The job's status now and its error (``{}`` for none)."""
    row = Job.objects.filter(pk=job_id).values_list("status", "error").first()
    if row is None:
        return None, {"code": "NOT_FOUND", "message": f"Job {job_id} does not exist."}
    return row[0], dict(row[1] or {})


def _error_of(job_id: Any, status: str | None, error: dict[str, Any]) -> dict[str, Any]:
    if status == jobstate.FINISHED:  # finished, yet its file is gone: it expired meanwhile
        return {"code": "NOT_FOUND", "message": f"The result of job {job_id} has expired."}
    if error:
        return error
    return {"code": status or "NOT_FOUND", "message": f"Job {job_id} ended {status}."}


def _follow(job_id: Any) -> Iterator[bytes]:
    """The job's result batches as the worker writes them, until the job ends."""
    sink = _Chunks()
    writer: Any = None
    reread = False
    with ResultTail(job_id) as tail, notify.watch([job_id], (notify.ROWS, notify.ENDED)) as watch:
        while True:
            # The status first: a job that had ended before the batches were read has all
            # of them written (or removed) by now.
            status, error = _ending(job_id)
            for batch in tail.batches():
                writer = writer or ipc.new_stream(sink, tail.schema)
                writer.write_batch(batch)
                if sink.size >= ARROW_CHUNK_BYTES:
                    yield sink.take()
            if writer is None and tail.schema is not None:
                writer = ipc.new_stream(sink, tail.schema)
            if tail.complete:
                writer.close()
                yield sink.take()
                return
            if status is None or status in jobstate.TERMINAL:
                if status == jobstate.FINISHED and not tail.gone and not reread:
                    reread = True  # the writer renamed its file just after our read: read on
                    continue
                yield _error_end(sink, writer, tail, _error_of(job_id, status, error))
                return
            if sink.size:
                yield sink.take()
            watch.wait(settings.TESSERA_NOTIFY_FALLBACK_SECONDS)


def _error_end(sink: _Chunks, writer: Any, tail: ResultTail, error: dict[str, Any]) -> bytes:
    """A zero-row batch carrying the error, and no end-of-stream marker."""
    schema = tail.schema if tail.schema is not None else pa.schema([])
    writer = writer or ipc.new_stream(sink, schema)
    empty = pa.RecordBatch.from_pylist([], schema=schema)
    writer.write_batch(empty, custom_metadata={ERROR_METADATA: json.dumps(error).encode()})
    return sink.take()  # the writer is not closed: closing would write the end marker


def follow_response(job_id: Any) -> StreamingHttpResponse:
    """The result of a job that is writing it, followed until the job ends; its row count
    is not known yet (``X-Tessera-Complete: false``)."""
    response = StreamingHttpResponse(_follow(job_id), content_type=ARROW_STREAM)
    response["Content-Disposition"] = f'attachment; filename="job-{job_id}.arrows"'
    response["X-Tessera-Complete"] = "false"
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # a proxy must pass batches on as they come
    return response
