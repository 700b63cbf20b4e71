"""What the requesting user may do with a catalog object: ``can`` in the API (docs/api.md),
from the ownership rule the services enforce (``services.may_modify``)."""

from __future__ import annotations

from typing import Any

from catalog.models import Catalog, Database
from catalog.services import User, may_modify


def permissions(user: User | None, *owner_ids: Any, create: bool = False) -> dict[str, bool]:
    """``{"modify", "drop", "create"}`` for one object, from the ownership rule the services
    enforce (``services.may_modify``: an admin, the object's owner, its catalog's owner).
    Computed from ids already on the row, so a list page costs no query per row. ``create``:
    whether objects may be created inside it (any signed-in user, as the services allow)."""
    signed_in = bool(getattr(user, "is_authenticated", False))
    allowed = signed_in and user is not None and may_modify(user, *owner_ids)
    return {"modify": allowed, "drop": allowed, "create": signed_in and create}


def catalog_permissions(user: User | None, catalog: Catalog) -> dict[str, bool]:
    return permissions(user, catalog.owner_id, create=True)


def database_permissions(user: User | None, database: Database) -> dict[str, bool]:
    return permissions(user, database.owner_id, database.catalog.owner_id, create=True)


def object_permissions(
    user: User | None, database: Database, created_by_id: Any
) -> dict[str, bool]:
    """A table's, view's or function's: its creator, its catalog's owner or an admin."""
    return permissions(user, created_by_id, database.catalog.owner_id)
