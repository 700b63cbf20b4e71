"""``GET /jobs/{id}/result.arrow`` (the whole result as an Arrow IPC stream) and the
``row_limit`` of ``POST /sessions/{id}/statements``: the web's side, with real PostgreSQL.
The worker's side (Spark's types, large results) is tests/results/worker/test_result_arrow.py."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any, cast

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.ipc as ipc  # type: ignore[import-untyped]
import pytest
from django.http import StreamingHttpResponse

from core import jobstate
from jobs import lifecycle
from jobs.models import Job, Session
from results import arrow, store
from tests.conftest import API, assert_error
from tests.results.api.test_results import finished_job, sample_table, spark_job

pytestmark = pytest.mark.django_db

ARROW_STREAM = "application/vnd.apache.arrow.stream"


@pytest.fixture(autouse=True)
def results_dir(settings, tmp_path):
    settings.RESULTS_DIR = tmp_path / "results"
    return settings.RESULTS_DIR


@pytest.fixture
def session(alice_api) -> Session:
    response = alice_api.post(f"{API}/sessions", {})
    assert response.status_code == 201
    return Session.objects.select_related("user").get(pk=response.json()["id"])


def arrow_of(response: Any) -> pa.Table:
    assert response.status_code == 200, getattr(response, "content", b"")[:500]
    assert response["Content-Type"] == ARROW_STREAM
    return ipc.open_stream(b"".join(response.streaming_content)).read_all()


def test_result_arrow_is_the_stored_table_in_its_own_types(alice_api, session):
    table = sample_table(5)
    job = finished_job(session, table, truncated=True)
    response = alice_api.get(f"{API}/jobs/{job.id}/result.arrow")
    back = arrow_of(response)
    assert back.schema == table.schema  # decimal128, timestamp[us, UTC], date32, map, …
    # NaN equals nothing, not even itself: the ratio column is compared as text.
    assert back.drop_columns(["ratio"]).equals(table.drop_columns(["ratio"]))
    assert [str(v) for v in back["ratio"].to_pylist()] == ["nan", "0.25", "inf", "1.0", "1.0"]
    assert response["X-Tessera-Row-Count"] == "5"
    assert response["X-Tessera-Truncated"] == "true"
    assert f'filename="job-{job.id}.arrows"' in response["Content-Disposition"]
    # Whatever the client accepts, the answer is the stream (as for the other downloads).
    again = alice_api.get(f"{API}/jobs/{job.id}/result.arrow", HTTP_ACCEPT="application/json")
    assert arrow_of(again).num_rows == 5


def test_an_empty_result_is_a_stream_with_the_schema_and_no_rows(alice_api, session):
    table = sample_table().slice(0, 0)
    job = finished_job(session, table)
    response = alice_api.get(f"{API}/jobs/{job.id}/result.arrow")
    back = arrow_of(response)
    assert back.schema == table.schema and back.num_rows == 0
    assert response["X-Tessera-Row-Count"] == "0"
    assert response["X-Tessera-Truncated"] == "false"


def test_result_arrow_is_streamed_batch_by_batch(alice_api, session, monkeypatch):
    """The web never builds the whole stream: it is sent in chunks of whole batches read
    from the memory-mapped file."""
    rows = 300_000  # 30 stored batches of 10,000 rows, 2.4 MB per column
    table = pa.table(
        {"id": pa.array(range(rows), pa.int64()), "half": pa.array(range(0, 2 * rows, 2))}
    )
    job = finished_job_of(session, table)
    monkeypatch.setattr(arrow, "ARROW_CHUNK_BYTES", 1 << 20)
    response = alice_api.get(f"{API}/jobs/{job.id}/result.arrow")
    assert isinstance(response, StreamingHttpResponse)
    chunks = list(cast(Iterator[bytes], response.streaming_content))
    assert len(chunks) >= 4
    assert max(len(chunk) for chunk in chunks) < 2 << 20  # about a chunk's size, not all
    back = ipc.open_stream(b"".join(chunks)).read_all()
    assert back.num_rows == rows and back.equals(table)


def finished_job_of(session: Session, table: pa.Table) -> Job:
    job = spark_job(session)
    lifecycle.transition(job.id, jobstate.CREATED, jobstate.RUNNING, worker="w")
    columns = [{"name": name, "data_type": "BIGINT"} for name in table.column_names]
    result = store.write_result(job.id, table, columns=columns, truncated=False)
    return lifecycle.transition(job.id, jobstate.RUNNING, jobstate.FINISHED, result=result)


def test_another_users_job_is_not_found(alice_api, bob_api, session):
    job = finished_job(session, sample_table())
    response = bob_api.get(f"{API}/jobs/{job.id}/result.arrow")
    assert_error(response, 404, "NOT_FOUND", f"Job {job.id} does not exist.")


def test_not_ready_failed_expired_and_odd_paths(alice_api, session, settings):
    job = spark_job(session)
    assert_error(alice_api.get(f"{API}/jobs/{job.id}/result.arrow"), 409, "RESULT_NOT_READY")
    lifecycle.transition(job.id, jobstate.CREATED, jobstate.RUNNING, worker="w")
    error = assert_error(
        alice_api.get(f"{API}/jobs/{job.id}/result.arrow"), 409, "RESULT_NOT_READY", "RUNNING"
    )
    assert error["details"] == {"status": "RUNNING"}
    lifecycle.transition(job.id, jobstate.RUNNING, jobstate.FAILED, error={"code": "X"})
    assert_error(alice_api.get(f"{API}/jobs/{job.id}/result.arrow"), 404, "NOT_FOUND", "FAILED")

    done = finished_job(session, sample_table())
    settings.TESSERA_RESULT_TTL_SECONDS = 60
    old = time.time() - 120
    os.utime(store.result_path(done.id), (old, old))
    assert_error(
        alice_api.get(f"{API}/jobs/{done.id}/result.arrow"), 404, "NOT_FOUND", "has expired"
    )
    for path in (
        f"{API}/jobs/{done.id}/result.arrows",
        f"{API}/jobs/{done.id}/result.arrow/..",
        f"{API}/jobs/..%2F{done.id}/result.arrow",
        f"{API}/jobs/not-a-uuid/result.arrow",
    ):
        assert alice_api.get(path).status_code == 404, path


def test_anonymous_callers_get_no_result(anon_api, session):
    job = finished_job(session, sample_table())
    assert anon_api.get(f"{API}/jobs/{job.id}/result.arrow").status_code == 401


# --- row_limit ----------------------------------------------------------------------------


def post(api: Any, session: Session, body: dict[str, Any]) -> Any:
    return api.post(f"{API}/sessions/{session.pk}/statements", body, format="json")


def test_row_limit_travels_with_the_job_plan(alice_api, session):
    response = post(alice_api, session, {"sql": "SELECT 1 AS x", "row_limit": 5})
    assert response.status_code == 201, response.content
    job = Job.objects.get(pk=response.json()["id"])
    assert job.plan["args"]["row_limit"] == 5
    # Without one, the session's result.max_rows decides (nothing in the plan).
    plain = post(alice_api, session, {"sql": "SELECT 1 AS x", "row_limit": None})
    assert "row_limit" not in Job.objects.get(pk=plain.json()["id"]).plan["args"]


def test_row_limit_is_ignored_by_statements_without_rows_to_keep(alice_api, session):
    response = post(alice_api, session, {"sql": "SHOW CATALOGS", "row_limit": 3})
    assert response.status_code == 201, response.content
    assert "row_limit" not in (Job.objects.get(pk=response.json()["id"]).plan or {}).get("args", {})


@pytest.mark.parametrize("value", [0, -1, "x", "5", 10**12, 1.5, True, [5], {"n": 5}])
def test_row_limit_out_of_range_or_not_an_integer_is_refused(alice_api, session, value):
    before = Job.objects.count()
    error = assert_error(
        post(alice_api, session, {"sql": "SELECT 1 AS x", "row_limit": value}),
        400,
        "VALIDATION_ERROR",
        "'row_limit' must be an integer from 1 to 100,000,000",
    )
    assert error["details"] == {"field": "row_limit", "min": 1, "max": 100_000_000}
    assert Job.objects.count() == before  # no job for a refused request


def test_row_limit_maximum_is_the_servers_setting(alice_api, session, settings):
    settings.TESSERA_RESULT_DOWNLOAD_MAX_ROWS = 1000
    assert post(alice_api, session, {"sql": "SELECT 1", "row_limit": 1000}).status_code == 201
    error = assert_error(
        post(alice_api, session, {"sql": "SELECT 1", "row_limit": 1001}),
        400,
        "VALIDATION_ERROR",
        "from 1 to 1,000",
    )
    assert error["details"]["max"] == 1000


def test_row_limit_is_for_one_statement_not_a_script(alice_api, session):
    error = assert_error(
        post(alice_api, session, {"sql": "SELECT 1; SELECT 2", "script": True, "row_limit": 5}),
        400,
        "VALIDATION_ERROR",
        "one statement",
    )
    assert error["details"] == {"field": "row_limit"}
