"""The ``foreachBatch`` sinks of streaming jobs (docs/streaming.md).

- ``UpsertSink``: a streaming write into a keyed table (an upsert, or an aggregation in
  update mode): each batch's rows are merged into the table's current version as a batch
  upsert merges (``engine.upsert``: the last row per key wins), written into the
  batch's own staging directory, and the merged table committed exactly once as the batch's
  version by ``tabledata.stream_commit.commit_batch`` (a batch Spark replays after a restart is
  skipped there); merged again (at most ``upsert.RETRIES`` times) if another commit moved
  the table. Appends go through Spark's file sink instead (``engine.stream_files``).
- ``PreviewSink``: a streaming SELECT keeps the latest rows (at most
  ``min(result.max_rows, 1000)``, newest last) as the job's result, replaced after each batch
  once its reads are decided again (a revoke fails the stream before the batch is shown).

``StreamState`` is what the runner, the sinks, the committer and the job's monitor share:
Spark's last progress report, the batches and rows committed, the target's rows, an error
a sink raised. A sink runs in Spark's stream thread (a py4j callback): it uses its own
database connection and closes it after each batch.
"""

from __future__ import annotations

import json
import logging
import math
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.db import connection

from catalog import access as catalog_access
from catalog import storage
from core import jobstate
from core import options as table_options
from core.errors import Conflict
from engine import locations, write_runner
from engine import upsert as upsert_runner
from jobs import notify
from jobs.models import Job
from results.store import write_result
from tabledata import stream_commit

log = logging.getLogger(__name__)

PREVIEW_MAX_ROWS = 1000
_NO_WATERMARK = "1970-01-01T00:00:00"
# The Spark figures of a ``batch_committed`` event (``progress_figures``).
EVENT_FIGURES = (
    "num_input_rows",
    "input_rows_per_second",
    "processed_rows_per_second",
    "batch_duration_ms",
    "watermark",
)


def _number(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    return number if math.isfinite(number) else 0.0


def progress_figures(progress: Mapping[str, Any] | None) -> dict[str, Any]:
    """The figures of a Spark progress report (``StreamingQueryProgress`` as a dict)."""
    report = dict(progress or {})
    duration = report.get("durationMs") or {}
    watermark = (report.get("eventTime") or {}).get("watermark")
    if not isinstance(watermark, str) or watermark.startswith(_NO_WATERMARK):
        watermark = None
    return {
        "num_input_rows": int(_number(report.get("numInputRows"))),
        "input_rows_per_second": _number(report.get("inputRowsPerSecond")),
        "processed_rows_per_second": _number(report.get("processedRowsPerSecond")),
        "batch_duration_ms": int(_number(duration.get("triggerExecution"))),
        "watermark": watermark,
    }


@dataclass
class StreamState:
    """Shared by the runner, the sink (Spark's stream thread) and the monitor."""

    query: Any = None
    batch_id: int | None = None
    batches: int = 0
    rows_committed: int = 0
    target_rows: int | None = None
    failure: BaseException | None = None
    committer: Any = None  # an append's ``stream_files.SinkCommitter``
    cleanups: list[Callable[[], Any]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def figures(self) -> dict[str, Any]:
        query = self.query
        report: Any = None
        try:
            last = query.lastProgress if query is not None else None
            # ``StreamingQueryProgress.json`` is a property (the report's compact JSON).
            report = json.loads(last.json) if last is not None else None
        except Exception:
            log.warning("the stream's progress cannot be read", exc_info=True)
        return progress_figures(report)

    def stream(self, **changes: Any) -> dict[str, Any]:
        """``progress.stream`` as the contract gives it (with ``changes`` applied)."""
        with self._lock:
            current = {
                "batch_id": self.batch_id,
                "batches": self.batches,
                "rows_committed": self.rows_committed,
                "target_rows": self.target_rows,
            }
        current.update(changes)
        return {
            "batch_id": current["batch_id"] if current["batch_id"] is not None else -1,
            "batches": current["batches"],
            **self.figures(),
            "rows_committed": current["rows_committed"],
            "target_rows": current["target_rows"],
            "updated_at": datetime.now(UTC).isoformat(),
        }

    def progress(self) -> dict[str, Any]:
        """What the monitor adds to the job's progress at each heartbeat."""
        return {"stream": self.stream()}

    def committed(self, batch_id: int, rows: int | None, target_rows: int | None) -> None:
        with self._lock:
            self.batch_id = batch_id
            self.batches += 1
            self.rows_committed += rows or 0
            self.target_rows = target_rows

    def fail(self, exc: BaseException) -> None:
        with self._lock:
            if self.failure is None:
                self.failure = exc


@dataclass(frozen=True)
class UpsertSpec:
    """How a keyed target takes a batch: key, row kinds, the target as the plan reads it."""

    key: list[str]
    op_column: bool
    listed: list[str] | None
    relation: dict[str, Any]


def _observed(frame: Any, name: str) -> tuple[Any, Any]:
    from pyspark.sql import Observation
    from pyspark.sql import functions as sf

    observation = Observation(name)
    return frame.observe(observation, sf.count(sf.lit(1)).alias("rows")), observation


def _rows_of(observation: Any, location: str, fmt: str) -> int | None:
    try:
        if observation._jo.future().isCompleted():
            value = observation.get.get("rows")
            if isinstance(value, int):
                return value
    except Exception:
        log.debug("rows of a batch not observed", exc_info=True)
    return write_runner.parquet_rows(location) if fmt == "parquet" else None


class UpsertSink:
    """``foreachBatch`` of a streaming write into a keyed managed table."""

    def __init__(
        self, job_id: Any, item: write_runner.PreparedWrite, state: StreamState, upsert: UpsertSpec
    ) -> None:
        self.job_id = job_id
        self.item = item
        self.state = state
        self.upsert = upsert
        self.ctas = item.mode == "ctas"

    def __call__(self, batch: Any, batch_id: int) -> None:
        try:
            self.commit(batch, int(batch_id))
        except BaseException as exc:
            self.state.fail(exc)
            raise
        finally:
            connection.close()  # this thread's own connection (Spark's stream thread)

    def _staging(self, batch: Any, batch_id: int) -> str:
        staged = stream_commit.batch_staging(self.job_id, batch_id)
        staged.parent.mkdir(parents=True, exist_ok=True)
        with locations.refusals(f"Table {self.item.shown} cannot be written"):
            real = storage.resolved_managed_location(str(staged))
        locations.hadoop_agrees(batch.sparkSession, real)
        return real

    def _write(self, frame: Any, real: str, name: str) -> int | None:
        item = self.item
        target = locations.CheckedSource(item.format, real, {})
        with locations.refusals(f"Table {item.shown} cannot be written"):
            options = table_options.check_options(item.format, dict(item.options))
        observed, observation = _observed(frame, name)
        writer = observed.write.format(item.format).mode("overwrite")
        if options:
            writer = writer.options(**options)
        if item.partition_by:
            writer = writer.partitionBy(*item.partition_by)
        writer.save(real)
        locations.checked_written(target, {"managed": True}, item.shown)
        return _rows_of(observation, real, item.format)

    def commit(self, batch: Any, batch_id: int) -> None:
        if stream_commit.was_committed(self.job_id, self.item.identifier, batch_id):
            log.info("job %s: batch %s was committed before; skipped", self.job_id, batch_id)
            return  # replayed after a restart: not even written again
        self._commit_upsert(batch, batch_id)

    def _commit(
        self,
        batch_id: int,
        real: str,
        rows: int | None,
        version_rows: int | None,
        target_rows: int | None,
        base: str | None,
    ) -> None:
        stream = self.state.stream(
            batch_id=batch_id,
            batches=self.state.batches + 1,
            rows_committed=self.state.rows_committed + (rows or 0),
            target_rows=target_rows,
        )
        # Spark reports a batch after its foreachBatch returns: its figures are not known yet
        # (the job's progress.stream has the latest report).
        event = dict.fromkeys(EVENT_FIGURES)
        done = stream_commit.commit_batch(
            self.job_id,
            self.item.identifier,
            batch_id,
            Path(real),
            rows=version_rows,
            ctas=self.ctas,
            base=base,
            event={**event, "rows": rows},
            stream=stream,
        )
        if done.committed:
            self.state.committed(batch_id, rows, target_rows)

    def _commit_upsert(self, batch: Any, batch_id: int) -> None:
        spec = self.upsert
        item = self.item
        spark = batch.sparkSession
        physical = spark.createDataFrame([], str(spec.relation.get("physical_schema"))).schema
        targets = spec.listed or [f.name for f in physical.fields]
        rows_of_kind = upsert_runner.with_row_kind(
            batch, op_column=spec.op_column, targets=targets, key=spec.key, shown=item.shown
        )
        changes = upsert_runner.Changes(
            write_runner.insert_frame(rows_of_kind, physical, spec.listed, item.shown, 2),
            spec.key,
            spec.relation,
        )
        columns = [f.name for f in physical.fields]
        for attempt in range(upsert_runner.RETRIES + 1):
            base = upsert_runner.current_location(item.identifier)
            current = upsert_runner.read_base(spark, spec.relation, base, item.shown)
            merged, observations = upsert_runner.merged(changes, current.select(*columns), columns)
            real = self._staging(batch, batch_id)
            try:
                total = self._write(merged, real, f"tessera_stream_{batch_id}_{attempt}")
            except Exception as exc:
                refused = upsert_runner.validation_error(exc)
                if refused is not None:
                    raise refused from None
                raise
            changed = upsert_runner._metrics(observations)  # inserted, updated, deleted
            rows = sum(changed.values()) if changed else None
            try:
                self._commit(batch_id, real, rows, total, total, base)
                return
            except Conflict:
                if attempt == upsert_runner.RETRIES:
                    raise
                log.info("job %s: batch %s merged again (the table moved)", self.job_id, batch_id)


def recheck_reads(job_id: Any) -> None:
    """The reads of a streaming SELECT, decided again before its batch becomes the result
    (``catalog.access.recheck_reads``: what its user and each view's owner hold, afresh)."""
    job = Job.objects.select_related("user").get(pk=job_id)
    catalog_access.recheck_reads(job.user, job.access or [])


class PreviewSink:
    """``foreachBatch`` of a streaming SELECT: the latest rows as the job's result."""

    def __init__(
        self,
        job_id: Any,
        columns: Sequence[dict[str, Any]],
        limit: int,
        state: StreamState,
        *,
        complete: bool,
    ) -> None:
        self.job_id = job_id
        self.columns = [dict(c) for c in columns]
        self.limit = max(1, min(int(limit), PREVIEW_MAX_ROWS))
        self.state = state
        self.complete = complete  # complete mode: each batch is the whole result
        self.tail: Any = None
        self.seen = 0

    def __call__(self, batch: Any, batch_id: int) -> None:
        try:
            self.show(batch, int(batch_id))
        except BaseException as exc:
            self.state.fail(exc)
            raise
        finally:
            connection.close()

    def show(self, batch: Any, batch_id: int) -> None:
        import pyarrow as pa  # type: ignore[import-untyped]

        limit = self.limit
        table = batch.limit(limit + 1 if self.complete else limit).toArrow()
        if self.complete or self.tail is None:
            combined = table
        else:
            combined = pa.concat_tables([self.tail, table.cast(self.tail.schema)])
        self.seen = table.num_rows if self.complete else self.seen + table.num_rows
        truncated = self.seen > limit
        if combined.num_rows > limit:
            start = 0 if self.complete else combined.num_rows - limit
            combined = combined.slice(start, limit)
        self.tail = combined
        recheck_reads(self.job_id)  # a revoke counts from the next batch: nothing stored
        result = write_result(self.job_id, combined, columns=self.columns, truncated=truncated)
        self.state.committed(batch_id, table.num_rows, combined.num_rows)
        if Job.objects.filter(pk=self.job_id, status=jobstate.RUNNING).update(
            result=result, progress={"stream": self.state.stream()}
        ):
            notify.announce(self.job_id, notify.PROGRESS)
