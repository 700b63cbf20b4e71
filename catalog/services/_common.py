"""What several nouns of ``catalog.services`` share: the permission check on a row (ADR 0011:
``catalog.access`` decides, ``catalog.grants`` answers hidden as missing), the drop's audit
event, the owner hand-over check, the checks of names and string maps, the column copy and
the deletion of data directories after commit."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import IntegrityError, transaction

from audit import models as audit_models
from audit.services import record
from catalog import storage, versions
from catalog.grants import ownership, securables
from catalog.models import Catalog, Column, ColumnName, Database, Function, Table
from core.errors import AlreadyExists, CoreError
from core.identifiers import quote_path
from core.privileges import Privilege, Securable
from core.schema import ResolvedSchema

User = AbstractBaseUser | AnonymousUser


def _require(user: User, row: Catalog | Database | Table | Function, needed: Privilege) -> None:
    """Allow, or refuse as ``catalog.access.require`` does: an object ``user`` may not see
    answers as missing, one they may see without ``needed`` is ``PERMISSION_DENIED``."""
    securables.require(user, securables.securable_of(row), needed)


def _record_drop(user: User, s: Securable, **detail: Any) -> None:
    record(
        audit_models.DROP,
        actor=_user_or_none(user),
        object_kind=s.kind.value,
        path=list(s.path),
        securable_key=s.key,
        detail=detail,
    )


def _record_change(
    user: User, row: Catalog | Database | Table | Function, action: str, **detail: Any
) -> None:
    """A ``create`` or ``alter`` event for ``row`` (in the caller's transaction)."""
    s = securables.securable_of(row)
    record(
        action,
        actor=_user_or_none(user),
        object_kind=s.kind.value,
        path=list(s.path),
        securable_key=s.key,
        detail=detail,
    )


def _check_owner(user: User, row: Catalog | Database | Table | Function, owner: Any) -> None:
    """Before anything changes: ``owner`` names a user and ``user`` may hand ``row`` over."""
    if owner is not None:
        ownership.check_transfer(user=user, row=row, new_owner=owner)


def _user_or_none(user: User) -> Any:
    return user if getattr(user, "is_authenticated", False) else None


def _check_string_map(value: Mapping[str, Any], field: str) -> dict[str, str]:
    result: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(key, str) or not key.strip():
            raise CoreError(
                f"Keys of '{field}' must be non-empty strings.", details={"field": field}
            )
        if not isinstance(item, str):
            raise CoreError(
                f"The value of '{field}.{key}' must be a string, e.g. \"{item}\".",
                details={"field": f"{field}.{key}"},
            )
        result[key] = item
    return result


def _replace_columns(table: Table, resolved: ResolvedSchema | None) -> None:
    Column.objects.filter(table=table).delete()
    if resolved is None:
        return
    Column.objects.bulk_create(
        Column(
            table=table,
            position=index,
            name=column.name,
            name_key=column.name.lower(),
            kind=column.kind,
            data_type=column.data_type.sql() if column.data_type is not None else None,
        )
        for index, column in enumerate(resolved.columns)
    )
    ColumnName.objects.bulk_create(
        [ColumnName(name_key=key) for key in {c.name.lower() for c in resolved.columns}],
        ignore_conflicts=True,
    )


M = TypeVar("M", Database, Function)


def _insert(row: M, already_exists: str, user: User | None = None) -> M:
    """Insert one new row in a savepoint; a concurrent insert of the same name (the unique
    constraint) becomes ALREADY_EXISTS with the caller's message instead of a 500. With
    ``user``: audited (``create``) in the same savepoint."""
    try:
        with transaction.atomic():
            row.save()
            if user is not None:
                _record_change(user, row, audit_models.CREATE)
    except IntegrityError as exc:
        raise AlreadyExists(already_exists) from exc
    return row


def _object_path(database: Database, name: str) -> str:
    return quote_path([database.catalog.name, database.name, name])


def _ensure_name_free(database: Database, name: str) -> None:
    existing = Table.objects.filter(database=database, name_key=name.lower()).first()
    if existing is not None:
        raise AlreadyExists(
            f"{existing.kind.capitalize()} {_object_path(database, existing.name)} already exists."
        )


def _managed_locations(tables: Any) -> list[str]:
    """Every directory of these tables' data: current locations and kept versions."""
    return versions.locations_of(tables)


def _delete_locations_on_commit(locations: list[str]) -> None:
    def cleanup() -> None:
        for location in locations:
            storage.delete_location(location)

    if locations:
        transaction.on_commit(cleanup)
