"""One place where errors become HTTP responses of the contract's shape.

Every 4xx/5xx body is ``{"error": {"code", "message", "details"?}}`` (docs/api.md §2),
made by ``ErrorOut`` (the OpenAPI document's description says the shape).
Domain errors are ``core.errors.CoreError`` subclasses carrying their own code; DRF's and
Django's own errors are translated here, so views never build error responses themselves.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from rest_framework import exceptions as drf
from rest_framework import serializers
from rest_framework.response import Response

from core.errors import CoreError

log = logging.getLogger(__name__)

HTTP_STATUS_BY_CODE: dict[str, int] = {
    "VALIDATION_ERROR": 400,
    "PARSE_ERROR": 400,
    "MALFORMED_REQUEST": 400,
    "JSON_TOO_DEEP": 400,
    "FORBIDDEN_SQL": 400,
    "UNSUPPORTED_STATEMENT": 400,
    "INVALID_CREDENTIALS": 400,
    "STATEMENT_TOO_DEEP": 400,
    "PLANNING_TIMEOUT": 400,
    "NOT_AUTHENTICATED": 401,
    "TOKEN_EXPIRED": 401,
    "PERMISSION_DENIED": 403,
    "FORBIDDEN": 403,
    "NOT_FOUND": 404,
    "METHOD_NOT_ALLOWED": 405,
    "NOT_ACCEPTABLE": 406,
    "ALREADY_EXISTS": 409,
    "NOT_EMPTY": 409,
    "CONFLICT": 409,
    "TOO_MANY_TABS": 409,
    "WRITE_CONFLICT": 409,
    "TEMPORARY_OBJECT_EXISTS": 409,
    "ILLEGAL_TRANSITION": 409,
    "RESULT_NOT_READY": 409,
    "ENGINE_STOPPED": 409,
    "LENGTH_REQUIRED": 411,
    "PAYLOAD_TOO_LARGE": 413,
    "STATEMENT_TOO_LARGE": 413,
    "UPLOAD_QUOTA_EXCEEDED": 413,
    "REQUEST_LINE_TOO_LONG": 414,
    "UNSUPPORTED_MEDIA_TYPE": 415,
    "EXPECTATION_FAILED": 417,
    "TOO_MANY_REQUESTS": 429,
    "TOO_MANY_JOBS": 429,
    "TOO_MANY_STREAMS": 429,
    "TOO_MANY_SESSIONS": 429,
    "REQUEST_HEADERS_TOO_LARGE": 431,
    "INTERNAL_ERROR": 500,
    "NOT_IMPLEMENTED": 501,
    "UNAVAILABLE": 503,
}


class ErrorDetailOut(serializers.Serializer[Any]):
    code = serializers.CharField()
    message = serializers.CharField()
    details = serializers.DictField(required=False)


class ErrorOut(serializers.Serializer[Any]):
    error = ErrorDetailOut()


def error_body(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    """The contract's error envelope."""
    error: dict[str, Any] = {"code": code, "message": message}
    if details:
        error["details"] = details
    return dict(ErrorOut({"error": error}).data)


def _first_field_error(detail: Any, path: str = "") -> tuple[str, str] | None:
    """Find the first (field path, message) in a DRF ValidationError detail tree."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            sub = f"{path}.{key}" if path else str(key)
            found = _first_field_error(value, sub)
            if found:
                return found
    elif isinstance(detail, list):
        for index, value in enumerate(detail):
            sub = path if isinstance(value, str) else f"{path}[{index}]"
            found = _first_field_error(value, sub)
            if found:
                return found
    elif detail is not None:
        return path, str(detail)
    return None


_DRF_CODES: list[tuple[type[drf.APIException], str]] = [
    (drf.NotAuthenticated, "NOT_AUTHENTICATED"),
    (drf.AuthenticationFailed, "NOT_AUTHENTICATED"),
    (drf.PermissionDenied, "PERMISSION_DENIED"),
    (drf.NotFound, "NOT_FOUND"),
    (drf.MethodNotAllowed, "METHOD_NOT_ALLOWED"),
    (drf.NotAcceptable, "NOT_ACCEPTABLE"),
    (drf.UnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE"),
    (drf.Throttled, "TOO_MANY_REQUESTS"),
    (drf.ParseError, "MALFORMED_REQUEST"),
]


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's EXCEPTION_HANDLER: map every known error to the contract's shape."""
    if isinstance(exc, CoreError):
        status = HTTP_STATUS_BY_CODE.get(exc.code, 400)
        retry_after = getattr(exc, "retry_after", None)
        retry = {"Retry-After": str(int(retry_after))} if retry_after else None
        body = error_body(exc.code, exc.message, exc.details)
        return Response(body, status=status, headers=retry)

    from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
    from django.core.exceptions import RequestDataTooBig
    from django.http import Http404

    if isinstance(exc, RequestDataTooBig):  # a body without Content-Length, read past the limit
        return Response(payload_too_large_body(), status=413)
    if isinstance(exc, Http404):
        exc = drf.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = drf.PermissionDenied()

    if isinstance(exc, drf.ValidationError):
        first = _first_field_error(exc.detail)
        if first and first[0]:
            message = f"Invalid value for '{first[0]}': {first[1]}"
        elif first:
            message = first[1]
        else:
            message = "The request is not valid."
        if not message.endswith("."):
            message += "."
        details: dict[str, Any] = {"fields": exc.detail}
        if first and first[0]:
            details["field"] = first[0]  # like the services' errors: the first offending field
        return Response(error_body("VALIDATION_ERROR", message, details), status=400)

    if isinstance(exc, drf.APIException):
        # An exception may name its own code (accounts' TOKEN_EXPIRED is an AuthenticationFailed).
        code = getattr(exc, "error_code", None) or next(
            (c for cls, c in _DRF_CODES if isinstance(exc, cls)), "BAD_REQUEST"
        )
        status = HTTP_STATUS_BY_CODE.get(code, exc.status_code)
        message = str(exc.detail)
        if isinstance(exc, drf.ParseError):
            message = f"The request body could not be read: {message}"
        headers: dict[str, str] = {}
        auth_header = getattr(exc, "auth_header", None)
        if auth_header:
            headers["WWW-Authenticate"] = auth_header
        wait = getattr(exc, "wait", None)
        if isinstance(exc, drf.Throttled):
            seconds = max(1, math.ceil(wait or 1))
            headers["Retry-After"] = str(seconds)
            message = f"Too many attempts; try again in {seconds} s."
            details = {"retry_after": seconds}
            return Response(error_body(code, message, details), status=status, headers=headers)
        return Response(error_body(code, message), status=status, headers=headers)

    log.exception("Unhandled error in API view", exc_info=exc)
    return Response(
        error_body("INTERNAL_ERROR", "The server failed to handle this request; it was logged."),
        status=500,
    )


def json_not_found(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    """handler404: no HTML error pages, also for URLs no view matches."""
    return JsonResponse(error_body("NOT_FOUND", f"There is nothing at {request.path}."), status=404)


def json_server_error(request: HttpRequest) -> JsonResponse:
    """handler500."""
    return JsonResponse(
        error_body("INTERNAL_ERROR", "The server failed to handle this request; it was logged."),
        status=500,
    )


def payload_too_large_body() -> dict[str, Any]:
    """The error of a request body over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (413)."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return error_body(
        "PAYLOAD_TOO_LARGE",
        f"The request body is larger than the server accepts ({limit:,} bytes).",
        {"maximum": limit},
    )


def json_bad_request(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    """handler400 (Django raises SuspiciousOperation subclasses outside DRF views)."""
    from django.core.exceptions import RequestDataTooBig

    if isinstance(exception, RequestDataTooBig):
        return JsonResponse(payload_too_large_body(), status=413)
    return JsonResponse(error_body("MALFORMED_REQUEST", "The request is malformed."), status=400)


def json_permission_denied(
    request: HttpRequest, exception: Exception | None = None
) -> JsonResponse:
    """handler403."""
    return JsonResponse(
        error_body("PERMISSION_DENIED", "You do not have permission to do this."), status=403
    )


def json_csrf_failure(request: HttpRequest, reason: str = "") -> JsonResponse:
    """CSRF_FAILURE_VIEW for non-DRF views."""
    return JsonResponse(
        error_body("PERMISSION_DENIED", f"CSRF check failed: {reason}."), status=403
    )
