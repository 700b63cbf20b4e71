"""Streams read from Python: the micro-batches a streaming INSERT or CTAS commits.

A streaming job writes each micro-batch into its table as one new version and records the
event ``batch_committed`` {``batch_id``, ``table``, ``version``, …} in the same transaction
(docs/streaming.md). The client follows the job (long-polls ``GET /jobs/{id}``: its
``progress.stream`` changes at each commit), reads the new events, and reads each batch's
rows as the changes between the table's versions ``version - 1`` and ``version`` — a plain
time-travel query (``VERSION AS OF``) run by the server's planner, guard and grants in a
session of its own (so a session in streaming mode does not turn the read into a stream).
Nothing new runs on the server: the rows are the ones the table holds.

- A table without a primary key takes appends: a batch is its new rows (``+I``), the
  table's columns.
- A table with a primary key takes upserts: a batch is its changes with the row kind in a
  first column ``op`` (``+I``, ``-U``, ``+U``, ``-D``), as ``Table.to_changelog`` gives them.

A streaming SELECT commits no version: it keeps a preview, the latest rows (docs/streaming.md,
"Preview"), which ``to_arrow``/``to_pandas`` read; its batches cannot be followed one by one.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]

from tessera import changelog
from tessera.errors import TesseraError, UnsupportedError, job_error
from tessera.sql import quote_identifier

if TYPE_CHECKING:
    from tessera.environment import TableEnvironment
    from tessera.result import TableResult

ENDED = ("FINISHED", "FAILED", "CANCELED")
LONG_POLL_SECONDS = 25


def is_preview(job: dict[str, Any]) -> bool:
    """A streaming SELECT: its result is a preview tail, no table versions."""
    return bool(job.get("streaming")) and job.get("kind") == "query"


def refuse_preview(job: dict[str, Any]) -> UnsupportedError:
    return UnsupportedError(
        "UNSUPPORTED",
        f"Job {job.get('id')} is a streaming SELECT: it keeps only a preview of its latest "
        "rows, not each micro-batch. Read the preview with to_arrow() or to_pandas(), or "
        "stream the query into a table (INSERT INTO … in streaming mode) and follow that "
        "job's batches.",
        {"job": job.get("id")},
    )


def _committed(result: TableResult, seen: set[tuple[str, int]]) -> list[dict[str, Any]]:
    """The ``batch_committed`` events not yielded yet, in commit order."""
    found = []
    for event in result.events():
        if event.get("type") != "batch_committed":
            continue
        detail = event.get("detail") or {}
        key = (str(detail.get("table")), int(detail.get("version") or 0))
        if key not in seen:
            seen.add(key)
            found.append(detail)
    return found


class _Reader:
    """A session of its own that reads each batch's version of the table (batch mode)."""

    def __init__(self, result: TableResult) -> None:
        self._result = result
        self._env: TableEnvironment | None = None
        self._keys: dict[str, tuple[str, ...]] = {}

    def _session(self) -> TableEnvironment:
        if self._env is None:
            from tessera.environment import TableEnvironment

            http = self._result._http
            self._env = TableEnvironment(http, http.post("/sessions", {}))
        return self._env

    def _keyed(self, path: str) -> bool:
        if path not in self._keys:
            schema = self._session().from_path(path).get_schema()
            self._keys[path] = tuple((schema.primary_key or {}).get("columns") or ())
        return bool(self._keys[path])

    def _shape(self, path: str, changes: pa.Table) -> pa.Table:
        if self._keyed(path):
            return changes
        inserts = changes.filter(pc.equal(changes[changelog.OP], "+I"))
        return inserts.drop_columns([changelog.OP])

    def batch(self, detail: dict[str, Any], last: int | None = None) -> pa.Table:
        """The rows (or changes) a ``batch_committed`` event's version made (with ``last``:
        the versions from it to ``last`` together)."""
        env = self._session()
        path, version = str(detail["table"]), int(detail["version"])
        sql = env.from_path(path).changelog_sql(version - 1, version if last is None else last)
        return self._shape(path, env.sql_query(sql).to_arrow())

    def runs(self, details: list[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], int]]:
        """Consecutive versions of one table without a key, as (first event, last version):
        one read for many batches (their rows are the same, whether read apart or together)."""
        start: dict[str, Any] | None = None
        last = -1
        for detail in details:
            version = int(detail["version"])
            joins = start is not None and detail["table"] == start["table"] and version == last + 1
            if start is not None and not (joins and not self._keyed(str(start["table"]))):
                yield start, last
                start = None
            if start is None:
                start = detail
            last = version
        if start is not None:
            yield start, last

    def empty(self, target: list[str]) -> pa.Table:
        """No rows, in the shape a batch of the job's target has."""
        env = self._session()
        path = ".".join(quote_identifier(part) for part in target)
        sql = f"SELECT * FROM ({env.from_path(path).changelog_sql()}) AS _t LIMIT 0"
        return self._shape(path, env.sql_query(sql).to_arrow())

    def close(self) -> None:
        if self._env is not None:
            env, self._env = self._env, None
            # The session only: the connection and its token are the job's environment's.
            env._closed = True
            with contextlib.suppress(TesseraError):  # a server gone: the session expires there
                env._http.delete(env._path, ok=(404,))


def _progress_mark(job: dict[str, Any]) -> tuple[Any, ...]:
    stream = (job.get("progress") or {}).get("stream") or {}
    return (job.get("status"), stream.get("batches"), stream.get("batch_id"))


def batches(result: TableResult, timeout: float | None = None) -> Generator[pa.Table, None, None]:
    """Each micro-batch the stream commits, as an Arrow table, as it commits (see the
    module's docstring). Ends when the job ends (CANCELED or FINISHED: quietly, after the
    batches committed before; FAILED: its error is raised after them) or after ``timeout``
    seconds. Closing the iterator ends its reading session; the job runs on."""
    reader = _Reader(result)
    try:
        yield from _follow(result, reader, timeout)
    finally:
        reader.close()


def arrived(result: TableResult, timeout: float | None, max_rows: int | None) -> pa.Table:
    """The rows of the batches committed until ``timeout`` seconds passed, ``max_rows`` rows
    arrived (the table holds at most that many) or the job ended, as one Arrow table."""
    reader = _Reader(result)
    try:
        tables: list[pa.Table] = []
        count = 0
        if max_rows is None or max_rows > 0:
            for table in _follow(result, reader, timeout, together=max_rows is None):
                tables.append(table)
                count += table.num_rows
                if max_rows is not None and count >= max_rows:
                    break
        if not tables:
            target = result.job.get("target")
            return reader.empty(list(target)) if target else pa.table({})
        whole = pa.concat_tables(tables)
        return whole if max_rows is None else whole.slice(0, max_rows)
    finally:
        reader.close()


def _follow(
    result: TableResult, reader: _Reader, timeout: float | None, together: bool = False
) -> Iterator[pa.Table]:
    job = result.refresh()
    if is_preview(job):
        raise refuse_preview(job)
    deadline = None if timeout is None else time.monotonic() + timeout
    seen: set[tuple[str, int]] = set()
    mark: tuple[Any, ...] | None = None
    while True:
        job = result.job
        if _progress_mark(job) != mark or job.get("status") in ENDED:
            mark = _progress_mark(job)
            # Events of a commit are written with it: once the job has ended, this read
            # holds every batch it committed.
            new = sorted(_committed(result, seen), key=lambda d: int(d["version"]))
            if together:
                for first, last in reader.runs(new):
                    yield reader.batch(first, last)
            else:
                for detail in new:
                    yield reader.batch(detail)
        if job.get("status") in ENDED:
            if job.get("status") == "FAILED":
                raise job_error(job)
            return
        left = LONG_POLL_SECONDS if deadline is None else deadline - time.monotonic()
        if left <= 0:
            return
        result._poll(min(left, LONG_POLL_SECONDS))
