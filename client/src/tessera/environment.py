"""``TableEnvironment``: one server session, the entry point of the Table API.

Its properties are ``tessera.config.TableConfig``, its statement sets
``tessera.statement_set.StatementSet``; data goes up as Arrow (``tessera.uploads``).
"""

from __future__ import annotations

import os
import uuid
from types import TracebackType
from typing import TYPE_CHECKING, Any

import pyarrow as pa  # type: ignore[import-untyped]
from sqlglot import exp

from tessera import changelog
from tessera._http import Http, segment
from tessera.config import TableConfig
from tessera.elements import values_query as elements_query
from tessera.errors import (
    AlreadyExistsError,
    TesseraError,
    ValidationError,
    job_error,
)
from tessera.result import TableResult
from tessera.retry import RetryPolicy
from tessera.schema import Schema, TableDescriptor
from tessera.sql import (
    DIALECT,
    parse_path,
    path_sql,
    quote_path,
    table_node,
)
from tessera.statement_set import StatementSet
from tessera.table import Table
from tessera.uploads import send_upload, to_arrow, upload_table_sql

if TYPE_CHECKING:
    from collections.abc import Iterable

    import pandas  # type: ignore[import-untyped]

DEFAULT_ROW_LIMIT = 100_000_000
# How long POST …/statements holds its answer; longer jobs are then followed by long-polls
# (which a Ctrl-C in wait() can interrupt and cancel).
STATEMENT_WAIT_SECONDS = 10


def connect(
    url: str | None = None,
    token: str | None = None,
    *,
    username: str | None = None,
    password: str | None = None,
    catalog: str | None = None,
    database: str | None = None,
    retry: RetryPolicy | None = None,
    pool_size: int = 10,
) -> TableEnvironment:
    """Open a server session and return its :class:`TableEnvironment`.

    ``url`` and ``token`` default to ``$TESSERA_URL`` and ``$TESSERA_TOKEN``; with
    ``username``/``password`` a token is asked for (``POST /auth/token``). ``catalog`` and
    ``database`` set the session's current ones; without them the session starts where the
    user last worked, else in their or the server's default catalog, else in their personal
    catalog (``TESSERA_PERSONAL_CATALOG``, made on first use). ``retry``: how requests
    refused for now (429, 503) are sent again (default ``RetryPolicy()``: up to 5 sends
    within 60 s of waits; ``tessera.NO_RETRY`` never). ``pool_size``: HTTP connections
    kept, for threads sharing the environment.
    """
    url = url or os.environ.get("TESSERA_URL")
    if not url:
        raise ValidationError(
            "VALIDATION_ERROR", "No server URL: pass url= or set TESSERA_URL (http://host:8000)."
        )
    http = Http(url, retry=retry, pool_size=pool_size)
    if username is not None or password is not None:
        if not username or password is None:
            raise ValidationError(
                "VALIDATION_ERROR", "Give both username and password (or a token)."
            )
        http.sign_in(username, password)
    else:
        token = token or os.environ.get("TESSERA_TOKEN")
        if not token:
            raise ValidationError(
                "VALIDATION_ERROR",
                "No credentials: pass token= (or set TESSERA_TOKEN), or username= and password=.",
            )
        http.set_token(token)
    body: dict[str, Any] = {}
    if catalog is not None:
        body["current_catalog"] = catalog
    if database is not None:
        body["current_database"] = database
    if catalog is None and database is None:
        # Where the user last worked, else their default, else the server's, else their own
        # catalog (made on first use): a current catalog and database from the start.
        body["start"] = "workspace"
    try:
        session = http.post("/sessions", body)
    except TesseraError:
        try:
            if http.signed_in:
                http.revoke_token()
        finally:
            http.close()
        raise
    return TableEnvironment(http, session)


# Jobs that run data through Spark (PyFlink's "jobs"): once started, their failure is read
# from their TableResult. Commands (DDL, SET, SHOW…) fail at once, as PyFlink's do.
JOB_KINDS = frozenset({"query", "explain", "ctas", "insert", "statement_set", "pipeline"})


def _ran_as_a_job(job: dict[str, Any]) -> bool:
    """Whether a job that ended FAILED or CANCELED started (it was not refused while being
    planned or queued) and is of a kind whose result is a :class:`TableResult`."""
    return job.get("started_at") is not None and job.get("kind") in JOB_KINDS


class TableEnvironment:
    """One server session: run SQL, build lazy tables, move data in and out.

    Use it as a context manager, or call :meth:`close` to end the session.
    """

    def __init__(self, http: Http, session: dict[str, Any]) -> None:
        self._http = http
        self._session = session
        self.session_id: str = str(session["id"])
        #: The row_limit sent with queries whose result is read whole.
        self.row_limit: int = DEFAULT_ROW_LIMIT
        #: Seconds the server may hold a statement's answer until its job ends (0..30).
        self.statement_wait: float = STATEMENT_WAIT_SECONDS
        self._closed = False

    @property
    def _path(self) -> str:
        return f"/sessions/{self.session_id}"

    def _session_json(self) -> dict[str, Any]:
        self._session = self._http.get(self._path)
        return self._session

    # --- life ------------------------------------------------------------------------

    def close(self) -> None:
        """End the server session (its temporary objects go with it). A token that
        :func:`connect` got by signing in with ``username``/``password`` is revoked too; a
        token you passed stays valid (:meth:`logout` revokes it)."""
        self._end(revoke=self._http.signed_in)

    def logout(self) -> None:
        """End the server session and revoke the token this environment uses, however it
        came: every later request with it is refused (``AuthenticationError``)."""
        self._end(revoke=True)

    def _end(self, *, revoke: bool) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._http.delete(self._path, ok=(404,))
        finally:
            try:
                if revoke:
                    self._http.revoke_token()
            finally:
                self._http.close()

    def __enter__(self) -> TableEnvironment:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # --- statements ------------------------------------------------------------------

    def _live_data_frame(self, table: Table) -> Any:
        """A live DataFrame of ``table`` where the runtime has one (in a pipeline job, on the
        worker); None here: ``to_data_frame`` copies the result."""
        return None

    def _submit(
        self,
        sql: str,
        *,
        row_limit: int | None = None,
        parameters: dict[str, Any] | None = None,
        page_size: int | None = None,
    ) -> TableResult:
        body: dict[str, Any] = {"sql": sql, "wait": self.statement_wait}
        if row_limit is not None:
            body["row_limit"] = row_limit
        if page_size is not None:
            # A job finished within the wait answers its first page inline (`result_page`).
            body["page_size"] = page_size
        if parameters:
            # Values of the query's :name markers: Spark binds them, they never enter the text.
            body["parameters"] = parameters
        try:
            job = self._http.post(f"{self._path}/statements", body)
        except ValidationError as exc:
            # A server whose download limit is lower says so: keep to its maximum.
            maximum = exc.details.get("max")
            if exc.details.get("field") != "row_limit" or not isinstance(maximum, int):
                raise
            self.row_limit = maximum
            job = self._http.post(f"{self._path}/statements", {**body, "row_limit": maximum})
        if job["status"] in ("FAILED", "CANCELED") and not _ran_as_a_job(job):
            raise job_error(job)
        return TableResult(self._http, job)

    def execute_sql(self, sql: str) -> TableResult:
        """Run one SQL statement (query, DDL, INSERT, SET…) and return its job.

        A statement the server refuses (a parse error, forbidden SQL, a name taken…) and a
        DDL or other command that fails raise at once. A query, INSERT, CTAS or statement
        set that started and then failed is returned like any other job, as in PyFlink: its
        ``status`` is ``FAILED`` and ``wait()``, ``collect()``, ``to_pandas()``… raise its
        error.
        """
        return self._submit(sql, row_limit=self.row_limit)

    def sql_query(self, query: str) -> Table:
        """A lazy :class:`Table` over a SQL query."""
        return Table.of_text(self, query)

    def from_path(self, path: str) -> Table:
        """A lazy :class:`Table` reading a table or view (``c.d.t``, ``d.t`` or ``t``)."""
        source = table_node(parse_path(path))
        return Table(self, exp.select("*").from_(source.copy()), source=source)

    def _resolve(self, source: exp.Table) -> dict[str, Any]:
        path = source.sql(dialect=DIALECT)
        result: dict[str, Any] = self._http.get(f"{self._path}/resolve", {"path": path})
        return result

    # --- catalog and database --------------------------------------------------------

    def use_catalog(self, catalog: str) -> None:
        """Make ``catalog`` current (its default database becomes the current database)."""
        self._session = self._http.patch(self._path, {"current_catalog": catalog})

    def use_database(self, database: str) -> None:
        """Make ``database`` (in the current catalog) current."""
        self._session = self._http.patch(self._path, {"current_database": database})

    def get_current_catalog(self) -> str | None:
        """The session's current catalog (None when unset)."""
        return self._session_json().get("current_catalog")

    def get_current_database(self) -> str | None:
        """The session's current database (None when unset)."""
        return self._session_json().get("current_database")

    def _current(self) -> tuple[str, str]:
        return self._current_for("")

    def _current_for(self, what: str) -> tuple[str, str]:
        session = self._session_json()
        catalog, database = session.get("current_catalog"), session.get("current_database")
        if not catalog or not database:
            kept = (
                f"{what} is kept as a temporary table in the current catalog and database; "
                if what
                else ""
            )
            raise ValidationError(
                "VALIDATION_ERROR",
                f"The session has no current catalog and database: {kept}call use_catalog() "
                "and use_database() first (or connect(catalog=..., database=...)).",
            )
        return str(catalog), str(database)

    def _full_path(self, path: str) -> list[str]:
        parts = parse_path(path)
        if len(parts) == 3:
            return parts
        catalog, database = self._current()
        return [catalog, database, *parts] if len(parts) == 1 else [catalog, *parts]

    # --- lists -----------------------------------------------------------------------

    def _names(self, path: str) -> list[str]:
        return [str(item["name"]) for item in self._http.pages(path)]

    def _temporary(self, kind: str) -> list[dict[str, Any]]:
        return list(self._http.pages(f"{self._path}/temporary/{kind}"))

    def _temporary_here(self, kind: str) -> list[str]:
        catalog, database = self._current()
        return [
            str(item["name"])
            for item in self._temporary(kind)
            if str(item.get("catalog") or "").lower() == catalog.lower()
            and str(item.get("database") or "").lower() == database.lower()
        ]

    def _database_path(self) -> str:
        catalog, database = self._current()
        return f"/catalogs/{segment(catalog)}/databases/{segment(database)}"

    def list_catalogs(self) -> list[str]:
        """Names of every catalog."""
        return self._names("/catalogs")

    def list_databases(self) -> list[str]:
        """Names of the databases of the current catalog."""
        catalog = self.get_current_catalog()
        if not catalog:
            raise ValidationError("VALIDATION_ERROR", "The session has no current catalog.")
        return self._names(f"/catalogs/{segment(catalog)}/databases")

    def list_tables(self) -> list[str]:
        """Tables of the current database, and the session's temporary tables there."""
        names = self._names(f"{self._database_path()}/tables")
        return sorted(set(names) | set(self._temporary_here("tables")), key=str.lower)

    def list_views(self) -> list[str]:
        """Views of the current database, and the session's temporary views there."""
        names = self._names(f"{self._database_path()}/views")
        return sorted(set(names) | set(self._temporary_here("views")), key=str.lower)

    @staticmethod
    def _dotted(item: dict[str, Any]) -> str:
        parts = [item.get("catalog"), item.get("database"), item["name"]]
        return quote_path([str(p) for p in parts if p is not None])

    def list_temporary_tables(self) -> list[str]:
        """The session's temporary tables, as quoted full paths (`` `c`.`d`.`t` ``)."""
        return [self._dotted(item) for item in self._temporary("tables")]

    def list_temporary_views(self) -> list[str]:
        """The session's temporary views, as quoted full paths."""
        return [self._dotted(item) for item in self._temporary("views")]

    def list_user_defined_functions(self) -> list[str]:
        """Functions of the current database, and the session's temporary functions."""
        names = self._names(f"{self._database_path()}/functions")
        temporary = [str(item["name"]) for item in self._temporary("functions")]
        return sorted(set(names) | set(temporary), key=str.lower)

    # --- objects ---------------------------------------------------------------------

    def create_table(
        self,
        path: str,
        descriptor: TableDescriptor,
        query: Table | None = None,
        ignore_if_exists: bool = False,
    ) -> TableResult | None:
        """Create a permanent table.

        With ``query``: ``CREATE TABLE … AS`` the query (FLIP-218), a job through the
        stage-table lifecycle, returned as a :class:`TableResult` (call ``wait()``).
        Without: the table is created from the descriptor at once (``None`` is returned);
        ``ignore_if_exists`` makes an existing table no error.
        """
        if query is not None:
            if descriptor.schema is not None and descriptor.schema.columns:
                raise ValidationError(
                    "VALIDATION_ERROR",
                    "A table created from a query takes the query's columns; "
                    "leave the descriptor's schema out.",
                )
            exists = " IF NOT EXISTS" if ignore_if_exists else ""
            sql = f"CREATE TABLE{exists} {path_sql(path)}{descriptor.ddl_clauses()} AS {query.sql}"
            return self._submit(sql)
        c, d, name = self._full_path(path)
        body = {"name": name, **descriptor.to_json()}
        try:
            self._http.post(f"/catalogs/{segment(c)}/databases/{segment(d)}/tables", body)
        except AlreadyExistsError:
            if not ignore_if_exists:
                raise
        return None

    def create_temporary_table(self, path: str, descriptor: TableDescriptor) -> None:
        """Create a temporary table (an external table living in this session)."""
        if descriptor.schema is None:
            raise ValidationError("VALIDATION_ERROR", "A temporary table needs a schema.")
        elements = ", ".join(descriptor.schema.ddl_elements())
        sql = f"CREATE TEMPORARY TABLE {path_sql(path)} ({elements}){descriptor.ddl_clauses()}"
        self._submit(sql).wait()

    def create_temporary_view(
        self, path: str, table_or_df: Any, schema: Schema | None = None
    ) -> None:
        """A temporary view over a :class:`Table`, or session data from a pandas/Arrow/Spark
        DataFrame (uploaded as Arrow) under ``path``."""
        if isinstance(table_or_df, Table):
            if schema is not None:
                raise ValidationError(
                    "VALIDATION_ERROR", "A schema is only taken with a DataFrame, not a Table."
                )
            self._submit(f"CREATE TEMPORARY VIEW {path_sql(path)} AS {table_or_df.sql}").wait()
            return
        data = self._register_data(to_arrow(table_or_df), schema)
        self._submit(f"CREATE TEMPORARY VIEW {path_sql(path)} AS SELECT * FROM {data}").wait()

    def _register_data(self, table: pa.Table, schema: Schema | None) -> str:
        """Upload ``table`` and keep it as a temporary table under a generated name in the
        current catalog and database (gone with the session); the table's quoted path."""
        catalog, database = self._current_for("DataFrame data")
        path = quote_path([catalog, database, f"tmp_{uuid.uuid4().hex[:16]}"])
        self._register(path, table, schema)
        return path

    def _drop(self, sql: str) -> bool:
        result = self._submit(sql).wait()
        rows = list(result.collect())
        if not rows:
            return False
        row = rows[0].asdict()
        if "existed" in row:
            return bool(row["existed"])
        return str(row.get("result", "")).startswith("Dropped")

    def drop_table(self, path: str) -> bool:
        """Drop a permanent table; whether it existed."""
        return self._drop(f"DROP TABLE IF EXISTS {path_sql(path)}")

    def drop_view(self, path: str) -> bool:
        """Drop a permanent view; whether it existed."""
        return self._drop(f"DROP VIEW IF EXISTS {path_sql(path)}")

    def drop_temporary_table(self, path: str) -> bool:
        """Drop a temporary table of the session; whether it existed."""
        return self._drop(f"DROP TEMPORARY TABLE IF EXISTS {path_sql(path)}")

    def drop_temporary_view(self, path: str) -> bool:
        """Drop a temporary view of the session; whether it existed."""
        return self._drop(f"DROP TEMPORARY VIEW IF EXISTS {path_sql(path)}")

    def create_statement_set(self) -> StatementSet:
        """A new, empty statement set."""
        return StatementSet(self)

    def get_config(self) -> TableConfig:
        """The session's properties."""
        return TableConfig(self)

    # --- data in (FLIP-136) ----------------------------------------------------------

    def from_elements(
        self, elements: Iterable[Any], schema: Schema | list[str] | None = None
    ) -> Table:
        """A Table of Python rows (tuples, lists, dicts or Rows), sent inline as ``VALUES``.
        ``schema``: a Schema (names and types: each column is cast) or column names (types
        from the values); without, a dict's keys or ``_1``, ``_2``…"""
        return Table(self, elements_query(elements, schema))

    def from_pandas(self, df: pandas.DataFrame, schema: Schema | None = None) -> Table:
        """Upload a pandas DataFrame (as Arrow) and return a Table over it."""
        return self.from_arrow(pa.Table.from_pandas(df, preserve_index=False), schema)

    def from_arrow(self, table: pa.Table | pa.RecordBatch, schema: Schema | None = None) -> Table:
        """Upload an Arrow table and return a Table over it (session data)."""
        return self.from_path(self._register_data(to_arrow(table), schema))

    def from_data_frame(self, spark_df: Any, schema: Schema | None = None) -> Table:
        """Upload a PySpark DataFrame (``toArrow()``) and return a Table over it."""
        return self.from_arrow(to_arrow(spark_df), schema)

    def from_changelog(self, df: Any, schema: Schema | None = None) -> Table:
        """The table a changelog describes (FLIP-136 ``fromChangelogStream``).

        ``df`` (pandas, Arrow or PySpark) has a column ``op`` with each row's kind — ``+I``,
        ``-U``, ``+U``, ``-D`` — and its rows are the log, in order. With a primary key in
        ``schema`` the last row of each key decides (``-U`` rows are before-images and are
        skipped; ``-D`` removes the key); without one the log is a multiset (each ``+I``/``+U``
        adds its row, each ``-U``/``-D`` takes one copy away). ``schema`` also gives the
        columns' types (casts) and computed columns.
        """
        return changelog.from_changelog(self, df, schema)

    def _register(self, path: str, table: pa.Table, schema: Schema | None) -> None:
        upload = send_upload(self._http, f"{self._path}/uploads", table)
        self._submit(upload_table_sql(path_sql(path), upload, schema)).wait()
