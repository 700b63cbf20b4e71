"""The editor's layout: a splitter between the SQL and the results (drag, or arrow keys on a
focusable separator) and a collapsible side panel, both kept per user over a reload and the
same in every tab; a stored layout that cannot be read is the default, never an error."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from tests.browser.conftest import UI
from tests.browser.test_editor import pane

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LAYOUT_KEY = "tessera.layout.v1.alice"


def splitter(page: Any) -> Any:
    return pane(page).get_by_role("separator", name="Resize the editor")


def frame_height(page: Any) -> float:
    box = pane(page).locator(".editor-frame").bounding_box()
    assert box is not None
    return float(box["height"])


def share(page: Any) -> int:
    return int(splitter(page).get_attribute("aria-valuenow") or "0")


def stored(page: Any) -> dict[str, Any]:
    raw = page.evaluate(f"localStorage.getItem('{LAYOUT_KEY}')")
    value: dict[str, Any] = json.loads(raw) if raw else {}
    return value


def test_the_splitter_resizes_with_keys_and_the_mouse_and_is_kept(
    ui: UI, page: Any, demo: User
) -> None:
    ui.login(page, "alice")
    bar = splitter(page)
    expect(bar).to_be_visible()
    expect(bar).to_have_attribute("aria-orientation", "horizontal")
    expect(bar).to_have_attribute("tabindex", "0")
    expect(bar).to_have_attribute("aria-valuenow", "38")
    before = frame_height(page)

    # Keyboard: focus the separator, two steps down make the editor taller.
    bar.focus()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    expect(bar).to_have_attribute("aria-valuenow", "48")
    taller = frame_height(page)
    assert taller > before + 20, (before, taller)
    page.keyboard.press("End")
    expect(bar).to_have_attribute("aria-valuenow", "85")
    page.keyboard.press("Home")
    expect(bar).to_have_attribute("aria-valuenow", "10")
    page.keyboard.press("ArrowUp")  # at the bound: stays
    expect(bar).to_have_attribute("aria-valuenow", "10")

    # Mouse: drag the bar down by 200 px.
    box = bar.bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x, y + 100, steps=4)
    page.mouse.move(x, y + 200, steps=4)
    page.mouse.up()
    dragged = share(page)
    assert 20 < dragged < 85, dragged
    height = frame_height(page)
    assert height > 150, height

    # Kept per user: after a reload, and in a new tab.
    page.wait_for_timeout(50)
    assert stored(page)["editorPercent"] == dragged
    page.reload()
    expect(splitter(page)).to_have_attribute("aria-valuenow", str(dragged))
    page.get_by_role("button", name="New tab").click()
    expect(page.get_by_role("tab", name="Query 2")).to_have_attribute("aria-selected", "true")
    expect(splitter(page)).to_have_attribute("aria-valuenow", str(dragged))
    assert abs(frame_height(page) - height) < 4
    ui.screenshot(page, "editor-splitter")


def test_the_side_panel_collapses_and_stays_collapsed(ui: UI, page: Any, demo: User) -> None:
    ui.login(page, "alice")
    panel = pane(page).get_by_role("complementary", name="Side panel")
    hide = pane(page).get_by_role("button", name="Hide the side panel")
    expect(panel).to_be_visible()
    expect(hide).to_have_attribute("aria-expanded", "true")
    expect(hide).to_have_attribute("aria-controls", panel.get_attribute("id") or "?")
    editor_width = pane(page).locator(".editor-main").bounding_box()["width"]

    hide.click()
    expect(panel).to_be_hidden()
    show = pane(page).get_by_role("button", name="Show the side panel")
    expect(show).to_have_attribute("aria-expanded", "false")
    wider = pane(page).locator(".editor-main").bounding_box()["width"]
    assert wider > editor_width + 200, (editor_width, wider)
    assert stored(page)["sideOpen"] is False

    page.reload()
    expect(pane(page).get_by_role("button", name="Show the side panel")).to_be_visible()
    expect(pane(page).get_by_role("complementary", name="Side panel")).to_be_hidden()
    pane(page).get_by_role("button", name="Show the side panel").click()
    expect(pane(page).get_by_role("complementary", name="Side panel")).to_be_visible()
    page.reload()
    expect(pane(page).get_by_role("complementary", name="Side panel")).to_be_visible()


def test_an_unreadable_stored_layout_is_the_default(ui: UI, page: Any, demo: User) -> None:
    ui.login(page, "alice")
    for junk in ("{not json", '{"editorPercent": 9999, "sideOpen": "yes"}', "null"):
        page.evaluate(f"localStorage.setItem('{LAYOUT_KEY}', {json.dumps(junk)})")
        page.reload()
        bar = splitter(page)
        # 9999 is held to the largest share; the rest is the default
        expect(bar).to_have_attribute("aria-valuenow", "85" if "9999" in junk else "38")
        expect(pane(page).get_by_role("complementary", name="Side panel")).to_be_visible()
    # the page raised no error (the page fixture asserts none was thrown)
