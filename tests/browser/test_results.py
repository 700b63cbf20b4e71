"""The result view on the job page: typed header, NULL vs '', paging over 100,000 rows with a
virtualised grid, downloads, the chart, empty results and untrusted cell values."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from tests.browser.conftest import UI, wait_until
from tests.conftest import client_for
from tests.worker.helpers import open_session, statement, wait_job

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DASH = "\u2013"  # the view writes ranges with an en dash: rows 1-1,000
BIG_SQL = "SELECT id, IF(id % 7 = 0, NULL, CAST(id AS STRING)) AS s, '' AS e FROM range(100000)"


def run(user: User, sql: str, timeout: float = 120) -> dict[str, Any]:
    """Run one statement as ``user`` through the REST API and wait until it ends."""
    api = client_for(user)
    job = statement(api, open_session(api), sql)
    return wait_job(api, job["id"], timeout=timeout)


def row(grid: Any, number: int) -> Any:
    """The grid row of result row ``number`` (1-based; the header is aria-rowindex 1)."""
    return grid.locator(f'[role="row"][aria-rowindex="{number + 1}"]')


def test_big_result_grid_pages_and_downloads(ui: UI, page: Any, alice: User) -> None:
    job = run(alice, BIG_SQL)
    assert job["status"] == "FINISHED", job
    assert job["result"]["row_count"] == 100_000

    ui.login(page, "alice")
    page.goto(f"{ui.url}/jobs/{job['id']}")
    grid = page.get_by_test_id("result-grid")
    expect(grid).to_be_visible()
    expect(page.get_by_test_id("result-count")).to_have_text("100,000 rows")

    # The header names each column with its type.
    headers = grid.get_by_role("columnheader")
    expect(headers).to_have_text(["#", "idBIGINT", "sSTRING", "eSTRING"])

    # Row 1 is id 0: s is NULL (a distinct grey italic marker), e is the empty string.
    first = row(grid, 1)
    expect(first.get_by_role("rowheader")).to_have_text("1")
    cells = first.get_by_role("gridcell")
    expect(cells).to_have_text(["0", "NULL", ""])
    expect(cells.nth(1).locator(".null")).to_have_text("NULL")
    assert cells.nth(2).locator(".null").count() == 0
    style = (
        cells.nth(1)
        .locator(".null")
        .evaluate("e => [getComputedStyle(e).fontStyle, getComputedStyle(e).color]")
    )
    assert style[0] == "italic" and style[1] != "rgb(29, 35, 48)"
    expect(row(grid, 2).get_by_role("gridcell")).to_have_text(["1", "1", ""])

    # Virtualised: a page holds 1,000 rows but only the visible few are in the DOM.
    rendered = grid.locator(".rv-row").count()
    assert 10 <= rendered < 80, rendered
    pager = page.get_by_role("navigation", name="Result pages")
    expect(pager.get_by_test_id("result-range")).to_have_text(f"rows 1{DASH}1,000 of 100,000")
    expect(pager.get_by_role("button", name="Previous page")).to_be_disabled()

    # Scrolling to the end of the page renders its last rows (and drops the first ones).
    grid.evaluate("e => { e.scrollTop = e.scrollHeight; }")
    expect(row(grid, 1000).get_by_role("gridcell")).to_have_text(["999", "999", ""])
    expect(row(grid, 1)).to_have_count(0)
    assert grid.locator(".rv-row").count() < 80

    # The second page: row numbers go on, values follow.
    pager.get_by_role("button", name="Next page").click()
    expect(pager.get_by_test_id("result-range")).to_have_text(f"rows 1,001{DASH}2,000 of 100,000")
    expect(row(grid, 1001).get_by_role("rowheader")).to_have_text("1001")
    expect(row(grid, 1001).get_by_role("gridcell")).to_have_text(["1000", "1000", ""])
    expect(row(grid, 1002).get_by_role("gridcell")).to_have_text(
        ["1001", "NULL", ""]
    )  # 1001 = 7 * 143
    ui.screenshot(page, "job-result")

    # Back again: tokens are forward-only, the view kept the first page's.
    pager.get_by_role("button", name="Previous page").click()
    expect(pager.get_by_test_id("result-range")).to_have_text(f"rows 1{DASH}1,000 of 100,000")
    expect(row(grid, 2).get_by_role("gridcell")).to_have_text(["1", "1", ""])

    # The CSV download is the whole result: a header, NULL as an empty cell, 100,000 rows.
    with page.expect_download() as info:
        page.get_by_role("link", name="CSV", exact=True).click()
    download = info.value
    assert download.suggested_filename == f"job-{job['id']}.csv"
    text = Path(download.path()).read_text()
    lines = text.splitlines()
    assert lines[0] == "id,s,e"
    assert len(lines) == 100_001
    parsed = list(csv.reader(io.StringIO("\n".join(lines[:4]))))
    assert parsed[1] == ["0", "", ""]
    assert parsed[2] == ["1", "1", ""]
    assert parsed[3] == ["2", "2", ""]
    assert lines[-1] == "99999,99999,"
    for fmt in ("json", "parquet"):
        link = page.get_by_role("link", name=fmt.upper() if fmt == "json" else "Parquet")
        expect(link).to_have_attribute("href", f"/api/v1/jobs/{job['id']}/result.{fmt}")
        expect(link).to_have_attribute("download", "")


def test_copy_a_cell_and_the_page(ui: UI, page: Any, alice: User) -> None:
    job = run(
        alice,
        "SELECT id, IF(id = 1, NULL, concat('v', id)) AS s, 'a\tb' AS t FROM range(40)",
    )
    assert job["status"] == "FINISHED", job
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    ui.login(page, "alice")
    page.goto(f"{ui.url}/jobs/{job['id']}")
    grid = page.get_by_test_id("result-grid")
    notice = page.get_by_test_id("result-notice")

    def clipboard() -> str:
        text: str = page.evaluate("navigator.clipboard.readText()")
        return text

    def copied(expected: str) -> None:
        """Until the clipboard holds ``expected`` (copying is asynchronous)."""
        wait_until(
            lambda: clipboard() == expected, 5, message=f"the clipboard to hold {expected!r}"
        )

    # A click selects a cell; Ctrl+C copies its whole value.
    row(grid, 3).get_by_role("gridcell").nth(1).click()
    expect(row(grid, 3).get_by_role("gridcell").nth(1)).to_have_attribute("aria-selected", "true")
    page.keyboard.press("Control+c")
    expect(notice).to_have_text("Copied the value")
    copied("v2")
    # The arrow keys move the selection: up to the NULL (copied as nothing), then right.
    page.keyboard.press("ArrowUp")
    expect(row(grid, 2).get_by_role("gridcell").nth(1)).to_have_attribute("aria-selected", "true")
    page.keyboard.press("Control+c")
    copied("")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Control+c")
    copied("a\tb")
    # Down past the bottom of the view scrolls the grid to keep the selection visible.
    for _ in range(35):
        page.keyboard.press("ArrowDown")
    selected = row(grid, 37).get_by_role("gridcell").nth(2)
    expect(selected).to_have_attribute("aria-selected", "true")
    expect(selected).to_be_in_viewport()

    # Copy page: the column names, then every row of the page as tab-separated text.
    page.get_by_role("button", name="Copy page").click()
    expect(notice).to_have_text("Copied 40 rows")
    lines = clipboard().split("\n")
    assert lines[0] == "id\ts\tt"
    assert lines[1] == '0\tv0\t"a\tb"'
    assert lines[2] == '1\t\t"a\tb"'
    assert lines[40] == '39\tv39\t"a\tb"'
    assert lines[41:] == [""]


def test_chart_of_the_current_page(ui: UI, page: Any, alice: User) -> None:
    job = run(
        alice,
        "SELECT CAST(id AS STRING) AS k, id * 2 AS twice, CAST(id AS DOUBLE) / 2 AS half "
        "FROM range(12)",
    )
    assert job["status"] == "FINISHED", job
    ui.login(page, "alice")
    page.goto(f"{ui.url}/jobs/{job['id']}")
    page.get_by_role("group", name="Result view").get_by_role("button", name="Chart").click()

    chart = page.get_by_test_id("result-chart")
    expect(chart).to_be_visible()
    expect(page.get_by_text(f"Chart of the rows on this page (rows 1{DASH}12)")).to_be_visible()
    # Defaults: X is the text column, Y the first numeric one: 12 bars.
    expect(chart.locator("rect:has(title)")).to_have_count(12)
    expect(chart.locator(".legend")).to_have_text("twice")
    # A second Y column: two bars per X value and two legend entries; ticks on the Y axis.
    page.get_by_role("checkbox", name="half").check()
    expect(chart.locator("rect:has(title)")).to_have_count(24)
    expect(chart.locator(".legend text")).to_have_text(["twice", "half"])
    assert chart.locator(".y-axis text").count() >= 3
    tallest = chart.locator("rect:has(title)").nth(11).get_attribute("height")
    assert tallest is not None and float(tallest) > 100  # twice=22, the top of the scale
    # As a line: one path per series.
    page.get_by_label("Chart type").select_option("line")
    expect(chart.locator("path")).to_have_count(2)
    ui.screenshot(page, "job-result-chart")
    # Back to the table.
    page.get_by_role("group", name="Result view").get_by_role("button", name="Table").click()
    expect(page.get_by_test_id("result-grid")).to_be_visible()


def test_untrusted_values_render_as_text(ui: UI, page: Any, alice: User) -> None:
    payload = "<img src=x onerror=alert(1)>"
    job = run(alice, f"SELECT '{payload}' AS v, '<b>bold</b>' AS w")
    assert job["status"] == "FINISHED", job
    dialogs: list[str] = []

    def on_dialog(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)

    ui.login(page, "alice")
    page.goto(f"{ui.url}/jobs/{job['id']}")
    grid = page.get_by_test_id("result-grid")
    expect(grid.get_by_text(payload, exact=True)).to_be_visible()
    expect(grid.get_by_text("<b>bold</b>", exact=True)).to_be_visible()
    assert grid.locator("img").count() == 0
    assert grid.locator("b").count() == 0
    page.wait_for_timeout(300)
    assert dialogs == []


def test_empty_and_command_results(ui: UI, page: Any, alice: User) -> None:
    empty = run(alice, "SELECT id FROM range(0)")
    shown = run(alice, "SET spark.sql.shuffle.partitions = 3")
    assert empty["status"] == shown["status"] == "FINISHED"

    ui.login(page, "alice")
    page.goto(f"{ui.url}/jobs/{empty['id']}")
    expect(page.get_by_test_id("result-empty")).to_have_text("No rows")
    expect(page.get_by_test_id("result-count")).to_have_text("0 rows")
    expect(page.get_by_test_id("result-grid")).to_have_count(0)

    # A command's result (no Spark) uses the same grid.
    page.goto(f"{ui.url}/jobs/{shown['id']}")
    grid = page.get_by_test_id("result-grid")
    expect(grid.get_by_role("columnheader").nth(1)).to_contain_text("key")
    count = shown["result"]["row_count"]
    assert count >= 1
    expect(page.get_by_test_id("result-count")).to_have_text(
        f"{count} {'row' if count == 1 else 'rows'}"
    )
    expect(grid.locator(".rv-row")).to_have_count(count)
    expect(grid.get_by_role("gridcell", name="spark.sql.shuffle.partitions")).to_be_visible()
