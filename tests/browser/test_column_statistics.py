"""The Statistics tab computes column statistics (ANALYZE TABLE … FOR ALL COLUMNS) as a job
and shows them; a user who may not change the table is not offered the button."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from tests.browser.conftest import UI
from tests.conftest import API, PASSWORD, client_for

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SALES = f"{API}/catalogs/demo/databases/sales"


def test_compute_column_statistics_from_the_statistics_tab(ui: UI, page: Any, demo: User) -> None:
    from tests.browser.test_jobs import Runner

    runner = Runner(demo)
    made = runner.run(
        "CREATE TABLE demo.sales.measured AS SELECT id, "
        "IF(id % 4 = 0, NULL, concat('item-', id)) AS label FROM range(0, 200)"
    )
    assert made["status"] == "FINISHED", made
    api = client_for(demo)
    assert api.get(f"{SALES}/tables/measured/statistics").json()["column_statistics"] is None

    ui.login(page, "alice")
    page.goto(ui.url + "/catalog/demo/sales/table/measured")
    page.get_by_role("tab", name="Statistics").click()
    expect(page.get_by_test_id("column-stats-none")).to_be_visible()
    page.get_by_role("button", name="Compute column statistics").click()

    table = page.get_by_test_id("column-stats")
    expect(table).to_be_visible(timeout=90_000)
    stored = api.get(f"{SALES}/tables/measured/statistics").json()["column_statistics"]
    assert stored["row_count"] == 200
    figures = {c["name"]: c for c in stored["columns"]}
    assert figures["label"]["null_count"] == 50 and figures["id"]["max"] == "199"

    row_id = table.locator("tr[data-column='id']")
    expect(row_id.locator("td").nth(2)).to_have_text("0")  # nulls
    expect(row_id.locator("td").nth(3)).to_have_text(f"{figures['id']['distinct_count']:,}")
    expect(row_id.locator("td").nth(4)).to_have_text("0")  # min
    expect(row_id.locator("td").nth(5)).to_have_text("199")  # max
    expect(row_id.locator("td").nth(6)).to_have_text("99.5")  # avg
    label = table.locator("tr[data-column='label']")
    expect(label.locator("td").nth(2)).to_have_text("50")
    expect(label.locator("td").nth(7)).to_have_text(f"{figures['label']['avg_length']:.2f} / 8")
    expect(page.get_by_test_id("column-stats-computed")).to_contain_text("over 200 rows")
    expect(page.get_by_role("button", name="Compute column statistics")).to_be_enabled()
    expect(page.get_by_test_id("column-stats-stale")).to_have_count(0)
    ui.screenshot(page, "catalog-column-statistics")

    # A later write does not change them; the tab says so.
    insert = runner.run("INSERT INTO demo.sales.measured SELECT id, 'x' FROM range(5)")
    assert insert["status"] == "FINISHED", insert
    page.reload()
    page.get_by_role("tab", name="Statistics").click()
    expect(page.get_by_test_id("column-stats-stale")).to_be_visible()
    expect(page.get_by_test_id("column-stats-computed")).to_contain_text("over 200 rows")


def test_a_non_owner_sees_the_statistics_but_no_button(ui: UI, page: Any, demo: User) -> None:
    User.objects.create_user("bob", password=PASSWORD)
    ui.login(page, "bob")
    page.goto(ui.url + "/catalog/demo/sales/table/orders")
    page.get_by_role("tab", name="Statistics").click()
    expect(page.get_by_test_id("statistics")).to_be_visible()
    expect(page.get_by_test_id("column-stats-none")).to_contain_text("owner can compute")
    expect(page.get_by_role("button", name="Compute column statistics")).to_have_count(0)
