"""A job's whole result as an Arrow IPC stream (``GET /jobs/{id}/result.arrow``).

The stored result is an Arrow IPC *file* (``results.store``); programs (the Python Table API)
read it as a *stream*, in the types it is stored in. The file is memory-mapped and sent
record batch by record batch: the web process never holds the whole result.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow.ipc as ipc  # type: ignore[import-untyped]
from django.http import StreamingHttpResponse

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
