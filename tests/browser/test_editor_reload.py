"""A reload while a query runs: the tab follows that query's job to its result, never the
result of the run before it (the tab keeps the job's id as soon as the POST answers; reloaded
before that, it finds the job in its session)."""

from __future__ import annotations

import os
import signal
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from jobs.models import Job
from tests.browser.conftest import UI, wait_until
from tests.browser.test_editor import (
    editor,
    newest_job,
    pane,
    run_and_wait,
    set_sql,
    stored_tabs,
)
from tests.workers import WorkerProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# The query: seconds long, so still running when the POST's 2 s wait answers.
LONG_SQL = "SELECT count(*) AS n FROM range(0, 4000000000)"


def test_a_reload_mid_query_follows_that_query_to_its_result(
    ui: UI, page: Any, demo: User, browser_worker: WorkerProcess
) -> None:
    ui.login(page, "alice")
    # An earlier run whose result must not come back after the reload.
    set_sql(page, "SELECT 'before' AS earlier_run")
    run_and_wait(page)
    earlier = newest_job(page)

    set_sql(page, LONG_SQL)
    page.keyboard.press("Control+Enter")
    wait_until(lambda: newest_job(page)["sql"] == LONG_SQL, 30)
    job = newest_job(page)
    assert job["id"] != earlier["id"]
    # The POST has answered once the run area links to the new job (2 s after Run).
    link = pane(page).get_by_role("link", name="job details")
    expect(link).to_have_attribute("href", f"/jobs/{job['id']}", timeout=10_000)
    # The worker is paused so that the job is surely still RUNNING through the reload (Spark
    # speed varies); it goes on, and ends the job, once the reloaded page follows it.
    os.kill(browser_worker.pid, signal.SIGSTOP)
    try:
        assert Job.objects.get(id=job["id"]).status == "RUNNING"
        page.reload()
        page.get_by_test_id("username").wait_for()

        # The tab shows the running job (its link, Cancel), not the earlier run's result.
        status = pane(page).get_by_test_id("run-job-status")
        expect(editor(page)).to_have_text(LONG_SQL)
        expect(link).to_have_attribute("href", f"/jobs/{job['id']}")
        expect(status).to_have_text("RUNNING")
        expect(pane(page).get_by_role("button", name="Cancel")).to_be_visible()
        expect(pane(page).get_by_text("earlier_run")).to_have_count(0)
        assert stored_tabs(page)[0]["lastJobId"] == job["id"]
    finally:
        os.kill(browser_worker.pid, signal.SIGCONT)

    # It is followed (long-poll) until it ends, and its result shows.
    expect(status).to_have_text("FINISHED", timeout=120_000)
    grid = pane(page).get_by_test_id("result-grid")
    expect(grid).to_be_visible()
    expect(grid.get_by_role("gridcell", name="4000000000", exact=True)).to_be_visible()
    expect(pane(page).get_by_role("button", name="Cancel")).to_have_count(0)
    expect(link).to_have_attribute("href", f"/jobs/{job['id']}")
    assert stored_tabs(page)[0]["lastJobId"] == job["id"]


def test_a_reload_before_the_post_answers_finds_the_job_in_the_session(
    ui: UI, page: Any, demo: User, browser_worker: WorkerProcess
) -> None:
    ui.login(page, "alice")
    set_sql(page, "SELECT 'before' AS earlier_run")
    run_and_wait(page)
    earlier = newest_job(page)

    sql = "SELECT 42 AS answer_after_reload"
    set_sql(page, sql)
    # With the worker paused the job stays CREATED, so the POST is held its whole 2 s wait:
    # the reload comes while the tab does not know the job's id yet.
    os.kill(browser_worker.pid, signal.SIGSTOP)
    try:
        page.keyboard.press("Control+Enter")
        wait_until(lambda: newest_job(page)["sql"] == sql, 10)
        job = newest_job(page)
        # The POST has not answered: the tab does not know the job yet.
        assert stored_tabs(page)[0].get("lastJobId") != job["id"]
        page.reload()
        page.get_by_test_id("username").wait_for()
        # The SQL that ran (written at Run, not after the typing pause) above its job.
        expect(editor(page)).to_have_text(sql)
        link = pane(page).get_by_role("link", name="job details")
        expect(link).to_have_attribute("href", f"/jobs/{job['id']}")
        expect(pane(page).get_by_text("earlier_run")).to_have_count(0)
    finally:
        os.kill(browser_worker.pid, signal.SIGCONT)

    expect(pane(page).get_by_test_id("run-job-status")).to_have_text("FINISHED", timeout=60_000)
    grid = pane(page).get_by_test_id("result-grid")
    expect(grid.get_by_role("gridcell", name="42", exact=True)).to_be_visible()
    assert stored_tabs(page)[0]["lastJobId"] == job["id"] != earlier["id"]
