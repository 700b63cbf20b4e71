"""Results that stream (docs/adr/0020-results-that-stream.md), on real Spark: a large result
is readable while its job runs — pages with ``complete: false``, ``result.arrow`` that
follows the writer — and cancel and failure end the stream.

The job runs in a thread of this process as a worker runs it (``engine.run._run_claimed``:
monitor, cancel, result store) on the test run's PySpark. It is held by a gate: a Python UDF
that, for rows from ``GATE_FROM`` on, connects to a socket this test listens on and reads
until the test closes it — rows before that reach the result; the rest wait for the test.
This process is the jobs' only worker (``own_workers_only``): the committed jobs are sent to
the broker as any, and a live worker would claim them first.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.ipc as ipc  # type: ignore[import-untyped]
import pytest
from django.db import connection

from core import jobstate
from engine import large_results, run
from jobs import lifecycle, notify
from jobs.models import Job, Session
from results import partial
from results.arrow import ARROW_STREAM, ERROR_METADATA
from sessions import statements
from tests.conftest import API, assert_error

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("own_workers_only"),
]

ROWS = 4000
GATE_FROM = 1000  # partition 0 of range(0, 4000, 1, 4): written before the gate opens
BATCH_ROWS = 100


class Gate:
    """A listening socket: the UDF's connections wait in its backlog until it closes."""

    def __init__(self) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(64)
        self.port = self._socket.getsockname()[1]

    def open(self) -> None:
        self._socket.close()


@pytest.fixture
def gate(plain_spark: Any, monkeypatch: pytest.MonkeyPatch, settings: Any) -> Iterator[Gate]:
    """``gated(id, port, from)`` (tests.results.api.stream_gate) as a planned UDF, Spark's
    Python workers with this interpreter, and small Arrow batches."""
    monkeypatch.setattr(plain_spark.sparkContext, "pythonExec", sys.executable)
    # Straight to the large path: the probe of a result estimated small would run it all.
    monkeypatch.setattr(large_results, "SMALL_ESTIMATE_BYTES", -1)
    settings.TESSERA_UDF_PACKAGES = ("tests.results.api.stream_gate",)
    barrier = Gate()
    batch_key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    before = plain_spark.conf.get(batch_key)
    plain_spark.conf.set(batch_key, str(BATCH_ROWS))
    try:
        yield barrier
    finally:
        barrier.open()
        plain_spark.conf.set(batch_key, before)


GATED = {
    "alias": "gated",
    "identifier": ["", "", "gated"],
    "language": "python",
    "implementation": "tests.results.api.stream_gate.gated",
    "return_type": "BIGINT",
    "temporary": True,
    "system": True,
}


@pytest.fixture
def stores(settings: Any, tmp_path: Any) -> Any:
    settings.RESULTS_DIR = tmp_path / "results"
    settings.TESSERA_RESULT_MAX_ROWS = 10  # anything above is a large result: it streams
    assert notify.hub().wait_ready(5)
    return settings.RESULTS_DIR


@pytest.fixture
def session(alice_api: Any) -> Session:
    response = alice_api.post(f"{API}/sessions", {})
    assert response.status_code == 201
    return Session.objects.select_related("user").get(pk=response.json()["id"])


class Running:
    """A job run in a thread as a worker runs it; ``join`` waits for its end."""

    def __init__(self, spark: Any, session: Session, sql: str, row_limit: int = 100_000) -> None:
        plan = {
            "kind": "query",
            "action": "query",
            "needs_spark": True,
            "sql": sql,
            "args": {"row_limit": row_limit},
            "functions": [GATED] if "gated(" in sql else [],
        }
        self.job = statements.submit_plan(session=session, sql=sql, plan=plan)
        self.claimed = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(spark,), daemon=True)
        self._thread.start()
        assert self.claimed.wait(30)

    def _run(self, spark: Any) -> None:
        try:
            with notify.watch([self.job.pk], (notify.CANCEL,)) as watch:
                lifecycle.transition(self.job.pk, jobstate.CREATED, jobstate.RUNNING, worker="t")
                self.claimed.set()
                job = Job.objects.select_related("user", "session").get(pk=self.job.pk)
                plan = job.typed_plan
                assert plan is not None
                run._run_claimed(job, plan, watch, spark)
        finally:
            connection.close()

    def join(self) -> Job:
        self._thread.join(120)
        assert not self._thread.is_alive()
        return Job.objects.get(pk=self.job.pk)


@pytest.fixture
def start(gate: Gate, plain_spark: Any, session: Session) -> Iterator[Any]:
    """``start(sql, row_limit)``: a Running job; each ended (the gate opened) at teardown."""
    started: list[Running] = []

    def starting(sql: str, row_limit: int = 100_000) -> Running:
        started.append(Running(plain_spark, session, sql, row_limit))
        return started[-1]

    yield starting
    gate.open()
    for running in started:
        running.join()


def messages(response: Any) -> Iterator[bytes]:
    assert response.status_code == 200, getattr(response, "content", b"")[:500]
    assert response["Content-Type"] == ARROW_STREAM
    return iter(response.streaming_content)


def read_stream(data: bytes) -> tuple[pa.Table, dict[bytes, bytes] | None]:
    """The stream's rows, and the custom metadata of its last batch (an error's)."""
    reader = ipc.open_stream(data)
    batches, last = [], None
    while True:
        try:
            batch, metadata = reader.read_next_batch_with_custom_metadata()
        except StopIteration:
            break
        batches.append(batch)
        last = dict(metadata) if metadata is not None else None
    return pa.Table.from_batches(batches, schema=reader.schema), last


def gated_sql(gate: Gate, expression: str = "gated(id, {port}, {start}) AS id") -> str:
    gated = expression.format(port=gate.port, start=GATE_FROM)
    return f"SELECT {gated}, CAST(id AS STRING) AS s FROM range(0, {ROWS}, 1, 4)"


def test_a_reader_gets_the_first_batches_before_the_job_finishes(
    alice_api, bob_api, stores, gate, start
):
    running = start(gated_sql(gate))
    job_id = running.job.pk
    # The page of the rows before the gate: waited for (long-poll), not slept for.
    page = alice_api.get(f"{API}/jobs/{job_id}/result?page_size={GATE_FROM}&wait=30").json()
    assert page["complete"] is False, page
    assert [row[0] for row in page["rows"]] == list(range(GATE_FROM))
    assert page["row_count"] == GATE_FROM and page["next_page_token"] is not None
    assert Job.objects.get(pk=job_id).status == jobstate.RUNNING  # the gate holds it
    # Sort and filter need the whole result; the job is not finished.
    assert_error(alice_api.get(f"{API}/jobs/{job_id}/result?sort=id:desc"), 409, "RESULT_NOT_READY")
    # Another user's running job, and forged ids: not found.
    for path in ("result", "result.arrow"):
        assert_error(bob_api.get(f"{API}/jobs/{job_id}/{path}"), 404, "NOT_FOUND")
        assert_error(alice_api.get(f"{API}/jobs/{uuid.uuid4()}/{path}"), 404, "NOT_FOUND")
        assert_error(alice_api.get(f"{API}/jobs/not-a-job/{path}"), 404, "NOT_FOUND")
    stream = messages(alice_api.get(f"{API}/jobs/{job_id}/result.arrow"))
    first = next(stream)  # what is written now, before the job can finish
    early, _ = read_stream(first)
    assert early.num_rows >= GATE_FROM and early.column_names == ["id", "s"]
    assert Job.objects.get(pk=job_id).status == jobstate.RUNNING
    gate.open()
    whole, last = read_stream(first + b"".join(stream))
    assert last is None
    assert whole["id"].to_pylist() == list(range(ROWS))  # partition order: the rows' order
    finished = running.join()
    assert finished.status == jobstate.FINISHED, finished.error
    page = alice_api.get(f"{API}/jobs/{job_id}/result?offset=3990&page_size=100").json()
    assert page["complete"] is True and page["row_count"] == ROWS
    assert page["next_page_token"] is None and len(page["rows"]) == 10
    assert sorted(p.name for p in stores.iterdir()) == [f"{job_id}.arrow"]


def test_an_ordered_result_keeps_its_order_and_is_truncated_at_its_limit(
    alice_api, stores, gate, start
):
    sql = f"SELECT id, id % 7 AS k FROM range(0, {ROWS}, 1, 4) ORDER BY k, id DESC"
    running = start(sql, row_limit=3000)
    stream = messages(alice_api.get(f"{API}/jobs/{running.job.pk}/result.arrow?wait=30"))
    table, last = read_stream(b"".join(stream))
    expected = sorted(range(ROWS), key=lambda i: (i % 7, -i))[:3000]
    assert last is None and table["id"].to_pylist() == expected
    finished = running.join()
    assert finished.status == jobstate.FINISHED
    assert finished.result["row_count"] == 3000 and finished.result["truncated"] is True


def test_cancel_mid_stream_ends_the_stream_with_the_cancel(alice_api, stores, gate, start):
    running = start(gated_sql(gate))
    job_id = running.job.pk
    stream = messages(alice_api.get(f"{API}/jobs/{job_id}/result.arrow?wait=30"))
    first = next(stream)
    assert read_stream(first)[0].num_rows >= 1
    response = alice_api.post(f"{API}/jobs/{job_id}/cancel")
    assert response.status_code == 200, response.content
    table, last = read_stream(first + b"".join(stream))
    assert last is not None, "the stream must end with the job's error"
    assert json.loads(last[ERROR_METADATA])["code"] == "CANCELED"
    assert table.num_rows < ROWS
    assert running.join().status == jobstate.CANCELED
    assert list(stores.iterdir()) == []  # nothing of the result is left
    assert_error(alice_api.get(f"{API}/jobs/{job_id}/result"), 404, "NOT_FOUND", "CANCELED")


def test_a_failing_job_ends_the_stream_with_its_error(alice_api, stores, gate, start):
    sql = gated_sql(gate, "gated(id, {port}, {start}) DIV (id - 1500) AS q")
    running = start(sql)
    stream = messages(alice_api.get(f"{API}/jobs/{running.job.pk}/result.arrow?wait=30"))
    first = next(stream)
    gate.open()
    table, last = read_stream(first + b"".join(stream))
    assert table.num_rows >= 1 and last is not None
    error = json.loads(last[ERROR_METADATA])
    failed = running.join()
    assert failed.status == jobstate.FAILED
    assert error["code"] == failed.error["code"] and error["message"]


def test_wait_is_checked_and_bounded(alice_api, session, stores):
    job = statements.submit_plan(
        session=session,
        sql="SELECT 1",
        plan={"kind": "query", "action": "query", "needs_spark": True, "sql": "SELECT 1"},
    )
    for wait in ("-1", "31", "soon", "nan"):
        for path in ("result", "result.arrow"):
            assert_error(
                alice_api.get(f"{API}/jobs/{job.pk}/{path}?wait={wait}"),
                400,
                "VALIDATION_ERROR",
                "wait",
            )
    # A job that writes nothing yet: after the wait, not ready (as without it).
    assert_error(alice_api.get(f"{API}/jobs/{job.pk}/result?wait=0.2"), 409, "RESULT_NOT_READY")
    assert partial.read_progress(job.pk) is None
