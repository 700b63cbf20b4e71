"""Catalogs: who may create them, create (with the default database), change, drop."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction

from audit import models as audit_models
from catalog import access, bodies
from catalog.grants import ownership
from catalog.models import Catalog, Database, Function, Table
from catalog.services._common import (
    User,
    _check_owner,
    _check_string_map,
    _delete_locations_on_commit,
    _managed_locations,
    _record_change,
    _record_drop,
    _require,
    _user_or_none,
)
from core.errors import AlreadyExists, CoreError, NotEmpty, PermissionDenied
from core.identifiers import quote_path, validate_name
from core.privileges import Privilege


def may_create_catalogs(user: User) -> bool:
    """Whether ``user`` may create catalogs: every signed-in user, or only admins when
    ``TESSERA_CATALOG_CREATORS = admins``."""
    if str(getattr(settings, "TESSERA_CATALOG_CREATORS", "everyone")).lower() == "admins":
        return access.access_for(user).admin
    return True


def catalog_create(
    *,
    user: User,
    name: str,
    comment: str = "",
    properties: Mapping[str, Any] | None = None,
    default_database: str = "default",
) -> Catalog:
    """Create a catalog together with its default database, both owned by ``user``. Who may
    create catalogs is ``TESSERA_CATALOG_CREATORS`` (``may_create_catalogs``); a new catalog
    is private to its owner until they grant something on it."""
    if not may_create_catalogs(user):
        raise PermissionDenied(
            "Only admins may create catalogs on this server (TESSERA_CATALOG_CREATORS = admins).",
            details={"kind": "catalog", "privilege": "CREATE"},
        )
    validate_name(name, "catalog name")
    validate_name(default_database, "database name")
    props = _check_string_map(properties or {}, "properties")
    if Catalog.objects.filter(name_key=name.lower()).exists():
        raise AlreadyExists(f"A catalog with name [{name}] already exists.")
    owner = _user_or_none(user)
    try:
        with transaction.atomic():
            catalog = Catalog(
                name=name,
                comment=comment,
                properties=props,
                default_database=default_database,
                owner=owner,
            )
            catalog.save()
            Database(catalog=catalog, name=default_database, owner=owner).save()
            _record_change(user, catalog, audit_models.CREATE)
    except IntegrityError as exc:
        raise AlreadyExists(f"A catalog with name [{name}] already exists.") from exc
    return catalog


@bodies.audits_refusals
def catalog_update(
    *,
    user: User,
    catalog: Catalog,
    comment: str | None = None,
    properties: Mapping[str, Any] | None = None,
    default_database: str | None = None,
    owner: str | None = None,
) -> Catalog:
    """Change a catalog (``MANAGE``); ``owner`` hands it to another user (its owner or an
    admin, ``grants.transfer_owner``)."""
    if owner is None or any(v is not None for v in (comment, properties, default_database)):
        _require(user, catalog, Privilege.MANAGE)
    _check_owner(user, catalog, owner)
    if properties is not None:
        catalog.properties = _check_string_map(properties, "properties")
    if comment is not None:
        catalog.comment = comment
    if default_database is not None:
        database = catalog.databases.filter(name_key=default_database.lower()).first()
        if database is None:
            raise CoreError(
                f"Database {quote_path([catalog.name, default_database])} does not exist; "
                "create it before making it the default.",
                details={"field": "default_database"},
            )
        catalog.default_database = database.name
    with transaction.atomic():
        catalog.save()
        if owner is not None:
            ownership.transfer_owner(user=user, row=catalog, new_owner=owner)
    return catalog


def catalog_delete(*, user: User, catalog: Catalog, cascade: bool = False) -> None:
    """Drop a catalog (``MANAGE``). Without ``cascade`` it must hold nothing but an empty
    default database. Audited (``drop``) in the drop's transaction."""
    _require(user, catalog, Privilege.MANAGE)
    securable = access.catalog_securable(catalog)
    with transaction.atomic():
        tables = Table.objects.filter(database__catalog=catalog)
        if not cascade:
            others = catalog.databases.exclude(name_key=catalog.default_database.lower())
            if (
                others.exists()
                or tables.exists()
                or Function.objects.filter(database__catalog=catalog).exists()
            ):
                raise NotEmpty(
                    f"Catalog [{catalog.name}] is not empty; drop it with cascade=true to drop "
                    "its databases, tables, views and functions too."
                )
        locations = _managed_locations(tables)
        catalog.delete()
        _record_drop(user, securable, cascade=cascade)
        _delete_locations_on_commit(locations)
