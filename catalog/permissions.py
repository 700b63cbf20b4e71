"""What the requesting user may do with a catalog object: ``can`` in the API (docs/api.md,
"Permissions"), from the one privilege rule (``core.privileges.flags``) and what the user
holds (``catalog.access.access_for``, loaded once per request).

Everything is computed from ids already on the row (the object's, its parents' and their
owners'), so a list page costs no query per row."""

from __future__ import annotations

from typing import Any

from catalog import access, grants
from catalog.models import Catalog, Database, Function, Table
from core.privileges import Kind, Securable


def can(user: Any, s: Securable) -> dict[str, bool]:
    """``{"modify", "drop", "create", "manage", "select", "write", "execute",
    "transfer_owner"}`` of ``s`` for ``user`` (everything false for nobody)."""
    return grants.can(access.access_for(user), s)


def catalog_permissions(user: Any, catalog: Catalog) -> dict[str, bool]:
    return can(user, access.catalog_securable(catalog))


def database_permissions(user: Any, database: Database) -> dict[str, bool]:
    return can(user, access.database_securable(database))


def object_permissions(user: Any, obj: Table | Function) -> dict[str, bool]:
    """A table's, view's or function's (its ``database.catalog`` already loaded)."""
    if isinstance(obj, Function):
        return can(user, access.function_securable(obj))
    return can(user, access.relation_securable(obj))


def row_permissions(
    user: Any, database: Database, kind: str, object_id: int, owner_id: int | None, name: str
) -> dict[str, bool]:
    """A list row's, from its id and owner id and its (already loaded) database."""
    s = Securable(
        Kind.FUNCTION
        if kind == "function"
        else Kind.VIEW
        if kind == Table.KIND_VIEW
        else Kind.TABLE,
        catalog_id=database.catalog_id,
        database_id=database.pk,
        object_id=object_id,
        owner_ids=(database.catalog.owner_id, database.owner_id, owner_id),
        path=(database.catalog.name, database.name, name),
    )
    return can(user, s)
