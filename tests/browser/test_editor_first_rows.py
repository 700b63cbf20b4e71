"""The editor shows the first rows of a large result while its job still runs (issue 33,
item 3; docs/workbench.md "First rows early"): the grid fills, a live count and "Still
running", then the finished result in its place; cancel stops the job and the following.

The query is held by a gate: a Python UDF (tests/browser/row_gate.py) that, for row
``GATE_FROM`` (the first of the second partition), connects to a socket this test listens on
and reads until the test closes it. The first partition (rows 0 … 49,999) is written while
the rest wait: the worker appends partitions in order. The query is estimated above 32 MB
(4,000,000 rows, 12 bytes a row), so it goes straight to the large path (a small estimate
is first collected whole, which the gate would hold). This module runs its own worker: it
allows the gate's package and writes every result above 10 rows the large way.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from jobs.models import Job
from tests.browser.conftest import UI, wait_until
from tests.browser.test_editor import newest_job, pane, run_and_wait, set_sql
from tests.workers import WorkerProcess, start_worker

ROWS = 4_000_000
PARTITIONS = 80
GATE_FROM = ROWS // PARTITIONS  # partition 0: written before the gate opens
GATE_PACKAGE = "tests.browser.row_gate"
WORKER_ENV = {
    "TESSERA_UDF_PACKAGES": f"tessera_udfs,{GATE_PACKAGE}",
    "TESSERA_RESULT_MAX_ROWS": "10",  # anything above is a large result: it streams
}


class Gate:
    """A listening socket: the UDF's connections wait in its backlog until it closes."""

    def __init__(self) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(64)
        self.port = self._socket.getsockname()[1]

    def open(self) -> None:
        self._socket.close()


@pytest.fixture(scope="module")
def gated_worker(
    django_db_setup: None,
    django_db_blocker: Any,
    tmp_path_factory: pytest.TempPathFactory,
    own_workers_only: None,
) -> Iterator[WorkerProcess]:
    workers = start_worker("first-rows", tmp_path_factory, django_db_blocker, WORKER_ENV, 4)
    worker = next(workers)
    yield worker
    next(workers, None)


@pytest.fixture
def browser_worker(gated_worker: WorkerProcess) -> WorkerProcess:
    """This module's worker runs the statements (not the shared one: it allows no gate)."""
    return gated_worker


@pytest.fixture(autouse=True)
def web_settings(settings: Any) -> None:
    settings.TESSERA_UDF_PACKAGES = ("tessera_udfs", GATE_PACKAGE)
    settings.TESSERA_RESULT_MAX_ROWS = 10


@pytest.fixture
def gate() -> Iterator[Gate]:
    barrier = Gate()
    yield barrier
    barrier.open()


def start_gated(page: Any, gate: Gate) -> dict[str, Any]:
    """In the tab's session: the gate function, then the gated query with a row limit of a
    of ten million (above the worker's 10: written while it runs). Its job once RUNNING."""
    set_sql(page, f"CREATE TEMPORARY FUNCTION gated AS '{GATE_PACKAGE}.gated' LANGUAGE PYTHON")
    run_and_wait(page)
    pane(page).get_by_label("Row limit").select_option("10000000")
    set_sql(
        page,
        f"SELECT gated(id, {gate.port}, {GATE_FROM}) AS id, CAST(id AS STRING) AS s "
        f"FROM range(0, {ROWS}, 1, {PARTITIONS})",
    )
    page.keyboard.press("Control+Enter")
    expect(pane(page).get_by_test_id("run-job-status")).to_have_text("RUNNING", timeout=60_000)
    job = newest_job(page)
    assert job["sql"].startswith("SELECT gated(")
    return job


def row(grid: Any, number: int) -> Any:
    """The grid row of result row ``number`` (1-based; the header is aria-rowindex 1)."""
    return grid.locator(f'[role="row"][aria-rowindex="{number + 1}"]')


def test_rows_show_while_the_job_runs_then_the_finished_result(
    ui: UI, page: Any, alice: User, gate: Gate
) -> None:
    ui.login(page, "alice")
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    job = start_gated(page, gate)

    # The rows before the gate, while the job is RUNNING (the gate holds the rest).
    partial = pane(page).get_by_test_id("partial-result")
    expect(partial.get_by_test_id("partial-count")).to_have_text(
        f"{GATE_FROM:,} rows so far", timeout=60_000
    )
    expect(partial.get_by_test_id("still-running")).to_be_visible()
    grid = partial.get_by_test_id("result-grid")
    expect(row(grid, 1).get_by_role("gridcell").first).to_have_text("0")
    assert Job.objects.get(id=job["id"]).status == "RUNNING"
    expect(pane(page).get_by_test_id("run-job-status")).to_have_text("RUNNING")
    held = f"/jobs/{job['id']}/result?offset={GATE_FROM}&page_size=1&wait="
    assert any(held in url for url in requests), requests

    gate.open()
    expect(pane(page).get_by_test_id("run-job-status")).to_have_text("FINISHED", timeout=60_000)
    result = pane(page).get_by_test_id("result-view")
    expect(result.get_by_test_id("result-count")).to_have_text(f"{ROWS:,} rows")
    expect(pane(page).get_by_test_id("partial-result")).to_have_count(0)
    expect(pane(page).get_by_test_id("still-running")).to_have_count(0)
    final = result.get_by_test_id("result-grid")
    expect(row(final, 1).get_by_role("gridcell").first).to_have_text("0")
    # The finished first page came with the following: the result view asked for none itself.
    own = f"/jobs/{job['id']}/result?page_size=1000&offset=0"
    assert not [u for u in requests if own in u], requests

    # Sorting the finished result works over all its rows (the server sorts).
    id_header = final.locator('[role="columnheader"][data-column="id"]')
    id_header.locator(".rv-colname").click()
    id_header.locator(".rv-colname").click()
    expect(id_header).to_have_attribute("aria-sort", "descending")
    expect(result.get_by_test_id("result-scope")).to_have_text(f"Sorted over all {ROWS:,} rows")
    expect(row(final, 1).get_by_role("gridcell").first).to_have_text(str(ROWS - 1))


def test_cancel_stops_the_job_and_the_following(ui: UI, page: Any, alice: User, gate: Gate) -> None:
    ui.login(page, "alice")
    asked: list[Any] = []
    ended: list[Any] = []
    page.on("request", lambda request: asked.append(request) if "/result?" in request.url else None)
    page.on("requestfinished", lambda request: ended.append(request))
    page.on("requestfailed", lambda request: ended.append(request))
    job = start_gated(page, gate)
    partial = pane(page).get_by_test_id("partial-result")
    expect(partial.get_by_test_id("partial-count")).to_have_text(
        f"{GATE_FROM:,} rows so far", timeout=60_000
    )
    held = f"/jobs/{job['id']}/result?offset={GATE_FROM}&page_size=1&wait="
    assert any(held in request.url for request in asked), [r.url for r in asked]

    pane(page).get_by_role("button", name="Cancel").click()
    expect(pane(page).get_by_test_id("run-job-status")).to_have_text("CANCELED", timeout=5_000)
    assert Job.objects.get(id=job["id"]).status == "CANCELED"
    # The rows that came stay, marked as cut short; nothing says more may come.
    expect(partial.get_by_test_id("partial-count")).to_have_text(
        f"{GATE_FROM:,} rows arrived before the job was canceled — not the whole result"
    )
    expect(partial.get_by_test_id("still-running")).to_have_count(0)
    expect(pane(page).get_by_test_id("job-canceled")).to_be_visible()

    # The held page request ended with the cancel (aborted, or answered by the job's end),
    # not after its 25 s hold.
    def all_ended() -> bool:
        page.evaluate("0")  # lets Playwright deliver the page's network events
        return all(request in ended for request in asked)

    wait_until(all_ended, 5, message=lambda: str([r.url for r in asked if r not in ended]))
