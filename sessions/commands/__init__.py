"""Run the plan actions that are not queries: USE, SET/RESET, SHOW …, DESCRIBE,
SHOW CREATE TABLE, CREATE/DROP of catalogs, databases, tables, views and functions,
permanent or temporary (``args.temporary``: the session's ``TemporaryObject`` rows), and
GRANT, REVOKE, SHOW GRANTS, ALTER … OWNER TO.

``run_command(job)`` is the one entry point; the dispatch table below maps each plan action
to its handler in ``session`` (USE, SET, RESET), ``show`` (SHOW, DESCRIBE, SHOW CREATE
TABLE), ``ddl`` (CREATE/DROP in the catalog), ``grants`` (privileges and owners, through
``catalog.grants``) or ``temporary`` (FLIP-64 temporary objects).
The web process calls it for plans that need no Spark; a worker calls it for DDL plans that
do (``needs_spark``), passing what only Spark can give: an expression ``typer`` for computed
columns and watermarks, and ``derive_view_schema`` for views. Either way the job moves
CREATED → RUNNING → FINISHED | FAILED through ``jobs.lifecycle``, and the answer rows are
stored in the results store.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from django.db import transaction

from catalog import bodies
from catalog.models import Table
from core import jobstate
from core.errors import CoreError
from core.jobstate import IllegalTransition
from core.planner import Action, Plan
from core.schema import ExpressionTyper
from jobs import lifecycle
from jobs.errors import JobError
from jobs.models import Job, TemporaryObject
from results import store
from sessions.commands import ddl, grants, session, show, temporary
from sessions.commands.common import Columns, DeriveViewSchema, Rows

log = logging.getLogger(__name__)

Handler = Callable[[Job, Mapping[str, Any]], tuple[Columns, Rows]]


def _reload(job_id: Any) -> Job:
    return Job.objects.select_related("user", "session").get(pk=job_id)


def run_command(
    job: Job,
    *,
    typer: ExpressionTyper | None = None,
    derive_view_schema: DeriveViewSchema | None = None,
) -> Job:
    """Execute a non-query plan action and return the job, ended FINISHED or FAILED.

    A CREATED job is claimed here (CREATED → RUNNING); a RUNNING job is taken to be claimed by
    the caller (a worker that set its own ``worker``/``heartbeat_at``). If the claim is lost
    (canceled meanwhile) nothing runs and the job is returned as it is.
    """
    if job.status == jobstate.CREATED:
        claimed = lifecycle.try_transition(job.id, jobstate.CREATED, jobstate.RUNNING)
        if claimed is None:
            return _reload(job.id)
        job = _reload(job.id)
    elif job.status != jobstate.RUNNING:
        raise IllegalTransition(f"Job {job.id} is {job.status}; it cannot run.")

    try:
        with transaction.atomic():
            columns, rows = _execute(job, typer, derive_view_schema)
            result = store.write_rows(job.id, columns, rows)
    except CoreError as exc:
        with transaction.atomic():
            # A refused body change or transfer is audited, now that it is rolled back.
            bodies.record_refusal(job.user, exc, job_id=job.id)
        return _end(job, jobstate.FAILED, error=JobError.of(exc))
    except Exception:
        log.exception("job %s: command %s failed", job.id, (job.plan or {}).get("action"))
        return _end(job, jobstate.FAILED, error=JobError.internal())
    return _end(job, jobstate.FINISHED, result=result)


def _end(job: Job, target: str, *, error: JobError | None = None, **fields: Any) -> Job:
    ended = lifecycle.try_transition(job.id, jobstate.RUNNING, target, error=error, **fields)
    if ended is None:  # somebody else ended it first (reaper, cancel): theirs stands
        log.warning("job %s: could not move to %s; it was ended by someone else", job.id, target)
        if "result" in fields:
            store.delete_result(job.id)
        return _reload(job.id)
    return _reload(job.id)


def _execute(
    job: Job, typer: ExpressionTyper | None, derive_view_schema: DeriveViewSchema | None
) -> tuple[Columns, Rows]:
    plan = job.typed_plan
    if plan is None:
        raise CoreError("The job has no plan to run.")
    args = plan.args
    if args.get("temporary"):
        return _execute_temporary(job, plan, typer, derive_view_schema)
    if plan.action == Action.CREATE_TABLE:
        return ddl.create_table(job, args, typer)
    if plan.action == Action.CREATE_VIEW:
        return ddl.create_view(job, plan, args, derive_view_schema)
    handler = _HANDLERS.get(plan.action)
    if handler is None:
        raise CoreError(
            f"The plan action '{plan.action}' is not a command; it runs on a worker.",
            details={"action": plan.action.value},
        )
    return handler(job, args)


def _execute_temporary(
    job: Job,
    plan: Plan,
    typer: ExpressionTyper | None,
    derive_view_schema: DeriveViewSchema | None,
) -> tuple[Columns, Rows]:
    args = plan.args
    if plan.action == Action.CREATE_TABLE:
        return temporary.create_temporary_table(job, args, typer)
    if plan.action == Action.CREATE_VIEW:
        return temporary.create_temporary_view(job, plan, args, derive_view_schema)
    handler = _TEMPORARY_HANDLERS.get(plan.action)
    if handler is None:
        raise CoreError(
            f"The plan action '{plan.action}' has no temporary form.",
            details={"action": plan.action.value},
        )
    return handler(job, args)


# --- the dispatch table: plan action -> handler ------------------------------------------------

_HANDLERS: dict[Action, Handler] = {
    Action.USE: session.use,
    Action.SET: session.set_property,
    Action.RESET: session.reset,
    Action.SHOW_CATALOGS: show.show_catalogs,
    Action.SHOW_DATABASES: show.show_databases,
    Action.SHOW_TABLES: show.show_relations(Table.KIND_TABLE, "tableName"),
    Action.SHOW_VIEWS: show.show_relations(Table.KIND_VIEW, "viewName"),
    Action.SHOW_FUNCTIONS: show.show_functions,
    Action.DESCRIBE: show.describe,
    Action.DESCRIBE_HISTORY: show.describe_history,
    Action.SHOW_CREATE_TABLE: show.show_create_table,
    Action.CREATE_CATALOG: ddl.create_catalog,
    Action.CREATE_DATABASE: ddl.create_database,
    Action.CREATE_FUNCTION: ddl.create_function,
    Action.CTAS: ddl.ctas_skipped,
    Action.DROP_CATALOG: ddl.drop_catalog,
    Action.DROP_DATABASE: ddl.drop_database,
    Action.DROP_TABLE: ddl.drop_relation(Table.KIND_TABLE),
    Action.DROP_VIEW: ddl.drop_relation(Table.KIND_VIEW),
    Action.DROP_FUNCTION: ddl.drop_function,
    Action.GRANT: grants.grant,
    Action.REVOKE: grants.revoke,
    Action.SHOW_GRANTS: grants.show_grants,
    Action.ALTER_OWNER: grants.alter_owner,
}

_TEMPORARY_HANDLERS: dict[Action, Handler] = {
    Action.CREATE_FUNCTION: temporary.create_temporary_function,
    Action.DROP_TABLE: temporary.drop_temporary(TemporaryObject.KIND_TABLE),
    Action.DROP_VIEW: temporary.drop_temporary(TemporaryObject.KIND_VIEW),
    Action.DROP_FUNCTION: temporary.drop_temporary(TemporaryObject.KIND_FUNCTION),
    Action.SHOW_TABLES: temporary.show_temporary(TemporaryObject.KIND_TABLE),
    Action.SHOW_VIEWS: temporary.show_temporary(TemporaryObject.KIND_VIEW),
    Action.SHOW_FUNCTIONS: temporary.show_temporary(TemporaryObject.KIND_FUNCTION),
}

# The actions the web process runs (plans that need no Spark); a worker runs the DDL ones
# that do (``needs_spark``) through ``run_command`` too.
COMMAND_ACTIONS: frozenset[Action] = frozenset(
    {*_HANDLERS, Action.CREATE_TABLE, Action.CREATE_VIEW}
)
