"""Reading the audit trail: ``GET /audit`` (admins, with filters) and an object's recent
events (the object pages' "recent access"). Newest first, keyset pages by ``(at, id)``.

Every filter value is checked here; a bad one is a ``VALIDATION_ERROR`` naming its parameter
(``details.field``). ``object`` is a SQL path of one to three parts: the events of that object
and of everything below it (a prefix of ``object_key``; on PostgreSQL compared in the "C"
collation, which migration 0002's index serves as a range).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.contrib.auth.models import Group, User
from django.db import connection
from django.db.models import F, Q, QuerySet
from django.db.models.functions import Collate

from audit.models import ACTIONS, AuditEvent
from audit.services import SEPARATOR, object_key
from core.errors import CoreError, IdentifierError
from core.identifiers import parse_path
from core.instants import parse_instant

OBJECT_KINDS = (
    "catalog",
    "database",
    "table",
    "view",
    "function",
    "storage",
    "team",
    "token",
    "engine",
)
PRINCIPAL_TYPES = ("user", "team")
MAX_FILTER_LENGTH = 2000  # no stored path, name or list is longer


def _bad(field: str, message: str) -> CoreError:
    return CoreError(message, details={"field": field})


def _shown(value: str, limit: int = 60) -> str:
    return value if len(value) <= limit else value[: limit - 1] + "…"


def _text(value: str | None, field: str) -> str | None:
    if value is None or value.strip() == "":
        return None
    if len(value) > MAX_FILTER_LENGTH:
        raise _bad(field, f"{field} is too long ({len(value):,} characters).")
    if "\x00" in value:
        raise _bad(field, f"{field} must not contain a NUL character.")
    return value.strip()


def _choices(value: str | None, field: str, allowed: Sequence[str]) -> list[str] | None:
    text = _text(value, field)
    if text is None:
        return None
    items = [item.strip().lower() for item in text.split(",") if item.strip()]
    for item in items:
        if item not in allowed:
            raise _bad(
                field, f"Unknown {field} '{_shown(item)}'. Choose from {', '.join(allowed)}."
            )
    return items or None


def _principal(value: str | None) -> tuple[str, str] | None:
    text = _text(value, "principal")
    if text is None:
        return None
    kind, colon, name = text.partition(":")
    if not colon or kind.lower() not in PRINCIPAL_TYPES or not name:
        raise _bad(
            "principal",
            f"principal must be user:<username> or team:<team name>, got '{_shown(text)}'.",
        )
    kind = kind.lower()
    # Events keep the name as it was spelled then; a name typed in another case finds the
    # principal's own spelling when the principal still exists.
    if kind == "user":
        users = User.objects.filter(username__iexact=name)
        spellings = list(users.values_list("username", flat=True)[:10])
    else:
        groups = Group.objects.filter(name__iexact=name)
        spellings = list(groups.values_list("name", flat=True)[:10])
    return kind, (name if name in spellings or not spellings else spellings[0])


def _object(value: str | None) -> str | None:
    text = _text(value, "object")
    if text is None:
        return None
    try:
        path = parse_path(text)
    except IdentifierError as exc:
        raise _bad("object", f"object must be a SQL path of 1 to 3 parts: {exc}") from exc
    return object_key(path)


def _job(value: str | None) -> uuid.UUID | None:
    text = _text(value, "job")
    if text is None:
        return None
    try:
        return uuid.UUID(text)
    except ValueError:
        raise _bad("job", f"job must be a job id (a UUID), got '{_shown(text)}'.") from None


class _Collate(Collate):
    # Parenthesised: Django appends "::text" to the left side of LIKE, which would otherwise
    # bind to the collation's name and leave the comparison in the column's collation.
    template = "(%(expressions)s %(function)s %(collation)s)"


def _under(qs: QuerySet[AuditEvent], key: str) -> QuerySet[AuditEvent]:
    """Events of the object ``key`` and of everything below it."""
    column = _Collate("object_key", "C") if connection.vendor == "postgresql" else F("object_key")
    qs = qs.alias(_key=column)
    return qs.filter(Q(_key=key) | Q(_key__startswith=key + SEPARATOR))


def page_key(event: AuditEvent) -> list[Any]:
    return [event.at.isoformat(), event.pk]


def _keyset(after: Any) -> tuple[datetime, int]:
    if isinstance(after, list) and len(after) == 2 and isinstance(after[0], str):
        at, last_id = after
        if type(last_id) is int:
            try:
                when = datetime.fromisoformat(at)
            except ValueError:
                pass
            else:
                if when.tzinfo is not None:
                    return when, last_id
    raise CoreError(
        "The page_token is not one this server issued; start again without it.",
        details={"field": "page_token"},
    )


def _page(qs: QuerySet[AuditEvent], after: Any, limit: int) -> list[AuditEvent]:
    if after is not None:
        at, last_id = _keyset(after)
        qs = qs.filter(Q(at__lt=at) | Q(at=at, id__lt=last_id))
    return list(qs.order_by("-at", "-id")[:limit])


def events(
    *,
    action: str | None = None,
    actor: str | None = None,
    principal: str | None = None,
    object: str | None = None,  # the API's parameter name
    object_kind: str | None = None,
    job: str | None = None,
    since: str | None = None,
    until: str | None = None,
    after: Any = None,
    limit: int,
) -> list[AuditEvent]:
    """The events that pass every filter given (raw query-parameter values), newest first:
    ``action`` and ``object_kind`` comma lists; ``actor`` a username; ``principal``
    ``user:alice`` | ``team:analysts``; ``object`` a SQL path (it and below); ``job`` a job
    id; ``since`` (inclusive) and ``until`` (exclusive) ISO-8601, naive meaning UTC."""
    qs: QuerySet[AuditEvent] = AuditEvent.objects.all()
    actions = _choices(action, "action", ACTIONS)
    if actions:
        qs = qs.filter(action__in=actions)
    who = _text(actor, "actor")
    if who is not None:
        spellings = list(
            User.objects.filter(username__iexact=who).values_list("username", flat=True)[:10]
        )
        qs = qs.filter(actor_name__in=spellings or [who])
    named = _principal(principal)
    if named is not None:
        qs = qs.filter(principal_type=named[0], principal_name=named[1])
    key = _object(object)
    if key is not None:
        qs = _under(qs, key)
    kinds = _choices(object_kind, "object_kind", OBJECT_KINDS)
    if kinds:
        qs = qs.filter(object_kind__in=kinds)
    job_id = _job(job)
    if job_id is not None:
        qs = qs.filter(job_id=job_id)
    start = parse_instant(since, "since")
    if start is not None:
        qs = qs.filter(at__gte=start)
    end = parse_instant(until, "until")
    if end is not None:
        qs = qs.filter(at__lt=end)
    return _page(qs, after, limit)


def events_of(
    securable_key: str,
    *,
    actions: Sequence[str] = ACTIONS,
    after: Any = None,
    limit: int,
) -> list[AuditEvent]:
    """One securable's events (``securable_key`` as ``Grant`` stores it), newest first: an
    object page's "recent access" (``actions``: e.g. read, write, grant, revoke, owner). The
    caller decides who may see them (MANAGE on the object)."""
    qs = AuditEvent.objects.filter(securable_key=securable_key, action__in=list(actions))
    return _page(qs, after, limit)
