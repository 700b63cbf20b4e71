"""The client and API tokens: a revoked or expired token raises the client's authentication
errors; an environment that signed in with a password revokes its token when it closes, and
``logout()`` revokes any. No statement runs: the live server without a worker is enough."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from accounts.models import ApiToken
from accounts.tokens import token_create
from tests.live_client import PASSWORD, tessera


@pytest.fixture
def url(live_server: Any, transactional_db: None, alice: User) -> str:
    return str(live_server.url)


def _current(env: tessera.TableEnvironment) -> dict[str, Any]:
    return env._session_json()


def test_a_revoked_token_raises_the_authentication_error(url: str, alice: User) -> None:
    _, key = token_create(user=alice, name="script")
    env = tessera.connect(url, token=key)
    _current(env)
    ApiToken.objects.filter(user=alice).delete()  # revoked elsewhere (the UI, an admin)
    with pytest.raises(tessera.AuthenticationError) as caught:
        _current(env)
    assert caught.value.code == "NOT_AUTHENTICATED"
    assert isinstance(caught.value, tessera.PermissionDeniedError)  # as before
    assert not isinstance(caught.value, tessera.TokenExpiredError)


def test_an_expired_token_raises_token_expired(url: str, alice: User) -> None:
    _, key = token_create(user=alice, name="script")
    env = tessera.connect(url, token=key)
    ApiToken.objects.filter(user=alice).update(expires=timezone.now() - timedelta(seconds=1))
    with pytest.raises(tessera.TokenExpiredError) as caught:
        _current(env)
    assert caught.value.code == "TOKEN_EXPIRED"
    assert isinstance(caught.value, tessera.AuthenticationError)


def test_signing_in_makes_a_token_that_close_revokes(url: str, alice: User) -> None:
    with tessera.connect(url, username="alice", password=PASSWORD) as env:
        assert ApiToken.objects.filter(user=alice).count() == 1
        _current(env)
    assert not ApiToken.objects.filter(user=alice).exists()


def test_close_keeps_a_given_token_and_logout_revokes_it(url: str, alice: User) -> None:
    _, key = token_create(user=alice, name="script")
    tessera.connect(url, token=key).close()
    assert ApiToken.objects.filter(user=alice).count() == 1
    env = tessera.connect(url, token=key)
    env.logout()
    assert not ApiToken.objects.filter(user=alice).exists()
    with pytest.raises(tessera.AuthenticationError):
        tessera.connect(url, token=key)
