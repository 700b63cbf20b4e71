"""gunicorn settings shared by `make run` and the Docker image (`-c python:webapp.gunicorn_conf`).

The app is loaded once in the master; `gc.freeze()` then moves everything loaded so far
out of the garbage collector's reach, so workers neither copy those pages on write nor
spend 80 to 140 ms walking them in full collections (measured: docs/benchmarks.md).

Requests gunicorn refuses itself, before Django sees them (a request line or headers over
the limits below, a malformed request), are answered in the contract's JSON error shape
instead of gunicorn's HTML page: gunicorn has no setting for its error pages (benoitc/
gunicorn#993), and its workers write them through ``gunicorn.util.write_error``, which is
replaced here, in the master, before the workers are forked.
"""

from __future__ import annotations

import gc
import json
import os
import sys
from typing import Any

from gunicorn import util

preload_app = True
SWITCH_INTERVAL_SECONDS = float(os.environ.get("TESSERA_GIL_SWITCH_SECONDS", "0.001"))

# Limits of what gunicorn reads before the app (docs/security.md §6). The request line
# (method, path, query) up to 8190 bytes, gunicorn's maximum: long enough for every URL of
# the API, including filters such as ?q= of a few kilobytes. Headers: gunicorn's defaults.
limit_request_line = int(os.environ.get("TESSERA_LIMIT_REQUEST_LINE", "8190"))
limit_request_fields = int(os.environ.get("TESSERA_LIMIT_REQUEST_FIELDS", "100"))
limit_request_field_size = int(os.environ.get("TESSERA_LIMIT_REQUEST_FIELD_SIZE", "8190"))

# gunicorn's status → the contract's code and a sentence a person understands.
ERRORS: dict[int, tuple[str, str]] = {
    400: ("MALFORMED_REQUEST", "The request is not valid HTTP."),
    403: ("PERMISSION_DENIED", "The request was refused."),
    414: (
        "REQUEST_LINE_TOO_LONG",
        "The request line (method, path and query string) is longer than the server accepts "
        f"({limit_request_line:,} bytes); send long values in a request body.",
    ),
    417: ("EXPECTATION_FAILED", "The request's Expect header cannot be met."),
    431: (
        "REQUEST_HEADERS_TOO_LARGE",
        f"The request has more than {limit_request_fields} headers, or a header longer than "
        f"{limit_request_field_size:,} bytes.",
    ),
    500: ("INTERNAL_ERROR", "The server failed to handle this request; it was logged."),
    501: ("NOT_IMPLEMENTED", "The request uses an HTTP feature the server does not support."),
}


def error_response(status: int, reason: str, mesg: str) -> bytes:
    """A whole HTTP response with the contract's error body for what gunicorn refused."""
    code, message = ERRORS.get(
        status, ("MALFORMED_REQUEST" if status < 500 else "INTERNAL_ERROR", reason + ".")
    )
    error: dict[str, Any] = {"code": code, "message": message}
    if mesg:  # gunicorn's own words (no traceback: it logs those), kept short
        error["details"] = {"reason": mesg[:200]}
    body = json.dumps({"error": error}).encode("utf-8")
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        "Connection: close\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
        "\r\n"
    )
    return head.encode("latin-1") + body


def write_json_error(sock: Any, status_int: int, reason: str, mesg: str) -> None:
    """Stands in for ``gunicorn.util.write_error`` (same arguments)."""
    util.write_nonblock(sock, error_response(int(status_int), str(reason), str(mesg or "")))


util.write_error = write_json_error


def when_ready(server: Any) -> None:
    gc.freeze()


def post_fork(server: Any, worker: Any) -> None:
    # A request thread that waits for the database or the network gets the GIL back from a
    # thread planning a statement (pure-Python CPU work) within 1 ms instead of the default
    # 5 ms: a read makes dozens of such waits, so other users' requests stay quick while a
    # statement is planned in the same process (docs/security.md §4, docs/benchmarks.md).
    sys.setswitchinterval(SWITCH_INTERVAL_SECONDS)
