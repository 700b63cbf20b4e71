"""Sessions, statements and jobs: every write of the jobs API goes through here.

A statement is planned by the pure planner (``core.planner``) against the catalog, stored as
a job, and then either run right here (``jobs.commands``: plans that need no Spark) or handed
to the workers (``jobs.dispatch``) once the job row is committed. Every status change goes
through ``jobs.lifecycle``. A planner error still makes a job, which goes CREATED → FAILED so
that the history shows the statement and its error.

Scripts (``"script": true``) make one job per statement up front; each statement is planned
only when its turn comes (it may depend on what the ones before it did), and the next one
starts when the one before it FINISHED — from whichever process saw it finish, through the
``ScriptHook`` registered here. The first failure or cancel stops the script: the jobs after
it end CANCELED with an error saying why.
"""

from __future__ import annotations

import importlib
import logging
import re
import threading
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from catalog import selectors
from core import jobstate
from core.errors import AlreadyExists, CoreError, NotFound
from core.identifiers import ObjectIdentifier, expand_path, parse_path, quote_path
from core.jobstate import IllegalTransition, JobView, NoOpHook, Record
from core.limits import (
    CheckedStatement,
    PlanningTimeout,
    StatementLimits,
    StatementTooLarge,
    accept_statement,
    check_statement,
)
from jobs import commands, dispatch, lifecycle, planning, results
from jobs.models import Job, JobEvent, Session, TemporaryObject

log = logging.getLogger(__name__)

User = AbstractBaseUser | AnonymousUser


def _user_id(user: User) -> Any:
    """The id of an authenticated user (views let no one else in)."""
    if user.pk is None:
        raise NotFound("There is no such thing for an anonymous user.")
    return user.pk


MAX_WAIT_SECONDS = 30
POLL_SECONDS = 0.05


class ResultNotReady(CoreError):
    """Asking for the rows of a job that has not finished yet."""

    code = "RESULT_NOT_READY"


# --- sessions --------------------------------------------------------------------------------


def session_expires_at(session: Session) -> datetime:
    return session.last_used_at + timedelta(seconds=session.idle_timeout_seconds)


def _expired_sessions(qs: QuerySet[Session]) -> QuerySet[Session]:
    """Sessions of ``qs`` idle past their own timeout (one cutoff per distinct timeout, which
    every database can compare; there are few distinct timeouts)."""
    now = timezone.now()
    timeouts = set(qs.order_by().values_list("idle_timeout_seconds", flat=True).distinct())
    expired = Q(pk__in=[])
    for seconds in timeouts:
        expired |= Q(
            idle_timeout_seconds=seconds, last_used_at__lte=now - timedelta(seconds=seconds)
        )
    return qs.filter(expired)


def _parse_uuid(value: Any) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None


def _where(
    catalog: str | None,
    database: str | None,
    *,
    catalog_given: bool,
    database_given: bool,
    current: tuple[str | None, str | None],
) -> tuple[str | None, str | None]:
    """The (catalog, database) a session moves to; names as stored (their case)."""
    new_catalog, new_database = current
    if catalog_given:
        if catalog is None:
            new_catalog, new_database = None, None
        else:
            found = selectors.get_catalog(catalog)
            new_catalog, new_database = found.name, found.default_database
    if database_given:
        if database is None:
            new_database = None
        else:
            if new_catalog is None:
                raise CoreError(
                    "A current database needs a current catalog; set current_catalog too.",
                    details={"field": "current_database"},
                )
            found_db = selectors.get_database(new_catalog, database)
            new_catalog, new_database = found_db.catalog.name, found_db.name
    return new_catalog, new_database


def _properties(properties: Any) -> dict[str, str]:
    """A session's properties checked by the registry (type, range, canonical form)."""
    return planning.session_properties().check_all(properties)


def session_create(
    *,
    user: User,
    current_catalog: str | None = None,
    current_database: str | None = None,
    properties: dict[str, Any] | None = None,
    idle_timeout_seconds: int | None = None,
) -> Session:
    """Open a SQL session for ``user``. Naming only a catalog selects its default database."""
    catalog, database = _where(
        current_catalog,
        current_database,
        catalog_given=current_catalog is not None,
        database_given=current_database is not None,
        current=(None, None),
    )
    session = Session(
        user_id=_user_id(user),
        current_catalog=catalog,
        current_database=database,
        properties=_properties(properties or {}),
        last_used_at=timezone.now(),
        idle_timeout_seconds=idle_timeout_seconds or settings.TESSERA_SESSION_IDLE_SECONDS,
    )
    session.save()
    return session


def session_get(*, user: User, session_id: Any, touch: bool = True) -> Session:
    """The caller's live session; NOT_FOUND for others' sessions and expired ones (which are
    deleted on the way). Every use moves ``last_used_at``."""
    key = _parse_uuid(session_id)
    session = (
        Session.objects.select_related("user").filter(pk=key, user_id=_user_id(user)).first()
        if key is not None
        else None
    )
    if session is None:
        raise NotFound(f"Session {session_id} does not exist.")
    now = timezone.now()
    if session_expires_at(session) <= now:
        session.delete()
        raise NotFound(f"Session {session_id} has expired.")
    if touch:
        Session.objects.filter(pk=session.pk).update(last_used_at=now)
        session.last_used_at = now
    return session


def session_list(*, user: User, after: Any, limit: int) -> list[Session]:
    """The caller's live sessions, newest first (expired ones are deleted first)."""
    mine = Session.objects.filter(user_id=_user_id(user))
    _expired_sessions(mine).delete()
    qs = mine.select_related("user").order_by("-created_at", "-id")
    if after is not None:
        created, last_id = _keyset(after)
        qs = qs.filter(Q(created_at__lt=created) | Q(created_at=created, id__lt=last_id))
    return list(qs[:limit])


def session_update(*, session: Session, changes: dict[str, Any]) -> Session:
    """PATCH: ``current_catalog``, ``current_database`` (null clears), ``properties`` (replaces
    the whole map)."""
    if "current_catalog" in changes or "current_database" in changes:
        session.current_catalog, session.current_database = _where(
            changes.get("current_catalog"),
            changes.get("current_database"),
            catalog_given="current_catalog" in changes,
            database_given="current_database" in changes,
            current=(session.current_catalog, session.current_database),
        )
    if "properties" in changes:
        session.properties = _properties(changes["properties"])
    if "idle_timeout_seconds" in changes:
        session.idle_timeout_seconds = changes["idle_timeout_seconds"]
    session.save()
    return session


def session_delete(*, session: Session) -> None:
    """Close a session. Its jobs stay (in the caller's history) without it; its temporary
    objects go with it (CASCADE), and no file is touched."""
    session.delete()


# --- temporary objects (FLIP-64) ------------------------------------------------------------

TEMPORARY_KINDS = {"tables": "table", "views": "view", "functions": "function"}


def _temporary_kind(kinds: str) -> str:
    kind = TEMPORARY_KINDS.get(kinds)
    if kind is None:
        raise NotFound(f"There are no temporary {kinds}; choose tables, views or functions.")
    return kind


def _session_path(session: Session, text: Any, field: str) -> ObjectIdentifier:
    """A SQL path (1-3 parts) expanded with the session's current catalog and database."""
    if not isinstance(text, str) or not text.strip():
        raise CoreError(f"'{field}' must be a SQL path such as c.d.t.", details={"field": field})
    try:
        return expand_path(parse_path(text), session.current_catalog, session.current_database)
    except CoreError as exc:
        exc.details = {**exc.details, "field": field}
        raise


def _temporary_after(qs: QuerySet[TemporaryObject], after: Any) -> QuerySet[TemporaryObject]:
    if after is None:
        return qs
    if not (isinstance(after, list) and len(after) == 3 and all(isinstance(v, str) for v in after)):
        raise CoreError(
            "The page_token is not one this server issued; start again without it.",
            details={"field": "page_token"},
        )
    c, d, n = after
    return qs.filter(
        Q(catalog_key__gt=c)
        | Q(catalog_key=c, database_key__gt=d)
        | Q(catalog_key=c, database_key=d, name_key__gt=n)
    )


def temporary_token(row: TemporaryObject) -> list[str]:
    """The page-token key of a temporary object (lists are ordered by identifier)."""
    return [row.catalog_key, row.database_key, row.name_key]


def temporary_list(
    *, session: Session, kinds: str, after: Any, limit: int
) -> list[tuple[TemporaryObject, bool]]:
    """The session's temporary objects of one kind, by identifier (system functions first),
    each with whether it shadows a permanent object (system functions: a built-in)."""
    kind = _temporary_kind(kinds)
    qs = TemporaryObject.objects.filter(session=session, kind=kind)
    rows = list(
        _temporary_after(qs, after).order_by("catalog_key", "database_key", "name_key")[:limit]
    )
    return list(zip(rows, commands.shadows(rows), strict=True))


def temporary_delete(*, session: Session, kinds: str, path: str, system: bool = False) -> None:
    """Drop one of the session's temporary objects by its SQL path (DROP TEMPORARY …);
    NOT_FOUND when the session has none. ``system``: a temporary system function."""
    kind = _temporary_kind(kinds)
    qs = TemporaryObject.objects.filter(session=session, kind=kind)
    if system:
        if kind != TemporaryObject.KIND_FUNCTION:
            raise CoreError("Only functions can be system functions.", details={"field": "system"})
        parts = parse_path(path)
        if len(parts) != 1:
            raise CoreError(
                "A temporary system function has a one-part name.", details={"field": "path"}
            )
        found = qs.filter(system=True, name_key=parts[0].lower()).first()
        shown = f"Temporary system function {quote_path(parts)}"
    else:
        ident = _session_path(session, path, "path")
        catalog, database, name = ident.key
        found = qs.filter(
            system=False, catalog_key=catalog, database_key=database, name_key=name
        ).first()
        shown = f"Temporary {kind} {ident.quoted()}"
    if found is None:
        raise NotFound(f"{shown} does not exist.")
    found.delete()


def resolve(*, session: Session, path: Any, kind: Any = "table") -> dict[str, Any]:
    """What a SQL path names in the session, as a statement would resolve it:
    ``{"identifier", "temporary", "object"}``; NOT_FOUND when nothing has that name.

    Tables and views: the temporary one, then the permanent one. Functions named by one
    part: temporary system function → Spark built-in → temporary catalog function in the
    current catalog and database → catalog function; qualified: temporary catalog function
    → catalog function.
    """
    from jobs import serializers
    from jobs.catalog_reader import DjangoCatalogReader

    if kind not in ("table", "function"):
        raise CoreError("'kind' must be table or function.", details={"field": "kind"})
    reader = DjangoCatalogReader(session)
    if kind == "table":
        ident = _session_path(session, path, "path")
        relation = reader.find_relation(ident)
        if relation is None:
            raise NotFound(
                f"Table or view {ident.quoted()} not found.",
                details={"identifier": list(ident.parts)},
            )
        return serializers.resolved_out(relation)
    parts = parse_path(path) if isinstance(path, str) and path.strip() else ()
    if len(parts) == 1:
        system = reader.temporary_system_function(parts[0])
        if system is not None:
            return serializers.resolved_out(system)
        if commands.is_builtin_function(parts[0]):
            return serializers.builtin_out(parts[0])
    ident = _session_path(session, path, "path")
    function = reader.find_function(ident)
    if function is None:
        raise NotFound(
            f"Function {ident.quoted()} not found.", details={"identifier": list(ident.parts)}
        )
    return serializers.resolved_out(function)


# --- planning --------------------------------------------------------------------------------

_LEADING_NOISE = re.compile(r"^(\s+|--[^\n]*(\n|$)|/\*.*?\*/|\()+", re.DOTALL)
_KIND_BY_KEYWORD = {
    "select": "query",
    "with": "query",
    "values": "query",
    "table": "query",
    "from": "query",
    "show": "show",
    "describe": "describe",
    "desc": "describe",
    "explain": "explain",
    "use": "use",
    "set": "set",
    "reset": "set",
    "insert": "insert",
    "execute": "statement_set",
    "create": "ddl",
    "drop": "ddl",
    "alter": "ddl",
}
_CTAS = re.compile(r"\bAS\s*\(?\s*(SELECT|WITH|VALUES|TABLE|FROM)\b", re.IGNORECASE)
_VIEW_OR_FUNCTION = re.compile(r"^\s*CREATE\b[^(]*?\b(VIEW|FUNCTION)\b", re.IGNORECASE)


def guess_kind(sql: str) -> str:
    """The job kind of a statement that has no plan (yet): from its first keyword."""
    text = _LEADING_NOISE.sub("", sql, count=1)
    match = re.match(r"[A-Za-z_]+", text)
    kind = _KIND_BY_KEYWORD.get(match.group(0).lower(), "query") if match else "query"
    is_create = kind == "ddl" and text[:6].lower() == "create"
    if is_create and not _VIEW_OR_FUNCTION.match(text) and _CTAS.search(text):
        return "ctas"
    return kind


def plan_context(session: Session) -> Any:
    from core.planner import PlanContext

    registry = planning.session_properties()
    return PlanContext(
        current_catalog=session.current_catalog,
        current_database=session.current_database,
        storage_roots=tuple(str(root) for root in settings.TESSERA_STORAGE_ROOTS),
        settable_keys=registry.keys,
        udf_packages=tuple(settings.TESSERA_UDF_PACKAGES),
        session_properties=registry,
        limits=planning.statement_limits(),
        budget_seconds=planning.budget_seconds(),
    )


def plan_sql(session: Session, sql: str | CheckedStatement) -> dict[str, Any]:
    """Plan one statement in the session's context; raises CoreError (planner errors).

    A ``CheckedStatement`` (``statement_submit``) is not scanned for the limits again; a
    plain string (a script's statement, planned when its turn comes) is scanned by the
    planner."""
    from core.planner import plan_statement
    from jobs.catalog_reader import DjangoCatalogReader

    plan = plan_statement(sql, DjangoCatalogReader(session), plan_context(session))
    return dict(plan.to_dict())


def _plan_or_error(session: Session, sql: str | CheckedStatement) -> dict[str, Any]:
    """``{"plan": …}`` or ``{"error": …}`` — a planner bug is an INTERNAL_ERROR, logged.

    Limits and the planning budget are the planner's (``plan_context``): over them, the
    statement's job fails with STATEMENT_TOO_LARGE, STATEMENT_TOO_DEEP or PLANNING_TIMEOUT.
    """
    try:
        return {"plan": plan_sql(session, sql)}
    except CoreError as exc:
        if isinstance(exc, PlanningTimeout):
            log.warning("planning a statement of session %s ran out of its budget", session.pk)
        return {"error": commands.error_json(exc)}
    except Exception:
        log.exception("the planner failed on a statement of session %s", session.pk)
        return {"error": dict(commands.INTERNAL_ERROR)}


def _timeout(session: Session) -> int:
    """The timeout a new job of the session gets: its job.timeout_seconds, within the
    server's range (a value stored before the range existed is clamped)."""
    return planning.session_properties().job_timeout_seconds(session.properties)


def _plan_fields(plan: dict[str, Any], session: Session) -> dict[str, Any]:
    target = plan.get("target")
    return {
        "plan": plan,
        "kind": str(plan.get("kind") or "query")[:16],
        "target": list(target) if target else None,
        "timeout_seconds": _timeout(session),
    }


def _needs_spark(plan: dict[str, Any]) -> bool:
    return bool(plan.get("needs_spark"))


def _reload(job_id: Any) -> Job:
    return Job.objects.select_related("user").get(pk=job_id)


# --- statements ------------------------------------------------------------------------------


def submit_plan(*, session: Session, sql: str, plan: dict[str, Any]) -> Job:
    """Store a planned statement as a job and start it: run it here, or enqueue it for a
    worker once the row is committed (``plan["needs_spark"]``)."""
    try:
        with transaction.atomic():
            job = Job(session=session, user=session.user, sql=sql, **_plan_fields(plan, session))
            job.save()
            lifecycle.created(job)
            if _needs_spark(plan):
                transaction.on_commit(partial(dispatch.enqueue, job.id))
    except CoreError as exc:  # an in-transaction on_created hook refused (CTAS: name taken)
        skip = _skip_plan(plan, exc)
        if skip is not None:
            return submit_plan(session=session, sql=sql, plan=skip)
        return _refused_statement(session, sql, plan, commands.error_json(exc))
    if _needs_spark(plan):
        return _reload(job.id)
    return commands.run_command(job)


def _skip_plan(plan: dict[str, Any], exc: CoreError) -> dict[str, Any] | None:
    """CREATE TABLE IF NOT EXISTS … AS SELECT whose name was taken after planning (another
    statement, e.g. a concurrent CTAS, created it first): the plan the planner makes for a
    taken name, which finishes at once with ``skipped_exists``. None for anything else."""
    args = plan.get("args") or {}
    if plan.get("action") != "ctas" or not args.get("if_not_exists"):
        return None
    if not isinstance(exc, AlreadyExists) or args.get("skip"):
        return None
    return {**plan, "needs_spark": False, "args": {**args, "skip": True}}


def _refused_statement(
    session: Session, sql: str, plan: dict[str, Any], error: dict[str, Any]
) -> Job:
    """Record a planned statement that could not be created (its creation was rolled back):
    a job of its kind and target, without the plan, that goes CREATED → FAILED."""
    with transaction.atomic():
        job = Job(
            session=session,
            user=session.user,
            sql=sql,
            **{**_plan_fields(plan, session), "plan": {}},
        )
        job.save()
        lifecycle.created(job)
    return lifecycle.transition(job.id, jobstate.CREATED, jobstate.FAILED, error=error)


def _failed_statement(session: Session, sql: str, error: dict[str, Any]) -> Job:
    """Record a statement the planner refused: a job that goes CREATED → FAILED."""
    with transaction.atomic():
        job = Job(
            session=session,
            user=session.user,
            sql=sql,
            kind=guess_kind(sql),
            timeout_seconds=_timeout(session),
        )
        job.save()
        lifecycle.created(job)
    return lifecycle.transition(job.id, jobstate.CREATED, jobstate.FAILED, error=error)


def _check_sql(sql: Any) -> str:
    if not isinstance(sql, str) or not sql.strip():
        raise CoreError("'sql' must hold a statement.", details={"field": "sql"})
    return sql


def _check_wait(wait: Any) -> float:
    if wait is None:
        return 0.0
    if isinstance(wait, bool) or not isinstance(wait, int | float) or not 0 <= wait <= 30:
        raise CoreError(
            f"'wait' must be a number of seconds from 0 to {MAX_WAIT_SECONDS}.",
            details={"field": "wait"},
        )
    return float(wait)


def check_statement_size(body: Any) -> None:
    """Refuse a statements request whose ``sql`` has more characters than the server
    accepts, in constant time (the body's own checks walk the text character by character;
    tokens and nesting are checked in the user's planning slot)."""
    if isinstance(body, dict) and isinstance(body.get("sql"), str):
        limits = planning.statement_limits()
        if len(body["sql"]) > limits.max_chars:
            what = "script" if body.get("script") is True else "statement"
            check_statement(body["sql"], limits, what=what)


def statement_submit(*, session: Session, sql: str, wait: float | None = 0) -> Job:
    """Plan and start one statement; with ``wait``, hold until it ended or the time passed.

    It takes one of the user's planning slots of this process first (``TooManyRequests``
    when there is none free: nothing else is done); a statement over the server's limits
    (size, tokens, nesting) is then refused before it is planned and makes no job;
    planning runs under the budget. The statement is scanned for the limits once: here,
    and the planner is handed the proof (``CheckedStatement``).
    """
    seconds = _check_wait(wait)
    _check_sql(sql)
    with planning.GATE.slot(session.user_id):
        statement = accept_statement(sql, planning.statement_limits())
        outcome = _plan_or_error(session, statement)
        if "error" in outcome:
            job = _failed_statement(session, sql, outcome["error"])
        else:
            job = submit_plan(session=session, sql=sql, plan=outcome["plan"])
    return wait_for([job.id], seconds)[0]


def script_submit(*, session: Session, sql: str, wait: float | None = 0) -> list[Job]:
    """One job per statement of a script, run in order, stopping at the first failure.

    The script as a whole must be within the statement limits (characters, tokens) and
    hold at most ``max_statements``; its first statement is planned in a planning slot.
    Each statement is scanned for the limits again, alone, when its turn comes and it is
    planned (``_start_script_job``): that may be in another process, later, under the
    limits then in force, and only the text crosses that gap."""
    seconds = _check_wait(wait)
    _check_sql(sql)
    limits = planning.statement_limits()
    with planning.GATE.slot(session.user_id):
        check_statement(sql, limits, what="script")
        jobs = _submit_script(session, sql, limits)
    return wait_for([job.id for job in jobs], seconds)


def _submit_script(session: Session, sql: str, limits: StatementLimits) -> list[Job]:
    from core.planner import split_script

    try:
        statements = [s for s in split_script(sql) if s.strip()]
    except CoreError as exc:  # e.g. an unterminated string: the script as one failed job
        return [_failed_statement(session, sql, commands.error_json(exc))]
    if not statements:
        raise CoreError("The script holds no statement.", details={"field": "sql"})
    if len(statements) > limits.max_statements:
        raise StatementTooLarge(
            f"The script has {len(statements):,} statements; the server runs at most "
            f"{limits.max_statements:,} in one script. Split it.",
            details={"field": "sql", "limit": "statements", "maximum": limits.max_statements},
        )
    script_id = uuid.uuid4()
    with transaction.atomic():
        jobs = []
        for index, text in enumerate(statements):
            job = Job(
                session=session,
                user=session.user,
                sql=text,
                kind=guess_kind(text),
                timeout_seconds=_timeout(session),
                script_id=script_id,
                script_index=index,
            )
            job.save()
            detail = {"script_id": str(script_id), "index": index, "count": len(statements)}
            lifecycle.record_event(job.id, "queued", detail)
            jobs.append(job)
    advance_script(script_id)
    return jobs


def wait_for(job_ids: Sequence[Any], seconds: float) -> list[Job]:
    """Poll the job rows until every one is terminal or ``seconds`` passed; the jobs, in order."""
    deadline = time.monotonic() + seconds
    while seconds > 0 and time.monotonic() < deadline:
        statuses = Job.objects.filter(pk__in=job_ids).values_list("status", flat=True)
        if all(status in jobstate.TERMINAL for status in statuses):
            break
        time.sleep(POLL_SECONDS)
    jobs = Job.objects.select_related("user").filter(pk__in=job_ids)
    by_id = {job.pk: job for job in jobs}
    return [by_id[job_id] if job_id in by_id else _reload(job_id) for job_id in job_ids]


# --- scripts ---------------------------------------------------------------------------------

_advancing = threading.local()


def advance_script(script_id: Any) -> None:
    """Start the next statement of a script whose turn has come, or stop the script.

    Called after a script's jobs are made and whenever one of its jobs ends (ScriptHook).
    A statement run here ends inside this call and fires the hook again; that nested call
    only notes the script, and the loop below takes the next step (no recursion).
    """
    pending: set[Any] | None = getattr(_advancing, "pending", None)
    if pending is not None:
        pending.add(script_id)
        return
    _advancing.pending = pending = {script_id}
    try:
        while pending:
            to_run = _advance_once(pending.pop())
            if to_run is not None:
                commands.run_command(to_run)
    finally:
        _advancing.pending = None


def _stop_error(job: Job, stopped_by: Job) -> dict[str, Any]:
    how = "failed" if stopped_by.status == jobstate.FAILED else "was canceled"
    return {
        "code": "CANCELED",
        "message": (
            f"Statement {job.script_index + 1} of the script did not run because statement "
            f"{stopped_by.script_index + 1} {how}."
        ),
        "details": {
            "script_id": str(job.script_id),
            "stopped_by": str(stopped_by.id),
            "stopped_by_index": stopped_by.script_index,
        },
    }


def _advance_once(script_id: Any) -> Job | None:
    """One step under a lock on the script's rows; returns a job to run as a command now."""
    with transaction.atomic():
        jobs = list(
            Job.objects.select_for_update().filter(script_id=script_id).order_by("script_index")
        )
        stopped_by: Job | None = None
        for job in jobs:
            if stopped_by is not None:
                if job.status == jobstate.CREATED:
                    lifecycle.try_transition(
                        job.id,
                        jobstate.CREATED,
                        jobstate.CANCELED,
                        error=_stop_error(job, stopped_by),
                    )
                continue
            if job.status == jobstate.FINISHED:
                continue
            if job.status in (jobstate.FAILED, jobstate.CANCELED):
                stopped_by = job
                continue
            if job.status == jobstate.RUNNING or job.plan:
                return None  # a statement is under way; its end brings us back
            return _start_script_job(job)
    return None


def _start_script_job(job: Job) -> Job | None:
    """Plan a script's statement now that its turn came; enqueue it or hand it back to run."""
    session = (
        Session.objects.select_related("user").filter(pk=job.session_id).first()
        if job.session_id is not None
        else None
    )
    if session is None:
        outcome: dict[str, Any] = {
            "error": commands.error_json(
                NotFound("The session was closed before this statement of the script ran.")
            )
        }
    else:
        outcome = _plan_or_error(session, job.sql)
    if "error" in outcome:
        lifecycle.created(job)
        lifecycle.transition(job.id, jobstate.CREATED, jobstate.FAILED, error=outcome["error"])
        return None
    assert session is not None
    plan = outcome["plan"]
    try:
        with transaction.atomic():
            _store_fields(job, _plan_fields(plan, session))
            lifecycle.created(job)
    except CoreError as exc:  # an in-transaction on_created hook refused (CTAS: name taken)
        skip = _skip_plan(plan, exc)
        if skip is None:  # as in _refused_statement: kind and target, no plan
            _store_fields(job, {**_plan_fields(plan, session), "plan": {}})
            lifecycle.created(job)
            error = commands.error_json(exc)
            lifecycle.transition(job.id, jobstate.CREATED, jobstate.FAILED, error=error)
            return None
        plan = skip
        _store_fields(job, _plan_fields(plan, session))
        lifecycle.created(job)
    if _needs_spark(plan):
        transaction.on_commit(partial(dispatch.enqueue, job.id))
        return None
    return job


def _store_fields(job: Job, fields: dict[str, Any]) -> None:
    Job.objects.filter(pk=job.pk).update(**fields)
    for name, value in fields.items():
        setattr(job, name, value)


class ScriptHook(NoOpHook):
    """Moves a script on when one of its jobs ends (in whichever process ended it)."""

    def on_finished(self, job: JobView, record: Record) -> None:
        self._continue(job)

    def on_failed(self, job: JobView, record: Record) -> None:
        self._continue(job)

    def on_canceled(self, job: JobView, record: Record) -> None:
        self._continue(job)

    def _continue(self, job: JobView) -> None:
        script_id = Job.objects.filter(pk=job.id).values_list("script_id", flat=True).first()
        if script_id is not None:
            advance_script(script_id)


SCRIPT_HOOK = ScriptHook()


def install_hooks() -> None:
    """Register the jobs app's own hooks, once per process (JobsConfig.ready calls this in
    the web process and in workers alike)."""
    if SCRIPT_HOOK not in lifecycle.hooks_for(lifecycle.ANY_KIND):
        lifecycle.register_hook(SCRIPT_HOOK)


# --- jobs ------------------------------------------------------------------------------------


def _reap_lost_jobs(job_id: Any) -> None:
    """The workers' reaper fails RUNNING jobs whose worker went silent (jobs.maintenance)."""
    try:
        maintenance = importlib.import_module("jobs.maintenance")
    except ModuleNotFoundError as exc:
        if exc.name != "jobs.maintenance":
            raise
        return
    maintenance.reap_lost_jobs(job_id)


def job_get(*, user: User, job_id: Any) -> Job:
    """One of the caller's jobs (NOT_FOUND for others'). A RUNNING job whose heartbeat is
    older than the worker timeout makes the reaper run first, so it is not shown stuck."""
    key = _parse_uuid(job_id)
    job = (
        Job.objects.select_related("user").filter(pk=key, user_id=_user_id(user)).first()
        if key is not None
        else None
    )
    if job is None:
        raise NotFound(f"Job {job_id} does not exist.")
    stale = timezone.now() - timedelta(seconds=settings.TESSERA_WORKER_TIMEOUT_SECONDS)
    if job.status == jobstate.RUNNING and job.heartbeat_at is not None and job.heartbeat_at < stale:
        _reap_lost_jobs(job.pk)
        job = _reload(job.pk)
    return job


def _keyset(after: Any) -> tuple[datetime, uuid.UUID]:
    if isinstance(after, list) and len(after) == 2 and all(isinstance(v, str) for v in after):
        try:
            created = datetime.fromisoformat(after[0])
            last_id = uuid.UUID(after[1])
        except ValueError:
            pass
        else:
            if created.tzinfo is not None:
                return created, last_id
    raise CoreError(
        "The page_token is not one this server issued; start again without it.",
        details={"field": "page_token"},
    )


def keyset_token(row: Job | Session) -> list[str]:
    """The page-token key of a job or session in lists ordered newest first."""
    return [row.created_at.isoformat(), str(row.pk)]


def _choices(value: str | None, field: str, allowed: Sequence[str] | None) -> list[str] | None:
    if value is None or value == "":
        return None
    items = [item.strip() for item in value.split(",") if item.strip()]
    if allowed is not None:
        items = [item.upper() for item in items]
        for item in items:
            if item not in allowed:
                raise CoreError(
                    f"Unknown {field} '{item}'. Choose from {', '.join(allowed)}.",
                    details={"field": field},
                )
    return items


def _instant(value: str | None, field: str) -> datetime | None:
    """An ISO-8601 date or date-time query parameter; naive ones are UTC."""
    if value is None or value == "":
        return None
    text = value.strip()
    # A '+' of an offset that was not percent-encoded arrives as a space.
    candidates = (text, text.replace(" ", "+")) if " " in text else (text,)
    for candidate in candidates:
        try:
            parsed = datetime.fromisoformat(candidate)
        except ValueError:
            continue
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        try:
            # In UTC, as the databases compare it: 0001-01-01T00:00:00+14:00 is before year 1
            # (SQLite's adapter failed on it with a 500; PostgreSQL took it).
            return parsed.astimezone(UTC)
        except OverflowError:
            raise CoreError(
                f"{field} is out of range: in UTC it must fall between 0001-01-01 and "
                f"9999-12-31, got '{value}'.",
                details={"field": field},
            ) from None
    raise CoreError(
        f"{field} must be an ISO-8601 date or date-time such as 2026-01-31T12:00:00Z, "
        f"got '{value}'.",
        details={"field": field},
    )


def job_list(
    *,
    user: User,
    session: str | None = None,
    status: str | None = None,
    kind: str | None = None,
    created_after: str | None = None,
    created_before: str | None = None,
    q: str | None = None,
    after: Any,
    limit: int,
) -> list[Job]:
    """The caller's jobs, newest first; filters by session, status and kind (comma lists),
    creation time (``created_after`` inclusive, ``created_before`` exclusive) and a
    case-insensitive part of the SQL (``q``)."""
    qs = Job.objects.select_related("user").filter(user_id=_user_id(user))
    if session:
        key = _parse_uuid(session)
        if key is None:
            raise CoreError(f"'{session}' is not a session id.", details={"field": "session"})
        qs = qs.filter(session_id=key)
    statuses = _choices(status, "status", jobstate.STATUSES)
    if statuses:
        qs = qs.filter(status__in=statuses)
    kinds = _choices(kind, "kind", None)
    if kinds:
        qs = qs.filter(kind__in=[item.lower() for item in kinds])
    since = _instant(created_after, "created_after")
    if since is not None:
        qs = qs.filter(created_at__gte=since)
    until = _instant(created_before, "created_before")
    if until is not None:
        qs = qs.filter(created_at__lt=until)
    if q:
        if "\x00" in q:
            return []  # no statement holds NUL (PostgreSQL text cannot)
        qs = qs.filter(sql__icontains=q)
    if after is not None:
        created, last_id = _keyset(after)
        qs = qs.filter(Q(created_at__lt=created) | Q(created_at=created, id__lt=last_id))
    return list(qs.order_by("-created_at", "-id")[:limit])


def job_cancel(*, user: User, job: Job) -> Job:
    """Cancel a job: CREATED ends CANCELED at once; RUNNING gets ``cancel_requested`` and its
    worker stops Spark and ends it CANCELED; an ended job cannot be canceled (409)."""
    by = user.get_username()
    if job.status == jobstate.CREATED:
        error = {
            "code": "CANCELED",
            "message": f"Canceled by {by} before it started.",
            "details": {},
        }
        if lifecycle.try_transition(job.id, jobstate.CREATED, jobstate.CANCELED, error=error):
            return _reload(job.pk)
        job = _reload(job.pk)  # it started (or ended) meanwhile
    if job.status == jobstate.RUNNING:
        asked = Job.objects.filter(pk=job.pk, status=jobstate.RUNNING, cancel_requested=False)
        if asked.update(cancel_requested=True):
            lifecycle.record_event(job.pk, "cancel_requested", {"by": by})
        return _reload(job.pk)
    raise IllegalTransition(
        f"Job {job.pk} has already ended ({job.status}); there is nothing to cancel."
    )


def job_events(*, job: Job, after: Any, limit: int) -> list[JobEvent]:
    qs = JobEvent.objects.filter(job=job).order_by("id")
    if after is not None:
        if type(after) is not int:
            raise CoreError(
                "The page_token is not one this server issued; start again without it.",
                details={"field": "page_token"},
            )
        qs = qs.filter(id__gt=after)
    return list(qs[:limit])


def _require_result(job: Job) -> dict[str, Any]:
    if job.status in (jobstate.CREATED, jobstate.RUNNING):
        raise ResultNotReady(
            f"Job {job.pk} is {job.status}; its result can be read once it has FINISHED.",
            details={"status": job.status},
        )
    if job.status != jobstate.FINISHED or not job.result:
        raise NotFound(f"Job {job.pk} ended {job.status} and has no result.")
    return dict(job.result)


def job_result_page(*, job: Job, after: Any, limit: int) -> dict[str, Any]:
    """``{"columns", "rows", "next_page_token"}`` from the results store."""
    meta = _require_result(job)
    offset = 0
    if after is not None:
        if type(after) is not int or after < 0:
            raise CoreError(
                "The page_token is not one this server issued; start again without it.",
                details={"field": "page_token"},
            )
        offset = after
    rows, following = results.read_page(job.pk, offset, limit)
    return {"columns": meta.get("columns", []), "rows": rows, "next": following}


def job_result_download(*, job: Job, fmt: str) -> Any:
    _require_result(job)
    return results.download_response(job.pk, fmt)
