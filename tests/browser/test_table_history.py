"""The History tab of a managed table lists its versions (GET …/versions), newest first,
and opens a readable one in the editor as ``VERSION AS OF``, and its schema changes from the
audit log (who, when, what changed); an external table has no tab."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from playwright.sync_api import expect

from tests.browser.conftest import UI
from tests.browser.test_editor import api

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
    # A CTAS is audited as its write: no schema change is listed for it.
    expect(page.get_by_test_id("history")).to_contain_text("No schema changes recorded.")
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


def schema(*columns: str) -> dict[str, Any]:
    return {
        "columns": [
            {"name": name, "kind": "physical", "data_type": data_type}
            for name, data_type in (c.split(" ", 1) for c in columns)
        ]
    }


def test_the_history_tab_shows_who_changed_the_schema_when_and_how(
    ui: UI, page: Any, demo: User
) -> None:
    ui.login(page, "alice")
    tables = "/catalogs/demo/databases/sales/tables"
    made = api(page, tables, "POST", {"name": "evolving", "schema": schema("id BIGINT", "qty INT")})
    assert made["status"] == 201, made
    wider = schema("id BIGINT", "qty BIGINT", "note STRING")
    changed = api(page, f"{tables}/evolving", "PATCH", {"schema": wider})
    assert changed["status"] == 200, changed
    # Only a comment: no schema change, nothing listed for it.
    assert api(page, f"{tables}/evolving", "PATCH", {"comment": "hi"})["status"] == 200

    page.goto(ui.url + "/catalog/demo/sales/table/evolving")
    page.get_by_role("tab", name="History").click()
    rows = page.get_by_test_id("schema-change-row")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("alice")
    expect(rows.nth(0)).to_contain_text("changed qty from INT to BIGINT")
    expect(rows.nth(0)).to_contain_text("added column note STRING")
    expect(rows.nth(1)).to_contain_text("created the table with 2 columns: id BIGINT, qty INT")
    # The time in the one format of the page (format.ts), as the versions above show theirs.
    event = api(page, f"{tables}/evolving/schema-changes")["body"]["items"][0]
    shown = page.evaluate(
        """(at) => new Date(at).toLocaleString(undefined, {year: "numeric", month: "short",
            day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit"})""",
        event["at"],
    )
    expect(rows.nth(0).get_by_role("cell").first).to_have_text(shown)
    ui.screenshot(page, "catalog-table-schema-changes")

    # A change made now shows when the tab is opened again.
    narrower = schema("id BIGINT", "note STRING")
    assert api(page, f"{tables}/evolving", "PATCH", {"schema": narrower})["status"] == 200
    page.reload()
    page.get_by_role("tab", name="History").click()
    expect(rows).to_have_count(3)
    expect(rows.nth(0)).to_contain_text("dropped column qty (BIGINT)")
