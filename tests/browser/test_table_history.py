"""The History tab of a managed table lists its versions (GET …/versions), newest first,
and opens a readable one in the editor as ``VERSION AS OF``; an external table has no tab."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from playwright.sync_api import expect

from tests.browser.conftest import UI

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_the_history_tab_lists_versions_and_queries_one(ui: UI, page: Any, demo: User) -> None:
    from tests.browser.test_jobs import Runner

    runner = Runner(demo)
    for sql in (
        "CREATE TABLE demo.sales.versioned AS SELECT id FROM range(0, 10)",
        "INSERT INTO demo.sales.versioned SELECT id FROM range(10, 15)",
        "INSERT OVERWRITE demo.sales.versioned SELECT 99",
    ):
        done = runner.run(sql)
        assert done["status"] == "FINISHED", done

    ui.login(page, "alice")
    page.goto(ui.url + "/catalog/demo/sales/table/versioned")
    page.get_by_role("tab", name="History").click()
    rows = page.get_by_test_id("history-row")
    expect(rows).to_have_count(3)
    expect(rows.nth(0)).to_contain_text("OVERWRITE")
    expect(rows.nth(0)).to_contain_text("current")
    expect(rows.nth(1)).to_contain_text("INSERT")
    expect(rows.nth(2)).to_contain_text("CREATE TABLE AS SELECT")
    expect(rows.nth(2)).to_contain_text("10")
    ui.screenshot(page, "catalog-table-history")

    rows.nth(1).get_by_role("button", name="Query").click()
    expect(page).to_have_url(ui.url + "/editor")
    expect(page.get_by_role("tab", name="v1")).to_have_attribute("aria-selected", "true")
    expect(page.get_by_role("textbox", name="SQL editor").last).to_contain_text("VERSION AS OF 1")


def test_an_external_table_has_no_history_tab(ui: UI, page: Any, demo: User) -> None:
    from tests.browser.test_jobs import Runner

    path = Path(settings.TESSERA_STORAGE_ROOTS[0]) / f"hist-{uuid.uuid4().hex[:8]}"
    made = Runner(demo).run(
        f"CREATE TABLE demo.sales.ext WITH ('connector' = 'parquet', 'path' = '{path}') "
        "AS SELECT 1 AS id"
    )
    assert made["status"] == "FINISHED", made
    ui.login(page, "alice")
    page.goto(ui.url + "/catalog/demo/sales/table/ext")
    expect(page.get_by_role("tab", name="Schema")).to_be_visible()
    expect(page.get_by_role("tab", name="History")).to_have_count(0)
