"""Writing the audit trail: ``record`` appends one event, in the caller's transaction (a grant
and its event commit together, or neither does)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from audit.models import ACTIONS, AuditEvent

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
