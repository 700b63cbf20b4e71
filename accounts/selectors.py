"""API tokens (reads): the token of a key, a user's tokens, one token as its asker may see it."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db.models import QuerySet

from accounts.models import ApiToken
from accounts.tokens import MAX_KEY_LENGTH, key_digest
from core.errors import NotFound
from webapp.rows import RowReader

# Every REST request and HiveServer2 call reads its token: compiled once (webapp.rows).
_TOKEN_BY_DIGEST = RowReader(ApiToken, "digest", select_related=("user",))


def token_by_key(key: str) -> ApiToken | None:
    """The token whose key is ``key`` (with its user), or None. Over-long keys cost no query."""
    if not key or len(key) > MAX_KEY_LENGTH:
        return None
    return _TOKEN_BY_DIGEST.get(key_digest(key))


def token_page_key(token: ApiToken) -> int:
    return int(token.pk)


def token_list(*, owner: User, after: Any = None, limit: int) -> list[ApiToken]:
    """``owner``'s tokens, newest first, keyset-paged by id."""
    qs: QuerySet[ApiToken] = ApiToken.objects.filter(user=owner).select_related("user")
    if after is not None:
        try:
            qs = qs.filter(pk__lt=int(after))
        except (TypeError, ValueError):
            qs = qs.none()
    return list(qs.order_by("-id")[:limit])


def token_get(*, asker: User, token_id: int) -> ApiToken:
    """The token ``token_id`` if ``asker`` owns it or is an admin; NOT_FOUND otherwise, the
    same answer as for a token that does not exist."""
    qs = ApiToken.objects.select_related("user").filter(pk=token_id)
    if not asker.is_staff:
        qs = qs.filter(user=asker)
    token = qs.first()
    if token is None:
        raise NotFound(f"There is no token {token_id}.")
    return token


def user_named(name: str) -> User:
    """The user ``name`` (case-insensitive), for an admin's ``?user=``; NOT_FOUND if none."""
    user = User.objects.filter(username__iexact=name).first()
    if user is None:
        raise NotFound(f"There is no user named '{name}'.")
    return user
