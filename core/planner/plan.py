"""The plan: what a statement does, as JSON stored on the job (``Job.plan``).

``Plan.to_dict()`` gives exactly the JSON of docs/statements.md; ``Plan.from_dict()``
reads it back (``Plan.from_dict(p.to_dict()) == p``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, TypeAlias

PlanKind: TypeAlias = Literal[
    "query",
    "ddl",
    "show",
    "describe",
    "explain",
    "use",
    "set",
    "ctas",
    "insert",
    "statement_set",
    "pipeline",
]


class Action(StrEnum):
    """What a plan does (``plan["action"]``); its ``kind`` follows from it."""

    QUERY = "query"
    EXPLAIN = "explain"
    USE = "use"
    SET = "set"
    RESET = "reset"
    SHOW_CATALOGS = "show_catalogs"
    SHOW_DATABASES = "show_databases"
    SHOW_TABLES = "show_tables"
    SHOW_VIEWS = "show_views"
    SHOW_FUNCTIONS = "show_functions"
    SHOW_CREATE_TABLE = "show_create_table"
    DESCRIBE = "describe"
    DESCRIBE_HISTORY = "describe_history"
    CREATE_CATALOG = "create_catalog"
    CREATE_DATABASE = "create_database"
    CREATE_TABLE = "create_table"
    CREATE_VIEW = "create_view"
    CREATE_FUNCTION = "create_function"
    DROP_CATALOG = "drop_catalog"
    DROP_DATABASE = "drop_database"
    DROP_TABLE = "drop_table"
    DROP_VIEW = "drop_view"
    DROP_FUNCTION = "drop_function"
    CTAS = "ctas"
    INSERT = "insert"
    STATEMENT_SET = "statement_set"
    # Row-level changes of a managed Delta table (core.planner.row_changes).
    MERGE = "merge"
    UPDATE = "update"
    DELETE = "delete"
    # Schema changes of a managed Delta table (core.planner.alter_tables).
    ALTER_TABLE = "alter_table"
    # Maintenance of a managed Delta table (core.planner.table_maintenance).
    OPTIMIZE = "optimize"
    VACUUM = "vacuum"
    ANALYZE_TABLE = "analyze_table"
    PIPELINE = "pipeline"
    # Grants (docs/statements.md "Grants"): run in the web process.
    GRANT = "grant"
    REVOKE = "revoke"
    ALTER_OWNER = "alter_owner"
    SHOW_GRANTS = "show_grants"


# action -> kind
ACTION_KINDS: Mapping[Action, PlanKind] = {
    Action.QUERY: "query",
    Action.EXPLAIN: "explain",
    Action.USE: "use",
    Action.SET: "set",
    Action.RESET: "set",
    Action.SHOW_CATALOGS: "show",
    Action.SHOW_DATABASES: "show",
    Action.SHOW_TABLES: "show",
    Action.SHOW_VIEWS: "show",
    Action.SHOW_FUNCTIONS: "show",
    Action.SHOW_CREATE_TABLE: "show",
    Action.DESCRIBE: "describe",
    Action.DESCRIBE_HISTORY: "describe",
    Action.CREATE_CATALOG: "ddl",
    Action.CREATE_DATABASE: "ddl",
    Action.CREATE_TABLE: "ddl",
    Action.CREATE_VIEW: "ddl",
    Action.CREATE_FUNCTION: "ddl",
    Action.DROP_CATALOG: "ddl",
    Action.DROP_DATABASE: "ddl",
    Action.DROP_TABLE: "ddl",
    Action.DROP_VIEW: "ddl",
    Action.DROP_FUNCTION: "ddl",
    Action.CTAS: "ctas",
    Action.INSERT: "insert",
    Action.STATEMENT_SET: "statement_set",
    Action.MERGE: "insert",
    Action.UPDATE: "insert",
    Action.DELETE: "insert",
    Action.ALTER_TABLE: "insert",
    Action.OPTIMIZE: "insert",
    Action.VACUUM: "insert",
    Action.ANALYZE_TABLE: "ddl",
    Action.PIPELINE: "pipeline",
    Action.GRANT: "ddl",
    Action.REVOKE: "ddl",
    Action.ALTER_OWNER: "ddl",
    Action.SHOW_GRANTS: "show",
}

# Plans whose data a worker writes into tables (FLIP-218): staged, then committed.
# Row-level changes, schema changes and maintenance: Delta's own commands run and commit them
# in the worker, FINISHED records their version (ADR 0019, "Row-level DML", "ALTER TABLE",
# "Maintenance").
# The ones that change the table itself, not its rows: MANAGE, not MODIFY.
TABLE_CHANGE_ACTIONS: frozenset[Action] = frozenset(
    {Action.ALTER_TABLE, Action.OPTIMIZE, Action.VACUUM}
)
ROW_CHANGE_ACTIONS: frozenset[Action] = (
    frozenset({Action.MERGE, Action.UPDATE, Action.DELETE}) | TABLE_CHANGE_ACTIONS
)
WRITE_ACTIONS: frozenset[Action] = (
    frozenset({Action.CTAS, Action.INSERT, Action.STATEMENT_SET}) | ROW_CHANGE_ACTIONS
)
# Plans a worker runs as a query (rows come back).
QUERY_ACTIONS: frozenset[Action] = frozenset({Action.QUERY, Action.EXPLAIN})


@dataclass(frozen=True)
class ColumnPlan:
    """One column a table relation produces, in declared order."""

    name: str
    kind: Literal["physical", "computed", "metadata"]
    expression: str | None = None  # computed
    metadata_key: str | None = None  # metadata
    not_null: bool = False  # physical, declared NOT NULL (in JSON only when true)

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {"name": self.name, "kind": self.kind}
        if self.kind == "computed":
            result["expression"] = self.expression
        elif self.kind == "metadata":
            result["metadata_key"] = self.metadata_key
        if self.not_null:
            result["not_null"] = True
        return result

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ColumnPlan:
        return cls(
            data["name"],
            data["kind"],
            data.get("expression"),
            data.get("metadata_key"),
            bool(data.get("not_null", False)),
        )


@dataclass(frozen=True)
class RelationPlan:
    """A table or view the worker registers as a temporary view named ``alias``."""

    alias: str
    identifier: tuple[str, str, str]
    kind: Literal["table", "view"]
    format: str = ""
    path: str = ""
    options: Mapping[str, str] = field(default_factory=dict)
    physical_schema: str = ""
    columns: tuple[ColumnPlan, ...] = ()
    sql: str = ""  # views: the view's query rewritten to aliases of earlier relations
    temporary: bool = False  # a session's temporary table/view (in JSON only when true)
    # Streaming (docs/streaming.md), in JSON only when set: read with ``readStream``; the
    # table's declared watermark as ``withWatermark`` takes it ({"column", "delay"}).
    streaming: bool = False
    watermark: Mapping[str, str] | None = None
    # A Delta table read at a version, in JSON only when set: Delta's reader option from
    # VERSION/TIMESTAMP AS OF ({"versionAsOf": "3"} or {"timestampAsOf": "…"}); a managed
    # Delta table always has one (its recorded version), or {"unwritten": "true"} (no rows).
    time_travel: Mapping[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {
            "alias": self.alias,
            "identifier": list(self.identifier),
            "kind": self.kind,
        }
        if self.kind == "view":
            result["sql"] = self.sql
        else:
            result.update(
                format=self.format,
                path=self.path,
                options=dict(self.options),
                physical_schema=self.physical_schema,
                columns=[column.to_dict() for column in self.columns],
            )
        if self.temporary:
            result["temporary"] = True
        if self.streaming:
            result["streaming"] = True
        if self.watermark:
            result["watermark"] = dict(self.watermark)
        if self.time_travel:
            result["time_travel"] = dict(self.time_travel)
        return result

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RelationPlan:
        ident = data["identifier"]
        return cls(
            alias=data["alias"],
            identifier=(ident[0], ident[1], ident[2]),
            kind=data["kind"],
            format=data.get("format", ""),
            path=data.get("path", ""),
            options=dict(data.get("options", {})),
            physical_schema=data.get("physical_schema", ""),
            columns=tuple(ColumnPlan.from_dict(c) for c in data.get("columns", ())),
            sql=data.get("sql", ""),
            temporary=bool(data.get("temporary", False)),
            streaming=bool(data.get("streaming", False)),
            watermark=dict(data["watermark"]) if data.get("watermark") else None,
            time_travel=dict(data["time_travel"]) if data.get("time_travel") else None,
        )


@dataclass(frozen=True)
class FunctionPlan:
    """A function the worker registers under ``alias``: a catalog function, temporary or
    not, or a temporary system function (``system``; identifier ``["", "", name]``)."""

    alias: str
    identifier: tuple[str, str, str]
    language: Literal["python", "sql"]
    implementation: str = ""  # python: dotted name
    parameters: tuple[tuple[str, str], ...] = ()  # sql
    return_type: str = ""
    body: str = ""  # sql: the body rewritten to aliases of earlier relations/functions
    temporary: bool = False  # in JSON only when true
    system: bool = False  # in JSON only when true

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {
            "alias": self.alias,
            "identifier": list(self.identifier),
            "language": self.language,
        }
        if self.language == "python":
            result.update(implementation=self.implementation, return_type=self.return_type)
        else:
            result.update(
                parameters=[[name, data_type] for name, data_type in self.parameters],
                return_type=self.return_type,
                body=self.body,
            )
        if self.temporary:
            result["temporary"] = True
        if self.system:
            result["system"] = True
        return result

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FunctionPlan:
        ident = data["identifier"]
        return cls(
            alias=data["alias"],
            identifier=(ident[0], ident[1], ident[2]),
            language=data["language"],
            implementation=data.get("implementation", ""),
            parameters=tuple((p[0], p[1]) for p in data.get("parameters", ())),
            return_type=data.get("return_type", ""),
            body=data.get("body", ""),
            temporary=bool(data.get("temporary", False)),
            system=bool(data.get("system", False)),
        )


@dataclass(frozen=True)
class AccessPlan:
    """One privilege the planner checked for a statement (ADR 0011 §3.3).

    ``kind`` is the securable's kind (catalog, database, table, view, function, storage),
    ``identifier`` its path as stored (a storage root: ``(path,)``), ``privilege`` what was
    needed (``SELECT``, ``MODIFY``, ``CREATE``, ``EXECUTE``, ``MANAGE``, ``READ FILES``, or
    ``USE`` for a statement that only sees it), ``via`` the identifier of the view or SQL
    function through which it was read (definer rights; None at top level), and
    ``securable_key`` ``core.privileges.Securable.key``. Not part of the plan JSON: the web
    stores it in ``Job.access`` beside the plan, and it feeds the audit log and the re-checks
    of commits and stream batches.
    """

    kind: str
    identifier: tuple[str, ...]
    privilege: str
    securable_key: str
    via: tuple[str, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "identifier": list(self.identifier),
            "privilege": self.privilege,
            "securable_key": self.securable_key,
            "via": None if self.via is None else list(self.via),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AccessPlan:
        via = data.get("via")
        return cls(
            kind=data["kind"],
            identifier=tuple(data["identifier"]),
            privilege=data["privilege"],
            securable_key=data["securable_key"],
            via=None if via is None else tuple(via),
        )


@dataclass(frozen=True)
class Plan:
    """What a statement does; ``needs_spark`` decides web process vs worker.

    ``access`` lists the privileges the planner checked (``AccessPlan``); it is neither in
    ``to_dict()`` nor compared, so the plan JSON and plan equality are as before."""

    kind: PlanKind
    action: Action
    needs_spark: bool
    sql: str = ""
    relations: tuple[RelationPlan, ...] = ()
    functions: tuple[FunctionPlan, ...] = ()
    target: tuple[str, ...] | None = None
    args: Mapping[str, Any] = field(default_factory=dict)
    access: tuple[AccessPlan, ...] = field(default=(), compare=False)

    @classmethod
    def of(
        cls,
        action: Action | str,
        *,
        needs_spark: bool = False,
        sql: str = "",
        relations: tuple[RelationPlan, ...] = (),
        functions: tuple[FunctionPlan, ...] = (),
        target: tuple[str, ...] | None = None,
        args: Mapping[str, Any] | None = None,
        access: tuple[AccessPlan, ...] = (),
    ) -> Plan:
        """Build a plan, deriving ``kind`` from ``action``."""
        return cls(
            ACTION_KINDS[Action(action)],
            Action(action),
            needs_spark,
            sql,
            relations,
            functions,
            target,
            dict(args or {}),
            access,
        )

    @property
    def writes(self) -> bool:
        """Whether a worker writes table data for it (and the write hooks stage it)."""
        return self.action in WRITE_ACTIONS and not self.args.get("skip")

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "action": self.action.value,
            "needs_spark": self.needs_spark,
            "sql": self.sql,
            "relations": [relation.to_dict() for relation in self.relations],
            "functions": [function.to_dict() for function in self.functions],
            "target": None if self.target is None else list(self.target),
            "args": dict(self.args),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Plan:
        target = data.get("target")
        action = Action(data["action"])
        return cls(
            kind=data.get("kind") or ACTION_KINDS[action],
            action=action,
            needs_spark=bool(data.get("needs_spark", False)),
            sql=data.get("sql", ""),
            relations=tuple(RelationPlan.from_dict(r) for r in data.get("relations", ())),
            functions=tuple(FunctionPlan.from_dict(f) for f in data.get("functions", ())),
            target=None if target is None else tuple(target),
            args=dict(data.get("args", {})),
        )
