"""Who calls the Flight SQL endpoint: basic auth answered with a bearer token.

A call with ``Authorization: Basic …`` signs in with the REST API's rules
(``hiveserver2.auth.sign_in``: a user's name and password, or the name ``token`` with an API
token; revoked and expired tokens refused; each attempt counted by the sign-in throttle) and
is answered with ``Authorization: Bearer <random>``, which later calls carry. A bearer names
one sign-in and one Tessera session, opened at sign-in (it shows in the UI's sessions). The
middleware cannot see the client's address (pyarrow hands it no peer), so the throttle counts
Flight SQL attempts per user name (``flight-sql:<name>``). Bearers live in this process; one
unused for ``idle_seconds`` ends, and so does the oldest past ``MAX_BEARERS``, and so do a
session's when the client closes it (``CloseSession``).
"""

from __future__ import annotations

import base64
import binascii
import secrets
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import pyarrow.flight as flight  # type: ignore[import-untyped]
from django.db import close_old_connections
from django.db import connection as db_connection

from core.errors import CoreError
from hiveserver2.auth import SignedIn, sign_in
from hiveserver2.sasl import SaslRefused
from sessions import services as session_services

MAX_BEARERS = 10_000
MAX_HEADER_CHARS = 8192
MIDDLEWARE = "auth"


@dataclass
class Bearer:
    """One sign-in: who, in which session, last used when."""

    signed_in: SignedIn
    session_id: uuid.UUID
    used: float = field(default_factory=time.monotonic)


class Bearers:
    """The bearer tokens this process gave out."""

    def __init__(self, idle_seconds: float) -> None:
        self.idle_seconds = idle_seconds
        self._bearers: OrderedDict[str, Bearer] = OrderedDict()
        self._lock = threading.Lock()

    def issue(self, bearer: Bearer) -> str:
        token = secrets.token_urlsafe(32)
        with self._lock:
            self._bearers[token] = bearer
            while len(self._bearers) > MAX_BEARERS:
                self._bearers.popitem(last=False)
        return token

    def find(self, token: str) -> Bearer | None:
        now = time.monotonic()
        with self._lock:
            found = self._bearers.get(token)
            if found is None:
                return None
            if now - found.used > self.idle_seconds:
                del self._bearers[token]
                return None
            found.used = now
            self._bearers.move_to_end(token)
            return found

    def end_session(self, session_id: uuid.UUID) -> None:
        """Forget every bearer of a session that was closed (CloseSession)."""
        with self._lock:
            for token in [t for t, b in self._bearers.items() if b.session_id == session_id]:
                del self._bearers[token]


class CallAuth(flight.ServerMiddleware):  # type: ignore[misc]
    """The caller of one call (``context.get_middleware("auth")``), and the bearer to send
    back when this call signed in."""

    def __init__(self, bearer: Bearer, token: str | None = None) -> None:
        self.bearer = bearer
        self.token = token

    def sending_headers(self) -> dict[str, str]:
        return {} if self.token is None else {"authorization": f"Bearer {self.token}"}


def _credentials(value: str) -> tuple[str, str]:
    value = value.strip()
    value += "=" * (-len(value) % 4)  # Go's Flight client sends it unpadded
    try:
        text = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        bad = "[NOT_AUTHENTICATED] Malformed basic credentials."
        raise flight.FlightUnauthenticatedError(bad) from None
    name, sep, password = text.partition(":")
    if not sep:
        raise flight.FlightUnauthenticatedError("[NOT_AUTHENTICATED] Malformed basic credentials.")
    return name, password


class AuthFactory(flight.ServerMiddlewareFactory):  # type: ignore[misc]
    """Every call but none is authenticated here: a valid bearer, or basic credentials that
    sign in (and open the bearer's session)."""

    def __init__(self, bearers: Bearers) -> None:
        self.bearers = bearers

    def start_call(self, info: Any, headers: dict[str, list[str]]) -> CallAuth:
        values = headers.get("authorization") or []
        if not values:
            raise flight.FlightUnauthenticatedError(
                "[NOT_AUTHENTICATED] Sign in with basic auth (user and password, or the name "
                "`token` and an API token), then send the bearer token you were given."
            )
        value = str(values[0])
        if len(value) > MAX_HEADER_CHARS:
            raise flight.FlightUnauthenticatedError("[NOT_AUTHENTICATED] Credentials too long.")
        scheme, _, rest = value.partition(" ")
        if scheme.lower() == "bearer":
            found = self.bearers.find(rest.strip())
            if found is None:
                raise flight.FlightUnauthenticatedError(
                    "[NOT_AUTHENTICATED] Unknown, expired or closed bearer token; sign in again."
                )
            return CallAuth(found)
        if scheme.lower() != "basic":
            raise flight.FlightUnauthenticatedError(
                "[NOT_AUTHENTICATED] Only Basic and Bearer authorization are accepted."
            )
        name, password = _credentials(rest)
        close_old_connections()
        try:
            who = sign_in(name, password, f"flight-sql:{name[:150]}")
            user = who.current()
            session, _ = session_services.session_open(user=user, start="workspace")
        except SaslRefused as exc:
            raise flight.FlightUnauthenticatedError(str(exc)) from None
        except CoreError as exc:
            raise flight.FlightUnauthenticatedError(f"[{exc.code}] {exc.message}") from None
        finally:
            db_connection.close()
        bearer = Bearer(who, session.pk)
        return CallAuth(bearer, self.bearers.issue(bearer))


class NoHandshake(flight.ServerAuthHandler):  # type: ignore[misc]
    """Flight's own Handshake answered empty: the middleware has signed the call in (clients
    such as ADBC send their basic credentials on Handshake and read the bearer header)."""

    def authenticate(self, outgoing: Any, incoming: Any) -> None:
        pass

    def is_valid(self, token: bytes) -> str:
        return ""
