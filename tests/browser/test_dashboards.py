"""The dashboards page: a dashboard made in the browser with two tiles (a chart and a table)
of saved queries sharing one parameter; both tiles show rows of their runs, a new value of
the parameter reruns both, and full screen hides the owner's tools."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from dashboards.models import Dashboard, Tile
from tests.browser.conftest import UI
from workbench.models import SavedQuery

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def grid_row(tile: Any, number: int) -> Any:
    return tile.locator(f'[role="row"][aria-rowindex="{number + 1}"]')


def test_a_dashboard_with_two_tiles_and_a_shared_parameter(ui: UI, page: Any, alice: User) -> None:
    SavedQuery.objects.create(
        owner=alice,
        name="revenue by day",
        sql="SELECT id AS day, id * :k AS revenue FROM range(6)",
        chart={"type": "bar", "x": "day", "y": ["revenue"], "aggregation": "sum"},
    )
    SavedQuery.objects.create(
        owner=alice, name="shifted", sql="SELECT id, id + :k AS shifted FROM range(3)"
    )
    ui.login(page, "alice")
    page.get_by_role("link", name="Dashboards").click()
    page.get_by_role("form", name="New dashboard").get_by_label("Title").fill("Sales")
    page.get_by_role("button", name="Create dashboard").click()
    expect(page.get_by_role("heading", name="Sales")).to_be_visible()

    params = page.get_by_role("form", name="Add parameter")
    params.get_by_label("Parameter name").fill("k")
    params.get_by_label("Parameter default").fill("2")
    params.get_by_role("button", name="Add parameter").click()
    expect(page.get_by_label("parameter k")).to_have_value("2")

    adding = page.get_by_role("form", name="Add tile")
    adding.get_by_label("Saved query").select_option(label="revenue by day")
    adding.get_by_label("Show").select_option("chart")
    adding.get_by_role("button", name="Add tile").click()
    tiles = page.get_by_test_id("dashboard-tile")
    expect(tiles).to_have_count(1)
    adding.get_by_label("Saved query").select_option(label="shifted")
    adding.get_by_label("Show").select_option("table")
    adding.get_by_role("button", name="Add tile").click()
    expect(tiles).to_have_count(2)

    chart_tile = page.get_by_role("region", name="revenue by day")
    table_tile = page.get_by_role("region", name="shifted")
    # The first runs wait for the worker's Spark session.
    expect(chart_tile.get_by_test_id("chart-note")).to_contain_text("6 rows", timeout=90_000)
    bars = chart_tile.locator("rect:has(title)")
    expect(bars).to_have_count(6)
    expect(bars.last.locator("title")).to_have_text("5: revenue = 10")
    expect(grid_row(table_tile, 3).get_by_role("gridcell")).to_have_text(["2", "4"], timeout=60_000)
    expect(table_tile.get_by_test_id("tile-refreshed")).to_contain_text("Refreshed")
    board = Dashboard.objects.get(owner=alice)
    assert board.parameters == [{"name": "k", "default": 2}]
    assert sorted(t.kind for t in Tile.objects.filter(dashboard=board)) == ["chart", "table"]

    # One value of the shared parameter reruns both tiles, each with it.
    page.get_by_label("parameter k").fill("10")
    page.get_by_role("button", name="Apply").click()
    expect(grid_row(table_tile, 3).get_by_role("gridcell")).to_have_text(
        ["2", "12"], timeout=60_000
    )
    expect(bars.last.locator("title")).to_have_text("5: revenue = 50", timeout=60_000)
    ui.screenshot(page, "dashboard")
    page.emulate_media(color_scheme="dark")
    ui.screenshot(page, "dashboard-dark")
    page.emulate_media(color_scheme="light")

    page.get_by_role("button", name="Full screen").click()
    expect(page.get_by_test_id("dashboard-page")).to_have_class("page dashboard-page dash-full")
    expect(page.get_by_role("form", name="Add tile")).to_have_count(0)
    page.get_by_role("button", name="Exit full screen").click()
    expect(page.get_by_role("form", name="Add tile")).to_be_visible()
