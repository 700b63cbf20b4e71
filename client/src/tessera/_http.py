"""The one place that talks HTTP to the Tessera REST API (``/api/v1``).

One :class:`Http` may be shared by threads: ``requests``' connection pool is thread-safe,
the token is sent with each request (never by changing shared session state while another
thread sends), and a refused request (429, 503) is retried by this thread alone.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sized
from typing import Any
from urllib.parse import quote

import requests
from requests.adapters import HTTPAdapter

from tessera.errors import (
    RETRYABLE_STATUSES,
    ConnectionFailedError,
    RetryableError,
    TesseraError,
    make_error,
)
from tessera.retry import DEFAULT_RETRY, RetryPolicy

API_PREFIX = "/api/v1"


def segment(name: str) -> str:
    """A name as one percent-encoded path segment (``/catalogs/my%20cat``)."""
    return quote(name, safe="")


def error_from_response(response: requests.Response) -> TesseraError:
    """The :class:`TesseraError` for an error answer (the API's ``{"error": {...}}`` shape)."""
    try:
        body = response.json()
    except ValueError:
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    retry_after = _retry_after(response)
    if isinstance(error, dict) and "code" in error:
        details = dict(error["details"]) if isinstance(error.get("details"), dict) else {}
        if retry_after is not None:
            details.setdefault("retry_after", retry_after)
        return make_error(str(error["code"]), str(error.get("message", "")), details)
    text = response.text[:200].strip()
    cls = RetryableError if response.status_code in RETRYABLE_STATUSES else TesseraError
    details = {"status": response.status_code}
    if retry_after is not None:
        details["retry_after"] = retry_after
    return cls(
        "HTTP_ERROR",
        f"The server answered HTTP {response.status_code} without an error body: {text!r}.",
        details,
    )


def _retry_after(response: requests.Response) -> float | None:
    """The ``Retry-After`` header in seconds (the HTTP-date form is not used by Tessera)."""
    value = response.headers.get("Retry-After")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _resendable(data: bytes | Iterable[bytes] | None) -> bool:
    """Whether a body can be sent again: none, bytes, or a sized iterable that makes its
    bytes anew on each iteration (``tessera.uploads.ArrowStreamBody``); not a generator."""
    return data is None or isinstance(data, (bytes, Sized))


class Http:
    """A ``requests`` session bound to a server URL and an API token."""

    def __init__(
        self,
        url: str,
        token: str | None = None,
        timeout: float = 60.0,
        *,
        retry: RetryPolicy | None = None,
        pool_size: int = 10,
    ) -> None:
        self.url = url.rstrip("/")
        if self.url.endswith(API_PREFIX):
            self.url = self.url[: -len(API_PREFIX)]
        self.timeout = timeout
        self.retry = retry or DEFAULT_RETRY
        self.session = requests.Session()
        # Up to ``pool_size`` connections kept per host, for as many threads at once.
        adapter = HTTPAdapter(pool_connections=pool_size, pool_maxsize=pool_size)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        self._lock = threading.Lock()
        self._authorization: str | None = None
        #: True when this connection's token came from signing in with a password (by
        #: :func:`tessera.connect`): it is then revoked when the environment closes.
        self.signed_in = False
        if token:
            self.set_token(token)

    def set_token(self, token: str) -> None:
        """Authenticate every later request with ``Authorization: Token <token>``."""
        with self._lock:
            self._authorization = f"Token {token}"

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        data: bytes | Iterable[bytes] | None = None,
        stream: bool = False,
        timeout: float | None = None,
        ok: tuple[int, ...] = (),
    ) -> requests.Response:
        """Send one request; an error answer raises its :class:`TesseraError`.

        Statuses in ``ok`` (e.g. 304) are returned instead of raised.
        Statuses of the retry policy (429, 503: refused for now, nothing created) are sent
        again after the server's ``Retry-After`` (or a backoff), jittered, within the policy's
        attempts and total wait; then their :class:`RetryableError` is raised.
        """
        url = f"{self.url}{API_PREFIX}{path}"
        policy = self.retry
        waited = 0.0
        attempt = 0
        while True:
            attempt += 1
            sent_headers = dict(headers or {})
            with self._lock:
                authorization = self._authorization
            if authorization is not None:
                sent_headers.setdefault("Authorization", authorization)
            try:
                response = self._send(
                    method,
                    url,
                    json=json,
                    params=params,
                    headers=sent_headers,
                    data=data,
                    stream=stream,
                    timeout=timeout or self.timeout,
                )
            except requests.RequestException as exc:
                raise ConnectionFailedError(
                    "CONNECTION_FAILED",
                    f"Could not reach the Tessera server at {self.url} "
                    f"({exc.__class__.__name__}: {exc}).",
                    {"url": self.url},
                ) from exc
            if response.status_code < 400 or response.status_code in ok:
                return response
            error = error_from_response(response)
            response.close()
            if (
                response.status_code not in policy.statuses
                or attempt >= policy.max_attempts
                or not _resendable(data)
            ):
                error.details.setdefault("attempts", attempt)
                raise error
            delay = policy.delay(attempt, _retry_after(response))
            if waited + delay > policy.max_wait:
                error.details.setdefault("attempts", attempt)
                raise error
            time.sleep(delay)
            waited += delay

    def _send(self, method: str, url: str, **kwargs: Any) -> requests.Response:
        """The transport: one HTTP request through ``requests``. In a pipeline job the worker
        replaces it with one that calls the server's views in its own process."""
        return self.session.request(method, url, **kwargs)

    def get(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        """``GET`` a JSON answer."""
        return self.request("GET", path, params=params).json()

    def post(self, path: str, body: Any = None, **kwargs: Any) -> Any:
        """``POST`` JSON, return the JSON answer (``None`` for an empty one)."""
        response = self.request("POST", path, json=body if body is not None else {}, **kwargs)
        return response.json() if response.content else None

    def patch(self, path: str, body: Any) -> Any:
        """``PATCH`` JSON, return the JSON answer."""
        return self.request("PATCH", path, json=body).json()

    def delete(self, path: str, ok: tuple[int, ...] = ()) -> int:
        """``DELETE``; returns the status."""
        return self.request("DELETE", path, ok=ok).status_code

    def pages(
        self, path: str, params: Mapping[str, Any] | None = None, page_size: int = 1000
    ) -> Iterator[dict[str, Any]]:
        """Every item of a paged list (``items`` / ``next_page_token``), page after page."""
        token: str | None = None
        while True:
            query = {**(params or {}), "page_size": page_size}
            if token:
                query["page_token"] = token
            body = self.get(path, query)
            yield from body.get("items", [])
            token = body.get("next_page_token")
            if not token:
                return

    def sign_in(self, username: str, password: str) -> None:
        """Ask for a new token (``POST /auth/token``) and authenticate with it."""
        self.set_token(
            self.post("/auth/token", {"username": username, "password": password})["token"]
        )
        self.signed_in = True

    def revoke_token(self) -> None:
        """Revoke the token in use (``DELETE /auth/token``); one already refused (revoked or
        expired) is left as it is. Later requests go without a token."""
        if self._authorization is None:
            return
        try:
            self.request("DELETE", "/auth/token", ok=(401,))
        finally:
            with self._lock:
                self._authorization = None
            self.signed_in = False

    def close(self) -> None:
        """Close the connection pool."""
        self.session.close()
