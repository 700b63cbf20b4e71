"""API tokens: revocation, expiry, other users' tokens, forged and oversized keys, deactivated
users, and the token logout that needs no CSRF token (docs/security.md §6 "API tokens").

Time is moved by rewriting a token's ``created``/``expires`` rows, never by sleeping."""

from __future__ import annotations

import importlib
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from django.apps import apps as django_apps
from django.contrib.auth.models import User
from django.contrib.sessions.models import Session
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from accounts import tokens
from accounts.models import ApiToken
from accounts.selectors import token_by_key
from audit.models import AuditEvent
from tests.conftest import API, PASSWORD, assert_error, json_client, token_for

pytestmark = pytest.mark.django_db


def with_token(key: str, scheme: str = "Token") -> APIClient:
    client = json_client()
    client.credentials(HTTP_AUTHORIZATION=f"{scheme} {key}")
    return client


def me(key: str, scheme: str = "Token") -> Any:
    return with_token(key, scheme).get(f"{API}/users/me")


def browser_login(username: str = "alice") -> APIClient:
    client = json_client(enforce_csrf_checks=True)
    csrf = client.get(f"{API}/auth/csrf").json()["csrf_token"]
    response = client.post(
        f"{API}/auth/login", {"username": username, "password": PASSWORD}, HTTP_X_CSRFTOKEN=csrf
    )
    assert response.status_code == 200, response.content
    return client


def csrf_of(client: APIClient) -> str:
    return str(client.cookies["csrftoken"].value)


# --- issuing ----------------------------------------------------------------------------------


def test_signing_in_twice_gives_two_different_tokens_that_both_work(alice):
    first, second = token_for("alice"), token_for("alice")
    assert first != second
    assert me(first).status_code == 200 and me(second).status_code == 200
    assert ApiToken.objects.filter(user=alice).count() == 2


def test_only_the_keys_hash_is_stored(alice):
    key = token_for("alice")
    row = ApiToken.objects.get(user=alice)
    assert key not in {row.digest, row.name}
    assert row.digest == tokens.key_digest(key) and len(row.digest) == 64


def test_sign_in_names_the_token_and_the_list_never_shows_keys(alice):
    response = json_client().post(
        f"{API}/auth/token", {"username": "alice", "password": PASSWORD, "name": "nightly"}
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["name"] == "nightly" and body["expires"] is None
    listed = with_token(body["token"]).get(f"{API}/auth/tokens")
    assert listed.status_code == 200, listed.content
    [item] = listed.json()["items"]
    assert item["id"] == body["id"] and item["name"] == "nightly" and item["current"] is True
    assert set(item) == {"id", "name", "user", "created", "last_used", "expires", "current"}
    assert body["token"] not in listed.content.decode()


def test_bearer_is_accepted_like_token(alice):
    key = token_for("alice")
    assert me(key, "Bearer").status_code == 200
    assert me(key, "bearer").status_code == 200


# --- revoked, unknown, forged ------------------------------------------------------------------


def test_a_revoked_token_is_401_and_only_that_token_is_revoked(alice):
    keep, gone = token_for("alice"), token_for("alice")
    assert with_token(gone).delete(f"{API}/auth/token").status_code == 204
    assert_error(me(gone), 401, "NOT_AUTHENTICATED", "Invalid token")
    assert me(keep).status_code == 200
    # Revoking again: the key no longer authenticates anything.
    assert_error(with_token(gone).delete(f"{API}/auth/token"), 401, "NOT_AUTHENTICATED")


def test_logout_with_a_token_needs_no_csrf_and_revokes_only_that_token(alice):
    keep, gone = token_for("alice"), token_for("alice")
    client = APIClient(enforce_csrf_checks=True)
    client.credentials(HTTP_AUTHORIZATION=f"Token {gone}")
    assert client.post(f"{API}/auth/logout").status_code == 204
    assert_error(me(gone), 401, "NOT_AUTHENTICATED")
    assert me(keep).status_code == 200
    assert AuditEvent.objects.filter(action="token_revoke", detail__reason="logout").count() == 1


def test_session_logout_still_needs_the_csrf_token(alice):
    client = browser_login()
    refused = client.post(f"{API}/auth/logout")
    assert_error(refused, 403, "PERMISSION_DENIED", "CSRF")
    assert client.get(f"{API}/users/me").status_code == 200  # still signed in
    done = client.post(f"{API}/auth/logout", HTTP_X_CSRFTOKEN=csrf_of(client))
    assert done.status_code == 204
    assert_error(client.get(f"{API}/users/me"), 401, "NOT_AUTHENTICATED")


@pytest.mark.parametrize(
    "header",
    [
        "Token 0123456789abcdef0123456789abcdef01234567",
        "Token tsr_" + "A" * 43,
        "Bearer ' OR 1=1 --",
        "Token " + "%00" * 10,
        "Token a b",
        "Token",
        "Bearer",
    ],
)
def test_a_forged_or_garbage_token_is_401(alice, header):
    token_for("alice")
    client = json_client()
    client.credentials(HTTP_AUTHORIZATION=header)
    assert_error(client.get(f"{API}/users/me"), 401, "NOT_AUTHENTICATED")


def test_a_non_ascii_key_is_401(alice):
    client = json_client()
    client.credentials(HTTP_AUTHORIZATION="Token clé-ünïcode".encode().decode("latin-1"))
    assert_error(client.get(f"{API}/users/me"), 401, "NOT_AUTHENTICATED", "Invalid token")


def test_a_huge_authorization_header_is_refused_without_a_lookup(alice):
    client = json_client()
    client.credentials(HTTP_AUTHORIZATION="Token " + "x" * 1_000_000)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(f"{API}/users/me")
    assert_error(response, 401, "NOT_AUTHENTICATED", "Invalid token")
    assert not [q for q in queries.captured_queries if "accounts_apitoken" in q["sql"]]
    assert len(response.content) < 1000  # the key is not echoed


# --- expiry -----------------------------------------------------------------------------------


def test_an_expired_token_is_401_token_expired(alice):
    key = token_for("alice")
    ApiToken.objects.filter(digest=tokens.key_digest(key)).update(
        expires=timezone.now() - timedelta(seconds=1)
    )
    response = me(key)
    error = assert_error(response, 401, "TOKEN_EXPIRED", "expired")
    assert "details" not in error or isinstance(error["details"], dict)
    assert response["WWW-Authenticate"] == "Token"


def test_the_max_age_setting_expires_new_and_old_tokens(alice, settings):
    old = token_for("alice")  # made without a maximum: no expiry of its own
    settings.TESSERA_TOKEN_MAX_AGE_SECONDS = 3600
    new = json_client().post(f"{API}/auth/token", {"username": "alice", "password": PASSWORD})
    body = new.json()
    assert body["expires"] is not None
    assert me(old).status_code == 200 and me(body["token"]).status_code == 200
    # Two hours later (the rows' clocks moved back instead).
    earlier = timezone.now() - timedelta(hours=2)
    ApiToken.objects.filter(user=alice).update(created=earlier, expires=None)
    assert_error(me(old), 401, "TOKEN_EXPIRED")
    assert_error(me(body["token"]), 401, "TOKEN_EXPIRED")


def test_a_requested_expiry_may_not_exceed_the_maximum(alice, settings):
    settings.TESSERA_TOKEN_MAX_AGE_SECONDS = 3600
    client = browser_login()
    csrf = csrf_of(client)
    over = client.post(
        f"{API}/auth/tokens", {"name": "ci", "expires_in_seconds": 3601}, HTTP_X_CSRFTOKEN=csrf
    )
    error = assert_error(over, 400, "VALIDATION_ERROR", "3,600")
    assert error["details"]["field"] == "expires_in_seconds"
    for bad in (0, -5, "soon"):
        refused = client.post(
            f"{API}/auth/tokens", {"name": "ci", "expires_in_seconds": bad}, HTTP_X_CSRFTOKEN=csrf
        )
        assert_error(refused, 400, "VALIDATION_ERROR")
    ok = client.post(
        f"{API}/auth/tokens", {"name": "ci", "expires_in_seconds": 60}, HTTP_X_CSRFTOKEN=csrf
    )
    assert ok.status_code == 201, ok.content
    assert not ApiToken.objects.filter(name="ci").exclude(pk=ok.json()["id"]).exists()


# --- other users' tokens ----------------------------------------------------------------------


def test_another_users_token_id_is_404_like_a_missing_one(alice, bob):
    token_for("alice")
    bobs = token_by_key(token_for("bob"))
    assert bobs is not None
    alice_api = with_token(token_for("alice"))
    for token_id in (bobs.pk, 999_999_999):
        error = assert_error(alice_api.delete(f"{API}/auth/tokens/{token_id}"), 404, "NOT_FOUND")
        assert error["message"] == f"There is no token {token_id}."
    assert ApiToken.objects.filter(pk=bobs.pk).exists()
    assert_error(alice_api.get(f"{API}/auth/tokens?user=bob"), 403, "PERMISSION_DENIED")
    # A huge or non-numeric id matches no route.
    assert alice_api.delete(f"{API}/auth/tokens/{'9' * 40}").status_code == 404
    assert alice_api.delete(f"{API}/auth/tokens/abc").status_code == 404


def test_admins_list_and_revoke_anyones_tokens(admin, alice):
    alices = token_for("alice")
    admin_api = with_token(token_for("admin"))
    listed = admin_api.get(f"{API}/auth/tokens?user=alice")
    assert listed.status_code == 200, listed.content
    [item] = listed.json()["items"]
    assert item["user"] == "alice" and item["current"] is False
    assert admin_api.delete(f"{API}/auth/tokens/{item['id']}").status_code == 204
    assert_error(me(alices), 401, "NOT_AUTHENTICATED")
    event = AuditEvent.objects.get(action="token_revoke")
    assert event.actor_name == "admin" and event.principal_name == "alice"
    assert_error(admin_api.get(f"{API}/auth/tokens?user=nobody"), 404, "NOT_FOUND")


def test_a_token_cannot_mint_another_token(alice):
    key = token_for("alice")
    refused = with_token(key).post(f"{API}/auth/tokens", {"name": "successor"})
    assert_error(refused, 403, "PERMISSION_DENIED")
    assert ApiToken.objects.filter(user=alice).count() == 1


def test_creating_a_token_in_the_browser_needs_the_csrf_token(alice):
    client = browser_login()
    refused = client.post(f"{API}/auth/tokens", {"name": "script"})
    assert_error(refused, 403, "PERMISSION_DENIED", "CSRF")
    assert not ApiToken.objects.exists()


# --- deactivated users ------------------------------------------------------------------------


def test_a_deactivated_users_tokens_and_sessions_are_refused(alice):
    key = token_for("alice")
    browser = browser_login()
    assert browser.get(f"{API}/users/me").status_code == 200
    alice.is_active = False
    alice.save()
    assert_error(me(key), 401, "NOT_AUTHENTICATED")
    assert_error(browser.get(f"{API}/users/me"), 401, "NOT_AUTHENTICATED")
    assert not ApiToken.objects.filter(user=alice).exists()
    assert not [
        s for s in Session.objects.all() if s.get_decoded().get("_auth_user_id") == str(alice.pk)
    ]
    assert (
        AuditEvent.objects.filter(action="token_revoke", detail__reason="user_deactivated").count()
        == 1
    )
    # Active again: nothing comes back.
    alice.is_active = True
    alice.save()
    assert_error(me(key), 401, "NOT_AUTHENTICATED")
    assert_error(browser.get(f"{API}/users/me"), 401, "NOT_AUTHENTICATED")


def test_a_user_deactivated_without_signals_is_refused_all_the_same(alice):
    key = token_for("alice")
    browser = browser_login()
    User.objects.filter(pk=alice.pk).update(is_active=False)  # no save(): no signal
    assert_error(me(key), 401, "NOT_AUTHENTICATED", "Invalid token")
    # Django's session refuses an inactive user (the session itself still exists).
    assert_error(browser.get(f"{API}/users/me"), 401, "NOT_AUTHENTICATED")


# --- last use ---------------------------------------------------------------------------------


def test_a_sign_in_is_its_tokens_first_use(alice):
    key = token_for("alice")
    assert ApiToken.objects.get(user=alice).last_used is not None
    with CaptureQueriesContext(connection) as first:
        assert me(key).status_code == 200
    assert not [q for q in first.captured_queries if q["sql"].startswith("UPDATE")]


def test_last_used_is_written_at_most_once_a_minute(alice):
    _, key = tokens.token_create(user=alice, name="script")  # made, not yet used
    with CaptureQueriesContext(connection) as first:
        assert me(key).status_code == 200
    assert [q for q in first.captured_queries if q["sql"].startswith("UPDATE")]
    with CaptureQueriesContext(connection) as second:
        assert me(key).status_code == 200
    assert not [q for q in second.captured_queries if q["sql"].startswith("UPDATE")]
    row = ApiToken.objects.get(user=alice)
    assert row.last_used is not None
    ApiToken.objects.filter(pk=row.pk).update(last_used=timezone.now() - timedelta(minutes=2))
    with CaptureQueriesContext(connection) as third:
        assert me(key).status_code == 200
    assert [q for q in third.captured_queries if q["sql"].startswith("UPDATE")]


def test_token_events_are_audited(alice):
    key = token_for("alice")
    with_token(key).delete(f"{API}/auth/token")
    created, revoked = AuditEvent.objects.order_by("id")
    assert (created.action, created.actor_name, created.object_kind) == (
        "token_create",
        "alice",
        "token",
    )
    assert (revoked.action, revoked.principal_name) == ("token_revoke", "alice")
    assert key not in str(created.detail) and key not in str(revoked.detail)


def test_the_migration_carries_drf_keys_over_hashed_and_deletes_the_clear_ones(alice):
    migration = importlib.import_module("accounts.migrations.0002_api_tokens")
    old_key = "0123456789abcdef0123456789abcdef01234567"
    with connection.cursor() as cursor:  # DRF's table as its migrations made it
        cursor.execute(
            "CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY, "
            "created timestamp with time zone NOT NULL, user_id integer NOT NULL UNIQUE)"
        )
        cursor.execute(
            "INSERT INTO authtoken_token VALUES (%s, %s, %s)", [old_key, timezone.now(), alice.pk]
        )
    # The step reads only the editor's connection (SQLite refuses a real editor in a test's
    # transaction).
    migration.carry_over_drf_tokens(django_apps, SimpleNamespace(connection=connection))
    row = ApiToken.objects.get(user=alice)
    assert (row.name, row.digest) == ("carried over", tokens.key_digest(old_key))
    assert me(old_key).status_code == 200
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM authtoken_token")
        assert cursor.fetchone() == (0,)


def test_sign_ins_past_the_users_limit_revoke_the_least_recently_used(settings, alice):
    settings.TESSERA_USER_TOKENS = 3
    keys = [token_for("alice") for _ in range(3)]
    # The first is used again (a minute later): the second is now the least recently used.
    ApiToken.objects.update(last_used=timezone.now() - timedelta(minutes=5))
    assert me(keys[0]).status_code == 200
    fourth = token_for("alice")
    assert ApiToken.objects.filter(user=alice).count() == 3
    assert me(keys[1]).status_code == 401
    assert all(me(key).status_code == 200 for key in (keys[0], keys[2], fourth))
    revoked = AuditEvent.objects.filter(action="token_revoke").get()
    assert revoked.detail["reason"] == "over_user_limit"
