"""Tessera's errors as TCLIService ``TStatus``: the message as the REST API gives it, prefixed
with its code in brackets (``[PERMISSION_DENIED] You need SELECT on …``), and an SQLSTATE —
Spark's own when the engine gave one, else one of the SQL standard's classes for the code."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.errors import CoreError
from hiveserver2.protocol import ttypes

SQLSTATES: dict[str, str] = {
    "PARSE_ERROR": "42601",
    "VALIDATION_ERROR": "42000",
    "UNSUPPORTED_STATEMENT": "0A000",
    "STREAMING_UNSUPPORTED": "0A000",
    "FORBIDDEN": "42501",
    "FORBIDDEN_SQL": "42501",
    "PERMISSION_DENIED": "42501",
    "NOT_FOUND": "42704",
    "ALREADY_EXISTS": "42710",
    "TEMPORARY_OBJECT_EXISTS": "42710",
    "NOT_EMPTY": "2BP01",
    "CONFLICT": "40001",
    "ILLEGAL_TRANSITION": "55000",
    "RESULT_NOT_READY": "55000",
    "STATEMENT_TOO_LARGE": "54000",
    "STATEMENT_TOO_DEEP": "54001",
    "PLANNING_TIMEOUT": "57014",
    "CANCELED": "HY008",
    "TOO_MANY_JOBS": "53000",
    "TOO_MANY_REQUESTS": "53000",
    "TOO_MANY_SESSIONS": "53000",
    "TOO_MANY_STREAMS": "53000",
    "NOT_AUTHENTICATED": "28000",
    "INVALID_CREDENTIALS": "28000",
    "INVALID_HANDLE": "HY000",
}
GENERAL = "HY000"


def ok() -> Any:
    return ttypes.TStatus(statusCode=ttypes.TStatusCode.SUCCESS_STATUS)


def sql_state(error: Mapping[str, Any]) -> str:
    details = error.get("details") or {}
    given = details.get("sqlstate") if isinstance(details, Mapping) else None
    if isinstance(given, str) and len(given) == 5:
        return given
    return SQLSTATES.get(str(error.get("code")), GENERAL)


def shown(error: Mapping[str, Any]) -> str:
    """The error's text for a client: ``[CODE] message``, with Spark's condition after the code
    when the message does not start with it (``[NOT_FOUND] [SCHEMA_NOT_FOUND] Database …``):
    Spark's own clients (dbt-spark, BI drivers) read the condition from the text."""
    message = str(error.get("message", ""))
    details = error.get("details") or {}
    condition = details.get("condition") if isinstance(details, Mapping) else None
    if isinstance(condition, str) and condition and not message.startswith(f"[{condition}"):
        message = f"[{condition}] {message}"
    return f"[{error.get('code', 'INTERNAL_ERROR')}] {message}"


def status_of(error: Mapping[str, Any]) -> Any:
    """A job's (or a refusal's) ``{"code", "message", "details"}`` as an error TStatus."""
    return ttypes.TStatus(
        statusCode=ttypes.TStatusCode.ERROR_STATUS,
        errorMessage=shown(error),
        sqlState=sql_state(error),
        errorCode=0,
    )


def status_of_exception(exc: CoreError) -> Any:
    return status_of({"code": exc.code, "message": exc.message, "details": exc.details})


class InvalidHandle(CoreError):
    """A session or operation handle that is not the caller's (or does not exist): the same
    answer for both, so that a guess learns nothing."""

    code = "INVALID_HANDLE"


class NotAuthenticated(CoreError):
    """The connection's user or token no longer signs in."""

    code = "NOT_AUTHENTICATED"
