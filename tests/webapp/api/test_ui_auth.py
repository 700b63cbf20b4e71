"""The browser's session login: POST /auth/login and /auth/logout, GET /auth/csrf and
/auth/session.

Clients here enforce CSRF as a browser's requests are checked: a token from the csrftoken
cookie must come back in the X-CSRFToken header.
"""

from __future__ import annotations

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from tests.conftest import API, PASSWORD, assert_error, json_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def browser() -> APIClient:
    return json_client(enforce_csrf_checks=True)


def csrf_token(client: APIClient) -> str:
    response = client.get(f"{API}/auth/csrf")
    assert response.status_code == 200, response.content
    token = response.json()["csrf_token"]
    assert isinstance(token, str) and token
    assert settings.CSRF_COOKIE_NAME in response.cookies
    return str(token)


def login(client: APIClient, username: str = "alice", password: str = PASSWORD):
    return client.post(
        f"{API}/auth/login",
        {"username": username, "password": password},
        HTTP_X_CSRFTOKEN=csrf_token(client),
    )


def test_csrf_endpoint_sets_the_cookie_for_anyone(browser):
    response = browser.get(f"{API}/auth/csrf")
    assert response.status_code == 200
    cookie = response.cookies[settings.CSRF_COOKIE_NAME]
    assert cookie.value
    assert response.json()["csrf_token"]


def test_login_starts_a_session_and_answers_like_users_me(browser, alice):
    response = login(browser)
    assert response.status_code == 200, response.content
    assert response.json() == {
        "username": "alice",
        "is_admin": False,
        "teams": [],
        "can": {"create_catalog": True},
    }
    assert settings.SESSION_COOKIE_NAME in response.cookies
    me = browser.get(f"{API}/users/me")
    assert me.status_code == 200
    # users/me adds the user's quotas with their use (counted there only).
    assert {k: v for k, v in me.json().items() if k != "quotas"} == response.json()


def test_login_reports_teams_and_admin_like_users_me(browser, admin, alice):
    from accounts.services import user_create

    user_create(username="carol", password=PASSWORD, teams=["sales", "eng"])
    assert login(browser, "carol").json() == {
        "username": "carol",
        "is_admin": False,
        "teams": ["eng", "sales"],
        "can": {"create_catalog": True},
    }
    assert login(json_client(enforce_csrf_checks=True), "admin").json()["is_admin"] is True


def test_login_without_the_csrf_token_is_refused(browser, alice):
    browser.get(f"{API}/auth/csrf")  # the cookie alone is not enough
    response = browser.post(f"{API}/auth/login", {"username": "alice", "password": PASSWORD})
    assert_error(response, 403, "PERMISSION_DENIED", "CSRF")
    assert settings.SESSION_COOKIE_NAME not in response.cookies
    assert_error(browser.get(f"{API}/users/me"), 401, "NOT_AUTHENTICATED")


def test_login_with_a_wrong_csrf_token_is_refused(browser, alice):
    csrf_token(browser)
    response = browser.post(
        f"{API}/auth/login",
        {"username": "alice", "password": PASSWORD},
        HTTP_X_CSRFTOKEN="x" * 64,
    )
    assert_error(response, 403, "PERMISSION_DENIED", "CSRF")


def test_login_without_any_cookie_is_refused(browser, alice):
    response = browser.post(f"{API}/auth/login", {"username": "alice", "password": PASSWORD})
    assert_error(response, 403, "PERMISSION_DENIED", "CSRF")


@pytest.mark.parametrize(
    ("username", "password"),
    [("alice", "wrong-password"), ("nobody", PASSWORD), ("ALICE", "wrong-password")],
)
def test_wrong_credentials_are_invalid_credentials(browser, alice, username, password):
    response = login(browser, username, password)
    assert_error(response, 400, "INVALID_CREDENTIALS", "username or password is not correct")
    assert settings.SESSION_COOKIE_NAME not in response.cookies
    assert_error(browser.get(f"{API}/users/me"), 401, "NOT_AUTHENTICATED")


def test_an_inactive_user_cannot_log_in(browser, alice):
    alice.is_active = False
    alice.save()
    assert_error(login(browser), 400, "INVALID_CREDENTIALS")


def test_a_missing_field_is_a_validation_error(browser, alice):
    response = browser.post(
        f"{API}/auth/login", {"username": "alice"}, HTTP_X_CSRFTOKEN=csrf_token(browser)
    )
    error = assert_error(response, 400, "VALIDATION_ERROR", "password")
    assert error["details"]["field"] == "password"


def test_session_writes_need_the_csrf_token_too(browser, alice):
    assert login(browser).status_code == 200
    # Logged in by cookie: DRF's SessionAuthentication checks CSRF on writes.
    refused = browser.post(f"{API}/catalogs", {"name": "c1"})
    assert_error(refused, 403, "PERMISSION_DENIED", "CSRF")
    token = browser.cookies[settings.CSRF_COOKIE_NAME].value  # rotated at login
    created = browser.post(f"{API}/catalogs", {"name": "c1"}, HTTP_X_CSRFTOKEN=token)
    assert created.status_code == 201, created.content
    assert created.json()["owner"] == "alice"


def test_logout_ends_the_session(browser, alice):
    assert login(browser).status_code == 200
    token = browser.cookies[settings.CSRF_COOKIE_NAME].value
    session_key = browser.cookies[settings.SESSION_COOKIE_NAME].value
    response = browser.post(f"{API}/auth/logout", HTTP_X_CSRFTOKEN=token)
    assert response.status_code == 204, response.content
    assert response.content == b""
    assert_error(browser.get(f"{API}/users/me"), 401, "NOT_AUTHENTICATED")
    # The old session cookie is dead too, not only forgotten by this client.
    stale = APIClient()
    stale.cookies[settings.SESSION_COOKIE_NAME] = session_key
    assert_error(stale.get(f"{API}/users/me"), 401, "NOT_AUTHENTICATED")


def test_logout_needs_the_csrf_token(browser, alice):
    assert login(browser).status_code == 200
    assert_error(browser.post(f"{API}/auth/logout"), 403, "PERMISSION_DENIED", "CSRF")
    assert browser.get(f"{API}/users/me").status_code == 200


def test_logout_without_a_session_is_fine(browser):
    response = browser.post(f"{API}/auth/logout", HTTP_X_CSRFTOKEN=csrf_token(browser))
    assert response.status_code == 204


def test_session_state_follows_login_and_logout_without_a_401(browser, alice):
    before = browser.get(f"{API}/auth/session")
    assert before.status_code == 200
    assert before.json() == {"authenticated": False, "user": None}
    assert login(browser).status_code == 200
    during = browser.get(f"{API}/auth/session")
    assert during.status_code == 200
    me = {k: v for k, v in browser.get(f"{API}/users/me").json().items() if k != "quotas"}
    assert during.json() == {"authenticated": True, "user": me}
    token = browser.cookies[settings.CSRF_COOKIE_NAME].value
    assert browser.post(f"{API}/auth/logout", HTTP_X_CSRFTOKEN=token).status_code == 204
    assert browser.get(f"{API}/auth/session").json() == {"authenticated": False, "user": None}


def test_session_state_with_a_token(alice_api):
    body = alice_api.get(f"{API}/auth/session").json()
    assert body["authenticated"] is True and body["user"]["username"] == "alice"


def test_token_clients_are_unaffected(alice_api):
    assert alice_api.get(f"{API}/users/me").status_code == 200
    assert alice_api.post(f"{API}/catalogs", {"name": "tok"}).status_code == 201


def test_the_new_endpoints_are_in_the_openapi_document(anon_api):
    paths = anon_api.get(f"{API}/schema?format=json").json()["paths"]
    assert "post" in paths["/api/v1/auth/login"]
    assert "post" in paths["/api/v1/auth/logout"]
    assert "get" in paths["/api/v1/auth/csrf"]
    assert "get" in paths["/api/v1/auth/session"]
