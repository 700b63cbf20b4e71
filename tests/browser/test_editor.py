"""The SQL editor in the browser: run, script, errors marked in the text, cancel, completion,
tabs with their own sessions (kept over a reload), history and saving queries."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from jobs.models import Job
from tests.browser.conftest import UI, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SLOW_SQL = "SELECT count(*) AS n FROM range(0, 100000000) AS a CROSS JOIN range(0, 100000) AS b"


# --- helpers ---------------------------------------------------------------------------------


def api(page: Any, path: str, method: str = "GET", body: Any = None) -> Any:
    """Call the REST API from the page (its session cookie and CSRF token)."""
    return page.evaluate(
        """async ([path, method, body]) => {
            const csrf = (document.cookie.match(/csrftoken=([^;]+)/) || [])[1] || "";
            const r = await fetch("/api/v1" + path, {
              method, headers: {"Content-Type": "application/json", "X-CSRFToken": csrf},
              body: body === null ? undefined : JSON.stringify(body)});
            return {status: r.status, body: r.status === 204 ? null : await r.json()};
        }""",
        [path, method, body],
    )


def pane(page: Any) -> Any:
    return page.locator(".tab-pane:not([hidden])")


def editor(page: Any) -> Any:
    return pane(page).locator(".cm-content")


def set_sql(page: Any, sql: str) -> None:
    """Replace the active editor's text (no typing: no completion popups)."""
    editor(page).click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    editor(page).fill(sql)
    page.keyboard.press("Control+End")


def type_after_select(page: Any, text: str) -> None:
    """Type ``text`` right after the editor's leading ``SELECT `` (a select list to fill)."""
    page.keyboard.press("Control+Home")
    for _ in range(len("SELECT ")):
        page.keyboard.press("ArrowRight")
    page.keyboard.type(text)


def accept_completion(page: Any, label: str) -> None:
    """Accept the selected completion once it is ``label``. CodeMirror ignores Enter for 75 ms
    after the list opens (``interactionDelay``, so a fast typist does not pick by accident);
    Playwright types faster than that, and its Enter would insert a newline instead."""
    selected = page.locator(".cm-tooltip-autocomplete li[aria-selected='true']")
    expect(selected).to_contain_text(label)
    page.wait_for_timeout(150)
    expect(selected).to_contain_text(label)
    page.keyboard.press("Enter")


def stored_tabs(page: Any, user: str = "alice") -> list[dict[str, Any]]:
    raw = page.evaluate(f"localStorage.getItem('tessera.editor.v1.{user}')")
    tabs: list[dict[str, Any]] = json.loads(raw)["tabs"] if raw else []
    return tabs


def run_and_wait(page: Any, status: str = "FINISHED", timeout: float = 60_000) -> None:
    page.keyboard.press("Control+Enter")
    expect(pane(page).get_by_test_id("run-job-status")).to_have_text(status, timeout=timeout)


def newest_job(page: Any) -> dict[str, Any]:
    answer = api(page, "/jobs?page_size=1")
    item: dict[str, Any] = answer["body"]["items"][0]
    return item


# --- tests -----------------------------------------------------------------------------------


def test_query_shows_the_rows_and_column_types(ui: UI, page: Any, demo: User) -> None:
    ui.login(page, "alice")
    set_sql(page, "SELECT * FROM demo.sales.orders")
    run_and_wait(page)

    job = newest_job(page)
    assert job["sql"] == "SELECT * FROM demo.sales.orders"
    rows = job["result"]["row_count"]
    assert rows == 5000  # what bootstrap writes
    assert Job.objects.get(id=job["id"]).status == "FINISHED"
    result = pane(page).get_by_test_id("result-view")
    expect(result.get_by_test_id("result-count")).to_contain_text(f"{rows:,} rows")
    grid = result.get_by_test_id("result-grid")
    expect(grid).to_be_visible()
    header = grid.get_by_role("row").first
    for name, data_type in (("id", "BIGINT"), ("price", "DECIMAL"), ("qty", "INT")):
        expect(header).to_contain_text(name)
        expect(header).to_contain_text(data_type)
    # the summary counts rows as the result header does: one number format on the screen
    expect(pane(page).get_by_test_id("run-summary")).to_have_text(f"{rows:,} rows")
    # the tab's session was opened for the run and is remembered
    assert stored_tabs(page)[0]["sessionId"] == job["session"]


def test_run_runs_only_the_statement_at_the_cursor(ui: UI, page: Any, demo: User) -> None:
    ui.login(page, "alice")
    set_sql(page, "SELECT 1 AS first;\nSELECT 2 AS second;")
    page.keyboard.press("ArrowLeft")  # inside the second statement
    pane(page).get_by_role("button", name="Run", exact=True).click()
    expect(pane(page).get_by_test_id("run-job-status")).to_have_text("FINISHED", timeout=60_000)
    job = newest_job(page)
    assert job["sql"] == "SELECT 2 AS second"
    session_jobs = api(page, f"/jobs?session={job['session']}")["body"]["items"]
    assert [j["sql"] for j in session_jobs] == ["SELECT 2 AS second"]
    expect(pane(page).get_by_test_id("result-grid")).to_contain_text("second")

    # Run all: the script, both statements in order
    pane(page).get_by_role("button", name="Run all").click()
    expect(pane(page).get_by_test_id("run-job-status")).to_have_text("FINISHED", timeout=60_000)
    wait_until(
        lambda: len(api(page, f"/jobs?session={job['session']}")["body"]["items"]) == 3,
        10,
        message="the script's two jobs",
    )
    session_jobs = api(page, f"/jobs?session={job['session']}")["body"]["items"]
    assert [j["sql"] for j in session_jobs[:2]] == ["SELECT 2 AS second", "SELECT 1 AS first"]

    # Each statement of the script can be looked at: the last by default, any on a click.
    steps = pane(page).get_by_role("group", name="Statements of the script").get_by_role("button")
    expect(steps).to_have_count(2)
    expect(steps.nth(1)).to_have_attribute("aria-pressed", "true")
    expect(pane(page).get_by_test_id("result-grid")).to_contain_text("second")
    steps.nth(0).click()
    expect(steps.nth(0)).to_have_attribute("aria-pressed", "true")
    expect(pane(page).get_by_test_id("result-grid")).to_contain_text("first")
    expect(pane(page).get_by_test_id("result-grid")).not_to_contain_text("second")


def test_syntax_error_is_shown_and_marked_on_its_line(ui: UI, page: Any, demo: User) -> None:
    ui.login(page, "alice")
    # The statement at the cursor starts mid-line 1; its error is on its own line 2, which is
    # line 2 of the editor too.
    set_sql(page, "SELECT 1 AS a; SELECT 1,\n  FROM WHERE")
    run_and_wait(page, "FAILED")
    alert = pane(page).get_by_test_id("job-error")
    expect(alert).to_contain_text("PARSE_ERROR")
    job = newest_job(page)
    assert job["error"]["code"] == "PARSE_ERROR" and job["error"]["details"]["line"] == 2
    lines = pane(page).locator(".cm-line")
    expect(lines.nth(1).locator(".cm-lintRange-error")).to_have_count(1)
    expect(lines.nth(0).locator(".cm-lintRange-error")).to_have_count(0)
    # the cursor moved to the error's line
    expect(pane(page).locator(".cm-activeLine")).to_contain_text("FROM WHERE")


def is_statement_post(response: Any) -> bool:
    return bool(response.request.method == "POST" and response.url.endswith("/statements"))


def test_a_short_select_is_one_request(ui: UI, page: Any, demo: User) -> None:
    """The statement POST asks for the first page (wait + page_size): a SELECT that ends within
    the wait shows its rows with no further request for the job or its result."""
    ui.login(page, "alice")
    set_sql(page, "SELECT 41 + 1 AS answer")
    requests: list[Any] = []
    page.on("request", lambda request: requests.append(request))
    # A loaded worker may take longer than the wait: then the job is followed, which is right
    # too, so the run is repeated until its answer came FINISHED.
    for _ in range(5):
        requests.clear()
        with page.expect_response(is_statement_post) as posted:
            run_and_wait(page)
        answer = posted.value.json()
        if answer["status"] == "FINISHED":
            break
    assert answer["status"] == "FINISHED", answer
    assert answer["result_page"]["rows"] == [[42]]
    post = posted.value.request
    assert json.loads(post.post_data or "{}")["page_size"] >= 1
    expect(pane(page).get_by_test_id("result-view")).to_contain_text("42")
    job_path = f"/api/v1/jobs/{answer['id']}"
    statement = [r.url for r in requests if "/statements" in r.url or job_path in r.url]
    assert statement == [post.url], statement


def test_cancel_shows_canceled_within_two_seconds(ui: UI, page: Any, demo: User) -> None:
    ui.login(page, "alice")
    set_sql(page, SLOW_SQL)
    requests: list[Any] = []
    page.on("request", lambda request: requests.append(request))
    page.keyboard.press("Control+Enter")
    status = pane(page).get_by_test_id("run-job-status")
    expect(status).to_have_text("RUNNING", timeout=60_000)
    job_id = newest_job(page)["id"]
    cancel = pane(page).get_by_role("button", name="Cancel")
    expect(cancel).to_be_visible()
    cancel.click()
    # Shown within 2 s of the click: a deadline for the wait, not a measurement.
    expect(status).to_have_text("CANCELED", timeout=2_000)
    expect(cancel).to_have_count(0)
    assert Job.objects.get(id=job_id).status == "CANCELED"
    # What was asked for is no error: a note saying how it ended, nothing in red.
    note = pane(page).get_by_test_id("job-canceled")
    expect(note).to_contain_text("Canceled — Canceled while running")
    expect(pane(page).get_by_role("alert")).to_have_count(0)
    expect(pane(page).get_by_test_id("job-error")).to_have_count(0)
    danger = page.evaluate(
        "getComputedStyle(document.documentElement).getPropertyValue('--danger').trim()"
    )
    assert note.evaluate("e => getComputedStyle(e).color") != danger
    # The job page says the same.
    pane(page).get_by_role("link", name="job details").click()
    job_page = page.get_by_test_id("job-page")
    expect(job_page.get_by_test_id("job-canceled")).to_contain_text("Canceled while running")
    expect(job_page.get_by_test_id("job-error")).to_have_count(0)
    # The editor followed the job with held long-polls (the ETag it had, ?wait=), not by
    # asking every half second.
    follows = [r for r in requests if r.method == "GET" and f"/api/v1/jobs/{job_id}?wait=" in r.url]
    assert follows, [r.url for r in requests]
    assert all(r.headers.get("if-none-match", "").startswith('"') for r in follows)


def test_autocomplete_objects_and_columns(ui: UI, page: Any, demo: User) -> None:
    ui.login(page, "alice")
    popup = page.locator(".cm-tooltip-autocomplete")
    set_sql(page, "SELECT * FROM ")
    page.keyboard.type("demo.sa")
    expect(popup).to_contain_text("sales")

    page.keyboard.press("Escape")
    set_sql(page, "SELECT * FROM demo.sales")
    page.keyboard.type(".")
    expect(popup).to_contain_text("orders")
    expect(popup).to_contain_text("customers")
    page.keyboard.type("cu")
    expect(popup).not_to_contain_text("orders")
    accept_completion(page, "customers")
    expect(editor(page)).to_have_text("SELECT * FROM demo.sales.customers")

    # columns of the FROM table, after its alias
    set_sql(page, "SELECT  FROM demo.sales.orders o")
    type_after_select(page, "o.")
    expect(popup).to_contain_text("customer_id")
    expect(popup).to_contain_text("price")
    page.keyboard.type("pr")
    accept_completion(page, "price")
    expect(editor(page)).to_have_text("SELECT o.price FROM demo.sales.orders o")

    # columns of a CTE (aliases, a star, the base column's type) and of a subquery's alias
    page.keyboard.press("Escape")
    cte = (
        "WITH big AS (SELECT o.price AS cost, o.customer_id, c.* "
        "FROM demo.sales.orders o JOIN demo.sales.customers c ON c.id = o.customer_id) "
        "SELECT  FROM big b"
    )
    set_sql(page, cte)
    page.keyboard.press("End")
    for _ in range(len(" FROM big b")):
        page.keyboard.press("ArrowLeft")
    page.keyboard.type("b.")
    expect(popup).to_contain_text("cost")
    expect(popup).to_contain_text("country")  # from c.*
    option = popup.get_by_role("option").filter(has_text="customer_id")
    expect(option).to_contain_text("BIGINT · b")
    page.keyboard.type("co")
    expect(popup).not_to_contain_text("customer_id")
    page.keyboard.press("Escape")

    set_sql(page, "SELECT  FROM (SELECT qty * 2 AS double_qty FROM demo.sales.orders) AS s")
    type_after_select(page, "s.")
    expect(popup).to_contain_text("double_qty")
    accept_completion(page, "double_qty")
    expect(editor(page)).to_have_text(
        "SELECT s.double_qty FROM (SELECT qty * 2 AS double_qty FROM demo.sales.orders) AS s"
    )


def test_tabs_have_their_own_sessions_and_survive_a_reload(ui: UI, page: Any, demo: User) -> None:
    ui.login(page, "alice")
    assert api(page, "/catalogs/demo/databases", "POST", {"name": "scratch"})["status"] == 201
    tab_pane = pane(page)
    tab_pane.get_by_label("Current catalog").select_option("demo")
    expect(tab_pane.get_by_label("Current database")).to_have_value("sales")
    set_sql(page, "SELECT 1 AS in_first_tab")

    page.get_by_role("button", name="New tab").click()
    expect(page.get_by_test_id("editor-tab")).to_have_count(2)
    second = pane(page)
    second.get_by_label("Current catalog").select_option("demo")
    expect(second.get_by_label("Current database")).to_have_value("sales")
    second.get_by_label("Current database").select_option("scratch")
    expect(second.get_by_test_id("session-database")).to_have_text("scratch")
    set_sql(page, "SELECT 2 AS in_second_tab")

    # Tabs are stored after a short debounce: wait for both, each with its session.
    wait_until(
        lambda: len(tabs := stored_tabs(page)) == 2 and all(t["sessionId"] for t in tabs),
        5,
        message="both tabs stored with their sessions",
    )
    first_id, second_id = (t["sessionId"] for t in stored_tabs(page))
    assert first_id != second_id
    assert api(page, f"/sessions/{first_id}")["body"]["current_database"] == "sales"
    assert api(page, f"/sessions/{second_id}")["body"]["current_database"] == "scratch"

    # rename the second tab by double-click
    page.get_by_role("tab", name="Query 2").dblclick()
    page.get_by_label("Tab name").fill("Scratch work")
    page.keyboard.press("Enter")
    expect(page.get_by_role("tab", name="Scratch work")).to_have_attribute("aria-selected", "true")
    wait_until(  # the debounced save
        lambda: "Scratch work" in [tab.get("title") for tab in stored_tabs(page)],
        5,
        message="the renamed tab stored",
    )

    page.reload()
    page.get_by_test_id("username").wait_for()
    expect(page.get_by_test_id("editor-tab")).to_have_count(2)
    expect(page.get_by_role("tab", name="Scratch work")).to_have_attribute("aria-selected", "true")
    expect(editor(page)).to_have_text("SELECT 2 AS in_second_tab")
    expect(pane(page).get_by_label("Current database")).to_have_value("scratch")
    page.get_by_role("tab", name="Query 1").click()
    expect(editor(page)).to_have_text("SELECT 1 AS in_first_tab")
    expect(pane(page).get_by_label("Current database")).to_have_value("sales")
    assert [t["sessionId"] for t in stored_tabs(page)] == [first_id, second_id]

    # a session gone on the server is replaced transparently on the next run
    assert api(page, f"/sessions/{first_id}", "DELETE")["status"] == 204
    run_and_wait(page)
    job = newest_job(page)
    assert job["sql"] == "SELECT 1 AS in_first_tab" and job["session"] != first_id
    wait_until(lambda: stored_tabs(page)[0]["sessionId"] == job["session"], 5, message="new id")


def test_history_reopens_a_statement_in_a_new_tab(ui: UI, page: Any, demo: User) -> None:
    ui.login(page, "alice")
    set_sql(page, "SELECT 42 AS answer")
    run_and_wait(page)
    set_sql(page, "SELECT 'something else' AS other")

    pane(page).get_by_role("tab", name="History").click()
    history = pane(page).get_by_test_id("history-panel")
    item = history.get_by_test_id("history-item").filter(has_text="SELECT 42 AS answer")
    expect(item).to_have_count(1)
    expect(item.get_by_test_id("job-status")).to_have_text("FINISHED")
    history.get_by_label("Filter history").fill("something that matches nothing")
    expect(history).to_contain_text("No statement matches.")
    history.get_by_label("Filter history").fill("42 AS")
    expect(history.get_by_test_id("history-item")).to_have_count(1)
    history.get_by_test_id("history-item").get_by_role("button", name="SELECT 42 AS answer").click()
    expect(page.get_by_test_id("editor-tab")).to_have_count(2)
    expect(editor(page)).to_have_text("SELECT 42 AS answer")


def test_save_the_tab_as_a_saved_query(ui: UI, page: Any, demo: User) -> None:
    ui.login(page, "alice")
    set_sql(page, "SELECT count(*) FROM demo.sales.orders")
    pane(page).get_by_role("button", name="Save…").click()
    dialog = page.get_by_role("dialog", name="Save query")
    dialog.get_by_label("Name").fill("Order count")
    dialog.get_by_label("Description").fill("How many orders")
    dialog.get_by_label("Shared with my team").check()
    dialog.get_by_role("button", name="Save").click()
    expect(dialog).to_have_count(0)
    expect(page.get_by_role("tab", name="Order count")).to_be_visible()

    items = api(page, "/saved-queries")["body"]["items"]
    saved = next(item for item in items if item["name"] == "Order count")
    assert saved["sql"] == "SELECT count(*) FROM demo.sales.orders"
    assert saved["description"] == "How many orders" and saved["shared"] is True

    # Save again updates the same saved query
    set_sql(page, "SELECT count(*) AS n FROM demo.sales.orders")
    pane(page).get_by_role("button", name="Save", exact=True).click()
    expect(pane(page).get_by_role("status").filter(has_text="Saved at")).to_be_visible()
    again = api(page, f"/saved-queries/{saved['id']}")["body"]
    assert again["sql"] == "SELECT count(*) AS n FROM demo.sales.orders"

    # a second one with the same name: the error shows next to the name
    page.get_by_role("button", name="New tab").click()
    set_sql(page, "SELECT 1")
    pane(page).get_by_role("button", name="Save…").click()
    dialog.get_by_label("Name").fill("Order count")
    dialog.get_by_role("button", name="Save").click()
    expect(dialog.locator(".field-error")).to_be_visible()
    dialog.get_by_role("button", name="Cancel").click()


def test_completion_does_not_pop_up_on_number_literals(ui: UI, page: Any, demo: User) -> None:
    ui.login(page, "alice")
    popup = page.locator(".cm-tooltip-autocomplete")
    set_sql(page, "SELECT ")
    # Digits that names hold (sha1, log2, log10, crc32, base64): each would match them.
    for literal in ("1", " + 2", " * 10", " - 32", ", 64", ", 1e3", ", 10L"):
        page.keyboard.type(literal)
        page.wait_for_timeout(400)  # what a popup needs to show
        expect(popup).to_have_count(0)
    expect(editor(page)).to_have_text("SELECT 1 + 2 * 10 - 32, 64, 1e3, 10L")
    # A word still gets its completions.
    page.keyboard.type(", upp")
    expect(popup).to_contain_text("upper")
