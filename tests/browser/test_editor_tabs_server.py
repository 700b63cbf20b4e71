"""Editor tabs kept on the server per user: a second browser (another context, no shared
storage) sees the first one's tabs, their text and the active tab; a stale write from one
window never overwrites what another wrote (its text is kept in a tab of its own); a save
that cannot reach the server is marked on its tab and sent again once it can."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from tests.browser.conftest import UI, open_page, wait_until
from tests.browser.test_editor import api, editor, pane, set_sql
from workbench.models import EditorTab

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def server_tabs() -> list[tuple[str, str]]:
    return [(tab.title, tab.sql) for tab in EditorTab.objects.filter(owner__username="alice")]


def all_saved(page: Any) -> None:
    tabs = page.get_by_test_id("editor-tab")
    count = tabs.count()
    for index in range(count):
        expect(tabs.nth(index)).to_have_attribute("data-sync", "saved")


@pytest.fixture
def second(_browser: Any, ui: UI) -> Iterator[Any]:
    """A second browser of the same user: a context of its own (no shared local storage)."""
    yield from open_page(_browser, ui)


def test_a_second_browser_sees_the_tabs(ui: UI, page: Any, second: Any, demo: User) -> None:
    ui.login(page, "alice")
    assert api(page, "/catalogs/demo/databases", "POST", {"name": "scratch"})["status"] == 201
    set_sql(page, "SELECT 1 AS from_first")
    pane(page).get_by_label("Current catalog").select_option("demo")
    expect(pane(page).get_by_label("Current database")).to_have_value("sales")
    pane(page).get_by_label("Current database").select_option("scratch")
    page.get_by_role("button", name="New tab").click()
    page.get_by_role("tab", name="Query 2").dblclick()
    page.get_by_label("Tab name").fill("Second")
    page.keyboard.press("Enter")
    set_sql(page, "SELECT 2 AS second_tab")
    wait_until(
        lambda: (
            server_tabs()
            == [("Query 1", "SELECT 1 AS from_first"), ("Second", "SELECT 2 AS second_tab")]
        ),
        10,
    )
    all_saved(page)
    assert EditorTab.objects.get(active=True).title == "Second"
    first_tab = EditorTab.objects.get(title="Query 1")
    assert (first_tab.catalog, first_tab.database) == ("demo", "scratch")

    ui.login(second, "alice")
    expect(second.get_by_test_id("editor-tab")).to_have_count(2)
    expect(second.get_by_role("tab", name="Second")).to_have_attribute("aria-selected", "true")
    expect(editor(second)).to_have_text("SELECT 2 AS second_tab")
    second.get_by_role("tab", name="Query 1").click()
    expect(editor(second)).to_have_text("SELECT 1 AS from_first")
    # Its session here starts where the tab was in the first browser.
    expect(pane(second).get_by_label("Current catalog")).to_have_value("demo")
    expect(pane(second).get_by_label("Current database")).to_have_value("scratch")
    ui.screenshot(second, "editor-tabs-second-browser")

    # The second browser changes Query 1; the first, still on the version before, writes it
    # too: refused (409), the first shows the second's text and keeps its own in a new tab.
    set_sql(second, "SELECT 10 AS from_second")
    wait_until(lambda: ("Query 1", "SELECT 10 AS from_second") in server_tabs(), 10)
    page.get_by_role("tab", name="Query 1").click()
    set_sql(page, "SELECT 11 AS stale_first")
    expect(page.get_by_role("tab", name="Query 1 (this window)")).to_be_visible()
    expect(page.get_by_role("tab", name="Query 1", exact=True)).to_be_visible()
    page.get_by_role("tab", name="Query 1", exact=True).click()
    expect(editor(page)).to_have_text("SELECT 10 AS from_second")
    page.get_by_role("tab", name="Query 1 (this window)").click()
    expect(editor(page)).to_have_text("SELECT 11 AS stale_first")
    wait_until(lambda: ("Query 1 (this window)", "SELECT 11 AS stale_first") in server_tabs(), 10)
    assert ("Query 1", "SELECT 10 AS from_second") in server_tabs()

    # A reload of the second browser shows all three, as the server has them.
    second.reload()
    expect(second.get_by_test_id("editor-tab")).to_have_count(3)
    second.get_by_role("tab", name="Query 1 (this window)").click()
    expect(editor(second)).to_have_text("SELECT 11 AS stale_first")

    # A tab closed in one browser is gone in the other after a reload.
    page.get_by_role("button", name="Close Second").click()
    wait_until(lambda: "Second" not in [title for title, _ in server_tabs()], 10)
    second.reload()
    expect(second.get_by_test_id("editor-tab")).to_have_count(2)
    expect(second.get_by_role("tab", name="Second")).to_have_count(0)


def test_a_save_while_offline_is_marked_and_sent_again(ui: UI, page: Any, alice: User) -> None:
    ui.login(page, "alice")
    set_sql(page, "SELECT 1 AS online")
    wait_until(lambda: server_tabs() == [("Query 1", "SELECT 1 AS online")], 10)
    all_saved(page)

    page.context.set_offline(True)
    set_sql(page, "SELECT 2 AS typed_offline")
    mark = page.get_by_test_id("tab-unsaved")
    expect(mark).to_be_visible()
    expect(mark).to_have_attribute("title", "Not saved to the server yet; trying again.")
    expect(page.get_by_test_id("editor-tab")).to_have_attribute("data-sync", "retrying")
    assert server_tabs() == [("Query 1", "SELECT 1 AS online")]

    page.context.set_offline(False)
    wait_until(lambda: server_tabs() == [("Query 1", "SELECT 2 AS typed_offline")], 15)
    expect(mark).to_have_count(0)
    all_saved(page)


def test_text_typed_just_before_a_reload_is_kept(ui: UI, page: Any, alice: User) -> None:
    """The editor writes its text back to the tab after a pause in typing; a reload inside that
    pause keeps the text (the unload flush takes it from the editor) and sends it afterwards."""
    ui.login(page, "alice")
    all_saved(page)
    set_sql(page, "SELECT 3 AS typed_then_reloaded")
    page.reload()  # at once: inside the pause
    page.get_by_test_id("username").wait_for()
    expect(editor(page)).to_have_text("SELECT 3 AS typed_then_reloaded")
    wait_until(lambda: [sql for _, sql in server_tabs()] == ["SELECT 3 AS typed_then_reloaded"], 10)
    all_saved(page)
