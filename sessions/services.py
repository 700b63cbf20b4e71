"""SQL sessions: open, read (expiry on the way), change and close them.

A session's properties are checked by the registry of ``core.session_properties`` bound to
the server's limits (``sessions.planning``); its current catalog and database are names as
stored in the catalog.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from catalog import selectors as catalog_selectors
from catalog.access import access_for
from catalog.models import Catalog
from core.errors import CoreError, NotFound, PermissionDenied
from core.planner import guard
from core.privileges import Access
from jobs.models import Session
from jobs.selectors import User, keyset, parse_uuid, user_id
from sessions import planning, quotas, workspace
from webapp.rows import RowReader


def _expired_sessions(qs: QuerySet[Session]) -> QuerySet[Session]:
    """Sessions of ``qs`` idle past their own timeout (one cutoff per distinct timeout, which
    every database can compare; there are few distinct timeouts)."""
    now = timezone.now()
    timeouts = set(qs.order_by().values_list("idle_timeout_seconds", flat=True).distinct())
    expired = Q(pk__in=[])
    for seconds in timeouts:
        expired |= Q(
            idle_timeout_seconds=seconds, last_used_at__lte=now - timedelta(seconds=seconds)
        )
    return qs.filter(expired)


def _where(
    catalog: str | None,
    database: str | None,
    *,
    catalog_given: bool,
    database_given: bool,
    current: tuple[str | None, str | None],
    access: Access,
) -> tuple[str | None, str | None]:
    """The (catalog, database) a session moves to; names as stored (their case). A catalog
    or database the user may not see answers as a missing one (``catalog.selectors``); a
    catalog's default database the user may not see is not entered."""
    new_catalog, new_database = current
    if catalog_given:
        if catalog is None:
            new_catalog, new_database = None, None
        else:
            found = catalog_selectors.get_catalog(catalog, access=access)
            new_catalog, new_database = found.name, _visible_default(found, access)
    if database_given:
        if database is None:
            new_database = None
        else:
            if new_catalog is None:
                raise CoreError(
                    "A current database needs a current catalog; set current_catalog too.",
                    details={"field": "current_database"},
                )
            found_db = catalog_selectors.get_database(new_catalog, database, access=access)
            new_catalog, new_database = found_db.catalog.name, found_db.name
    return new_catalog, new_database


def _visible_default(catalog: Catalog, access: Access) -> str | None:
    """The catalog's default database, when there is one the user may see."""
    if not catalog.default_database:
        return None
    try:
        return catalog_selectors.get_database(
            catalog.name, catalog.default_database, access=access
        ).name
    except (NotFound, PermissionDenied):
        return None


def _properties(properties: Any) -> dict[str, str]:
    """A session's properties checked by the registry (type, range, canonical form)."""
    return planning.session_properties().check_all(properties)


def session_create(
    *,
    user: User,
    current_catalog: str | None = None,
    current_database: str | None = None,
    properties: dict[str, Any] | None = None,
    idle_timeout_seconds: int | None = None,
) -> Session:
    """Open a SQL session for ``user``. Naming only a catalog selects its default database.

    At ``TESSERA_USER_SESSIONS`` open sessions the user's oldest idle one is closed first
    (``quotas.make_room_for_session``; none idle: ``TooManySessions``, nothing created)."""
    catalog, database = _where(
        current_catalog,
        current_database,
        catalog_given=current_catalog is not None,
        database_given=current_database is not None,
        current=(None, None),
        access=access_for(user),
    )
    session = Session(
        user_id=user_id(user),
        current_catalog=catalog,
        current_database=database,
        properties=_properties(properties or {}),
        last_used_at=timezone.now(),
        idle_timeout_seconds=idle_timeout_seconds or settings.TESSERA_SESSION_IDLE_SECONDS,
    )
    with transaction.atomic():
        quotas.make_room_for_session(session.user_id)
        session.save()
    return session


def session_open(
    *, user: User, start: str = "empty", **fields: Any
) -> tuple[Session, workspace.Start]:
    """``session_create``; with ``start="workspace"`` and no catalog asked for, the session
    starts where ``workspace.starting_point`` says. Returns it and where it started."""
    if fields.get("current_catalog") is not None or fields.get("current_database") is not None:
        session = session_create(user=user, **fields)
        workspace.remember(user, session.current_catalog, session.current_database)
        return session, "requested"
    if start != "workspace":
        return session_create(user=user, **fields), "none"
    catalog, database, started_in = workspace.starting_point(user)
    fields = {**fields, "current_catalog": catalog, "current_database": database}
    return session_create(user=user, **fields), started_in


# The longest a session's ``last_used_at`` lags behind its last use.
TOUCH_SECONDS = 5.0
# Every statement reads its session first: compiled once (webapp.rows).
_SESSION_OF_USER = RowReader(Session, "id", "user_id", select_related=("user",))


def session_get(*, user: User, session_id: Any, touch: bool = True) -> Session:
    """The caller's live session; NOT_FOUND for others' sessions and expired ones (which are
    deleted on the way). Every use moves ``last_used_at`` — written at most every
    ``TOUCH_SECONDS`` (or a tenth of its idle timeout, when shorter): a statement does not
    pay a write for a deadline that would move by less."""
    key = parse_uuid(session_id)
    session = _SESSION_OF_USER.get(key, user_id(user))
    if session is None:
        raise NotFound(f"Session {session_id} does not exist.")
    now = timezone.now()
    if session.expires_at <= now:
        session.delete()
        raise NotFound(f"Session {session_id} has expired.")
    touch_every = min(TOUCH_SECONDS, session.idle_timeout_seconds / 10)
    if touch and (now - session.last_used_at).total_seconds() >= touch_every:
        Session.objects.filter(pk=session.pk).update(last_used_at=now)
        session.last_used_at = now
    return session


def session_list(*, user: User, after: Any, limit: int) -> list[Session]:
    """The caller's live sessions, newest first (expired ones are deleted first)."""
    mine = Session.objects.filter(user_id=user_id(user))
    _expired_sessions(mine).delete()
    qs = mine.select_related("user").order_by("-created_at", "-id")
    if after is not None:
        created, last_id = keyset(after)
        qs = qs.filter(Q(created_at__lt=created) | Q(created_at=created, id__lt=last_id))
    return list(qs[:limit])


def session_update(*, session: Session, changes: dict[str, Any]) -> Session:
    """PATCH: ``current_catalog``, ``current_database`` (null clears), ``properties`` (replaces
    the whole map)."""
    if "current_catalog" in changes or "current_database" in changes:
        session.current_catalog, session.current_database = _where(
            changes.get("current_catalog"),
            changes.get("current_database"),
            catalog_given="current_catalog" in changes,
            database_given="current_database" in changes,
            current=(session.current_catalog, session.current_database),
            access=access_for(session.user),
        )
        workspace.remember(session.user_id, session.current_catalog, session.current_database)
    if "properties" in changes:
        session.properties = _properties(changes["properties"])
    if "idle_timeout_seconds" in changes:
        session.idle_timeout_seconds = changes["idle_timeout_seconds"]
    session.save()
    return session


def session_set_property(*, session: Session, key: str, value: str | None) -> str | None:
    """One property set as ``SET key = value`` sets it, or (``None``) unset as ``RESET key``:
    the key passes SET's allow-list (the registry's keys; a key Spark removed says so), the
    value the registry's check. Returns the canonical value stored."""
    registry = planning.session_properties()
    guard.check_set_key(key, registry.keys)
    checked = None if value is None else registry.check(key, value, field="session_options")
    with transaction.atomic():
        # Locked as SET's command locks it: a concurrent SET or RESET is not lost.
        locked = Session.objects.select_for_update().get(pk=session.pk)
        properties = dict(locked.properties or {})
        if checked is None:
            properties.pop(key, None)
        else:
            properties[key] = checked
        locked.properties = properties
        locked.save(update_fields=["properties"])
    session.properties = properties
    return checked


def session_delete(*, session: Session) -> None:
    """Close a session. Its jobs stay (in the caller's history) without it; its temporary
    objects go with it (CASCADE), and no file is touched."""
    session.delete()
