"""Middleware of the HTTP edges: request bodies over the limit, security headers of pages.

``RequestLimitsMiddleware`` answers ``413 PAYLOAD_TOO_LARGE`` (the contract's JSON) for a
body whose ``Content-Length`` is over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` before anything
reads it: Django checks the limit only when a view reads ``request.body``, and raised an
error that DRF turned into a 500. A chunked body (no ``Content-Length``) is refused with
``411 LENGTH_REQUIRED``: Django would not read it at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase, JsonResponse

from core.errors import upload_too_large
from webapp.errors import error_body, payload_too_large_body

# POST /api/v1/sessions/{id}/uploads streams its body (``sessions.uploads``) under its own limit.
UPLOAD_PATH = re.compile(r"^/api/v1/sessions/[^/]+/uploads/?$")


class RequestLimitsMiddleware:
    """Refuse request bodies that announce more bytes than the server accepts."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:  # not a number: Django's own handling answers it
            length = 0
        if request.method == "POST" and UPLOAD_PATH.match(request.path_info):
            if length > int(settings.TESSERA_UPLOAD_MAX_BYTES):
                refused = upload_too_large(int(settings.TESSERA_UPLOAD_MAX_BYTES))
                body = error_body(refused.code, refused.message, refused.details)
                return JsonResponse(body, status=413)
        elif limit is not None and length > limit:
            return JsonResponse(payload_too_large_body(), status=413)
        if "HTTP_TRANSFER_ENCODING" in request.META and "CONTENT_LENGTH" not in request.META:
            # Django reads no body without a length: a chunked body would be silently taken
            # for an empty one (and an empty JSON body is a valid request to some endpoints).
            return JsonResponse(
                error_body(
                    "LENGTH_REQUIRED",
                    "The request body must be sent with a Content-Length header, not chunked.",
                ),
                status=411,
            )
        return self.get_response(request)
