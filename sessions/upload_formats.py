"""The three kinds of upload body, each read as (an Arrow schema, its record batches): an Arrow
IPC stream, a CSV file (block by block, types inferred from the first block) and a Parquet
file (spooled to the upload's incoming directory, then row group by row group). All read the
request body through ``CappedReader``, which counts it against the upload limit;
``sessions.uploads`` writes the batches (one write path, the same checks for all three).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.csv as pa_csv  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from core.errors import CoreError, upload_too_large

MEDIA_TYPE = "application/vnd.apache.arrow.stream"
CSV_MEDIA_TYPE = "text/csv"
PARQUET_MEDIA_TYPE = "application/vnd.apache.parquet"
MEDIA_TYPES = (MEDIA_TYPE, CSV_MEDIA_TYPE, PARQUET_MEDIA_TYPE)
SPOOL_FILE = "source.parquet"  # a Parquet upload as received, gone once converted
CSV_BLOCK_BYTES = 1 << 20  # what a CSV's types are inferred from, and read at a time
CHUNK_BYTES = 1 << 20  # what one read of the request body asks for
MAX_MESSAGE_BYTES = 256 << 20  # one Arrow IPC message (a record batch) at most


class Readable(Protocol):
    def read(self, size: int = ..., /) -> bytes: ...


class CappedReader:
    """A file-like view of the request body for pyarrow: reads it in chunks of at most
    ``CHUNK_BYTES``, counts the bytes received and stops past ``limit``."""

    def __init__(
        self, source: Readable, limit: int, over: Callable[[], CoreError] | None = None
    ) -> None:
        self.source = source
        self.limit = limit
        # The error past the limit (the server's upload limit, or the user's quota's room).
        self.over = over or (lambda: upload_too_large(limit))
        self.received = 0
        self.over_limit = False
        self.closed = False

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def writable(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            size = self.limit + 1 - self.received  # never more than one past the limit
        if size > MAX_MESSAGE_BYTES:
            raise CoreError(
                f"The request body is not a valid Arrow IPC stream, or one with a message of "
                f"{size:,} bytes: a record batch may have at most {MAX_MESSAGE_BYTES >> 20} "
                "MiB; send the data in smaller batches.",
                details={"maximum": MAX_MESSAGE_BYTES},
            )
        pieces: list[bytes] = []
        wanted = size
        while wanted > 0:
            piece = self.source.read(min(wanted, CHUNK_BYTES))
            if not piece:
                break
            self.received += len(piece)
            if self.received > self.limit:
                self.over_limit = True
                raise self.over()
            pieces.append(piece)
            wanted -= len(piece)
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)


def not_arrow(exc: Exception) -> CoreError:
    return CoreError(
        f"The request body is not a valid Arrow IPC stream ({exc}). Send the stream format "
        f"(pyarrow.ipc.new_stream) with Content-Type: {MEDIA_TYPE}.",
    )


Batches = tuple[pa.Schema, Iterator[pa.RecordBatch]]


def _arrow_batches(reader: CappedReader, incoming: Path) -> Batches:
    """An Arrow IPC stream, decoded batch by batch."""
    try:
        stream = pa.ipc.open_stream(reader)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise not_arrow(exc) from None

    return stream.schema, _each_batch(stream.read_next_batch, not_arrow)


def _each_batch(
    read_next: Callable[[], pa.RecordBatch], refused: Callable[[Exception], CoreError]
) -> Iterator[pa.RecordBatch]:
    """A reader's batches until its end; a read error raised as ``refused`` words it."""
    while True:
        try:
            batch = read_next()
        except StopIteration:
            return
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise refused(exc) from None
        yield batch


_CSV_ROW = re.compile(r"Row #(\d+): ")
_CSV_COLUMN = re.compile(r"In CSV column #(\d+): ")
_CSV_CONVERSION = re.compile(r"CSV conversion error to (\S+): (.*)$", re.DOTALL)


def _bad_csv(exc: Exception, schema: pa.Schema | None = None) -> CoreError:
    """pyarrow's CSV error as a sentence naming the line (1-based, the header is line 1)."""
    text = str(exc).strip()
    details: dict[str, Any] = {}
    row = _CSV_ROW.search(text)
    if row is not None:
        details["line"] = int(row.group(1))
    column = _CSV_COLUMN.search(text)
    if column is not None and schema is not None and int(column.group(1)) < len(schema):
        details["column"] = schema.field(int(column.group(1))).name
    why = _CSV_COLUMN.sub("", _CSV_ROW.sub("", text)).replace("CSV parse error: ", "")
    conversion = _CSV_CONVERSION.search(why)
    if conversion is not None and "column" in details:
        arrow_type = pa.string() if conversion.group(1) == "null" else conversion.group(1)
        why = (
            f"column {_quote(details['column'])} has {conversion.group(2)}, but its first "
            f"rows made it {_csv_type_text(arrow_type)}; types are inferred from the first "
            f"{CSV_BLOCK_BYTES >> 20} MiB"
        )
    where = f"Line {details['line']} of the CSV file" if "line" in details else "The CSV file"
    return CoreError(f"{where} cannot be read: {why.rstrip('.')}.", details=details)


def _csv_type_text(arrow_type: Any) -> str:
    known = {"int64": "BIGINT", "double": "DOUBLE", "bool": "BOOLEAN", "string": "STRING"}
    return known.get(str(arrow_type), str(arrow_type))


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _csv_batches(reader: CappedReader, incoming: Path) -> Batches:
    """A CSV file with a header row, read block by block; the types are inferred from the
    first block, and a column empty there is a STRING (Spark reads no untyped column)."""
    try:
        csv = pa_csv.open_csv(
            reader,
            # One thread: pyarrow then knows (and names) the line of a bad row.
            read_options=pa_csv.ReadOptions(use_threads=False, block_size=CSV_BLOCK_BYTES),
        )
    except (pa.ArrowException, OSError, ValueError) as exc:
        if "Empty CSV file" in str(exc):
            raise CoreError(
                "The CSV file is empty; it needs a header row naming the columns."
            ) from None
        raise _bad_csv(exc) from None
    read = csv.schema
    schema = pa.schema(
        [field.with_type(pa.string()) if pa.types.is_null(field.type) else field for field in read]
    )

    batches = _each_batch(csv.read_next_batch, lambda exc: _bad_csv(exc, read))
    if schema == read:
        return schema, batches
    return schema, (batch.cast(schema) for batch in batches)


def _not_parquet(exc: Exception) -> CoreError:
    return CoreError(
        f"The request body is not a Parquet file pyarrow can read ({exc}). Send a whole "
        f"Parquet file with Content-Type: {PARQUET_MEDIA_TYPE}.",
    )


def _parquet_batches(reader: CappedReader, incoming: Path) -> Batches:
    """A Parquet file: spooled in chunks to ``incoming`` (its footer is at its end), then
    read row group by row group."""
    spool = incoming / SPOOL_FILE
    with spool.open("wb") as out:
        while chunk := reader.read(CHUNK_BYTES):
            out.write(chunk)
    try:
        parquet = pq.ParquetFile(str(spool))
        schema = parquet.schema_arrow
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise _not_parquet(exc) from None

    def batches() -> Iterator[pa.RecordBatch]:
        with parquet:
            for index in range(parquet.num_row_groups):
                try:
                    group = parquet.read_row_group(index)
                except (pa.ArrowException, OSError, ValueError) as exc:
                    raise _not_parquet(exc) from None
                yield from group.to_batches()
        spool.unlink()

    return schema, batches()


SOURCES: dict[str, Callable[[CappedReader, Path], Batches]] = {
    MEDIA_TYPE: _arrow_batches,
    CSV_MEDIA_TYPE: _csv_batches,
    PARQUET_MEDIA_TYPE: _parquet_batches,
}
