"""Reads from the catalog: lookups that raise NOT_FOUND with the full path, and keyset
pages whose cost does not depend on their depth or size (a constant number of queries).

Every read is made for someone: ``access`` (``catalog.access.access_for(user)``, or
``catalog.access.SYSTEM`` for lookups made on nobody's behalf) decides what it finds (issue
18, ADR 0011). A row the user may not see is answered exactly as a missing one, by the same
code (``get_table`` names the database when the database is the hidden part); a row the user
may not see in a parent they may see is refused (``PERMISSION_DENIED``, Unity Catalog's rule).
Lists, search and completion filter in SQL.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from django.db import connection
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.db.models.expressions import RawSQL

from catalog import access as catalog_access
from catalog import render
from catalog.models import Catalog, Column, ColumnName, Database, Function, Table
from core import privileges
from core.errors import CoreError, NotFound, PermissionDenied, missing_object
from core.identifiers import quote_path
from core.privileges import Access, Kind, Privilege, Securable

SEARCH_KINDS = ("table", "view", "function", "column")


def _can_exist(*names: str) -> bool:
    """False for names no object can have: PostgreSQL text cannot hold NUL (and names
    never contain control characters), so such a lookup is a miss, not a database error."""
    return not any("\x00" in name for name in names)


def _refused(access: Access, s: Securable) -> PermissionDenied:
    """The refusal of an object the user may not see in a parent they may see."""
    message, details = privileges.denied_message(s, Privilege.USE, privileges.effective(access, s))
    return PermissionDenied(message, details=details)


def _missing_catalog(name: str) -> NotFound:
    return missing_object("catalog", f"A catalog with name [{name}] does not exist.")


def get_catalog(name: str, *, access: Access) -> Catalog:
    catalog = (
        Catalog.objects.select_related("owner").filter(name_key=name.lower()).first()
        if _can_exist(name)
        else None
    )
    if catalog is None or not catalog_access.is_visible(
        access, catalog_access.catalog_securable(catalog)
    ):
        raise _missing_catalog(name)
    return catalog


def _database_answer(access: Access, found: Database, catalog: str) -> None:
    """Nothing when the user may see the database ``found`` (its catalog loaded with it);
    else what ``get_database`` answers for it, without reading it again: its catalog missing
    (``catalog`` as the caller typed it) when that is not visible either, else a refusal."""
    s = catalog_access.database_securable(found)
    if catalog_access.is_visible(access, s):
        return
    if not catalog_access.is_visible(access, catalog_access.catalog_securable(found.catalog)):
        raise _missing_catalog(catalog)
    raise _refused(access, s)


def get_database(catalog: str, database: str, *, access: Access) -> Database:
    found = (
        Database.objects.select_related("catalog", "owner")
        .filter(catalog__name_key=catalog.lower(), name_key=database.lower())
        .first()
        if _can_exist(catalog, database)
        else None
    )
    if found is None:
        get_catalog(catalog, access=access)  # names the catalog when that is what is missing
        raise missing_object(
            "database", f"Database {quote_path([catalog, database])} does not exist."
        )
    _database_answer(access, found, catalog)
    return found


def _object_lookup(
    access: Access,
    found: Any,
    securable: Callable[[Any], Securable],
    catalog: str,
    database: str,
    missing: Callable[[], NoReturn],
) -> Any:
    """``found`` when the user may see it; otherwise exactly what a missing object in that
    database answers (the database's own NOT_FOUND or refusal when it is not visible), or,
    in a database the user may see, a refusal naming the object. ``found`` comes with its
    database and catalog (``select_related``): they are not read again."""
    if found is None:
        get_database(catalog, database, access=access)
        missing()
    s = securable(found)
    if privileges.visible(access, s):
        return found
    _database_answer(access, found.database, catalog)
    raise _refused(access, s)


def get_table(
    catalog: str, database: str, name: str, kind: str = Table.KIND_TABLE, *, access: Access
) -> Table:
    """A table (or view, with ``kind="view"``) by its three-part name."""
    found = (
        Table.objects.select_related("database__catalog", "created_by")
        .filter(
            database__catalog__name_key=catalog.lower(),
            database__name_key=database.lower(),
            name_key=name.lower(),
        )
        .first()
        if _can_exist(catalog, database, name)
        else None
    )
    path = quote_path([catalog, database, name])

    def missing() -> NoReturn:
        raise missing_object("relation", f"{kind.capitalize()} {path} does not exist.")

    table: Table = _object_lookup(
        access, found, catalog_access.relation_securable, catalog, database, missing
    )
    if table.kind != kind:
        raise NotFound(f"{kind.capitalize()} {path} does not exist; {path} is a {table.kind}.")
    return table


def get_function(catalog: str, database: str, name: str, *, access: Access) -> Function:
    found = (
        Function.objects.select_related("database__catalog", "created_by")
        .filter(
            database__catalog__name_key=catalog.lower(),
            database__name_key=database.lower(),
            name_key=name.lower(),
        )
        .first()
        if _can_exist(catalog, database, name)
        else None
    )

    def missing() -> NoReturn:
        raise missing_object(
            "function", f"Function {quote_path([catalog, database, name])} does not exist."
        )

    function: Function = _object_lookup(
        access, found, catalog_access.function_securable, catalog, database, missing
    )
    return function


def _after_name(qs: QuerySet[Any], after: Any) -> QuerySet[Any]:
    if after is None:
        return qs
    if not isinstance(after, str) or not _can_exist(after):
        raise CoreError(
            "The page_token is not one this server issued; start again without it.",
            details={"field": "page_token"},
        )
    return qs.filter(name_key__gt=after)


def _filtered(qs: QuerySet[Any], q: Q | None) -> QuerySet[Any]:
    return qs if q is None else qs.filter(q)


def list_catalogs(*, access: Access, after: Any, limit: int) -> list[Catalog]:
    qs = _filtered(Catalog.objects.select_related("owner"), catalog_access.catalogs_q(access))
    return list(_after_name(qs.order_by("name_key"), after)[:limit])


def list_databases(
    catalog: Catalog, *, access: Access, after: Any, limit: int, name_regex: str | None = None
) -> list[Database]:
    """A page of the catalog's databases: all of them when the user may see every database
    inside, else those ``catalog.access.databases_q`` lets through (``name_regex``: see
    ``list_tables``)."""
    qs = Database.objects.select_related("catalog", "owner").filter(catalog=catalog)
    if name_regex is not None:
        qs = qs.filter(name_key__iregex=name_regex)
    if not privileges.scope(access, Kind.DATABASE).covers(catalog.pk, None):
        qs = _filtered(qs, catalog_access.databases_q(access))
    return list(_after_name(qs.order_by("name_key"), after)[:limit])


def in_database_q(access: Access, kind: Kind, database: Database) -> Q | None:
    """The objects of ``kind`` in ``database`` the user may see: None (no filter, today's
    SQL) when they may see them all; else those they own or hold a privilege on, the ids
    taken from the loaded grants of this database only."""
    if privileges.scope(access, kind).covers(database.catalog_id, database.pk):
        return None
    if access.user_id is None:
        return Q(pk__in=[])
    held = privileges.HOLDS[kind]
    ids = {
        g.object_id
        for g in access.grants
        if g.level is kind
        and g.database_id == database.pk
        and g.object_id is not None
        and g.privilege in held
    }
    q = Q(owner_id=access.user_id)
    return q | Q(catalog_access.AnyOf("pk", ids)) if ids else q


def list_tables(
    database: Database,
    kind: str,
    *,
    access: Access,
    after: Any,
    limit: int,
    name_regex: str | None = None,
    with_schemas: bool = True,
) -> list[render.Row]:
    """A page of tables or views as rows for catalog/render.py (schemas as JSON text unless
    ``with_schemas`` is False); with ``name_regex``, only the names it matches (in the
    database, case-insensitive: one table's columns read one row, not every schema)."""
    visible = in_database_q(access, Kind(kind), database)
    qs = Table.objects.filter(database=database, kind=kind)
    if name_regex is not None:
        qs = qs.filter(name_key__iregex=name_regex)
    if visible is not None:
        # The page's ids first, chosen in the list index (which holds the owner): only the
        # page's rows are then read, never a wide row the filter turns away.
        page = _after_name(qs.filter(visible).order_by("name_key"), after).values("pk")[:limit]
        qs = Table.objects.filter(pk__in=page)
        after = None
    return list(render.list_rows(_after_name(qs.order_by("name_key"), after), with_schemas)[:limit])


def list_functions(database: Database, *, access: Access, after: Any, limit: int) -> list[Function]:
    qs = Function.objects.filter(database=database).select_related("created_by")
    qs = _filtered(qs, in_database_q(access, Kind.FUNCTION, database))
    rows = list(_after_name(qs.order_by("name_key"), after)[:limit])
    for row in rows:
        row.database = database
    return rows


@dataclass(frozen=True)
class SearchHit:
    kind: str  # table | view | function | column
    catalog: str
    database: str
    name: str  # the object's name (for a column: its table's or view's)
    column: str | None = None
    data_type: str | None = None
    object_kind: str | None = None  # for a column: table | view
    comment: str = ""
    key: tuple[int, str, int] = (0, "", 0)  # the page-token sort key


# What a hit shows, read with its parents in one join: never a table's schema JSON.
_OBJECT_FIELDS = ("name", "name_key", "comment", "database__name", "database__catalog__name")
_COLUMN_FIELDS = (
    "name",
    "name_key",
    "data_type",
    "table__name",
    "table__kind",
    "table__database__name",
    "table__database__catalog__name",
)


def _kind_query(
    kind: str, needle: str, access: Access
) -> tuple[QuerySet[Any], str, tuple[str, ...]]:
    """The matching rows of one kind the user may see (columns: see ``search``), their
    parents and the fields a hit needs."""
    qs: QuerySet[Any]
    if kind in ("table", "view"):
        qs = Table.objects.filter(kind=kind, name_key__contains=needle)
        visible = catalog_access.relations_q(access, kind)
    elif kind == "function":
        qs = Function.objects.filter(name_key__contains=needle)
        visible = catalog_access.functions_q(access)
    else:
        qs = Column.objects.filter(name_key__contains=needle)
        return qs, "table__database__catalog", _COLUMN_FIELDS
    return _filtered(qs, visible), "database__catalog", _OBJECT_FIELDS


def _hit(kind: str, kind_index: int, row: Any) -> SearchHit:
    key = (kind_index, row.name_key, row.pk)
    if kind == "column":
        table = row.table
        return SearchHit(
            kind=kind,
            catalog=table.database.catalog.name,
            database=table.database.name,
            name=table.name,
            column=row.name,
            data_type=row.data_type,
            object_kind=table.kind,
            key=key,
        )
    return SearchHit(
        kind=kind,
        catalog=row.database.catalog.name,
        database=row.database.name,
        name=row.name,
        comment=row.comment,
        key=key,
    )


# Distinct column names containing a fragment, in name order, that still name a column:
# ``ColumnName`` keeps every name ever used, so each name is checked against
# ``catalog_column`` (one index probe) as the ordered matches are read, until enough are
# found. OFFSET 0 keeps PostgreSQL from flattening the inner query, which would probe every
# match (thousands for a fragment like "_id") before sorting. From three characters on, the
# trigram index finds the matches, sorted afterwards: ordering by an expression (the same
# order, names are stored lower-cased) keeps the planner from walking the whole name index
# in order instead, which reads every name when a fragment matches few or none. Shorter
# fragments cannot use trigrams; they match many names, and the in-order walk stops early.
_COLUMN_NAMES_SQL = """
    SELECT m.name_key{ord} FROM (
        SELECT name_key{ord_as} FROM catalog_columnname
        WHERE name_key LIKE %s ESCAPE '\\' {after}
        ORDER BY {order} OFFSET 0
    ) m
    WHERE EXISTS (SELECT 1 FROM catalog_column c {join} WHERE c.name_key = m.name_key {visible})
    {order_by}LIMIT %s
"""


def _visible_tables_sql(access: Access) -> tuple[str, list[Any]]:
    """``catalog.access.relations_q`` for tables and views as SQL on the alias ``t``
    (``catalog_table``), for the ``EXISTS`` of ``_COLUMN_NAMES_SQL``: "" when the user may
    see everything."""
    terms: list[str] = []
    params: list[Any] = []
    for kind in (Kind.TABLE, Kind.VIEW):
        scope = privileges.scope(access, kind)
        if scope.everything:
            return "", []
        if access.user_id is None:
            return "AND FALSE", []
        ors = ["t.owner_id = %s"]
        params += [kind.value, access.user_id]
        databases = catalog_access.uncovered_databases(access, scope)
        if databases:
            ors.append("t.database_id = ANY(%s)")
            params.append(databases)
        if scope.objects:
            ors.append("t.id = ANY(%s)")
            params.append(sorted(scope.objects))
        if scope.catalogs:
            ors.append(
                "t.database_id IN "
                "(SELECT d.id FROM catalog_database d WHERE d.catalog_id = ANY(%s))"
            )
            params.append(sorted(scope.catalogs))
        terms.append(f"(t.kind = %s AND ({' OR '.join(ors)}))")
    return f"AND ({' OR '.join(terms)})", params


# The page of a restricted user's column search (PostgreSQL): for each of the page's names,
# in order, its columns in id order whose table the user may see, at most a page of them — a
# name that stands in thousands of tables stops after a page of visible ones, instead of
# testing every one of its columns' tables before sorting. The names come ordered (``ord``:
# the names subquery's own order), so the page is an incremental sort that stops reading
# names, and probing their columns, once it is full.
_VISIBLE_COLUMN_PAGE_SQL = """
    SELECT x.id FROM ({names}) n
    CROSS JOIN LATERAL (
        SELECT c.id FROM catalog_column c JOIN catalog_table t ON t.id = c.table_id
        WHERE c.name_key = n.name_key {resume} {visible}
        ORDER BY c.id LIMIT %s
    ) x
    ORDER BY n.ord, x.id LIMIT %s
"""


def _visible_column_page(
    names: RawSQL, resume: tuple[str | None, int | None] | None, limit: int, access: Access
) -> RawSQL:
    """The ids of the first ``limit`` columns (after ``resume``, a (name, id) key) of
    ``names`` whose tables the user may see, in (name, id) order."""
    visible, visible_params = _visible_tables_sql(access)
    sql = _VISIBLE_COLUMN_PAGE_SQL.format(
        names=names.sql,
        resume="AND (c.name_key, c.id) > (%s, %s)" if resume is not None else "",
        visible=visible,
    )
    params = [*names.params, *(resume or ()), *visible_params, limit, limit]
    return RawSQL(sql, params)


def _column_names(
    needle: str, after: str | None, limit: int, access: Access, *, ordered: bool = False
) -> Any:
    """A subquery of the first ``limit`` column names containing ``needle`` (from ``after``
    on), each used by at least one column of a table or view the user may see, in name
    order. ``ordered`` (PostgreSQL): with their sort key ``ord``, ordered by it."""
    if connection.vendor == "postgresql":
        pattern = "%" + re.sub(r"([\\%_])", r"\\\1", needle) + "%"
        visible, visible_params = _visible_tables_sql(access)
        order = "lower(name_key)" if len(needle) >= 3 else "name_key"
        sql = _COLUMN_NAMES_SQL.format(
            ord=", m.ord" if ordered else "",
            ord_as=f", {order} AS ord" if ordered else "",
            after="AND name_key >= %s" if after is not None else "",
            order=order,
            join="JOIN catalog_table t ON t.id = c.table_id" if visible else "",
            visible=visible,
            order_by="ORDER BY m.ord\n    " if ordered else "",
        )
        params = [pattern, *([after] if after is not None else []), *visible_params, limit]
        return RawSQL(sql, params)
    # SQLite (the embedded default holds small catalogs): the plain ORM form.
    used = _filtered(
        Column.objects.filter(name_key=OuterRef("name_key")), catalog_access.columns_q(access)
    )
    names = ColumnName.objects.filter(name_key__contains=needle).filter(Exists(used))
    if after is not None:
        names = names.filter(name_key__gte=after)
    return names.order_by("name_key").values("name_key")[:limit]


def search(
    q: str, *, access: Access, kinds: tuple[str, ...], after: Any, limit: int
) -> list[SearchHit]:
    """Objects and columns whose name contains ``q`` (case-insensitive), kind by kind,
    each ordered by name; at most one query per kind whatever ``limit`` is."""
    needle = q.lower()
    if not _can_exist(needle):
        return []  # no name contains NUL
    start: tuple[int, str | None, int | None] = (0, None, None)
    if after is not None:
        if not (
            isinstance(after, list)
            and len(after) == 3
            and type(after[0]) is int
            and isinstance(after[1], str)
            and _can_exist(after[1])
            and type(after[2]) is int
        ):
            raise CoreError(
                "The page_token is not one this server issued; start again without it.",
                details={"field": "page_token"},
            )
        start = (after[0], after[1], after[2])
    hits: list[SearchHit] = []
    for kind_index, kind in enumerate(SEARCH_KINDS):
        if kind not in kinds or kind_index < start[0]:
            continue
        qs, parents, fields = _kind_query(kind, needle, access)
        resuming = kind_index == start[0] and start[1] is not None
        room = limit - len(hits)
        page: Any = None
        if kind == "column":
            # Match distinct names first (one row per name, trigram-indexed), then take their
            # columns: a common name stands in thousands of tables. Names with no column
            # left are skipped, and one extra name covers a resumed name already consumed.
            visible = catalog_access.columns_q(access)
            lateral = visible is not None and connection.vendor == "postgresql"
            wanted = _column_names(
                needle, start[1] if resuming else None, room + 1, access, ordered=lateral
            )
            if lateral:
                resume = (start[1], start[2]) if resuming else None
                page = _visible_column_page(wanted, resume, room, access)
            else:
                qs = _filtered(Column.objects.filter(name_key__in=wanted), visible)
        if page is None:
            if resuming:
                qs = qs.filter(Q(name_key__gt=start[1]) | Q(name_key=start[1], pk__gt=start[2]))
            # Still one query: the page's keys in a subquery that reads only the (name_key,
            # id) index (or the trigram index when few names match), then those rows and
            # their parents. Joining first would fetch a wide row for every name the scan
            # skips.
            page = qs.order_by("name_key", "pk").values("pk")[:room]
        rows = list(
            qs.model.objects.filter(pk__in=page)
            .select_related(parents)
            .only(*fields)
            .order_by("name_key", "pk")
        )
        hits.extend(_hit(kind, kind_index, row) for row in rows)
        if len(hits) >= limit:
            break
    return hits
