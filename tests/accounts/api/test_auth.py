"""Token and session authentication, user administration, and who may change what."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.middleware.csrf import get_token
from django.test import RequestFactory

from accounts.models import ApiToken
from accounts.selectors import token_by_key
from catalog.models import Table
from tests.conftest import API, PASSWORD, assert_error, json_client, token_for
from tests.grants_support import share

pytestmark = pytest.mark.django_db


def test_unauthenticated_requests_get_401_in_the_error_shape(anon_api):
    for url in (f"{API}/catalogs", f"{API}/search?q=x", f"{API}/users/me"):
        response = anon_api.get(url)
        error = assert_error(response, 401, "NOT_AUTHENTICATED")
        assert "credentials were not provided" in error["message"]
        assert response["WWW-Authenticate"] == "Token"
    assert_error(anon_api.post(f"{API}/catalogs", {"name": "x"}), 401, "NOT_AUTHENTICATED")


def test_an_unknown_token_is_401(anon_api, alice):
    anon_api.credentials(HTTP_AUTHORIZATION="Token 0123456789abcdef0123456789abcdef01234567")
    assert_error(anon_api.get(f"{API}/catalogs"), 401, "NOT_AUTHENTICATED", "Invalid token")


def test_token_is_issued_for_the_right_password_and_identifies_the_user(anon_api, alice):
    response = anon_api.post(f"{API}/auth/token", {"username": "alice", "password": PASSWORD})
    assert response.status_code == 200
    token = response.json()["token"]
    issued = token_by_key(token)
    assert issued is not None and issued.user == alice
    # Asking again gives a new token: an earlier one is never handed out again.
    assert token_for("alice") != token

    anon_api.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    me = anon_api.get(f"{API}/users/me")
    assert me.status_code == 200
    assert {k: v for k, v in me.json().items() if k != "quotas"} == {
        "username": "alice",
        "is_admin": False,
        "teams": [],
        "can": {"create_catalog": True},
    }


def test_wrong_password_or_unknown_user_is_401(anon_api, alice):
    for body in (
        {"username": "alice", "password": "wrong-password"},
        {"username": "nobody", "password": PASSWORD},
    ):
        response = anon_api.post(f"{API}/auth/token", body)
        assert_error(response, 401, "NOT_AUTHENTICATED", "username or password is not correct")
    assert not ApiToken.objects.exists()


def test_inactive_user_gets_no_token(anon_api, alice):
    alice.is_active = False
    alice.save()
    response = anon_api.post(f"{API}/auth/token", {"username": "alice", "password": PASSWORD})
    assert_error(response, 401, "NOT_AUTHENTICATED")


def test_token_request_without_password_is_a_validation_error(anon_api, alice):
    response = anon_api.post(f"{API}/auth/token", {"username": "alice"})
    error = assert_error(response, 400, "VALIDATION_ERROR", "password")
    assert "password" in error["details"]["fields"]


def test_admin_creates_a_user_with_teams_who_can_then_log_in(admin_api):
    response = admin_api.post(
        f"{API}/users",
        {"username": "carol", "password": "another-long-passphrase", "teams": ["data", "ml"]},
    )
    assert response.status_code == 201, response.content
    assert response.json() == {
        "username": "carol",
        "is_admin": False,
        "teams": ["data", "ml"],
        "can": {"create_catalog": True},
    }
    carol = User.objects.get(username="carol")
    assert sorted(carol.groups.values_list("name", flat=True)) == ["data", "ml"]
    assert not carol.is_staff and not carol.is_superuser

    client = json_client()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_for('carol', 'another-long-passphrase')}")
    me = client.get(f"{API}/users/me").json()
    assert me == {
        "username": "carol",
        "is_admin": False,
        "teams": ["data", "ml"],
        "can": {"create_catalog": True},
        "quotas": {
            "running_jobs": {"limit": 4, "used": 0},
            "queued_jobs": {"limit": 100, "used": 0},
            "streams": {"limit": None, "used": 0},  # the tests' setting: no limit
            "sessions": {"limit": 50, "used": 0},
            "upload_bytes": {"limit": 4 * 1024**3, "used": 0},
        },
    }


def test_admin_can_create_an_admin(admin_api):
    response = admin_api.post(
        f"{API}/users", {"username": "dave", "password": "dave-long-passphrase", "is_admin": True}
    )
    assert response.status_code == 201
    assert response.json()["is_admin"] is True
    dave = User.objects.get(username="dave")
    assert dave.is_staff and dave.is_superuser


def test_non_admin_cannot_create_users(alice_api):
    response = alice_api.post(f"{API}/users", {"username": "eve", "password": "eve-passphrase-1"})
    assert_error(response, 403, "PERMISSION_DENIED")
    assert not User.objects.filter(username="eve").exists()


def test_duplicate_user_is_409_case_insensitively(admin_api, alice):
    for name in ("alice", "ALICE"):
        response = admin_api.post(
            f"{API}/users", {"username": name, "password": "some-long-passphrase"}
        )
        assert_error(response, 409, "ALREADY_EXISTS", f"[{name}]")
    assert User.objects.filter(username__iexact="alice").count() == 1


def test_user_creation_validates_password_and_name(admin_api):
    short = admin_api.post(f"{API}/users", {"username": "frank", "password": "short"})
    error = assert_error(short, 400, "VALIDATION_ERROR", "too short")
    assert error["details"] == {"field": "password"}
    blank = admin_api.post(f"{API}/users", {"username": "   ", "password": "long-enough-pass"})
    assert_error(blank, 400, "VALIDATION_ERROR", "username must not be only whitespace")
    bad_team = admin_api.post(
        f"{API}/users", {"username": "gina", "password": "long-enough-pass", "teams": ["ops\x07"]}
    )
    assert_error(bad_team, 400, "VALIDATION_ERROR", "team name")
    assert not User.objects.filter(username__in=["frank", "gina"]).exists()


# --- session authentication -------------------------------------------------------------------


def test_session_login_can_read_but_a_post_needs_the_csrf_token(alice):
    client = json_client(enforce_csrf_checks=True)
    client.force_login(alice)
    listed = client.get(f"{API}/catalogs")
    assert listed.status_code == 200
    assert listed.json() == {"items": [], "next_page_token": None}

    refused = client.post(f"{API}/catalogs", {"name": "demo"})
    assert_error(refused, 403, "PERMISSION_DENIED", "CSRF")
    assert not client.get(f"{API}/catalogs").json()["items"]

    # With the CSRF cookie and header the same session may write.
    csrf = get_token(RequestFactory().get("/"))
    client.cookies["csrftoken"] = csrf
    accepted = client.post(f"{API}/catalogs", {"name": "demo"}, HTTP_X_CSRFTOKEN=csrf)
    assert accepted.status_code == 201, accepted.content
    assert accepted.json()["owner"] == "alice"


def test_token_requests_need_no_csrf_token(alice):
    client = json_client(enforce_csrf_checks=True)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_for('alice')}")
    response = client.post(f"{API}/catalogs", {"name": "demo"})
    assert response.status_code == 201, response.content


# --- permissions ---------------------------------------------------------------------------


def test_only_owner_or_admin_may_change_a_table(make, alice_api, bob_api, admin_api):
    make.catalog("demo")
    make.table("demo", "default", "t", comment="alice's")
    url = f"{API}/catalogs/demo/databases/default/tables/t"

    # Bob may read it ...
    assert bob_api.get(url).json()["created_by"] == "alice"
    # ... but not change or drop it.
    assert_error(bob_api.patch(url, {"comment": "bob's"}), 403, "PERMISSION_DENIED", "`t`")
    assert_error(bob_api.delete(url), 403, "PERMISSION_DENIED", "`demo`.`default`.`t`")
    table = Table.objects.get(name="t")
    assert table.comment == "alice's"

    # The admin may.
    patched = admin_api.patch(url, {"comment": "admin's"})
    assert patched.status_code == 200
    assert patched.json()["comment"] == "admin's"
    assert admin_api.delete(url).status_code == 204
    assert not Table.objects.filter(name="t").exists()


def test_owner_may_change_own_table_and_catalog_owner_may_change_others(make, alice_api, bob_api):
    make.catalog("demo")
    # Given CREATE (issue 18: creating in someone's catalog needs it), bob creates a table in
    # alice's catalog: both bob (its owner) and alice (the catalog's) may change it.
    share("demo", ["CREATE"], user=User.objects.get(username="bob"))
    bob_table = bob_api.post(
        f"{API}/catalogs/demo/databases/default/tables",
        {"name": "bobs", "schema": {"columns": [{"name": "a", "data_type": "INT"}]}},
    )
    assert bob_table.status_code == 201
    url = f"{API}/catalogs/demo/databases/default/tables/bobs"
    assert bob_api.patch(url, {"comment": "mine"}).json()["comment"] == "mine"
    assert alice_api.patch(url, {"comment": "my catalog"}).json()["comment"] == "my catalog"


def test_bob_cannot_change_or_drop_alices_catalog_or_database(make, bob_api):
    make.catalog("demo", comment="keep")
    make.database("demo", "sales")
    assert_error(bob_api.patch(f"{API}/catalogs/demo", {"comment": "x"}), 403, "PERMISSION_DENIED")
    assert_error(bob_api.delete(f"{API}/catalogs/demo"), 403, "PERMISSION_DENIED", "`demo`")
    assert_error(bob_api.delete(f"{API}/catalogs/demo/databases/sales"), 403, "PERMISSION_DENIED")
    assert bob_api.get(f"{API}/catalogs/demo").json()["comment"] == "keep"
    assert bob_api.get(f"{API}/catalogs/demo/databases/sales").status_code == 200
