"""GRANT, REVOKE, SHOW GRANTS and ALTER … OWNER TO (ADR 0011 §4.1), run in the web
process like the other commands.

The planner (``core/planner/grants.py``) checked that the user may see the object and hold
``MANAGE`` on it; ``catalog.grants`` checks again, writes the grant rows and their audit
events in one transaction, and is the same code the REST permissions endpoints use. The plan
arguments (common.md, interface 2):

- GRANT/REVOKE ``{"securable": {"kind", "identifier"} | {"kind": "storage", "path"},
  "privileges": [...], "principal": {"type": "user"|"team", "name"}}``
- ALTER_OWNER ``{"securable": {...}, "owner": {"type": "user", "name"}}``
- SHOW_GRANTS ``{"securable": {...}, "principal": {...} | null}``
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.contrib.auth import get_user_model

from catalog import access as catalog_access
from catalog import grants as catalog_grants
from core.errors import CoreError, NotFound
from core.privileges import Kind, Securable, parse_privilege, sorted_privileges
from jobs.models import Job
from sessions.commands.common import Columns, Rows, message, string_columns

SHOW_GRANTS_COLUMNS = (
    "principal",
    "principal_type",
    "privilege",
    "object_type",
    "object_name",
    "inherited_from",
)


def _spec(args: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = args.get("securable")
    if not isinstance(spec, Mapping) or not spec.get("kind"):
        raise CoreError("The plan names no object to grant on.", details={"args": dict(args)})
    return spec


def _securable(job: Job, args: Mapping[str, Any]) -> tuple[Any, Securable]:
    """The object the plan names, as the job's user may see it (hidden = missing)."""
    spec = _spec(args)
    kind = str(spec["kind"])
    if kind == Kind.STORAGE.value:
        return catalog_grants.find_securable(job.user, kind, path=str(spec.get("path") or ""))
    identifier = [str(part) for part in spec.get("identifier") or []]
    return catalog_grants.find_securable(job.user, kind, identifier)


def _principal(value: Any, what: str = "principal") -> catalog_grants.Principal:
    if not isinstance(value, Mapping) or not value.get("type") or not value.get("name"):
        raise CoreError(f"The plan names no {what}.", details={"field": what})
    return catalog_grants.find_principal(str(value["type"]), str(value["name"]))


def _privileges(args: Mapping[str, Any]) -> list[str]:
    value = args.get("privileges")
    if not isinstance(value, Sequence) or isinstance(value, str) or not value:
        raise CoreError("The plan names no privilege.", details={"field": "privileges"})
    return [str(item) for item in value]


def _who(principal: catalog_grants.Principal) -> str:
    return f"{principal.type} {principal.name}"


def _what(s: Securable) -> str:
    if s.kind is Kind.STORAGE:
        return f"storage root {s.sql_path}"
    return f"{s.kind.value} {s.sql_path}"


def _listed(privileges: Sequence[Any]) -> str:
    parsed = [p for p in (parse_privilege(str(item)) for item in privileges) if p is not None]
    return ", ".join(p.value for p in sorted_privileges(parsed))


def grant(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    _, s = _securable(job, args)
    principal = _principal(args.get("principal"))
    asked = _privileges(args)
    granted = catalog_grants.grant(
        user=job.user, securable=s, privileges=asked, principal=principal
    )
    catalog_access.forget(job.user)
    if not granted:
        return message(
            f"{_who(principal).capitalize()} already holds {_listed(asked)} on "
            f"{_what(s)}; nothing changed."
        )
    return message(f"Granted {_listed(granted)} on {_what(s)} to {_who(principal)}.")


def revoke(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    _, s = _securable(job, args)
    principal = _principal(args.get("principal"))
    revoked = catalog_grants.revoke(
        user=job.user, securable=s, privileges=_privileges(args), principal=principal
    )
    catalog_access.forget(job.user)
    return message(f"Revoked {_listed(revoked)} on {_what(s)} from {_who(principal)}.")


def _inherited(s: Securable | None) -> str | None:
    return None if s is None else _what(s)


def show_grants(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    _, s = _securable(job, args)
    value = args.get("principal")
    principal = _principal(value) if value else None
    lines = catalog_grants.show_grants(user=job.user, securable=s, principal=principal)
    rows: Rows = [
        [
            line.principal,
            line.principal_type,
            line.privilege.value,
            line.object_type,
            line.object_name,
            _inherited(line.inherited_from),
        ]
        for line in lines
    ]
    return string_columns(*SHOW_GRANTS_COLUMNS), rows


def alter_owner(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    row, s = _securable(job, args)
    if row is None:
        raise CoreError(f"A {_what(s)} has no owner to change.", details={"kind": s.kind.value})
    owner = _principal(args.get("owner"), "owner")
    if owner.type != "user":
        raise CoreError(
            "Owners are users: ALTER … OWNER TO USER name (give a team MANAGE instead).",
            details={"field": "owner"},
        )
    new_owner = get_user_model().objects.filter(pk=owner.id).first()
    if new_owner is None:
        raise NotFound(f"There is no user named '{owner.name}'.")
    catalog_grants.transfer_owner(user=job.user, row=row, new_owner=new_owner)
    catalog_access.forget(job.user)
    return message(f"{_what(s)[0].upper()}{_what(s)[1:]} is now owned by {owner.name}.")
