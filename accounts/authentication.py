"""``Authorization: Token <key>`` (or ``Bearer <key>``) for the REST API.

Unknown, revoked and malformed keys, and keys of inactive users, are ``401 NOT_AUTHENTICATED``
"Invalid token."; a key past its expiry is ``401 TOKEN_EXPIRED``. Requests without either
scheme are left to the next authentication class (the browser's session).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.http import HttpRequest
from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.plumbing import build_bearer_security_scheme_object
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.request import Request

from accounts.models import ApiToken
from accounts.selectors import token_by_key
from accounts.tokens import MAX_KEY_LENGTH, expiry_of, token_touch

SCHEMES = (b"token", b"bearer")


class TokenExpired(exceptions.AuthenticationFailed):
    """A key past its expiry; webapp.errors answers it with its own ``error_code``."""

    error_code = "TOKEN_EXPIRED"
    default_detail = "The token has expired; sign in again for a new one."


def token_scheme(request: HttpRequest | Request) -> bool:
    """Whether the request names a token (``Token …`` or ``Bearer …``): such a request is
    not a browser's, and needs no CSRF token."""
    header = request.META.get("HTTP_AUTHORIZATION", b"")
    if isinstance(header, str):
        header = header.encode("iso-8859-1", "replace")
    parts = header.split(maxsplit=1)
    return bool(parts) and parts[0].lower() in SCHEMES


class ApiTokenAuthentication(BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[User, ApiToken] | None:
        header = get_authorization_header(request)
        parts = header.split()
        if not parts or parts[0].lower() not in SCHEMES:
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed(
                "Invalid token header: give the scheme and the key, separated by one space."
            )
        return user_of_key(parts[1])

    def authenticate_header(self, request: Any) -> str:
        return "Token"


def user_of_key(raw: bytes) -> tuple[User, ApiToken]:
    """The active user of an API token's key and the token (its use recorded); unknown,
    revoked and malformed keys and keys of inactive users raise ``AuthenticationFailed``
    "Invalid token.", a key past its expiry ``TokenExpired``. The one check of a key, for the
    REST API and the HiveServer2 endpoint (the name ``token``) alike."""
    if len(raw) > MAX_KEY_LENGTH:
        raise exceptions.AuthenticationFailed("Invalid token.")
    try:
        key = raw.decode("ascii")
    except UnicodeDecodeError:
        raise exceptions.AuthenticationFailed("Invalid token.") from None
    token = token_by_key(key)
    if token is None or not token.user.is_active:
        raise exceptions.AuthenticationFailed("Invalid token.")
    now = timezone.now()
    expires = expiry_of(token)
    if expires is not None and expires <= now:
        raise TokenExpired()
    token_touch(token, now)
    return token.user, token


class ApiTokenScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    """The OpenAPI security scheme of ApiTokenAuthentication: the name and shape DRF's
    token scheme had (``tokenAuth``, ``Authorization: Token <key>``)."""

    target_class = "accounts.authentication.ApiTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        definition: dict[str, Any] = build_bearer_security_scheme_object(
            header_name="Authorization", token_prefix="Token"
        )
        definition["description"] = (
            "Token-based authentication with required prefix “Token” (“Bearer” is accepted too)"
        )
        return definition
