"""The streaming runner: a plan with ``args.streaming`` runs on Structured Streaming
(docs/streaming.md).

``engine.run`` hands it a claimed job. Then:

1. Registration: streaming table relations over ``spark.readStream`` (checked as batch
   reads are, ``engine.stream_sources``), views and functions as for batch plans.
2. The query, through the guard as every batch query (``sqlguard.guard(spark).sql``); it
   must be streaming. A write is analysed as a batch write is (``write_runner.prepare_writes``:
   a CTAS's schema, an INSERT's casts; VALIDATION_ERROR before anything runs); a streaming
   CTAS's table is then made readable, empty (``tabledata.stream_commit.activate_table``).
3. ``writeStream`` into Spark's file sink, whose batches a committer commits (an append,
   ``engine.stream_files``), or with ``foreachBatch`` (an upsert, a SELECT's preview:
   ``engine.stream_sink``); the checkpoint
   ``<data dir>/checkpoints/<job id>`` (so the same job run again continues from it), the
   trigger ``processingTime = trigger_ms``, ``queryName`` = the job id, in the FAIR pool
   ``streaming``. Output mode: ``update`` for an aggregation into a keyed table (each batch
   an upsert), ``complete`` for an aggregation previewed by a SELECT, else ``append``. A
   stream Spark refuses at start fails with ``STREAMING_UNSUPPORTED`` and Spark's reason.
4. The job stays RUNNING while the stream runs; the monitor heartbeats, adds the stream's
   figures to the progress, and ends the job on cancel (``query.stop()`` follows within a
   poll) or on its timeout — only one the session set explicitly (``job.timeout_seconds``):
   streams run for as long as they are wanted. A Spark failure fails the job with Spark's
   message (server paths scrubbed).
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Mapping
from typing import Any

from django.conf import settings

from core import jobstate
from core import options as table_options
from core.errors import CoreError
from core.planner import Action, Plan
from core.session_properties import JOB_TIMEOUT_SECONDS
from engine import (
    errors,
    locations,
    parser_sessions,
    registration,
    spark_session,
    sqlguard,
    stream_files,
    write_runner,
)
from engine import upsert as upsert_runner
from engine.control import SparkJobControl
from engine.monitor import JobMonitor, job_properties, timeout_seconds
from engine.stream_sink import PreviewSink, StreamState, UpsertSink, UpsertSpec
from engine.stream_sources import register_stream_plan
from engine.typing import result_columns
from jobs import lifecycle, notify
from jobs.models import Job
from tabledata import staging, stream_commit

log = logging.getLogger(__name__)

STREAMING_UNSUPPORTED = "STREAMING_UNSUPPORTED"
POOL = "streaming"  # the FAIR pool every stream's micro-batches run in
POLL_SECONDS = 0.2  # how often the runner looks at its monitor while the stream runs
STOP_TIMEOUT = "30s"  # how long query.stop() waits for the stream's thread
TRIGGER_MS = (100, 3_600_000)
# An analysed plan's line; streaming nodes are marked "~" ("~Aggregate [name#1], …").
_AGGREGATE = re.compile(r"^[\s|:+!~-]*(?:Aggregate|Distinct)\b", re.MULTILINE)


class StreamingUnsupported(CoreError):
    """A statement Structured Streaming cannot run (Spark's reason in the message)."""

    code = STREAMING_UNSUPPORTED


def trigger_ms(plan: Plan) -> int:
    value = (plan.args.get("streaming") or {}).get("trigger_ms")
    low, high = TRIGGER_MS
    if type(value) is not int or not low <= value <= high:
        raise CoreError(
            f"A streaming plan's trigger is a whole number of milliseconds from {low} to "
            f"{high:,}, not {value!r}."
        )
    return value


def stream_timeout(job: Job, properties: Mapping[str, Any]) -> float:
    """A stream runs until it is stopped: only a ``job.timeout_seconds`` the session set
    itself ends it (within the server's range)."""
    given = dict(job.session.properties or {}) if job.session is not None else {}
    if JOB_TIMEOUT_SECONDS in given:
        return float(timeout_seconds(job, properties))
    return math.inf


def aggregates(frame: Any) -> bool:
    """Whether the (analysed) query aggregates: its output mode depends on it."""
    plan = str(frame._jdf.queryExecution().analyzed().toString())
    return bool(_AGGREGATE.search(plan))


def _checkpoint(spark: Any, job_id: Any) -> str:
    path = stream_commit.checkpoint_dir(job_id)
    path.mkdir(parents=True, exist_ok=True)
    locations.hadoop_agrees(spark, str(path))
    return str(path)


def _primary_key(identifier: list[str]) -> list[str]:
    resolved = write_runner.table_field(identifier, "resolved_schema")
    key = (resolved or {}).get("primary_key") or {}
    return [str(name) for name in key.get("columns") or []]


Sink = UpsertSink | PreviewSink | stream_files.SinkCommitter


def _table_sink(spark: Any, job: Job, plan: Plan, state: StreamState) -> tuple[Any, Sink, str]:
    """The frame to stream, its sink and its output mode, for a CTAS or an INSERT: an
    upsert's ``foreachBatch``, or (appends) Spark's file sink and the committer of its
    batches."""
    prepared = write_runner.prepare_writes(spark, job, plan)
    if len(prepared) != 1 or prepared[0].mode not in ("ctas", "insert", "upsert"):
        raise StreamingUnsupported(
            "A streaming statement writes one table, by CREATE TABLE … AS SELECT or INSERT "
            "INTO (not OVERWRITE, not a statement set)."
        )
    item = prepared[0]
    ctas = item.mode == "ctas"
    if not staging.entry(job, item.identifier).get("managed"):
        raise StreamingUnsupported(f"A stream writes managed tables only; {item.shown} is not.")
    sql = str(plan.args.get("sql") or plan.sql)
    query = sqlguard.guard(spark).sql(sql)
    if not query.isStreaming:
        raise StreamingUnsupported("The query reads no streaming source: nothing to stream.")
    if ctas:
        stream_commit.activate_table(job.id, item.identifier)
    else:
        stream_commit.check_writable(job.id, item.identifier, ctas=False)
    grouped = aggregates(query)
    upsert: UpsertSpec | None = None
    args = plan.args
    key = [str(k) for k in args.get("key") or []] if item.mode == "upsert" else []
    if not key and not ctas and grouped:
        key = _primary_key(item.identifier)
    if key:
        upsert = UpsertSpec(
            key,
            bool(args.get("op_column")) and item.mode == "upsert",
            write_runner.listed_columns(args, query),
            dict(args.get("table") or {}),
        )
    batches, rows = stream_commit.totals(job.id, item.identifier)
    location = upsert_runner.current_location(item.identifier)
    target = write_runner.parquet_rows(location) if item.format == "parquet" else None
    state.batches, state.rows_committed, state.target_rows = batches, rows, target
    if upsert is not None:
        mode = "update" if grouped else "append"
        return query, UpsertSink(job.id, item, state, upsert), mode
    sink = stream_files.prepare_sink(spark, job.id, item.shown)
    return item.frame, stream_files.SinkCommitter(job.id, item, state, sink), "append"


def _file_sink(writer: Any, committer: stream_files.SinkCommitter) -> Any:
    """``writer`` into Spark's file sink of the committer's directory: the table's format,
    its checked write options and partitioning."""
    item = committer.item
    with locations.refusals(f"Table {item.shown} cannot be written"):
        options = table_options.check_options(item.format, dict(item.options))
    writer = writer.format(item.format).option("path", str(committer.sink))
    if options:
        writer = writer.options(**options)
    if item.partition_by:
        writer = writer.partitionBy(*item.partition_by)
    return writer


def _preview_sink(
    spark: Any, job: Job, plan: Plan, limit: int, state: StreamState
) -> tuple[Any, PreviewSink, str]:
    if plan.action != Action.QUERY:
        raise StreamingUnsupported(f"'{plan.action}' statements cannot run as a stream.")
    frame = sqlguard.guard(spark).sql(plan.sql, "query", plan.args.get("parameters"))
    if not frame.isStreaming:
        raise StreamingUnsupported("The query reads no streaming source: nothing to stream.")
    columns = result_columns(frame.schema)
    complete = aggregates(frame)
    sink = PreviewSink(job.id, columns, limit, state, complete=complete)
    return frame, sink, "complete" if complete else "append"


def start(spark: Any, job: Job, plan: Plan, preview_rows: int, state: StreamState) -> Any:
    """Analyse the plan, prepare the target and start the stream; returns the query.
    ``preview_rows``: the rows a streaming SELECT keeps (``run.max_rows``)."""
    every = trigger_ms(plan)
    sink: Sink
    if plan.writes:
        frame, sink, mode = _table_sink(spark, job, plan, state)
    else:
        frame, sink, mode = _preview_sink(spark, job, plan, preview_rows, state)
    parser_sessions.mirror_conf(spark, "spark.sql.streaming.stopTimeout", STOP_TIMEOUT)
    stream_commit.check_held(job.id)
    writer = (
        frame.writeStream.queryName(str(job.id))
        .option("checkpointLocation", _checkpoint(spark, job.id))
        .trigger(processingTime=f"{every} milliseconds")
        .outputMode(mode)
    )
    if isinstance(sink, stream_files.SinkCommitter):
        writer = _file_sink(writer, sink)
        sink.catch_up()  # batches a run before this one logged and did not commit
        listener = stream_files.progress_listener(
            lambda: state.query.id if state.query is not None else None, sink
        )
        spark.streams.addListener(listener)
        state.cleanups.append(lambda: spark.streams.removeListener(listener))
        state.committer = sink
        sink.start()
    else:
        writer = writer.foreachBatch(sink)
    try:
        query = writer.start()
    except Exception as exc:
        if not errors.is_spark_exception(exc):
            raise
        reason = errors.job_error(exc, registration.alias_names(plan)).message
        raise StreamingUnsupported(
            f"Spark cannot run this statement as a stream: {reason}",
            details={"output_mode": mode},
        ) from None
    lifecycle.record_event(job.id, "stream_started", {"output_mode": mode, "trigger_ms": every})
    return query


def _run(query: Any, monitor: JobMonitor, state: StreamState) -> None:
    """Wait while the stream runs: return when the monitor ended the job (the caller stops
    the query) or raise the stream's failure (Spark's, or a batch's commit's)."""
    while monitor.outcome is None:
        if state.failure is not None:
            raise state.failure
        if query.awaitTermination(POLL_SECONDS):
            failure = query.exception()
            if failure is not None:
                raise failure
            raise CoreError("The stream stopped on its own; it was not asked to.")


def _stop(query: Any, job_id: Any) -> None:
    try:
        query.stop()
    except Exception:
        log.warning("job %s: the stream did not stop cleanly", job_id, exc_info=True)


def run_stream(
    job: Job, plan: Plan, watch: notify.Watch, spark: Any = None, preview_rows: int = 1000
) -> str:
    """Run a claimed streaming job until it is canceled, times out or fails
    (``preview_rows``: the rows a streaming SELECT keeps as its result)."""
    properties = job_properties(job)
    spark = spark or spark_session.new_job_session()
    control = SparkJobControl(spark, str(job.id), POOL)
    state = StreamState()
    monitor = JobMonitor(
        job.id, control, stream_timeout(job, properties), watch, extra=state.progress, stages=False
    )
    failure: BaseException | None = None
    query: Any = None
    control.enter()
    monitor.start()
    try:
        if control.connect:
            raise errors.UnsupportedRuntime(
                "Streaming statements run on the local and cluster runtimes, not on Spark "
                "Connect (its foreachBatch runs outside the worker)."
            )
        register_stream_plan(spark, plan, properties, settings.TESSERA_UDF_PACKAGES, job.session_id)
        if monitor.outcome is None:
            query = start(spark, job, plan, preview_rows, state)
            state.query = query
            _run(query, monitor, state)
    except Exception as exc:
        failure = spark_session.failure_of(spark, state.failure or exc)
    finally:
        if query is not None:
            _stop(query, job.id)
        _finish_commits(state, job.id, final=monitor.outcome is None)
        monitor.stop()
        control.leave()
    # The identity this runner claimed the job under (``jobs.identity.current_identity``, set
    # by the claim): a stream requeued while this worker was taken for lost (paused, cut
    # off) and claimed by another one since is not ours to end, nor its checkpoint ours to
    # remove (docs/streaming.md, "A stream survives its worker").
    here = str(job.worker or "")
    if monitor.outcome is None:
        error = errors.job_error(
            failure or CoreError("The stream ended."), registration.alias_names(plan)
        )
        ended = lifecycle.try_transition(
            job.id,
            jobstate.RUNNING,
            jobstate.FAILED,
            held_by=here,
            error=error,
            progress=state.progress(),
        )
        if ended is not None:
            log.info("job %s (stream) failed: %s", job.id, error.message)
        else:
            log.warning("job %s (stream) is no longer this worker's: %s", job.id, error.message)
    status, holder = _status_of(job.id)
    # Not when requeued to run again from its checkpoint, nor when another worker holds it.
    if status in jobstate.TERMINAL and (not here or not holder or holder == here):
        stream_commit.clean_stream(job.id)
    return status


def _finish_commits(state: StreamState, job_id: Any, *, final: bool) -> None:
    """Stop the committer and the listener; ``final`` (the job still RUNNING: the stream
    failed): commit what the sink logged before the failure, as a failed stream keeps its
    committed batches."""
    committer = state.committer
    if committer is not None:
        committer.stop()
        if final and state.failure is None:
            try:
                committer.catch_up()
            except Exception:
                log.info("job %s: the last batches were not committed", job_id, exc_info=True)
    for cleanup in state.cleanups:
        try:
            cleanup()
        except Exception:
            log.debug("job %s: a stream's cleanup failed", job_id, exc_info=True)
    state.cleanups.clear()


def _status_of(job_id: Any) -> tuple[str, str]:
    """The job's status and the worker that holds it (``Job.worker``)."""
    row = Job.objects.filter(pk=job_id).values_list("status", "worker").first()
    return (str(row[0] or ""), str(row[1] or "")) if row is not None else ("", "")
