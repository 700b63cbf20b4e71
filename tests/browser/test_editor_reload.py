"""A reload while a query runs: the tab follows that query's job to its end, never the result
of the run before it (the tab keeps the job's id as soon as the POST answers; reloaded before
that, it finds the job in its session).

Nothing pauses the session's shared worker (a paused worker goes silent, and the reloaded
page's ``GET /jobs/{id}`` would have it judged lost): the running job is a cross join that
runs for minutes and is cancelled from the reloaded tab, and the POST's answer is held back
from the browser (``page.route``) while the server has already created the job."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from jobs.models import Job
from tests.browser.conftest import UI, wait_until
from tests.browser.test_editor import (
    SLOW_SQL,
    editor,
    newest_job,
    pane,
    run_and_wait,
    set_sql,
    stored_tabs,
)
from tests.workers import WorkerProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# Seconds long (30 000 x 100 000 rows: about 8 s on 2 busy cores, a few when idle): running
# when the page reloads, ended soon after. Made bigger and run again if it ended before.
MEDIUM_SQL = "SELECT count(*) AS n FROM range(0, {n}) AS a CROSS JOIN range(0, 100000) AS b"
MEDIUM_SIZES = (30_000, 120_000, 480_000, 1_920_000)

ENDED = ("FINISHED", "FAILED", "CANCELED")


def start(page: Any, sql: str) -> dict[str, Any]:
    """Run ``sql`` and wait until the POST has answered (the run area links to its job)."""
    set_sql(page, sql)
    page.keyboard.press("Control+Enter")
    wait_until(lambda: newest_job(page)["sql"] == sql, 30)
    job = newest_job(page)
    link = pane(page).get_by_role("link", name="job details")
    expect(link).to_have_attribute("href", f"/jobs/{job['id']}", timeout=30_000)
    return job


def reload(page: Any) -> None:
    page.reload()
    page.get_by_test_id("username").wait_for()


def test_a_reload_mid_query_follows_that_query_to_its_end(
    ui: UI, page: Any, demo: User, browser_worker: WorkerProcess
) -> None:
    ui.login(page, "alice")
    # An earlier run whose result must not come back after the reload.
    set_sql(page, "SELECT 'before' AS earlier_run")
    run_and_wait(page)
    earlier = newest_job(page)

    # 1. A query that runs for minutes is surely still RUNNING through the reload.
    job = start(page, SLOW_SQL)
    assert job["id"] != earlier["id"]
    status = pane(page).get_by_test_id("run-job-status")
    expect(status).to_have_text("RUNNING", timeout=60_000)
    reload(page)

    # The tab shows the running job (its link, Cancel), not the earlier run's result.
    link = pane(page).get_by_role("link", name="job details")
    cancel = pane(page).get_by_role("button", name="Cancel")
    expect(editor(page)).to_have_text(SLOW_SQL)
    expect(link).to_have_attribute("href", f"/jobs/{job['id']}")
    expect(status).to_have_text("RUNNING")
    expect(cancel).to_be_visible()
    expect(pane(page).get_by_text("earlier_run")).to_have_count(0)
    assert stored_tabs(page)[0]["lastJobId"] == job["id"]
    # Cancelled from the reloaded tab, which follows that same job to its end.
    cancel.click()
    expect(status).to_have_text("CANCELED", timeout=30_000)
    expect(cancel).to_have_count(0)
    expect(link).to_have_attribute("href", f"/jobs/{job['id']}")
    assert Job.objects.get(id=job["id"]).status == "CANCELED"
    assert stored_tabs(page)[0]["lastJobId"] == job["id"]

    # 2. A job that ends after the reload: its result shows once the reloaded tab sees it end.
    for n in MEDIUM_SIZES:
        sql = MEDIUM_SQL.format(n=n)
        medium = start(page, sql)
        expect(status).to_have_text("RUNNING", timeout=60_000)
        if Job.objects.get(id=medium["id"]).status == "RUNNING":
            print(f"medium query of {n} x 100000 rows running at the reload")
            break
        # Ended before the reload (a fast machine): try a bigger one.
        expect(status).to_have_text("FINISHED", timeout=120_000)
    else:
        pytest.fail(f"every medium query ended before the reload ({MEDIUM_SIZES})")
    reload(page)
    expect(editor(page)).to_have_text(sql)
    expect(link).to_have_attribute("href", f"/jobs/{medium['id']}")
    expect(status).to_have_text("FINISHED", timeout=300_000)
    grid = pane(page).get_by_test_id("result-grid")
    expect(grid).to_be_visible()
    expect(grid.get_by_role("gridcell", name=str(n * 100_000), exact=True)).to_be_visible()
    expect(cancel).to_have_count(0)
    expect(link).to_have_attribute("href", f"/jobs/{medium['id']}")
    assert stored_tabs(page)[0]["lastJobId"] == medium["id"]


def test_a_reload_before_the_post_answers_finds_the_job_in_the_session(
    ui: UI, page: Any, demo: User, browser_worker: WorkerProcess
) -> None:
    ui.login(page, "alice")
    set_sql(page, "SELECT 'before' AS earlier_run")
    run_and_wait(page)
    earlier = newest_job(page)

    # The statement's POST reaches the server (which creates and runs the job) but its answer
    # is held back from the browser: the reload comes while the tab does not know the job.
    answered: list[Any] = []

    def hold_answer(route: Any) -> None:
        # Never fulfilled, and the route stays (no unroute): a route let go would be sent
        # again, a second job.
        answered.append(route.fetch())

    page.route("**/api/v1/sessions/*/statements*", hold_answer)
    sql = "SELECT 42 AS answer_after_reload"
    set_sql(page, sql)
    page.keyboard.press("Control+Enter")
    # (Route handlers run while Playwright is called: a page call in each poll lets it run.)
    wait_until(lambda: page.evaluate("true") and bool(answered), 30)
    assert answered[0].status == 201, answered[0].text()
    job = newest_job(page)
    assert job["sql"] == sql and job["id"] != earlier["id"]

    # The POST has not answered in the page: the tab keeps the run as pending, not its job.
    def pending_sql() -> str | None:
        tabs = stored_tabs(page)
        return ((tabs[0].get("pendingRun") or {}) if tabs else {}).get("sql")

    wait_until(lambda: pending_sql() == sql, 10)
    assert stored_tabs(page)[0].get("lastJobId") != job["id"]
    expect(pane(page).locator(f"a[href='/jobs/{job['id']}']")).to_have_count(0)
    reload(page)

    # The SQL that ran (written at Run, not after the typing pause) above its job, followed to
    # its result.
    expect(editor(page)).to_have_text(sql)
    link = pane(page).get_by_role("link", name="job details")
    expect(link).to_have_attribute("href", f"/jobs/{job['id']}")
    expect(pane(page).get_by_text("earlier_run")).to_have_count(0)
    expect(pane(page).get_by_test_id("run-job-status")).to_have_text("FINISHED", timeout=60_000)
    grid = pane(page).get_by_test_id("result-grid")
    expect(grid.get_by_role("gridcell", name="42", exact=True)).to_be_visible()
    # Kept in the tab (localStorage is written 150 ms after a change); one job: nothing resent.
    wait_until(lambda: stored_tabs(page)[0].get("lastJobId") == job["id"], 10)
    assert Job.objects.filter(sql=sql).count() == 1


# The report as it happened: an EXPLAIN ran before; a count over four billion rows is
# run and the page reloaded 2.5 s later, waiting for nothing in between.
LONG_COUNT_SQL = "SELECT count(*) AS n FROM range(0, 4000000000)"


def test_a_reload_2_5_s_after_run_shows_that_run_never_the_plan_before_it(
    ui: UI, page: Any, demo: User, browser_worker: WorkerProcess
) -> None:
    ui.login(page, "alice")
    set_sql(page, "EXPLAIN SELECT * FROM demo.sales.orders")
    run_and_wait(page)
    explain = newest_job(page)
    expect(pane(page).get_by_text("Physical Plan", exact=False).first).to_be_visible()

    set_sql(page, LONG_COUNT_SQL)
    page.keyboard.press("Control+Enter")
    page.wait_for_timeout(2_500)
    reload(page)

    # Its own job (running or ended by now), with its SQL: never the EXPLAIN's plan or link.
    wait_until(lambda: Job.objects.filter(sql=LONG_COUNT_SQL).exists(), 30)
    job = Job.objects.get(sql=LONG_COUNT_SQL)
    assert str(job.id) != explain["id"]
    expect(editor(page)).to_have_text(LONG_COUNT_SQL)
    link = pane(page).get_by_role("link", name="job details")
    expect(link).to_have_attribute("href", f"/jobs/{job.id}", timeout=30_000)
    expect(pane(page).get_by_text("Physical Plan", exact=False)).to_have_count(0)
    expect(pane(page).locator(f"a[href='/jobs/{explain['id']}']")).to_have_count(0)
    # …and its result once it ends, without another reload.
    status = pane(page).get_by_test_id("run-job-status")
    expect(status).to_have_text("FINISHED", timeout=300_000)
    grid = pane(page).get_by_test_id("result-grid")
    expect(grid.get_by_role("gridcell", name="4000000000", exact=True)).to_be_visible()
    expect(link).to_have_attribute("href", f"/jobs/{job.id}")
    wait_until(lambda: stored_tabs(page)[0].get("lastJobId") == str(job.id), 10)
    assert Job.objects.filter(sql=LONG_COUNT_SQL).count() == 1
