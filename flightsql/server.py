"""The Arrow Flight SQL endpoint: ``pyarrow.flight``'s server with Flight SQL's commands.

Every call is signed in by ``flightsql.auth`` (a bearer token naming a user and the Tessera
session opened at sign-in). ``GetFlightInfo`` of a ``CommandStatementQuery`` submits the
statement by the REST path (``sessions.statements.statement_submit``: planner, guard, grants,
engines, job), waits for its job to end — a client that drops the call cancels the job — and
answers with a ticket naming the job; ``DoGet`` of that ticket streams the job's Arrow result
file, served only to the job's user in the bearer's session (the job row says so: a forged
or another user's ticket names no job of the caller's). The metadata commands' tickets are
the commands themselves, answered at ``DoGet`` by ``flightsql.metadata`` with the caller's
grants of that moment. Flight's session actions (CloseSession, Set/GetSessionOptions) are
``flightsql.session_actions``'s, on the bearer's session; TLS, when configured, is
``flightsql.tls``'s. Tessera's errors travel as Flight errors whose message starts with the
REST API's code (``[PERMISSION_DENIED] …``).
"""

from __future__ import annotations

import functools
import logging
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.flight as flight  # type: ignore[import-untyped]
from django.conf import settings
from django.contrib.auth.models import User
from django.db import close_old_connections
from django.db import connection as db_connection
from google.protobuf import any_pb2
from google.protobuf.message import DecodeError, Message

from catalog.access import access_for
from core import jobstate
from core.errors import CoreError, NotFound
from flightsql import metadata, session_actions
from flightsql.auth import MIDDLEWARE, AuthFactory, Bearers, CallAuth, NoHandshake
from flightsql.prepared import Prepared, parameters_of
from flightsql.proto import Flight_pb2 as wire
from flightsql.proto import FlightSql_pb2 as sql
from flightsql.tls import certificates
from hiveserver2.errors import shown
from jobs.models import Job, Session
from jobs.selectors import wait_for
from jobs.services import job_cancel
from results import store
from sessions import services as session_services
from sessions.statements import statement_submit

log = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])
PREFIX = "type.googleapis.com/arrow.flight.protocol.sql."
MAX_COMMAND_BYTES = 4 * 1024**2
WAIT_SLICE_SECONDS = 1.0
METADATA = {
    "CommandGetCatalogs": sql.CommandGetCatalogs,
    "CommandGetDbSchemas": sql.CommandGetDbSchemas,
    "CommandGetTables": sql.CommandGetTables,
    "CommandGetTableTypes": sql.CommandGetTableTypes,
    "CommandGetPrimaryKeys": sql.CommandGetPrimaryKeys,
    "CommandGetSqlInfo": sql.CommandGetSqlInfo,
}
UNAUTHENTICATED = {"NOT_AUTHENTICATED", "INVALID_CREDENTIALS"}
UNAUTHORIZED = {"PERMISSION_DENIED", "FORBIDDEN", "FORBIDDEN_SQL", "INVALID_HANDLE"}
INVALID = {
    "PARSE_ERROR",
    "VALIDATION_ERROR",
    "UNSUPPORTED_STATEMENT",
    "STREAMING_UNSUPPORTED",
    "STATEMENT_TOO_LARGE",
    "STATEMENT_TOO_DEEP",
}
BUSY = {"TOO_MANY_JOBS", "TOO_MANY_REQUESTS", "TOO_MANY_SESSIONS", "TOO_MANY_STREAMS"}


def flight_error(error: dict[str, Any]) -> Any:
    """A job's or a refusal's ``{"code", "message", "details"}`` as the Flight error a client
    tells apart by its gRPC status, with ``[CODE] message`` as its text."""
    code, text = str(error.get("code")), shown(error)
    if code in UNAUTHENTICATED:
        return flight.FlightUnauthenticatedError(text)
    if code in UNAUTHORIZED:
        return flight.FlightUnauthorizedError(text)
    if code in INVALID:
        return pa.ArrowInvalid(text)
    if code == "CANCELED":
        return flight.FlightCancelledError(text)
    if code in BUSY:
        return flight.FlightUnavailableError(text)
    return flight.FlightServerError(text)


def _error_of(exc: CoreError) -> Any:
    return flight_error({"code": exc.code, "message": exc.message, "details": exc.details})


def served(method: F) -> F:
    """One call: Django's connection checked, Tessera's errors as Flight errors, anything
    unexpected logged and told as INTERNAL_ERROR."""

    @functools.wraps(method)
    def call(self: FlightSqlServer, context: Any, *args: Any) -> Any:
        close_old_connections()
        try:
            return method(self, context, *args)
        except CoreError as exc:
            raise _error_of(exc) from None
        except (flight.FlightError, pa.ArrowException, NotImplementedError):
            raise
        except Exception:
            log.exception("Flight SQL %s failed", method.__name__)
            raise flight.FlightServerError(
                "[INTERNAL_ERROR] Internal error; it was logged."
            ) from None
        finally:
            # gRPC's threads are many and long-lived: none keeps a database connection open.
            db_connection.close()

    return call  # type: ignore[return-value]


def _command(data: bytes) -> tuple[str, bytes]:
    """The Flight SQL message a descriptor's command or a ticket carries (an ``Any``)."""
    if len(data) > MAX_COMMAND_BYTES:
        raise pa.ArrowInvalid("[STATEMENT_TOO_LARGE] The command is too large.")
    try:
        wrapped = any_pb2.Any.FromString(data)
    except DecodeError:
        raise pa.ArrowInvalid("[VALIDATION_ERROR] Not a Flight SQL command.") from None
    if not wrapped.type_url.startswith(PREFIX):
        raise pa.ArrowInvalid("[VALIDATION_ERROR] Not a Flight SQL command.")
    return wrapped.type_url[len(PREFIX) :], wrapped.value


def _parse(kind: type[Message], value: bytes) -> Any:
    try:
        return kind.FromString(value)
    except DecodeError:
        raise pa.ArrowInvalid(f"[VALIDATION_ERROR] A malformed {kind.__name__}.") from None


def _packed(message: Message) -> bytes:
    wrapped = any_pb2.Any()
    wrapped.Pack(message)
    return bytes(wrapped.SerializeToString())


class FlightSqlServer(flight.FlightServerBase):  # type: ignore[misc]
    """``serve`` blocks; ``shutdown`` stops it. ``scheme``: ``grpc``, or ``grpc+tls`` when
    TESSERA_FLIGHT_SQL_TLS_CERT and _KEY are set (``flightsql.tls``; a setting that does
    not fit is ``ImproperlyConfigured`` here, before any port is opened)."""

    def __init__(self, host: str | None = None, port: int | None = None) -> None:
        self.host = settings.TESSERA_FLIGHT_SQL_BIND if host is None else host
        wanted = settings.TESSERA_FLIGHT_SQL_PORT if port is None else port
        tls = certificates(
            settings.TESSERA_FLIGHT_SQL_TLS_CERT, settings.TESSERA_FLIGHT_SQL_TLS_KEY
        )
        self.scheme = "grpc+tls" if tls else "grpc"
        self.bearers = Bearers(settings.TESSERA_FLIGHT_SQL_IDLE_SECONDS)
        self.prepared = Prepared()
        super().__init__(
            f"{self.scheme}://{self.host}:{wanted}",
            auth_handler=NoHandshake(),
            tls_certificates=tls or None,
            middleware={MIDDLEWARE: AuthFactory(self.bearers)},
        )

    # --- who ---------------------------------------------------------------------------------

    def _auth(self, context: Any) -> CallAuth:
        auth: CallAuth | None = context.get_middleware(MIDDLEWARE)
        if auth is None:
            raise flight.FlightUnauthenticatedError("[NOT_AUTHENTICATED] Not signed in.")
        return auth

    def _caller(self, context: Any) -> tuple[User, Session]:
        auth = self._auth(context)
        user = auth.bearer.signed_in.current()
        try:
            session = session_services.session_get(user=user, session_id=auth.bearer.session_id)
        except NotFound:
            raise flight.FlightUnauthenticatedError(
                "[NOT_AUTHENTICATED] This sign-in's session was closed; sign in again."
            ) from None
        return user, session

    def _job(self, user: User, session: Session, handle: bytes) -> Job:
        if len(handle) != 16:
            raise flight.FlightUnauthorizedError("[INVALID_HANDLE] Invalid ticket.")
        job = Job.objects.filter(
            pk=uuid.UUID(bytes=handle), user_id=user.pk, session_id=session.pk
        ).first()
        if job is None:
            raise flight.FlightUnauthorizedError(
                "[INVALID_HANDLE] Invalid ticket: no such statement in this sign-in's session."
            )
        return job

    # --- calls -------------------------------------------------------------------------------

    @served
    def get_flight_info(self, context: Any, descriptor: Any) -> flight.FlightInfo:
        user, session = self._caller(context)
        if descriptor.descriptor_type != flight.DescriptorType.CMD:
            raise pa.ArrowInvalid("[VALIDATION_ERROR] Only command descriptors are served.")
        name, value = _command(descriptor.command)
        if name == "CommandStatementQuery":
            query = _parse(sql.CommandStatementQuery, value)
            if query.HasField("transaction_id"):
                raise NotImplementedError("[UNSUPPORTED_STATEMENT] Transactions are not served.")
            job = self._run(context, session, query.query)
            ticket = _packed(sql.TicketStatementQuery(statement_handle=job.pk.bytes))
            schema = self._result_schema(job)
        elif name == "CommandPreparedStatementQuery":
            handle = _parse(sql.CommandPreparedStatementQuery, value).prepared_statement_handle
            kept = self.prepared.get(handle, user, session)
            job = self._run(context, session, kept.query, kept.parameters)
            ticket = _packed(sql.TicketStatementQuery(statement_handle=job.pk.bytes))
            schema = self._result_schema(job)
        elif name in METADATA:
            command = _parse(METADATA[name], value)
            ticket = descriptor.command
            schema = self._answer(user, session, name, command).schema
        else:
            raise NotImplementedError(f"[UNSUPPORTED_STATEMENT] {name} is not served here.")
        endpoint = flight.FlightEndpoint(ticket, [])
        return flight.FlightInfo(schema, descriptor, [endpoint], -1, -1)

    @served
    def get_schema(self, context: Any, descriptor: Any) -> flight.SchemaResult:
        user, session = self._caller(context)
        name, value = _command(descriptor.command)
        if name not in METADATA:
            raise NotImplementedError(f"[UNSUPPORTED_STATEMENT] GetSchema of {name}.")
        answer = self._answer(user, session, name, _parse(METADATA[name], value))
        return flight.SchemaResult(answer.schema)

    @served
    def do_put(self, context: Any, descriptor: Any, reader: Any, writer: Any) -> None:
        user, session = self._caller(context)
        name, value = _command(descriptor.command)
        if name == "CommandPreparedStatementQuery":
            handle = _parse(sql.CommandPreparedStatementQuery, value).prepared_statement_handle
            kept = self.prepared.get(handle, user, session)
            kept.parameters = parameters_of(reader)
            return
        raise NotImplementedError(f"[UNSUPPORTED_STATEMENT] DoPut of {name} is not served.")

    @served
    def do_get(self, context: Any, ticket: Any) -> flight.FlightDataStream:
        user, session = self._caller(context)
        name, value = _command(ticket.ticket)
        if name == "TicketStatementQuery":
            handle = _parse(sql.TicketStatementQuery, value).statement_handle
            return self._stream(self._job(user, session, handle))
        if name in METADATA:
            answer = self._answer(user, session, name, _parse(METADATA[name], value))
            return flight.RecordBatchStream(answer)
        raise pa.ArrowInvalid("[INVALID_HANDLE] Invalid ticket.")

    def list_actions(self, context: Any) -> list[tuple[str, str]]:
        return [
            ("CreatePreparedStatement", "Prepare a statement (named parameters: DoPut)."),
            ("ClosePreparedStatement", "Forget a prepared statement."),
            ("CancelFlightInfo", "Cancel the statement a FlightInfo names."),
            ("CancelQuery", "Flight SQL's older cancel (ActionCancelQueryRequest)."),
            *session_actions.ACTIONS,
        ]

    @served
    def do_action(self, context: Any, action: Any) -> Iterator[bytes]:
        body = action.body.to_pybytes() if action.body is not None else b""
        if len(body) > MAX_COMMAND_BYTES:
            raise pa.ArrowInvalid("[STATEMENT_TOO_LARGE] The action is too large.")
        if action.type == "CloseSession":
            _parse(wire.CloseSessionRequest, body)
            return iter([self._close_session(context).SerializeToString()])
        user, session = self._caller(context)
        if action.type == "SetSessionOptions":
            request = _parse(wire.SetSessionOptionsRequest, body)
            return iter([session_actions.set_options(session, request).SerializeToString()])
        if action.type == "GetSessionOptions":
            _parse(wire.GetSessionOptionsRequest, body)
            return iter([session_actions.get_options(session).SerializeToString()])
        if action.type == "CancelFlightInfo":
            info = _parse(wire.CancelFlightInfoRequest, body).info
            status = self._cancel(user, session, info)
            return iter([wire.CancelFlightInfoResult(status=status).SerializeToString()])
        if action.type == "CreatePreparedStatement":
            request = _parse(sql.ActionCreatePreparedStatementRequest, _command(body)[1])
            if request.HasField("transaction_id"):
                raise NotImplementedError("[UNSUPPORTED_STATEMENT] Transactions are not served.")
            handle = self.prepared.keep(request.query, user, session)
            result = sql.ActionCreatePreparedStatementResult(prepared_statement_handle=handle)
            return iter([_packed(result)])
        if action.type == "ClosePreparedStatement":
            request = _parse(sql.ActionClosePreparedStatementRequest, _command(body)[1])
            self.prepared.forget(request.prepared_statement_handle, user, session)
            return iter([])
        if action.type == "CancelQuery":
            request = _parse(sql.ActionCancelQueryRequest, _command(body)[1])
            status = self._cancel(user, session, _parse(wire.FlightInfo, request.info))
            legacy: dict[Any, Any] = {
                wire.CANCEL_STATUS_CANCELLED: sql.ActionCancelQueryResult.CANCEL_RESULT_CANCELLED,
                wire.CANCEL_STATUS_CANCELLING: sql.ActionCancelQueryResult.CANCEL_RESULT_CANCELLING,
            }
            result = sql.ActionCancelQueryResult(
                result=legacy.get(status, sql.ActionCancelQueryResult.CANCEL_RESULT_NOT_CANCELLABLE)
            )
            return iter([_packed(result)])
        raise NotImplementedError(f"[UNSUPPORTED_STATEMENT] The action {action.type!r}.")

    # --- helpers ------------------------------------------------------------------------------

    def _run(
        self, context: Any, session: Session, text: str, parameters: dict[str, Any] | None = None
    ) -> Job:
        """The statement's job once it has ended; canceled when the client drops the call."""
        job = statement_submit(session=session, sql=text, wait=0, parameters=parameters)
        while job.status not in jobstate.TERMINAL:
            if context.is_cancelled():
                log.info("Flight SQL client left; canceling job %s", job.pk)
                job_cancel(user=session.user, job=job)
                raise flight.FlightCancelledError("[CANCELED] The client canceled the call.")
            before = time.monotonic()
            job = wait_for([job.pk], WAIT_SLICE_SECONDS)[0]
            if job.status not in jobstate.TERMINAL and time.monotonic() - before < 0.05:
                time.sleep(0.2)
        if job.status != jobstate.FINISHED:
            default = {"code": "INTERNAL_ERROR", "message": "The job failed.", "details": {}}
            raise flight_error(dict(job.error or default))
        return job

    def _result_schema(self, job: Job) -> pa.Schema:
        if not job.result:
            return pa.schema([])
        return store.open_result(job.pk).schema

    def _stream(self, job: Job) -> flight.FlightDataStream:
        if job.status != jobstate.FINISHED:
            raise flight_error(
                {"code": "RESULT_NOT_READY", "message": f"Job {job.pk} is {job.status}."}
            )
        if not job.result:
            return flight.RecordBatchStream(pa.table({}))
        reader = store.open_result(job.pk)
        batches = (reader.get_batch(i) for i in range(reader.num_record_batches))
        return flight.GeneratorStream(reader.schema, batches)

    def _answer(self, user: User, session: Session, name: str, command: Any) -> pa.Table:
        if name == "CommandGetCatalogs":
            return metadata.catalogs(access_for(user))
        if name == "CommandGetDbSchemas":
            return metadata.db_schemas(access_for(user), command)
        if name == "CommandGetTables":
            return metadata.tables(access_for(user), session, command)
        if name == "CommandGetTableTypes":
            return metadata.table_types()
        if name == "CommandGetPrimaryKeys":
            return metadata.primary_keys(access_for(user), command)
        return metadata.sql_info(list(command.info))

    def _close_session(self, context: Any) -> Any:
        """The sign-in's session closed (one already gone, e.g. expired: closed all the same);
        its bearer and prepared statements are forgotten."""
        auth = self._auth(context)
        user = auth.bearer.signed_in.current()
        session_id = auth.bearer.session_id
        try:
            session = session_services.session_get(user=user, session_id=session_id, touch=False)
            result = session_actions.close(session)
        except NotFound:
            result = wire.CloseSessionResult(status=wire.CloseSessionResult.CLOSED)
        self.bearers.end_session(session_id)
        self.prepared.forget_session(session_id)
        return result

    def _cancel(self, user: User, session: Session, info: Any) -> Any:
        """Cancel the statements the FlightInfo's tickets name (each must be the caller's)."""
        status = wire.CANCEL_STATUS_NOT_CANCELLABLE
        for endpoint in info.endpoint:
            name, value = _command(endpoint.ticket.ticket)
            if name != "TicketStatementQuery":
                continue
            handle = _parse(sql.TicketStatementQuery, value).statement_handle
            job = self._job(user, session, handle)
            if job.status not in jobstate.TERMINAL:
                job_cancel(user=user, job=job)
                status = wire.CANCEL_STATUS_CANCELLED
        return status
