"""Where a user's new SQL sessions start (``Workspace``).

A session opened without a ``current_catalog`` starts where the user last moved a session
(a toolbar switch, ``PATCH``, ``USE``, or a session opened in a named catalog), else in the
default the user chose (``PATCH /workspace``), else in the server's
``TESSERA_DEFAULT_CATALOG``, else in the user's personal catalog (``personal_catalog``:
``TESSERA_PERSONAL_CATALOG``, created on first use), else nowhere: never in a catalog picked
by its name's order.
A remembered place whose catalog or database was dropped is skipped.
"""

from __future__ import annotations

from typing import Any, Literal

from django.conf import settings

from catalog import selectors as catalog_selectors
from catalog.access import access_for
from core.errors import CoreError, NotFound, PermissionDenied
from core.privileges import Access
from jobs.models import Workspace
from jobs.selectors import User, user_id
from sessions.personal_catalog import personal_catalog

Start = Literal["requested", "last_used", "user_default", "server_default", "personal", "none"]


def workspace_of(user: User) -> Workspace:
    found, _ = Workspace.objects.get_or_create(user_id=user_id(user))
    return found


def remember(user: User | int, catalog: str | None, database: str | None) -> None:
    """The user moved a session to ``catalog``.``database``: new sessions start there."""
    if not catalog:
        return
    key = user if isinstance(user, int) else user_id(user)
    Workspace.objects.update_or_create(
        user_id=key, defaults={"last_catalog": catalog, "last_database": database}
    )


def _existing(
    catalog: str | None, database: str | None, access: Access
) -> tuple[str, str | None] | None:
    """The place as the catalog spells it, when it still exists and the user may see it (a
    missing or invisible database falls back to the catalog's default database, when the
    user may see that one, else to none)."""
    if not catalog:
        return None
    try:
        found = catalog_selectors.get_catalog(catalog, access=access)
    except NotFound:
        return None
    for name in (database, found.default_database):
        if not name:
            continue
        try:
            return found.name, catalog_selectors.get_database(found.name, name, access=access).name
        except (NotFound, PermissionDenied):
            continue
    return found.name, None


def starting_point(user: User) -> tuple[str | None, str | None, Start]:
    """Where a new session of ``user`` starts when none was asked for, and why."""
    place = Workspace.objects.filter(user_id=user_id(user)).first()
    access = access_for(user)
    if place is not None:
        last = _existing(place.last_catalog, place.last_database, access)
        if last is not None:
            return last[0], last[1], "last_used"
        chosen = _existing(place.default_catalog, place.default_database, access)
        if chosen is not None:
            return chosen[0], chosen[1], "user_default"
    server = _existing(settings.TESSERA_DEFAULT_CATALOG or None, None, access)
    if server is not None:
        return server[0], server[1], "server_default"
    own = personal_catalog(user)
    if own is not None:
        mine = _existing(own.name, None, access)
        if mine is not None:
            return mine[0], mine[1], "personal"
    return None, None, "none"


def workspace_update(*, user: User, changes: dict[str, Any]) -> Workspace:
    """``default_catalog`` (null clears both) and ``default_database`` (in that catalog)."""
    place = workspace_of(user)
    catalog = changes.get("default_catalog", place.default_catalog)
    database = changes.get("default_database", place.default_database)
    if "default_catalog" in changes and "default_database" not in changes:
        database = None
    if catalog is None:
        if database is not None:
            raise CoreError(
                "A default database needs a default catalog; set default_catalog too.",
                details={"field": "default_database"},
            )
        place.default_catalog = place.default_database = None
    else:
        access = access_for(user)
        found = catalog_selectors.get_catalog(catalog, access=access)
        place.default_catalog = found.name
        place.default_database = (
            catalog_selectors.get_database(found.name, database, access=access).name
            if database
            else found.default_database
        )
    place.save()
    return place
