"""Reads of the jobs API: the caller's jobs, their events and result pages, and the helpers
every module of ``jobs`` shares to read its rows (ids, page tokens).

A RUNNING job whose heartbeat is stale makes the workers' reaper run first
(``jobs.maintenance``), so that a lost job is not shown stuck.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any, TypeVar

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q
from django.utils import timezone

from accounts.teams import is_admin, shown
from core import jobstate
from core.errors import CoreError, NotFound, PermissionDenied
from core.instants import parse_instant
from jobs import engines, maintenance, notify
from jobs.models import Engine, Job, JobEvent, Session
from webapp.rows import RowReader

User = AbstractBaseUser | AnonymousUser
T = TypeVar("T")


def user_id(user: User) -> Any:
    """The id of an authenticated user (views let no one else in)."""
    if user.pk is None:
        raise NotFound("There is no such thing for an anonymous user.")
    return user.pk


def parse_uuid(value: Any) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None


def reload_job(job_id: Any) -> Job:
    """The job again; NotFound (404) once it was deleted, say while a request held it."""
    try:
        return Job.objects.select_related("user").get(pk=job_id)
    except Job.DoesNotExist:
        raise NotFound(f"Job {job_id} no longer exists.") from None


def keyset(after: Any) -> tuple[datetime, uuid.UUID]:
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


# Every request about a job reads it first: compiled once (webapp.rows).
_JOB_OF_USER = RowReader(Job, "id", "user_id", select_related=("user",))


def job_get(*, user: User, job_id: Any) -> Job:
    """One of the caller's jobs (NOT_FOUND for others'). A RUNNING job whose heartbeat is
    older than the worker timeout makes the reaper run first, so it is not shown stuck."""
    key = parse_uuid(job_id)
    job = _JOB_OF_USER.get(key, user_id(user))
    if job is None:
        raise NotFound(f"Job {job_id} does not exist.")
    stale = timezone.now() - timedelta(seconds=settings.TESSERA_WORKER_TIMEOUT_SECONDS)
    if job.status == jobstate.RUNNING and job.heartbeat_at is not None and job.heartbeat_at < stale:
        maintenance.reap_lost_jobs(job.pk)
        job = reload_job(job.pk)
    return job


# ``GET /jobs?user=*``: every user's jobs (admins).
ALL_USERS = "*"


def job_list(
    *,
    user: User,
    session: str | None = None,
    status: str | None = None,
    kind: str | None = None,
    created_after: str | None = None,
    created_before: str | None = None,
    q: str | None = None,
    owner: str | None = None,
    after: Any,
    limit: int,
) -> list[Job]:
    """The caller's jobs, newest first; filters by session, status and kind (comma lists),
    creation time (``created_after`` inclusive, ``created_before`` exclusive) and a
    case-insensitive part of the SQL (``q``). ``owner``: an admin reads another user's
    history by name, or everyone's with ``*`` (query history, as Databricks SQL admins see it);
    anyone else only their own."""
    qs = Job.objects.select_related("user")
    if not owner or owner == getattr(user, "username", None):  # no username is "*"
        qs = qs.filter(user_id=user_id(user))
    elif not is_admin(user):
        raise PermissionDenied("Only admins can read other users' query history.")
    elif owner != ALL_USERS:
        qs = qs.filter(user__username=owner)
    if session:
        key = parse_uuid(session)
        if key is None:
            raise CoreError(f"'{session}' is not a session id.", details={"field": "session"})
        qs = qs.filter(session_id=key)
    statuses = _choices(status, "status", jobstate.STATUSES)
    if statuses:
        qs = qs.filter(status__in=statuses)
    kinds = _choices(kind, "kind", None)
    if kinds:
        qs = qs.filter(kind__in=[item.lower() for item in kinds])
    since = parse_instant(created_after, "created_after")
    if since is not None:
        qs = qs.filter(created_at__gte=since)
    until = parse_instant(created_before, "created_before")
    if until is not None:
        qs = qs.filter(created_at__lt=until)
    if q:
        if "\x00" in q:
            return []  # no statement holds NUL (PostgreSQL text cannot)
        qs = qs.filter(sql__icontains=q)
    if after is not None:
        created, last_id = keyset(after)
        qs = qs.filter(Q(created_at__lt=created) | Q(created_at=created, id__lt=last_id))
    return list(qs.order_by("-created_at", "-id")[:limit])


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


# Requests of this process that may be held waiting at once (``wait`` of statements, of
# ``GET /jobs/{id}``); beyond that a request answers at once, as with ``wait: 0``.
_held = threading.BoundedSemaphore(max(1, settings.TESSERA_HELD_REQUESTS_PER_PROCESS))


def set_held_limit(limit: int) -> None:
    """How many requests this process may hold at once from now on."""
    global _held
    _held = threading.BoundedSemaphore(max(1, limit))


@contextlib.contextmanager
def held(seconds: float) -> Iterator[float]:
    """How long this request may hold its answer: ``seconds``, or 0 while the process
    already holds ``TESSERA_HELD_REQUESTS_PER_PROCESS`` requests (threads stay free for
    everything else)."""
    semaphore = _held
    if seconds <= 0 or not semaphore.acquire(blocking=False):
        yield 0.0
        return
    try:
        yield seconds
    finally:
        semaphore.release()


def hold_place() -> Callable[[], None] | None:
    """One of this process's held-request places for a request held until its own end (a
    followed result), or None while all are taken; what it returns gives the place back
    (once, however often it is called)."""
    semaphore = _held
    if not semaphore.acquire(blocking=False):
        return None
    once = threading.Lock()

    def give_back() -> None:
        if once.acquire(blocking=False):  # the first call only
            semaphore.release()

    return give_back


def hold_until(
    first: T | None,
    read: Callable[[], T],
    done: Callable[[T], bool],
    *,
    job_ids: Sequence[Any],
    kinds: Sequence[str],
    seconds: float,
) -> T:
    """``first`` when ``done(first)``; else hold the request (at most ``seconds``, if the
    process may hold one more) watching the jobs' notifications of ``kinds``, reading again
    on each wake-up and at least every fallback delay, until ``done`` or the time passed.
    ``first`` None: not read yet (the first read is then made once the watch exists)."""
    if first is not None and done(first):
        return first
    with held(seconds) as allowed:
        if allowed <= 0:
            return first if first is not None else read()
        deadline = time.monotonic() + allowed
        with notify.watch(job_ids, kinds) as watch:
            while True:
                # Read after the watch exists: a change since the last read is seen here.
                value = read()
                left = deadline - time.monotonic()
                if done(value) or left <= 0:
                    return value
                watch.wait(left)


def wait_for(job_ids: Sequence[Any], seconds: float) -> list[Job]:
    """Wait until every job is terminal or ``seconds`` passed; the jobs, in order.

    Woken by the jobs' status notifications (``jobs.notify``), with the rows re-read on each
    and at least every fallback delay."""

    def read() -> list[Job]:
        by_id = {job.pk: job for job in Job.objects.select_related("user").filter(pk__in=job_ids)}
        return [by_id[job_id] if job_id in by_id else reload_job(job_id) for job_id in job_ids]

    def ended(jobs: list[Job]) -> bool:
        return all(job.status in jobstate.TERMINAL for job in jobs)

    # Waiting, the row is read once the watch exists (a read before it would be one more).
    first = read() if seconds <= 0 else None
    return hold_until(first, read, ended, job_ids=job_ids, kinds=(notify.ENDED,), seconds=seconds)


def job_version(job: Job) -> str:
    """A tag that changes whenever what ``GET /jobs/{id}`` shows of the job changes (its
    ``ETag``): status, progress, cancel, error, result, times, the engine it runs on, and
    the kind and target a script's statement gets when its turn comes."""
    state = [
        job.status,
        job.kind,
        job.target,
        job.progress,
        job.cancel_requested,
        job.error,
        job.result,
        job.started_at.isoformat() if job.started_at else None,
        job.finished_at.isoformat() if job.finished_at else None,
        str(job.engine_id) if job.engine_id else None,
    ]
    text = json.dumps(state, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def job_wait_change(*, user: User, job_id: Any, known: str | None, seconds: float) -> Job:
    """One of the caller's jobs (as ``job_get``), once its version is not ``known`` any more,
    or when ``seconds`` passed, or at once if it has ended or nothing is known (long-poll
    of ``GET /jobs/{id}``: woken by the job's notifications)."""
    job = job_get(user=user, job_id=job_id)

    def changed(found: Job) -> bool:
        return known is None or found.status in jobstate.TERMINAL or job_version(found) != known

    return hold_until(
        job,
        lambda: job_get(user=user, job_id=job.pk),
        changed,
        job_ids=[job.pk],
        kinds=(notify.STATUS, notify.PROGRESS, notify.CANCEL),
        seconds=seconds,
    )


# --- engines (docs/api.md "Engines") -----------------------------------------------------------

# ``GET /engines?state=``: ``live`` (the states whose process may still run jobs) or states.
LIVE = "live"
ENGINE_STATES = tuple(state for state, _ in Engine.STATE_CHOICES)


def engine_get(*, user: User, engine_id: Any) -> Engine:
    """One engine the caller may see (``jobs.engines.visible_engines``: admins every one,
    others their own share key's), with ``running_jobs``. Another's engine, a malformed id
    and an id that does not exist are the same NOT_FOUND."""
    key = parse_uuid(engine_id)
    found = engines.visible_engines(user).filter(pk=key).first() if key is not None else None
    if found is None:
        raise NotFound(f"There is no engine {shown(str(engine_id))}.")
    return found


def _engine_states(value: str | None) -> list[str] | None:
    if value is None or value.strip() == "":
        return None
    states: list[str] = []
    for item in (part.strip() for part in value.split(",")):
        if not item:
            continue
        if item.lower() == LIVE:
            states.extend(engines.LIVE_STATES)
        elif item.upper() in ENGINE_STATES:
            states.append(item.upper())
        else:
            choices = ", ".join([LIVE, *ENGINE_STATES])
            raise CoreError(
                f"Unknown state '{shown(item)}'. Choose from {choices}.",
                details={"field": "state"},
            )
    return states


def engine_page_key(row: Engine) -> list[Any]:
    """The page-token key of an engine in ``engine_list``'s order (``live_first``)."""
    return [int(getattr(row, "live_rank", 0)), row.started_at.isoformat(), str(row.pk)]


def _engine_keyset(after: Any) -> tuple[int, datetime, uuid.UUID]:
    if isinstance(after, list) and len(after) == 3 and type(after[0]) is int:
        rank, started, last_id = after
        if rank in (0, 1) and isinstance(started, str) and isinstance(last_id, str):
            try:
                when = datetime.fromisoformat(started)
                pk = uuid.UUID(last_id)
            except ValueError:
                pass
            else:
                if when.tzinfo is not None:
                    return rank, when, pk
    raise CoreError(
        "The page_token is not one this server issued; start again without it.",
        details={"field": "page_token"},
    )


def engine_list(*, user: User, state: str | None = None, after: Any, limit: int) -> list[Engine]:
    """The engines the caller may see, live ones first, then newest first; ``state`` keeps
    ``live`` ones (STARTING, READY, STOPPING) or the states of a comma list."""
    rows = engines.live_first(engines.visible_engines(user))
    states = _engine_states(state)
    if states is not None:
        rows = rows.filter(state__in=states)
    if after is not None:
        rank, started, last_id = _engine_keyset(after)
        rows = rows.filter(
            Q(live_rank__gt=rank)
            | Q(live_rank=rank, started_at__lt=started)
            | Q(live_rank=rank, started_at=started, id__lt=last_id)
        )
    return list(rows[:limit])


def engine_owners(rows: Sequence[Engine]) -> dict[str, str | None]:
    """A human label for each share key of ``rows`` (one query for the users): the username
    for ``user:<id>``, the group for ``team:<group>``, ``everyone`` for ``server``, None for
    a spare; the key itself for a user who is gone."""
    keys = {row.share_key for row in rows}
    ids = {key[5:] for key in keys if key.startswith("user:") and key[5:].isdigit()}
    names = {
        str(pk): name
        for pk, name in get_user_model()
        .objects.filter(pk__in=[int(pk) for pk in ids])
        .values_list("pk", "username")
    }
    owners: dict[str, str | None] = {}
    for key in keys:
        if key == "":
            owners[key] = None
        elif key == engines.SERVER:
            owners[key] = "everyone"
        elif key.startswith("user:"):
            owners[key] = names.get(key[5:], key)
        elif key.startswith("team:"):
            owners[key] = key[5:]
        else:
            owners[key] = key
    return owners
