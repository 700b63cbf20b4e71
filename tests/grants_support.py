"""Grants for tests: share a catalog (or any object) the way an owner would, without going
through the statements under test. The services' own ``catalog.grants`` is what the product
uses; tests that are about something else use these to set the scene in one line."""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth.models import Group

from catalog import access
from catalog.models import EVERYONE, Catalog, Database, Function, Grant, Table
from core.privileges import Securable

READ = ("USE", "SELECT", "EXECUTE")


def _securable(obj: Catalog | Database | Table | Function) -> Securable:
    if isinstance(obj, Catalog):
        return access.catalog_securable(obj)
    if isinstance(obj, Database):
        return access.database_securable(obj)
    if isinstance(obj, Table):
        return access.relation_securable(obj)
    return access.function_securable(obj)


def share(
    obj: Catalog | Database | Table | Function | str,
    privileges: Iterable[str] = READ,
    *,
    user: object = None,
    team: str | None = None,
) -> None:
    """Grant ``privileges`` on ``obj`` (a row, or a catalog's name) to ``user`` or ``team``;
    to the team ``everyone`` when neither is given (the old "everyone reads" rule)."""
    if isinstance(obj, str):
        obj = Catalog.objects.get(name_key=obj.lower())
    s = _securable(obj)
    if user is not None:
        principal = {"user": user, "principal_key": f"user:{user.pk}"}  # type: ignore[attr-defined]
    else:
        group, _ = Group.objects.get_or_create(name=team or EVERYONE)
        principal = {"team": group, "principal_key": f"team:{group.pk}"}
    kind = s.kind.value
    where = {
        "catalog_id": s.catalog_id,
        "database_id": s.database_id,
        "table_id": s.object_id if kind in ("table", "view") else None,
        "function_id": s.object_id if kind == "function" else None,
    }
    for privilege in privileges:
        Grant.objects.get_or_create(
            securable_key=s.key,
            principal_key=principal["principal_key"],
            privilege=privilege,
            defaults={"securable_kind": kind, **where, **principal},
        )
