"""The Tokens page (user menu → Tokens): make a named token, see its key once, use it, revoke
it with a confirmation. No statement runs, so no worker is needed."""

from __future__ import annotations

from typing import Any

import pytest
import requests
from django.contrib.auth.models import User
from playwright.sync_api import expect

from accounts.models import ApiToken
from tests.browser.conftest import UI

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def ui(live_server: Any, transactional_db: None) -> UI:
    return UI(url=live_server.url)


def _me(ui: UI, key: str) -> int:
    response = requests.get(
        f"{ui.url}/api/v1/users/me", headers={"Authorization": f"Token {key}"}, timeout=30
    )
    return response.status_code


def test_a_token_is_made_shown_once_used_and_revoked(ui: UI, page: Any, alice: User) -> None:
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    ui.login(page, "alice")
    page.get_by_role("link", name="Tokens").click()
    expect(page.get_by_role("heading", name="API tokens")).to_be_visible()
    expect(page.get_by_text("You have no tokens.")).to_be_visible()

    form = page.get_by_role("form", name="New token")
    form.get_by_label("Name").fill("nightly export")
    form.get_by_label("Expires after").select_option("7 days")
    form.get_by_role("button", name="Create token").click()

    shown = page.get_by_test_id("new-token")
    expect(shown).to_contain_text("it will not be shown again")
    key = page.get_by_test_id("new-token-key").input_value()
    assert key.startswith("tsr_")
    shown.get_by_role("button", name="Copy").click()
    expect(shown.get_by_role("button", name="Copied")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == key
    ui.screenshot(page, "tokens")

    table = page.get_by_test_id("tokens")
    expect(table).to_contain_text("nightly export")
    expect(table).not_to_contain_text(key)
    token = ApiToken.objects.get(user=alice)
    row = page.get_by_test_id(f"token-{token.id}")
    expect(row.locator("td").nth(3)).not_to_have_text("never")  # 7 days from now
    assert _me(ui, key) == 200
    expect(row.locator("td").nth(2)).to_have_text("never")  # last used: not yet reloaded

    # Done hides the key for good; reloading never shows it either.
    shown.get_by_role("button", name="Done").click()
    expect(page.get_by_test_id("new-token")).to_have_count(0)
    page.reload()
    expect(page.get_by_test_id("tokens")).to_contain_text("nightly export")
    assert key not in page.content()
    expect(row.locator("td").nth(2)).not_to_have_text("never")  # used once by now

    # Revoking asks first; cancelling keeps it.
    row.get_by_role("button", name="Revoke token nightly export").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("Scripts that use it are refused")
    dialog.get_by_role("button", name="Cancel").click()
    assert _me(ui, key) == 200
    row.get_by_role("button", name="Revoke token nightly export").click()
    page.get_by_role("dialog").get_by_role("button", name="Revoke token").click()
    expect(page.get_by_text("You have no tokens.")).to_be_visible()
    assert _me(ui, key) == 401
