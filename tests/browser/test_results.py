"""The result view on the job page: typed header, NULL vs '', paging over 100,000 rows with a
virtualised grid, sort and filter over all rows or the page, the column menu, pinned and
resized columns, the value viewer, copying as CSV, downloads, charts over the whole result
(kept with a saved query), empty results and untrusted cell values."""

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
from tests.worker_helpers import open_session, statement, wait_job

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
    expect(notice).to_have_text("Copied 40 rows as TSV")
    lines = clipboard().split("\n")
    assert lines[0] == "id\ts\tt"
    assert lines[1] == '0\tv0\t"a\tb"'
    assert lines[2] == '1\t\t"a\tb"'
    assert lines[40] == '39\tv39\t"a\tb"'
    assert lines[41:] == [""]

    # Shift+click selects a block: Ctrl+C copies it with its column names; as Markdown too.
    grid.evaluate("e => { e.scrollTop = 0; }")
    row(grid, 1).get_by_role("gridcell").nth(0).click()
    row(grid, 2).get_by_role("gridcell").nth(1).click(modifiers=["Shift"])
    expect(grid.locator('[role="gridcell"][aria-selected="true"]')).to_have_count(4)
    page.keyboard.press("Control+c")
    expect(notice).to_have_text("Copied 4 cells as TSV")
    copied("id\ts\n0\tv0\n1\t\n")
    page.get_by_label("Copy format").select_option("markdown")
    page.get_by_role("button", name="Copy selection").click()
    copied("| id | s |\n| --- | --- |\n| 0 | v0 |\n| 1 | NULL |\n")


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


def clipboard(page: Any) -> str:
    text: str = page.evaluate("navigator.clipboard.readText()")
    return text


def test_sort_filter_pin_and_view_values_over_100000_rows(ui: UI, page: Any, alice: User) -> None:
    job = run(
        alice,
        "SELECT id, IF(id % 7 = 0, NULL, CAST(id AS STRING)) AS s, "
        "named_struct('k', id, 'tags', array('a', 'b')) AS j FROM range(100000)",
    )
    assert job["status"] == "FINISHED", job
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    ui.login(page, "alice")
    page.goto(f"{ui.url}/jobs/{job['id']}")
    grid = page.get_by_test_id("result-grid")
    pager = page.get_by_role("navigation", name="Result pages")
    scope = page.get_by_test_id("result-scope")
    expect(row(grid, 1).get_by_role("gridcell").first).to_have_text("0")

    # A click on a header sorts over all rows (the server sorts): ascending, then descending.
    id_header = grid.locator('[role="columnheader"][data-column="id"]')
    id_header.locator(".rv-colname").click()
    expect(id_header).to_have_attribute("aria-sort", "ascending")
    id_header.locator(".rv-colname").click()
    expect(id_header).to_have_attribute("aria-sort", "descending")
    expect(scope).to_have_text("Sorted over all 100,000 rows")
    expect(row(grid, 1).get_by_role("gridcell").first).to_have_text("99999")
    expect(row(grid, 1).get_by_role("rowheader")).to_have_text("1")

    # The last page of the sorted result ends with id 0.
    pager.get_by_role("button", name="Last page").click()
    expect(pager.get_by_test_id("result-range")).to_have_text(
        f"rows 99,001{DASH}100,000 of 100,000"
    )
    grid.evaluate("e => { e.scrollTop = e.scrollHeight; }")
    expect(row(grid, 100_000).get_by_role("gridcell")).to_have_text(
        ["0", "NULL", '{"k":0,"tags":["a","b"]}']
    )
    expect(pager.get_by_role("button", name="Next page")).to_be_disabled()
    pager.get_by_role("button", name="First page").click()
    expect(pager.get_by_test_id("result-range")).to_have_text(f"rows 1{DASH}1,000 of 100,000")

    # A filter from the column menu, over all rows: s contains 9999 (NULLs never match).
    grid.get_by_role("button", name="Column menu: s").click()
    menu = page.get_by_role("menu", name="Column s")
    stats = menu.get_by_test_id("column-stats")
    # Stats of the page shown (ids 99999 down to 99000): 143 NULLs, the rest distinct.
    nulls = sum(1 for i in range(99_000, 100_000) if i % 7 == 0)
    expect(stats).to_contain_text(f"NULL{nulls}")
    expect(stats).to_contain_text(f"Distinct{1000 - nulls}")
    expect(stats).to_contain_text("Min99000")
    expect(stats).to_contain_text("Max99999")
    menu.get_by_role("menuitem", name="Filter…").click()
    page.get_by_label("Filter operator").select_option("contains")
    page.get_by_label("Filter value").fill("9999")
    page.get_by_role("button", name="Apply").click()
    expected = [i for i in range(99_999, -1, -1) if i % 7 and "9999" in str(i)]
    expect(page.get_by_test_id("filter-chip")).to_have_text(["s contains 9999\u00d7"])
    expect(scope).to_have_text(
        f"Sorted and filtered over all 100,000 rows: {len(expected)} rows match"
    )
    expect(grid.locator(".rv-row")).to_have_count(len(expected))
    expect(row(grid, 1).get_by_role("gridcell").first).to_have_text(str(expected[0]))
    expect(row(grid, len(expected)).get_by_role("gridcell").first).to_have_text(str(expected[-1]))
    expect(pager).to_have_count(0)  # one page

    # The CSV download holds those rows in that order (the grid as shown), not the whole
    # result as stored.
    with page.expect_download() as info:
        page.get_by_role("link", name="CSV", exact=True).click()
    download = info.value
    assert download.suggested_filename == f"job-{job['id']}.csv"  # a job page names no query
    shown = list(csv.reader(io.StringIO(Path(download.path()).read_text())))
    assert shown[0] == ["id", "s", "j"]
    assert [int(line[0]) for line in shown[1:]] == expected

    # Copy the (filtered, sorted) page as CSV.
    page.get_by_label("Copy format").select_option("csv")
    page.get_by_role("button", name="Copy page").click()
    expect(page.get_by_test_id("result-notice")).to_have_text(f"Copied {len(expected)} rows as CSV")
    lines = [f'{i},{i},"{{""k"":{i},""tags"":[""a"",""b""]}}"' for i in expected]
    wait_until(
        lambda: clipboard(page) == "\r\n".join(["id,s,j", *lines]) + "\r\n",
        5,
        message="the clipboard to hold the page as CSV",
    )

    # The value viewer shows the struct as pretty JSON, and copies it.
    row(grid, 1).get_by_role("gridcell").nth(2).dblclick()
    viewer = page.get_by_test_id("value-viewer")
    expect(viewer).to_be_visible()
    expect(viewer.get_by_role("heading")).to_have_text(
        "j STRUCT<k: BIGINT NOT NULL, tags: ARRAY<STRING NOT NULL> NOT NULL>"
    )
    pretty = f'{{\n  "k": {expected[0]},\n  "tags": [\n    "a",\n    "b"\n  ]\n}}'
    expect(viewer.get_by_test_id("value-viewer-text")).to_have_text(pretty)
    viewer.get_by_role("button", name="Copy value").click()
    wait_until(lambda: clipboard(page) == pretty, 5, message="the clipboard to hold the value")
    viewer.get_by_role("button", name="Close").click()
    expect(viewer).to_have_count(0)

    # Pin j: it moves first and stays in view when the grid scrolls sideways; resize id.
    grid.get_by_role("button", name="Column menu: j").click()
    page.get_by_role("menuitem", name="Pin column").click()
    expect(grid.get_by_role("columnheader")).to_have_count(4)
    headers = grid.get_by_role("columnheader")
    expect(headers.nth(1)).to_have_attribute("data-column", "j")
    expect(row(grid, 1).get_by_role("gridcell").first).to_contain_text('{"k":')
    before = id_header.bounding_box()
    handle = id_header.get_by_role("separator", name="Resize column id").bounding_box()
    assert before is not None and handle is not None
    page.mouse.move(handle["x"] + 3, handle["y"] + 10)
    page.mouse.down()
    page.mouse.move(handle["x"] + 123, handle["y"] + 10, steps=5)
    page.mouse.up()
    after = id_header.bounding_box()
    assert after is not None and after["width"] > before["width"] + 100

    # Sorting on this page only: the page is sorted in the browser, and the UI says so.
    page.get_by_role("button", name="Clear").click()
    expect(scope).to_have_text("")
    page.get_by_role("group", name="Sort and filter").get_by_role(
        "button", name="This page"
    ).click()
    id_header.locator(".rv-colname").click()
    id_header.locator(".rv-colname").click()
    expect(scope).to_have_text("Sorted on this page")
    expect(row(grid, 1).get_by_role("gridcell").nth(1)).to_have_text("999")
    pager.get_by_role("button", name="Next page").click()
    expect(row(grid, 1001).get_by_role("gridcell").nth(1)).to_have_text("1999")
    ui.screenshot(page, "job-result")


def test_explain_output_reads_whole_in_the_value_viewer(ui: UI, page: Any, alice: User) -> None:
    job = run(alice, "EXPLAIN EXTENDED SELECT id, id * 2 AS twice FROM range(10) WHERE id > 3")
    assert job["status"] == "FINISHED", job
    ui.login(page, "alice")
    page.goto(f"{ui.url}/jobs/{job['id']}")
    grid = page.get_by_test_id("result-grid")
    cell = row(grid, 1).get_by_role("gridcell").first
    cell.click()
    page.keyboard.press("Enter")
    text = page.get_by_test_id("value-viewer-text")
    expect(text).to_contain_text("== Physical Plan ==")
    expect(text).to_contain_text("== Parsed Logical Plan ==")
    shown = text.inner_text()
    assert shown.count("\n") >= 8  # every line of the plan, not one cut line
    box = text.bounding_box()
    assert box is not None and box["height"] > 150
    page.keyboard.press("Escape")
    expect(page.get_by_test_id("value-viewer")).to_have_count(0)


CHART_SQL = (
    "SELECT id, CAST(id % 5 AS STRING) AS k, id * 2 AS twice, "
    "timestamp_seconds(1700000000 + id * 60) AS ts, "
    "round(200 + 80 * sin(id / 4000.0) + 30 * sin(id / 700.0), 2) AS wave FROM range(100000)"
)


def test_charts_over_the_whole_result(ui: UI, page: Any, alice: User) -> None:
    job = run(alice, CHART_SQL)
    assert job["status"] == "FINISHED", job
    ui.login(page, "alice")
    page.goto(f"{ui.url}/jobs/{job['id']}")
    page.get_by_role("group", name="Result view").get_by_role("button", name="Chart").click()

    # The default: a line of the average of id per time bin, over all 100,000 rows.
    chart = page.get_by_test_id("result-chart")
    expect(chart).to_have_attribute("data-type", "line")
    note = page.get_by_test_id("chart-note")
    expect(note).to_contain_text("Chart of all 100,000 rows: average of id per ts bin")
    expect(chart.locator("path.series-line")).to_have_count(1)
    # Time ticks read as dates (Nov 14 …), and every label lies inside the chart.
    ticks = chart.locator(".x-axis g text")
    assert ticks.count() >= 3
    for label in ticks.all_text_contents():
        assert label[:3] in ("Nov", "Dec", "Jan", "Feb", "Mar") or label.isdigit(), label
    svg_box = chart.bounding_box()
    assert svg_box is not None
    for index in range(ticks.count()):
        box = ticks.nth(index).bounding_box()
        assert box is not None
        assert (
            box["x"] >= svg_box["x"] - 1
            and box["x"] + box["width"] <= svg_box["x"] + svg_box["width"] + 1
        )
        assert box["y"] + box["height"] <= svg_box["y"] + svg_box["height"] + 1

    # Bars of the sum of twice per k: five groups over the whole result.
    page.get_by_label("Chart type").select_option("bar")
    page.get_by_label("X axis").select_option("k")
    page.get_by_label("Aggregation").select_option("sum")
    page.get_by_role("checkbox", name="id").uncheck()
    page.get_by_role("checkbox", name="twice").check()
    bars = chart.locator("rect:has(title)")
    expect(bars).to_have_count(5)
    total = sum(2 * i for i in range(100_000) if i % 5 == 0)
    expect(bars.first.locator("title")).to_have_text(f"0: twice = {total}")
    expect(note).to_have_text("Chart of all 100,000 rows: sum of twice per k.")
    # Area and scatter draw; a pie has a slice per group.
    page.get_by_label("Chart type").select_option("area")
    expect(chart.locator("path.series-area")).to_have_count(1)
    page.get_by_label("Chart type").select_option("pie")
    expect(chart.locator(".slice")).to_have_count(5)
    expect(chart.locator(".legend text").first).to_contain_text("20.0%")
    # A scatter of the rows themselves: evenly sampled, in X order.
    page.get_by_label("Chart type").select_option("scatter")
    page.get_by_label("X axis").select_option("id")
    page.get_by_label("Aggregation").select_option("none")
    expect(note).to_contain_text("rows evenly sampled, in order of id")
    dots = chart.locator("circle.dot")
    expect(dots.first).to_be_visible()
    assert 100 <= dots.count() <= 1000
    page.get_by_label("Chart type").select_option("line")
    page.get_by_label("X axis").select_option("ts")
    page.get_by_label("Aggregation").select_option("max")
    expect(note).to_contain_text("maximum of twice per ts bin")
    # The screenshot: an area of the average wave over time.
    page.get_by_label("Chart type").select_option("area")
    page.get_by_label("Aggregation").select_option("avg")
    page.get_by_role("checkbox", name="twice").uncheck()
    page.get_by_role("checkbox", name="wave").check()
    expect(note).to_contain_text("average of wave per ts bin")
    expect(chart.locator(".legend text")).to_have_text(["wave"])
    expect(chart.locator("path.series-area")).to_have_count(1)
    page.get_by_test_id("result-view").evaluate("e => e.scrollIntoView()")
    ui.screenshot(page, "job-result-chart")


def test_a_saved_query_keeps_its_chart(ui: UI, page: Any, alice: User) -> None:
    from tests.browser.test_editor import api, pane, run_and_wait, set_sql

    ui.login(page, "alice")
    set_sql(page, "SELECT CAST(id % 3 AS STRING) AS k, id AS n FROM range(30)")
    pane(page).get_by_role("button", name="Save…").click()
    dialog = page.get_by_role("dialog", name="Save query")
    dialog.get_by_label("Name").fill("Per k")
    dialog.get_by_role("button", name="Save").click()
    expect(dialog).to_have_count(0)
    run_and_wait(page)
    result = pane(page).get_by_test_id("result-view")
    result.get_by_role("group", name="Result view").get_by_role("button", name="Chart").click()
    result.get_by_label("Chart type").select_option("pie")
    result.get_by_label("Aggregation").select_option("sum")
    result.get_by_role("button", name="Save chart with the query").click()
    expect(result.get_by_role("button", name="Chart saved with the query")).to_be_disabled()
    saved = next(i for i in api(page, "/saved-queries")["body"]["items"] if i["name"] == "Per k")
    assert saved["chart"] == {"type": "pie", "x": "k", "y": ["n"], "aggregation": "sum"}

    # Run again: the result opens on the saved chart.
    pane(page).get_by_role("button", name="Table").click()
    pane(page).locator(".cm-content").click()
    run_and_wait(page)
    chart = pane(page).get_by_test_id("result-chart")
    expect(chart).to_have_attribute("data-type", "pie")
    expect(chart.locator(".slice")).to_have_count(3)


def test_a_download_from_the_editor_is_the_grid_as_shown_named_after_the_tab(
    ui: UI, page: Any, alice: User
) -> None:
    """Also: the sort mark stays whole beside a cut header name, and the scope note gives
    way before the copy and download buttons wrap onto a second line."""
    from tests.browser.test_editor import pane, run_and_wait, set_sql

    long_name = "order_identifier_of_the_shop"
    ui.login(page, "alice")
    set_sql(page, f"SELECT id AS {long_name}, id % 3 AS r FROM range(5000)")
    run_and_wait(page)
    grid = pane(page).get_by_test_id("result-grid")
    header = grid.locator(f'[role="columnheader"][data-column="{long_name}"]')
    header.locator(".rv-colname").click()
    header.locator(".rv-colname").click()
    expect(header).to_have_attribute("aria-sort", "descending")
    grid.get_by_role("button", name="Column menu: r").click()
    page.get_by_role("menu", name="Column r").get_by_role("menuitem", name="Filter…").click()
    page.get_by_label("Filter operator").select_option("eq")
    page.get_by_label("Filter value").fill("1")
    page.get_by_role("button", name="Apply").click()
    expected = [i for i in range(4999, -1, -1) if i % 3 == 1]
    scope = pane(page).get_by_test_id("result-scope")
    expect(scope).to_have_text(
        f"Sorted and filtered over all 5,000 rows: {len(expected):,} rows match"
    )

    # One line of tools: Add filter, the scope, Copy and the downloads side by side.
    csv_link = pane(page).get_by_role("link", name="CSV", exact=True)
    tops = [
        box["y"]
        for box in (
            pane(page).get_by_role("button", name="Add filter").bounding_box(),
            pane(page).get_by_role("button", name="Copy page").bounding_box(),
            csv_link.bounding_box(),
            pane(page).get_by_role("link", name="Parquet", exact=True).bounding_box(),
        )
        if box is not None
    ]
    assert len(tops) == 4 and max(tops) - min(tops) < 8, tops

    # A narrow column: its name is cut, the sort mark beside it is whole and inside it.
    handle = header.get_by_role("separator", name=f"Resize column {long_name}").bounding_box()
    assert handle is not None
    page.mouse.move(handle["x"] + 3, handle["y"] + 10)
    page.mouse.down()
    page.mouse.move(handle["x"] - 150, handle["y"] + 10, steps=5)
    page.mouse.up()
    name = header.locator(".rv-colname")
    assert name.evaluate("e => e.scrollWidth > e.clientWidth"), "the name is not cut"
    mark = header.get_by_test_id("sort-mark")
    expect(mark).to_have_text("▼")
    name_box, mark_box, header_box = name.bounding_box(), mark.bounding_box(), header.bounding_box()
    assert name_box and mark_box and header_box
    assert mark_box["width"] > 4
    assert mark_box["x"] >= name_box["x"] + name_box["width"] - 1
    assert mark_box["x"] + mark_box["width"] <= header_box["x"] + header_box["width"]

    with page.expect_download() as info:
        csv_link.click()
    download = info.value
    assert download.suggested_filename == "Query 1.csv"
    rows = list(csv.reader(io.StringIO(Path(download.path()).read_text())))
    assert rows == [[long_name, "r"], *[[str(i), "1"] for i in expected]]
    with page.expect_download() as info:
        pane(page).get_by_role("link", name="JSON", exact=True).click()
    assert info.value.suggested_filename == "Query 1.json"
