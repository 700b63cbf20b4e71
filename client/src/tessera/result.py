"""Jobs as seen by the client: :class:`TableResult` and the rows of a result."""

from __future__ import annotations

import io
import sys
import time
from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa  # type: ignore[import-untyped]

from tessera import streams
from tessera._http import Http
from tessera.errors import (
    NotFoundError,
    ResultTooLargeError,
    TesseraError,
    Timeout,
    ValidationError,
    job_error,
)
from tessera.schema import ResolvedSchema

if TYPE_CHECKING:
    import pandas  # type: ignore[import-untyped]

TERMINAL = ("FINISHED", "FAILED", "CANCELED")
LONG_POLL_SECONDS = 25


class Row:
    """One result row: ``row["name"]``, ``row.name`` and ``row[0]`` all work."""

    __slots__ = ("_fields", "_values")

    def __init__(self, fields: tuple[str, ...], values: tuple[Any, ...]) -> None:
        object.__setattr__(self, "_fields", fields)
        object.__setattr__(self, "_values", values)

    def __getitem__(self, key: int | str | slice) -> Any:
        if isinstance(key, str):
            try:
                return self._values[self._fields.index(key)]
            except ValueError:
                raise KeyError(key) from None
        return self._values[key]

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[self._fields.index(name)]
        except ValueError:
            raise AttributeError(f"Row has no column {name!r}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Row is immutable")

    def __len__(self) -> int:
        return len(self._values)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Row):
            return bool(self._fields == other._fields and self._values == other._values)
        if isinstance(other, tuple):
            return bool(self._values == other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._values)

    def __repr__(self) -> str:
        inner = ", ".join(f"{f}={v!r}" for f, v in zip(self._fields, self._values, strict=True))
        return f"Row({inner})"

    def asdict(self) -> dict[str, Any]:
        """The row as ``{column: value}`` (a repeated column name keeps its last value)."""
        return dict(zip(self._fields, self._values, strict=True))

    @property
    def fields(self) -> tuple[str, ...]:
        """The column names."""
        return tuple(self._fields)


def _progress_bar(total: int) -> Any:
    """A tqdm bar when tqdm is installed and we are attached to a terminal or a notebook."""
    interactive = sys.stderr.isatty() or "ipykernel" in sys.modules
    if not interactive:
        return None
    try:
        if "ipykernel" in sys.modules:
            from tqdm.notebook import tqdm  # type: ignore[import-untyped]
        else:
            from tqdm import tqdm  # type: ignore[import-untyped]
        return tqdm(total=total, unit="task", desc="tasks", leave=False)
    except Exception:  # e.g. a notebook without ipywidgets: no bar, never a failed wait
        return None


class TableResult:
    """A job: a statement the server runs. Results are read whole, as Arrow."""

    def __init__(self, http: Http, job: dict[str, Any]) -> None:
        self._http = http
        self._job = job
        self._etag: str | None = None
        self._arrow: pa.Table | None = None

    # --- the job -------------------------------------------------------------------------

    @property
    def job_id(self) -> str:
        """The job's id."""
        return str(self._job["id"])

    @property
    def job(self) -> dict[str, Any]:
        """The job's JSON as last seen."""
        return self._job

    @property
    def status(self) -> str:
        """CREATED, RUNNING, FINISHED, FAILED or CANCELED (asked again unless it has ended)."""
        if self._job["status"] not in TERMINAL:
            self.refresh()
        return str(self._job["status"])

    def refresh(self) -> dict[str, Any]:
        """Read the job again."""
        self._job = self._http.get(f"/jobs/{self.job_id}")
        return self._job

    def _poll(self, seconds: float) -> None:
        headers = {"If-None-Match": self._etag} if self._etag else {}
        response = self._http.request(
            "GET",
            f"/jobs/{self.job_id}",
            params={"wait": max(0, min(30, int(seconds)))} if self._etag else None,
            headers=headers,
            timeout=seconds + 30,
            ok=(304,),
        )
        if response.status_code == 200:
            self._job = response.json()
            self._etag = response.headers.get("ETag")

    def wait(self, timeout: float | None = None) -> TableResult:
        """Wait until the job ends (long-polling); raise its error if it FAILED or was CANCELED.

        Shows a progress bar (tasks done / total) when tqdm is installed and stderr is a
        terminal or a notebook. Ctrl-C cancels the job, then re-raises KeyboardInterrupt.
        Past ``timeout`` seconds a ``TIMEOUT`` :class:`TesseraError` is raised (the job runs on).
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        bar: Any = None
        try:
            while self._job["status"] not in TERMINAL:
                left = LONG_POLL_SECONDS if deadline is None else deadline - time.monotonic()
                if left <= 0:
                    raise Timeout(
                        "TIMEOUT",
                        f"Job {self.job_id} is still {self._job['status']} after {timeout} s.",
                        {"job": self.job_id, "status": self._job["status"]},
                    )
                self._poll(min(left, LONG_POLL_SECONDS))
                progress = self._job.get("progress") or {}
                total = int(progress.get("tasks_total") or 0)
                if total:
                    bar = bar or _progress_bar(total)
                    if bar is not None:
                        bar.total = total
                        bar.n = int(progress.get("tasks_done") or 0)
                        bar.refresh()
        except KeyboardInterrupt:
            self.cancel()
            raise
        finally:
            if bar is not None:
                bar.close()
        if self._job["status"] != "FINISHED":
            raise job_error(self._job)
        return self

    def cancel(self) -> str:
        """Cancel the job (a no-op once it has ended); returns its status."""
        try:
            self._job = self._http.post(f"/jobs/{self.job_id}/cancel")
        except TesseraError as exc:
            if exc.code != "ILLEGAL_TRANSITION":
                raise
            self.refresh()
        return str(self._job["status"])

    def events(self) -> list[dict[str, Any]]:
        """The job's events (``{"at", "type", "detail"}``), oldest first."""
        return list(self._http.pages(f"/jobs/{self.job_id}/events"))

    # --- the result ----------------------------------------------------------------------

    def get_resolved_schema(self) -> ResolvedSchema:
        """The result's columns (names and Spark SQL types)."""
        self.wait()
        return ResolvedSchema.from_json(self._job.get("result") or {"columns": []})

    def to_arrow(self, timeout: float | None = None, max_rows: int | None = None) -> pa.Table:
        """The whole result as an Arrow table (``RESULT_TOO_LARGE`` if the server cut it).

        A streaming INSERT or CTAS: the rows of the micro-batches it commits until it ends,
        ``timeout`` seconds pass or ``max_rows`` rows arrived (docs/python.md, "Streams").
        A streaming SELECT: its preview (the latest rows) once it has one. A batch job:
        waits for it (``TIMEOUT`` past ``timeout``); ``max_rows`` keeps the first rows."""
        if max_rows is not None and max_rows < 0:
            raise ValidationError(
                "VALIDATION_ERROR",
                f"max_rows must be 0 or more, not {max_rows}.",
                {"field": "max_rows"},
            )
        if self._job.get("streaming") and not streams.is_preview(self._job):
            return streams.arrived(self, timeout, max_rows)
        table = self._preview(timeout) if streams.is_preview(self._job) else self._whole(timeout)
        return table if max_rows is None else table.slice(0, max_rows)

    def _whole(self, timeout: float | None) -> pa.Table:
        self.wait(timeout)
        if self._arrow is not None:
            return self._arrow
        if not self._job.get("result"):
            return pa.table({})
        with self.open_stream() as reader:
            self._arrow = reader.read_all()
        return self._arrow

    def _preview(self, timeout: float | None) -> pa.Table:
        """A streaming SELECT's latest tail: served while it runs, kept once it stopped."""
        deadline = None if timeout is None else time.monotonic() + timeout
        self.refresh()
        while not self._job.get("result") and self._job["status"] not in TERMINAL:
            left = LONG_POLL_SECONDS if deadline is None else deadline - time.monotonic()
            if left <= 0:
                return pa.table({})
            self._poll(min(left, LONG_POLL_SECONDS))
        if not self._job.get("result"):
            if self._job["status"] == "FAILED":
                raise job_error(self._job)
            return pa.table({})
        with self._download() as reader:
            return reader.read_all()

    def stream_batches(self, timeout: float | None = None) -> Generator[pa.Table, None, None]:
        """One Arrow table per micro-batch a streaming INSERT or CTAS commits, as it commits
        (a keyed target's batches are changes, with the row kind in a first column ``op``).
        Ends when the job ends (its error raised if it FAILED; a cancel ends it quietly) or
        after ``timeout`` seconds; closing it leaves the job running. A batch job yields its
        whole result once; a streaming SELECT raises ``UNSUPPORTED`` (it keeps a preview,
        not its batches: read it with ``to_arrow()``)."""
        if not self._job.get("streaming"):
            yield self._whole(timeout)
            return
        yield from streams.batches(self, timeout)

    def open_stream(self) -> pa.RecordBatchReader:
        """The whole result as Arrow record batches read from the server as they are asked
        for (close it, or use it as a context manager); ``RESULT_TOO_LARGE`` if the server
        cut it. Waits for the job."""
        self.wait()
        return self._download()

    def _download(self) -> pa.RecordBatchReader:
        result = self._job.get("result") or {}
        if result.get("truncated"):
            raise ResultTooLargeError(
                "RESULT_TOO_LARGE",
                f"The result of job {self.job_id} was cut at {result.get('row_count')} rows, the "
                "server's limit; filter or aggregate the query, or write it to a table.",
                {"job": self.job_id, "row_count": result.get("row_count")},
            )
        try:
            response = self._http.request(
                "GET", f"/jobs/{self.job_id}/result.arrow", stream=True, timeout=600
            )
        except NotFoundError:
            # Servers without the Arrow stream download: the Parquet download, same rows.
            response = self._http.request("GET", f"/jobs/{self.job_id}/result.parquet", timeout=600)
            import pyarrow.parquet as pq  # type: ignore[import-untyped]

            table = pq.ParquetFile(io.BytesIO(response.content)).read()
            return pa.RecordBatchReader.from_batches(table.schema, table.to_batches())
        if response.headers.get("X-Tessera-Truncated", "").lower() == "true":
            response.close()
            raise ResultTooLargeError(
                "RESULT_TOO_LARGE",
                f"The result of job {self.job_id} was cut at the server's limit.",
                {"job": self.job_id, "row_count": response.headers.get("X-Tessera-Row-Count")},
            )
        response.raw.decode_content = True
        return pa.ipc.open_stream(response.raw)

    def to_pandas(
        self, timeout: float | None = None, max_rows: int | None = None
    ) -> pandas.DataFrame:
        """The result as a pandas DataFrame (needs the ``pandas`` extra), as PySpark's
        ``toPandas()`` gives it: maps as dicts, ``TIMESTAMP_NTZ`` as naive values (no
        time-zone shift, whatever the client's zone). A stream: what arrived within
        ``timeout`` seconds or up to ``max_rows`` rows (see :meth:`to_arrow`)."""
        return arrow_to_pandas(self.to_arrow(timeout, max_rows))

    def collect(self, timeout: float | None = None) -> Iterator[Row]:
        """The rows of the result, in order (values as PySpark's ``collect()`` gives them:
        maps as dicts). A streaming INSERT or CTAS: its rows as each micro-batch commits,
        until the job ends or ``timeout`` seconds pass (:meth:`stream_batches`)."""
        if self._job.get("streaming") and streams.is_preview(self._job):
            raise streams.refuse_preview(self._job)
        tables = (
            self.stream_batches(timeout) if self._job.get("streaming") else iter([self.to_arrow()])
        )
        for table in tables:
            fields = tuple(table.column_names)
            for batch in table.to_batches():
                columns = [python_values(column) for column in batch.columns]
                for values in zip(*columns, strict=True):
                    yield Row(fields, tuple(values))

    def print(self, max_rows: int = 100) -> None:
        """Print the result as a plain text table (at most ``max_rows`` rows)."""
        print(self.format(max_rows))

    def format(self, max_rows: int = 100) -> str:
        """The result as a plain text table."""
        table = self.to_arrow()
        names = list(table.column_names)
        rows = [[_cell(v) for v in row] for row in _rows(table.slice(0, max_rows))]
        widths = [max([len(n), *(len(r[i]) for r in rows)]) for i, n in enumerate(names)]
        line = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
        out = [
            line,
            "| " + " | ".join(n.ljust(w) for n, w in zip(names, widths, strict=True)) + " |",
        ]
        out.append(line)
        for r in rows:
            out.append("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |")
        out.append(line)
        more = table.num_rows - len(rows)
        out.append(f"{table.num_rows} row(s)" + (f" ({more} not shown)" if more > 0 else ""))
        return "\n".join(out)

    def __repr__(self) -> str:
        return f"TableResult(job_id={self.job_id!r}, status={self._job['status']!r})"


def arrow_to_pandas(table: pa.Table) -> pandas.DataFrame:
    """``table`` as pandas the way PySpark's ``toPandas()`` makes it: maps as dicts;
    timestamps keep their own zone (a zone-less one stays naive, never shifted)."""
    return table.to_pandas(maps_as_pydicts="strict")


def _has_map(arrow_type: pa.DataType) -> bool:
    types = pa.types
    if types.is_map(arrow_type):
        return True
    if types.is_struct(arrow_type):
        return any(_has_map(arrow_type.field(i).type) for i in range(arrow_type.num_fields))
    if types.is_list(arrow_type) or types.is_large_list(arrow_type):
        return _has_map(arrow_type.value_type)
    if types.is_fixed_size_list(arrow_type):
        return _has_map(arrow_type.value_type)
    return False


def _maps_as_dicts(value: Any, arrow_type: pa.DataType) -> Any:
    """A ``to_pylist()`` value with every map (a list of pairs) as a dict."""
    if value is None:
        return None
    types = pa.types
    if types.is_map(arrow_type):
        key, item = arrow_type.key_type, arrow_type.item_type
        return {_maps_as_dicts(k, key): _maps_as_dicts(v, item) for k, v in value}
    if types.is_struct(arrow_type):
        fields = [arrow_type.field(i) for i in range(arrow_type.num_fields)]
        return {f.name: _maps_as_dicts(value[f.name], f.type) for f in fields}
    if hasattr(arrow_type, "value_type") and not types.is_dictionary(arrow_type):
        return [_maps_as_dicts(v, arrow_type.value_type) for v in value]
    return value


def python_values(column: pa.Array | pa.ChunkedArray) -> list[Any]:
    """A column's values as Python objects, as PySpark's ``collect()`` gives them (maps as
    dicts, also inside structs and arrays)."""
    values: list[Any] = column.to_pylist()
    if not _has_map(column.type):
        return values
    return [_maps_as_dicts(v, column.type) for v in values]


def _rows(table: pa.Table) -> Iterator[tuple[Any, ...]]:
    columns = [python_values(column) for column in table.columns]
    return zip(*columns, strict=True)


def _cell(value: Any) -> str:
    return "NULL" if value is None else str(value)
