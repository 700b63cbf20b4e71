"""Errors: every server error becomes a :class:`TesseraError` with the API's code."""

from __future__ import annotations

from typing import Any


class TesseraError(Exception):
    """An error answered by the Tessera server (or met on the way to it).

    ``code`` is the API's UPPER_SNAKE code (``NOT_FOUND``, ``PARSE_ERROR``…), ``message`` its
    sentence and ``details`` its details object (``{}`` when there are none).
    """

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.details: dict[str, Any] = dict(details or {})


class ParseError(TesseraError):
    """``PARSE_ERROR``: the SQL (or a Table expression) could not be parsed."""


class NotFoundError(TesseraError):
    """``NOT_FOUND``: the object, session or job does not exist (or is not yours)."""


class AlreadyExistsError(TesseraError):
    """``ALREADY_EXISTS`` or ``TEMPORARY_OBJECT_EXISTS``."""


class PermissionDeniedError(TesseraError):
    """``PERMISSION_DENIED`` or ``NOT_AUTHENTICATED``."""


class AuthenticationError(PermissionDeniedError):
    """``NOT_AUTHENTICATED`` (HTTP 401): no credentials, or a token that was revoked or
    never existed. Sign in again (``POST /auth/token``) or use another token."""


class TokenExpiredError(AuthenticationError):
    """``TOKEN_EXPIRED`` (HTTP 401): the token is past its expiry; sign in again."""


class ForbiddenSqlError(PermissionDeniedError):
    """``FORBIDDEN_SQL``: the statement would reach past the catalog."""


class ValidationError(TesseraError):
    """``VALIDATION_ERROR`` (and the other 400s about the request's content)."""


class ResultTooLargeError(TesseraError):
    """``RESULT_TOO_LARGE``: the result was cut at the server's limit; nothing is returned."""


class PayloadTooLargeError(TesseraError):
    """``PAYLOAD_TOO_LARGE``: an upload or request body over the server's cap."""


class UnsupportedError(TesseraError):
    """``UNSUPPORTED`` / ``UNSUPPORTED_STATEMENT``: not available (yet)."""


class JobFailedError(TesseraError):
    """A job ended FAILED; ``code``/``message``/``details`` are the job's error, ``job_id`` it."""

    job_id: str | None = None


class CanceledError(TesseraError):
    """``CANCELED``: the job was canceled."""

    job_id: str | None = None


class ConnectionFailedError(TesseraError):
    """``CONNECTION_FAILED``: the server could not be reached (network, DNS, timeout)."""


class RetryableError(TesseraError):
    """The server refused for now (HTTP 429 or 503), with nothing created: the same request
    may succeed later. The client retries these itself (``tessera.RetryPolicy``) and raises
    once its attempts or its time are spent. ``retry_after``: the seconds the server asked
    to wait (``Retry-After``), None when it did not say."""

    @property
    def retry_after(self) -> float | None:
        value = self.details.get("retry_after")
        return float(value) if isinstance(value, (int, float)) else None


# --- one class per API code: ``except tessera.errors.NotFound``. Each is a subclass of the
# family class above (``NotFoundError``…), so code written against those keeps working. ---


class NotFound(NotFoundError):
    """``NOT_FOUND`` (404)."""


class AlreadyExists(AlreadyExistsError):
    """``ALREADY_EXISTS`` (409)."""


class TemporaryObjectExists(AlreadyExistsError):
    """``TEMPORARY_OBJECT_EXISTS`` (409): a temporary object of the session has that path."""


class PermissionDenied(PermissionDeniedError):
    """``PERMISSION_DENIED`` (403)."""


class Forbidden(PermissionDeniedError):
    """``FORBIDDEN``: what a pipeline job may not do."""


class NotAuthenticated(AuthenticationError):
    """``NOT_AUTHENTICATED`` (401)."""


class TokenExpired(TokenExpiredError):
    """``TOKEN_EXPIRED`` (401)."""


class InvalidCredentials(TesseraError):
    """``INVALID_CREDENTIALS`` (400): a wrong username or password."""


class ForbiddenSql(ForbiddenSqlError):
    """``FORBIDDEN_SQL`` (403)."""


class ResultTooLarge(ResultTooLargeError):
    """``RESULT_TOO_LARGE``."""


class PayloadTooLarge(PayloadTooLargeError):
    """``PAYLOAD_TOO_LARGE`` (413)."""


class UploadQuotaExceeded(PayloadTooLargeError):
    """``UPLOAD_QUOTA_EXCEEDED`` (413): the user's uploads would pass their quota."""


class Unsupported(UnsupportedError):
    """``UNSUPPORTED``."""


class UnsupportedStatement(UnsupportedError):
    """``UNSUPPORTED_STATEMENT``."""


class StreamingUnsupported(UnsupportedError):
    """``STREAMING_UNSUPPORTED``: the statement cannot run as a stream."""


class TooManyRequests(RetryableError):
    """``TOO_MANY_REQUESTS`` (429), and the base of every other 429."""


class TooManyJobs(TooManyRequests):
    """``TOO_MANY_JOBS`` (429): the user has as many unfinished jobs as allowed."""


class TooManySessions(TooManyRequests):
    """``TOO_MANY_SESSIONS`` (429): every one of the user's sessions runs a job."""


class TooManyStreams(TooManyRequests):
    """``TOO_MANY_STREAMS`` (429): no stream slot is free."""


class Unavailable(RetryableError):
    """``UNAVAILABLE`` (503): a part the request needs (a worker, the database) did not
    answer in time."""


class Conflict(TesseraError):
    """``CONFLICT`` (409): the table changed under a write; run it again."""


class NotEmpty(TesseraError):
    """``NOT_EMPTY`` (409): dropping a catalog or database that holds objects."""


class IllegalTransition(TesseraError):
    """``ILLEGAL_TRANSITION`` (409): e.g. canceling a job that has ended."""


class EngineStopped(TesseraError):
    """``ENGINE_STOPPED`` (409)."""


class MalformedRequest(ValidationError):
    """``MALFORMED_REQUEST`` (400)."""


class JsonTooDeep(ValidationError):
    """``JSON_TOO_DEEP`` (400)."""


class StatementTooLarge(ValidationError):
    """``STATEMENT_TOO_LARGE`` (400)."""


class StatementTooDeep(ValidationError):
    """``STATEMENT_TOO_DEEP`` (400)."""


class PlanningTimeout(TesseraError):
    """``PLANNING_TIMEOUT``: planning the statement took too long."""


class ResultNotReady(TesseraError):
    """``RESULT_NOT_READY`` (409): the job has no result (yet)."""


class SparkError(TesseraError):
    """``SPARK_ERROR``: Spark refused or failed the statement."""


class DataChanging(TesseraError):
    """``DATA_CHANGING``: a table's data kept changing while it was listed; run it again."""


class WorkerLost(TesseraError):
    """``WORKER_LOST``: the worker running the job died."""


class StorageUnreachable(TesseraError):
    """``STORAGE_UNREACHABLE``: the table's storage could not be reached."""


class InternalError(TesseraError):
    """``INTERNAL_ERROR`` (500)."""


class Timeout(TesseraError):
    """``TIMEOUT`` raised by the client: ``wait(timeout=…)`` ran out; the job runs on. (A
    job the server stopped at its time limit fails with its own ``TIMEOUT`` error, a plain
    :class:`JobFailedError`: not in the table below.)"""


_BY_CODE: dict[str, type[TesseraError]] = {
    "PARSE_ERROR": ParseError,
    "NOT_FOUND": NotFound,
    "ALREADY_EXISTS": AlreadyExists,
    "TEMPORARY_OBJECT_EXISTS": TemporaryObjectExists,
    "PERMISSION_DENIED": PermissionDenied,
    "FORBIDDEN": Forbidden,
    "NOT_AUTHENTICATED": NotAuthenticated,
    "TOKEN_EXPIRED": TokenExpired,
    "INVALID_CREDENTIALS": InvalidCredentials,
    "FORBIDDEN_SQL": ForbiddenSql,
    "VALIDATION_ERROR": ValidationError,
    "RESULT_TOO_LARGE": ResultTooLarge,
    "PAYLOAD_TOO_LARGE": PayloadTooLarge,
    "UPLOAD_QUOTA_EXCEEDED": UploadQuotaExceeded,
    "UNSUPPORTED": Unsupported,
    "UNSUPPORTED_STATEMENT": UnsupportedStatement,
    "STREAMING_UNSUPPORTED": StreamingUnsupported,
    "TOO_MANY_REQUESTS": TooManyRequests,
    "TOO_MANY_JOBS": TooManyJobs,
    "TOO_MANY_SESSIONS": TooManySessions,
    "TOO_MANY_STREAMS": TooManyStreams,
    "UNAVAILABLE": Unavailable,
    "CONFLICT": Conflict,
    "NOT_EMPTY": NotEmpty,
    "ILLEGAL_TRANSITION": IllegalTransition,
    "ENGINE_STOPPED": EngineStopped,
    "MALFORMED_REQUEST": MalformedRequest,
    "JSON_TOO_DEEP": JsonTooDeep,
    "STATEMENT_TOO_LARGE": StatementTooLarge,
    "STATEMENT_TOO_DEEP": StatementTooDeep,
    "PLANNING_TIMEOUT": PlanningTimeout,
    "RESULT_NOT_READY": ResultNotReady,
    "SPARK_ERROR": SparkError,
    "DATA_CHANGING": DataChanging,
    "WORKER_LOST": WorkerLost,
    "STORAGE_UNREACHABLE": StorageUnreachable,
    "INTERNAL_ERROR": InternalError,
    "CANCELED": CanceledError,
    "CONNECTION_FAILED": ConnectionFailedError,
}

# The HTTP statuses the client retries (``tessera.RetryPolicy``): an answer with one of
# these and no known code is still a RetryableError.
RETRYABLE_STATUSES = (429, 503)

# A FAILED job's error is both a JobFailedError and the class of its code (so that
# ``except ParseError`` catches a statement that failed to parse).
_JOB_CLASSES: dict[type[TesseraError], type[JobFailedError]] = {}


def error_class(code: str) -> type[TesseraError]:
    """The :class:`TesseraError` subclass for an API error code."""
    return _BY_CODE.get(code, TesseraError)


def make_error(code: str, message: str, details: dict[str, Any] | None = None) -> TesseraError:
    """An error of the right subclass for ``code``."""
    return error_class(code)(code, message, details)


def job_error(job: dict[str, Any]) -> TesseraError:
    """The error to raise for a FAILED or CANCELED job (its own code, message, details)."""
    error = job.get("error") or {}
    status = job.get("status")
    code = str(error.get("code") or ("CANCELED" if status == "CANCELED" else "JOB_FAILED"))
    message = str(error.get("message") or f"Job {job.get('id')} ended {status}.")
    details = error.get("details") if isinstance(error.get("details"), dict) else {}
    if status == "CANCELED" or code == "CANCELED":
        canceled = CanceledError(code, message, details)
        canceled.job_id = job.get("id")
        return canceled
    base = error_class(code)
    cls = _JOB_CLASSES.get(base)
    if cls is None:
        cls = (
            JobFailedError
            if base is TesseraError
            else type(base.__name__, (base, JobFailedError), {})
        )
        _JOB_CLASSES[base] = cls
    failed = cls(code, message, details)
    failed.job_id = job.get("id")
    return failed
