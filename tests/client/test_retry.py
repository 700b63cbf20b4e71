"""The client's retries (``tessera.RetryPolicy``) and typed errors, against a small real
HTTP server that answers what a Tessera server answers when it refuses for now (429 with
``Retry-After``, 503 without a body). The live server's own 429 is in test_threads.py."""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.client.conftest import tessera

errors = tessera.errors


class Refusing(ThreadingHTTPServer):
    """Answers ``refusals`` requests with ``status`` (and ``Retry-After``), then 200."""

    def __init__(self, status: int, refusals: int, retry_after: str | None, body: bool) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.status, self.refusals, self.retry_after, self.body = (
            status,
            refusals,
            retry_after,
            body,
        )
        self.seen: list[tuple[float, bytes, str | None]] = []


class _Handler(BaseHTTPRequestHandler):
    server: Refusing

    def log_message(self, *args: Any) -> None:
        """Quiet."""

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.server.seen.append((time.monotonic(), body, self.headers.get("Authorization")))
        if len(self.server.seen) <= self.server.refusals:
            payload = (
                json.dumps(
                    {
                        "error": {
                            "code": "TOO_MANY_JOBS" if self.server.status == 429 else "UNAVAILABLE",
                            "message": "Not now.",
                            "details": {"running": 1},
                        }
                    }
                ).encode()
                if self.server.body
                else b"<html>busy</html>"
            )
            self.send_response(self.server.status)
            if self.server.retry_after is not None:
                self.send_header("Retry-After", self.server.retry_after)
        else:
            payload = json.dumps({"ok": True}).encode()
            self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = _answer
    do_POST = _answer


@pytest.fixture
def refusing(request: pytest.FixtureRequest) -> Iterator[Refusing]:
    status, refusals, retry_after, body = request.param
    server = Refusing(status, refusals, retry_after, body)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def http(server: Refusing, policy: tessera.RetryPolicy) -> Any:
    from tessera._http import Http

    return Http(f"http://127.0.0.1:{server.server_address[1]}", token="t0k", retry=policy)


@pytest.mark.parametrize("refusing", [(429, 2, "0.2", True)], indirect=True)
def test_a_429_is_sent_again_after_retry_after_with_the_same_body_and_token(refusing):
    answer = http(refusing, tessera.RetryPolicy(jitter=0.5)).post("/x", {"a": 1})
    assert answer == {"ok": True}
    times = [t for t, _, _ in refusing.seen]
    assert len(times) == 3
    # Retry-After 0.2 s, plus at most half of it as jitter.
    assert all(0.19 <= later - earlier <= 0.5 for earlier, later in itertools.pairwise(times))
    assert {body for _, body, _ in refusing.seen} == {b'{"a": 1}'}
    assert {token for _, _, token in refusing.seen} == {"Token t0k"}


@pytest.mark.parametrize("refusing", [(429, 10, "0", True)], indirect=True)
def test_attempts_are_bounded_and_the_typed_error_is_raised(refusing):
    with pytest.raises(errors.TooManyJobs) as error:
        http(refusing, tessera.RetryPolicy(max_attempts=3)).get("/x")
    assert len(refusing.seen) == 3
    assert isinstance(error.value, errors.TooManyRequests)
    assert isinstance(error.value, errors.RetryableError)
    assert isinstance(error.value, tessera.TesseraError)  # what older code catches
    assert error.value.code == "TOO_MANY_JOBS"
    assert error.value.retry_after == 0
    assert error.value.details == {"running": 1, "retry_after": 0.0, "attempts": 3}


@pytest.mark.parametrize("refusing", [(429, 1, "30", True)], indirect=True)
def test_a_retry_after_past_the_policys_wait_is_not_waited_for(refusing):
    started = time.monotonic()
    with pytest.raises(errors.TooManyJobs) as error:
        http(refusing, tessera.RetryPolicy(max_wait=5)).get("/x")
    assert time.monotonic() - started < 2 and len(refusing.seen) == 1
    assert error.value.retry_after == 30


@pytest.mark.parametrize("refusing", [(503, 2, None, False)], indirect=True)
def test_a_503_without_a_body_backs_off_and_is_retried(refusing):
    policy = tessera.RetryPolicy(backoff=0.05, jitter=0)
    assert http(refusing, policy).get("/x") == {"ok": True}
    times = [t for t, _, _ in refusing.seen]
    assert times[1] - times[0] >= 0.05 and times[2] - times[1] >= 0.1  # doubling


@pytest.mark.parametrize("refusing", [(503, 5, None, False)], indirect=True)
def test_no_retry_raises_at_once(refusing):
    with pytest.raises(errors.RetryableError) as error:
        http(refusing, tessera.NO_RETRY).get("/x")
    assert len(refusing.seen) == 1
    assert error.value.code == "HTTP_ERROR" and error.value.details["status"] == 503


@pytest.mark.parametrize("refusing", [(429, 1, "0", True)], indirect=True)
def test_a_body_that_cannot_be_made_again_is_not_resent(refusing):
    def once() -> Iterator[bytes]:
        yield b"abc"

    with pytest.raises(errors.TooManyJobs):
        http(refusing, tessera.RetryPolicy()).request("POST", "/x", data=once())
    assert len(refusing.seen) == 1


def test_the_policy_is_checked_and_its_waits_are_jittered_within_bounds():
    with pytest.raises(ValueError):
        tessera.RetryPolicy(max_attempts=0)
    with pytest.raises(ValueError):
        tessera.RetryPolicy(jitter=-1)
    policy = tessera.RetryPolicy(backoff=1, max_backoff=3, jitter=0.25)
    for _ in range(200):
        assert 2 <= policy.delay(1, 2.0) <= 2.5  # Retry-After first
        assert 1 <= policy.delay(1, None) <= 1.25
        assert 2 <= policy.delay(2, None) <= 2.5
        assert 3 <= policy.delay(5, None) <= 3.75  # capped
    assert len({policy.delay(1, None) for _ in range(20)}) > 1


def test_every_code_has_its_class_under_the_family_it_always_had():
    expected = {
        "NOT_FOUND": (errors.NotFound, tessera.NotFoundError),
        "PERMISSION_DENIED": (errors.PermissionDenied, tessera.PermissionDeniedError),
        "NOT_AUTHENTICATED": (errors.NotAuthenticated, tessera.AuthenticationError),
        "TOKEN_EXPIRED": (errors.TokenExpired, tessera.TokenExpiredError),
        "VALIDATION_ERROR": (tessera.ValidationError, tessera.ValidationError),
        "PARSE_ERROR": (tessera.ParseError, tessera.ParseError),
        "ALREADY_EXISTS": (errors.AlreadyExists, tessera.AlreadyExistsError),
        "TEMPORARY_OBJECT_EXISTS": (errors.TemporaryObjectExists, tessera.AlreadyExistsError),
        "FORBIDDEN_SQL": (errors.ForbiddenSql, tessera.ForbiddenSqlError),
        "RESULT_TOO_LARGE": (errors.ResultTooLarge, tessera.ResultTooLargeError),
        "PAYLOAD_TOO_LARGE": (errors.PayloadTooLarge, tessera.PayloadTooLargeError),
        "UPLOAD_QUOTA_EXCEEDED": (errors.UploadQuotaExceeded, tessera.PayloadTooLargeError),
        "TOO_MANY_REQUESTS": (errors.TooManyRequests, errors.RetryableError),
        "TOO_MANY_JOBS": (errors.TooManyJobs, errors.TooManyRequests),
        "TOO_MANY_SESSIONS": (errors.TooManySessions, errors.TooManyRequests),
        "TOO_MANY_STREAMS": (errors.TooManyStreams, errors.TooManyRequests),
        "UNAVAILABLE": (errors.Unavailable, errors.RetryableError),
        "UNSUPPORTED_STATEMENT": (errors.UnsupportedStatement, tessera.UnsupportedError),
        "CONFLICT": (errors.Conflict, tessera.TesseraError),
        "CANCELED": (tessera.CanceledError, tessera.TesseraError),
    }
    for code, (cls, family) in expected.items():
        made = errors.make_error(code, "m", {})
        assert type(made) is cls and isinstance(made, family), code
        assert made.code == code and made.message == "m"
    assert type(errors.make_error("SOMETHING_NEW", "m")) is tessera.TesseraError
    # A failed job's error is both its code's class and a JobFailedError.
    failed = errors.job_error({"id": "j", "status": "FAILED", "error": {"code": "NOT_FOUND"}})
    assert isinstance(failed, errors.NotFound) and isinstance(failed, tessera.JobFailedError)
