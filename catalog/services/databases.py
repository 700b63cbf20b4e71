"""Databases: create, change, drop."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import transaction

from catalog import access, bodies
from catalog.grants import ownership
from catalog.models import Catalog, Database, Table
from catalog.services._common import (
    User,
    _check_owner,
    _check_string_map,
    _delete_locations_on_commit,
    _insert,
    _managed_locations,
    _record_drop,
    _require,
    _user_or_none,
)
from core.errors import AlreadyExists, CoreError, NotEmpty
from core.identifiers import quote_path, validate_name
from core.privileges import Privilege


def database_create(
    *,
    user: User,
    catalog: Catalog,
    name: str,
    comment: str = "",
    properties: Mapping[str, Any] | None = None,
) -> Database:
    _require(user, catalog, Privilege.CREATE)
    validate_name(name, "database name")
    props = _check_string_map(properties or {}, "properties")
    path = quote_path([catalog.name, name])
    if catalog.databases.filter(name_key=name.lower()).exists():
        raise AlreadyExists(f"Database {path} already exists.")
    database = Database(
        catalog=catalog,
        name=name,
        comment=comment,
        properties=props,
        owner=_user_or_none(user),
    )
    return _insert(database, f"Database {path} already exists.", user)


@bodies.audits_refusals
def database_update(
    *,
    user: User,
    database: Database,
    comment: str | None = None,
    properties: Mapping[str, Any] | None = None,
    owner: str | None = None,
) -> Database:
    """Change a database (``MANAGE``); ``owner`` hands it to another user."""
    if owner is None or any(v is not None for v in (comment, properties)):
        _require(user, database, Privilege.MANAGE)
    _check_owner(user, database, owner)
    if properties is not None:
        database.properties = _check_string_map(properties, "properties")
    if comment is not None:
        database.comment = comment
    with transaction.atomic():
        database.save()
        if owner is not None:
            ownership.transfer_owner(user=user, row=database, new_owner=owner)
    return database


def database_delete(*, user: User, database: Database, cascade: bool = False) -> None:
    path = quote_path([database.catalog.name, database.name])
    _require(user, database, Privilege.MANAGE)
    securable = access.database_securable(database)
    if database.name_key == database.catalog.default_database.lower():
        raise CoreError(
            f"Database {path} is the default database of catalog [{database.catalog.name}]; "
            "make another database the default first, or drop the catalog."
        )
    with transaction.atomic():
        tables = Table.objects.filter(database=database)
        if not cascade and (tables.exists() or database.functions.exists()):
            raise NotEmpty(
                f"Database {path} is not empty; drop it with cascade=true to drop its tables, "
                "views and functions too."
            )
        locations = _managed_locations(tables)
        database.delete()
        _record_drop(user, securable, cascade=cascade)
        _delete_locations_on_commit(locations)
