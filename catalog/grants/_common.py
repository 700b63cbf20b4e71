"""What several nouns of ``catalog.grants`` share: the catalog and database above an object
and which grants pass down from them, and how an object is named in messages and bodies."""

from __future__ import annotations

from typing import Any

from core.privileges import INHERITED, Kind, Privilege, Securable

_OBJECT_KINDS = (Kind.TABLE, Kind.VIEW, Kind.FUNCTION)


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


def _described(s: Securable) -> str:
    what = "storage root" if s.kind is Kind.STORAGE else s.kind.value
    return f"{what} {s.sql_path}"


def _object_json(s: Securable) -> dict[str, Any]:
    if s.kind is Kind.STORAGE:
        return {"kind": "storage", "path": s.root}
    return {"kind": s.kind.value, "identifier": list(s.path)}
