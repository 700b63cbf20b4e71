"""Writing the audit trail: ``record`` appends one event, in the caller's transaction (a grant
and its event commit together, or neither does); ``expire`` removes old access events."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from audit.models import ACCESS_ACTIONS, ACTIONS, AuditEvent

log = logging.getLogger(__name__)

SEPARATOR = "\x1f"


def object_key(path: Sequence[str]) -> str:
    """The lower-cased path joined by U+001F: what ``GET /audit?object=`` matches a prefix of."""
    return SEPARATOR.join(part.lower() for part in path)


def record(
    action: str,
    *,
    actor: Any = None,
    object_kind: str = "",
    path: Sequence[str] = (),
    securable_key: str = "",
    principal: tuple[str, str] | None = None,
    privileges: Iterable[str] = (),
    job_id: Any = None,
    detail: dict[str, Any] | None = None,
) -> AuditEvent:
    """Append one event. ``actor`` is a user (or None: the system), ``path`` the object's
    names as they are now, ``principal`` ``(type, name)`` with type ``user`` or ``team``."""
    if action not in ACTIONS:
        raise ValueError(f"unknown audit action {action!r}")
    signed_in = actor is not None and getattr(actor, "pk", None) is not None
    return AuditEvent.objects.create(
        actor=actor if signed_in else None,
        actor_name=actor.get_username() if signed_in else "",
        action=action,
        object_kind=object_kind,
        object=list(path),
        object_key=object_key(path),
        securable_key=securable_key,
        principal_type=principal[0] if principal else "",
        principal_name=principal[1] if principal else "",
        privileges=list(privileges),
        job_id=job_id,
        detail=dict(detail or {}),
    )


# Expiry deletes at most this many events per call: a worker's heartbeat calls it again soon,
# and no call holds its locks long (the first run after months holds millions due).
EXPIRE_BATCH = 10_000
# The setting the PostgreSQL trigger (migration 0002) lets deletions through under; set with
# SET LOCAL, so only for the expiry's own transaction.
EXPIRY_SETTING = "tessera.audit_expiry"
_EXPIRE_SQL = (
    "DELETE FROM audit_auditevent WHERE id IN ("
    " SELECT id FROM audit_auditevent WHERE action IN ({actions}) AND at < %s"
    " ORDER BY at LIMIT %s)"
)


def expire(now: datetime | None = None) -> int:
    """Delete the ``read``, ``write`` and ``denied`` events older than
    ``TESSERA_AUDIT_ACCESS_RETENTION_SECONDS`` (up to ``EXPIRE_BATCH`` per call); every other
    event stays for ever. The only deletion of audit rows there is: on PostgreSQL the
    append-only trigger lets it through because this transaction sets
    ``tessera.audit_expiry`` locally. Returns how many were deleted."""
    retention = int(settings.TESSERA_AUDIT_ACCESS_RETENTION_SECONDS)
    cutoff = (now or timezone.now()) - timedelta(seconds=retention)
    actions = sorted(ACCESS_ACTIONS)
    sql = _EXPIRE_SQL.format(actions=", ".join(["%s"] * len(actions)))
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(f"SET LOCAL {EXPIRY_SETTING} = 'on'")
        cursor.execute(sql, [*actions, cutoff, EXPIRE_BATCH])
        deleted = max(int(cursor.rowcount), 0)
        if connection.vendor == "postgresql":
            # Called inside a caller's transaction, SET LOCAL would outlive this savepoint.
            cursor.execute(f"SET LOCAL {EXPIRY_SETTING} = 'off'")
    if deleted:
        log.info("expired %d audit access events older than %s", deleted, cutoff.isoformat())
    return deleted
