"""Query parameters in the browser: ``:name`` markers get inputs above the results, and the
values go to the server beside the SQL (never into its text)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from tests.browser.conftest import UI, wait_until
from tests.browser.test_editor import api, newest_job, pane, run_and_wait, set_sql

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SQL = "SELECT count(*) AS n FROM demo.sales.orders WHERE qty >= :min_qty"


def rows_of(page: Any, job: dict[str, Any]) -> list[list[Any]]:
    rows: list[list[Any]] = api(page, f"/jobs/{job['id']}/result")["body"]["rows"]
    return rows


def test_a_parameterised_query_runs_twice_with_different_values(
    ui: UI, page: Any, demo: User
) -> None:
    ui.login(page, "alice")
    set_sql(page, SQL)
    bar = pane(page).get_by_test_id("parameter-bar")
    value = bar.get_by_label("Parameter min_qty")
    expect(value).to_be_visible()

    value.fill("1")
    pane(page).locator(".cm-content").click()
    run_and_wait(page)
    first = newest_job(page)
    assert first["sql"] == SQL
    assert first["parameters"] == {"min_qty": 1}

    value.fill("5")
    value.press("Enter")  # Enter in a parameter runs the statement
    expect(pane(page).get_by_test_id("run-job-status")).to_have_text("FINISHED", timeout=60_000)

    def second_job() -> dict[str, Any] | None:
        job = newest_job(page)
        return job if job["id"] != first["id"] and job["status"] == "FINISHED" else None

    second = wait_until(second_job, timeout=30)
    assert second["sql"] == SQL
    assert second["parameters"] == {"min_qty": 5}
    everything, fewer = rows_of(page, first)[0][0], rows_of(page, second)[0][0]
    assert 0 < fewer < everything
    expect(pane(page).get_by_test_id("result-grid")).to_contain_text(f"{fewer}")

    # For the docs: the parameter bar, the result and the schema panel.
    pane(page).get_by_role("tab", name="Schema").click()
    pane(page).get_by_label("Schema catalog").select_option("demo")
    pane(page).get_by_role("button", name="Tables of sales").click()
    pane(page).get_by_role("button", name="Columns of orders").click()
    ui.screenshot(page, "editor")

    # The values are kept with the tab over a reload.
    page.reload()
    expect(pane(page).get_by_label("Parameter min_qty")).to_have_value("5")


def test_a_hostile_value_is_data_in_the_browser_too(ui: UI, page: Any, demo: User) -> None:
    ui.login(page, "alice")
    set_sql(page, "SELECT :v AS v")
    value = pane(page).get_by_label("Parameter v")
    value.fill("1; DROP TABLE demo.sales.orders")
    pane(page).get_by_label("Type of v").select_option("text")
    pane(page).locator(".cm-content").click()
    run_and_wait(page)
    job = newest_job(page)
    assert rows_of(page, job) == [["1; DROP TABLE demo.sales.orders"]]
    assert api(page, "/catalogs/demo/databases/sales/tables/orders")["status"] == 200
