"""Statistics of a table, read in the web process without Spark (docs/api.md "Table
statistics"): its files, their size, the row count from Parquet footers, and its last commit.

- Files are those a reader sees: a managed table's directory, or an external table's
  committed entries (its ``_tessera_current`` manifest) or, without a manifest, its directory
  as Spark lists it (hidden names skipped). Symbolic links are not followed. At most
  ``MAX_FILES`` are counted (``complete: false`` beyond).
- The row count is the sum of the Parquet footers' row counts (``row_count_source``
  ``"parquet footers"``); other formats, or more than ``MAX_FOOTERS`` files, give ``null``.
- The last commit is the newest ``data_committed`` event for the table: for an external
  table the manifest names its job; for a managed one the commit moved ``updated_at``, so
  only the write jobs created in the day before it are looked at (the ``(status,
  created_at)`` index) — a constant number of queries whatever the jobs table holds.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from catalog.models import Table
from core import jobstate
from core.identifiers import quote_path
from jobs.models import JobEvent
from tabledata import manifest

MAX_FILES = 10_000
MAX_FOOTERS = 1_000
# A managed table's commit job was created at most this long before the commit.
COMMIT_WINDOW = timedelta(days=1)


def _files_below(top: str, budget: int) -> Iterator[tuple[str, int, float]]:
    """(path, size, mtime) of the regular files under ``top`` (itself a file or a
    directory), hidden names skipped, links not followed, at most ``budget``."""
    try:
        info = os.lstat(top)
    except OSError:
        return
    if stat.S_ISREG(info.st_mode):
        yield top, info.st_size, info.st_mtime
        return
    if not stat.S_ISDIR(info.st_mode):
        return
    count = 0
    for directory, subdirs, names in os.walk(top, followlinks=False):
        subdirs[:] = sorted(d for d in subdirs if not manifest.hidden(d))
        for name in sorted(names):
            if manifest.hidden(name):
                continue
            path = os.path.join(directory, name)
            try:
                entry = os.lstat(path)
            except OSError:
                continue
            if not stat.S_ISREG(entry.st_mode):
                continue
            yield path, entry.st_size, entry.st_mtime
            count += 1
            if count >= budget:
                return


def _data_files(table: Table) -> tuple[list[tuple[str, int, float]], str | None]:
    """The table's data files (at most ``MAX_FILES + 1``) and the job its manifest names."""
    if table.managed:
        roots = [table.location] if table.location else []
        job = None
    else:
        path = table.options.get("path", "")
        try:
            current = manifest.read(path) if path else None
        except manifest.ManifestError:
            current = None
        roots = [os.path.join(path, e) for e in current.entries] if current else [path]
        job = current.job if current and current.job else None
    files: list[tuple[str, int, float]] = []
    for root in roots:
        files.extend(_files_below(root, MAX_FILES + 1 - len(files)))
        if len(files) > MAX_FILES:
            break
    return files, job


def _parquet_rows(files: list[tuple[str, int, float]]) -> int | None:
    total = 0
    for path, _, _ in files:
        try:
            total += pq.read_metadata(path).num_rows
        except (OSError, ValueError, pa.ArrowException):
            return None  # a file that is not Parquet (or half written): no count
    return total


def _last_commit(table: Table, job_id: str | None, user: Any) -> dict[str, Any] | None:
    path = quote_path([table.database.catalog.name, table.database.name, table.name])
    events = JobEvent.objects.filter(type="data_committed", detail__table=path).select_related(
        "job__user"
    )
    if job_id is not None:
        events = events.filter(job_id=job_id)
    else:
        events = events.filter(
            job__status=jobstate.FINISHED,
            job__created_at__lte=table.updated_at,
            job__created_at__gte=table.updated_at - COMMIT_WINDOW,
        )
    event = events.order_by("-id").first()
    if event is None:
        return None
    job = event.job
    mine = user is not None and job.user_id == getattr(user, "pk", None)
    rows = event.detail.get("rows") if isinstance(event.detail, dict) else None
    return {
        "at": event.at,
        "kind": job.kind,
        "rows_written": rows if isinstance(rows, int) else None,
        "user": job.user.get_username() if job.user else None,
        # Jobs are their users' own (GET /jobs/{id} is 404 to others): the id only for them.
        "job": str(job.pk) if mine else None,
    }


def data_size(table: Table) -> tuple[int, int]:
    """The number of the table's data files and their total size (at most ``MAX_FILES``
    counted), as ``table_statistics`` reports them."""
    files, _ = _data_files(table)
    files = files[:MAX_FILES]
    return len(files), sum(size for _, size, _ in files)


def table_statistics(table: Table, user: Any) -> dict[str, Any]:
    """The statistics of ``table`` as ``GET …/tables/{t}/statistics`` answers them."""
    if table.status != Table.STATUS_ACTIVE:
        return {
            "files": 0,
            "size_bytes": 0,
            "row_count": None,
            "row_count_source": None,
            "complete": True,
            "last_modified": None,
            "last_commit": None,
            "column_statistics": None,
        }
    files, job = _data_files(table)
    complete = len(files) <= MAX_FILES
    files = files[:MAX_FILES]
    fmt = (table.options.get("format") or table.options.get("connector") or "parquet").lower()
    rows = _parquet_rows(files) if fmt == "parquet" and len(files) <= MAX_FOOTERS else None
    newest = max((mtime for _, _, mtime in files), default=None)
    return {
        "files": len(files),
        "size_bytes": sum(size for _, size, _ in files),
        "row_count": rows if complete else None,
        "row_count_source": "parquet footers" if rows is not None and complete else None,
        "complete": complete,
        "last_modified": _iso(newest),
        "last_commit": _last_commit(table, job, user),
        "column_statistics": table.column_statistics,
    }


def _iso(mtime: float | None) -> str | None:
    if mtime is None:
        return None
    from datetime import UTC, datetime

    return datetime.fromtimestamp(mtime, tz=UTC).isoformat().replace("+00:00", "Z")


__all__ = ["MAX_FILES", "MAX_FOOTERS", "data_size", "table_statistics"]
