"""Who may see, read, write and manage a catalog object: the one rule (ADR 0011).

Unity Catalog's model, decided here and nowhere else. Principals are users and teams; a grant
gives a principal a privilege on a *securable* — a catalog, a database, a table, a view, a
function, or a storage root. A grant on a catalog or database is inherited by everything
inside that holds the privilege (``HOLDS``). The owner of an object or of one of its parents
holds everything on it; admins hold everything everywhere.

The callers load what one user holds once (``Access``: the user's and their teams' grant rows,
the catalogs and databases they own) and ask ``decide``. An object the user holds nothing on
is *hidden*: it answers exactly as a missing one (``NOT_FOUND``), so an outsider learns nothing.
An object the user may see but lacks the privilege for is *denied*: ``PERMISSION_DENIED``
naming the object and the missing privilege (``denied_message``).

Pure: no Django, no pyspark. Ids are opaque integers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from functools import cached_property
from typing import Any

from core import locations


class Privilege(StrEnum):
    USE = "USE"
    SELECT = "SELECT"
    MODIFY = "MODIFY"
    CREATE = "CREATE"
    EXECUTE = "EXECUTE"
    MANAGE = "MANAGE"
    READ_FILES = "READ FILES"


class Kind(StrEnum):
    CATALOG = "catalog"
    DATABASE = "database"
    TABLE = "table"
    VIEW = "view"
    FUNCTION = "function"
    STORAGE = "storage"


P = Privilege
OBJECT_KINDS = frozenset({Kind.TABLE, Kind.VIEW, Kind.FUNCTION})

# What a privilege means on each kind of object (ADR 0011 §1.1, column "holds on").
HOLDS: Mapping[Kind, frozenset[Privilege]] = {
    Kind.CATALOG: frozenset({P.USE, P.CREATE, P.MANAGE}),
    Kind.DATABASE: frozenset({P.USE, P.CREATE, P.MANAGE}),
    Kind.TABLE: frozenset({P.USE, P.SELECT, P.MODIFY, P.MANAGE}),
    Kind.VIEW: frozenset({P.USE, P.SELECT, P.MANAGE}),
    Kind.FUNCTION: frozenset({P.USE, P.EXECUTE, P.MANAGE}),
    Kind.STORAGE: frozenset({P.READ_FILES}),
}

# Where each privilege may be granted (column "may be granted on"): on the object itself, or
# on a catalog or database for everything inside.
GRANTABLE: Mapping[Kind, frozenset[Privilege]] = {
    Kind.CATALOG: frozenset({P.USE, P.SELECT, P.MODIFY, P.CREATE, P.EXECUTE, P.MANAGE}),
    Kind.DATABASE: frozenset({P.USE, P.SELECT, P.MODIFY, P.CREATE, P.EXECUTE, P.MANAGE}),
    Kind.TABLE: frozenset({P.USE, P.SELECT, P.MODIFY, P.MANAGE}),
    Kind.VIEW: frozenset({P.USE, P.SELECT, P.MANAGE}),
    Kind.FUNCTION: frozenset({P.USE, P.EXECUTE, P.MANAGE}),
    Kind.STORAGE: frozenset({P.READ_FILES}),
}

# What a grant on a catalog or database passes down to the objects inside: everything the
# object holds except ``USE``. ``USE`` on a catalog or database lets its holder see and enter
# it (and, on a catalog, its databases), not see every object inside — Unity Catalog's
# ``USE CATALOG`` / ``USE SCHEMA``. Objects inside are seen through a privilege on them.
INHERITED: Mapping[Kind, frozenset[Privilege]] = {
    kind: (held - {P.USE} if kind in (Kind.TABLE, Kind.VIEW, Kind.FUNCTION) else held)
    for kind, held in HOLDS.items()
}

# The order privileges are listed in (messages, SHOW GRANTS, the REST body).
ORDER: tuple[Privilege, ...] = tuple(Privilege)

# Spellings of other systems read as ours (Unity Catalog's USE CATALOG / USE SCHEMA / BROWSE).
ALIASES: Mapping[str, Privilege] = {
    "USE CATALOG": P.USE,
    "USE SCHEMA": P.USE,
    "USE DATABASE": P.USE,
    "BROWSE": P.USE,
    "READ_FILES": P.READ_FILES,
}

# The verb of a refusal, per missing privilege.
_VERBS: Mapping[Privilege, str] = {
    P.USE: "use",
    P.SELECT: "read",
    P.MODIFY: "write into",
    P.CREATE: "create objects in",
    P.EXECUTE: "call",
    P.MANAGE: "change, drop or grant privileges on",
    P.READ_FILES: "read files under",
}


def parse_privilege(text: str) -> Privilege | None:
    """``SELECT``, ``select``, ``READ FILES``, ``USE SCHEMA`` … → the privilege; None if unknown."""
    key = " ".join(text.upper().split())
    if key in ALIASES:
        return ALIASES[key]
    try:
        return Privilege(key)
    except ValueError:
        return None


def sorted_privileges(privileges: Iterable[Privilege]) -> list[Privilege]:
    chosen = set(privileges)
    return [p for p in ORDER if p in chosen]


@dataclass(frozen=True)
class Securable:
    """One object privileges are decided on, with its ancestry.

    ``owner_ids`` are the owners of its catalog, its database and itself, in that order
    (None where there is no such level or no owner): a catalog has only the first, a database
    the first two. ``object_id`` is the ``Table`` row's id for tables and views (one
    namespace), the ``Function`` row's for functions. ``path`` is the names as stored, for
    messages; ``root`` a storage root's normalised directory (``STORAGE`` only).
    """

    kind: Kind
    catalog_id: int | None = None
    database_id: int | None = None
    object_id: int | None = None
    owner_ids: tuple[int | None, int | None, int | None] = (None, None, None)
    path: tuple[str, ...] = ()
    root: str = ""

    @property
    def key(self) -> str:
        """The securable's key, as ``Grant.securable_key`` stores it."""
        if self.kind is Kind.STORAGE:
            return f"storage:{self.root}"
        if self.kind is Kind.CATALOG:
            return f"catalog:{self.catalog_id}"
        if self.kind is Kind.DATABASE:
            return f"database:{self.database_id}"
        if self.kind is Kind.FUNCTION:
            return f"function:{self.object_id}"
        return f"relation:{self.object_id}"

    @property
    def sql_path(self) -> str:
        """The path quoted as SQL names it: ``c``.``d``.``t``; a storage root as '…'."""
        if self.kind is Kind.STORAGE:
            return f"'{self.root}'"
        return ".".join("`" + part.replace("`", "``") + "`" for part in self.path)


@dataclass(frozen=True)
class GrantRow:
    """One grant the user holds, directly or through a team (the principal is implied).

    ``level`` is the kind of the object granted on; ``catalog_id`` and ``database_id`` are its
    ancestry (denormalised on the row), ``object_id`` the object's own id at object level.
    """

    privilege: Privilege
    level: Kind
    catalog_id: int | None = None
    database_id: int | None = None
    object_id: int | None = None
    root: str = ""


@dataclass(frozen=True)
class Access:
    """Everything one user holds, loaded once per request or planned statement.

    ``owned_databases`` maps each database the user owns to its catalog's id (a database
    owner may see the catalog's name). ``read_files_for_all``: the deployment lets every
    signed-in user read files under every storage root (``TESSERA_READ_FILES_FOR``).
    An anonymous user is ``Access(None)``: nothing.
    """

    user_id: int | None
    admin: bool = False
    grants: tuple[GrantRow, ...] = ()
    owned_catalogs: frozenset[int] = frozenset()
    owned_databases: Mapping[int, int] = field(default_factory=dict)
    read_files_for_all: bool = False

    def __hash__(self) -> int:
        return hash((self.user_id, self.admin, self.grants, self.owned_catalogs))

    @cached_property
    def _by_catalog(self) -> dict[int, frozenset[Privilege]]:
        return _group(self.grants, Kind.CATALOG, lambda g: g.catalog_id)

    @cached_property
    def _by_database(self) -> dict[int, frozenset[Privilege]]:
        return _group(self.grants, Kind.DATABASE, lambda g: g.database_id)

    @cached_property
    def _by_object(self) -> dict[tuple[str, int], frozenset[Privilege]]:
        out: dict[tuple[str, int], set[Privilege]] = {}
        for g in self.grants:
            if g.level in OBJECT_KINDS and g.object_id is not None:
                namespace = "function" if g.level is Kind.FUNCTION else "relation"
                out.setdefault((namespace, g.object_id), set()).add(g.privilege)
        return {k: frozenset(v) for k, v in out.items()}

    @cached_property
    def _by_root(self) -> dict[str, frozenset[Privilege]]:
        return _group(self.grants, Kind.STORAGE, lambda g: g.root)

    @cached_property
    def _catalogs_below(self) -> frozenset[int]:
        """Catalogs with a grant row or an owned database at or below them."""
        rows = {g.catalog_id for g in self.grants if g.catalog_id is not None}
        return frozenset(rows | set(self.owned_databases.values()))

    @cached_property
    def _databases_below(self) -> frozenset[int]:
        return frozenset(
            g.database_id
            for g in self.grants
            if g.database_id is not None and g.level is not Kind.CATALOG
        )

    def owns(self, s: Securable) -> bool:
        return self.user_id is not None and self.user_id in s.owner_ids


def _group(
    grants: Iterable[GrantRow], level: Kind, key: Callable[[GrantRow], Any]
) -> dict[Any, frozenset[Privilege]]:
    out: dict[Any, set[Privilege]] = {}
    for g in grants:
        if g.level is level and key(g) is not None:
            out.setdefault(key(g), set()).add(g.privilege)
    return {k: frozenset(v) for k, v in out.items()}


class Decision(Enum):
    ALLOWED = "allowed"
    DENIED = "denied"  # seen, but without the privilege: PERMISSION_DENIED
    HIDDEN = "hidden"  # not seen at all: answered as missing (NOT_FOUND)


NOTHING: frozenset[Privilege] = frozenset()


def effective(access: Access, s: Securable) -> frozenset[Privilege]:
    """The privileges ``access`` holds on ``s``: everything for admins and owners (of it or
    of a parent), else the grants on it, and those on its database and catalog that pass
    down to its kind (``INHERITED``: not ``USE``, which stays on the container)."""
    holds = HOLDS[s.kind]
    if access.user_id is None and not access.admin:
        return NOTHING
    if s.kind is Kind.STORAGE:
        if access.admin or access.read_files_for_all:
            return holds
        return access._by_root.get(s.root, NOTHING) & holds
    if access.admin or access.owns(s):
        return holds
    above = access._by_catalog.get(s.catalog_id, NOTHING) if s.catalog_id is not None else NOTHING
    if s.kind is Kind.CATALOG:
        return above & holds
    if s.database_id is not None:
        above = above | access._by_database.get(s.database_id, NOTHING)
    if s.kind is Kind.DATABASE:
        return above & holds
    namespace = "function" if s.kind is Kind.FUNCTION else "relation"
    own = access._by_object.get((namespace, s.object_id), NOTHING) if s.object_id else NOTHING
    return (above & INHERITED[s.kind]) | (own & holds)


def visible_parent(
    access: Access, s: Securable, owns_inside: Callable[[], bool] | None = None
) -> bool:
    """Whether the catalog or database ``s`` is visible through what is inside it: a grant
    row below it, a database the user owns inside it, or (asked last, since it costs a query)
    an object inside it the user owns (``owns_inside``)."""
    if s.kind is Kind.CATALOG:
        if s.catalog_id in access._catalogs_below:
            return True
    elif s.kind is Kind.DATABASE:
        # A grant inside it, or any grant on its catalog (which passes down into it).
        if s.database_id in access._databases_below or s.catalog_id in access._by_catalog:
            return True
    else:
        return False
    return bool(owns_inside and owns_inside())


def visible(access: Access, s: Securable, owns_inside: Callable[[], bool] | None = None) -> bool:
    """Whether the user may see ``s`` at all: some privilege on it, or (a catalog or a
    database) something visible inside it."""
    if effective(access, s):
        return True
    return visible_parent(access, s, owns_inside)


def parent_of(s: Securable) -> Securable | None:
    """The database of an object, the catalog of a database; None for catalogs and roots."""
    c_owner, d_owner, _ = s.owner_ids
    if s.kind in OBJECT_KINDS:
        return Securable(
            Kind.DATABASE,
            catalog_id=s.catalog_id,
            database_id=s.database_id,
            owner_ids=(c_owner, d_owner, None),
            path=s.path[:2],
        )
    if s.kind is Kind.DATABASE:
        return Securable(
            Kind.CATALOG, catalog_id=s.catalog_id, owner_ids=(c_owner, None, None), path=s.path[:1]
        )
    return None


def decide(
    access: Access,
    s: Securable,
    needed: Privilege,
    owns_inside: Callable[[], bool] | None = None,
) -> Decision:
    """ALLOWED when the user holds ``needed`` on ``s``. Otherwise DENIED when they may see
    ``s`` (a privilege on it, something visible inside it) or its parent (Unity Catalog: who
    may use a database learns from an error that a name in it exists), else HIDDEN —
    answered exactly as a missing object. The parent is judged from ``access`` alone (no
    query): what is unsure stays hidden here, and callers that may ask (the planner's
    ``Authorizer``, the REST pages) look again at a hidden object's parent with
    ``owns_inside``."""
    have = effective(access, s)
    if needed in have:
        return Decision.ALLOWED
    if have or visible_parent(access, s, owns_inside):
        return Decision.DENIED
    parent = parent_of(s)
    if parent is not None and visible(access, parent):
        return Decision.DENIED
    return Decision.HIDDEN


@dataclass(frozen=True)
class Scope:
    """Which objects of one kind a user may see, as id sets a list query filters on.

    ``everything``: no filter (admins). Otherwise an object is visible when its catalog is in
    ``catalogs``, its database in ``databases``, its own id in ``objects``, or its owner (or
    a parent's owner) is ``owner_id``. For catalogs and databases themselves, ``catalogs`` /
    ``databases`` hold the visible ids known from the rows; the caller adds those visible
    only through an owned object inside (one ``EXISTS``)."""

    everything: bool = False
    catalogs: frozenset[int] = frozenset()
    databases: frozenset[int] = frozenset()
    objects: frozenset[int] = frozenset()
    owner_id: int | None = None

    def covers(self, catalog_id: int | None, database_id: int | None) -> bool:
        """Whether every object of the kind inside this database is visible."""
        return (
            self.everything
            or (catalog_id is not None and catalog_id in self.catalogs)
            or (database_id is not None and database_id in self.databases)
        )


def scope(access: Access, kind: Kind) -> Scope:
    if access.admin:
        return Scope(everything=True)
    if access.user_id is None:
        return Scope()
    holds = HOLDS[kind]
    if kind is Kind.CATALOG:
        catalogs = set(access._catalogs_below) | set(access.owned_catalogs)
        return Scope(catalogs=frozenset(catalogs), owner_id=access.user_id)
    inherited = INHERITED[kind]
    catalogs = {c for c, privs in access._by_catalog.items() if privs & inherited}
    catalogs |= set(access.owned_catalogs)
    if kind is Kind.DATABASE:
        catalogs |= set(access._by_catalog)  # any grant on a catalog shows its databases
        databases = set(access._databases_below) | set(access.owned_databases)
        return Scope(
            catalogs=frozenset(catalogs),
            databases=frozenset(databases),
            owner_id=access.user_id,
        )
    databases = {d for d, privs in access._by_database.items() if privs & inherited}
    databases |= set(access.owned_databases)
    objects = {
        g.object_id
        for g in access.grants
        if g.level is kind and g.object_id is not None and g.privilege in holds
    }
    return Scope(
        catalogs=frozenset(catalogs),
        databases=frozenset(databases),
        objects=frozenset(objects),
        owner_id=access.user_id,
    )


def flags(access: Access, s: Securable) -> dict[str, bool]:
    """``can`` in the REST API: what the user may do with ``s`` (docs/api.md)."""
    have = effective(access, s)
    manage = P.MANAGE in have
    return {
        "modify": manage,
        "drop": manage,
        "create": P.CREATE in have,
        "manage": manage,
        "select": P.SELECT in have,
        "write": P.MODIFY in have,
        "execute": P.EXECUTE in have,
        "transfer_owner": access.admin or access.owns(s),
    }


def denied_message(
    s: Securable,
    needed: Privilege,
    have: Iterable[Privilege] = (),
    *,
    definer: str | None = None,
    via: Securable | None = None,
) -> tuple[str, dict[str, Any]]:
    """The sentence and details of a ``PERMISSION_DENIED``. With ``definer`` and ``via``: the
    object was read through the view (or SQL function) ``via``, whose owner ``definer``
    lacks the privilege — the invoker is told about the view, and which right its owner
    needs."""
    verb = _VERBS[needed]
    what = "storage root" if s.kind is Kind.STORAGE else s.kind.value
    details: dict[str, Any] = {"kind": s.kind.value, "privilege": needed.value}
    if s.kind is Kind.STORAGE:
        details["path"] = s.root
    else:
        details["identifier"] = list(s.path)
    if via is not None:
        details["via"] = {"kind": via.kind.value, "identifier": list(via.path), "owner": definer}
        used = "called" if via.kind is Kind.FUNCTION else "read"
        if definer:
            return (
                f"{via.kind.value.capitalize()} {via.sql_path} cannot be {used}: its owner "
                f"{definer} needs {needed.value} on {what} {s.sql_path}.",
                details,
            )
        return (
            f"{via.kind.value.capitalize()} {via.sql_path} cannot be {used}: it has no owner, "
            f"so it may not {verb} {what} {s.sql_path}; an admin must give it one (ALTER "
            f"{via.kind.value.upper()} {via.sql_path} OWNER TO USER name).",
            details,
        )
    held = sorted_privileges(have)
    held_text = f"you have {', '.join(p.value for p in held)}" if held else "you have none"
    return (
        f"You need {needed.value} on {what} {s.sql_path} to {verb} it; {held_text}.",
        details,
    )


def root_of(path: str, roots: Sequence[str]) -> str | None:
    """The storage root (as configured, normalised) that holds the local ``path``, the
    innermost if roots nest; None when none does."""
    best: str | None = None
    for root in roots:
        normal = locations.normal_root(root)
        if locations.is_under(path, normal) and (best is None or len(normal) > len(best)):
            best = normal
    return best
