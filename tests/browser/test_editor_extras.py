"""Around the editor: the schema panel (insert on click), the "?" shortcut sheet and section
shortcuts, the title badge for a job that ends while its tab is not in view, and dark mode
following the system's colour scheme."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from tests.browser.conftest import UI
from tests.browser.test_editor import editor, newest_job, pane, set_sql

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_the_schema_panel_shows_columns_and_inserts_names(ui: UI, page: Any, demo: User) -> None:
    ui.login(page, "alice")
    tab = pane(page)
    tab.get_by_label("Current catalog").select_option("demo")
    expect(tab.get_by_label("Current database")).to_have_value("sales")
    tab.get_by_role("tab", name="Schema").click()
    panel = tab.get_by_test_id("schema-panel")
    expect(panel.get_by_label("Schema catalog")).to_have_value("demo")
    # The current database is open; a table's columns show with their types.
    panel.get_by_role("button", name="Columns of orders").click()
    qty = panel.locator(".schema-row").filter(
        has=page.get_by_role("button", name="qty", exact=True)
    )
    expect(qty).to_contain_text("INT")

    set_sql(page, "SELECT  FROM ")
    page.keyboard.press("Control+Home")
    for _ in range(len("SELECT ")):
        page.keyboard.press("ArrowRight")
    panel.get_by_role("button", name="qty", exact=True).click()
    page.keyboard.press("End")
    panel.get_by_role("button", name="orders", exact=True).click()
    expect(editor(page)).to_have_text("SELECT qty FROM orders")

    # From another database, a table is inserted with its database; the panel collapses.
    tab.get_by_label("Current database").select_option("web")
    expect(tab.get_by_label("Current database")).to_have_value("web")
    set_sql(page, "SELECT * FROM ")
    expect(panel.get_by_role("button", name="Tables of sales")).to_have_attribute(
        "aria-expanded", "true"
    )
    panel.get_by_role("button", name="customers", exact=True).click()
    expect(editor(page)).to_have_text("SELECT * FROM sales.customers")
    tab.get_by_role("button", name="Hide the side panel").click()
    expect(panel).to_be_hidden()
    tab.get_by_role("button", name="Show the side panel").click()
    expect(panel).to_be_visible()


def test_question_mark_shows_the_shortcuts_and_alt_shift_keys_move(
    ui: UI, page: Any, demo: User
) -> None:
    ui.login(page, "alice")
    page.locator("body").click(position={"x": 5, "y": 300})
    page.keyboard.press("?")
    sheet = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(sheet).to_be_visible()
    expect(sheet).to_contain_text("Reopen the last closed tab")
    page.keyboard.press("Escape")
    expect(sheet).to_have_count(0)
    # Typed into the editor, "?" is just a character.
    set_sql(page, "SELECT '?'")
    expect(sheet).to_have_count(0)
    page.keyboard.press("Alt+Shift+J")
    expect(page).to_have_url(re.compile(r"/jobs$"))
    page.keyboard.press("Alt+Shift+E")
    expect(page).to_have_url(re.compile(r"/editor$"))


def test_a_job_that_ends_in_a_hidden_tab_badges_the_title(ui: UI, page: Any, demo: User) -> None:
    ui.login(page, "alice")
    set_sql(page, "SELECT count(*) AS n FROM range(0, 2000000000)")
    page.keyboard.press("Control+Enter")
    page.get_by_role("button", name="New tab").click()  # look elsewhere while it runs
    expect(page).to_have_title(re.compile(r"^\(1\) "), timeout=60_000)
    assert newest_job(page)["status"] == "FINISHED"
    page.get_by_role("tab", name="Query 1").click()
    expect(page).not_to_have_title(re.compile(r"^\(\d+\) "))


def test_dark_mode_follows_the_system(ui: UI, page: Any, demo: User) -> None:
    def background() -> str:
        return str(page.evaluate("getComputedStyle(document.documentElement).backgroundColor"))

    ui.login(page, "alice")
    page.emulate_media(color_scheme="light")
    assert background() == "rgb(246, 247, 249)"
    page.emulate_media(color_scheme="dark")
    assert background() == "rgb(18, 22, 31)"
    frame = pane(page).locator(".cm-editor")
    assert frame.evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(27, 33, 44)"
    ui.screenshot(page, "editor-dark")
