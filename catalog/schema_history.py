"""A table's schema changes, for its History tab (``GET …/tables/{t}/schema-changes``): the
table's ``create`` and ``alter`` audit events, newest first, each with who, when and what
changed (``core.schema_diff``). An ``alter`` keeps the declared schema it replaced
(``schema_before``); the schema it left is the next newer alter's ``schema_before``, or the
table's schema now. Read-only: the caller has found the table as the user may see it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Q

from audit import selectors as audit_selectors
from audit.models import ALTER, CREATE, AuditEvent
from catalog.access import relation_securable
from catalog.models import Table
from core.schema_diff import schema_diff

ACTIONS = (CREATE, ALTER)


@dataclass(frozen=True)
class SchemaChange:
    event: AuditEvent
    changes: list[dict[str, Any]]


def _left_by_newer(key: str, event: AuditEvent) -> AuditEvent | None:
    """The oldest ``alter`` of the table newer than ``event`` (a page's first event)."""
    newer = AuditEvent.objects.filter(securable_key=key, action=ALTER).filter(
        Q(at__gt=event.at) | Q(at=event.at, id__gt=event.pk)
    )
    return newer.order_by("at", "id").first()


def schema_changes(table: Table, *, after: Any = None, limit: int) -> list[SchemaChange]:
    """Up to ``limit`` of the table's schema events, newest first, after the page key
    ``after`` (``audit.selectors.page_key``; a bad one is ``VALIDATION_ERROR``)."""
    key = relation_securable(table).key
    events = audit_selectors.events_of(key, actions=ACTIONS, after=after, limit=limit)
    if not events:
        return []
    schema_after: Any = table.schema
    if after is not None:
        newer = _left_by_newer(key, events[0])
        if newer is not None:
            schema_after = newer.detail.get("schema_before")
    found: list[SchemaChange] = []
    for event in events:
        if event.action == CREATE:
            found.append(SchemaChange(event, schema_diff({}, schema_after)))
            continue
        before = event.detail.get("schema_before")
        found.append(SchemaChange(event, schema_diff(before, schema_after)))
        schema_after = before
    return found
