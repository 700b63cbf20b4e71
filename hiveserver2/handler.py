"""The TCLIService calls of one signed-in connection (``TCLIService.Iface``).

Sessions are Tessera sessions (``sessions.services``): the session handle's ``guid`` is the
session's id, served only to its user. Every statement goes the REST path,
``sessions.statements.statement_submit`` (planner, guard, grants, job, queue): its operation
is its job. Metadata calls answer from the catalog (``hiveserver2.metadata``). Any error is an
error ``TStatus`` (``hiveserver2.errors``), never a dropped connection.
"""

from __future__ import annotations

import functools
import logging
import time
import uuid
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Any, TypeVar

from django.contrib.auth.models import User
from django.db import close_old_connections

from catalog.access import access_for
from core import jobstate
from core.errors import CoreError, NotFound
from core.session_properties import WAIT_MAX_SECONDS
from hiveserver2 import metadata, rowsets
from hiveserver2.auth import SignedIn
from hiveserver2.errors import (
    InvalidHandle,
    NotAuthenticated,
    ok,
    status_of,
    status_of_exception,
)
from hiveserver2.operations import Answer, Registry, handle_of, keys_of
from hiveserver2.protocol import NEWEST, ttypes
from jobs.models import Job, Session
from jobs.selectors import wait_for
from jobs.services import job_cancel
from results import store
from results.selectors import require_result
from sessions import services as session_services
from sessions.statements import statement_submit
from webapp.rows import RowReader

# The Spark the workers run, from the installed wheel's metadata (no pyspark import here;
# a web-only install may not have the wheel at all).
try:
    SPARK_VERSION = version("pyspark")
except PackageNotFoundError:
    SPARK_VERSION = "4"

log = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])
OP = ttypes.TOperationType
STATES = {
    jobstate.CREATED: ttypes.TOperationState.PENDING_STATE,
    jobstate.RUNNING: ttypes.TOperationState.RUNNING_STATE,
    jobstate.FINISHED: ttypes.TOperationState.FINISHED_STATE,
    jobstate.FAILED: ttypes.TOperationState.ERROR_STATE,
    jobstate.CANCELED: ttypes.TOperationState.CANCELED_STATE,
}
MAX_FETCH_ROWS = 100_000
# Each call on an operation reads its job first: compiled once (webapp.rows).
_JOB_IN_SESSION = RowReader(Job, "id", "user_id", "session_id")
INTERNAL = {"code": "INTERNAL_ERROR", "message": "Internal error; it was logged.", "details": {}}


def answers(response: Any) -> Callable[[F], F]:
    """Serve a call: Django's connection checked and the user read again first (one call is
    one request), any error as ``response``'s error status (unexpected ones logged, and told
    as INTERNAL_ERROR)."""

    def wrap(method: F) -> F:
        @functools.wraps(method)
        def call(self: Handler, req: Any) -> Any:
            close_old_connections()
            try:
                self._user = self.signed_in.current()
                return method(self, req)
            except CoreError as exc:
                return response(status=status_of_exception(exc))
            except Exception:
                log.exception("HiveServer2 %s failed", method.__name__)
                return response(status=status_of(INTERNAL))

        return call  # type: ignore[return-value]

    return wrap


class Handler:
    """The calls of one connection, made as the user who signed in on it."""

    def __init__(self, signed_in: SignedIn, registry: Registry) -> None:
        self.signed_in = signed_in
        self._user: User | None = None  # read again at each call (``answers``)
        self.registry = registry

    @property
    def user(self) -> User:
        if self._user is None:
            raise NotAuthenticated("Not signed in.")
        return self._user

    # --- sessions ------------------------------------------------------------------------------

    def _session(self, handle: Any) -> Session:
        guid = getattr(getattr(handle, "sessionId", None), "guid", None)
        if not isinstance(guid, bytes) or len(guid) != 16:
            raise InvalidHandle("Invalid SessionHandle.")
        try:
            return session_services.session_get(user=self.user, session_id=uuid.UUID(bytes=guid))
        except NotFound:
            raise InvalidHandle("Invalid SessionHandle: no such session of yours.") from None

    @answers(ttypes.TOpenSessionResp)
    def OpenSession(self, req: Any) -> Any:
        config = dict(req.configuration or {})
        # Hive's JDBC driver sends the URL's `?use:catalog=…` as `set:hiveconf:use:catalog`.
        catalog = config.get("use:catalog") or config.get("set:hiveconf:use:catalog") or None
        database = config.get("use:database") or None
        if catalog:
            session, _ = session_services.session_open(user=self.user, current_catalog=catalog)
        else:
            session, _ = session_services.session_open(user=self.user, start="workspace")
        if database == "default" and session.current_catalog is None:
            # What Hive's JDBC driver sends when its URL names no database: with no current
            # catalog there is no `default` to move to, and the session stays where it started.
            database = None
        if database:
            try:
                session_services.session_update(
                    session=session, changes={"current_database": database}
                )
            except CoreError:
                session_services.session_delete(session=session)
                raise
        version = min(int(req.client_protocol or 0), NEWEST)
        handle = ttypes.TSessionHandle(
            sessionId=ttypes.THandleIdentifier(guid=session.pk.bytes, secret=uuid.uuid4().bytes)
        )
        return ttypes.TOpenSessionResp(
            status=ok(),
            serverProtocolVersion=version,
            sessionHandle=handle,
            configuration={},
        )

    @answers(ttypes.TCloseSessionResp)
    def CloseSession(self, req: Any) -> Any:
        session = self._session(req.sessionHandle)
        self.registry.forget_session(session.pk)
        session_services.session_delete(session=session)
        return ttypes.TCloseSessionResp(status=ok())

    @answers(ttypes.TGetInfoResp)
    def GetInfo(self, req: Any) -> Any:
        self._session(req.sessionHandle)
        info = ttypes.TGetInfoType
        values = {
            info.CLI_SERVER_NAME: "Tessera",
            info.CLI_DBMS_NAME: "Spark SQL",
            info.CLI_DBMS_VER: SPARK_VERSION,
            info.CLI_IDENTIFIER_QUOTE_CHAR: "`",
        }
        if req.infoType not in values:
            raise CoreError(f"GetInfo {req.infoType} is not answered by this server.")
        return ttypes.TGetInfoResp(
            status=ok(), infoValue=ttypes.TGetInfoValue(stringValue=values[req.infoType])
        )

    # --- statements ----------------------------------------------------------------------------

    @answers(ttypes.TExecuteStatementResp)
    def ExecuteStatement(self, req: Any) -> Any:
        session = self._session(req.sessionHandle)
        sql = req.statement if isinstance(req.statement, str) else ""
        job = statement_submit(session=session, sql=sql, wait=0)
        if not req.runAsync:
            job = _until_ended(job)
            if job.status != jobstate.FINISHED:
                return ttypes.TExecuteStatementResp(status=status_of(_error_of(job)))
        return ttypes.TExecuteStatementResp(
            status=ok(), operationHandle=handle_of(job.pk, session.pk, OP.EXECUTE_STATEMENT)
        )

    def _operation(self, handle: Any) -> tuple[uuid.UUID, Answer | Job]:
        key, session_id = keys_of(handle)
        answer = self.registry.answer(key, self.user.pk, session_id)
        if answer is not None:
            return key, answer
        job = _JOB_IN_SESSION.get(key, self.user.pk, session_id)
        if job is None:
            raise InvalidHandle("Invalid OperationHandle: no such operation in your sessions.")
        return key, job

    @answers(ttypes.TGetOperationStatusResp)
    def GetOperationStatus(self, req: Any) -> Any:
        _, op = self._operation(req.operationHandle)
        if isinstance(op, Answer):
            finished = ttypes.TOperationState.FINISHED_STATE
            return ttypes.TGetOperationStatusResp(
                status=ok(), operationState=finished, hasResultSet=True
            )
        error = _error_of(op) if op.status in (jobstate.FAILED, jobstate.CANCELED) else None
        return ttypes.TGetOperationStatusResp(
            status=ok(),
            operationState=STATES[op.status],
            sqlState=None if error is None else status_of(error).sqlState,
            errorMessage=None if error is None else status_of(error).errorMessage,
            errorCode=None if error is None else 0,
            operationStarted=_millis(op.started_at or op.created_at),
            operationCompleted=_millis(op.finished_at),
            hasResultSet=True,
        )

    @answers(ttypes.TCancelOperationResp)
    def CancelOperation(self, req: Any) -> Any:
        _, op = self._operation(req.operationHandle)
        if isinstance(op, Job) and op.status not in jobstate.TERMINAL:
            job_cancel(user=self.user, job=op)
        return ttypes.TCancelOperationResp(status=ok())

    @answers(ttypes.TCloseOperationResp)
    def CloseOperation(self, req: Any) -> Any:
        key, _ = self._operation(req.operationHandle)
        self.registry.forget(key)
        return ttypes.TCloseOperationResp(status=ok())

    @answers(ttypes.TGetLogResp)
    def GetLog(self, req: Any) -> Any:
        """An empty log for the caller's own operation (impyla asks for it before closing
        each one); operation logs are not kept."""
        self._operation(req.operationHandle)
        return ttypes.TGetLogResp(status=ok(), log="")

    @answers(ttypes.TGetResultSetMetadataResp)
    def GetResultSetMetadata(self, req: Any) -> Any:
        _, op = self._operation(req.operationHandle)
        schema = rowsets.table_schema([(n, t, None) for n, t in _columns(op)])
        return ttypes.TGetResultSetMetadataResp(status=ok(), schema=schema)

    @answers(ttypes.TFetchResultsResp)
    def FetchResults(self, req: Any) -> Any:
        key, op = self._operation(req.operationHandle)
        columns = _columns(op)
        types = [rowsets.type_id(t) for _, t in columns]
        if req.fetchType == 1:  # the operation's log: none is kept
            empty = rowsets.row_set([], [rowsets.T.STRING_TYPE], 0)
            return ttypes.TFetchResultsResp(status=ok(), hasMoreRows=False, results=empty)
        first = req.orientation == ttypes.TFetchOrientation.FETCH_FIRST
        offset = 0 if first else self.registry.position(key)
        limit = max(1, min(int(req.maxRows or 1000), MAX_FETCH_ROWS))
        if isinstance(op, Answer):
            rows = op.rows[offset : offset + limit]
            results = rowsets.row_set(rows, types, offset)
            total = len(op.rows)
            fetched = len(rows)
        else:
            table = store.open_result(op.pk).read_all() if columns else None
            total = 0 if table is None else table.num_rows
            page = None if table is None else table.slice(offset, limit)
            fetched = 0 if page is None else page.num_rows
            results = (
                rowsets.row_set([], types, offset)
                if page is None
                else rowsets.arrow_row_set(page, types, offset)
            )
        self.registry.move(key, offset + fetched)
        return ttypes.TFetchResultsResp(
            status=ok(), hasMoreRows=offset + fetched < total, results=results
        )

    # --- metadata --------------------------------------------------------------------------------

    def _meta(self, response: Any, req: Any, kind: int, read: Callable[[Session], Any]) -> Any:
        """A metadata call's answer, kept as an operation of the session (checked first: no
        catalog read for a handle that is not the caller's)."""
        session = self._session(req.sessionHandle)
        columns, rows = read(session)
        key = self.registry.keep(Answer(self.user.pk, session.pk, columns, rows, kind))
        return response(status=ok(), operationHandle=handle_of(key, session.pk, kind))

    @answers(ttypes.TGetTypeInfoResp)
    def GetTypeInfo(self, req: Any) -> Any:
        read = lambda _: metadata.get_type_info()  # noqa: E731
        return self._meta(ttypes.TGetTypeInfoResp, req, OP.GET_TYPE_INFO, read)

    @answers(ttypes.TGetCatalogsResp)
    def GetCatalogs(self, req: Any) -> Any:
        read = lambda _: metadata.get_catalogs(access_for(self.user))  # noqa: E731
        return self._meta(ttypes.TGetCatalogsResp, req, OP.GET_CATALOGS, read)

    @answers(ttypes.TGetSchemasResp)
    def GetSchemas(self, req: Any) -> Any:
        def read(_: Session) -> Any:
            return metadata.get_schemas(access_for(self.user), req.catalogName, req.schemaName)

        return self._meta(ttypes.TGetSchemasResp, req, OP.GET_SCHEMAS, read)

    @answers(ttypes.TGetTablesResp)
    def GetTables(self, req: Any) -> Any:
        def read(session: Session) -> Any:
            access = access_for(self.user)
            return metadata.get_tables(
                access, session, req.catalogName, req.schemaName, req.tableName, req.tableTypes
            )

        return self._meta(ttypes.TGetTablesResp, req, OP.GET_TABLES, read)

    @answers(ttypes.TGetTableTypesResp)
    def GetTableTypes(self, req: Any) -> Any:
        read = lambda _: metadata.get_table_types()  # noqa: E731
        return self._meta(ttypes.TGetTableTypesResp, req, OP.GET_TABLE_TYPES, read)

    @answers(ttypes.TGetColumnsResp)
    def GetColumns(self, req: Any) -> Any:
        def read(session: Session) -> Any:
            access = access_for(self.user)
            return metadata.get_columns(
                access, session, req.catalogName, req.schemaName, req.tableName, req.columnName
            )

        return self._meta(ttypes.TGetColumnsResp, req, OP.GET_COLUMNS, read)

    @answers(ttypes.TGetFunctionsResp)
    def GetFunctions(self, req: Any) -> Any:
        def read(_: Session) -> Any:
            access = access_for(self.user)
            return metadata.get_functions(access, req.catalogName, req.schemaName, req.functionName)

        return self._meta(ttypes.TGetFunctionsResp, req, OP.GET_FUNCTIONS, read)

    @answers(ttypes.TGetPrimaryKeysResp)
    def GetPrimaryKeys(self, req: Any) -> Any:
        def read(_: Session) -> Any:
            access = access_for(self.user)
            return metadata.get_primary_keys(access, req.catalogName, req.schemaName, req.tableName)

        return self._meta(ttypes.TGetPrimaryKeysResp, req, OP.UNKNOWN, read)

    @answers(ttypes.TGetCrossReferenceResp)
    def GetCrossReference(self, req: Any) -> Any:
        read = lambda _: metadata.get_cross_reference()  # noqa: E731
        return self._meta(ttypes.TGetCrossReferenceResp, req, OP.UNKNOWN, read)

    # --- not served ------------------------------------------------------------------------------

    def _unsupported(self, response: Any, what: str) -> Any:
        error = {"code": "UNSUPPORTED_STATEMENT", "message": f"{what} is not served here."}
        return response(status=status_of(error))

    def GetDelegationToken(self, req: Any) -> Any:
        return self._unsupported(ttypes.TGetDelegationTokenResp, "GetDelegationToken")

    def CancelDelegationToken(self, req: Any) -> Any:
        return self._unsupported(ttypes.TCancelDelegationTokenResp, "CancelDelegationToken")

    def RenewDelegationToken(self, req: Any) -> Any:
        return self._unsupported(ttypes.TRenewDelegationTokenResp, "RenewDelegationToken")


def _columns(op: Answer | Job) -> list[tuple[str, str]]:
    if isinstance(op, Answer):
        return list(op.columns)
    meta = require_result(op) if op.result or op.status != jobstate.FINISHED else {}
    return [(str(c["name"]), str(c.get("data_type") or "STRING")) for c in meta.get("columns", [])]


def _error_of(job: Job) -> dict[str, Any]:
    return dict(job.error or INTERNAL)


def _millis(when: Any) -> int | None:
    return None if when is None else int(when.timestamp() * 1000)


def _until_ended(job: Job) -> Job:
    """The job once it has ended, as REST's ``wait`` holds a request: woken by its
    notifications, for as long as it runs (a synchronous HS2 call has no deadline)."""
    while job.status not in jobstate.TERMINAL:
        before = time.monotonic()
        job = wait_for([job.pk], WAIT_MAX_SECONDS)[0]
        if job.status not in jobstate.TERMINAL and time.monotonic() - before < 0.05:
            time.sleep(0.2)  # this process holds its most requests: poll instead
    return job
