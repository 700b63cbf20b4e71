"""Statements in, jobs out: plan a statement in its session, store it as a job, start it.

``start_job(job, plan)`` is the one way a job starts, for a single statement and for a
script's statement alike: the plan is stored on the job in the transaction that moves it to
CREATED (its CREATED steps, ``jobs.steps``, run there and may refuse: then the job
FAILS with their error, or a CREATE TABLE IF NOT EXISTS … AS SELECT whose name was taken
meanwhile is skipped); a plan that needs Spark is then sent to the workers after commit
(``jobs.dispatch``), and any other is returned for the caller to run here
(``sessions.commands.run_command``). A statement the planner refuses still makes a job, which
goes CREATED → FAILED (``fail_job``) so that the history shows the statement and its error.
Scripts (``sessions.scripts``) use the same two functions when a statement's turn comes.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from functools import partial
from typing import Any, NamedTuple

from django.conf import settings
from django.db import transaction

from catalog import services as catalog_services
from catalog import versions
from core import jobstate
from core.errors import AlreadyExists, CoreError, TooManyStreams
from core.limits import CheckedStatement, PlanningTimeout, accept_statement, check_statement
from core.planner import (
    QUERY_ACTIONS,
    Action,
    Plan,
    PlanContext,
    plan_statement,
    statement_kind,
)
from core.planner import parameters as query_parameters
from core.planner import streaming as planner_streaming
from core.planner.pipelines import check_args, pipeline_sql, plan_pipeline
from core.session_properties import check_wait
from jobs import access_log, dispatch, lifecycle, scheduling
from jobs.errors import JobError
from jobs.models import ORIGIN_USER, Job, Session
from jobs.selectors import held, reload_job, wait_for
from sessions import commands, planning, uploads
from sessions.catalog_reader import DjangoCatalogReader

log = logging.getLogger(__name__)


class Inline(NamedTuple):
    """A pipeline job running in this thread (``engine.pipeline``): the statements it
    submits become its child jobs (``Job.parent``), which are not enqueued but handed to
    ``run`` after commit, to run at once in the pipeline's own SparkSession. Set by the
    executor, so that this module never imports it."""

    parent_id: Any
    session_id: Any
    run: Callable[[Any], None]


INLINE: ContextVar[Inline | None] = ContextVar("tessera_inline_pipeline", default=None)


# --- planning --------------------------------------------------------------------------------


def plan_context(session: Session) -> PlanContext:
    """What the planner knows of the session and the server; in a pipeline running in this
    thread (``INLINE``, its own session), which pipeline job plans (its DataFrames)."""
    registry = planning.session_properties()
    inline = INLINE.get()
    return PlanContext(
        may_create_catalogs=catalog_services.may_create_catalogs(session.user),
        pipeline_job=(
            str(inline.parent_id)
            if inline is not None and str(inline.session_id) == str(session.pk)
            else None
        ),
        current_catalog=session.current_catalog,
        current_database=session.current_database,
        storage_roots=tuple(str(root) for root in settings.TESSERA_STORAGE_ROOTS),
        version_retention_hours=versions.retention_hours(),
        settable_keys=registry.keys,
        udf_packages=tuple(settings.TESSERA_UDF_PACKAGES),
        pipeline_packages=tuple(settings.TESSERA_PIPELINE_PACKAGES),
        session_properties=registry,
        limits=planning.statement_limits(),
        budget_seconds=planning.budget_seconds(),
        uploads=uploads.upload_lookup(session.id),
        runtime_mode=registry.runtime_mode(session.properties),
        checkpoint_interval_ms=registry.checkpoint_interval_ms(session.properties),
    )


def plan_in_session(session: Session, sql: str | CheckedStatement) -> Plan:
    """Plan one statement in the session's context; raises CoreError (planner errors).

    A ``CheckedStatement`` (``statement_submit``) is not scanned for the limits again; a
    plain string (a script's statement, planned when its turn comes) is scanned by the
    planner."""
    return plan_statement(sql, DjangoCatalogReader(session), plan_context(session))


def plan_sql(session: Session, sql: str) -> dict[str, Any]:
    """The plan JSON of a statement in the session (as stored on its job)."""
    return plan_in_session(session, sql).to_dict()


def plan_or_error(session: Session, sql: str | CheckedStatement) -> Plan | JobError:
    """The plan, or the job error of the refusal — a planner bug is an INTERNAL_ERROR,
    logged.

    Limits and the planning budget are the planner's (``plan_context``): over them, the
    statement's job fails with STATEMENT_TOO_LARGE, STATEMENT_TOO_DEEP or PLANNING_TIMEOUT.
    """
    try:
        return plan_in_session(session, sql)
    except CoreError as exc:
        if isinstance(exc, PlanningTimeout):
            log.warning("planning a statement of session %s ran out of its budget", session.pk)
        return JobError.of(exc)
    except Exception:
        log.exception("the planner failed on a statement of session %s", session.pk)
        return JobError.internal()


def job_timeout(session: Session) -> int:
    """The timeout a new job of the session gets: its job.timeout_seconds, within the
    server's range (a value stored before the range existed is clamped)."""
    return planning.session_properties().job_timeout_seconds(session.properties)


def new_job(session: Session, sql: str, **fields: Any) -> Job:
    """A job of the session for ``sql``, not saved yet; its kind until it has a plan is the
    planner's ``statement_kind``."""
    inline = INLINE.get()
    if inline is not None and str(inline.session_id) == str(session.pk):
        fields.setdefault("parent_id", inline.parent_id)
    return Job(
        session=session,
        user=session.user,
        sql=sql,
        kind=statement_kind(sql),
        timeout_seconds=job_timeout(session),
        **fields,
    )


# --- starting a job --------------------------------------------------------------------------


def _plan_fields(plan: Plan, session: Session | None) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "plan": plan.to_dict(),
        "kind": str(plan.kind)[:16],
        "target": list(plan.target) if plan.target else None,
        "access": [item.to_dict() for item in plan.access],
    }
    if session is not None:
        fields["timeout_seconds"] = job_timeout(session)
    return fields


def _store(job: Job, fields: Mapping[str, Any]) -> None:
    """Set ``fields`` on the job: a new job is inserted, a stored one updated."""
    for name, value in fields.items():
        setattr(job, name, value)
    if job._state.adding:
        job.save()
    elif fields:
        Job.objects.filter(pk=job.pk).update(**fields)


def _skip_plan(plan: Plan, exc: CoreError) -> Plan | None:
    """CREATE TABLE IF NOT EXISTS … AS SELECT whose name was taken after planning (another
    statement, e.g. a concurrent CTAS, created it first): the plan the planner makes for a
    taken name, which finishes at once with ``skipped_exists``. None for anything else."""
    args = plan.args
    if plan.action != Action.CTAS or not args.get("if_not_exists"):
        return None
    if not isinstance(exc, AlreadyExists) or args.get("skip"):
        return None
    return Plan.of(
        plan.action,
        needs_spark=False,
        sql=plan.sql,
        relations=plan.relations,
        functions=plan.functions,
        target=plan.target,
        args={**args, "skip": True},
        access=plan.access,
    )


def start_job(job: Job, plan: Plan) -> Job:
    """Store ``plan`` on ``job`` (a new one, or a script's statement whose turn came) and
    start it: CREATED, then enqueued for a worker after commit when it needs Spark.

    Returns the job: CREATED (a plan that needs no Spark is the caller's to run, see
    ``runs_here``), or FAILED when a CREATED step refused it (it keeps its kind and
    target, not the plan). A new job is counted against its user's
    ``TESSERA_USER_QUEUED_JOBS`` in the transaction that inserts it (``TooManyJobs``: it
    is not inserted)."""
    session = job.session
    was_new = job._state.adding
    inline = INLINE.get()
    child = inline is not None and job.parent_id is not None
    try:
        with transaction.atomic():
            if was_new and not child:  # a script's statement was counted with its script,
                scheduling.reserve_room(job.user_id)  # a pipeline's with its pipeline
            if not child:  # a stream takes a worker's stream slot (429 TOO_MANY_STREAMS)
                scheduling.reserve_stream(plan, job.user_id)
            elif jobstate.is_streaming(plan):  # a pipeline's statements are never streams
                raise planner_streaming.in_pipeline()  # (the planner refuses them first)
            _store(job, _plan_fields(plan, session))
            lifecycle.created(job)
            # The audit's reads, with the job; an EXPLAIN reads no row: its own action.
            access_log.record_reads(job, plan.access, explain=plan.action == "explain")
            if plan.needs_spark and inline is not None and child:
                transaction.on_commit(partial(inline.run, job.id))
            elif plan.needs_spark:
                transaction.on_commit(partial(dispatch.enqueue, job.id))
    except scheduling.TooManyJobs:
        job._state.adding = was_new
        raise
    except CoreError as exc:  # a CREATED step refused (prepare_write: a CTAS's name is taken)
        job._state.adding = was_new  # a new job's insert was rolled back with the rest
        if isinstance(exc, TooManyStreams) and was_new:
            raise  # 429, nothing created; a script's statement whose turn came FAILS with it
        skip = _skip_plan(plan, exc)
        if skip is not None:
            return start_job(job, skip)
        return fail_job(job, JobError.of(exc), {**_plan_fields(plan, session), "plan": {}})
    return job


def runs_here(job: Job) -> bool:
    """Whether a job ``start_job`` returned is a command for this process to run now."""
    plan = job.typed_plan
    return job.status == jobstate.CREATED and plan is not None and not plan.needs_spark


def fail_job(
    job: Job, error: JobError | Mapping[str, Any], fields: Mapping[str, Any] | None = None
) -> Job:
    """Record a statement that cannot run (the planner refused it, a hook refused its plan,
    its session is gone): the job goes CREATED → FAILED with ``error`` (or its JSON). A
    refusal for want of a privilege (``PERMISSION_DENIED``) is an audit ``denied`` event of
    the failed job."""
    if not isinstance(error, JobError):
        error = JobError.from_json(error)
    with transaction.atomic():
        _store(job, fields or {})
        lifecycle.created(job)
        access_log.record_denied(job, error)
    return lifecycle.transition(job.id, jobstate.CREATED, jobstate.FAILED, error=error)


def submit_plan(*, session: Session, sql: str, plan: Plan | Mapping[str, Any]) -> Job:
    """Store a planned statement as a job and start it: run it here, or enqueue it for a
    worker once the row is committed (``plan.needs_spark``)."""
    return reload_job(_submit(session, sql, plan).pk)


def _submit(
    session: Session, sql: str, plan: Plan | Mapping[str, Any], origin: str = ORIGIN_USER
) -> Job:
    """``submit_plan`` without reading the row again (the caller does)."""
    typed = plan if isinstance(plan, Plan) else Plan.from_dict(plan)
    job = start_job(new_job(session, sql, origin=origin), typed)
    if runs_here(job):
        return commands.run_command(job)
    return job


# --- the statements endpoint -----------------------------------------------------------------


def check_sql(sql: Any) -> str:
    if not isinstance(sql, str) or not sql.strip():
        raise CoreError("'sql' must hold a statement.", details={"field": "sql"})
    return sql


def check_statement_size(body: Any) -> None:
    """Refuse a statements request whose ``sql`` has more characters than the server
    accepts, in constant time (the body's own checks walk the text character by character;
    tokens and nesting are checked in the user's planning slot)."""
    if isinstance(body, dict) and isinstance(body.get("sql"), str):
        limits = planning.statement_limits()
        if len(body["sql"]) > limits.max_chars:
            what = "script" if body.get("script") is True else "statement"
            check_statement(body["sql"], limits, what=what)


def with_parameters(plan: Plan, values: Mapping[str, Any], session: Session) -> Plan:
    """The plan carrying the statement's parameter values (``args.parameters``), which the
    worker sends to Spark beside the text. Only queries take parameters. A query's
    ``current_catalog()``/``current_database()`` become parameters too: they answer the
    session's catalog and database (``query_parameters.session_functions``)."""
    if plan.action != Action.QUERY:
        if values:
            raise CoreError(
                f"Parameters (:name) can only be used in queries (SELECT, WITH, VALUES, …); "
                f"this statement is a {plan.kind} statement.",
                details={"field": "parameters"},
            )
        return plan
    sql, own = query_parameters.session_functions(
        plan.sql, session.current_catalog, session.current_database
    )
    if not values and not own:
        return plan
    return Plan.of(
        plan.action,
        needs_spark=plan.needs_spark,
        sql=sql,
        relations=plan.relations,
        functions=plan.functions,
        target=plan.target,
        args={**plan.args, "parameters": {**values, **own}},
        access=plan.access,
    )


def check_row_limit(value: Any) -> int | None:
    """A statement's ``row_limit``: None (the session's ``result.max_rows``) or an integer
    from 1 to ``TESSERA_RESULT_DOWNLOAD_MAX_ROWS``; anything else is VALIDATION_ERROR."""
    if value is None:
        return None
    most = int(settings.TESSERA_RESULT_DOWNLOAD_MAX_ROWS)
    if type(value) is int and 1 <= value <= most:
        return value
    raise CoreError(
        f"'row_limit' must be an integer from 1 to {most:,} (the most rows this server keeps "
        f"of one result); got {_shown(value)}.",
        details={"field": "row_limit", "min": 1, "max": most},
    )


def _shown(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, float) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def with_row_limit(plan: Plan, row_limit: int | None) -> Plan:
    """The plan carrying the statement's ``row_limit`` (``args.row_limit``), which the worker
    keeps instead of the session's ``result.max_rows``. Only plans a worker runs as a query
    (SELECT …, EXPLAIN) keep rows that way; other statements' results are whole."""
    if row_limit is None or plan.action not in QUERY_ACTIONS:
        return plan
    return dataclasses.replace(plan, args={**plan.args, "row_limit": row_limit})


def statement_submit(
    *,
    session: Session,
    sql: str,
    wait: float | None = 0,
    parameters: Mapping[str, Any] | None = None,
    row_limit: Any = None,
    origin: str = ORIGIN_USER,
) -> Job:
    """Plan and start one statement; with ``wait``, hold until it ended or the time passed.

    A user with ``TESSERA_USER_QUEUED_JOBS`` unfinished jobs is refused first
    (``scheduling.TooManyJobs``, 429: nothing is created). It takes one of the user's
    planning slots of this process then (``TooManyRequests`` when there is none free:
    nothing else is done); a statement over the server's limits
    (size, tokens, nesting) is then refused before it is planned and makes no job;
    planning runs under the budget. The statement is scanned for the limits once: here,
    and the planner is handed the proof (``CheckedStatement``).

    ``parameters`` are the values of the query's ``:name`` markers: a marker without a
    value or a value without a marker is refused (``VALIDATION_ERROR``, no job), and so are
    values sent with a statement that is not a query. ``row_limit`` (``check_row_limit``)
    replaces the session's ``result.max_rows`` for this statement. ``origin``: who submits
    it (``Job.origin``; a scheduled run says ``schedule``).
    """
    seconds = check_wait(wait)
    check_sql(sql)
    values = query_parameters.check_values(parameters)
    limit = check_row_limit(row_limit)
    scheduling.check_room(session.user_id)  # again where the job is inserted (race-safe)
    with planning.GATE.slot(session.user_id, held):  # waits briefly for a slot
        statement = accept_statement(sql, planning.statement_limits())
        bound = query_parameters.bind(sql, values) if values else {}
        outcome = plan_or_error(session, statement)
        if isinstance(outcome, Plan):
            if not values and outcome.action == Action.QUERY:
                query_parameters.bind(sql, {})  # a marker left without a value: say which
            planned = with_row_limit(with_parameters(outcome, bound, session), limit)
            job = _submit(session, sql, planned, origin)
        else:
            job = fail_job(new_job(session, sql, origin=origin), outcome)
    return wait_for([job.id], seconds)[0]  # reads the row, whether it waits or not


# --- pipelines ------------------------------------------------------------------------------


def pipeline_submit(
    *, session: Session, entry_point: Any, args: Any, wait: float | None = 0
) -> Job:
    """``POST /sessions/{id}/pipelines``: the plan ``EXECUTE PIPELINE`` makes, without SQL
    text to parse; a refused entry point (``FORBIDDEN``) or argument makes a FAILED job, as
    a refused statement does."""
    seconds = check_wait(wait)
    args = check_args(args)  # a bad argument is the request's error (400), as parameters
    scheduling.check_room(session.user_id)
    shown = entry_point if isinstance(entry_point, str) else json.dumps(entry_point)
    sql = pipeline_sql(shown[:1000], args)
    try:
        plan = plan_pipeline(entry_point, args, plan_context(session), sql)
    except CoreError as exc:
        job = fail_job(new_job(session, sql), JobError.of(exc))
    else:
        job = _submit(session, sql, plan)
    return wait_for([job.id], seconds)[0]
