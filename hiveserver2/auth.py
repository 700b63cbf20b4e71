"""Who signs in over HiveServer2: a user's name and password (Django's ``authenticate``), or
the name ``token`` with an API token as the password (``accounts.authentication.user_of_key``,
the REST API's one check of a key: revoked, expired and unknown keys refused). Every attempt
counts against the sign-in throttle of the client's address, as REST's login does."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass

from django.contrib.auth import authenticate
from django.contrib.auth.models import User
from django.http import HttpRequest
from rest_framework.exceptions import AuthenticationFailed

from accounts.authentication import user_of_key
from accounts.throttles import admit_sign_in
from hiveserver2.errors import NotAuthenticated
from hiveserver2.sasl import SaslRefused
from webapp.rows import RowReader

log = logging.getLogger(__name__)

TOKEN_USER = "token"
MAX_NAME_CHARS = 150  # Django's username field
MAX_PASSWORD_CHARS = 4096
# Every call of a password sign-in reads its user again: compiled once (webapp.rows).
_USER = RowReader(User, "id")


def _request_from(peer: str) -> HttpRequest:
    """A request that carries only the client's address: what the throttle counts by."""
    request = HttpRequest()
    request.META["REMOTE_ADDR"] = peer
    return request


@dataclass(frozen=True)
class SignedIn:
    """Who signed in on a connection: a user, and the API token's key when it was one."""

    user_id: int
    key: bytes | None = None
    # A mark of the password's stored hash at sign-in: a password changed since then ends
    # the sign-in (an open connection's, and a remembered HTTP credential's) at its next call.
    password_mark: str | None = None

    def current(self) -> User:
        """The user again, for one call: a user deactivated, or a token revoked or expired,
        since the connection signed in ends here (``NOT_AUTHENTICATED``). A fresh object,
        so that grants are read again too (``catalog.access`` caches them on it)."""
        if self.key is not None:
            try:
                return user_of_key(self.key)[0]
            except AuthenticationFailed as exc:
                raise NotAuthenticated(str(exc.detail)) from None
        user = _USER.get(self.user_id)
        if user is None or not user.is_active:
            raise NotAuthenticated("This user can no longer sign in.")
        if self.password_mark is not None and _mark(user.password) != self.password_mark:
            raise NotAuthenticated("The password changed since this client signed in.")
        return user

    def password_changed(self) -> bool:
        """Whether the password signed in with is no longer the user's (one small read)."""
        if self.password_mark is None:
            return False
        user = User.objects.filter(pk=self.user_id).only("password").first()
        return user is None or _mark(user.password) != self.password_mark


def _mark(password_hash: str) -> str:
    return hashlib.sha256(password_hash.encode("utf-8")).hexdigest()


def sign_in(name: str, password: str, peer: str) -> SignedIn:
    """Who these credentials name; ``SaslRefused`` with the reason otherwise."""
    wait = admit_sign_in(_request_from(peer))
    if wait is not None:
        raise SaslRefused(f"Too many sign-in attempts; try again in {wait} s. [TOO_MANY_REQUESTS]")
    if len(name) > MAX_NAME_CHARS or len(password) > MAX_PASSWORD_CHARS:
        raise SaslRefused("The username or password is not correct. [INVALID_CREDENTIALS]")
    if name == TOKEN_USER:
        key = password.encode("utf-8")
        try:
            user, _token = user_of_key(key)
        except AuthenticationFailed as exc:
            code = getattr(exc, "error_code", "NOT_AUTHENTICATED")
            raise SaslRefused(f"{exc.detail} [{code}]") from None
        return SignedIn(user.pk, key)
    found = authenticate(_request_from(peer), username=name, password=password)
    if not isinstance(found, User) or not found.is_active:
        log.info("HiveServer2 sign-in refused for %r from %s", name[:40], peer)
        raise SaslRefused("The username or password is not correct. [INVALID_CREDENTIALS]")
    return SignedIn(found.pk, password_mark=_mark(found.password))
