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
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.ipc as ipc  # type: ignore[import-untyped]
from django.conf import settings
from django.http import StreamingHttpResponse

from core import jobstate
from core.errors import TooManyRequests
from jobs import notify
from jobs import selectors as job_selectors
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


# Followers of running results in this process, per user: each holds a thread of the web
# server until its job ends, so a user has a few (TESSERA_RESULT_FOLLOWERS_PER_USER) and all
# of them together no more than the process's held requests (jobs.selectors.hold_place).
_followers: Counter[Any] = Counter()
_followers_lock = threading.Lock()


def _follower_place(user_id: Any) -> Callable[[], None]:
    """A place to follow a running result for ``user_id`` (``TooManyRequests`` if none),
    and what gives it back."""
    with _followers_lock:
        mine = _followers[user_id]
        limit = int(settings.TESSERA_RESULT_FOLLOWERS_PER_USER)
        if mine >= limit:
            raise TooManyRequests(
                f"You are already following {mine} running results, the most one user may "
                "at once; close one of them, or read this result once its job has finished.",
                retry_after=5,
                details={"followers": mine, "limit": limit},
            )
        held = job_selectors.hold_place()
        if held is None:
            raise TooManyRequests(
                "The server is holding as many waiting requests as it may at once; try "
                "again in a moment, or read this result once its job has finished.",
                retry_after=5,
            )
        _followers[user_id] += 1
    once = threading.Lock()

    def give_back() -> None:
        if once.acquire(blocking=False):
            with _followers_lock:
                _followers[user_id] -= 1
                if _followers[user_id] <= 0:
                    del _followers[user_id]
            held()

    return give_back


class _Followed:
    """A followed result's chunks holding its follower place until Django closes the
    response, which it does at the response's end even if nothing was read."""

    def __init__(self, chunks: Iterator[bytes], give_back: Callable[[], None]) -> None:
        self._chunks = chunks
        self._give_back = give_back

    def __iter__(self) -> Iterator[bytes]:
        return self._chunks

    def close(self) -> None:
        try:
            close = getattr(self._chunks, "close", None)
            if close is not None:
                close()
        finally:
            self._give_back()


def follow_response(job_id: Any, user_id: Any) -> StreamingHttpResponse:
    """The result of a job that is writing it, followed until the job ends; its row count
    is not known yet (``X-Tessera-Complete: false``). At most
    ``TESSERA_RESULT_FOLLOWERS_PER_USER`` per user, within the process's held requests
    (``TooManyRequests`` beyond)."""
    give_back = _follower_place(user_id)
    try:
        response = StreamingHttpResponse(
            _Followed(_follow(job_id), give_back), content_type=ARROW_STREAM
        )
    except BaseException:
        give_back()
        raise
    response["Content-Disposition"] = f'attachment; filename="job-{job_id}.arrows"'
    response["X-Tessera-Complete"] = "false"
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # a proxy must pass batches on as they come
    return response
