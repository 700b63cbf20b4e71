"""Engines: which Spark application runs a job, and their records (docs/api.md §6).

An engine is one Spark application with its own driver JVM that runs the jobs of one
**share key**, decided by ``TESSERA_ENGINE_SHARE_LEVEL``:

- ``user`` (default): ``user:<id>``, an engine per user;
- ``team``: ``team:<group>``, the user's first Django group by name (a user in no group
  gets an engine of their own, ``user:<id>``);
- ``server``: ``server``, the worker's own Spark for everyone (the shape before engines).

The worker host starts, assigns and stops engine processes (``engine.pool``); this module
holds what the web side and the worker share: the key of a user, the ``Engine`` rows'
writes (services) and reads (selectors).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Case, Count, IntegerField, Q, QuerySet, Value, When
from django.utils import timezone

from accounts.teams import is_admin
from core import jobstate
from core.planner import QUERY_ACTIONS
from jobs import dispatch, lifecycle
from jobs.errors import JobError
from jobs.models import Engine, Job, JobEvent

USER, TEAM, SERVER = "user", "team", "server"
SHARE_LEVELS = (USER, TEAM, SERVER)
# Engines whose process may still run jobs (listed first, counted by the pool).
LIVE_STATES = (Engine.STARTING, Engine.READY, Engine.STOPPING)
# What ``request_stop`` accepts: a user's restart (their own engine) or an admin's stop.
RESTART, STOP = "restart", "stop"


class EngineConfigError(ValueError):
    """``TESSERA_ENGINE_SHARE_LEVEL`` names no share level."""


def share_level() -> str:
    level = str(settings.TESSERA_ENGINE_SHARE_LEVEL or USER).strip().lower()
    if level not in SHARE_LEVELS:
        raise EngineConfigError(
            f"TESSERA_ENGINE_SHARE_LEVEL is {level!r}; use one of {', '.join(SHARE_LEVELS)}."
        )
    return level


def hosted() -> bool:
    """Whether jobs run in engine processes (``user``, ``team``), not in the worker's own
    Spark (``server``)."""
    return share_level() != SERVER


def share_key(user: Any, level: str | None = None) -> str:
    """The share key of ``user``'s jobs under ``level`` (default: the setting's)."""
    level = level or share_level()
    if level == SERVER:
        return SERVER
    if level == TEAM:
        group = user.groups.order_by("name").values_list("name", flat=True).first()
        if group:
            return f"team:{group}"
    return f"user:{user.pk}"


# --- writes (the worker's pool) ---------------------------------------------------------------


def record_started(*, worker: str, runtime: str, key: str, driver_memory: str) -> Engine:
    return Engine.objects.create(
        share_level=share_level(),
        share_key=key,
        runtime=runtime,
        worker=worker,
        driver_memory=driver_memory,
        assigned_at=timezone.now() if key else None,
    )


def record_ready(engine_id: Any, pid: int | None) -> None:
    Engine.objects.filter(pk=engine_id, state=Engine.STARTING).update(
        state=Engine.READY, pid=pid, ready_at=timezone.now()
    )


def record_assigned(engine_id: Any, key: str) -> None:
    """A spare is given its share key."""
    now = timezone.now()
    Engine.objects.filter(pk=engine_id).update(share_key=key, assigned_at=now, last_used_at=now)


def record_used(
    engine_id: Any,
    job_id: Any,
    *,
    key: str = "",
    worker: str = "",
    runtime: str = "",
    pid: int | None = None,
) -> None:
    """A job runs on the engine now. An engine whose row was deleted meanwhile (by hand, or
    a test's database flush) is recorded again, as it runs."""
    now = timezone.now()
    if not Engine.objects.filter(pk=engine_id).update(last_used_at=now):
        Engine.objects.get_or_create(
            pk=engine_id,
            defaults={
                "share_level": share_level(),
                "share_key": key,
                "runtime": runtime,
                "worker": worker,
                "pid": pid,
                "driver_memory": str(settings.TESSERA_SPARK_DRIVER_MEMORY or ""),
                "state": Engine.READY,
                "ready_at": now,
                "assigned_at": now,
                "last_used_at": now,
            },
        )
    Job.objects.filter(pk=job_id).update(engine_id=engine_id)


def record_stopped(engine_id: Any, reason: str, message: str = "") -> None:
    state = Engine.LOST if reason in {"lost", "failed_start"} else Engine.STOPPED
    Engine.objects.filter(pk=engine_id).exclude(state__in=(Engine.STOPPED, Engine.LOST)).update(
        state=state, stopped_at=timezone.now(), stop_reason=reason, stop_message=message[:2000]
    )


def stop_requests(worker: str) -> list[tuple[str, str, str]]:
    """(engine id, what, by whom) of the live engines of ``worker`` someone asked to stop."""
    rows = (
        Engine.objects.filter(worker=worker, state__in=LIVE_STATES)
        .exclude(stop_requested="")
        .values_list("id", "stop_requested", "stop_requested_by")
    )
    return [(str(pk), what, by) for pk, what, by in rows]


def retire_engines_of(worker: str) -> int:
    """The engines of a worker process that has ended are gone with it."""
    changed: int = Engine.objects.filter(worker=worker, state__in=LIVE_STATES).update(
        state=Engine.LOST, stopped_at=timezone.now(), stop_reason="lost"
    )
    return changed


# --- a job lost with its engine ---------------------------------------------------------------

ENGINE_LOST = "ENGINE_LOST"
ENGINE_STOPPED = "ENGINE_STOPPED"
ENGINE_LOST_EVENT = "engine_lost"


def _retryable(job: Job, shared: int) -> bool:
    """A job lost with its engine is retried once on a fresh engine when it wrote nothing
    (a read), was not asked to stop, had not been retried already, and was not alone on the
    engine: a statement alone on an engine that died is taken for what killed it."""
    try:
        plan = job.typed_plan
    except (KeyError, TypeError, ValueError):
        return False
    if plan is None or plan.action not in QUERY_ACTIONS or jobstate.is_streaming(plan):
        return False
    if job.cancel_requested or shared < 2:
        return False
    return not JobEvent.objects.filter(job_id=job.pk, type=ENGINE_LOST_EVENT).exists()


def lose_with_engine(
    job_id: Any, *, engine_id: Any, shared: int, error: JobError, stopped_by: str = ""
) -> str | None:
    """A RUNNING job whose engine died (``error`` says how) or was stopped under it
    (``stopped_by``: a restart or stop asked by that user): requeued once on a fresh engine
    when ``_retryable`` (``shared``: how many jobs ran on the engine then; event
    ``engine_lost``), else FAILED with ``error``. Returns the status reached, or None when
    the job had moved on already."""
    job = Job.objects.filter(pk=job_id, status=jobstate.RUNNING).first()
    if job is None:
        return None
    if stopped_by:
        error = JobError(
            ENGINE_STOPPED,
            f"The job's engine was stopped by {stopped_by} while the job was running.",
            {"engine": str(engine_id)},
        )
    elif _retryable(job, shared):
        detail = {
            "engine": str(engine_id),
            "code": error.code,
            "message": (
                f"{error.message} The job had written nothing, and it shared the engine with "
                f"{shared - 1:,} other job(s): it runs again once, on a fresh engine."
            ),
        }
        if lifecycle.requeue(job_id, detail, event=ENGINE_LOST_EVENT):
            dispatch.enqueue(job_id)
            return jobstate.CREATED
        return None
    done = lifecycle.try_transition(job_id, jobstate.RUNNING, jobstate.FAILED, error=error)
    return jobstate.FAILED if done is not None else None


# --- requests (the web side) ----------------------------------------------------------------


def request_stop(engine: Engine, what: str, by: AbstractBaseUser) -> Engine:
    """Ask the engine's worker to stop it (``restart``: the next statement of its key gets a
    fresh engine). Idempotent; a stopped engine stays as it is."""
    if engine.state in LIVE_STATES:
        Engine.objects.filter(pk=engine.pk, state__in=LIVE_STATES).update(
            stop_requested=what, stop_requested_by=by.get_username()
        )
        engine.refresh_from_db()
    return engine


# --- reads -------------------------------------------------------------------------------------


def running_jobs() -> Count:
    return Count("jobs", filter=Q(jobs__status=jobstate.RUNNING))


def visible_engines(user: AbstractBaseUser | AnonymousUser) -> QuerySet[Engine]:
    """Admins (``accounts.teams.is_admin``, as everywhere else): every engine; others: the
    engines of their own share key (the key their jobs get now, and their own user key
    under any level)."""
    rows = Engine.objects.annotate(running_jobs=running_jobs())
    if is_admin(user):
        return rows
    if user.pk is None:
        return rows.none()
    keys = {share_key(user), f"user:{user.pk}"}
    return rows.filter(share_key__in=keys)


def live_rank() -> Case:
    """0 for an engine whose process may still run jobs (``LIVE_STATES``), 1 for the others."""
    return Case(
        When(state__in=LIVE_STATES, then=Value(0)), default=Value(1), output_field=IntegerField()
    )


def live_first(rows: QuerySet[Engine]) -> QuerySet[Engine]:
    """Live engines first, then the stopped ones; newest first within each (annotates
    ``live_rank``, the first part of the lists' page key). Not ``order_by("stopped_at")``:
    PostgreSQL sorts NULLs last in ascending order, which put the live engines last."""
    return rows.annotate(live_rank=live_rank()).order_by("live_rank", "-started_at", "-id")
