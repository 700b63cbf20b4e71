"""Names in a session: what completes a partly typed SQL path (``GET /api/v1/complete``) and
what a whole path names (``GET /api/v1/sessions/{id}/resolve``). Both read the catalog and
the session's temporary objects, which come first.

Completion: ``GET /api/v1/complete?session=&path=&limit=``.

``path`` is what the user typed of a SQL path so far: the parts before the last dot are
complete (``core.identifiers`` syntax, backtick quoting), the last one is a prefix (it may be
empty, and it may start with a backtick). What completes it, in this order:

- no complete part: the session's temporary objects whose 1-part name resolves (temporary
  system functions and those in the current catalog and database), then the tables and views,
  functions of the current database, the databases of the current catalog, and the catalogs;
- one part ``X``: temporary objects in ``<current catalog>.X``, then the tables, views and
  functions of database ``X`` of the current catalog, then the databases of catalog ``X``;
- two parts ``X.Y``: temporary objects in ``X.Y``, then the tables, views and functions of
  ``X.Y``.

Each kind by name. Only what the user may see completes (ADR 0011): each group's query is
filtered in SQL by ``catalog.access`` (``relations_q``, ``functions_q``, ``databases_q``,
``catalogs_q``), so a hidden catalog's or database's path completes to nothing, exactly as a
missing one's. The session's temporary objects are its own and always complete. Reads both
apps (catalog objects and the session's ``jobs.TemporaryObject`` rows).

Cost: what the user holds (one query, ``catalog.access.access_for``); for anyone but an
admin, the database whose objects complete and the catalog whose databases do (one query
each, the current catalog coming with the current database), so that what the user may see
is decided on them — nothing to filter in a database they see whole, else only its own
granted ids; then at most one query per kind (session, temporary objects, relations,
functions, databases, catalogs), each with the remaining ``limit`` as its SQL LIMIT,
whatever the size of the catalog or the number of grants. On PostgreSQL the prefix test
and the order use ``name_key COLLATE "C"``, which the ``*_prefix_idx`` indexes of migration
0006 serve (a LIKE prefix on a column of a non-C collation could not use a plain b-tree
index); SQLite, the embedded default, scans.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import F, Q, QuerySet, Subquery
from django.db.models.functions import Collate

from catalog import access as catalog_access
from catalog import selectors
from catalog.models import Catalog, Database, Function, Table
from core import privileges
from core.errors import CoreError, NotFound, PermissionDenied
from core.identifiers import parse_path, quote_part
from core.planner.functions import is_builtin
from core.privileges import Access, Kind, Privilege
from jobs.models import Session, TemporaryObject
from sessions.catalog_reader import DjangoCatalogReader
from sessions.temporary_objects import session_path

DEFAULT_LIMIT = 50
MAX_LIMIT = 100

KINDS = (
    "catalog",
    "database",
    "table",
    "view",
    "function",
    "temporary_table",
    "temporary_view",
    "temporary_function",
)

# Spark SQL's reserved words (ANSI mode) and the ones it reserves always: a name that is one
# of these is inserted in backticks, like a name with characters a bare identifier cannot have.
_RESERVED = frozenset(
    """
    all and anti any as authorization both case cast check collate column constraint create
    cross current_date current_time current_timestamp current_user distinct else end escape
    except false fetch filter for foreign from full grant group having in inner intersect
    into is join lateral leading left minus natural not null offset on only or order outer
    overlaps primary references right select semi session_user setminus some table then time
    to trailing true union unique unknown user using when where with
    """.split()  # noqa: SIM905  (a word list reads better than 78 quoted strings)
)


@dataclass(frozen=True)
class Completion:
    label: str  # the name as stored
    insert: str  # the text that replaces the typed prefix (backtick-quoted when needed)
    kind: str  # one of KINDS
    detail: str  # where it lives: "" for catalogs, "c" for databases, "c.d" for objects
    identifier: tuple[str, ...]  # its parts, as far as they go
    staged: bool = False  # a table a running CTAS job is creating


def needs_quotes(name: str) -> bool:
    """Whether ``name`` must be backtick-quoted in Spark SQL."""
    return (
        name == ""
        or not all(ch == "_" or (ch.isascii() and ch.isalnum()) for ch in name)
        or name[0].isdigit()
        or name.lower() in _RESERVED
    )


def sql_name(name: str) -> str:
    return quote_part(name) if needs_quotes(name) else name


def _detail(*parts: str) -> str:
    return ".".join(sql_name(part) for part in parts)


def split_path(text: str) -> tuple[tuple[str, ...], str]:
    """``("a", "b"), "pre"`` for ``a.b.pre``: the complete parts and the prefix (unquoted)."""
    quoted = False
    last_dot = -1
    for index, ch in enumerate(text):
        if ch == "`":
            quoted = not quoted  # a doubled backtick inside quotes toggles twice
        elif ch == "." and not quoted:
            last_dot = index
    parts: tuple[str, ...] = ()
    if last_dot >= 0:
        try:
            parts = parse_path(text[:last_dot])
        except CoreError as exc:
            exc.details = {**exc.details, "field": "path"}
            raise
        if len(parts) > 2:
            raise CoreError(
                f"'{text}' has more than three parts; a SQL path has at most three.",
                details={"field": "path", "text": text, "position": last_dot},
            )
    return parts, _unquote_prefix(text[last_dot + 1 :].lstrip())


def _unquote_prefix(partial: str) -> str:
    if not partial.startswith("`"):
        return partial.rstrip()
    chars: list[str] = []
    index = 1
    while index < len(partial):
        ch = partial[index]
        if ch == "`":
            if partial[index + 1 : index + 2] == "`":
                chars.append("`")
                index += 2
                continue
            break  # the closing backtick: the part is complete, still a prefix
        chars.append(ch)
        index += 1
    return "".join(chars)


class _Collate(Collate):
    # Parenthesised: Django appends "::text" to the left side of LIKE, which would otherwise
    # bind to the collation's name and leave the comparison in the column's collation.
    template = "(%(expressions)s %(function)s %(collation)s)"


def _by_prefix(qs: QuerySet[Any], prefix: str) -> QuerySet[Any]:
    """Rows whose ``name_key`` starts with ``prefix`` (lower-cased), ordered by it."""
    key = _Collate("name_key", "C") if connection.vendor == "postgresql" else F("name_key")
    qs = qs.alias(_key=key)
    if prefix:
        qs = qs.filter(_key__startswith=prefix)
    return qs.order_by("_key")


class _Collector:
    """Completions up to ``limit``; each query asks only for what is still missing."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.items: list[Completion] = []

    @property
    def room(self) -> int:
        return self.limit - len(self.items)

    def add(self, qs: QuerySet[Any], make: Any) -> None:
        if self.room > 0:
            self.items.extend(make(row) for row in qs[: self.room])


def _temporary_kind(row: dict[str, Any]) -> str:
    return f"temporary_{row['kind']}"


def _temporary(row: dict[str, Any]) -> Completion:
    if row["system"]:
        return Completion(
            row["name"], sql_name(row["name"]), "temporary_function", "", (row["name"],)
        )
    return Completion(
        label=row["name"],
        insert=sql_name(row["name"]),
        kind=_temporary_kind(row),
        detail=_detail(row["catalog"], row["database"]),
        identifier=(row["catalog"], row["database"], row["name"]),
    )


def _object(kind: str | None) -> Any:
    def make(row: dict[str, Any]) -> Completion:
        catalog, database = row["database__catalog__name"], row["database__name"]
        return Completion(
            label=row["name"],
            insert=sql_name(row["name"]),
            kind=kind or row["kind"],
            detail=_detail(catalog, database),
            identifier=(catalog, database, row["name"]),
            staged=row.get("status") == Table.STATUS_STAGED,
        )

    return make


def _database(row: dict[str, Any]) -> Completion:
    catalog = row["catalog__name"]
    return Completion(
        row["name"], sql_name(row["name"]), "database", _detail(catalog), (catalog, row["name"])
    )


def _catalog(row: dict[str, Any]) -> Completion:
    return Completion(row["name"], sql_name(row["name"]), "catalog", "", (row["name"],))


def _visible(qs: QuerySet[Any], q: Q | None) -> QuerySet[Any]:
    return qs if q is None else qs.filter(q)


def complete(
    *,
    path: str,
    current_catalog: str | None,
    current_database: str | None,
    access: Access,
    session_id: Any = None,
    limit: int = DEFAULT_LIMIT,
) -> list[Completion]:
    """What may come next in ``path`` (see the module docstring), at most ``limit`` items,
    of what ``access`` may see."""
    parts, prefix = split_path(path)
    prefix = prefix.lower()
    found = _Collector(limit)
    if any("\x00" in text for text in (*parts, prefix)):
        return []  # no name holds NUL (PostgreSQL text cannot)
    keys = [part.lower() for part in parts]
    cur_catalog = current_catalog.lower() if current_catalog else None
    cur_database = current_database.lower() if current_database else None

    # Which database's objects complete the prefix, and which catalog's databases.
    objects_in: tuple[str, str] | None = None
    databases_of: str | None = None
    if len(keys) == 0:
        if cur_catalog is not None and cur_database is not None:
            objects_in = (cur_catalog, cur_database)
        databases_of = cur_catalog
    elif len(keys) == 1:
        if cur_catalog is not None:
            objects_in = (cur_catalog, keys[0])
        databases_of = keys[0]
    else:
        objects_in = (keys[0], keys[1])

    if session_id is not None:
        where = Q(system=True) if len(keys) == 0 else Q(pk__in=[])
        if objects_in is not None:
            where |= Q(system=False, catalog_key=objects_in[0], database_key=objects_in[1])
        temporaries = TemporaryObject.objects.filter(where, session_id=session_id)
        found.add(
            _by_prefix(temporaries, prefix).values("kind", "system", "catalog", "database", "name"),
            _temporary,
        )
    database: Database | None = None
    if objects_in is not None and found.room > 0:
        catalog_key, database_key = objects_in
        in_database = Database.objects.filter(catalog__name_key=catalog_key, name_key=database_key)
        database_id: Any
        relations: Q | None = None
        functions: Q | None = None
        if access.admin:
            # The parent's id as a scalar subquery (an InitPlan), not a join: the index then
            # serves "this database, this prefix, in name order" and LIMIT stops the scan.
            database_id = Subquery(in_database.values("id")[:1])
        else:
            # The database first (one query), so that what the user may see in it is
            # decided on it: nothing to filter when they see it whole (today's SQL), else
            # only its own granted ids. A missing database has nothing to complete.
            database = in_database.only("id", "catalog_id").first()
            database_id = database.pk if database is not None else None
            if database is not None:
                relations = _relations_in(access, database)
                functions = selectors.in_database_q(access, Kind.FUNCTION, database)
        groups: tuple[tuple[Any, str | None, Q | None], ...] = (
            (Table, None, relations),
            (Function, "function", functions),
        )
        for model, kind, visible in groups if database_id is not None else ():
            rows = _visible(model.objects.filter(database_id=database_id), visible)
            fields = ["name", "database__name", "database__catalog__name"]
            if model is Table:
                fields += ["kind", "status"]
            found.add(_by_prefix(rows, prefix).values(*fields), _object(kind))
    if databases_of is not None and found.room > 0:
        of_catalog = Catalog.objects.filter(name_key=databases_of)
        catalog_id: Any = None
        databases_visible: Q | None = None
        if access.admin:
            catalog_id = Subquery(of_catalog.values("id")[:1])
        else:
            if database is not None and objects_in is not None and objects_in[0] == databases_of:
                catalog_id = database.catalog_id  # the current database's catalog: known
            else:
                catalog_id = of_catalog.values_list("id", flat=True).first()
            if not privileges.scope(access, Kind.DATABASE).covers(catalog_id, None):
                databases_visible = catalog_access.databases_q(access)
        if catalog_id is not None:
            databases = _visible(Database.objects.filter(catalog_id=catalog_id), databases_visible)
            found.add(_by_prefix(databases, prefix).values("name", "catalog__name"), _database)
    if len(keys) == 0:
        catalogs = _visible(Catalog.objects.all(), catalog_access.catalogs_q(access))
        found.add(_by_prefix(catalogs, prefix).values("name"), _catalog)
    return found.items


def _relations_in(access: Access, database: Database) -> Q | None:
    """The tables and views (one query, one namespace) of ``database`` the user may see."""
    tables = selectors.in_database_q(access, Kind.TABLE, database)
    views = selectors.in_database_q(access, Kind.VIEW, database)
    if tables is None and views is None:
        return None
    return (Q(kind=Table.KIND_TABLE) & (tables or Q())) | (Q(kind=Table.KIND_VIEW) & (views or Q()))


def limit_of(raw: str | None) -> int:
    """The ``limit`` query parameter: 1..MAX_LIMIT, DEFAULT_LIMIT when absent."""
    if raw is None or raw == "":
        return DEFAULT_LIMIT
    try:
        limit = int(raw)
    except ValueError:
        limit = 0
    if not 1 <= limit <= MAX_LIMIT:
        raise CoreError(
            f"limit must be a whole number between 1 and {MAX_LIMIT}, got '{raw}'.",
            details={"field": "limit"},
        )
    return limit


# --- resolve ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Resolved:
    """What a SQL path names in a session: a temporary object, a catalog table, view or
    function, or (``builtin``) a Spark built-in function."""

    found: TemporaryObject | Table | Function | None = None
    builtin: str | None = None


def _seen(access: Access, row: Table | Function, missing: Callable[[], NotFound]) -> None:
    """Nothing when the user may see ``row``; else ``missing()`` (what a name nothing has
    answers) unless they may see its database, when it is refused (``PERMISSION_DENIED``
    naming it, as a statement would be)."""
    s = (
        catalog_access.function_securable(row)
        if isinstance(row, Function)
        else catalog_access.relation_securable(row)
    )
    if privileges.visible(access, s):
        return
    if catalog_access.is_visible(access, catalog_access.database_securable(row.database)):
        message, details = privileges.denied_message(
            s, Privilege.USE, privileges.effective(access, s)
        )
        raise PermissionDenied(message, details=details)
    raise missing()


def resolve(*, session: Session, path: Any, kind: Any = "table") -> Resolved:
    """What a SQL path names in the session, as a statement would resolve it; NOT_FOUND when
    nothing has that name, or when it names a catalog object the session's user may not see
    in a database they may not see either (the same answer); PERMISSION_DENIED for one in a
    database they may see.

    Tables and views: the temporary one, then the permanent one. Functions named by one
    part: temporary system function → Spark built-in → temporary catalog function in the
    current catalog and database → catalog function; qualified: temporary catalog function
    → catalog function.
    """
    if kind not in ("table", "function"):
        raise CoreError("'kind' must be table or function.", details={"field": "kind"})
    reader = DjangoCatalogReader(session)
    access = reader.access()  # the session's user's
    if kind == "table":
        ident = session_path(session, path, "path")

        def no_relation() -> NotFound:
            return NotFound(
                f"Table or view {ident.quoted()} not found.",
                details={"identifier": list(ident.parts)},
            )

        relation = reader.find_relation(ident)
        if relation is None:
            raise no_relation()
        if not isinstance(relation, TemporaryObject):
            _seen(access, relation, no_relation)
        return Resolved(found=relation)
    parts = parse_path(path) if isinstance(path, str) and path.strip() else ()
    if len(parts) == 1:
        system = reader.temporary_system_function(parts[0])
        if system is not None:
            return Resolved(found=system)
        if is_builtin(parts[0]):
            return Resolved(builtin=parts[0])
    ident = session_path(session, path, "path")

    def no_function() -> NotFound:
        return NotFound(
            f"Function {ident.quoted()} not found.", details={"identifier": list(ident.parts)}
        )

    function = reader.find_function(ident)
    if function is None:
        raise no_function()
    if not isinstance(function, TemporaryObject):
        _seen(access, function, no_function)
    return Resolved(found=function)
