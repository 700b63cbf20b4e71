"""What one user may hold at once, beside their jobs: upload bytes and open sessions, and
the use of every per-user limit (``GET /users/me``, through ``accounts.quotas``).

Each limit is a setting (0: none; docs/security.md §4, "Quotas"):

- ``TESSERA_USER_UPLOAD_BYTES``: the bytes of a user's uploads, in all their sessions. An
  upload that would go past it is refused ``413 UPLOAD_QUOTA_EXCEEDED`` before it is read
  (what is held already, and its ``Content-Length``), while it is read (the reader stops at
  the room left) and again under a per-user lock in the transaction that stores it, so two
  uploads at once cannot both take the last bytes; nothing of a refused upload stays.
- ``TESSERA_USER_SESSIONS``: open sessions. One more closes the user's oldest idle
  session first (no job CREATED or RUNNING in it), as closing it would: its temporary
  objects and uploads go with it; with none idle, ``429 TOO_MANY_SESSIONS``.
- streams (``TESSERA_USER_STREAMS``) and jobs are ``jobs.scheduling``'s; shown here too.

Counts are taken per user under a PostgreSQL advisory lock of their own namespace (SQLite's
transactions are one writer at a time already).
"""

from __future__ import annotations

import zlib
from typing import Any, ClassVar

from django.conf import settings
from django.db import connection
from django.db.models import Count, Q, Sum
from django.db.models.functions import Coalesce

from core import jobstate
from core.errors import CoreError
from jobs import scheduling
from jobs.models import Job, Session, Upload

_UPLOADS_NAMESPACE = zlib.crc32(b"tessera.jobs.quotas.uploads") & 0x7FFFFFFF
_SESSIONS_NAMESPACE = zlib.crc32(b"tessera.jobs.quotas.sessions") & 0x7FFFFFFF
SESSIONS_RETRY_AFTER = 5


class UploadQuotaExceeded(CoreError):
    """An upload that would take the user's uploads past ``TESSERA_USER_UPLOAD_BYTES``."""

    code: ClassVar[str] = "UPLOAD_QUOTA_EXCEEDED"


class TooManySessions(CoreError):
    """A session asked for while every one of the user's ``TESSERA_USER_SESSIONS`` runs a
    job (HTTP 429)."""

    code: ClassVar[str] = "TOO_MANY_SESSIONS"
    retry_after: ClassVar[int] = SESSIONS_RETRY_AFTER

    def __init__(self, message: str, *, details: dict[str, Any]) -> None:
        super().__init__(message, details={**details, "retry_after": self.retry_after})


def _limit(value: Any) -> int | None:
    number = int(value)
    return number if number > 0 else None


def upload_bytes_limit() -> int | None:
    return _limit(settings.TESSERA_USER_UPLOAD_BYTES)


def sessions_limit() -> int | None:
    return _limit(settings.TESSERA_USER_SESSIONS)


def _lock(namespace: int, user_id: Any) -> None:
    """A per-user transaction-level lock on PostgreSQL (none needed on SQLite)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_advisory_xact_lock(%s::int, %s::int)",
                [namespace, int(user_id) % 0x7FFFFFFF],
            )


# --- uploads ---------------------------------------------------------------------------------


def upload_bytes_of(user_id: Any) -> int:
    """The bytes of the user's uploads, in all their sessions."""
    total = Upload.objects.filter(session__user_id=user_id).aggregate(n=Sum("bytes"))["n"]
    return int(total or 0)


def upload_room(user_id: Any, announced: int | None = None) -> int | None:
    """The bytes one more upload of the user may have (None: no quota). Refuses at once
    (``UploadQuotaExceeded``) when nothing is left, or when ``announced`` (the request's
    Content-Length, an upper bound of the upload's bytes) does not fit."""
    limit = upload_bytes_limit()
    if limit is None:
        return None
    used = upload_bytes_of(user_id)
    room = limit - used
    if room <= 0 or (announced is not None and announced > room):
        raise quota_exceeded(limit, used, announced)
    return room


def reserve_upload(user_id: Any, size: int) -> None:
    """In the transaction that stores an upload of ``size`` bytes: under the user's lock,
    refuse it when the user's uploads (committed ones, including any stored meanwhile)
    leave no room for it."""
    limit = upload_bytes_limit()
    if limit is None:
        return
    _lock(_UPLOADS_NAMESPACE, user_id)
    used = upload_bytes_of(user_id)
    if used + size > limit:
        raise quota_exceeded(limit, used, size)


def quota_exceeded(limit: int, used: int, size: int | None = None) -> UploadQuotaExceeded:
    what = f"this one ({size:,} bytes)" if size is not None else "this one"
    return UploadQuotaExceeded(
        f"Your uploads hold {used:,} bytes; the server keeps at most {limit:,} bytes of "
        f"uploads per user (TESSERA_USER_UPLOAD_BYTES), and {what} does not fit. Delete "
        "uploads you no longer need (DELETE /sessions/{id}/uploads/{upload}) or close their "
        "sessions, then send it again.",
        details={"limit": limit, "used": used, **({"size": size} if size is not None else {})},
    )


# --- sessions --------------------------------------------------------------------------------


def make_room_for_session(user_id: Any) -> list[Any]:
    """Before a new session of the user is inserted (in the same transaction, under the
    user's lock): at ``TESSERA_USER_SESSIONS`` open sessions, close the oldest idle ones
    (least recently used, no job CREATED or RUNNING) to leave room for one; with too few
    idle ones, ``TooManySessions`` and nothing is closed. Returns the ids closed."""
    limit = sessions_limit()
    if limit is None:
        return []
    _lock(_SESSIONS_NAMESPACE, user_id)
    mine = Session.objects.filter(user_id=user_id)
    over = mine.count() - limit + 1
    if over <= 0:
        return []
    busy = Job.objects.filter(user_id=user_id, status__in=scheduling.UNFINISHED).values(
        "session_id"
    )
    idle = list(
        mine.exclude(pk__in=busy)
        .order_by("last_used_at", "created_at")
        .values_list("pk", flat=True)[:over]
    )
    if len(idle) < over:
        raise TooManySessions(
            f"You have {limit + over - 1:,} open sessions, the most the server keeps per user "
            f"(TESSERA_USER_SESSIONS is {limit:,}), and each of them runs a job, so none "
            "could be closed for a new one. Close a session you no longer need "
            "(DELETE /sessions/{id}) or wait for its jobs, then open one again.",
            details={"sessions": limit + over - 1, "maximum": limit},
        )
    for session in Session.objects.filter(pk__in=idle):
        session.delete()  # as DELETE /sessions/{id}: its temporary objects and uploads go
    return idle


# --- what GET /users/me shows ------------------------------------------------------------------


def usage_of(user_id: Any) -> dict[str, dict[str, int | None]]:
    """Every per-user limit with the user's current use (``limit`` None: none). Two
    queries: the user's unfinished jobs, and their sessions with their uploads' bytes."""
    unfinished = Q(status__in=scheduling.UNFINISHED)
    spark = Q(plan__needs_spark=True, parent__isnull=True)
    jobs = Job.objects.filter(user_id=user_id).aggregate(
        running=Count("id", filter=spark & Q(status=jobstate.RUNNING)),
        streams=Count("id", filter=spark & unfinished & scheduling.streaming()),
        queued=Count(Coalesce("script_id", "parent_id", "id"), filter=unfinished, distinct=True),
    )
    held = Session.objects.filter(user_id=user_id).aggregate(
        sessions=Count("id", distinct=True), upload_bytes=Sum("uploads__bytes")
    )
    return {
        "running_jobs": {"limit": scheduling.running_limit(), "used": jobs["running"]},
        "queued_jobs": {"limit": scheduling.queued_limit(), "used": jobs["queued"]},
        "streams": {"limit": scheduling.user_streams_limit(), "used": jobs["streams"]},
        "sessions": {"limit": sessions_limit(), "used": held["sessions"]},
        "upload_bytes": {"limit": upload_bytes_limit(), "used": int(held["upload_bytes"] or 0)},
    }


def install_usage() -> None:
    """``GET /users/me`` shows the quotas without ``accounts`` knowing this app."""
    from accounts import quotas

    quotas.install(usage_of)
