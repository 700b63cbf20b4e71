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
from jobs.models import Job
from tests.browser.conftest import UI, wait_until
from tests.browser.test_editor import api, pane, set_sql
from tests.conftest import client_for
from tests.worker_helpers import open_session, result_rows, statement, wait_job

pytestmark = [pytest.mark.browser, pytest.mark.slow]

RATE_TABLE = (
    "CREATE TEMPORARY TABLE r (`timestamp` TIMESTAMP, `value` BIGINT) "
    "WITH ('connector' = 'rate', 'rows-per-second' = '50')"
)
STREAMING = "SET 'execution.runtime-mode' = 'streaming'"
TRIGGER = "SET 'execution.checkpointing.interval' = '500 ms'"
SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])


def batches(job_id: str) -> int:
    """The micro-batches a stream has run (its progress: a preview commits no table)."""
    stream = (Job.objects.get(pk=job_id).progress or {}).get("stream") or {}
    return int(stream.get("batches") or 0)


RUN_ENDS = ("FINISHED", "FAILED", "CANCELED")


def run_in_editor(page: Any, user: User, *statements: str) -> None:
    """Run the statements in the editor's tab (its session) as one script ("Run all"), each
    to FINISHED."""
    before = Job.objects.filter(user=user).count()
    set_sql(page, ";\n".join(statements) + ";")
    pane(page).get_by_role("button", name="Run all").click()

    def ended() -> list[Job] | None:
        jobs = list(Job.objects.filter(user=user).order_by("created_at")[before:])
        done = len(jobs) >= len(statements) and all(j.status in RUN_ENDS for j in jobs)
        return jobs if done else None

    jobs = wait_until(ended, 120, message=f"the end of {statements!r}")
    assert [j.status for j in jobs] == ["FINISHED"] * len(statements), [
        (j.sql, j.status, j.error) for j in jobs
    ]


def rows_file(directory: Path, name: str, ids: range) -> None:
    """A parquet file that appears at once, whole (Spark skips hidden names)."""
    table = pa.table({"id": list(ids), "name": [f"n{i % 7}" for i in ids]}, schema=SCHEMA)
    hidden = directory / f".{name}.tmp"
    pq.write_table(table, hidden)
    os.replace(hidden, directory / f"{name}.parquet")


def parquet_source(client: Any) -> Path:
    """demo.sales.src: an external parquet table over a new directory holding 100 rows."""
    source = Path(settings.TESSERA_STORAGE_ROOTS[0]) / f"src-{uuid.uuid4().hex[:10]}"
    source.mkdir(parents=True)
    rows_file(source, "f0", range(0, 100))
    session = open_session(client, catalog="demo")
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
    return source


def start_live_select(page: Any, user: User, sql: str) -> tuple[Job, Any]:
    """Run a streaming SELECT from the editor: it shows "Streaming", a Stop button and no
    progress bar; answers the job and the run area once its first rows show."""
    set_sql(page, sql)
    # The button, not Ctrl+Enter: Playwright waits until the editor may run again.
    pane(page).get_by_role("button", name="Run", exact=True).click()
    run = pane(page)
    expect(run.get_by_test_id("streaming-badge")).to_be_visible(timeout=120_000)
    expect(run.get_by_test_id("run-job-status")).to_have_text("RUNNING")
    expect(run.get_by_test_id("job-progress")).to_have_count(0)
    expect(run.get_by_role("button", name="Stop")).to_be_visible()
    expect(run.get_by_test_id("live-line")).to_contain_text(
        re.compile(r"^Live — [1-9][\d,]* rows?, updated \d\d:\d\d:\d\d"), timeout=120_000
    )
    job = Job.objects.filter(user=user).order_by("-created_at").first()
    assert job is not None and job.status == "RUNNING" and job.sql == sql
    return job, run


def newest_row(run: Any) -> Any:
    """The grid's first row: the tail is shown newest first (the header is row 0)."""
    return run.get_by_test_id("live-tail").get_by_test_id("result-grid").get_by_role("row").nth(1)


def stop_and_check_tail(page: Any, run: Any, job: Job) -> list[list[Any]]:
    """Stop the stream from the editor: CANCELED, no Stop any more, the last tail kept and
    shown newest first as the server stores it (newest last). Answers the stored rows."""
    run.get_by_role("button", name="Stop").click()
    expect(run.get_by_test_id("run-job-status")).to_have_text("CANCELED", timeout=30_000)
    expect(run.get_by_test_id("streaming-badge")).to_have_count(0)
    expect(run.get_by_role("button", name="Stop")).to_have_count(0)
    expect(run.get_by_test_id("live-line")).to_contain_text(
        re.compile(r"^Stopped — the last [1-9][\d,]* rows?")
    )
    tail = api(page, f"/jobs/{job.id}/result?page_size=1000")
    assert tail["status"] == 200, tail
    rows: list[list[Any]] = tail["body"]["rows"]
    assert rows
    expect(run.get_by_test_id("live-line")).to_contain_text(f"the last {len(rows):,} row")
    expect(newest_row(run).locator("[data-col='0']")).to_have_text(str(rows[-1][0]))
    assert Job.objects.get(pk=job.pk).status == "CANCELED"
    return rows


def test_a_streaming_select_shows_new_rows_live_and_stops(ui: UI, page: Any, demo: User) -> None:
    source = parquet_source(client_for(demo))
    ui.login(page, "alice")
    run_in_editor(page, demo, STREAMING, TRIGGER)
    job, run = start_live_select(page, demo, "SELECT id, name FROM demo.sales.src")
    line = run.get_by_test_id("live-line")
    expect(line).to_contain_text("Live — 100 rows")

    # A file lands in the directory: its rows show without anything clicked, newest first.
    rows_file(source, "f1", range(100, 130))
    expect(line).to_contain_text("Live — 130 rows", timeout=60_000)
    expect(newest_row(run).locator("[data-col='0']")).to_have_text(re.compile(r"^1[0-2]\d$"))
    ui.screenshot(page, "editor-streaming-select")

    # After a reload the tab shows its stream again, live, and can still stop it.
    page.reload()
    run = pane(page)
    expect(run.get_by_test_id("streaming-badge")).to_be_visible()
    expect(run.get_by_test_id("live-line")).to_contain_text("Live — 130 rows")
    rows = stop_and_check_tail(page, run, job)
    assert sorted(row[0] for row in rows) == list(range(130))
    assert batches(str(job.id)) >= 2


def test_a_streaming_select_over_rate_grows_live_and_stops(ui: UI, page: Any, demo: User) -> None:
    ui.login(page, "alice")
    run_in_editor(page, demo, "USE demo.sales", STREAMING, TRIGGER, RATE_TABLE)
    job, run = start_live_select(page, demo, "SELECT `value`, `timestamp` FROM r")
    # The rate source counts up: the newest value shown moves on with the batches.
    cell = newest_row(run).locator("[data-col='0']")
    first = int(cell.inner_text())
    seen = batches(str(job.id))
    wait_until(lambda: batches(str(job.id)) >= seen + 2, 60, message="two more micro-batches")
    expect(cell).not_to_have_text(str(first), timeout=15_000)
    assert int(cell.inner_text()) > first
    rows = stop_and_check_tail(page, run, job)
    values = [row[0] for row in rows]
    assert values == sorted(values) and len(set(values)) == len(values)


def test_a_streaming_ctas_job_page_moves_live_and_stops(ui: UI, page: Any, demo: User) -> None:
    client = client_for(demo)
    source = parquet_source(client)
    session = open_session(
        client,
        {"execution.runtime-mode": "streaming", "execution.checkpointing.interval": "500 ms"},
        catalog="demo",
    )
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
