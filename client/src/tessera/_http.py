"""The one place that talks HTTP to the Tessera REST API (``/api/v1``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any
from urllib.parse import quote

import requests

from tessera.errors import ConnectionFailedError, TesseraError, make_error

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
    if isinstance(error, dict) and "code" in error:
        details = error.get("details") if isinstance(error.get("details"), dict) else {}
        return make_error(str(error["code"]), str(error.get("message", "")), details)
    text = response.text[:200].strip()
    return TesseraError(
        "HTTP_ERROR",
        f"The server answered HTTP {response.status_code} without an error body: {text!r}.",
        {"status": response.status_code},
    )


class Http:
    """A ``requests`` session bound to a server URL and an API token."""

    def __init__(self, url: str, token: str | None = None, timeout: float = 60.0) -> None:
        self.url = url.rstrip("/")
        if self.url.endswith(API_PREFIX):
            self.url = self.url[: -len(API_PREFIX)]
        self.timeout = timeout
        self.session = requests.Session()
        #: True when this connection's token came from signing in with a password (by
        #: :func:`tessera.connect`): it is then revoked when the environment closes.
        self.signed_in = False
        if token:
            self.set_token(token)

    def set_token(self, token: str) -> None:
        """Authenticate every later request with ``Authorization: Token <token>``."""
        self.session.headers["Authorization"] = f"Token {token}"

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
        """
        url = f"{self.url}{API_PREFIX}{path}"
        try:
            response = self._send(
                method,
                url,
                json=json,
                params=params,
                headers=dict(headers or {}),
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
        if response.status_code >= 400 and response.status_code not in ok:
            raise error_from_response(response)
        return response

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
        if "Authorization" not in self.session.headers:
            return
        try:
            self.request("DELETE", "/auth/token", ok=(401,))
        finally:
            del self.session.headers["Authorization"]
            self.signed_in = False

    def close(self) -> None:
        """Close the connection pool."""
        self.session.close()
