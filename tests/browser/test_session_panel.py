"""The editor's Session panel: current catalog/database, settings and the tab's temporary
objects, with shadowing marks and Drop."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from tests.browser.conftest import UI
from tests.browser.test_editor import api, newest_job, pane, run_and_wait, set_sql

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_temporary_view_shadowing_a_table_is_shown_and_dropped(
    ui: UI, page: Any, demo: User
) -> None:
    ui.login(page, "alice")
    panel = pane(page).get_by_test_id("session-panel")
    expect(panel).to_contain_text("No session yet")
    pane(page).get_by_label("Current catalog").select_option("demo")
    expect(panel.get_by_test_id("session-catalog")).to_have_text("demo")

    set_sql(
        page,
        "CREATE TEMPORARY VIEW demo.sales.customers AS\n"
        "  SELECT id, customer_id FROM demo.sales.orders WHERE id <= 10",
    )
    run_and_wait(page)
    session_id = newest_job(page)["session"]
    expect(pane(page).get_by_test_id("run-summary")).to_contain_text("shadows")

    expect(panel.get_by_test_id("session-catalog")).to_have_text("demo")
    expect(panel.get_by_test_id("session-database")).to_have_text("sales")
    item = panel.get_by_test_id("temporary-object")
    expect(item).to_have_count(1)
    expect(item).to_contain_text("demo.sales.customers")
    expect(item.get_by_test_id("shadows")).to_be_visible()
    link = item.get_by_test_id("shadowed-link")
    expect(link).to_have_attribute("href", "/catalog/demo/sales/table/customers")
    expect(item.get_by_role("link", name="database demo.sales")).to_have_attribute(
        "href", "/catalog/demo/sales"
    )

    # a SET shows in the settings
    set_sql(page, "SET spark.sql.shuffle.partitions = 7")
    run_and_wait(page)
    expect(panel).to_contain_text("spark.sql.shuffle.partitions")

    # Drop asks first; keeping it changes nothing
    item.get_by_role("button", name="Drop demo.sales.customers").click()
    item.get_by_role("button", name="Keep").click()
    assert len(api(page, f"/sessions/{session_id}/temporary/views")["body"]["items"]) == 1
    item.get_by_role("button", name="Drop demo.sales.customers").click()
    item.get_by_role("button", name="Yes, drop").click()
    expect(panel.get_by_test_id("temporary-object")).to_have_count(0)
    expect(panel.get_by_test_id("shadows")).to_have_count(0)
    assert api(page, f"/sessions/{session_id}/temporary/views")["body"]["items"] == []
    resolved = api(page, f"/sessions/{session_id}/resolve?path=demo.sales.customers")["body"]
    assert resolved["temporary"] is False
