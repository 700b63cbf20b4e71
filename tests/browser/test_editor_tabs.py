"""Editor tabs: a closed tab comes back (Undo for unsaved SQL, the closed-tabs menu,
Alt+Shift+T), and a tab's last result shows again after a reload (read from its job)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from tests.browser.conftest import UI, wait_until
from tests.browser.test_editor import editor, newest_job, pane, run_and_wait, set_sql, stored_tabs

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_a_closed_tab_is_reopened(ui: UI, page: Any, demo: User) -> None:
    ui.login(page, "alice")
    set_sql(page, "SELECT 1 AS kept")
    page.get_by_role("button", name="New tab").click()
    set_sql(page, "SELECT 2 AS unsaved_work")
    wait_until(lambda: len(stored_tabs(page)) == 2 and stored_tabs(page)[1]["sql"], 5)

    # Unsaved SQL: closed at once, with Undo.
    page.get_by_role("button", name="Close Query 2").click()
    expect(page.get_by_test_id("editor-tab")).to_have_count(1)
    toast = page.get_by_test_id("closed-toast")
    expect(toast).to_contain_text("Query 2")
    toast.get_by_role("button", name="Undo").click()
    expect(page.get_by_test_id("editor-tab")).to_have_count(2)
    expect(page.get_by_role("tab", name="Query 2")).to_have_attribute("aria-selected", "true")
    expect(editor(page)).to_have_text("SELECT 2 AS unsaved_work")

    # Closed again, then reopened from the menu, and by the keyboard.
    page.get_by_role("button", name="Close Query 2").click()
    expect(page.get_by_test_id("editor-tab")).to_have_count(1)
    page.get_by_label("Closed tabs").first.click()
    page.get_by_role("menuitem", name="Query 2").click()
    expect(page.get_by_test_id("editor-tab")).to_have_count(2)
    expect(editor(page)).to_have_text("SELECT 2 AS unsaved_work")
    page.get_by_role("button", name="Close Query 1").click()
    expect(page.get_by_test_id("editor-tab")).to_have_count(1)
    page.keyboard.press("Alt+Shift+T")
    expect(page.get_by_role("tab", name="Query 1")).to_be_visible()
    expect(editor(page)).to_have_text("SELECT 1 AS kept")

    # The reopened tab runs in a session of its own.
    run_and_wait(page)
    assert newest_job(page)["sql"] == "SELECT 1 AS kept"


def test_results_are_still_shown_after_a_reload(ui: UI, page: Any, demo: User) -> None:
    ui.login(page, "alice")
    set_sql(page, "SELECT id, qty FROM demo.sales.orders ORDER BY id LIMIT 7")
    run_and_wait(page)
    job = newest_job(page)
    wait_until(lambda: stored_tabs(page)[0].get("lastJobId") == job["id"], 5)

    page.reload()
    page.get_by_test_id("username").wait_for()
    expect(pane(page).get_by_test_id("run-job-status")).to_have_text("FINISHED")
    grid = pane(page).get_by_test_id("result-grid")
    expect(grid).to_be_visible()
    expect(grid).to_contain_text("qty")
    expect(pane(page).get_by_test_id("result-count")).to_contain_text("7 rows")
