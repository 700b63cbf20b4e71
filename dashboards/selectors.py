"""Reads of dashboards: the user's own and those shared with them by a teammate (as saved
queries are shared); any other id answers NOT_FOUND, as a missing one does."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User as UserModel
from django.db.models import Exists, OuterRef, Prefetch, Q, QuerySet

from core.errors import NotFound
from dashboards.models import Dashboard, Tile
from jobs.selectors import User, keyset, parse_uuid, user_id


def _shares_a_team(me: Any) -> Exists:
    memberships = UserModel.groups.through.objects
    my_teams = memberships.filter(user_id=me).values("group_id")
    return Exists(memberships.filter(user_id=OuterRef("owner_id"), group_id__in=my_teams))


def visible(user: User) -> QuerySet[Dashboard]:
    """The user's dashboards and teammates' shared ones, with their tiles."""
    me = user_id(user)
    tiles = Tile.objects.select_related("saved_query").order_by("y", "x", "created_at", "id")
    return (
        Dashboard.objects.select_related("owner")
        .prefetch_related(Prefetch("tiles", queryset=tiles))
        .filter(Q(owner_id=me) | (Q(shared=True) & Q(_shares_a_team(me))))
    )


def dashboard_list(*, user: User, after: Any, limit: int) -> list[Dashboard]:
    """Visible dashboards, oldest first."""
    qs = visible(user)
    if after is not None:
        at, last_id = keyset(after)
        qs = qs.filter(Q(created_at__gt=at) | Q(created_at=at, id__gt=last_id))
    return list(qs.order_by("created_at", "id")[:limit])


def page_key(row: Dashboard) -> list[str]:
    return [row.created_at.isoformat(), str(row.pk)]


def dashboard_get(*, user: User, dashboard_id: Any) -> Dashboard:
    """A dashboard the user may view; NOT_FOUND otherwise (whether or not it exists)."""
    pk = parse_uuid(dashboard_id)
    found = visible(user).filter(pk=pk).first() if pk is not None else None
    if found is None:
        raise NotFound(f"Dashboard {str(dashboard_id)[:100]} does not exist.")
    return found


def tile_get(*, dashboard: Dashboard, tile_id: Any) -> Tile:
    """A tile of ``dashboard`` (one the caller may view); NOT_FOUND for any other id."""
    pk = parse_uuid(tile_id)
    found = next((t for t in dashboard.tiles.all() if t.pk == pk), None)
    if found is None:
        raise NotFound(f"Tile {str(tile_id)[:100]} is not on dashboard [{dashboard.title}].")
    return found
