"""Streams in the browser (issue 17): a streaming SELECT over the ``rate`` connector run from
the editor shows its rows arriving live and is stopped there, keeping its last tail; a
streaming CTAS over a directory shows on its job page its figures and chart moving as files
arrive, and is stopped there, the table and its committed rows kept. A real worker runs the
streams on Spark."""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest
from django.conf import settings
from django.contrib.auth.models import User
from playwright.sync_api import expect

from catalog.models import Table
from jobs.models import Job, JobEvent
from tests.browser.conftest import UI, wait_until
from tests.browser.test_editor import api, pane, set_sql
from tests.conftest import client_for
from tests.worker.helpers import open_session, result_rows, statement, wait_job

pytestmark = [pytest.mark.browser, pytest.mark.slow]

RATE_TABLE = (
    "CREATE TEMPORARY TABLE r (`timestamp` TIMESTAMP, `value` BIGINT) "
    "WITH ('connector' = 'rate', 'rows-per-second' = '50')"
)
STREAMING = "SET 'execution.runtime-mode' = 'streaming'"
TRIGGER = "SET 'execution.checkpointing.interval' = '500 ms'"
SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])


def batches(job_id: str) -> int:
    return JobEvent.objects.filter(job_id=job_id, type="batch_committed").count()


def test_a_streaming_select_shows_its_rows_live_and_stops(ui: UI, page: Any, demo: User) -> None:
    alice = demo
    ui.login(page, "alice")
    for sql in ("USE demo.sales", STREAMING, TRIGGER, RATE_TABLE):
        set_sql(page, sql)
        page.keyboard.press("Control+Enter")
        status = pane(page).get_by_test_id("run-job-status")
        expect(status).to_have_text(re.compile("FINISHED|FAILED|CANCELED"), timeout=120_000)
        done = Job.objects.filter(user=alice).order_by("-created_at").first()
        assert done is not None and done.status == "FINISHED", (sql, done and done.error)

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


def rows_file(directory: Path, name: str, ids: range) -> None:
    """A parquet file that appears at once, whole (Spark skips hidden names)."""
    table = pa.table({"id": list(ids), "name": [f"n{i % 7}" for i in ids]}, schema=SCHEMA)
    hidden = directory / f".{name}.tmp"
    pq.write_table(table, hidden)
    os.replace(hidden, directory / f"{name}.parquet")


def test_a_streaming_ctas_job_page_moves_live_and_stops(ui: UI, page: Any, demo: User) -> None:
    source = Path(settings.TESSERA_STORAGE_ROOTS[0]) / f"src-{uuid.uuid4().hex[:10]}"
    source.mkdir(parents=True)
    rows_file(source, "f0", range(0, 100))
    client = client_for(demo)
    session = open_session(
        client,
        {"execution.runtime-mode": "streaming", "execution.checkpointing.interval": "500 ms"},
        catalog="demo",
    )
    done = wait_job(
        client,
        statement(
            client,
            session,
            "CREATE TABLE demo.sales.src (id BIGINT, name STRING) "
            f"WITH ('connector' = 'parquet', 'path' = '{source}')",
        )["id"],
        timeout=120,
    )
    assert done["status"] == "FINISHED", done
    job_id = str(
        statement(
            client, session, "CREATE TABLE demo.sales.copied AS SELECT id, name FROM demo.sales.src"
        )["id"]
    )

    ui.login(page, "alice")
    page.goto(f"{ui.url}/jobs/{job_id}")
    expect(page.get_by_test_id("job-status")).to_have_text("RUNNING", timeout=120_000)
    expect(page.get_by_test_id("streaming-badge")).to_be_visible()
    panel = page.get_by_test_id("job-stream")
    committed = panel.get_by_test_id("stream-rows-committed")
    expect(committed).to_have_text("100", timeout=120_000)
    expect(panel.get_by_test_id("stream-target-rows")).to_have_text("100")
    expect(panel.get_by_test_id("stream-input-rate")).to_contain_text("rows/s")
    expect(panel.get_by_test_id("stream-processed-rate")).to_contain_text("rows/s")
    expect(panel.get_by_test_id("stream-batch-duration")).to_have_text(
        re.compile(r"\d+(\.\d+)? (ms|s)$")
    )
    expect(panel.get_by_test_id("stream-watermark")).to_have_text("none yet")  # none declared

    # Files added while it runs: the figures and the chart follow, without a reload.
    chart = panel.get_by_test_id("stream-rate-chart")
    rows_file(source, "f1", range(100, 250))
    expect(committed).to_have_text("250", timeout=60_000)
    rows_file(source, "f2", range(250, 260))
    expect(committed).to_have_text("260", timeout=60_000)
    expect(panel.get_by_test_id("stream-target-rows")).to_have_text("260")
    expect(panel.get_by_test_id("stream-batches")).to_contain_text(re.compile(r"^[3-9]|^\d\d"))
    expect(chart).to_have_attribute("data-points", re.compile(r"^([3-9]|\d\d+)$"))
    expect(chart.locator("polyline")).to_have_count(2)
    events = page.get_by_test_id("job-events")
    expect(events.locator(".type", has_text="batch_committed")).to_have_count(3, timeout=15_000)
    ui.screenshot(page, "job-page-stream")

    page.get_by_role("button", name="Stop stream").click()
    expect(page.get_by_test_id("job-status")).to_have_text("CANCELED", timeout=30_000)
    expect(page.get_by_role("button", name="Stop stream")).to_have_count(0)
    expect(panel).to_contain_text("stopped (CANCELED)")
    expect(committed).to_have_text("260")
    job = Job.objects.get(pk=job_id)
    assert job.status == "CANCELED"
    assert job.progress["stream"]["rows_committed"] == 260
    # The table and what the stream committed stay (FLIP-218).
    assert Table.objects.get(name="copied", database__name="sales").status == "active"
    batch = open_session(client, catalog="demo")
    count = wait_job(
        client, statement(client, batch, "SELECT count(*) FROM demo.sales.copied")["id"]
    )
    assert count["status"] == "FINISHED", count
    assert result_rows(client, count["id"])[1] == [[260]]
