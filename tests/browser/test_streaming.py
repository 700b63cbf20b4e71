"""Streams in the browser (issue 17): a streaming SELECT over the ``rate`` connector run from
the editor shows its rows arriving live and is stopped there, keeping its last tail; a
streaming CTAS's job page shows its figures and chart moving with each micro-batch and stops
it, the table and its committed rows kept. A real worker runs the streams on Spark."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from catalog.models import Table
from jobs.models import Job, JobEvent
from tests.browser.conftest import UI, wait_until
from tests.browser.test_editor import api, pane, run_and_wait, set_sql
from tests.conftest import client_for
from tests.worker.helpers import open_session, result_rows, statement, wait_job

pytestmark = [pytest.mark.browser, pytest.mark.slow]

RATE_TABLE = (
    "CREATE TEMPORARY TABLE r (`timestamp` TIMESTAMP, `value` BIGINT) "
    "WITH ('connector' = 'rate', 'rows-per-second' = '50')"
)
STREAMING = "SET 'execution.runtime-mode' = 'streaming'"
TRIGGER = "SET 'execution.checkpointing.interval' = '500 ms'"


def batches(job_id: str) -> int:
    return JobEvent.objects.filter(job_id=job_id, type="batch_committed").count()


def test_a_streaming_select_shows_its_rows_live_and_stops(ui: UI, page: Any, alice: User) -> None:
    ui.login(page, "alice")
    for sql in (STREAMING, TRIGGER, RATE_TABLE):
        set_sql(page, sql)
        run_and_wait(page, timeout=120_000)

    set_sql(page, "SELECT `value`, `timestamp` FROM r")
    page.keyboard.press("Control+Enter")
    run = pane(page)
    # A stream shows "Streaming" and a Stop button instead of a progress bar.
    expect(run.get_by_test_id("streaming-badge")).to_be_visible(timeout=120_000)
    expect(run.get_by_test_id("run-job-status")).to_have_text("RUNNING")
    expect(run.get_by_test_id("job-progress")).to_have_count(0)
    stop = run.get_by_role("button", name="Stop")
    expect(stop).to_be_visible()

    # Rows arrive live: the tail's line and its newest row move on without anything clicked.
    line = run.get_by_test_id("live-line")
    expect(line).to_contain_text(
        re.compile(r"^Live — [\d,]+ rows?, updated \d\d:\d\d:\d\d"), timeout=120_000
    )
    job = Job.objects.filter(user=alice).order_by("-created_at").first()
    assert job is not None and job.status == "RUNNING"
    grid = run.get_by_test_id("live-tail").get_by_test_id("result-grid")
    newest = grid.get_by_role("row").nth(1)  # the header is row 0; the newest row comes first
    expect(newest).to_be_visible()
    first_seen = newest.inner_text()
    first_batches = batches(str(job.id))
    wait_until(
        lambda: batches(str(job.id)) >= first_batches + 2, 60, message="two more micro-batches"
    )
    expect(newest).not_to_have_text(first_seen, timeout=15_000)
    ui.screenshot(page, "editor-streaming-select")

    # The newest value shown is the newest of the job's stored tail (rate counts up from 0).
    stop.click()
    expect(run.get_by_test_id("run-job-status")).to_have_text("CANCELED", timeout=30_000)
    expect(run.get_by_test_id("streaming-badge")).to_have_count(0)
    expect(run.get_by_role("button", name="Stop")).to_have_count(0)
    expect(line).to_contain_text(re.compile(r"^Stopped — the last [\d,]+ rows?"))
    tail = api(page, f"/jobs/{job.id}/result?page_size=1000")
    assert tail["status"] == 200, tail
    values = [row[0] for row in tail["body"]["rows"]]
    assert values == sorted(values) and len(values) > 0  # newest last, as the server keeps it
    expect(newest).to_contain_text(str(values[-1]))
    assert Job.objects.get(pk=job.id).status == "CANCELED"
    assert batches(str(job.id)) >= 3


def test_a_streaming_ctas_job_page_moves_live_and_stops(ui: UI, page: Any, demo: User) -> None:
    client = client_for(demo)
    session = open_session(client, catalog="demo")
    for sql in (STREAMING, TRIGGER, RATE_TABLE):
        done = wait_job(client, statement(client, session, sql)["id"], timeout=120)
        assert done["status"] == "FINISHED", done
    job_id = str(
        statement(
            client,
            session,
            "CREATE TABLE demo.sales.ticks AS SELECT `value`, `timestamp` AS ts FROM r",
        )["id"]
    )

    ui.login(page, "alice")
    page.goto(f"{ui.url}/jobs/{job_id}")
    expect(page.get_by_test_id("job-status")).to_have_text("RUNNING", timeout=120_000)
    expect(page.get_by_test_id("streaming-badge")).to_be_visible()
    panel = page.get_by_test_id("job-stream")
    committed = panel.get_by_test_id("stream-rows-committed")
    expect(committed).to_have_text(re.compile(r"^[1-9][\d,]*$"), timeout=120_000)
    expect(panel.get_by_test_id("stream-input-rate")).to_contain_text("rows/s")
    expect(panel.get_by_test_id("stream-processed-rate")).to_contain_text("rows/s")
    expect(panel.get_by_test_id("stream-batch-duration")).to_have_text(
        re.compile(r"\d+(\.\d+)? (ms|s)$")
    )
    expect(panel.get_by_test_id("stream-watermark")).to_have_text(
        "none yet"
    )  # no watermark declared

    # The figures and the chart move on with each micro-batch, without a reload.
    shown_batches = panel.get_by_test_id("stream-batches")
    before = shown_batches.inner_text()
    before_rows = committed.inner_text()
    expect(shown_batches).not_to_have_text(before, timeout=30_000)
    expect(committed).not_to_have_text(before_rows, timeout=30_000)
    chart = panel.get_by_test_id("stream-rate-chart")
    expect(chart).to_have_attribute("data-points", re.compile(r"^([2-9]|\d\d+)$"), timeout=30_000)
    expect(chart.locator("polyline")).to_have_count(2)
    ui.screenshot(page, "job-page-stream")
    expect(
        page.get_by_test_id("job-events").locator(".type", has_text="batch_committed").first
    ).to_be_visible()

    page.get_by_role("button", name="Stop stream").click()
    expect(page.get_by_test_id("job-status")).to_have_text("CANCELED", timeout=30_000)
    expect(page.get_by_role("button", name="Stop stream")).to_have_count(0)
    expect(panel).to_contain_text("stopped (CANCELED)")
    job = Job.objects.get(pk=job_id)
    assert job.status == "CANCELED"
    # The table and what the stream committed stay (FLIP-218); the page's last figure is the
    # job's own.
    table = Table.objects.get(name="ticks", database__name="sales")
    assert table.status == "active"
    stream = job.progress["stream"]
    assert stream["rows_committed"] > 0
    expect(committed).to_have_text(f"{stream['rows_committed']:,}")
    count = wait_job(
        client, statement(client, session, "SELECT count(*) FROM demo.sales.ticks")["id"]
    )
    assert count["status"] == "FINISHED", count
    assert result_rows(client, count["id"])[1] == [[stream["rows_committed"]]]
