"""What one user holds, loaded from the database, and the filters and checks built on it.

``core.privileges`` is the rule; this module feeds it: ``load_access`` reads everything a user
holds in one SQL statement (their own and their teams' grant rows, grants to ``everyone``, the
catalogs and databases they own, whether they are an admin). ``access_for`` caches that on the
user object, so it is loaded once per HTTP request or planned statement and never reused
across them: a revoke counts from the next request, statement, commit or stream batch.

The ``*_q`` functions turn a ``core.privileges.Scope`` into ``Q`` filters for list, search and
completion querysets (None: no filter); ``require`` is the point check of one object.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import BooleanField, Exists, F, Func, OuterRef, Q

from catalog.models import EVERYONE, Catalog, Database, Function, Grant, Table
from core import privileges
from core.errors import NotFound, PermissionDenied
from core.identifiers import quote_path
from core.privileges import Access, Decision, GrantRow, Kind, Privilege, Scope, Securable

_CACHE_ATTRIBUTE = "_tessera_access"

# What the product itself holds for lookups made on nobody's behalf (maintenance, the
# reaper, a commit re-reading its own target after the user's right was checked): all.
SYSTEM = Access(None, admin=True)

# Everything one user holds, in one statement (the same text on PostgreSQL and SQLite).
# Columns: privilege, level, catalog id, database id, object id, storage root.
_LOAD_SQL = """
SELECT g.privilege, g.securable_kind, g.catalog_id, g.database_id,
       COALESCE(g.table_id, g.function_id), g.storage_root
  FROM catalog_grant g
 WHERE g.user_id = %(u)s
    OR g.team_id IN (SELECT ug.group_id FROM auth_user_groups ug WHERE ug.user_id = %(u)s)
    OR g.team_id IN (SELECT ag.id FROM auth_group ag WHERE ag.name = %(everyone)s)
UNION ALL
SELECT 'OWNER', 'catalog', c.id, NULL, NULL, '' FROM catalog_catalog c WHERE c.owner_id = %(u)s
UNION ALL
SELECT 'OWNER', 'database', d.catalog_id, d.id, NULL, ''
  FROM catalog_database d WHERE d.owner_id = %(u)s
UNION ALL
SELECT 'ADMIN', '', NULL, NULL, NULL, '' FROM auth_user a
 WHERE a.id = %(u)s AND (a.is_staff OR a.is_superuser)
"""


def _signed_in(user: Any) -> bool:
    return bool(getattr(user, "is_authenticated", False)) and getattr(user, "pk", None) is not None


def read_files_for_all() -> bool:
    """``TESSERA_READ_FILES_FOR = everyone``: every signed-in user may read files under every
    storage root (``admins``, the default: only what an admin granted)."""
    return str(getattr(settings, "TESSERA_READ_FILES_FOR", "admins")).lower() == "everyone"


# The stored spellings, parsed once (a user may hold thousands of rows: parsing each row's
# privilege and kind again cost more than the query).
_PRIVILEGES: dict[str, Privilege] = {p.value: p for p in Privilege}
_KINDS: dict[str, Kind] = {k.value: k for k in Kind}

# Each user's last load: its rows as read, and the ``Access`` made of them. The rows are
# read every time (a revoke counts from the next request); when they are what they were,
# the same (immutable) ``Access`` is answered, its indexes already built — a user holding
# thousands of grants does not rebuild them, nor leave them to the garbage collector, on
# every request. Bounded: emptied when full.
_LAST: dict[int, tuple[tuple[Any, ...], bool, Access]] = {}
_LAST_MAX = 10_000


def load_access(user: Any) -> Access:
    """What ``user`` (a user object or a user id) holds, in one query; anonymous: nothing."""
    user_id = user if isinstance(user, int) else getattr(user, "pk", None)
    if user_id is None or (not isinstance(user, int) and not _signed_in(user)):
        return Access(None)
    rows: list[GrantRow] = []
    owned_catalogs: set[int] = set()
    owned_databases: dict[int, int] = {}
    admin = False
    with connection.cursor() as cursor:
        cursor.execute(_LOAD_SQL, {"u": user_id, "everyone": EVERYONE})
        raw = tuple(tuple(row) for row in cursor.fetchall())
    files = read_files_for_all()
    last = _LAST.get(user_id)
    if last is not None and last[1] == files and last[0] == raw:
        return last[2]
    for privilege, level, catalog_id, database_id, object_id, root in raw:
        if privilege == "ADMIN":
            admin = True
        elif privilege == "OWNER" and level == "catalog":
            owned_catalogs.add(catalog_id)
        elif privilege == "OWNER":
            owned_databases[database_id] = catalog_id
        else:
            parsed = _PRIVILEGES.get(privilege) or privileges.parse_privilege(privilege)
            kind = _KINDS.get(level)
            if parsed is None or kind is None:
                continue  # what this version does not know grants nothing
            rows.append(GrantRow(parsed, kind, catalog_id, database_id, object_id, root or ""))
    access = Access(
        user_id,
        admin=admin,
        grants=tuple(rows),
        owned_catalogs=frozenset(owned_catalogs),
        owned_databases=owned_databases,
        read_files_for_all=files,
    )
    if len(_LAST) >= _LAST_MAX:
        _LAST.clear()
    _LAST[user_id] = (raw, files, access)
    return access


def access_for(user: Any) -> Access:
    """``load_access(user)``, cached on the user object (one request or statement)."""
    cached = getattr(user, _CACHE_ATTRIBUTE, None)
    if isinstance(cached, Access):
        return cached
    access = load_access(user)
    with contextlib.suppress(AttributeError):  # an object that takes no attributes
        setattr(user, _CACHE_ATTRIBUTE, access)
    return access


def forget(user: Any) -> None:
    """Drop the cached ``Access`` (after a grant change within the same request)."""
    if hasattr(user, _CACHE_ATTRIBUTE):
        delattr(user, _CACHE_ATTRIBUTE)


# --- Securables of rows ----------------------------------------------------------------


def catalog_securable(c: Catalog) -> Securable:
    return Securable(
        Kind.CATALOG, catalog_id=c.pk, owner_ids=(c.owner_id, None, None), path=(c.name,)
    )


def database_securable(d: Database) -> Securable:
    return Securable(
        Kind.DATABASE,
        catalog_id=d.catalog_id,
        database_id=d.pk,
        owner_ids=(d.catalog.owner_id, d.owner_id, None),
        path=(d.catalog.name, d.name),
    )


def relation_securable(t: Table) -> Securable:
    d = t.database
    return Securable(
        Kind.VIEW if t.kind == Table.KIND_VIEW else Kind.TABLE,
        catalog_id=d.catalog_id,
        database_id=d.pk,
        object_id=t.pk,
        owner_ids=(d.catalog.owner_id, d.owner_id, t.owner_id),
        path=(d.catalog.name, d.name, t.name),
    )


def function_securable(f: Function) -> Securable:
    d = f.database
    return Securable(
        Kind.FUNCTION,
        catalog_id=d.catalog_id,
        database_id=d.pk,
        object_id=f.pk,
        owner_ids=(d.catalog.owner_id, d.owner_id, f.owner_id),
        path=(d.catalog.name, d.name, f.name),
    )


def storage_securable(root: str) -> Securable:
    return Securable(Kind.STORAGE, root=root)


# --- Point checks -----------------------------------------------------------------------


def owns_inside(user_id: int | None, s: Securable) -> bool:
    """Whether ``user_id`` owns a table, view or function inside the catalog or database
    ``s`` (one ``EXISTS``): that makes the catalog's or database's name visible to them."""
    if user_id is None or s.kind not in (Kind.CATALOG, Kind.DATABASE):
        return False
    where: dict[str, Any] = (
        {"database__catalog_id": s.catalog_id}
        if s.kind is Kind.CATALOG
        else {"database_id": s.database_id}
    )
    return (
        Table.objects.filter(owner_id=user_id, **where).exists()
        or Function.objects.filter(owner_id=user_id, **where).exists()
    )


def decide(access: Access, s: Securable, needed: Privilege) -> Decision:
    return privileges.decide(access, s, needed, lambda: owns_inside(access.user_id, s))


def shows_figures(access: Access, table: Table) -> bool:
    """Whether what is computed from ``table``'s data — row counts, sizes, file counts,
    statistics, version metrics — may be shown: that needs SELECT, as reading the rows
    does. USE shows that the table exists and its schema, nothing its data tells."""
    return decide(access, relation_securable(table), Privilege.SELECT) is Decision.ALLOWED


def is_visible(access: Access, s: Securable) -> bool:
    return privileges.visible(access, s, lambda: owns_inside(access.user_id, s))


def require(
    user: Any, s: Securable, needed: Privilege, *, missing: Callable[[], Exception]
) -> None:
    """Allow, or raise ``missing()`` (the user may not see ``s``: answered as if it did not
    exist) or ``PermissionDenied`` naming the object and the privilege."""
    access = access_for(user)
    decision = decide(access, s, needed)
    if decision is Decision.ALLOWED:
        return
    if decision is Decision.HIDDEN:
        raise missing()
    message, details = privileges.denied_message(s, needed, privileges.effective(access, s))
    raise PermissionDenied(message, details=details)


# --- List filters -----------------------------------------------------------------------


def catalogs_q(access: Access) -> Q | None:
    """Catalogs the user may see: owned, with a grant at or below them, an owned database
    inside, or an owned object inside."""
    s = privileges.scope(access, Kind.CATALOG)
    if s.everything:
        return None
    if access.user_id is None:
        return Q(pk__in=[])
    owned_inside = Exists(
        Table.objects.filter(owner_id=access.user_id, database__catalog_id=OuterRef("pk"))
    ) | Exists(
        Function.objects.filter(owner_id=access.user_id, database__catalog_id=OuterRef("pk"))
    )
    return Q(pk__in=s.catalogs) | Q(owner_id=access.user_id) | owned_inside


def databases_q(access: Access) -> Q | None:
    s = privileges.scope(access, Kind.DATABASE)
    if s.everything:
        return None
    if access.user_id is None:
        return Q(pk__in=[])
    owned_inside = Exists(
        Table.objects.filter(owner_id=access.user_id, database_id=OuterRef("pk"))
    ) | Exists(Function.objects.filter(owner_id=access.user_id, database_id=OuterRef("pk")))
    return (
        Q(catalog_id__in=s.catalogs)
        | Q(pk__in=s.databases)
        | Q(owner_id=access.user_id)
        | owned_inside
    )


class AnyOf(Func):
    """``column`` is one of ``ids``, the ids sent as **one** parameter (PostgreSQL: ``=
    ANY(array)``; SQLite: ``IN (SELECT value FROM json_each(…))``). ``column__in=ids`` would
    make Django prepare and send every id apart, which costs milliseconds per query for the
    hundreds of object grants a user may hold."""

    output_field = BooleanField()

    def __init__(self, column: str, ids: Iterable[int]) -> None:
        super().__init__(F(column))
        self.ids = sorted(set(ids))

    def as_sql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:  # type: ignore[override]
        lhs, params = compiler.compile(self.source_expressions[0])
        if connection.vendor == "postgresql":
            return f"{lhs} = ANY(%s)", [*params, self.ids]
        return f"{lhs} IN (SELECT value FROM json_each(%s))", [*params, json.dumps(self.ids)]


def uncovered_databases(access: Access, s: Scope) -> list[int]:
    """The databases of ``s`` outside its catalogs (a catalog's are covered already: its
    owner need not send the id of every database inside too)."""
    if not s.catalogs:
        return sorted(s.databases)
    catalog_of = dict(access.owned_databases)
    for g in access.grants:
        if g.level is Kind.DATABASE and g.database_id is not None and g.catalog_id is not None:
            catalog_of[g.database_id] = g.catalog_id
    return sorted(d for d in s.databases if catalog_of.get(d) not in s.catalogs)


def _objects_q(access: Access, kind: Kind, prefix: str = "") -> Q | None:
    """Objects of ``kind`` the user may see, on the rows' own columns: owned, in a database
    or catalog whose grant passes a privilege down (the catalog's databases as a subquery,
    not a join, so that an index holding ``database_id`` and ``owner_id`` serves the test),
    or granted one by one. Empty terms are left out; ids are sorted (stable SQL text)."""
    s = privileges.scope(access, kind)
    if s.everything:
        return None
    if access.user_id is None:
        return Q(pk__in=[])
    q = Q(**{f"{prefix}owner_id": access.user_id})
    databases = uncovered_databases(access, s)
    if databases:
        q |= Q(AnyOf(f"{prefix}database_id", databases))
    if s.objects:
        q |= Q(AnyOf(f"{prefix}pk", s.objects))
    if s.catalogs:
        inside = Database.objects.filter(catalog_id__in=sorted(s.catalogs)).values("pk")
        q |= Q(**{f"{prefix}database_id__in": inside})
    return q


def relations_q(access: Access, kind: str) -> Q | None:
    """Tables (``kind="table"``) or views the user may see."""
    return _objects_q(access, Kind.VIEW if kind == Table.KIND_VIEW else Kind.TABLE)


def functions_q(access: Access) -> Q | None:
    return _objects_q(access, Kind.FUNCTION)


def columns_q(access: Access) -> Q | None:
    """Columns of the tables and views the user may see (for ``Column`` querysets)."""
    tables = _objects_q(access, Kind.TABLE, "table__")
    views = _objects_q(access, Kind.VIEW, "table__")
    if tables is None or views is None:
        return None
    return (Q(table__kind=Table.KIND_TABLE) & tables) | (Q(table__kind=Table.KIND_VIEW) & views)


def grants_of(s: Securable) -> Any:
    """The grant rows on ``s`` itself (a queryset)."""
    return Grant.objects.filter(securable_key=s.key)


# --- Re-checks of a running job's reads ---------------------------------------------------

# What counts as a read of a job's plan (``Job.access`` records): rows, calls, files.
_READS = frozenset({Privilege.SELECT, Privilege.EXECUTE, Privilege.READ_FILES})


def _missing(kind: str, path: Sequence[str]) -> NotFound:
    """The error a lookup of a missing ``kind`` at ``path`` raises (``catalog.selectors``)."""
    return NotFound(f"{kind.capitalize()} {quote_path(list(path))} does not exist.")


def _reloaded(keys: Iterable[str]) -> dict[str, tuple[Securable, str | None]]:
    """The securables of ``keys`` as they are now, with their owners' names; one query per
    kind of object (tables and views, functions). Gone objects are left out."""
    relations: list[int] = []
    functions: list[int] = []
    found: dict[str, tuple[Securable, str | None]] = {}
    for key in keys:
        kind, _, rest = key.partition(":")
        if kind == "relation" and rest.isdigit():
            relations.append(int(rest))
        elif kind == "function" and rest.isdigit():
            functions.append(int(rest))
        elif kind == "storage" and rest:
            found[key] = (storage_securable(rest), None)
    if relations:
        for t in Table.objects.select_related("database__catalog", "owner").filter(
            pk__in=relations
        ):
            found[f"relation:{t.pk}"] = (relation_securable(t), _name_of(t.owner))
    if functions:
        for f in Function.objects.select_related("database__catalog", "owner").filter(
            pk__in=functions
        ):
            found[f"function:{f.pk}"] = (function_securable(f), _name_of(f.owner))
    return found


def _lowered(identifier: Iterable[Any]) -> tuple[str, ...]:
    return tuple(str(part).lower() for part in identifier)


def _name_of(user: Any) -> str | None:
    return user.get_username() if user is not None else None


def recheck_reads(user: Any, records: Iterable[Mapping[str, Any]]) -> None:
    """Decide again every read a running job's plan recorded (``Job.access``: one
    ``core.planner.AccessPlan.to_dict()`` each — SELECT, EXECUTE, READ FILES), on the
    securables as they are now (reloaded: one query per kind) and for the principal each was
    decided for: the job's user, or — read through a view or SQL function (``via``) — that
    object's owner as it is now (ownership may have moved). Every principal's ``Access`` is
    loaded afresh, once. A commit of a stream batch and a streaming SELECT's result call it
    before they store anything: a revoke counts from the next batch.

    Raises ``PermissionDenied`` naming the object and the privilege (through a view: naming
    the view and whose right is missing) when a read is refused now, and the ``NotFound`` of
    a missing object when the object is gone or hidden from the job's user now."""
    records = [dict(r) for r in records]
    reads = [r for r in records if privileges.parse_privilege(str(r.get("privilege"))) in _READS]
    if not reads:
        return
    key_of = {
        _lowered(r["identifier"]): str(r["securable_key"])
        for r in records
        if r.get("kind") in ("table", "view", "function")
    }
    vias = {_lowered(r["via"]) for r in reads if r.get("via")}
    keys = {str(r["securable_key"]) for r in reads} | {key_of[v] for v in vias if v in key_of}
    now = _reloaded(keys)
    loaded: dict[Any, Access] = {}

    def access_of(principal: Any) -> Access:
        if principal not in loaded:
            loaded[principal] = load_access(principal)
        return loaded[principal]

    for r in reads:
        needed = privileges.parse_privilege(str(r["privilege"])) or Privilege.SELECT
        path = tuple(str(part) for part in r.get("identifier") or ())
        current = now.get(str(r["securable_key"]))
        via = _lowered(r["via"]) if r.get("via") else None
        if via is not None and via not in key_of:
            via = None  # through a temporary view (the session's own): the user's read
        if via is None:
            if current is None:
                raise _missing(str(r.get("kind") or "table"), path)
            s = current[0]
            decision = decide(access_of(user), s, needed)
            if decision is Decision.ALLOWED:
                continue
            if decision is Decision.HIDDEN and s.kind is not Kind.STORAGE:
                raise _missing(s.kind.value, s.path)
            have = privileges.effective(access_of(user), s)
            message, details = privileges.denied_message(s, needed, have)
            raise PermissionDenied(message, details=details)
        definer = now.get(key_of.get(via, ""))
        if definer is None:  # the view itself is gone: it was read directly too
            raise _missing("view", tuple(r["via"]))
        view, owner_name = definer
        owner_id = view.owner_ids[2]
        if current is None:
            raise NotFound(
                f"{view.kind.value.capitalize()} {view.sql_path} cannot be read: the "
                f"{r.get('kind') or 'table'} {quote_path(list(path))} it reads no longer exists."
            )
        if owner_id is not None and (
            decide(access_of(owner_id), current[0], needed) is Decision.ALLOWED
        ):
            continue
        message, details = privileges.denied_message(
            current[0], needed, definer=owner_name if owner_id is not None else None, via=view
        )
        raise PermissionDenied(message, details=details)


def securable_key_at(kind: str, identifier: Sequence[str], path: str = "") -> str:
    """``Grant.securable_key`` of the object of ``kind`` at ``identifier`` (``path`` for a
    storage root); "" when it is not found. For audit events named by path."""
    if kind == "storage":
        return f"storage:{path}" if path else ""
    if kind in ("table", "view", "function") and len(identifier) == 3:
        c, d, n = (part.lower() for part in identifier)
        model = Function if kind == "function" else Table
        pk = (
            model.objects.filter(database__catalog__name_key=c, database__name_key=d, name_key=n)
            .values_list("pk", flat=True)
            .first()
        )
        if pk is None:
            return ""
        return f"{'function' if kind == 'function' else 'relation'}:{pk}"
    if kind == "database" and len(identifier) == 2:
        found = (
            Database.objects.filter(
                catalog__name_key=identifier[0].lower(), name_key=identifier[1].lower()
            )
            .values_list("pk", flat=True)
            .first()
        )
        return f"database:{found}" if found is not None else ""
    if kind == "catalog" and len(identifier) == 1:
        found = (
            Catalog.objects.filter(name_key=identifier[0].lower())
            .values_list("pk", flat=True)
            .first()
        )
        return f"catalog:{found}" if found is not None else ""
    return ""
