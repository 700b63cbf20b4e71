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


_BY_CODE: dict[str, type[TesseraError]] = {
    "PARSE_ERROR": ParseError,
    "NOT_FOUND": NotFoundError,
    "ALREADY_EXISTS": AlreadyExistsError,
    "TEMPORARY_OBJECT_EXISTS": AlreadyExistsError,
    "PERMISSION_DENIED": PermissionDeniedError,
    "NOT_AUTHENTICATED": AuthenticationError,
    "TOKEN_EXPIRED": TokenExpiredError,
    "FORBIDDEN_SQL": ForbiddenSqlError,
    "VALIDATION_ERROR": ValidationError,
    "RESULT_TOO_LARGE": ResultTooLargeError,
    "PAYLOAD_TOO_LARGE": PayloadTooLargeError,
    "UNSUPPORTED": UnsupportedError,
    "UNSUPPORTED_STATEMENT": UnsupportedError,
    "CANCELED": CanceledError,
}

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
