"""Run one job on Spark: claim, register, execute, store the result, end the job.

``run_job(job_id, worker)`` is what the Celery task ``tessera.run_job`` calls. A message is
a free slot, not an order: the worker claims the fairest CREATED job then
(``jobs.scheduling``: the user with the fewest running jobs first, none beyond the user's
running limit), so one user's long queue does not hold back another's statement. The job
rows decide everything: the claim (CREATED → RUNNING) is one conditional UPDATE, so a job
never runs twice, and a redelivered or duplicated message finds nothing, or the next job.

While Spark works, a monitor thread watches the row: it is woken by the job's ``cancel``
notification (``jobs.notify``, watched from before the claim, so none is missed) and reads
the row then, and at least every ``HEARTBEAT_SECONDS``. On ``cancel_requested`` it stops
the Spark work (job tag + job group) and moves the job to CANCELED; past
``timeout_seconds`` it stops it and fails the job with ``TIMEOUT``; every
``HEARTBEAT_SECONDS`` it writes ``heartbeat_at`` and ``progress`` and announces the
progress.

Writes (``ctas``, ``insert``, ``statement_set``) run under the same monitor; what they do
between the registration and the terminal transition is ``engine.write_runner``.
A plan with ``args.streaming`` (a streaming SELECT, CTAS or INSERT) goes to
``engine.streaming``: it runs until it is canceled, times out or fails.

DDL that needs Spark only for analysis (``create_table`` with expressions, ``create_view``,
``create_function``) goes to ``sessions.commands.run_command``, which makes the transitions
of those jobs itself; this module only lends it Spark's typer and schema derivation.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from django.conf import settings

from core import jobstate
from core.planner import QUERY_ACTIONS, ROW_CHANGE_ACTIONS, WRITE_ACTIONS, Action, Plan
from engine import (
    analyze_table,
    errors,
    large_results,
    pipeline,
    pool,
    readable,
    registration,
    row_changes,
    spark_session,
    sqlguard,
    streaming,
    write_runner,
)
from engine.control import SparkJobControl, pool_of
from engine.monitor import JobMonitor, job_properties, timeout_seconds
from engine.typing import SparkExpressionTyper, ViewSchemaDeriver, result_columns
from jobs import lifecycle, notify, scheduling
from jobs.errors import INTERNAL_ERROR, JobError
from jobs.identity import current_identity
from jobs.models import Job
from jobs.running import running_here
from results.store import delete_result, write_result
from sessions.commands import run_command
from sessions.planning import session_properties
from tabledata import stream_commit
from tabledata.staging import write_targets

log = logging.getLogger(__name__)

# DDL that needs Spark's analyzer (computed columns, views) or a UDF package's import
# check; ``sessions.commands.run_command`` does the rest, here as in the web process.
SPARK_COMMAND_ACTIONS = frozenset({Action.CREATE_TABLE, Action.CREATE_VIEW, Action.CREATE_FUNCTION})


# What a job's error says when its Spark died under it; in an engine process (``engine.host``)
# such a job ends by ``lost_with_engine`` (retried once on a fresh engine, or failed).
ENGINE_DEATH = frozenset({errors.SPARK_OUT_OF_MEMORY, errors.ENGINE_LOST})
lost_with_engine: Callable[[Job, JobError], Any] | None = None


# --- what a job needs from its row --------------------------------------------------------


def max_rows(properties: Mapping[str, Any], plan: Plan | None = None) -> int:
    """Rows of a result that are kept: the statement's ``row_limit`` (checked again: at most
    ``TESSERA_RESULT_DOWNLOAD_MAX_ROWS``), else ``result.max_rows``, at most the server's
    limit."""
    row_limit = plan.args.get("row_limit") if plan is not None else None
    if type(row_limit) is int and 1 <= row_limit <= settings.TESSERA_RESULT_DOWNLOAD_MAX_ROWS:
        return row_limit
    return session_properties().result_max_rows(properties)


# --- executing the plan -------------------------------------------------------------------


def _explain_sql(plan: Plan) -> str:
    sql = plan.sql
    if sql.lstrip().upper().startswith("EXPLAIN"):
        return sql
    mode = str(plan.args.get("mode") or "").upper()
    mode = mode if mode in {"EXTENDED", "CODEGEN", "COST", "FORMATTED"} else ""
    return f"EXPLAIN {mode + ' ' if mode else ''}{sql}"


def execute_query(spark: Any, plan: Plan, job_id: Any, limit: int) -> dict[str, Any]:
    """Run a query/explain plan and store its first ``limit`` rows; returns the result dict."""
    explain = plan.action == Action.EXPLAIN
    sql = _explain_sql(plan) if explain else plan.sql
    parameters = None if explain else plan.args.get("parameters")
    frame = sqlguard.guard(spark).sql(sql, "explain" if explain else "query", parameters)
    columns = result_columns(frame.schema)
    if not explain and large_results.is_large(limit):  # a row_limit: not through the driver
        small = int(settings.TESSERA_RESULT_MAX_ROWS)
        if not large_results.probably_small(frame):
            return readable.large_result(spark, frame, job_id, limit, columns)
        table, text = readable.arrow_result(frame, small)
        if table.num_rows > small:  # larger than estimated: written the large way after all
            return readable.large_result(spark, frame, job_id, limit, columns)
    else:
        table, text = readable.arrow_result(frame, limit)
    columns = readable.flag_columns(columns, text)
    truncated = table.num_rows > limit
    if truncated:
        table = table.slice(0, limit)
    if explain:
        table = _scrubbed_plan(table)
    result: dict[str, Any] = write_result(job_id, table, columns=columns, truncated=truncated)
    return result


def _scrubbed_plan(table: Any) -> Any:
    """EXPLAIN's text without server paths (file indexes name their directories): tables
    by name, server directories by placeholder, as in error messages."""
    import pyarrow as pa  # type: ignore[import-untyped]

    columns = [
        pa.array([errors.scrub_paths(v) if isinstance(v, str) else v for v in column.to_pylist()])
        if pa.types.is_string(column.type)
        else column
        for column in table.columns
    ]
    return pa.table(columns, names=table.column_names)


def run_job(job_id: Any, worker: str) -> str | None:
    """A worker slot is free (a ``tessera.run_job`` message, ``job_id`` the job it was sent
    for): claim the fairest eligible job (``jobs.scheduling``), which may be another one,
    run it, and hand the slot on. Returns the status the claimed job ended in (None: there
    was nothing to claim; the message is dropped)."""
    # Claimed under this process's identity (``jobs.worker``): the reaper judges the job by
    # the process that claimed it, not by a node name a restart would share.
    identity = current_identity() or worker
    with contextlib.ExitStack() as stack:
        watches: list[notify.Watch] = []

        def watch_cancel(claimed_id: Any) -> None:
            # Watched from before the claim commits: a cancel asked the moment the job is
            # RUNNING wakes its monitor. Registered as running here from before the claim to
            # after its end: if the end cannot reach the database, the worker fails the job
            # later (maintenance.fail_orphaned_jobs).
            stack.enter_context(running_here(claimed_id))
            watches.append(stack.enter_context(notify.watch([claimed_id], (notify.CANCEL,))))

        job = scheduling.claim_next(identity, watch_cancel)
        if job is None:
            _log_nothing_claimed(job_id)
            return None
        if str(job.pk) != str(job_id):
            log.info("job %s: the free slot took job %s (fairer) first", job_id, job.pk)
        engines_pool = pool.current()
        if engines_pool is not None:  # share level user/team: on the key's own engine
            status = engines_pool.run(job)
        else:
            status = run_claimed_job(job, watches[-1])
    try:
        scheduling.hand_on(job.user_id)
    except Exception:  # the sweeper sends it later
        log.exception("job %s: could not hand the free slot on", job.pk)
    return status


def _log_nothing_claimed(job_id: Any) -> None:
    status = Job.objects.filter(pk=job_id).values_list("status", flat=True).first()
    if status is None:
        log.warning("job %s does not exist; message dropped", job_id)
    elif status != jobstate.CREATED:
        log.info("job %s is %s already; message dropped", job_id, status)
    else:
        try:
            scheduling.note_waiting(job_id)  # the job's events say why it waits
        except Exception:
            log.exception("job %s: could not record why it waits", job_id)
        log.info(
            "job %s waits, not eligible now (its user is at the running limit, or the last "
            "free slot is kept for another user); message dropped",
            job_id,
        )


def run_claimed_job(job: Job, watch: notify.Watch) -> str | None:
    try:
        plan = job.typed_plan
    except (KeyError, TypeError, ValueError):  # not a plan the planner would make
        plan = None
    runnable = QUERY_ACTIONS | SPARK_COMMAND_ACTIONS | WRITE_ACTIONS | {Action.ANALYZE_TABLE}
    if plan is not None and plan.action == Action.PIPELINE:
        return pipeline.run_pipeline(job, plan, watch, _run_job)
    if plan is None or plan.action not in runnable:
        what = f"'{plan.action}' statements" if plan is not None else "jobs without a readable plan"
        lifecycle.try_transition(
            job.pk,
            jobstate.RUNNING,
            jobstate.FAILED,
            error=JobError(INTERNAL_ERROR, f"Workers do not run {what}."),
        )
        return _status_of(job.pk)
    return _run_job(job, plan, watch)


def _run_job(job: Job, plan: Plan, watch: notify.Watch, spark: Any = None) -> str | None:
    """Run a claimed job; ``spark``: the SparkSession to run it in (a pipeline's statement
    runs in its pipeline's), else a new one of its own."""
    job_id, action = job.id, plan.action
    # Spark's messages name the job's tables, not their paths on this server (the staging
    # of a write was decided when the job was created, before this row was read).
    with errors.known_locations(
        errors.plan_locations(plan, dict(job.staging or {}), list(job.access or []))
    ):
        try:
            if stream_commit.is_streaming(plan):
                limit = max_rows(job_properties(job), plan)
                return streaming.run_stream(job, plan, watch, spark, preview_rows=limit)
            if action in SPARK_COMMAND_ACTIONS:
                return _run_command(job, plan, spark)
            if action in WRITE_ACTIONS:
                return _run_write(job, plan, watch, spark)
            return _run_claimed(job, plan, watch, spark)
        except Exception as exc:  # never leave a claimed job RUNNING behind
            log.exception("job %s: the executor failed", job_id)
            lifecycle.try_transition(
                job_id,
                jobstate.RUNNING,
                jobstate.FAILED,
                held_by=str(job.worker or "") or None,  # not a job another worker holds now
                error=errors.job_error(
                    exc, registration.alias_names(plan), texts=_texts(job, plan)
                ),
            )
            return _status_of(job_id)


def _texts(job: Job, plan: Plan) -> tuple[str, str]:
    """What Spark parsed (the spliced SQL) and what the user wrote, to place its errors."""
    return plan.sql, str(job.sql or "")


def _write_texts(job: Job, plan: Plan) -> tuple[str, str] | None:
    """The query Spark runs for a write of one target and the statement as written; None for
    a statement set (several queries: an error's place would be ambiguous)."""
    targets = list(write_targets(plan))
    if len(targets) != 1:
        return None
    return str(targets[0]["args"].get("sql") or plan.sql or ""), str(job.sql or "")


def _staging_of(job_id: Any) -> dict[str, Any]:
    staging = Job.objects.filter(pk=job_id).values_list("staging", flat=True).first()
    return dict(staging or {})


def _run_claimed(job: Job, plan: Plan, watch: notify.Watch, spark: Any = None) -> str:
    properties = job_properties(job)
    spark = spark or spark_session.new_job_session()
    control = SparkJobControl(spark, str(job.id), pool_of(job))
    monitor = JobMonitor(job.id, control, timeout_seconds(job, properties), watch)
    failure: BaseException | None = None
    result: dict[str, Any] | None = None
    control.enter()
    monitor.start()
    try:
        registration.register_plan(
            spark, plan, properties, settings.TESSERA_UDF_PACKAGES, job.session_id
        )
        if monitor.outcome is None and plan.action == Action.ANALYZE_TABLE:
            result = analyze_table.execute(spark, plan, job.id)
        elif monitor.outcome is None:
            result = execute_query(spark, plan, job.id, max_rows(properties, plan))
    except Exception as exc:
        # A JVM that died or stopped answering under the job: a clear SPARK_* error (and
        # the next job gets a new JVM), not a py4j socket message.
        failure = spark_session.failure_of(spark, exc)
    finally:
        monitor.stop()
        control.leave()
    if monitor.outcome is not None:  # canceled, timed out or gone: the monitor ended it
        if result is not None:
            delete_result(job.id)
        # Killed tasks that missed their interrupt would hold the cores for minutes.
        control.wait_idle(write_runner.SETTLE_SECONDS)
        control.record_stages()
        return _status_of(job.id)
    if failure is not None:
        error = errors.job_error(failure, registration.alias_names(plan), texts=_texts(job, plan))
        if lost_with_engine is not None and error.code in ENGINE_DEATH:
            log.warning("job %s lost with its engine: %s", job.id, error.message)
            lost_with_engine(job, error)  # an engine process: retried once, or failed
            return _status_of(job.id)
        if error.code == INTERNAL_ERROR:
            log.error("job %s failed", job.id, exc_info=failure)
        elif error.code in {errors.SPARK_OUT_OF_MEMORY, errors.ENGINE_LOST}:
            log.warning("job %s failed: %s", job.id, error.message)
        else:
            log.info("job %s failed: %s", job.id, error.message)
        lifecycle.try_transition(
            job.id, jobstate.RUNNING, jobstate.FAILED, error=error, progress=control.ended()
        )
        control.record_stages()
        return _status_of(job.id)
    finished = lifecycle.try_transition(
        job.id,
        jobstate.RUNNING,
        jobstate.FINISHED,
        known=job,
        result=result,
        progress=control.ended(succeeded=True),
    )
    if finished is None:  # canceled, timed out or reaped meanwhile: that outcome stands
        delete_result(job.id)
        return _status_of(job.id)
    control.record_stages()  # after the end: reading them never delays the answer
    return jobstate.FINISHED


def _run_write(job: Job, plan: Plan, watch: notify.Watch, spark: Any = None) -> str:
    """CTAS, INSERT, statement sets (``engine.write_runner``): analyse every target, write
    each into its staging location under the job's tag and group, then FINISHED (the commit
    runs inside that transition) or FAILED/CANCELED (``clean_up_write`` cleans up; the
    steps are listed in ``jobs.steps``)."""
    properties = job_properties(job)
    spark = spark or spark_session.new_job_session()
    control = SparkJobControl(spark, str(job.id), pool_of(job))
    monitor = JobMonitor(job.id, control, timeout_seconds(job, properties), watch)
    failure: BaseException | None = None
    prepared: list[write_runner.PreparedWrite] = []
    changes: list[row_changes.RowChange] = []
    row_change = plan.action in ROW_CHANGE_ACTIONS
    control.enter()
    monitor.start()
    try:
        registration.register_plan(
            spark, plan, properties, settings.TESSERA_UDF_PACKAGES, job.session_id
        )
        if monitor.outcome is None and row_change:
            row_changes.run(spark, job, plan, changes)
        elif monitor.outcome is None:
            prepared = write_runner.prepare_writes(spark, job, plan)
        if monitor.outcome is None and not row_change:
            write_runner.write_all(job, prepared, lambda: monitor.outcome is not None)
    except Exception as exc:
        failure = spark_session.failure_of(spark, exc)  # a dead JVM: SPARK_* (see _run_claimed)
    finally:
        monitor.stop()
        control.leave()
    # The staging locations the write added name their table in messages too.
    with errors.known_locations(
        errors.plan_locations(plan, _staging_of(job.id), list(job.access or []))
    ):
        end = (
            partial(row_changes.end, job, changes)
            if row_change
            else partial(write_runner.end_write, job, prepared)
        )
        status = end(
            failure,
            stopped=monitor.outcome is not None,
            progress={} if monitor.outcome else control.ended(failure is None),
            aliases=registration.alias_names(plan),
            control=control,
            texts=_write_texts(job, plan),
        )
    control.record_stages()  # after the end, whatever it was (the tasks settled if stopped)
    return status


def _status_of(job_id: Any) -> str:
    status = Job.objects.filter(pk=job_id).values_list("status", flat=True).first()
    return str(status or "")


def _run_command(job: Job, plan: Plan, spark: Any = None) -> str:
    """DDL that needs Spark's analyzer. Claimed here (so a duplicate message runs nothing),
    then ``run_command`` does the work and ends the job."""
    spark = spark or spark_session.new_job_session()
    try:
        registration.register_plan(
            spark, plan, job_properties(job), settings.TESSERA_UDF_PACKAGES, job.session_id
        )
        args = plan.args
        if plan.action == Action.CREATE_FUNCTION and args.get("language") == "python":
            # The import check: only a worker has the UDF packages' environment.
            registration.load_python_function(
                str(args.get("implementation") or ""), settings.TESSERA_UDF_PACKAGES
            )
    except Exception as exc:
        failure = spark_session.failure_of(spark, exc)
        error = errors.job_error(failure, registration.alias_names(plan))
        lifecycle.try_transition(job.id, jobstate.RUNNING, jobstate.FAILED, error=error)
        return _status_of(job.id)
    claimed = Job.objects.select_related("session", "user").get(pk=job.id)
    run_command(
        claimed,
        typer=SparkExpressionTyper(spark),
        derive_view_schema=ViewSchemaDeriver(spark, plan.sql),
    )
    return _status_of(job.id)
