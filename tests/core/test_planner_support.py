"""An in-memory ``CatalogReader`` built from real core objects, shared by the planner tests.

It is a test double of a storage protocol (the Django reader lives in jobs/), not of the
planner: the planner under test is always the real one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Literal, TypeVar

from core.datatypes import parse_data_type
from core.errors import CoreError
from core.identifiers import ObjectIdentifier, name_key
from core.planner import (
    FunctionDef,
    Plan,
    PlanContext,
    Relation,
    TableVersionRef,
    TimeTravel,
    plan_statement,
)
from core.privileges import Access, GrantRow, Kind, Privilege, Securable
from core.schema import (
    ComputedColumn,
    MetadataColumn,
    PhysicalColumn,
    Schema,
    SchemaResolver,
    UnresolvedColumn,
    WatermarkSpec,
)

STORAGE_ROOT = "/srv/tessera/external"

# The statement's user, by default an admin who owns what the catalog holds (ADMIN); another
# user (OTHER) owns the tables ``read_only`` names.
USER_ID = 1
OTHER_ID = 2
ADMIN = Access(USER_ID, admin=True)
Obj = TypeVar("Obj", Relation, FunctionDef)


@dataclass
class MemoryCatalog:
    """Catalogs, databases, relations and functions in dicts (keys are case-insensitive),
    and one session's temporary objects, which the reader consults first (FLIP-64)."""

    databases: dict[str, set[str]] = field(default_factory=dict)
    relations: dict[tuple[str, str, str], Relation] = field(default_factory=dict)
    functions: dict[tuple[str, str, str], FunctionDef] = field(default_factory=dict)
    temporary_relations: dict[tuple[str, str, str], Relation] = field(default_factory=dict)
    temporary_functions: dict[tuple[str, str, str], FunctionDef] = field(default_factory=dict)
    system_functions: dict[str, FunctionDef] = field(default_factory=dict)
    lookups: list[str] = field(default_factory=list)
    # Tables the user may read but not write: owned by OTHER, the user holds SELECT on them
    # (and is then no admin, but holds USE and CREATE on every catalog and database and owns
    # every other object).
    read_only: set[tuple[str, str, str]] = field(default_factory=set)
    # Privileges (core.privileges): the statement's user (None: ADMIN, or the read_only
    # world), what other principals (view owners) hold, user names, and owners of catalogs
    # and databases (objects: ``owners``, by key; default the user).
    user: Access | None = None
    principals: dict[int, Access] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=lambda: {USER_ID: "alice", OTHER_ID: "bob"})
    owners: dict[tuple[str, ...], int | None] = field(default_factory=dict)
    # Ids of catalogs, databases, relations and functions, by key, as a database gives them.
    ids: dict[tuple[str, ...], int] = field(default_factory=dict)
    display: dict[tuple[str, ...], str] = field(default_factory=dict)  # names as stored
    questions: list[str] = field(default_factory=list)  # owns_inside and access calls
    # tables whose path overlaps another's: why they cannot be written
    conflicts: dict[tuple[str, str, str], str] = field(default_factory=dict)
    # managed tables' versions: number → directory (the Django reader: catalog.versions)
    versions: dict[tuple[str, str, str], dict[int, str]] = field(default_factory=dict)

    # -- CatalogReader --------------------------------------------------------------------

    def catalog_exists(self, catalog: str) -> bool:
        return name_key(catalog) in self.databases

    def database_exists(self, catalog: str, database: str) -> bool:
        return name_key(database) in self.databases.get(name_key(catalog), set())

    def get_relation(self, ident: ObjectIdentifier) -> Relation | None:
        self.lookups.append(f"relation {ident}")
        temporary = self.temporary_relations.get(ident.key)
        if temporary is not None:
            return temporary
        found = self.relations.get(ident.key)
        return None if found is None else self._with_securable(found)

    def get_function(self, ident: ObjectIdentifier) -> FunctionDef | None:
        self.lookups.append(f"function {ident}")
        temporary = self.temporary_functions.get(ident.key)
        if temporary is not None:
            return temporary
        found = self.functions.get(ident.key)
        return None if found is None else self._with_securable(found)

    def get_system_function(self, name: str) -> FunctionDef | None:
        self.lookups.append(f"system function `{name}`")
        return self.system_functions.get(name_key(name))

    def access(self, principal: int | None = None) -> Access:
        self.questions.append(f"access {principal}")
        invoker = self._invoker()
        if principal is None or principal == invoker.user_id:
            return invoker
        return self.principals.get(principal, Access(principal))

    def catalog_securable(self, catalog: str) -> Securable | None:
        key = (name_key(catalog),)
        if key[0] not in self.databases:
            return None
        return Securable(
            Kind.CATALOG,
            catalog_id=self._id("catalog", *key),
            owner_ids=(self.owners.get(("catalog", *key)), None, None),
            path=(self.display.get(("catalog", *key), catalog),),
        )

    def database_securable(self, catalog: str, database: str) -> Securable | None:
        if not self.database_exists(catalog, database):
            return None
        c, d = name_key(catalog), name_key(database)
        return Securable(
            Kind.DATABASE,
            catalog_id=self._id("catalog", c),
            database_id=self._id("database", c, d),
            owner_ids=(self.owners.get(("catalog", c)), self.owners.get(("database", c, d)), None),
            path=(
                self.display.get(("catalog", c), catalog),
                self.display.get(("database", c, d), database),
            ),
        )

    def owns_inside(self, securable: Securable) -> bool:
        self.questions.append(f"owns_inside {securable.key}")
        user = self._invoker().user_id
        found: list[Securable | None] = [
            self._with_securable(r).securable for r in self.relations.values()
        ]
        found += [self._with_securable(f).securable for f in self.functions.values()]
        for s in found:
            assert s is not None
            inside = (
                s.database_id == securable.database_id
                if securable.kind is Kind.DATABASE
                else s.catalog_id == securable.catalog_id
            )
            if inside and s.owner_ids[2] == user:
                return True
        return False

    def write_conflict(self, relation: Relation) -> str | None:
        return self.conflicts.get(relation.identifier.key)

    def read_conflict(self, relation: Relation) -> str | None:
        return None  # temporary tables' files are judged against the real catalog

    def table_version(self, relation: Relation, travel: TimeTravel) -> TableVersionRef:
        known = self.versions.get(relation.identifier.key, {})
        if travel.timestamp is not None and known:  # any time: the latest version
            return TableVersionRef(max(known), known[max(known)])
        if travel.version is None or travel.version not in known:
            raise CoreError(f"Table {relation.identifier.quoted()} has no such version.")
        return TableVersionRef(travel.version, known[travel.version])

    def version_since(self, relation: Relation, moment: datetime) -> int | None:
        known = self.versions.get(relation.identifier.key, {})
        return min(known) if known else None  # any time: the first version

    # -- privileges -----------------------------------------------------------------------

    def _id(self, *key: str) -> int:
        return self.ids.setdefault(key, len(self.ids) + 1)

    def _invoker(self) -> Access:
        if self.user is not None:
            return self.user
        if not self.read_only:
            return ADMIN
        grants = [
            GrantRow(privilege, level, self._id("catalog", c), database_id)
            for c, databases in self.databases.items()
            for level, database_id in [(Kind.CATALOG, None)]
            + [(Kind.DATABASE, self._id("database", c, d)) for d in databases]
            for privilege in (Privilege.USE, Privilege.CREATE)
        ]
        for key in self.read_only:
            s = self._with_securable(self.relations[key]).securable
            assert s is not None
            grants.append(
                GrantRow(Privilege.SELECT, Kind.TABLE, s.catalog_id, s.database_id, s.object_id)
            )
        return Access(USER_ID, grants=tuple(grants))

    def owner_of(self, key: tuple[str, str, str], namespace: str = "relation") -> int | None:
        if (namespace, *key) in self.owners:
            return self.owners[(namespace, *key)]
        return OTHER_ID if namespace == "relation" and key in self.read_only else USER_ID

    def _with_securable(self, obj: Obj) -> Obj:
        """A stored permanent object as the reader returns it: with its securable and owner."""
        namespace = "function" if isinstance(obj, FunctionDef) else "relation"
        owner = self.owner_of(obj.identifier.key, namespace)
        name = None if owner is None else self.names.get(owner, f"user{owner}")
        return replace(obj, securable=self.securable(obj.identifier, namespace), owner=name)

    def securable(self, ident: ObjectIdentifier, namespace: str = "relation") -> Securable:
        """The securable of the permanent object ``ident`` (as the Django reader fills it)."""
        c, d, n = ident.key
        owner = self.owner_of(ident.key, namespace)
        kind = Kind.FUNCTION if namespace == "function" else Kind.TABLE
        if namespace == "relation" and self.relations[ident.key].kind == "view":
            kind = Kind.VIEW
        stored = (self.relations if namespace == "relation" else self.functions)[ident.key]
        return Securable(
            kind,
            catalog_id=self._id("catalog", c),
            database_id=self._id("database", c, d),
            object_id=self._id(namespace, c, d, n),
            owner_ids=(self.owners.get(("catalog", c)), self.owners.get(("database", c, d)), owner),
            path=stored.identifier.parts,
        )

    # -- building -------------------------------------------------------------------------

    def add_database(self, catalog: str, database: str) -> None:
        self.databases.setdefault(name_key(catalog), set()).add(name_key(database))
        self.display.setdefault(("catalog", name_key(catalog)), catalog)
        self.display.setdefault(("database", name_key(catalog), name_key(database)), database)
        self._id("catalog", name_key(catalog))
        self._id("database", name_key(catalog), name_key(database))

    def add_table(
        self,
        path: str,
        columns: Iterable[str | UnresolvedColumn] = ("id BIGINT",),
        *,
        options: dict[str, str] | None = None,
        status: str = "active",
        temporary: bool = False,
        staged_by_job: str | None = None,
        watermarks: Iterable[WatermarkSpec] = (),
    ) -> Relation:
        ident = ObjectIdentifier.of(path.split("."))
        declared = [
            PhysicalColumn(c.split(" ", 1)[0], parse_data_type(c.split(" ", 1)[1]))
            if isinstance(c, str)
            else c
            for c in columns
        ]
        resolved = SchemaResolver().resolve(Schema(tuple(declared), tuple(watermarks)))
        if options is None and temporary:
            options = {"connector": "parquet", "path": f"{STORAGE_ROOT}/tmp/{ident.name}"}
        options = {"format": "parquet"} if options is None else options
        managed = "path" not in options and "connector" not in options
        relation = Relation(
            ident,
            "table",
            status,
            options,
            f"/srv/tessera/warehouse/{ident.catalog}/{ident.database}/{ident.name}"
            if managed
            else "",
            resolved,
            temporary=temporary,
            staged_by_job=staged_by_job,
        )
        self._store_relation(relation)
        return relation

    def add_view(self, path: str, query: str, *, temporary: bool = False) -> Relation:
        ident = ObjectIdentifier.of(path.split("."))
        relation = Relation(ident, "view", "active", {}, "", None, query=query, temporary=temporary)
        self._store_relation(relation)
        return relation

    def add_python_function(
        self,
        path: str,
        implementation: str,
        return_type: str = "STRING",
        *,
        temporary: bool = False,
    ) -> FunctionDef:
        ident = ObjectIdentifier.of(path.split("."))
        function = FunctionDef(
            ident, "python", implementation, return_type=return_type, temporary=temporary
        )
        self._store_function(function)
        return function

    def add_sql_function(
        self,
        path: str,
        parameters: tuple[tuple[str, str], ...],
        return_type: str,
        body: str,
        *,
        temporary: bool = False,
    ) -> FunctionDef:
        ident = ObjectIdentifier.of(path.split("."))
        function = FunctionDef(ident, "sql", body, parameters, return_type, temporary=temporary)
        self._store_function(function)
        return function

    def add_system_function(
        self,
        name: str,
        implementation: str,
        *,
        language: Literal["python", "sql"] = "python",
        parameters: tuple[tuple[str, str], ...] = (),
        return_type: str = "STRING",
    ) -> FunctionDef:
        """A temporary system function (a session object: no catalog, no database)."""
        function = FunctionDef(
            ObjectIdentifier("", "", name),
            language,
            implementation,
            parameters,
            return_type,
            temporary=True,
            system=True,
        )
        self.system_functions[name_key(name)] = function
        return function

    def _store_relation(self, relation: Relation) -> None:
        """Temporary objects live beside the permanent ones, in paths that need not exist."""
        ident = relation.identifier
        if relation.temporary:
            self.temporary_relations[ident.key] = relation
        else:
            self.add_database(ident.catalog, ident.database)
            self.relations[ident.key] = relation
            self._id("relation", *ident.key)

    def _store_function(self, function: FunctionDef) -> None:
        ident = function.identifier
        if function.temporary:
            self.temporary_functions[ident.key] = function
        else:
            self.add_database(ident.catalog, ident.database)
            self.functions[ident.key] = function
            self._id("function", *ident.key)


def context(catalog: str | None = "c", database: str | None = "d") -> PlanContext:
    """A session context with the doc's SET allowlist and one storage root."""
    return PlanContext(
        current_catalog=catalog,
        current_database=database,
        storage_roots=(STORAGE_ROOT,),
        settable_keys=frozenset(
            {
                "spark.sql.shuffle.partitions",
                "spark.sql.ansi.enabled",
                "spark.sql.session.timeZone",
                "spark.sql.adaptive.enabled",
                "spark.sql.files.maxPartitionBytes",
                "spark.sql.autoBroadcastJoinThreshold",
                "result.max_rows",
                "job.timeout_seconds",
                "table.ctas.atomic",
            }
        ),
    )


def sample_catalog() -> MemoryCatalog:
    """c.d with orders (rich schema), customers, a view, and functions; c.other; x.y."""
    catalog = MemoryCatalog()
    catalog.add_table(
        "c.d.orders",
        [
            "id BIGINT NOT NULL",
            "price DECIMAL(10, 2)",
            "qty INT",
            ComputedColumn("total", "price * qty"),
            MetadataColumn("file", parse_data_type("STRING"), "file_path", True),
            "customer_id BIGINT",
        ],
    )
    catalog.add_table("c.d.customers", ["id BIGINT", "name STRING"])
    catalog.add_table(
        "c.d.events",
        ["ts TIMESTAMP", "payload STRING"],
        options={"connector": "csv", "path": f"{STORAGE_ROOT}/events", "header": "true"},
    )
    catalog.add_view("c.d.big_orders", "SELECT * FROM orders WHERE total > 100")
    catalog.add_python_function("c.d.slugify", "tessera_udfs.text.slugify")
    catalog.add_sql_function("c.d.plus1", (("x", "INT"),), "INT", "x + 1")
    catalog.add_python_function("c.d.upper", "tessera_udfs.text.shout")
    catalog.add_database("c", "other")
    catalog.add_table("c.other.orders", ["id BIGINT"])
    catalog.add_database("x", "y")
    return catalog


def plan(sql: str, catalog: MemoryCatalog | None = None, **kwargs: str | None) -> Plan:
    """Plan ``sql`` against ``catalog`` (default: ``sample_catalog()``) in c.d."""
    return plan_statement(sql, catalog or sample_catalog(), context(**kwargs))


def test_memory_catalog_is_case_insensitive() -> None:
    catalog = sample_catalog()
    assert catalog.get_relation(ObjectIdentifier("C", "D", "ORDERS")) is not None
    assert catalog.database_exists("C", "Other")
    assert not catalog.catalog_exists("nope")
