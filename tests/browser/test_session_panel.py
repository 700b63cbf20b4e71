"""The editor's Session panel: current catalog/database, settings and the tab's temporary
objects, with shadowing marks and Drop."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from tests.browser.conftest import PASSWORD, UI
from tests.browser.test_editor import api, newest_job, pane, run_and_wait, set_sql

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_temporary_view_shadowing_a_table_is_shown_and_dropped(
    ui: UI, page: Any, demo: User, settings: Any
) -> None:
    settings.TESSERA_PERSONAL_CATALOG = ""  # no catalog of her own either
    ui.login(page, "alice")
    panel = pane(page).get_by_test_id("session-panel")
    # A new user with no default anywhere: the tab says it has no catalog (no silent pick).
    expect(pane(page).get_by_test_id("where-note")).to_have_text("No current catalog: choose one")
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


def test_a_new_users_first_tab_shows_its_catalog_and_works_there(
    ui: UI, page: Any, demo: User, settings: Any
) -> None:
    """The server names a default catalog: a new user's first tab opens there and says so; a
    temporary view lands there and current_catalog() answers it. A catalog the user picks
    is where their next tab starts."""
    settings.TESSERA_DEFAULT_CATALOG = "demo"
    User.objects.create_user("nina", password=PASSWORD)
    ui.login(page, "nina")
    tab = pane(page)
    expect(tab.get_by_label("Current catalog")).to_have_value("demo")
    expect(tab.get_by_label("Current database")).to_have_value("sales")
    expect(tab.get_by_test_id("where-note")).to_have_text("Opened in the server's default catalog")

    set_sql(page, "CREATE TEMPORARY VIEW recent AS SELECT 1 AS one")
    run_and_wait(page)
    session_id = newest_job(page)["session"]
    views = api(page, f"/sessions/{session_id}/temporary/views")["body"]["items"]
    assert [(v["catalog"], v["database"], v["name"]) for v in views] == [
        ("demo", "sales", "recent")
    ]

    set_sql(page, "SELECT current_catalog() AS c, current_database() AS d")
    run_and_wait(page)
    job = newest_job(page)
    assert api(page, f"/jobs/{job['id']}/result")["body"]["rows"] == [["demo", "sales"]]

    # Made the user's own default (kept on the server).
    tab.get_by_role("button", name="Make default").click()
    expect(tab.get_by_test_id("where-note")).to_have_text("Default: demo.sales")
    workspace = api(page, "/workspace")["body"]
    assert (workspace["default_catalog"], workspace["default_database"]) == ("demo", "sales")

    # Picked by the user: the next tab starts there, and says why.
    assert api(page, "/catalogs", "POST", {"name": "lab"})["status"] == 201
    page.reload()
    page.get_by_test_id("username").wait_for()
    pane(page).get_by_label("Current catalog").select_option("lab")
    expect(pane(page).get_by_label("Current database")).to_have_value("default")
    page.get_by_role("button", name="New tab").click()
    expect(page.get_by_test_id("editor-tab")).to_have_count(2)
    expect(pane(page).get_by_label("Current catalog")).to_have_value("lab")
    expect(pane(page).get_by_test_id("where-note")).to_have_text("Opened where you last worked")
