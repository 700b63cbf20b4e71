"""Securables: finding the object a grant is on as the user may see it (``find_securable``),
and refusing what they may not see or do. Hidden = missing: an object the caller may not see
answers exactly as a missing one (``hidden_error``), the message the catalog's lookups give
for a name that does not exist."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from catalog import access as catalog_access
from catalog import storage
from catalog.grants._common import _catalog_of, _database_of
from catalog.models import Catalog, Database, Function, Table
from core import locations
from core import privileges as rule
from core.errors import CoreError, NotFound, PermissionDenied, missing_object
from core.identifiers import quote_path
from core.privileges import Access, Decision, Kind, Privilege, Securable

Row = Catalog | Database | Table | Function


def _missing_catalog(name: str) -> NotFound:
    return missing_object("catalog", f"A catalog with name [{name}] does not exist.")


def _missing_database(path: Sequence[str]) -> NotFound:
    return missing_object("database", f"Database {quote_path(list(path))} does not exist.")


def _missing_object(kind: str, path: Sequence[str]) -> NotFound:
    return NotFound(f"{kind.capitalize()} {quote_path(list(path))} does not exist.")


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
