"""Reads of saved queries: what a user may see, in keyset pages ordered by name."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.db.models import Exists, OuterRef, Q, QuerySet

from core.errors import CoreError, NotFound
from workbench.models import EditorTab, SavedQuery

SCOPES = ("mine", "shared", "all")

AnyUser = AbstractBaseUser | AnonymousUser

_BAD_TOKEN = "The page_token is not one this server issued; start again without it."


def require_user_id(user: AnyUser) -> Any:
    if user.pk is None:
        raise NotFound("There is no such thing for an anonymous user.")
    return user.pk


def _shares_a_team(user_id: Any) -> Exists:
    """The row's owner is in at least one of the user's teams (Django groups)."""
    memberships = User.groups.through.objects
    my_teams = memberships.filter(user_id=user_id).values("group_id")
    return Exists(memberships.filter(user_id=OuterRef("owner_id"), group_id__in=my_teams))


def visible(user: AnyUser, scope: str = "all") -> QuerySet[SavedQuery]:
    """The user's own queries (``mine``), others' shared ones in a common team (``shared``),
    or both (``all``)."""
    me = require_user_id(user)
    qs = SavedQuery.objects.select_related("owner")
    shared = Q(shared=True) & ~Q(owner_id=me) & Q(_shares_a_team(me))
    if scope == "mine":
        return qs.filter(owner_id=me)
    if scope == "shared":
        return qs.filter(shared)
    return qs.filter(Q(owner_id=me) | shared)


def scope_of(value: str | None) -> str:
    if value is None or value == "":
        return "all"
    if value not in SCOPES:
        raise CoreError(
            f"Unknown scope '{value}'. Choose from {', '.join(SCOPES)}.",
            details={"field": "scope"},
        )
    return value


def saved_query_list(
    *, user: AnyUser, scope: str | None = None, q: str | None = None, after: Any, limit: int
) -> list[SavedQuery]:
    """Visible saved queries by name (then id), ``q`` a case-insensitive name substring."""
    qs = visible(user, scope_of(scope))
    if q:
        if "\x00" in q:
            return []  # no name contains NUL (PostgreSQL text cannot hold one)
        qs = qs.filter(name_key__contains=q.lower())
    if after is not None:
        if not (
            isinstance(after, list)
            and len(after) == 2
            and all(isinstance(v, str) for v in after)
            and "\x00" not in after[0]
        ):
            raise CoreError(_BAD_TOKEN, details={"field": "page_token"})
        try:
            last_id = uuid.UUID(after[1])
        except ValueError as exc:
            raise CoreError(_BAD_TOKEN, details={"field": "page_token"}) from exc
        qs = qs.filter(Q(name_key__gt=after[0]) | Q(name_key=after[0], id__gt=last_id))
    return list(qs.order_by("name_key", "id")[:limit])


def page_key(row: SavedQuery) -> list[str]:
    """The page-token key of a saved query in a list."""
    return [row.name_key, str(row.pk)]


def saved_query_get(*, user: AnyUser, query_id: Any) -> SavedQuery:
    """A saved query the user may read; NOT_FOUND otherwise (whether or not it exists)."""
    try:
        key = uuid.UUID(str(query_id))
    except ValueError:
        key = None
    found = visible(user).filter(pk=key).first() if key is not None else None
    if found is None:
        raise NotFound(f"Saved query {query_id} does not exist.")
    return found


# --- editor tabs -----------------------------------------------------------------------------


def editor_tab_list(*, user: AnyUser) -> list[EditorTab]:
    """The user's editor tabs in their order (position, then when opened)."""
    return list(EditorTab.objects.filter(owner_id=require_user_id(user)))


def editor_tab_key(tab_id: Any) -> uuid.UUID | None:
    """A tab id as a UUID, None when it is not one (no tab has it)."""
    try:
        return uuid.UUID(str(tab_id))
    except ValueError:
        return None


def editor_tab_get(*, user: AnyUser, tab_id: Any) -> EditorTab:
    """One of the user's tabs; NOT_FOUND for any other id (another user's included)."""
    key = editor_tab_key(tab_id)
    found = (
        EditorTab.objects.filter(owner_id=require_user_id(user), pk=key).first()
        if key is not None
        else None
    )
    if found is None:
        raise NotFound(f"Editor tab {str(tab_id)[:100]} does not exist.")
    return found
