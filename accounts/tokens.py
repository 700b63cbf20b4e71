"""API tokens (writes): issue, revoke, note their use, and end all of a user's access.

A key is ``tsr_`` and 43 URL-safe characters (256 random bits). Only its SHA-256 is stored;
the key is handed back once, by ``token_create``. Every creation and revocation is audited
(``token_create`` / ``token_revoke``, the owner as principal) in the same transaction.
"""

from __future__ import annotations

import hashlib
import secrets
import unicodedata
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.sessions.models import Session
from django.db import transaction
from django.db.models.functions import Coalesce
from django.utils import timezone

from accounts.models import MAX_TOKEN_NAME_LENGTH, ApiToken
from audit.models import TOKEN_CREATE, TOKEN_REVOKE
from audit.services import record
from core.errors import CoreError

KEY_PREFIX = "tsr_"
# Longer keys are refused without a lookup: ours are 47 characters, DRF's old ones 40.
MAX_KEY_LENGTH = 128
# last_used is written at most this often per token: a request costs no write.
LAST_USED_RESOLUTION = timedelta(seconds=60)

# Why a token was revoked (the audit event's detail.reason).
REVOKED = "revoked"
LOGOUT = "logout"
DEACTIVATED = "user_deactivated"
SUPERSEDED = "over_user_limit"


def key_digest(key: str) -> str:
    """The stored form of a key: its SHA-256 in hex."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def max_age() -> timedelta | None:
    seconds = settings.TESSERA_TOKEN_MAX_AGE_SECONDS
    return timedelta(seconds=int(seconds)) if seconds else None


def expiry_of(token: ApiToken) -> datetime | None:
    """When ``token`` stops working: its own expiry, or earlier its creation plus the
    current ``TESSERA_TOKEN_MAX_AGE_SECONDS`` (so lowering the setting reaches old tokens)."""
    limit = max_age()
    capped = token.created + limit if limit is not None else None
    if token.expires is None:
        return capped
    return token.expires if capped is None else min(token.expires, capped)


def _clean_name(name: str) -> str:
    name = name.strip()
    if len(name) > MAX_TOKEN_NAME_LENGTH:
        raise CoreError(
            f"A token's name must be at most {MAX_TOKEN_NAME_LENGTH} characters long, "
            f"got {len(name):,}.",
            details={"field": "name"},
        )
    if any(unicodedata.category(ch) in ("Cc", "Cf") for ch in name):
        raise CoreError(
            "A token's name may not contain control or invisible characters.",
            details={"field": "name"},
        )
    return name


def _expiry(now: datetime, expires_in_seconds: int | None) -> datetime | None:
    limit = max_age()
    if expires_in_seconds is None:
        return now + limit if limit is not None else None
    if expires_in_seconds < 1:
        raise CoreError(
            "expires_in_seconds must be at least 1.", details={"field": "expires_in_seconds"}
        )
    if limit is not None and expires_in_seconds > limit.total_seconds():
        raise CoreError(
            f"expires_in_seconds may be at most {int(limit.total_seconds()):,} "
            "(TESSERA_TOKEN_MAX_AGE_SECONDS).",
            details={"field": "expires_in_seconds", "maximum": int(limit.total_seconds())},
        )
    # timedelta refuses more than ~2.7 million years; no token needs to outlive that.
    return now + timedelta(seconds=min(expires_in_seconds, 10**12))


def _audit(action: str, actor: Any, token: ApiToken, **detail: Any) -> None:
    record(
        action,
        actor=actor,
        object_kind="token",
        principal=("user", token.user.get_username()),
        detail={
            "token": token.pk,
            "name": token.name,
            "expires": token.expires.isoformat() if token.expires else None,
            **detail,
        },
    )


def token_create(
    *,
    user: User,
    name: str = "",
    expires_in_seconds: int | None = None,
    actor: Any = None,
    key: str | None = None,
    signed_in: bool = False,
) -> tuple[ApiToken, str]:
    """A new token of ``user`` and its key (the only time the key is known). ``key`` is for
    fixtures and benchmarks that need a known key; the API never passes one. ``signed_in``:
    made by a password sign-in, which is its first use (``last_used`` now, so the client's
    next request writes nothing)."""
    now = timezone.now()
    name = _clean_name(name)
    expires = _expiry(now, expires_in_seconds)
    key = key or KEY_PREFIX + secrets.token_urlsafe(32)
    with transaction.atomic():
        token = ApiToken.objects.create(
            user=user,
            name=name,
            digest=key_digest(key),
            created=now,
            expires=expires,
            last_used=now if signed_in else None,
        )
        _audit(TOKEN_CREATE, actor if actor is not None else user, token)
        _keep_within_limit(user, token)
    return token, key


def _keep_within_limit(user: User, newest: ApiToken) -> None:
    """Past ``TESSERA_USER_TOKENS``, revoke ``user``'s least recently used tokens (never
    ``newest``), each audited: a script that signs in on every run keeps a bounded set."""
    limit = int(settings.TESSERA_USER_TOKENS)
    if limit <= 0:
        return
    # Never used counts as used when made; ties go to the older token.
    order = ("last_seen", "created", "pk")
    extra = (
        ApiToken.objects.filter(user=user)
        .exclude(pk=newest.pk)
        .annotate(last_seen=Coalesce("last_used", "created"))
        .order_by(*order)
    )
    surplus = extra.count() + 1 - limit
    if surplus <= 0:
        return
    for token in list(extra.select_related("user")[:surplus]):
        ApiToken.objects.filter(pk=token.pk).delete()
        _audit(TOKEN_REVOKE, user, token, reason=SUPERSEDED)


def token_revoke(*, token: ApiToken, actor: Any, reason: str = REVOKED) -> None:
    """Delete ``token``: the next request with its key is 401. Revoking twice is harmless."""
    with transaction.atomic():
        deleted, _ = ApiToken.objects.filter(pk=token.pk).delete()
        if deleted:
            _audit(TOKEN_REVOKE, actor, token, reason=reason)


def token_touch(token: ApiToken, now: datetime | None = None) -> None:
    """Note that ``token`` was used: one UPDATE per token per LAST_USED_RESOLUTION at most."""
    now = now or timezone.now()
    if token.last_used is not None and now - token.last_used < LAST_USED_RESOLUTION:
        return
    token.last_used = now
    # Conditional, so concurrent requests of one token do not all write.
    ApiToken.objects.filter(pk=token.pk).exclude(last_used__gte=now - LAST_USED_RESOLUTION).update(
        last_used=now
    )


def user_access_end(user: User, *, actor: Any = None) -> None:
    """Revoke every token of ``user`` and end their browser sessions: what deactivating a
    user does (accounts.signals). Sessions store the user's id in their encoded data, so each
    live session is decoded; deactivation is a rare admin action."""
    with transaction.atomic():
        for token in list(ApiToken.objects.filter(user=user).select_related("user")):
            token_revoke(token=token, actor=actor, reason=DEACTIVATED)
    ended = [
        session.pk
        for session in Session.objects.filter(expire_date__gt=timezone.now()).iterator()
        if str(session.get_decoded().get("_auth_user_id")) == str(user.pk)
    ]
    Session.objects.filter(pk__in=ended).delete()
