"""An in-memory ``CatalogReader`` built from real core objects, shared by the planner tests.

It is a test double of a storage protocol (the Django reader lives in jobs/), not of the
planner: the planner under test is always the real one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

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
    read_only: set[tuple[str, str, str]] = field(default_factory=set)  # the user may not write
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
        return self.temporary_relations.get(ident.key) or self.relations.get(ident.key)

    def get_function(self, ident: ObjectIdentifier) -> FunctionDef | None:
        self.lookups.append(f"function {ident}")
        return self.temporary_functions.get(ident.key) or self.functions.get(ident.key)

    def get_system_function(self, name: str) -> FunctionDef | None:
        self.lookups.append(f"system function `{name}`")
        return self.system_functions.get(name_key(name))

    def may_write(self, relation: Relation) -> bool:
        return not relation.temporary and relation.identifier.key not in self.read_only

    def write_conflict(self, relation: Relation) -> str | None:
        return self.conflicts.get(relation.identifier.key)

    def table_version(self, relation: Relation, travel: TimeTravel) -> TableVersionRef:
        known = self.versions.get(relation.identifier.key, {})
        if travel.timestamp is not None and known:  # any time: the latest version
            return TableVersionRef(max(known), known[max(known)])
        if travel.version is None or travel.version not in known:
            raise CoreError(f"Table {relation.identifier.quoted()} has no such version.")
        return TableVersionRef(travel.version, known[travel.version])

    # -- building -------------------------------------------------------------------------

    def add_database(self, catalog: str, database: str) -> None:
        self.databases.setdefault(name_key(catalog), set()).add(name_key(database))

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

    def _store_function(self, function: FunctionDef) -> None:
        ident = function.identifier
        if function.temporary:
            self.temporary_functions[ident.key] = function
        else:
            self.add_database(ident.catalog, ident.database)
            self.functions[ident.key] = function


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
