"""Changing grants: ``grant`` and ``revoke`` (SQL's GRANT and REVOKE), the REST PATCH of an
object's permissions (``update_permissions``) and ``system_grant`` for management commands.
The only writer of ``Grant`` rows; every change is one transaction with its audit event."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from audit import models as audit_models
from audit.services import record
from catalog import access as catalog_access
from catalog.grants._common import _ancestors, _described, _object_json, _passes_down
from catalog.grants.listing import permissions
from catalog.grants.principals import Principal, find_principal
from catalog.grants.securables import require
from catalog.models import Grant
from core import privileges as rule
from core.errors import CoreError, NotFound, PermissionDenied
from core.privileges import GRANTABLE, Kind, Privilege, Securable

# A PATCH of permissions changes at most this many principals, each with at most this many
# privileges per direction: bigger bodies are refused before anything is looked up.
MAX_CHANGES = 100
MAX_PRIVILEGES = 16

_ALL = ("ALL", "ALL PRIVILEGES")


def parse_privileges(
    kind: Kind, privileges: Iterable[Privilege | str], *, field: str | None = None
) -> list[Privilege]:
    """``privileges`` as ``Privilege``s in ``core.privileges.ORDER``, ``ALL PRIVILEGES``
    expanded to ``GRANTABLE[kind]``; an unknown one, or one that cannot be granted on
    ``kind``, is a ``ValidationError`` (``details.field`` ``field[i]`` when given)."""
    allowed = GRANTABLE[kind]
    chosen: set[Privilege] = set()
    count = 0
    for index, given in enumerate(privileges):
        count += 1
        where = {"field": f"{field}[{index}]"} if field else {}
        if isinstance(given, Privilege):
            parsed: Privilege | None = given
        elif isinstance(given, str):
            if " ".join(given.upper().split()) in _ALL:
                chosen |= allowed
                continue
            parsed = rule.parse_privilege(given)
        else:
            parsed = None
        if parsed is None:
            known = ", ".join(p.value for p in rule.ORDER)
            raise CoreError(
                f"Unknown privilege '{str(given)[:64]}'. Privileges: {known}, ALL PRIVILEGES.",
                details=where,
            )
        if parsed not in allowed:
            names = ", ".join(p.value for p in rule.sorted_privileges(allowed))
            article = "an" if kind.value[0] in "aeiou" else "a"
            what = "storage root" if kind is Kind.STORAGE else kind.value
            raise CoreError(
                f"{parsed.value} cannot be granted on {article} {what}; "
                f"on {article} {what} you may grant {names}.",
                details={**where, "privilege": parsed.value, "allowed": names.split(", ")},
            )
        chosen.add(parsed)
    if count == 0:
        raise CoreError("Name at least one privilege.", details={"field": field} if field else {})
    return rule.sorted_privileges(chosen)


def _require_manage(user: Any, s: Securable) -> None:
    if s.kind is Kind.STORAGE:
        access = catalog_access.access_for(user)
        if not access.admin:
            raise PermissionDenied(
                f"Only admins may grant or revoke READ FILES on storage root '{s.root}'.",
                details={"kind": "storage", "path": s.root, "privilege": "MANAGE"},
            )
        return
    require(user, s, Privilege.MANAGE)


def _object_of(s: Securable) -> list[str]:
    return [s.root] if s.kind is Kind.STORAGE else list(s.path)


def _grant_fields(s: Securable) -> dict[str, Any]:
    kind = s.kind
    return {
        "securable_kind": kind.value,
        "catalog_id": s.catalog_id if kind is not Kind.STORAGE else None,
        "database_id": s.database_id if kind not in (Kind.STORAGE, Kind.CATALOG) else None,
        "table_id": s.object_id if kind in (Kind.TABLE, Kind.VIEW) else None,
        "function_id": s.object_id if kind is Kind.FUNCTION else None,
        "storage_root": s.root if kind is Kind.STORAGE else "",
    }


def _principal_fields(principal: Principal) -> dict[str, Any]:
    if principal.type == "user":
        return {"user_id": principal.id, "team_id": None}
    return {"user_id": None, "team_id": principal.id}


def _held(s: Securable, principal: Principal) -> set[Privilege]:
    rows = Grant.objects.filter(securable_key=s.key, principal_key=principal.key)
    out = set()
    for text in rows.values_list("privilege", flat=True):
        parsed = rule.parse_privilege(text)
        if parsed is not None:
            out.add(parsed)
    return out


def _apply_grant(
    actor: Any, s: Securable, wanted: Sequence[Privilege], principal: Principal
) -> list[Privilege]:
    """Write the rows of ``wanted`` ``principal`` does not hold yet on ``s``, and their
    audit event, in the caller's transaction; the privileges newly granted."""
    new = [p for p in wanted if p not in _held(s, principal)]
    if not new:
        return []
    granted_by = actor if getattr(actor, "pk", None) is not None else None
    Grant.objects.bulk_create(
        [
            Grant(
                privilege=p.value,
                securable_key=s.key,
                principal_key=principal.key,
                granted_by=granted_by,
                **_grant_fields(s),
                **_principal_fields(principal),
            )
            for p in new
        ],
        ignore_conflicts=True,
    )
    record(
        audit_models.GRANT,
        actor=granted_by,
        object_kind=s.kind.value,
        path=_object_of(s),
        securable_key=s.key,
        principal=(principal.type, principal.name),
        privileges=[p.value for p in new],
    )
    return new


def _apply_revoke(
    actor: Any, s: Securable, wanted: Sequence[Privilege], principal: Principal
) -> list[Privilege]:
    held = _held(s, principal)
    gone = [p for p in wanted if p in held]
    if not gone:
        return []
    Grant.objects.filter(
        securable_key=s.key, principal_key=principal.key, privilege__in=[p.value for p in gone]
    ).delete()
    record(
        audit_models.REVOKE,
        actor=actor if getattr(actor, "pk", None) is not None else None,
        object_kind=s.kind.value,
        path=_object_of(s),
        securable_key=s.key,
        principal=(principal.type, principal.name),
        privileges=[p.value for p in gone],
    )
    return gone


def _inherited_from(s: Securable, principal: Principal, privilege: Privilege) -> Securable | None:
    """The nearest catalog or database above ``s`` where ``principal`` was granted
    ``privilege`` (when it passes down to ``s``)."""
    if not _passes_down(s.kind, privilege):
        return None
    for above in _ancestors(s):
        if privilege in _held(above, principal):
            return above
    return None


def grant(
    *,
    user: Any,
    securable: Securable,
    privileges: Sequence[Privilege | str],
    principal: Principal,
) -> list[Privilege]:
    """Give ``privileges`` (``ALL PRIVILEGES`` expands to ``GRANTABLE[kind]``) on
    ``securable`` to ``principal``. Needs ``MANAGE`` on it (storage roots: an admin),
    ``PermissionDenied`` otherwise. A privilege outside ``GRANTABLE[kind]`` is a
    ``ValidationError`` naming the allowed ones. Idempotent: returns the privileges newly
    granted. One transaction with one audit ``grant`` event."""
    _require_manage(user, securable)
    wanted = parse_privileges(securable.kind, privileges)
    with transaction.atomic():
        new = _apply_grant(user, securable, wanted, principal)
    catalog_access.forget(user)
    return new


def revoke(
    *,
    user: Any,
    securable: Securable,
    privileges: Sequence[Privilege | str],
    principal: Principal,
) -> list[Privilege]:
    """Take ``privileges`` back. Needs ``MANAGE``. Revoking what was never granted is a
    ``ValidationError`` ("nothing to revoke"); revoking one that comes from a catalog or
    database says "granted on catalog `c`; revoke it there". Returns those revoked. One
    transaction with one audit ``revoke`` event."""
    _require_manage(user, securable)
    wanted = parse_privileges(securable.kind, privileges)
    with transaction.atomic():
        gone = _apply_revoke(user, securable, wanted, principal)
        if not gone:
            for privilege in wanted:
                above = _inherited_from(securable, principal, privilege)
                if above is not None:
                    raise CoreError(
                        f"{privilege.value} on {_described(securable)} is granted to "
                        f"{principal.described()} on {_described(above)}; revoke it there.",
                        details={
                            "privilege": privilege.value,
                            "inherited_from": _object_json(above),
                        },
                    )
            names = ", ".join(p.value for p in wanted)
            raise CoreError(
                f"Nothing to revoke: {principal.described()} holds no {names} granted on "
                f"{_described(securable)}.",
                details={"privileges": [p.value for p in wanted]},
            )
    catalog_access.forget(user)
    return gone


@dataclass(frozen=True)
class _Change:
    principal: Principal
    add: list[Privilege]
    remove: list[Privilege]
    index: int
    remove_given: list[Any]


def _shape_error(message: str, field: str) -> CoreError:
    return CoreError(message, details={"field": field})


def _privilege_list(change: Mapping[str, Any], key: str, field: str) -> list[Any]:
    value = change.get(key, [])
    if value is None:
        return []
    if not isinstance(value, list):
        raise _shape_error(f"'{field}' must be a list of privileges, like [\"SELECT\"].", field)
    if len(value) > MAX_PRIVILEGES:
        raise _shape_error(
            f"'{field}' names {len(value)} privileges; at most {MAX_PRIVILEGES} per change.",
            field,
        )
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise _shape_error(
                f"'{field}[{index}]' must be a privilege name, like \"SELECT\".",
                f"{field}[{index}]",
            )
    return value


def _parse_changes(securable: Securable, changes: Any) -> list[_Change]:
    if not isinstance(changes, list):
        raise _shape_error(
            '\'changes\' must be a list of {"principal", "principal_type", "add", "remove"}.',
            "changes",
        )
    if len(changes) > MAX_CHANGES:
        raise _shape_error(
            f"'changes' has {len(changes)} entries; at most {MAX_CHANGES} per request "
            "(send the rest in further requests).",
            "changes",
        )
    parsed: list[_Change] = []
    for index, change in enumerate(changes):
        at = f"changes[{index}]"
        if not isinstance(change, dict):
            raise _shape_error(f"'{at}' must be an object.", at)
        unknown = sorted(set(change) - {"principal", "principal_type", "add", "remove"})
        if unknown:
            raise _shape_error(
                f"'{at}' has an unknown field '{unknown[0]}'; a change has principal, "
                "principal_type, add and remove.",
                f"{at}.{unknown[0]}",
            )
        name = change.get("principal")
        if not isinstance(name, str) or not name:
            raise _shape_error(f"'{at}.principal' must name a user or a team.", f"{at}.principal")
        kind = change.get("principal_type", "user")
        if kind not in ("user", "team"):
            raise _shape_error(
                f'\'{at}.principal_type\' must be "user" or "team".', f"{at}.principal_type"
            )
        add = _privilege_list(change, "add", f"{at}.add")
        remove = _privilege_list(change, "remove", f"{at}.remove")
        try:
            principal = find_principal(kind, name)
        except NotFound as exc:
            exc.details = {**exc.details, "field": f"{at}.principal"}
            raise
        parsed.append(
            _Change(
                principal=principal,
                add=parse_privileges(securable.kind, add, field=f"{at}.add") if add else [],
                remove=(
                    parse_privileges(securable.kind, remove, field=f"{at}.remove") if remove else []
                ),
                index=index,
                remove_given=remove,
            )
        )
    return parsed


def _check_removals(securable: Securable, change: _Change) -> None:
    """Removing a privilege the principal holds only through a catalog or database above is
    refused (it would change nothing): it names where to revoke it."""
    held = _held(securable, change.principal)
    for privilege in change.remove:
        if privilege in held:
            continue
        above = _inherited_from(securable, change.principal, privilege)
        if above is None:
            continue
        position = next(
            (
                i
                for i, given in enumerate(change.remove_given)
                if rule.parse_privilege(given) is privilege
            ),
            0,
        )
        raise CoreError(
            f"{privilege.value} on {_described(securable)} is granted to "
            f"{change.principal.described()} on {_described(above)}; revoke it there.",
            details={
                "field": f"changes[{change.index}].remove[{position}]",
                "inherited_from": _object_json(above),
            },
        )


def update_permissions(
    *,
    user: Any,
    securable: Securable,
    changes: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """``PATCH …/{object}/permissions``: ``changes`` is a list of ``{"principal",
    "principal_type", "add": [...], "remove": [...]}``, applied in one transaction (one audit
    event per principal and direction). Errors name their field
    (``details.field`` ``changes[0].add[1]``). Answers the GET body.

    Adding what is granted already, or removing what is not granted, changes nothing (the
    PATCH can be sent again); removing what comes from a catalog or database above is
    refused, naming where to revoke it. Nothing is written unless every change is valid."""
    _require_manage(user, securable)
    parsed = _parse_changes(securable, changes)
    for change in parsed:
        _check_removals(securable, change)
    with transaction.atomic():
        for change in parsed:
            if change.add:
                _apply_grant(user, securable, change.add, change.principal)
            if change.remove:
                _apply_revoke(user, securable, change.remove, change.principal)
    catalog_access.forget(user)
    return permissions(user=user, securable=securable)


def system_grant(
    *,
    securable: Securable,
    privileges: Sequence[Privilege | str],
    principal: Principal,
    actor: Any = None,
) -> list[Privilege]:
    """``grant`` without the ``MANAGE`` check, for management commands run by an operator
    (``bootstrap``, ``share_catalogs``): audited like any grant, ``actor`` None meaning the
    system."""
    wanted = parse_privileges(securable.kind, privileges)
    with transaction.atomic():
        return _apply_grant(actor, securable, wanted, principal)
