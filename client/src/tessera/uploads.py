"""Data sent to the server as an Arrow IPC stream: any pandas, Arrow or PySpark data as an
Arrow table (``to_arrow``), and a table as a request body of known length, made batch by
batch (``ArrowStreamBody``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa  # type: ignore[import-untyped]

from tessera.errors import ConnectionFailedError, PayloadTooLargeError, ValidationError
from tessera.sql import quote_identifier, string_literal

if TYPE_CHECKING:
    from tessera._http import Http
    from tessera.schema import Schema

UPLOAD_CHUNK_ROWS = 65_536


class ArrowStreamBody:
    """An Arrow IPC stream of a table as a request body of known length, made batch by batch
    (``requests`` sends a sized iterable with a ``Content-Length``, not chunked)."""

    def __init__(self, table: pa.Table) -> None:
        self._table = table
        counter = pa.MockOutputStream()
        with pa.ipc.new_stream(counter, table.schema) as writer:
            for batch in self._batches():
                writer.write_batch(batch)
        self._length = int(counter.size())
        self._sent = 0

    def _batches(self) -> Iterator[pa.RecordBatch]:
        yield from self._table.to_batches(max_chunksize=UPLOAD_CHUNK_ROWS)

    def __len__(self) -> int:
        return self._length

    def __iter__(self) -> Iterator[bytes]:
        self._sent = 0  # sent again after a refusal (tessera.retry): counted anew
        sink = _ChunkSink()
        with pa.ipc.new_stream(sink, self._table.schema) as writer:
            for batch in self._batches():
                writer.write_batch(batch)
                chunk = sink.take()
                self._sent += len(chunk)
                yield chunk
        chunk = sink.take()
        self._sent += len(chunk)
        yield chunk

    def refused_early(self) -> bool:
        """Whether sending stopped before the whole body went out."""
        return self._sent < self._length


class _ChunkSink:
    """A write-only file for Arrow's IPC writer whose bytes are taken out as they come."""

    closed = False

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self._parts.append(chunk)
        return len(chunk)

    def flush(self) -> None:
        """Nothing to flush."""

    def close(self) -> None:
        """Nothing to close."""

    def take(self) -> bytes:
        """The bytes written since the last call."""
        data = b"".join(self._parts)
        self._parts.clear()
        return data


def to_arrow(data: Any) -> pa.Table:
    """An Arrow table from Arrow, pandas or PySpark data."""
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if hasattr(data, "toArrow"):  # a PySpark 4 DataFrame
        return _spark_to_arrow(data)
    if type(data).__module__.startswith("pandas"):
        return pa.Table.from_pandas(data, preserve_index=False)
    raise ValidationError(
        "VALIDATION_ERROR",
        f"Expected a pandas, Arrow or PySpark DataFrame, not {type(data).__name__}.",
    )


def _spark_to_arrow(frame: Any) -> pa.Table:
    """``frame.toArrow()``, also for a non-null field inside a nullable struct, array or map
    (where PySpark's own ``toArrow()`` fails: a NULL struct's fields are NULL in Arrow). Such
    a frame is sent with its nested fields nullable; its top-level NOT NULL columns stay
    NOT NULL."""
    try:
        converted = frame.toArrow()
    except pa.ArrowInvalid:
        from pyspark.sql import types  # the [spark] extra

        relaxed = types.StructType(
            [
                types.StructField(f.name, _nested_nullable(f.dataType), f.nullable, f.metadata)
                for f in frame.schema.fields
            ]
        )
        converted = frame.to(relaxed).toArrow()
    assert isinstance(converted, pa.Table)
    return converted


def _nested_nullable(data_type: Any) -> Any:
    """``data_type`` with every field, element and value inside it nullable."""
    from pyspark.sql import types  # the [spark] extra

    if isinstance(data_type, types.StructType):
        return types.StructType(
            [
                types.StructField(f.name, _nested_nullable(f.dataType), True, f.metadata)
                for f in data_type.fields
            ]
        )
    if isinstance(data_type, types.ArrayType):
        return types.ArrayType(_nested_nullable(data_type.elementType), True)
    if isinstance(data_type, types.MapType):
        return types.MapType(
            _nested_nullable(data_type.keyType), _nested_nullable(data_type.valueType), True
        )
    return data_type


def send_upload(http: Http, route: str, table: pa.Table) -> dict[str, Any]:
    """``POST`` the table to the session's uploads route; the server's description of it."""
    # The server wants a Content-Length (no chunked bodies): the stream is written once
    # to count its bytes, then again while it is sent, never whole in memory.
    body = ArrowStreamBody(table)
    try:
        response = http.request(
            "POST",
            route,
            data=body,
            headers={"Content-Type": "application/vnd.apache.arrow.stream"},
            timeout=3600,
        )
    except ConnectionFailedError:
        if body.refused_early():  # the server refused by Content-Length and hung up
            raise PayloadTooLargeError(
                "PAYLOAD_TOO_LARGE",
                f"The server closed the upload of {len(body)} bytes before reading it; "
                "it is probably larger than the server's TESSERA_UPLOAD_MAX_BYTES.",
                {"bytes": len(body)},
            ) from None
        raise
    result: dict[str, Any] = response.json()
    return result


def upload_table_sql(quoted_path: str, upload: dict[str, Any], schema: Schema | None) -> str:
    """The ``CREATE TEMPORARY TABLE`` over an upload (its columns, or ``schema``'s)."""
    if schema is not None:
        elements = schema.ddl_elements()
    else:
        elements = [f"{quote_identifier(c['name'])} {c['data_type']}" for c in upload["columns"]]
    return (
        f"CREATE TEMPORARY TABLE {quoted_path} ({', '.join(elements)}) "
        f"WITH ({string_literal('connector')} = {string_literal('upload')}, "
        f"{string_literal('upload')} = {string_literal(str(upload['id']))})"
    )
