"""Spark's errors marked where they are in the editor (issue 34, "Errors in place"): in a
script run with Run all, the failing statement is highlighted, its error underlined on the
editor's line (not the statement's), and the error names that line."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from tests.browser.conftest import UI
from tests.browser.test_editor import newest_job, pane, set_sql

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# The third statement spans editor lines 4-6; its unresolved column is on line 6 (its own
# line 3), after a table name the planner splices into an alias of another length.
SCRIPT = (
    "SELECT 1 AS a;\n"
    "SELECT 2 AS b;\n"
    "\n"
    "SELECT o.id\n"
    "  FROM demo.sales.orders AS o\n"
    "  WHERE o.qtty > 1"
)


def test_run_all_marks_the_failing_statement_and_its_error(ui: UI, page: Any, demo: User) -> None:
    ui.login(page, "alice")
    set_sql(page, SCRIPT)
    pane(page).get_by_role("button", name="Run all").click()
    expect(pane(page).get_by_test_id("run-job-status")).to_have_text("FAILED", timeout=90_000)
    job = newest_job(page)
    assert job["error"]["code"] == "SPARK_ERROR"
    assert (job["error"]["details"]["line"], job["error"]["details"]["column"]) == (3, 9)

    lines = pane(page).locator(".cm-line")
    expect(lines).to_have_count(6)
    squiggle = pane(page).locator(".cm-lintRange-error")
    expect(squiggle).to_have_count(1)
    expect(squiggle).to_have_text("o.qtty")
    expect(lines.nth(5).locator(".cm-lintRange-error")).to_have_count(1)
    # the failing statement, and only it, is highlighted
    for index in range(6):
        marked = "true" if index >= 3 else None
        if marked:
            expect(lines.nth(index)).to_have_attribute("data-failed-statement", "true")
        else:
            expect(lines.nth(index)).not_to_have_attribute("data-failed-statement", "true")
    alert = pane(page).get_by_test_id("job-error")
    expect(alert.get_by_test_id("error-at")).to_have_text("Statement 3, line 6:")
    expect(alert).to_contain_text("UNRESOLVED_COLUMN")
    expect(alert).not_to_contain_text("__tessera")
    ui.screenshot(page, "editor-error-in-place")
    page.emulate_media(color_scheme="dark")
    ui.screenshot(page, "editor-error-in-place-dark")
    page.emulate_media(color_scheme="light")
    # an edit ends the highlight (it no longer says what ran)
    page.keyboard.press("Control+End")
    page.keyboard.type(" ")
    expect(pane(page).locator("[data-failed-statement]")).to_have_count(0)
