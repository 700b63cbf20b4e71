"""Log in and out through the browser; the shell's navigation."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from tests.browser.conftest import UI

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_login_shows_the_shell_and_logout_returns_to_the_form(
    ui: UI, page: Any, alice: User
) -> None:
    console_errors: list[str] = []
    page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
    page.goto(ui.url + "/")
    expect(page.get_by_role("button", name="Log in")).to_be_visible()
    # Asking whether somebody is logged in is no error (GET /auth/session, not a 401).
    assert console_errors == []

    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill("wrong password")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("alert")).to_contain_text("password")

    ui.login(page, "alice")
    expect(page.get_by_test_id("username")).to_have_text("alice")
    nav = page.get_by_role("navigation", name="Main")
    for name in ("Editor", "Catalog", "Jobs", "Saved queries"):
        expect(nav.get_by_role("link", name=name)).to_be_visible()

    page.get_by_role("button", name="Log out").click()
    expect(page.get_by_role("button", name="Log in")).to_be_visible()
    # The session really ended: the API answers 401 now.
    status = page.evaluate("fetch('/api/v1/users/me').then(r => r.status)")
    assert status == 401


def test_unknown_page_says_so(ui: UI, page: Any, alice: User) -> None:
    ui.login(page, "alice")
    page.goto(ui.url + "/no/such/page")
    expect(page.get_by_role("heading", name="Page not found")).to_be_visible()
