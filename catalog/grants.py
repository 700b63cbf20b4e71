"""Grants, revokes, SHOW GRANTS, the REST permissions body and ownership transfer (issue 18,
ADR 0011 §4): the one module that writes ``Grant`` rows and moves ownership, for SQL
commands (``sessions/commands/grants.py``) and REST (``catalog/permission_views.py``) alike.
Every change is one transaction with its audit event (``audit.services.record``).

The signatures and docstrings of ``find_principal``, ``find_securable``, ``grant``,
``revoke``, ``show_grants``, ``permissions``, ``update_permissions`` and ``transfer_owner``
are the contract between the chunks of issue 18: callers rely on them.

Hidden = missing: an object the caller may not see answers exactly as a missing one
(``hidden_error``), the message the catalog's lookups give for a name that does not exist.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from audit import models as audit_models
from audit.services import record
from catalog import access as catalog_access
from catalog import bodies, storage
from catalog.models import EVERYONE, Catalog, Database, Function, Grant, Table
from core import locations
from core import privileges as rule
from core.errors import CoreError, NotFound, PermissionDenied
from core.identifiers import quote_path
from core.privileges import GRANTABLE, INHERITED, Access, Decision, Kind, Privilege, Securable

PrincipalType = Literal["user", "team"]
Row = Catalog | Database | Table | Function

# A PATCH of permissions changes at most this many principals, each with at most this many
# privileges per direction: bigger bodies are refused before anything is looked up.
MAX_CHANGES = 100
MAX_PRIVILEGES = 16

_ALL = ("ALL", "ALL PRIVILEGES")
_OBJECT_KINDS = (Kind.TABLE, Kind.VIEW, Kind.FUNCTION)


@dataclass(frozen=True)
class Principal:
    """A user or a team (a Django group) that grants are given to."""

    type: PrincipalType
    id: int
    name: str

    @property
    def key(self) -> str:
        """As ``Grant.principal_key`` stores it: ``user:5`` | ``team:3``."""
        return f"{self.type}:{self.id}"

    def described(self) -> str:
        return f"{self.type} {self.name}"


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


# --- principals -------------------------------------------------------------------------


def everyone_team() -> Group:
    """The team every signed-in user is implicitly in (made again if a flush removed it)."""
    group, _ = Group.objects.get_or_create(name=EVERYONE)
    return group


def find_principal(principal_type: str, name: str) -> Principal:
    """The user or team named ``name`` (case-insensitive for teams as Django stores them).
    Raises ``NotFound`` ("There is no user named 'x'.") when there is none, and
    ``ValidationError`` for a type other than ``user``/``team``."""
    kind = str(principal_type).lower()
    if kind not in ("user", "team"):
        raise CoreError(
            f"A principal is a user or a team, not '{principal_type}'.",
            details={"field": "principal_type"},
        )
    text = str(name)
    if not text or "\x00" in text or len(text) > 150:
        raise NotFound(f"There is no {kind} named '{text[:150]}'.")
    if kind == "user":
        users = get_user_model().objects
        user = users.filter(username=text).first()
        if user is None:
            matches = list(users.filter(username__iexact=text)[:2])
            user = matches[0] if len(matches) == 1 else None
        if user is None:
            raise NotFound(f"There is no user named '{text}'.")
        return Principal("user", user.pk, user.get_username())
    if text.lower() == EVERYONE:
        group = everyone_team()
        return Principal("team", group.pk, group.name)
    team = Group.objects.filter(name__iexact=text).order_by("pk").first()
    if team is None:
        raise NotFound(f"There is no team named '{text}'.")
    return Principal("team", team.pk, team.name)


def _principal_of(row: Grant) -> Principal:
    if row.user_id is not None:
        return Principal("user", row.user_id, row.user.get_username() if row.user else "")
    return Principal("team", cast(int, row.team_id), row.team.name if row.team else "")


# --- securables -------------------------------------------------------------------------


def _missing_catalog(name: str) -> NotFound:
    return NotFound(f"A catalog with name [{name}] does not exist.")


def _missing_database(path: Sequence[str]) -> NotFound:
    return NotFound(f"Database {quote_path(list(path))} does not exist.")


def _missing_object(kind: str, path: Sequence[str]) -> NotFound:
    return NotFound(f"{kind.capitalize()} {quote_path(list(path))} does not exist.")


def _catalog_of(s: Securable) -> Securable:
    return Securable(
        Kind.CATALOG,
        catalog_id=s.catalog_id,
        owner_ids=(s.owner_ids[0], None, None),
        path=s.path[:1],
    )


def _database_of(s: Securable) -> Securable:
    return Securable(
        Kind.DATABASE,
        catalog_id=s.catalog_id,
        database_id=s.database_id,
        owner_ids=(s.owner_ids[0], s.owner_ids[1], None),
        path=s.path[:2],
    )


def _denied(access: Access, s: Securable, needed: Privilege) -> PermissionDenied:
    message, details = rule.denied_message(s, needed, rule.effective(access, s))
    return PermissionDenied(message, details=details)


def hidden_error(access: Access, s: Securable, path: Sequence[str] | None = None) -> CoreError:
    """What a lookup of ``s`` answers when ``access`` may not see it: exactly what a missing
    object of that name gets — the catalog named when the catalog is what cannot be seen, the
    database refused when only it is (its catalog visible), else the object itself missing.
    ``path``: the names as the caller typed them (default: as stored)."""
    names = list(path if path is not None else s.path)
    if s.kind is Kind.STORAGE:
        return PermissionDenied("Only admins may see and change the grants on storage roots.")
    catalog = _catalog_of(s)
    if s.kind is Kind.CATALOG or not catalog_access.is_visible(access, catalog):
        return _missing_catalog(names[0])
    if s.kind is Kind.DATABASE:
        return _missing_database(names[:2])
    database = _database_of(s)
    if not catalog_access.is_visible(access, database):
        return _denied(access, database, Privilege.USE)
    return _missing_object(s.kind.value, names)


def require_visible(user: Any, s: Securable, path: Sequence[str] | None = None) -> None:
    """Refuse unless ``user`` may see ``s``: hidden answers as missing (``hidden_error``),
    seen-from-the-parent as ``PERMISSION_DENIED`` naming ``USE``."""
    access = catalog_access.access_for(user)
    if s.kind is Kind.STORAGE:
        if not access.admin:
            raise hidden_error(access, s)
        return
    if catalog_access.is_visible(access, s):
        return
    if catalog_access.decide(access, s, Privilege.USE) is Decision.HIDDEN:
        raise hidden_error(access, s, path)
    raise _denied(access, s, Privilege.USE)


def require(user: Any, s: Securable, needed: Privilege, path: Sequence[str] | None = None) -> None:
    """``catalog.access.require`` with the hidden answer of a missing object."""
    access = catalog_access.access_for(user)
    catalog_access.require(user, s, needed, missing=lambda: hidden_error(access, s, path))


def require_read_files(user: Any, path: str) -> None:
    """Declaring a table over the local ``path`` needs ``READ FILES`` on the storage root it
    lies under (everyone holds it when ``TESSERA_READ_FILES_FOR = everyone``). A path under
    no root is left to the path checks, which refuse it."""
    root = rule.root_of(path, storage.storage_roots())
    if root is None:
        return
    s = catalog_access.storage_securable(root)
    access = catalog_access.access_for(user)
    if Privilege.READ_FILES not in rule.effective(access, s):
        raise _denied(access, s, Privilege.READ_FILES)


def securable_of(row: Row) -> Securable:
    if isinstance(row, Catalog):
        return catalog_access.catalog_securable(row)
    if isinstance(row, Database):
        return catalog_access.database_securable(row)
    if isinstance(row, Table):
        return catalog_access.relation_securable(row)
    return catalog_access.function_securable(row)


def _kind(kind: str) -> Kind:
    text = str(kind).lower()
    if text == "schema":
        return Kind.DATABASE
    try:
        return Kind(text)
    except ValueError:
        allowed = ", ".join(k.value for k in Kind)
        raise CoreError(
            f"Unknown kind of object '{kind}'. Kinds: {allowed}.", details={"field": "kind"}
        ) from None


def storage_root(path: str) -> str:
    """The configured storage root ``path`` names (normalised), or ``ValidationError``."""
    roots = storage.storage_roots()
    text = str(path or "")
    normal = locations.normal_root(text) if text.startswith("/") and "\x00" not in text else ""
    if normal not in roots:
        shown = ", ".join(roots) or "none configured"
        raise CoreError(
            f"'{text[:1024]}' is not a storage root of this server (TESSERA_STORAGE_ROOTS: "
            f"{shown}).",
            details={"field": "path"},
        )
    return normal


def find_securable(
    user: Any, kind: str, identifier: Sequence[str] = (), *, path: str = ""
) -> tuple[Row | None, Securable]:
    """The object ``kind`` (catalog, database, table, view, function, storage) at
    ``identifier`` (1, 2 or 3 parts, as stored or as typed: matched case-insensitively) as
    ``user`` may see it, and its ``Securable``. What the user may not see raises exactly the
    ``NotFound`` a missing object raises. ``table`` naming a view is accepted (Unity Catalog
    does) and the row's real kind is used. ``storage``: ``path`` must be a configured storage
    root (else ``ValidationError``); only admins may see storage grants (others:
    ``PermissionDenied``); the row is None.

    An object the user holds nothing on but whose database they may see is returned: the
    caller's own check then refuses it with ``PERMISSION_DENIED`` naming what it needs."""
    wanted = _kind(kind)
    access = catalog_access.access_for(user)
    if wanted is Kind.STORAGE:
        root = storage_root(path)
        s = catalog_access.storage_securable(root)
        if not access.admin:
            raise hidden_error(access, s)
        return None, s
    names = [str(part) for part in identifier]
    depth = {Kind.CATALOG: 1, Kind.DATABASE: 2}.get(wanted, 3)
    if len(names) != depth:
        form = ("catalog", "catalog.database", "catalog.database.name")[depth - 1]
        raise CoreError(
            f"A {wanted.value} is named by {depth} part{'s' if depth > 1 else ''} ({form}); "
            f"got {len(names)}.",
            details={"field": "identifier"},
        )
    if any("\x00" in n or not n for n in names):
        catalog_row = None
    else:
        catalog_row = Catalog.objects.filter(name_key=names[0].lower()).first()
    if catalog_row is None:
        raise _missing_catalog(names[0])
    catalog_s = catalog_access.catalog_securable(catalog_row)
    if not catalog_access.is_visible(access, catalog_s):
        raise _missing_catalog(names[0])
    if wanted is Kind.CATALOG:
        return catalog_row, catalog_s
    database_row = (
        Database.objects.select_related("catalog", "owner")
        .filter(catalog=catalog_row, name_key=names[1].lower())
        .first()
    )
    if database_row is None:
        raise _missing_database(names[:2])
    database_s = catalog_access.database_securable(database_row)
    if wanted is Kind.DATABASE:
        return database_row, database_s
    found: Table | Function | None
    if wanted is Kind.FUNCTION:
        found = (
            Function.objects.select_related("database__catalog", "owner")
            .filter(database=database_row, name_key=names[2].lower())
            .first()
        )
    else:
        found = (
            Table.objects.select_related("database__catalog", "owner")
            .filter(database=database_row, name_key=names[2].lower())
            .first()
        )
    found_s = securable_of(found) if found is not None else None
    if found_s is None or (
        not catalog_access.is_visible(access, found_s)
        and catalog_access.decide(access, found_s, Privilege.USE) is Decision.HIDDEN
    ):
        if not catalog_access.is_visible(access, database_s):
            raise _denied(access, database_s, Privilege.USE)
        raise _missing_object(wanted.value, names)
    if wanted is Kind.VIEW and found_s.kind is Kind.TABLE:
        path_text = quote_path(names)
        raise NotFound(f"View {path_text} does not exist; {path_text} is a table.")
    return found, found_s


# --- privileges -------------------------------------------------------------------------


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


def _ancestors(s: Securable) -> list[Securable]:
    """The database and catalog whose grants pass down to ``s`` (nearest first)."""
    if s.kind in _OBJECT_KINDS:
        return [_database_of(s), _catalog_of(s)]
    if s.kind is Kind.DATABASE:
        return [_catalog_of(s)]
    return []


def _passes_down(kind: Kind, privilege: Privilege) -> bool:
    """Whether ``privilege`` granted on a catalog or database above an object of ``kind``
    counts on it (``INHERITED``); on a database, everything granted on its catalog does."""
    if kind in _OBJECT_KINDS:
        return privilege in INHERITED[kind]
    return kind is Kind.DATABASE


def _inherited_from(s: Securable, principal: Principal, privilege: Privilege) -> Securable | None:
    """The nearest catalog or database above ``s`` where ``principal`` was granted
    ``privilege`` (when it passes down to ``s``)."""
    if not _passes_down(s.kind, privilege):
        return None
    for above in _ancestors(s):
        if privilege in _held(above, principal):
            return above
    return None


def _described(s: Securable) -> str:
    what = "storage root" if s.kind is Kind.STORAGE else s.kind.value
    return f"{what} {s.sql_path}"


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


# --- reading grants ---------------------------------------------------------------------


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


def _object_json(s: Securable) -> dict[str, Any]:
    if s.kind is Kind.STORAGE:
        return {"kind": "storage", "path": s.root}
    return {"kind": s.kind.value, "identifier": list(s.path)}


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


# --- the REST PATCH ---------------------------------------------------------------------


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


# --- ownership --------------------------------------------------------------------------


def _new_owner_user(new_owner: Any) -> Any:
    model = get_user_model()
    if isinstance(new_owner, model):
        return new_owner
    if isinstance(new_owner, Principal):
        if new_owner.type != "user":
            raise CoreError(
                "An owner is a user; give a team MANAGE instead.", details={"field": "owner"}
            )
        return model.objects.get(pk=new_owner.id)
    if isinstance(new_owner, str):
        try:
            found = find_principal("user", new_owner)
        except NotFound as exc:
            exc.details = {**exc.details, "field": "owner"}
            raise
        return model.objects.get(pk=found.id)
    raise CoreError("An owner is a user, named by their username.", details={"field": "owner"})


def check_transfer(*, user: Any, row: Row, new_owner: Any) -> Any:
    """The user ``new_owner`` names, when ``user`` may make them the owner of ``row`` (its
    owner, a parent's owner or an admin); else the refusal ``transfer_owner`` would give."""
    s = securable_of(row)
    access = catalog_access.access_for(user)
    if not (access.admin or access.owns(s)):
        if catalog_access.decide(access, s, Privilege.MANAGE) is Decision.HIDDEN:
            raise hidden_error(access, s)
        what = _described(s)
        parents = {
            Kind.CATALOG: "",
            Kind.DATABASE: " or the owner of its catalog",
        }.get(s.kind, ", the owner of its database or catalog")
        raise PermissionDenied(
            f"Only the owner of {what}{parents} or an admin may transfer its ownership.",
            details={**_object_json(s), "privilege": "OWNER", "refused": bodies.OWNER},
        )
    return _new_owner_user(new_owner)


def transfer_owner(*, user: Any, row: Row, new_owner: Any) -> None:
    """Make ``new_owner`` (a user) the owner of ``row``. By its owner, a parent's owner or an
    admin (else ``PermissionDenied``). One transaction with an audit ``owner`` event.

    ``new_owner`` may also be given as a username or a user ``Principal``. A view (or SQL
    function) then runs with the new owner's rights, so its body is planned again with the
    acting user's rights and with the new owner's: if either cannot reach all it reaches,
    ``PermissionDenied`` (``catalog.bodies.check_handover``) and nothing changes."""
    target = check_transfer(user=user, row=row, new_owner=new_owner)
    s = securable_of(row)
    previous_id = row.owner_id
    if previous_id == target.pk:
        return
    bodies.check_handover(user=user, row=row, new_owner=target)
    users = get_user_model().objects
    previous = users.filter(pk=previous_id).first() if previous_id is not None else None
    with transaction.atomic():
        type(row).objects.filter(pk=row.pk).update(owner=target)
        record(
            audit_models.OWNER,
            actor=user if getattr(user, "pk", None) is not None else None,
            object_kind=s.kind.value,
            path=list(s.path),
            securable_key=s.key,
            principal=("user", target.get_username()),
            detail={"previous": previous.get_username() if previous is not None else None},
        )
    row.owner = target
    catalog_access.forget(user)
