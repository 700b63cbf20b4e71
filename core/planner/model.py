"""What the planner reads: catalog objects through a ``CatalogReader``, and the session context."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, Protocol

from core.identifiers import ObjectIdentifier
from core.limits import StatementLimits
from core.privileges import Access, Securable
from core.schema import ResolvedSchema
from core.session_properties import PROPERTY_KEYS, SessionProperties

DEFAULT_SETTABLE_KEYS: frozenset[str] = PROPERTY_KEYS


@dataclass(frozen=True)
class Relation:
    """A table or view as the planner sees it."""

    identifier: ObjectIdentifier
    kind: Literal["table", "view"]
    status: str  # "active" | "staged"
    options: Mapping[str, str]  # tables: {"format"} or {"connector", "path", …}
    location: str  # managed tables: the warehouse directory, else ""
    resolved_schema: ResolvedSchema | None
    query: str = ""  # views: the stored query
    temporary: bool = False
    staged_by_job: str | None = None  # a staged table: the id of the CTAS job creating it
    # What privileges are decided on (core.privileges); None only for temporary objects.
    securable: Securable | None = None
    owner: str | None = None  # the owner's user name (views run with their owner's rights)
    # A managed Delta table: the Delta version Tessera's database records as current (None:
    # never written). Readers read that version, never the log's latest (ADR 0019).
    delta_version: int | None = None


@dataclass(frozen=True)
class TimeTravel:
    """``VERSION AS OF n`` (``version``) or ``TIMESTAMP AS OF '…'`` (``timestamp``, aware)
    after a table name; ``text`` is the clause as written, for messages."""

    kind: Literal["version", "timestamp"]
    text: str
    version: int | None = None
    timestamp: datetime | None = None


@dataclass(frozen=True)
class ChangeRange:
    """``table_changes('name', start [, end])`` in a query: the table ``name`` as written
    (its parts) and the range of its change data feed, each bound a version number or an
    aware timestamp (``end`` None: up to the version Tessera records as current); ``text``
    is the call as written, for messages."""

    parts: tuple[str, ...]
    text: str
    start: int | datetime
    end: int | datetime | None = None
    bounds: tuple[str, ...] = ()  # the start and end literals as written


@dataclass(frozen=True)
class TableVersionRef:
    """One readable version of a managed table: its number and its data directory."""

    version: int
    location: str


@dataclass(frozen=True)
class UploadRef:
    """Data the session's user uploaded (``'connector' = 'upload'``): its id, the
    directory of its parquet file and its columns as (name, Spark SQL type);
    ``first_nulls``: column name → the 1-based row of its first NULL (columns without one
    are left out), so that a declared NOT NULL is checked against the data."""

    id: str
    path: str
    columns: tuple[tuple[str, str], ...]
    first_nulls: Mapping[str, int] = field(default_factory=dict)


# An upload id (as written in the statement) → the session's upload, or None.
UploadLookup = Callable[[str], UploadRef | None]


@dataclass(frozen=True)
class FunctionDef:
    """A catalog function: a Python UDF by dotted name, or a SQL function with a body.

    A temporary system function (``system=True``, also ``temporary=True``) has no catalog
    or database: its identifier is ``ObjectIdentifier("", "", name)``.
    """

    identifier: ObjectIdentifier
    language: Literal["python", "sql"]
    implementation: str  # python: dotted name; sql: body expression
    parameters: tuple[tuple[str, str], ...] = ()  # (name, data type sql)
    return_type: str = ""
    temporary: bool = False
    system: bool = False
    securable: Securable | None = None  # None only for temporary functions
    owner: str | None = None  # the owner's user name (SQL bodies run with its rights)


class CatalogReader(Protocol):
    """Read access to the catalog; implemented by ``sessions/catalog_reader.py`` (Django).

    Temporary objects come first (FLIP-64): ``get_relation`` and ``get_function`` return the
    session's temporary object with that identifier if there is one (``temporary=True``),
    else the permanent one; ``get_system_function`` returns the session's temporary system
    function of that (one-part, case-insensitive) name. The planner keeps nothing itself.

    Privileges (ADR 0011): the reader carries the statement's user. The planner asks
    ``access()`` what they hold (and ``access(owner_id)`` what a view's owner holds), decides
    with ``core.privileges`` on the securables of ``catalog_securable``,
    ``database_securable`` and of the relations and functions it returns (filled for every
    permanent object), and refuses before any plan exists (``core.planner.authorize``).
    Objects are returned whether or not the user may see them: hiding is the planner's.
    """

    def catalog_exists(self, catalog: str) -> bool: ...

    def database_exists(self, catalog: str, database: str) -> bool: ...

    def get_relation(self, ident: ObjectIdentifier) -> Relation | None: ...

    def get_function(self, ident: ObjectIdentifier) -> FunctionDef | None: ...

    def get_system_function(self, name: str) -> FunctionDef | None: ...

    def access(self, principal: int | None = None) -> Access:
        """What a user holds (core.privileges): the statement's user (``principal`` None),
        or the user ``principal`` (a view's or SQL function's owner, for definer rights).
        Loaded once per principal per statement."""
        ...

    def catalog_securable(self, catalog: str) -> Securable | None:
        """The catalog as a securable (with its owner); None when it does not exist."""
        ...

    def database_securable(self, catalog: str, database: str) -> Securable | None:
        """The database as a securable (with its and its catalog's owners); None when it
        does not exist."""
        ...

    def owns_inside(self, securable: Securable) -> bool:
        """Whether the statement's user owns an object inside the catalog or database
        ``securable`` (which makes its name visible to them). Asked only when the loaded
        ``Access`` cannot tell, at most once per securable and statement."""
        ...

    def table_version(self, relation: Relation, travel: TimeTravel) -> TableVersionRef:
        """The version of the permanent managed table ``relation`` that ``travel`` names;
        ``CoreError`` (VALIDATION_ERROR) when there is none, naming the readable versions,
        or when its data has expired."""
        ...

    def version_since(self, relation: Relation, moment: datetime) -> int | None:
        """The first version of the permanent managed table ``relation`` made at or after
        ``moment`` (``table_changes``' start); None when there is none."""
        ...

    def write_conflict(self, relation: Relation) -> str | None:
        """Why writing the permanent table ``relation`` would change another table's data
        (its path equals, holds or lies inside another table's), as a sentence naming the
        other table; None when its files are its own."""
        ...

    def read_conflict(self, relation: Relation) -> str | None:
        """Why the session's temporary table ``relation`` may not read its files now: they
        are (also) a permanent table's that the user may not SELECT from (a grant revoked,
        or a table made over them since it was declared), as a sentence naming the other
        table only to who may see it; None when it may read them."""
        ...


@dataclass(frozen=True)
class PlanContext:
    """The session state a statement is planned in."""

    current_catalog: str | None
    current_database: str | None
    storage_roots: tuple[str, ...] = ()  # normalised absolute directories
    # TESSERA_VERSION_RETENTION in hours (rounded up): VACUUM never retains less.
    version_retention_hours: int = 168
    settable_keys: frozenset[str] = field(default=DEFAULT_SETTABLE_KEYS)
    udf_packages: tuple[str, ...] = ("tessera_udfs",)  # allowlisted Python UDF packages
    pipeline_packages: tuple[str, ...] = ("tessera_pipelines",)  # allowed pipeline packages
    # SET values are checked against the registry bound to the server's limits (None: keys
    # only, the executing side checks values).
    session_properties: SessionProperties | None = None
    limits: StatementLimits = field(default_factory=StatementLimits)
    budget_seconds: float | None = None  # planning time budget (None: unlimited)
    uploads: UploadLookup | None = None  # the session's uploads (None: it has none)
    # The pipeline job this statement is planned for (a statement of a running pipeline, in
    # its session): only it may declare and read tables over its own live DataFrames
    # (``'connector' = 'dataframe'``). None: any other statement.
    pipeline_job: str | None = None
    # The session's ``execution.runtime-mode`` (``batch`` | ``streaming``) and a stream's
    # micro-batch trigger (``execution.checkpointing.interval``, in milliseconds).
    runtime_mode: str = "batch"
    checkpoint_interval_ms: int = 1000
    # Whether the statement's user may create catalogs (``TESSERA_CATALOG_CREATORS``):
    # CREATE CATALOG is refused with PERMISSION_DENIED when not.
    may_create_catalogs: bool = True
