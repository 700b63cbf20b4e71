"""A saved query opened in the editor stays linked to it: Save updates it in place, "Save
as…" makes a copy, and opening it again focuses its tab (one tab per saved query unless a
new tab is asked for)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from tests.browser.conftest import UI
from tests.browser.test_editor import api, editor, pane, set_sql

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def saved_named(page: Any, name: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = api(page, "/saved-queries?scope=mine")["body"]["items"]
    return [item for item in items if item["name"] == name]


def open_from_list(page: Any, name: str, button: str = "Open in editor") -> None:
    page.get_by_role("link", name="Saved queries").click()
    item = page.get_by_test_id("saved-item").filter(has_text=name)
    item.get_by_role("button", name=button).click()
    expect(page).to_have_url(re.compile(r"/editor$"))


def test_a_saved_query_is_edited_and_saved_in_place(ui: UI, page: Any, demo: User) -> None:
    ui.login(page, "alice")
    created = api(page, "/saved-queries", "POST", {"name": "Big orders", "sql": "SELECT 1 AS one"})
    assert created["status"] == 201
    query_id = created["body"]["id"]

    open_from_list(page, "Big orders")
    expect(page.get_by_role("tab", name="Big orders")).to_have_attribute("aria-selected", "true")
    expect(editor(page)).to_have_text("SELECT 1 AS one")

    set_sql(page, "SELECT id FROM demo.sales.orders WHERE qty > 10")
    pane(page).get_by_role("button", name="Save", exact=True).click()
    expect(pane(page).get_by_role("status").filter(has_text="Saved at")).to_be_visible()
    stored = api(page, f"/saved-queries/{query_id}")["body"]
    assert stored["sql"] == "SELECT id FROM demo.sales.orders WHERE qty > 10"
    assert [item["id"] for item in saved_named(page, "Big orders")] == [query_id]  # no copy

    # Opened again: its tab is focused, not a second one; the list shows the new text.
    page.get_by_role("button", name="New tab").click()
    expect(page.get_by_test_id("editor-tab")).to_have_count(3)
    page.get_by_role("link", name="Saved queries").click()
    item = page.get_by_test_id("saved-item").filter(has_text="Big orders")
    expect(item).to_contain_text("qty > 10")
    item.get_by_role("button", name="Open in editor").click()
    expect(page.get_by_test_id("editor-tab")).to_have_count(3)
    expect(page.get_by_role("tab", name="Big orders")).to_have_attribute("aria-selected", "true")

    # Asked for: a second tab linked to the same query.
    open_from_list(page, "Big orders", "Open in new tab")
    expect(page.get_by_test_id("editor-tab")).to_have_count(4)
    expect(page.get_by_role("tab", name="Big orders")).to_have_count(2)

    # Save as… makes a copy, which the tab follows from then on.
    set_sql(page, "SELECT 2 AS two")
    pane(page).get_by_role("button", name="Save as…").click()
    dialog = page.get_by_role("dialog", name="Save query")
    expect(dialog.get_by_label("Name")).to_have_value("Big orders (copy)")
    dialog.get_by_role("button", name="Save").click()
    expect(dialog).to_have_count(0)
    expect(page.get_by_role("tab", name="Big orders (copy)")).to_be_visible()
    copy = saved_named(page, "Big orders (copy)")
    assert len(copy) == 1 and copy[0]["sql"] == "SELECT 2 AS two"
    assert api(page, f"/saved-queries/{query_id}")["body"]["sql"].endswith("qty > 10")
