"""A streaming CTAS/INSERT into a managed table through Spark's own file sink
(docs/streaming.md, "How a batch is committed").

- Spark's file sink (``writeStream.format(<the table's format>)``) writes each micro-batch
  into the job's sink directory ``<warehouse>/.tessera-streams/<job>/sink`` and records the
  batch's files, once per batch id, in its log ``_spark_metadata/<batch id>``. A batch Spark
  replays after a restart is skipped by the sink itself: the log is the exactly-once record
  of what each batch wrote. Compaction and deletion of that log are turned off for the
  job's session (``SINK_CONF``), so that each batch keeps its own log file.
- ``SinkCommitter`` (a thread of the runner, with its own database connection) commits the
  logged batches in order, each as the table's next version
  (``tabledata.stream_commit.commit_batch`` with the batch's files: hard links into the
  version's directory, which is what readers read; the sink directory itself is never a
  table's location). A ``StreamingQueryListener`` hands it each batch's progress report,
  so each ``batch_committed`` event carries that batch's own figures. Spark's next batch
  runs while the previous one commits: the catalog's transaction is not in the stream's
  path.
- A job run again (its worker lost) starts from the batch after the last one the table
  records (``tabledata.stream_commit.last_batch``): batches the sink logged before the worker
  went, but that were not committed, are committed first.

Every file a log names is checked before it is linked: a local ``file:`` URI, strictly
inside the sink directory once links are resolved, a regular file, no hidden segment.
Empty batches (no file) commit nothing.
"""

from __future__ import annotations

import json
import logging
import os
import re
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from django.db import close_old_connections, connection

from catalog import storage
from core import locations as core_locations
from core.errors import CoreError
from engine import locations, parser_sessions, write_runner
from engine.stream_sink import EVENT_FIGURES, StreamState, progress_figures
from tabledata import stream_commit

log = logging.getLogger(__name__)

LOG_DIR = "_spark_metadata"
# The job's session: one log file per batch, none deleted (the committer reads each).
SINK_CONF = {
    "spark.sql.streaming.fileSink.log.compactInterval": str(2**31 - 1),
    "spark.sql.streaming.fileSink.log.deletion": "false",
}
MAX_LOG_BYTES = 16 * 1024 * 1024
TICK_SECONDS = 0.5  # without a progress report, how often the committer looks at the log
# How long a logged batch waits for its progress report (which follows the sink's log by
# Spark's commit log write) before it commits without Spark's figures.
REPORT_WAIT_SECONDS = 2.0


class SinkLogError(CoreError):
    """A sink log the committer cannot trust: nothing of that batch is committed."""

    code = "SPARK_ERROR"


def _refused(uri: str, reason: str) -> core_locations.LocationRefused:
    return core_locations.LocationRefused(
        f"The stream's sink log names '{uri}', {reason}.", details={"path": uri}
    )


def _local_file(uri: str, sink: Path) -> Path:
    """The file a log entry names, relative to the (resolved) sink directory: a local
    ``file:`` URI, inside the sink once links are resolved, a regular file, not hidden."""
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost") or parts.query:
        raise _refused(uri, "not a local file")
    path = Path(unquote(parts.path))
    real = Path(os.path.realpath(path))
    if real != path or not core_locations.is_under(str(real), str(sink)) or real == sink:
        raise _refused(uri, "not a file of the stream's own directory")
    relative = real.relative_to(sink)
    if relative.parts[0] == LOG_DIR or any(p.startswith((".", "_")) for p in relative.parts):
        raise _refused(uri, "a hidden file")
    if not stat.S_ISREG(os.lstat(real).st_mode):
        raise _refused(uri, "not a regular file")
    return relative


def batch_files(sink: Path, batch_id: int) -> list[Path] | None:
    """The files the sink logged for ``batch_id`` (relative to ``sink``, which is resolved),
    None while the batch is not logged. ``SinkLogError`` for a log Tessera cannot read,
    ``LocationRefused`` for a file out of bounds."""
    log_dir = sink / LOG_DIR
    entry = log_dir / str(int(batch_id))
    try:
        info = os.lstat(entry)
    except FileNotFoundError:
        if (log_dir / f"{int(batch_id)}.compact").exists():
            raise SinkLogError(
                f"The stream's sink log compacted batch {batch_id}; Tessera reads batch by batch."
            ) from None
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_LOG_BYTES:
        raise SinkLogError(f"The stream's sink log of batch {batch_id} is not a plain file.")
    lines = entry.read_text(encoding="utf-8").splitlines()
    if not lines or not re.fullmatch(r"v1", lines[0].strip()):
        raise SinkLogError(f"The stream's sink log of batch {batch_id} has an unknown version.")
    files: list[Path] = []
    for line in lines[1:]:
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            path, action = str(record["path"]), record.get("action", "add")
        except (ValueError, KeyError, TypeError):
            raise SinkLogError(
                f"The stream's sink log of batch {batch_id} has an unreadable line."
            ) from None
        if action != "add" or record.get("isDir"):
            continue
        files.append(_local_file(path, sink))
    return sorted(set(files))


def rows_of(sink: Path, files: list[Path], fmt: str) -> int | None:
    """A batch's rows: its parquet footers (None for other formats)."""
    if fmt != "parquet":
        return None
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    try:
        return sum(int(pq.read_metadata(sink / name).num_rows) for name in files)
    except Exception:
        log.debug("could not count the rows of a batch", exc_info=True)
        return None


def prepare_sink(spark: Any, job_id: Any, shown: str) -> Path:
    """The job's sink directory, made and checked (resolved, in the warehouse, read by
    Hadoop as this local path); the session's sink settings."""
    wanted = stream_commit.sink_dir(job_id)
    wanted.mkdir(parents=True, exist_ok=True)
    with locations.refusals(f"Table {shown} cannot be written"):
        real = storage.resolved_managed_location(str(wanted))
        storage.check_tree(real, managed=True)
    locations.hadoop_agrees(spark, real)
    for key, value in SINK_CONF.items():
        parser_sessions.mirror_conf(spark, key, value)
    return Path(real)


class SinkCommitter:
    """Commits the batches a file sink logged, in order, each as the table's next version."""

    def __init__(
        self, job_id: Any, item: write_runner.PreparedWrite, state: StreamState, sink: Path
    ) -> None:
        self.job_id = job_id
        self.item = item
        self.state = state
        self.sink = sink
        self.next_batch = stream_commit.last_batch(job_id, item.identifier) + 1
        self.reports: dict[int, dict[str, Any]] = {}
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def on_progress(self, report: dict[str, Any]) -> None:
        """A progress report of the stream (Spark's listener thread): commit its batch."""
        batch_id = report.get("batchId")
        if isinstance(batch_id, int) and batch_id >= self.next_batch:
            with self._lock:
                self.reports[batch_id] = report
        self._wake.set()

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self._loop, name=f"stream-commit-{self.job_id}", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=60)

    def _loop(self) -> None:
        try:
            while not self._stop.is_set():
                self._wake.wait(TICK_SECONDS)
                self._wake.clear()
                if self._stop.is_set():
                    break
                self.catch_up(REPORT_WAIT_SECONDS)
        except BaseException as exc:  # the runner sees it and fails the job
            log.info("job %s: a batch could not be committed", self.job_id, exc_info=True)
            self.state.fail(exc)
        finally:
            connection.close()

    def _report(self, batch_id: int, wait: float) -> dict[str, Any] | None:
        deadline = time.monotonic() + wait
        while True:
            with self._lock:
                report = self.reports.pop(batch_id, None)
            left = deadline - time.monotonic()
            if report is not None or left <= 0 or self._stop.is_set():
                return report
            self._wake.wait(min(left, 0.05))
            self._wake.clear()

    def catch_up(self, wait: float = 0.0) -> int:
        """Commit every logged batch from ``next_batch`` on; returns how many. ``wait``: how
        long a batch may wait for its progress report (none: its figures are left out)."""
        close_old_connections()
        done = 0
        while True:
            with locations.refusals(f"Table {self.item.shown} cannot be written"):
                files = batch_files(self.sink, self.next_batch)
            if files is None:
                return done
            batch_id = self.next_batch
            report = self._report(batch_id, wait if files else 0.0)
            if files:
                self._commit(batch_id, files, report)
                done += 1
            self.next_batch = batch_id + 1

    def _commit(self, batch_id: int, files: list[Path], report: dict[str, Any] | None) -> None:
        item = self.item
        rows = rows_of(self.sink, files, item.format)
        known = self.state.target_rows
        target = None if known is None or rows is None else known + rows
        # The batch's own figures (none without its report: not another batch's).
        event: dict[str, Any] = dict.fromkeys(EVENT_FIGURES)
        stream = self.state.stream(
            batch_id=batch_id,
            batches=self.state.batches + 1,
            rows_committed=self.state.rows_committed + (rows or 0),
            target_rows=target,
        )
        started = None
        if report is not None:
            figures = progress_figures(report)
            event = {key: figures[key] for key in EVENT_FIGURES}
            stream.update(event)
            started = report.get("timestamp")  # when Spark began the batch's trigger
        done = stream_commit.commit_batch(
            self.job_id,
            item.identifier,
            batch_id,
            self.sink,
            files=files,
            rows=rows,
            ctas=item.mode == "ctas",
            event={**event, "batch_started_at": started, "rows": rows},
            stream=stream,
        )
        if done.committed:
            self.state.committed(batch_id, rows, target)


def progress_listener(query_id: Callable[[], Any], sink: SinkCommitter) -> Any:
    """A ``StreamingQueryListener`` handing the stream's progress reports to ``sink``."""
    from pyspark.sql.streaming.listener import StreamingQueryListener

    class _Listener(StreamingQueryListener):
        def onQueryStarted(self, event: Any) -> None:
            return None

        def onQueryProgress(self, event: Any) -> None:
            try:
                progress = event.progress
                if str(progress.id) != str(query_id()):
                    return
                sink.on_progress(json.loads(progress.json))
            except Exception:
                log.debug("a progress report was not read", exc_info=True)

        def onQueryIdle(self, event: Any) -> None:
            return None

        def onQueryTerminated(self, event: Any) -> None:
            return None

    return _Listener()
