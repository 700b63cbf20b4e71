"""The planner's view of the catalog: ``core.planner.CatalogReader`` over ``catalog.models``.

The planner is pure Python and asks only these four questions; each is one indexed query.
Names match case-insensitively; the objects carry their names as stored. Temporary objects
(of the session) will be consulted first once they exist; the planner needs no change then.
"""

from __future__ import annotations

from typing import Any

from catalog.models import Catalog, Database, Function, Table
from core.identifiers import ObjectIdentifier
from core.planner import FunctionDef, Relation
from core.schema import ResolvedSchema
from jobs.models import Session


def _no_nul(*names: str) -> bool:
    # PostgreSQL text cannot hold NUL; no name contains one, so such a lookup is a miss.
    return not any("\x00" in name for name in names)


class DjangoCatalogReader:
    """Implements ``core.planner.CatalogReader`` for one session (temporary objects: later)."""

    def __init__(self, session: Session | None = None) -> None:
        self.session = session

    def catalog_exists(self, catalog: str) -> bool:
        return _no_nul(catalog) and Catalog.objects.filter(name_key=catalog.lower()).exists()

    def database_exists(self, catalog: str, database: str) -> bool:
        return (
            _no_nul(catalog, database)
            and Database.objects.filter(
                catalog__name_key=catalog.lower(), name_key=database.lower()
            ).exists()
        )

    def get_relation(self, ident: ObjectIdentifier) -> Relation | None:
        if not _no_nul(*ident.parts):
            return None
        row = (
            Table.objects.select_related("database__catalog")
            .filter(
                database__catalog__name_key=ident.catalog.lower(),
                database__name_key=ident.database.lower(),
                name_key=ident.name.lower(),
            )
            .first()
        )
        return relation_of(row) if row is not None else None

    def get_function(self, ident: ObjectIdentifier) -> FunctionDef | None:
        if not _no_nul(*ident.parts):
            return None
        row = (
            Function.objects.select_related("database__catalog")
            .filter(
                database__catalog__name_key=ident.catalog.lower(),
                database__name_key=ident.database.lower(),
                name_key=ident.name.lower(),
            )
            .first()
        )
        return function_of(row) if row is not None else None


def _identifier(row: Table | Function) -> ObjectIdentifier:
    return ObjectIdentifier(row.database.catalog.name, row.database.name, row.name)


def relation_of(row: Table) -> Relation:
    """A table or view row as the planner's Relation.

    A view's ``query`` is its expanded text (fully qualified names, as the planner wrote it on
    CREATE VIEW) when there is one, so that it reads the same objects whatever the current
    catalog and database of the session that queries it; else the text as written.
    """
    resolved: Any = row.resolved_schema
    return Relation(
        identifier=_identifier(row),
        kind="view" if row.kind == Table.KIND_VIEW else "table",
        status=row.status,
        options=dict(row.options),
        location=row.location,
        resolved_schema=ResolvedSchema.from_dict(resolved) if resolved else None,
        query=(row.expanded_query or row.query) if row.kind == Table.KIND_VIEW else "",
    )


def function_of(row: Function) -> FunctionDef:
    return FunctionDef(
        identifier=_identifier(row),
        language="sql" if row.language == Function.LANGUAGE_SQL else "python",
        implementation=row.implementation,
        parameters=tuple((str(p["name"]), str(p["data_type"])) for p in row.parameters),
        return_type=row.return_type,
    )
