"""Reading grants: ``show_grants`` (SQL's SHOW GRANTS) and ``permissions``, the REST body of
an object's permissions (who holds what, directly and inherited; the caller's effective
privileges and ``can``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from catalog import access as catalog_access
from catalog.grants._common import _ancestors, _object_json, _passes_down
from catalog.grants.principals import Principal, PrincipalType
from catalog.grants.securables import require_visible
from catalog.models import EVERYONE, Grant
from core import privileges as rule
from core.privileges import Access, Kind, Privilege, Securable


@dataclass(frozen=True)
class GrantLine:
    """One row of ``SHOW GRANTS`` (and of the REST body before grouping)."""

    principal: str
    principal_type: PrincipalType
    privilege: Privilege
    object_type: str  # catalog | database | table | view | function | storage
    object_name: str  # the object's SQL path (storage: the root)
    # None for a grant on the object itself; else the catalog or database it comes from.
    inherited_from: Securable | None = None


def _principal_of(row: Grant) -> Principal:
    if row.user_id is not None:
        return Principal("user", row.user_id, row.user.get_username() if row.user else "")
    return Principal("team", cast(int, row.team_id), row.team.name if row.team else "")


def _team_keys(user: Any) -> set[str]:
    """The principal keys of ``user`` and their teams, ``everyone`` included."""
    if getattr(user, "pk", None) is None:
        return set()
    keys = {f"user:{user.pk}"}
    teams = Group.objects.filter(user=user).values_list("pk", flat=True)
    keys |= {f"team:{pk}" for pk in teams}
    keys |= {
        f"team:{pk}" for pk in Group.objects.filter(name=EVERYONE).values_list("pk", flat=True)
    }
    return keys


def _lines(user: Any, securable: Securable, principal: Principal | None) -> list[GrantLine]:
    access = catalog_access.access_for(user)
    above = {a.key: a for a in _ancestors(securable)}
    rows = Grant.objects.filter(securable_key__in=[securable.key, *above]).select_related(
        "user", "team"
    )
    if principal is not None:
        rows = rows.filter(principal_key=principal.key)
    if Privilege.MANAGE not in rule.effective(access, securable) and not (
        securable.kind is Kind.STORAGE and access.admin
    ):
        rows = rows.filter(principal_key__in=_team_keys(user))
    object_name = securable.root if securable.kind is Kind.STORAGE else securable.sql_path
    lines = []
    for row in rows:
        privilege = rule.parse_privilege(row.privilege)
        if privilege is None:
            continue
        source = above.get(row.securable_key)
        if source is not None and not _passes_down(securable.kind, privilege):
            continue
        who = _principal_of(row)
        lines.append(
            GrantLine(
                principal=who.name,
                principal_type=who.type,
                privilege=privilege,
                object_type=securable.kind.value,
                object_name=object_name,
                inherited_from=source,
            )
        )
    depth = {key: index + 1 for index, key in enumerate(above)}
    lines.sort(
        key=lambda line: (
            line.principal_type,
            line.principal.lower(),
            line.principal,
            depth.get(line.inherited_from.key, 0) if line.inherited_from else 0,
            rule.ORDER.index(line.privilege),
        )
    )
    return lines


def show_grants(
    *, user: Any, securable: Securable, principal: Principal | None = None
) -> list[GrantLine]:
    """The grants on ``securable`` and those inherited from its database and catalog, ordered
    (principal type, principal, privilege). Without ``MANAGE`` only the caller's own and their
    teams' rows (Unity Catalog's rule). ``principal`` narrows to one principal."""
    require_visible(user, securable)
    lines = _lines(user, securable, principal)
    return sorted(
        lines,
        key=lambda line: (
            line.principal_type,
            line.principal.lower(),
            line.principal,
            rule.ORDER.index(line.privilege),
            line.inherited_from is not None,
        ),
    )


def _owner_name(s: Securable) -> str | None:
    if s.kind is Kind.STORAGE:
        return None
    own = {Kind.CATALOG: 0, Kind.DATABASE: 1}.get(s.kind, 2)
    owner_id = s.owner_ids[own]
    if owner_id is None:
        return None
    users = get_user_model().objects
    name = users.filter(pk=owner_id).values_list(users.model.USERNAME_FIELD, flat=True).first()
    return str(name) if name is not None else None


def can(access: Access, s: Securable) -> dict[str, bool]:
    """``can`` of an object (``core.privileges.flags``); storage roots: managed by admins."""
    flags = rule.flags(access, s)
    if s.kind is Kind.STORAGE:
        flags.update(modify=access.admin, drop=False, manage=access.admin, transfer_owner=False)
    return flags


def permissions(
    *,
    user: Any,
    securable: Securable,
    principal: Principal | None = None,
) -> dict[str, Any]:
    """The REST body of ``GET …/{object}/permissions`` (ADR 0011 §4.2): ``object``, ``owner``,
    ``privilege_assignments`` (grouped per principal, direct and inherited),
    ``effective`` and ``can``."""
    require_visible(user, securable)
    access = catalog_access.access_for(user)
    groups: dict[tuple[str, str, str], dict[str, Any]] = {}
    for line in _lines(user, securable, principal):
        source = line.inherited_from
        key = (line.principal_type, line.principal, source.key if source else "")
        entry = groups.setdefault(
            key,
            {
                "principal": line.principal,
                "principal_type": line.principal_type,
                "privileges": [],
                "inherited_from": _object_json(source) if source else None,
            },
        )
        entry["privileges"].append(line.privilege.value)
    return {
        "object": _object_json(securable),
        "owner": _owner_name(securable),
        "privilege_assignments": list(groups.values()),
        "effective": [p.value for p in rule.sorted_privileges(rule.effective(access, securable))],
        "can": can(access, securable),
    }
