"""The planner's view of the catalog: ``core.planner.CatalogReader`` over ``catalog.models``
and the session's temporary objects (``jobs.models.TemporaryObject``, FLIP-64).

Temporary objects come first: ``get_relation`` and ``get_function`` answer the session's
temporary object with that identifier when there is one, else the permanent one;
``get_system_function`` answers the session's temporary system functions only (built-ins
are the planner's own list). Names match case-insensitively; objects carry their names as
stored. A reader serves one statement: it reads the session's temporary objects once (one
query) and keeps them.

The reader carries the statement's user (ADR 0011 §3.3): the planner decides
privileges with ``core.privileges`` on what ``access()`` answers (the user's, or a view
owner's for definer rights, each loaded once per statement) and on the securables that
permanent objects carry (``Relation.securable``/``owner``). It answers every row it has,
hidden or not: hiding is the planner's decision, so that a hidden object is refused exactly
as a missing one. Temporary objects are the session's own and carry no securable.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from catalog import access as catalog_access
from catalog import storage, versions
from catalog.models import Catalog, Database, Function, Table
from core import locations
from core.errors import CoreError
from core.identifiers import ObjectIdentifier
from core.planner import FunctionDef, Relation, TableVersionRef, TimeTravel
from core.privileges import Access, Securable
from core.schema import ResolvedSchema
from jobs.models import Session, TemporaryObject

# Keys of the temporary-object index: (namespace, catalog, database, name), lower-cased.
# Tables and views share the namespace "relation"; catalog functions "function"; temporary
# system functions "system" with empty catalog and database.
TemporaryKey = tuple[str, str, str, str]


def _no_nul(*names: str) -> bool:
    # PostgreSQL text cannot hold NUL; no name contains one, so such a lookup is a miss.
    return not any("\x00" in name for name in names)


def namespace_of(row: TemporaryObject) -> str:
    if row.kind in TemporaryObject.RELATION_KINDS:
        return "relation"
    return "system" if row.system else "function"


def temporary_key(namespace: str, catalog: str, database: str, name: str) -> TemporaryKey:
    return (namespace, catalog.lower(), database.lower(), name.lower())


class DjangoCatalogReader:
    """Implements ``core.planner.CatalogReader`` for one session's statement."""

    def __init__(self, session: Session | None = None, *, user: Any = None) -> None:
        """``user``: whose rights the statement is planned with; by default the session's
        user. Neither: nobody's (nothing is visible)."""
        self.session = session
        self._user = user
        self._temporary: dict[TemporaryKey, TemporaryObject] | None = None
        self._access: dict[int | None, Access] = {}

    @property
    def user(self) -> Any:
        if self._user is None and self.session is not None:
            self._user = self.session.user
        return self._user

    # -- the planner's protocol -----------------------------------------------------------

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
        found = self.find_relation(ident)
        if isinstance(found, TemporaryObject):
            return temporary_relation_of(found)
        return relation_of(found) if found is not None else None

    def get_function(self, ident: ObjectIdentifier) -> FunctionDef | None:
        found = self.find_function(ident)
        if isinstance(found, TemporaryObject):
            return temporary_function_of(found)
        return function_of(found) if found is not None else None

    def get_system_function(self, name: str) -> FunctionDef | None:
        found = self.temporary_system_function(name)
        return temporary_function_of(found) if found is not None else None

    def access(self, principal: int | None = None) -> Access:
        """What the statement's user holds (``principal`` None: ``catalog.access.access_for``,
        cached on the user object), or the user ``principal`` (a view's or SQL function's
        owner: ``load_access``). Once per principal per statement (this reader)."""
        user = self.user
        own_id = getattr(user, "pk", None)
        key = None if principal is None or principal == own_id else int(principal)
        found = self._access.get(key)
        if found is None:
            if key is None:
                found = catalog_access.access_for(user) if user is not None else Access(None)
            else:
                found = catalog_access.load_access(key)
            self._access[key] = found
        return found

    def catalog_securable(self, catalog: str) -> Securable | None:
        if not _no_nul(catalog):
            return None
        row = Catalog.objects.filter(name_key=catalog.lower()).first()
        return catalog_access.catalog_securable(row) if row is not None else None

    def database_securable(self, catalog: str, database: str) -> Securable | None:
        if not _no_nul(catalog, database):
            return None
        row = (
            Database.objects.select_related("catalog")
            .filter(catalog__name_key=catalog.lower(), name_key=database.lower())
            .first()
        )
        return catalog_access.database_securable(row) if row is not None else None

    def owns_inside(self, securable: Securable) -> bool:
        """Whether the statement's user owns a table, view or function inside the catalog or
        database ``securable`` (one ``EXISTS``)."""
        return catalog_access.owns_inside(getattr(self.user, "pk", None), securable)

    def table_version(self, relation: Relation, travel: TimeTravel) -> TableVersionRef:
        """The readable version of the managed table that ``travel`` names
        (``catalog.versions``); CoreError naming the readable range otherwise."""
        row = self.permanent_relation(relation.identifier)
        if row is None or not row.managed:
            raise CoreError(
                f"Table {relation.identifier.quoted()} has no versions.",
                details={"identifier": list(relation.identifier.parts)},
            )
        if travel.version is not None:
            found = versions.at_version(row, travel.version)
        elif travel.timestamp is not None:
            found = versions.at_time(row, travel.timestamp)
        else:
            raise CoreError(f"Cannot read {travel.text}.")
        return TableVersionRef(found.version, found.location)

    def version_since(self, relation: Relation, moment: datetime) -> int | None:
        """The first version of the managed table made at or after ``moment``."""
        row = self.permanent_relation(relation.identifier)
        if row is None or not row.managed:
            return None
        return versions.first_since(row, moment)

    def write_conflict(self, relation: Relation) -> str | None:
        """Why writing ``relation`` would change another table's data: its path equals,
        holds or lies inside another table's (``catalog.storage.check_table_apart``; rows
        stored before that rule existed are refused here, and again at the commit)."""
        row = self.permanent_relation(relation.identifier)
        if row is None or relation.temporary:
            return None
        try:
            storage.check_table_apart(row, user=self.user)  # names what the user may see
        except locations.LocationRefused as exc:
            return exc.message
        return None

    def read_conflict(self, relation: Relation) -> str | None:
        """Why the temporary table ``relation`` may not read its files now
        (``catalog.services.check_temporary_path``'s rule, decided again per statement)."""
        path = locations.comparable(str(relation.options.get("path") or ""))
        if not relation.temporary or relation.kind != "table" or not path:
            return None
        try:
            storage.check_no_overlap(path, path, user=self.user, reader=self.user)
        except locations.LocationRefused as exc:
            return exc.message
        return None

    # -- rows (for the REST API's resolve and for commands) ------------------------------

    def find_relation(self, ident: ObjectIdentifier) -> TemporaryObject | Table | None:
        """The session's temporary table/view with this identifier, else the permanent one."""
        return self.temporary_relation(ident) or self.permanent_relation(ident)

    def find_function(self, ident: ObjectIdentifier) -> TemporaryObject | Function | None:
        """The session's temporary catalog function, else the catalog function."""
        return self.temporary_function(ident) or self.permanent_function(ident)

    def temporary_relation(self, ident: ObjectIdentifier) -> TemporaryObject | None:
        return self._temporary_objects().get(temporary_key("relation", *ident.parts))

    def temporary_function(self, ident: ObjectIdentifier) -> TemporaryObject | None:
        return self._temporary_objects().get(temporary_key("function", *ident.parts))

    def temporary_system_function(self, name: str) -> TemporaryObject | None:
        return self._temporary_objects().get(temporary_key("system", "", "", name))

    def permanent_relation(self, ident: ObjectIdentifier) -> Table | None:
        if not _no_nul(*ident.parts):
            return None
        return (
            Table.objects.select_related("database__catalog", "created_by", "owner")
            .filter(
                database__catalog__name_key=ident.catalog.lower(),
                database__name_key=ident.database.lower(),
                name_key=ident.name.lower(),
            )
            .first()
        )

    def permanent_function(self, ident: ObjectIdentifier) -> Function | None:
        if not _no_nul(*ident.parts):
            return None
        return (
            Function.objects.select_related("database__catalog", "created_by", "owner")
            .filter(
                database__catalog__name_key=ident.catalog.lower(),
                database__name_key=ident.database.lower(),
                name_key=ident.name.lower(),
            )
            .first()
        )

    def _temporary_objects(self) -> dict[TemporaryKey, TemporaryObject]:
        if self._temporary is None:
            rows = (
                TemporaryObject.objects.filter(session_id=self.session.pk)
                if self.session is not None and self.session.pk is not None
                else TemporaryObject.objects.none()
            )
            self._temporary = {
                temporary_key(namespace_of(row), row.catalog, row.database, row.name): row
                for row in rows
            }
        return self._temporary


def _identifier(row: Table | Function) -> ObjectIdentifier:
    return ObjectIdentifier(row.database.catalog.name, row.database.name, row.name)


def _resolved(value: Any) -> ResolvedSchema | None:
    return ResolvedSchema.from_dict(value) if value else None


def _owner_name(row: Table | Function) -> str | None:
    return row.owner.get_username() if row.owner_id is not None and row.owner else None


def relation_of(row: Table) -> Relation:
    """A table or view row as the planner's Relation, with its securable (the row's
    ``select_related("database__catalog")`` has the three owners' ids) and its owner's name.

    A view's ``query`` is its expanded text (fully qualified names, as the planner wrote it on
    CREATE VIEW) when there is one, so that it reads the same objects whatever the current
    catalog and database of the session that queries it; else the text as written.
    """
    return Relation(
        identifier=_identifier(row),
        kind="view" if row.kind == Table.KIND_VIEW else "table",
        status=row.status,
        options=dict(row.options),
        location=row.location,
        resolved_schema=_resolved(row.resolved_schema),
        query=(row.expanded_query or row.query) if row.kind == Table.KIND_VIEW else "",
        staged_by_job=str(row.staged_by_job) if row.staged_by_job is not None else None,
        securable=catalog_access.relation_securable(row),
        owner=_owner_name(row),
        delta_version=versions.current_delta_version(row),
    )


def temporary_relation_of(row: TemporaryObject) -> Relation:
    """A temporary table or view as the planner's Relation (``temporary=True``).

    A temporary table is always external: its options carry ``connector`` and ``path``.
    A temporary view reads with its expanded query, like a permanent one.
    """
    definition: dict[str, Any] = dict(row.definition or {})
    is_view = row.kind == TemporaryObject.KIND_VIEW
    query = str(definition.get("expanded_query") or definition.get("query") or "")
    return Relation(
        identifier=ObjectIdentifier(row.catalog, row.database, row.name),
        kind="view" if is_view else "table",
        status="active",
        options={} if is_view else dict(definition.get("options") or {}),
        location="",
        resolved_schema=_resolved(definition.get("resolved_schema")),
        query=query if is_view else "",
        temporary=True,
    )


def _parameters(value: Any) -> tuple[tuple[str, str], ...]:
    return tuple((str(p["name"]), str(p["data_type"])) for p in value or [])


def function_of(row: Function) -> FunctionDef:
    return FunctionDef(
        identifier=_identifier(row),
        language="sql" if row.language == Function.LANGUAGE_SQL else "python",
        implementation=row.implementation,
        parameters=_parameters(row.parameters),
        return_type=row.return_type,
        securable=catalog_access.function_securable(row),
        owner=_owner_name(row),
    )


def temporary_function_of(row: TemporaryObject) -> FunctionDef:
    """A temporary function as the planner's FunctionDef; a system one has the identifier
    ``ObjectIdentifier("", "", name)`` and ``system=True``."""
    definition: dict[str, Any] = dict(row.definition or {})
    return FunctionDef(
        identifier=ObjectIdentifier(row.catalog, row.database, row.name),
        language="sql" if definition.get("language") == Function.LANGUAGE_SQL else "python",
        implementation=str(definition.get("implementation") or ""),
        parameters=_parameters(definition.get("parameters")),
        return_type=str(definition.get("return_type") or ""),
        temporary=True,
        system=row.system,
    )
