"""Python DB-API 2.0 (PEP 249) over Tessera's REST API: ``tessera.dbapi.connect()``.

A connection is one server session (``tessera.connect``'s :class:`TableEnvironment`); a
cursor's ``execute`` is one statement, run as a job like any other. ``paramstyle`` is
``named`` (``WHERE qty >= :min_qty``): the values are sent beside the text and bound by
Spark as literals, never spliced into SQL. See docs/python.md ("DB-API 2.0").
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from types import TracebackType
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError as SqlglotParseError

from tessera import errors as _errors
from tessera._http import segment
from tessera.environment import TableEnvironment
from tessera.environment import connect as _connect_environment
from tessera.result import TableResult
from tessera.sql import DIALECT

apilevel = "2.0"
# Threads may share the module, not connections: a connection is one session whose
# current catalog/database and temporary objects every cursor of it shares.
threadsafety = 1
paramstyle = "named"

# --- exceptions (PEP 249) ------------------------------------------------------------------


class Warning(Exception):
    """PEP 249 ``Warning`` (Tessera sends none; here for completeness)."""


class Error(_errors.TesseraError):
    """PEP 249 ``Error``: the base of every error of this module. ``code``, ``message`` and
    ``details`` are Tessera's (``PARSE_ERROR``…); ``job_id`` names the failed job, if any."""

    job_id: str | None = None


class InterfaceError(Error):
    """Misuse of the interface: a closed cursor or connection, fetching before executing."""


class DatabaseError(Error):
    """An error of the server (the statement, its data or the service)."""


class DataError(DatabaseError):
    """Bad data: a value out of range, a division by zero, a failed cast (SQLSTATE 22…)."""


class OperationalError(DatabaseError):
    """The service, not the statement: unreachable, signed out, busy, canceled, timed out."""


class IntegrityError(DatabaseError):
    """A constraint was violated (SQLSTATE 23…: a CHECK or NOT NULL constraint)."""


class InternalError(DatabaseError):
    """Tessera failed internally (``INTERNAL_ERROR``, SQLSTATE XX…)."""


class ProgrammingError(DatabaseError):
    """The statement is wrong or refused: parse error, unknown or existing object, no
    permission, forbidden SQL, parameters that do not match the markers."""


class NotSupportedError(DatabaseError):
    """Something Tessera does not offer (transactions' rollback, a statement it refuses)."""


_BY_CODE: dict[str, type[Error]] = {
    "PARSE_ERROR": ProgrammingError,
    "NOT_FOUND": ProgrammingError,
    "ALREADY_EXISTS": ProgrammingError,
    "TEMPORARY_OBJECT_EXISTS": ProgrammingError,
    "NOT_EMPTY": ProgrammingError,
    "PERMISSION_DENIED": ProgrammingError,
    "FORBIDDEN_SQL": ProgrammingError,
    "VALIDATION_ERROR": ProgrammingError,
    "STATEMENT_TOO_LARGE": ProgrammingError,
    "STATEMENT_TOO_DEEP": ProgrammingError,
    "UNSUPPORTED": NotSupportedError,
    "UNSUPPORTED_STATEMENT": NotSupportedError,
    "STREAMING_UNSUPPORTED": NotSupportedError,
    "PAYLOAD_TOO_LARGE": DataError,
    "NOT_AUTHENTICATED": OperationalError,
    "TOKEN_EXPIRED": OperationalError,
    "CONNECTION_FAILED": OperationalError,
    "HTTP_ERROR": OperationalError,
    "TOO_MANY_REQUESTS": OperationalError,
    "TOO_MANY_JOBS": OperationalError,
    "TOO_MANY_STREAMS": OperationalError,
    "PLANNING_TIMEOUT": OperationalError,
    "TIMEOUT": OperationalError,
    "CANCELED": OperationalError,
    "CONFLICT": OperationalError,
    "RESULT_TOO_LARGE": OperationalError,
    "ENGINE_LOST": OperationalError,
    "WORKER_LOST": OperationalError,
    "DATABASE_UNAVAILABLE": OperationalError,
    "SPARK_OUT_OF_MEMORY": OperationalError,
    "STORAGE_FULL": OperationalError,
    "STORAGE_UNREACHABLE": OperationalError,
    "INTERNAL_ERROR": InternalError,
}

# Spark's errors (SPARK_ERROR) carry a SQLSTATE; its class (first two characters) decides.
_BY_SQLSTATE_CLASS: dict[str, type[Error]] = {
    "22": DataError,
    "23": IntegrityError,
    "42": ProgrammingError,
    "0A": NotSupportedError,
    "08": OperationalError,
    "53": OperationalError,
    "57": OperationalError,
    "XX": InternalError,
}


def error_class(code: str, details: Mapping[str, Any] | None = None) -> type[Error]:
    """The PEP 249 class for a Tessera error code (and, for Spark's, its SQLSTATE)."""
    if code in _BY_CODE:
        return _BY_CODE[code]
    sqlstate = str((details or {}).get("sqlstate") or "")
    return _BY_SQLSTATE_CLASS.get(sqlstate[:2].upper(), DatabaseError)


def translate(exc: _errors.TesseraError) -> Error:
    """The PEP 249 error for a client error, with the same code, message and details."""
    if isinstance(exc, Error):
        return exc
    error = error_class(exc.code, exc.details)(exc.code, exc.message, exc.details)
    error.job_id = getattr(exc, "job_id", None)
    return error


@contextmanager
def _translated() -> Iterator[None]:
    try:
        yield
    except Error:
        raise
    except _errors.TesseraError as exc:
        raise translate(exc) from exc


# --- type objects (PEP 249) ----------------------------------------------------------------


class DBAPITypeObject:
    """Equal to every ``type_code`` (a Spark type name such as ``BIGINT``) of its group."""

    def __init__(self, *names: str) -> None:
        self.names = frozenset(names)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            return base_type(other) in self.names
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(self.names)


STRING = DBAPITypeObject("STRING", "VARCHAR", "CHAR")
BINARY = DBAPITypeObject("BINARY")
NUMBER = DBAPITypeObject(
    "TINYINT", "SMALLINT", "INT", "INTEGER", "BIGINT", "FLOAT", "REAL", "DOUBLE", "DECIMAL"
)
DATETIME = DBAPITypeObject("DATE", "TIMESTAMP", "TIMESTAMP_NTZ", "TIMESTAMP_LTZ")
ROWID = DBAPITypeObject()
BOOLEAN = DBAPITypeObject("BOOLEAN")

Date = datetime.date
Time = datetime.time
Timestamp = datetime.datetime
Binary = bytes


def DateFromTicks(ticks: float) -> datetime.date:
    """The date of a POSIX time."""
    return datetime.date.fromtimestamp(ticks)


def TimeFromTicks(ticks: float) -> datetime.time:
    """The time of day of a POSIX time."""
    return datetime.datetime.fromtimestamp(ticks).time()


def TimestampFromTicks(ticks: float) -> datetime.datetime:
    """The local date and time of a POSIX time."""
    return datetime.datetime.fromtimestamp(ticks)


_TYPE = re.compile(r"^\s*([A-Za-z_]+)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?")


def base_type(data_type: str) -> str:
    """``DECIMAL(10, 2) NOT NULL`` → ``DECIMAL``; ``ARRAY<INT>`` → ``ARRAY``."""
    match = _TYPE.match(data_type)
    return match.group(1).upper() if match else data_type.strip().upper()


def describe_column(name: str, data_type: str) -> tuple[Any, ...]:
    """A PEP 249 ``description`` entry: (name, type_code, display_size, internal_size,
    precision, scale, null_ok); ``type_code`` is the Spark type without ``NOT NULL``."""
    not_null = data_type.rstrip().upper().endswith("NOT NULL")
    type_code = data_type.rstrip()[: -len("NOT NULL")].rstrip() if not_null else data_type
    precision = scale = None
    match = _TYPE.match(type_code)
    if match and match.group(1).upper() == "DECIMAL":
        precision = int(match.group(2) or 10)
        scale = int(match.group(3) or 0)
    elif match and match.group(1).upper() in ("VARCHAR", "CHAR") and match.group(2):
        precision = int(match.group(2))
    return (name, type_code, None, None, precision, scale, not not_null)


# --- connections ---------------------------------------------------------------------------


def connect(
    url: str | None = None,
    token: str | None = None,
    *,
    username: str | None = None,
    password: str | None = None,
    catalog: str | None = None,
    database: str | None = None,
) -> Connection:
    """Open a connection (one server session). Arguments as :func:`tessera.connect`: the
    URL and token default to ``$TESSERA_URL`` and ``$TESSERA_TOKEN``; with ``username``
    and ``password`` a token is signed in for and revoked at :meth:`Connection.close`."""
    with _translated():
        env = _connect_environment(
            url, token, username=username, password=password, catalog=catalog, database=database
        )
    return Connection(env)


class Connection:
    """A PEP 249 connection: one Tessera session. Every statement commits on its own (a
    job commits all its writes or none), so :meth:`commit` and :meth:`rollback` do nothing."""

    # PEP 249's optional extension: the exceptions as attributes of the connection.
    Warning = Warning
    Error = Error
    InterfaceError = InterfaceError
    DatabaseError = DatabaseError
    DataError = DataError
    OperationalError = OperationalError
    IntegrityError = IntegrityError
    InternalError = InternalError
    ProgrammingError = ProgrammingError
    NotSupportedError = NotSupportedError

    def __init__(self, env: TableEnvironment) -> None:
        self._env: TableEnvironment | None = env

    @property
    def env(self) -> TableEnvironment:
        """The session's :class:`TableEnvironment` (InterfaceError once closed)."""
        if self._env is None:
            raise InterfaceError("CLOSED", "The connection is closed.")
        return self._env

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._env is None

    def close(self) -> None:
        """End the session (its temporary objects go with it); later use raises
        InterfaceError. Closing twice is no error."""
        env, self._env = self._env, None
        if env is not None:
            with _translated():
                env.close()

    def commit(self) -> None:
        """Nothing to do: each statement committed when its job finished."""
        self._check_open()

    def rollback(self) -> None:
        """Nothing to undo: each statement committed (or wrote nothing) on its own."""
        self._check_open()

    def _check_open(self) -> None:
        if self._env is None:
            raise InterfaceError("CLOSED", "The connection is closed.")

    def cursor(self) -> Cursor:
        """A new cursor of this session."""
        return Cursor(self, self.env)

    def __enter__(self) -> Connection:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # --- the catalog, for the SQLAlchemy dialect's reflection -----------------------------

    def _catalog_path(self) -> str:
        catalog = self.current_catalog()
        if not catalog:
            raise InterfaceError(
                "VALIDATION_ERROR", "The session has no current catalog: connect(catalog=...)."
            )
        return f"/catalogs/{segment(catalog)}"

    def current_catalog(self) -> str | None:
        """The session's current catalog."""
        with _translated():
            return self.env.get_current_catalog()

    def current_database(self) -> str | None:
        """The session's current database."""
        with _translated():
            return self.env.get_current_database()

    def catalog_items(self, path: str) -> list[dict[str, Any]]:
        """Every item of a catalog list under the current catalog (``/databases``,
        ``/databases/{d}/tables``…): permanent objects the user may see, no temporary ones."""
        with _translated():
            return list(self.env._http.pages(f"{self._catalog_path()}{path}"))

    def catalog_object(self, path: str) -> dict[str, Any]:
        """One catalog object under the current catalog (``/databases/{d}/tables/{t}``)."""
        with _translated():
            found: dict[str, Any] = self.env._http.get(f"{self._catalog_path()}{path}")
            return found

    def ping(self) -> None:
        """Read the session: OperationalError if the server or the token is gone."""
        with _translated():
            self.env._session_json()


# --- cursors -------------------------------------------------------------------------------

# Rows asked inline with each statement: a small result needs no second request.
INLINE_ROWS = 1000
# Spark types whose JSON value is the Python value the Arrow result gives.
_JSON_EXACT = re.compile(r"(?i)(BOOLEAN|TINYINT|SMALLINT|INT|BIGINT|STRING)(\s+NOT\s+NULL)?")


def _whole_inline_page(
    job: dict[str, Any], columns: list[dict[str, Any]]
) -> list[tuple[Any, ...]] | None:
    """The job's rows from the page its answer carried, when that page holds all of them
    and every column reads the same from JSON as from Arrow; else None (read the Arrow)."""
    page = job.get("result_page")
    if (
        not isinstance(page, dict)
        or page.get("next_page_token")
        or ((job.get("result") or {}).get("truncated"))
    ):
        return None
    if not all(
        _JSON_EXACT.fullmatch(str(c.get("data_type", "")).strip()) and not c.get("served_as")
        for c in columns
    ):
        return None
    return [tuple(row) for row in page.get("rows") or []]


_EMPTY: list[Any] = []


class Cursor:
    """A PEP 249 cursor. ``execute`` runs one statement as a job and waits for it; rows are
    read from the job's Arrow result batch by batch as they are fetched."""

    def __init__(self, connection: Connection, env: TableEnvironment) -> None:
        self.connection = connection
        self._env = env
        self.arraysize = 1
        self._closed = False
        self._reset()

    def _reset(self) -> None:
        self._result: TableResult | None = None
        self._description: list[tuple[Any, ...]] | None = None
        self._rowcount = -1
        self._reader: pa.RecordBatchReader | None = None
        self._rows: Iterator[tuple[Any, ...]] = iter(_EMPTY)
        self._rownumber: int | None = None

    # --- attributes ----------------------------------------------------------------------

    @property
    def description(self) -> list[tuple[Any, ...]] | None:
        """One 7-item entry per result column; None for statements without a result."""
        return self._description

    @property
    def rowcount(self) -> int:
        """Rows of the result, or rows a write committed; -1 when unknown (DDL)."""
        return self._rowcount

    @property
    def rownumber(self) -> int | None:
        """The 0-based index of the next row to fetch (PEP 249 extension)."""
        return self._rownumber

    @property
    def lastrowid(self) -> None:
        """Tables have no row ids."""
        return None

    @property
    def job_id(self) -> str | None:
        """The last statement's job id (shown in Tessera's Jobs)."""
        return None if self._result is None else self._result.job_id

    def _check_open(self) -> None:
        if self._closed:
            raise InterfaceError("CLOSED", "The cursor is closed.")
        if self.connection.closed:
            raise InterfaceError("CLOSED", "The connection is closed.")

    # --- statements ----------------------------------------------------------------------

    def execute(self, operation: str, parameters: Mapping[str, Any] | None = None) -> Cursor:
        """Run one statement. ``parameters`` are the values of its ``:name`` markers, bound
        by Spark. In an ``INSERT … VALUES (:a, …)`` they are uploaded as data instead and
        inserted with ``INSERT … SELECT`` from the upload: Spark binds parameters in queries
        only, and the values must not become SQL text either way."""
        return self._execute(operation, [parameters] if parameters else [], many=False)

    def executemany(
        self, operation: str, seq_of_parameters: Sequence[Mapping[str, Any]] | Any
    ) -> Cursor:
        """Run a statement once per set of parameters. An ``INSERT … VALUES`` with markers
        runs once for all of them (one upload, one job); any other statement runs once per
        set, and ``rowcount`` adds up. No sets: nothing runs."""
        return self._execute(operation, seq_of_parameters, many=True)

    def _execute(self, operation: str, seq_of_parameters: Any, *, many: bool) -> Cursor:
        self._check_open()
        self._close_reader()
        self._reset()
        if not isinstance(operation, str):
            raise ProgrammingError("VALIDATION_ERROR", "The operation must be SQL text (str).")
        sets = [self._check_parameters(p) for p in seq_of_parameters]
        insert = _insert_values(operation) if sets and any(sets) else None
        with _translated():
            if insert is not None:
                self._insert_uploaded(insert, sets)
            elif not sets:
                if not many:
                    self._run(operation, None)
                else:
                    self._rowcount = 0
            else:
                total = 0
                for values in sets:
                    self._run(operation, values)
                    total += max(self._rowcount, 0)
                if len(sets) > 1:
                    self._rowcount = total
        return self

    @staticmethod
    def _check_parameters(parameters: Any) -> dict[str, Any]:
        if parameters is None:
            return {}
        if not isinstance(parameters, Mapping):
            raise ProgrammingError(
                "VALIDATION_ERROR",
                f"paramstyle is 'named': pass a mapping of marker names to values, not "
                f"{type(parameters).__name__}.",
            )
        return dict(parameters)

    def _run(self, sql: str, parameters: dict[str, Any] | None) -> None:
        values = {k: _wire_value(k, v) for k, v in (parameters or {}).items()}
        result = self._env._submit(
            sql, row_limit=self._env.row_limit, parameters=values, page_size=INLINE_ROWS
        )
        self._result = result  # before waiting: cancel() from another thread finds the job
        self._finish(result.wait())

    def _finish(self, result: TableResult) -> None:
        self._result = result
        job = result.job
        columns = (job.get("result") or {}).get("columns") or []
        if job.get("kind") in ("query", "show", "describe", "explain") or (
            columns and not _is_write(job)
        ):
            self._description = [describe_column(c["name"], c["data_type"]) for c in columns]
            self._rowcount = int((job.get("result") or {}).get("row_count") or 0)
            self._rownumber = 0
            inline = _whole_inline_page(job, columns)
            if inline is not None:
                self._rows = iter(inline)
            elif self._rowcount:
                self._rows = self._next_rows()  # a generator: nothing is read until fetched
        elif _is_write(job):
            self._rowcount = self._written(result)

    @staticmethod
    def _written(result: TableResult) -> int:
        committed = [e for e in result.events() if e.get("type") == "data_committed"]
        counts: list[int] = []
        for event in committed:
            rows = (event.get("detail") or {}).get("rows")
            if not isinstance(rows, int):
                return -1  # a target whose count was not recorded: unknown, not a guess
            counts.append(rows)
        return sum(counts) if counts else -1

    def _insert_uploaded(self, insert: exp.Insert, sets: list[dict[str, Any]]) -> None:
        names = _marker_names(insert)
        keys = {name.lower(): name for name in names}
        for index, values in enumerate(sets):
            given = {k.lower() for k in values}
            if given != set(keys):
                missing = sorted(set(keys) - given)
                extra = sorted(given - set(keys))
                raise ProgrammingError(
                    "VALIDATION_ERROR",
                    f"Parameter set {index} does not match the statement's markers"
                    + (f"; no value for :{', :'.join(missing)}" if missing else "")
                    + (f"; no marker for {', '.join(extra)}" if extra else "")
                    + ".",
                    {"field": "parameters", "index": index},
                )
        lowered = [{k.lower(): v for k, v in values.items()} for values in sets]
        # Each marker's values are an uploaded column of the marker's name (Spark's messages
        # about a value that does not fit its target column then name the marker).
        columns: dict[str, pa.Array] = {}
        nulls: set[str] = set()
        for key, name in keys.items():
            data = [values[key] for values in lowered]
            if all(value is None for value in data):
                nulls.add(key)  # a NULL literal: an all-null column has no type to upload
                continue
            try:
                columns[name] = pa.array(data)
            except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
                raise DataError(
                    "VALIDATION_ERROR",
                    f"The values of :{keys[key]} are not of one type: {exc}",
                    {"field": f"parameters.{keys[key]}"},
                ) from exc
        table = pa.table(columns) if columns else pa.table({"_": pa.array([0] * len(sets))})
        path = self._env._register_data(table, None)
        try:
            statement = insert.copy()
            for marker in list(statement.find_all(exp.Placeholder)):
                key = str(marker.this).lower()
                marker.replace(exp.Null() if key in nulls else exp.column(keys[key], quoted=True))
            values_node = statement.expression
            assert isinstance(values_node, exp.Values)
            row = values_node.expressions[0]
            items = row.expressions if isinstance(row, exp.Tuple) else [row]
            source = sqlglot.parse_one(path, into=exp.Table, dialect=DIALECT)
            statement.set("expression", exp.select(*items).from_(source))
            self._run(statement.sql(dialect=DIALECT), None)
        except BaseException:
            with suppress(_errors.TesseraError):  # the insert's own error is the one to see
                self._env.drop_temporary_table(path)
            raise
        self._env.drop_temporary_table(path)

    def callproc(self, procname: str, parameters: Sequence[Any] = ()) -> Any:
        """Tessera has no stored procedures."""
        self._check_open()
        raise NotSupportedError("UNSUPPORTED", "Tessera has no stored procedures.")

    def nextset(self) -> bool | None:
        """A statement has one result set."""
        self._check_open()
        return None

    def cancel(self) -> None:
        """Cancel the statement's job if it still runs (an extension); called from another
        thread while ``execute`` waits, that ``execute`` raises ``OperationalError``
        (``CANCELED``), as PyHive's ``cancel`` does for Superset's "stop"."""
        self._check_open()
        if self._result is not None:
            with _translated():
                self._result.cancel()

    # --- rows ----------------------------------------------------------------------------

    def _next_rows(self) -> Iterator[tuple[Any, ...]]:
        assert self._result is not None
        with _translated():
            self._reader = self._result.open_stream()
        for batch in self._reader:
            columns = [column.to_pylist() for column in batch.columns]
            yield from zip(*columns, strict=True)
        self._close_reader()

    def _fetch(self, size: int | None) -> list[tuple[Any, ...]]:
        self._check_open()
        if self._description is None:
            raise InterfaceError("NO_RESULT", "There is no result to fetch: execute a query first.")
        with _translated():
            if size is None:
                rows = list(self._rows)
            else:
                rows = [row for _, row in zip(range(size), self._rows, strict=False)]
        self._rownumber = (self._rownumber or 0) + len(rows)
        return rows

    def fetchone(self) -> tuple[Any, ...] | None:
        """The next row, or None at the end."""
        rows = self._fetch(1)
        return rows[0] if rows else None

    def fetchmany(self, size: int | None = None) -> list[tuple[Any, ...]]:
        """The next ``size`` rows (``arraysize`` by default); fewer at the end."""
        return self._fetch(self.arraysize if size is None else max(0, int(size)))

    def fetchall(self) -> list[tuple[Any, ...]]:
        """Every remaining row."""
        return self._fetch(None)

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return self

    def __next__(self) -> tuple[Any, ...]:
        row = self.fetchone()
        if row is None:
            raise StopIteration
        return row

    def setinputsizes(self, sizes: Any) -> None:
        """Nothing to set: values carry their types."""

    def setoutputsize(self, size: Any, column: int | None = None) -> None:
        """Nothing to set: results are Arrow."""

    def _close_reader(self) -> None:
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.close()

    def close(self) -> None:
        """Close the cursor; later use raises InterfaceError."""
        self._close_reader()
        self._rows = iter(_EMPTY)
        self._closed = True

    def __enter__(self) -> Cursor:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _is_write(job: Mapping[str, Any]) -> bool:
    return job.get("kind") in ("insert", "ctas", "statement_set") or bool(
        job.get("kind") == "statement" and job.get("target")
    )


_WIRE: dict[type, Callable[[Any], Any]] = {
    # What JSON carries as it is; other values travel as Spark-castable strings.
    datetime.datetime: lambda v: v.isoformat(sep=" "),
    datetime.date: lambda v: v.isoformat(),
}


def _wire_value(name: str, value: Any) -> Any:
    """A parameter value as the REST API takes it (string, number, boolean or null)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    for kind, convert in _WIRE.items():
        if isinstance(value, kind):
            return convert(value)
    from decimal import Decimal

    if isinstance(value, Decimal):
        return str(value)
    raise ProgrammingError(
        "VALIDATION_ERROR",
        f"The value of :{name} is a {type(value).__name__}; a query's parameters are "
        "strings, numbers, booleans, dates, timestamps, decimals or None.",
        {"field": f"parameters.{name}"},
    )


def _insert_values(sql: str) -> exp.Insert | None:
    """The statement as an ``INSERT … VALUES (…)`` of one row whose values use markers, or
    None for any other statement (which then goes to the server as it is)."""
    try:
        parsed = [p for p in sqlglot.parse(sql, dialect=DIALECT) if p is not None]
    except SqlglotParseError:
        return None  # the server says what is wrong with it
    if len(parsed) != 1 or not isinstance(parsed[0], exp.Insert):
        return None
    values = parsed[0].expression
    if not isinstance(values, exp.Values) or len(values.expressions) != 1:
        return None
    if not list(values.find_all(exp.Placeholder)):
        return None
    if any(
        p.this is None or not isinstance(p.this, str) for p in parsed[0].find_all(exp.Placeholder)
    ):
        raise NotSupportedError("UNSUPPORTED", "paramstyle is 'named': use :name markers, not '?'.")
    outside = [p for p in parsed[0].find_all(exp.Placeholder) if not _within(p, values)]
    if outside:
        raise NotSupportedError(
            "UNSUPPORTED",
            "Parameters of an INSERT are taken in its VALUES row only, not in its target.",
        )
    return parsed[0]


def _within(node: exp.Expression, ancestor: exp.Expression) -> bool:
    parent = node.parent
    while parent is not None:
        if parent is ancestor:
            return True
        parent = parent.parent
    return False


def _marker_names(insert: exp.Insert) -> list[str]:
    return list(dict.fromkeys(str(p.this) for p in insert.find_all(exp.Placeholder)))


__all__ = [
    "BINARY",
    "BOOLEAN",
    "DATETIME",
    "NUMBER",
    "ROWID",
    "STRING",
    "Binary",
    "Connection",
    "Cursor",
    "DataError",
    "DatabaseError",
    "Date",
    "DateFromTicks",
    "Error",
    "IntegrityError",
    "InterfaceError",
    "InternalError",
    "NotSupportedError",
    "OperationalError",
    "ProgrammingError",
    "Time",
    "TimeFromTicks",
    "Timestamp",
    "TimestampFromTicks",
    "Warning",
    "apilevel",
    "connect",
    "paramstyle",
    "threadsafety",
]
