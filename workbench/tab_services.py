"""Writes of editor tabs: create, change (only on the version the change was made on),
delete, and which tab is active. Each user's tabs are written under a lock on their user row,
so the count limit and the one active tab hold with two browsers writing at once."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Max

from core import identifiers, storable
from core.errors import AlreadyExists, Conflict, CoreError, NotFound
from core.limits import EditorTabLimits, check_tab_count, check_tab_text
from workbench import selectors
from workbench.models import MAX_TAB_TITLE_LENGTH, EditorTab
from workbench.services import checked_label

AnyUser = selectors.AnyUser
EDITABLE = ("title", "sql", "position", "saved_query_id", "catalog", "database")
MAX_POSITION = 1_000_000


def limits() -> EditorTabLimits:
    return EditorTabLimits.from_settings(settings)


def _lock_user(user_id: Any) -> None:
    # One writer of a user's tabs at a time: counts and the active flag stay true.
    get_user_model().objects.select_for_update().filter(pk=user_id).first()


def _check_title(title: Any) -> str:
    return checked_label(
        title,
        field="title",
        missing="An editor tab needs a title.",
        named="A tab's title",
        max_length=MAX_TAB_TITLE_LENGTH,
    )


def _check_sql(sql: Any) -> str:
    if not isinstance(sql, str):
        raise CoreError("A tab's SQL must be text.", details={"field": "sql"})
    check_tab_text(sql, limits())
    raw = storable.find(sql)
    if raw is not None:
        raise storable.unstorable("the tab's SQL", "sql", sql, raw)
    return sql


def _check_position(position: Any) -> int:
    if isinstance(position, bool) or not isinstance(position, int) or position < 0:
        raise CoreError(
            "A tab's position must be a whole number ≥ 0.", details={"field": "position"}
        )
    if position > MAX_POSITION:
        raise CoreError(
            f"A tab's position must be at most {MAX_POSITION:,}.", details={"field": "position"}
        )
    return int(position)


def _check_name(value: Any, field: str) -> str | None:
    if value is None:
        return None
    try:
        return identifiers.validate_name(value, f"{field} name")
    except CoreError as exc:
        raise CoreError(exc.message, details={**exc.details, "field": field}) from exc


def _check_saved_query(user: AnyUser, value: Any) -> Any:
    """A saved query the user may read (its id), or None."""
    if value is None:
        return None
    try:
        return selectors.saved_query_get(user=user, query_id=value).pk
    except NotFound as exc:
        raise CoreError(
            f"Saved query {str(value)[:100]} does not exist.", details={"field": "saved_query_id"}
        ) from exc


def _apply(user: AnyUser, row: EditorTab, changes: dict[str, Any]) -> None:
    if "title" in changes:
        row.title = _check_title(changes["title"])
    if "sql" in changes:
        row.sql = _check_sql(changes["sql"])
    if "position" in changes:
        row.position = _check_position(changes["position"])
    if "saved_query_id" in changes:
        row.saved_query_id = _check_saved_query(user, changes["saved_query_id"])
    for field in ("catalog", "database"):
        if field in changes:
            setattr(row, field, _check_name(changes[field], field))


def editor_tab_create(
    *, user: AnyUser, id: Any = None, active: bool = False, **fields: Any
) -> tuple[EditorTab, bool]:
    """A new tab of the user at the end (unless ``position`` is given); ``id`` may be chosen
    by the client (a UUID), so a create sent again after a lost answer makes no second tab.
    Returns the tab and whether it was made now (False: it existed already)."""
    owner_id = selectors.require_user_id(user)
    unknown = sorted(set(fields) - set(EDITABLE))
    if unknown:  # the view's serializer lets none through; a caller in code might
        raise CoreError(f"Unknown tab fields: {', '.join(unknown)}.")
    key = None
    if id is not None:
        key = selectors.editor_tab_key(id)
        if key is None:
            raise CoreError("A tab's id must be a UUID.", details={"field": "id"})
    row = EditorTab(owner_id=owner_id, title="", sql="")
    _apply(user, row, {"sql": "", **fields})
    if "title" not in fields:
        raise CoreError("An editor tab needs a title.", details={"field": "title"})
    with transaction.atomic():
        _lock_user(owner_id)
        if key is not None:
            existing = EditorTab.objects.filter(pk=key).first()
            if existing is not None and existing.owner_id == owner_id:
                return existing, False
            if existing is not None:
                raise AlreadyExists(
                    f"Tab id {key} is taken; send the tab without an id to get a new one.",
                    details={"field": "id"},
                )
            row.pk = key
        check_tab_count(EditorTab.objects.filter(owner_id=owner_id).count(), limits())
        if "position" not in fields:
            last = EditorTab.objects.filter(owner_id=owner_id).aggregate(n=Max("position"))["n"]
            row.position = min(MAX_POSITION, 0 if last is None else last + 1)
        if active:
            EditorTab.objects.filter(owner_id=owner_id, active=True).update(active=False)
            row.active = True
        row.save(force_insert=True)
    return row, True


def editor_tab_update(
    *, user: AnyUser, tab_id: Any, version: Any, changes: dict[str, Any]
) -> EditorTab:
    """Change a tab made at ``version``: 409 CONFLICT (with the tab as it is now) when the
    tab has been written since, so a second browser's stale text never overwrites."""
    owner_id = selectors.require_user_id(user)
    if isinstance(version, bool) or not isinstance(version, int):
        raise CoreError(
            "A tab's change needs the version it was made on.", details={"field": "version"}
        )
    with transaction.atomic():
        key = selectors.editor_tab_key(tab_id)
        row = (
            EditorTab.objects.select_for_update().filter(owner_id=owner_id, pk=key).first()
            if key is not None
            else None
        )
        if row is None:
            raise NotFound(f"Editor tab {str(tab_id)[:100]} does not exist.")
        if row.version != version:
            raise Conflict(
                f"Tab [{row.title}] changed since version {version} (another window wrote "
                f"version {row.version}); load it again and make the change on that.",
                details={"field": "version", "version": row.version},
            )
        _apply(user, row, changes)
        row.version += 1
        row.save()
    return row


def editor_tab_delete(*, user: AnyUser, tab_id: Any) -> None:
    row = selectors.editor_tab_get(user=user, tab_id=tab_id)
    row.delete()


def editor_tab_activate(*, user: AnyUser, tab_id: Any) -> EditorTab:
    """Make one of the user's tabs the active one (the one a new window opens on)."""
    owner_id = selectors.require_user_id(user)
    with transaction.atomic():
        _lock_user(owner_id)
        row = selectors.editor_tab_get(user=user, tab_id=tab_id)
        EditorTab.objects.filter(owner_id=owner_id, active=True).exclude(pk=row.pk).update(
            active=False
        )
        if not row.active:
            EditorTab.objects.filter(pk=row.pk).update(active=True)
            row.active = True
    return row
