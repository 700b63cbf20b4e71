"""The results store and the result endpoints: pages, downloads, expiry, not-ready jobs."""

from __future__ import annotations

import base64
import csv
import io
import json
import os
import subprocess
import sys
import time
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.ipc as ipc  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest
from django.db import connection
from django.utils import timezone

from core import jobstate
from jobs import lifecycle
from jobs.models import Job, Session
from results import store
from sessions import statements
from tests.conftest import API, assert_error

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[3]

COLUMNS = [
    {"name": "id", "data_type": "BIGINT"},
    {"name": "name", "data_type": "STRING"},
    {"name": "price", "data_type": "DECIMAL(10, 2)"},
    {"name": "ts", "data_type": "TIMESTAMP"},
    {"name": "ntz", "data_type": "TIMESTAMP_NTZ"},
    {"name": "day", "data_type": "DATE"},
    {"name": "raw", "data_type": "BINARY"},
    {"name": "tags", "data_type": "ARRAY<STRING>"},
    {"name": "attrs", "data_type": "MAP<STRING, INT>"},
    {"name": "point", "data_type": "STRUCT<x: DOUBLE, y: DOUBLE>"},
    {"name": "ratio", "data_type": "DOUBLE"},
    {"name": "ok", "data_type": "BOOLEAN"},
    {"name": "wait", "data_type": "INTERVAL DAY TO SECOND"},
]
# A result stored without ``nullable`` (command results, older results): pages say true.
PAGE_COLUMNS = [{**c, "nullable": True} for c in COLUMNS]


def sample_table(rows: int = 3) -> pa.Table:
    ids = list(range(1, rows + 1))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "name": pa.array([None if i == 2 else f"n{i}" for i in ids], pa.string()),
            "price": pa.array(
                [Decimal("1.50"), None, Decimal("-0.05")][:rows] + [Decimal(i) for i in ids[3:]],
                pa.decimal128(10, 2),
            ),
            "ts": pa.array(
                [datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)] * rows,
                pa.timestamp("us", tz="UTC"),
            ),
            "ntz": pa.array([datetime(2024, 1, 2, 3, 4, 5)] * rows, pa.timestamp("ns")),
            "day": pa.array([date(2024, 2, 29)] * rows, pa.date32()),
            "raw": pa.array([b"\x00\xffab"] * rows, pa.binary()),
            "tags": pa.array([["a", None, "c"]] * rows, pa.list_(pa.string())),
            "attrs": pa.array([[("k", 1), ("l", None)]] * rows, pa.map_(pa.string(), pa.int32())),
            "point": pa.array(
                [{"x": 1.5, "y": None}] * rows,
                pa.struct([("x", pa.float64()), ("y", pa.float64())]),
            ),
            "ratio": pa.array([float("nan"), 0.25, float("inf")][:rows] + [1.0] * max(rows - 3, 0)),
            "ok": pa.array([True, False, None][:rows] + [True] * max(rows - 3, 0)),
            "wait": pa.array(
                [timedelta(days=1, hours=2, seconds=3, microseconds=500000)] * rows,
                pa.duration("us"),
            ),
        }
    )


EXPECTED_FIRST_ROW = [
    1,
    "n1",
    "1.50",
    "2024-01-02T03:04:05.123456+00:00",
    "2024-01-02T03:04:05",
    "2024-02-29",
    base64.b64encode(b"\x00\xffab").decode(),
    ["a", None, "c"],
    {"k": 1, "l": None},
    {"x": 1.5, "y": None},
    "NaN",
    True,
    "P1DT2H0M3.5S",
]


@pytest.fixture(autouse=True)
def results_dir(settings, tmp_path):
    settings.RESULTS_DIR = tmp_path / "results"
    return settings.RESULTS_DIR


@pytest.fixture
def session(alice_api) -> Session:
    response = alice_api.post(f"{API}/sessions", {})
    assert response.status_code == 201
    return Session.objects.select_related("user").get(pk=response.json()["id"])


def spark_job(session: Session, sql: str = "SELECT * FROM t") -> Job:
    plan = {"kind": "query", "action": "query", "needs_spark": True, "sql": sql, "args": {}}
    return statements.submit_plan(session=session, sql=sql, plan=plan)


def finished_job(session: Session, table: pa.Table, truncated: bool = False) -> Job:
    """A query job run as a worker runs it: claim, write the Arrow result, finish."""
    job = spark_job(session)
    lifecycle.transition(job.id, jobstate.CREATED, jobstate.RUNNING, worker="w")
    result = store.write_result(job.id, table, columns=COLUMNS, truncated=truncated)
    return lifecycle.transition(job.id, jobstate.RUNNING, jobstate.FINISHED, result=result)


def test_write_result_is_atomic_and_describes_the_result(session, results_dir):
    job = finished_job(session, sample_table(), truncated=True)
    assert job.result == {"columns": COLUMNS, "row_count": 3, "truncated": True}
    assert sorted(p.name for p in results_dir.iterdir()) == [f"{job.id}.arrow"]  # no temp left
    with pa.memory_map(str(results_dir / f"{job.id}.arrow")) as source:
        assert ipc.open_file(source).read_all().num_rows == 3


def test_result_pages_hold_json_native_values(alice_api, session):
    job = finished_job(session, sample_table(5))
    first = alice_api.get(f"{API}/jobs/{job.id}/result?page_size=2")
    assert first.status_code == 200, first.content
    body = first.json()
    assert body["columns"] == PAGE_COLUMNS
    assert body["rows"][0] == EXPECTED_FIRST_ROW
    second_row = body["rows"][1]
    assert second_row[1] is None and second_row[2] is None  # NULLs
    assert second_row[10] == 0.25 and second_row[11] is False
    assert body["next_page_token"]

    seen = list(body["rows"])
    token = body["next_page_token"]
    while token:
        page = alice_api.get(f"{API}/jobs/{job.id}/result?page_size=2&page_token={token}").json()
        assert page["columns"] == PAGE_COLUMNS
        seen += page["rows"]
        token = page["next_page_token"]
    assert [row[0] for row in seen] == [1, 2, 3, 4, 5]
    assert seen[2][2] == "-0.05" and seen[2][10] == "Infinity"
    assert seen[4][2] == "5.00"

    everything = alice_api.get(f"{API}/jobs/{job.id}/result").json()
    assert everything["rows"] == seen and everything["next_page_token"] is None
    assert_error(
        alice_api.get(f"{API}/jobs/{job.id}/result?page_token=bm9wZQ"), 400, "VALIDATION_ERROR"
    )


def test_an_empty_result_has_columns_and_no_rows(alice_api, session):
    job = finished_job(session, sample_table().slice(0, 0))
    body = alice_api.get(f"{API}/jobs/{job.id}/result").json()
    assert body == {
        "columns": PAGE_COLUMNS,
        "rows": [],
        "next_page_token": None,
        "row_count": 0,
        "complete": True,
    }
    csv_text = b"".join(alice_api.get(f"{API}/jobs/{job.id}/result.csv").streaming_content)
    assert csv_text.decode().splitlines() == [",".join(c["name"] for c in COLUMNS)]


def test_csv_download(alice_api, session):
    job = finished_job(session, sample_table())
    response = alice_api.get(f"{API}/jobs/{job.id}/result.csv", HTTP_ACCEPT="text/csv")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"] == f'attachment; filename="job-{job.id}.csv"'
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0] == [c["name"] for c in COLUMNS]
    assert len(rows) == 4
    first = rows[1]
    assert first[:7] == [
        "1",
        "n1",
        "1.50",
        "2024-01-02T03:04:05.123456+00:00",
        "2024-01-02T03:04:05",
        "2024-02-29",
        base64.b64encode(b"\x00\xffab").decode(),
    ]
    assert json.loads(first[7]) == ["a", None, "c"]
    assert json.loads(first[8]) == {"k": 1, "l": None}
    assert json.loads(first[9]) == {"x": 1.5, "y": None}
    assert first[10:] == ["NaN", "true", "P1DT2H0M3.5S"]
    assert rows[2][1] == "" and rows[2][2] == ""  # NULL is an empty cell


def test_json_lines_download(alice_api, session):
    job = finished_job(session, sample_table())
    response = alice_api.get(f"{API}/jobs/{job.id}/result.json")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/x-ndjson")
    assert f'filename="job-{job.id}.json"' in response["Content-Disposition"]
    lines = b"".join(response.streaming_content).decode().splitlines()
    assert len(lines) == 3
    first = json.loads(lines[0])
    assert list(first) == [c["name"] for c in COLUMNS]
    assert list(first.values()) == EXPECTED_FIRST_ROW
    assert json.loads(lines[1])["name"] is None


def test_parquet_download(alice_api, session):
    table = sample_table()
    job = finished_job(session, table)
    response = alice_api.get(f"{API}/jobs/{job.id}/result.parquet")
    assert response.status_code == 200
    assert f'filename="job-{job.id}.parquet"' in response["Content-Disposition"]
    back = pq.read_table(io.BytesIO(b"".join(response.streaming_content)))
    assert back.column_names == table.column_names
    assert back.column("id").to_pylist() == [1, 2, 3]
    assert back.column("price").to_pylist() == [Decimal("1.50"), None, Decimal("-0.05")]
    assert back.column("tags").to_pylist()[0] == ["a", None, "c"]
    assert back.column("point").to_pylist()[0] == {"x": 1.5, "y": None}


def test_an_expired_result_is_not_found(alice_api, session, settings):
    job = finished_job(session, sample_table())
    path = store.result_path(job.id)
    settings.TESSERA_RESULT_TTL_SECONDS = 60
    old = time.time() - 120
    os.utime(path, (old, old))
    message = f"The result of job {job.id} has expired; run the statement again."
    assert_error(alice_api.get(f"{API}/jobs/{job.id}/result"), 404, "NOT_FOUND", message)
    assert not path.exists()  # deleted on the way
    for fmt in ("csv", "json", "parquet"):
        assert_error(alice_api.get(f"{API}/jobs/{job.id}/result.{fmt}"), 404, "NOT_FOUND", message)
    # The job itself still says what its result was.
    assert alice_api.get(f"{API}/jobs/{job.id}").json()["result"]["row_count"] == 3


def test_expire_results_removes_old_files_only(session):
    old_job = finished_job(session, sample_table())
    new_job = finished_job(session, sample_table())
    old = time.time() - 3600
    os.utime(store.result_path(old_job.id), (old, old))
    assert store.expire_results(timedelta(minutes=30)) == 1
    assert not store.result_path(old_job.id).exists()
    assert store.result_path(new_job.id).exists()
    assert store.expire_results(timezone.now() + timedelta(seconds=1)) == 1
    assert store.delete_result(new_job.id) is False


def test_no_result_before_the_job_finished_nor_after_it_failed(alice_api, session):
    job = spark_job(session)
    error = assert_error(
        alice_api.get(f"{API}/jobs/{job.id}/result"), 409, "RESULT_NOT_READY", "CREATED"
    )
    assert error["details"] == {"status": "CREATED"}
    lifecycle.transition(job.id, jobstate.CREATED, jobstate.RUNNING)
    assert_error(alice_api.get(f"{API}/jobs/{job.id}/result.csv"), 409, "RESULT_NOT_READY")
    lifecycle.transition(job.id, jobstate.RUNNING, jobstate.FAILED, error={"code": "X"})
    assert_error(alice_api.get(f"{API}/jobs/{job.id}/result"), 404, "NOT_FOUND", "FAILED")


def test_write_rows_stores_command_results(session):
    job = spark_job(session)
    columns = [
        {"name": "database", "data_type": "STRING"},
        {"name": "tableName", "data_type": "STRING"},
        {"name": "isTemporary", "data_type": "BOOLEAN"},
    ]
    meta = store.write_rows(job.id, columns, [["d", "t1", False], ["d", None, False]])
    assert meta == {"columns": columns, "row_count": 2, "truncated": False}
    rows, following = store.read_page(job.id, 0, 10)
    assert rows == [["d", "t1", False], ["d", None, False]]
    assert following is None
    assert store.read_page(job.id, 1, 1) == ([["d", None, False]], None)
    assert store.read_page(job.id, 0, 1) == ([["d", "t1", False]], 1)


# --- the web process stays free of Spark -----------------------------------------------------


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_web_process_never_imports_pyspark_while_serving_statements(tmp_path):
    """Submit statements of every path (command, planner error, Spark job enqueued on an
    in-memory broker, result pages) in a fresh process and look at what it imported."""
    code = """
import sys, django
django.setup()
import webapp.urls, webapp.wsgi, sessions.views, jobs.admin
from django.contrib.auth.models import User
from rest_framework.test import APIClient
user = User.objects.create_user("carol")
client = APIClient()
client.force_authenticate(user)
client.default_format = "json"
session = client.post("/api/v1/sessions", {}).json()["id"]
for sql in ["SHOW CATALOGS", "SELECT 1", "SELEC nonsense", "SET"]:
    job = client.post(f"/api/v1/sessions/{session}/statements", {"sql": sql}).json()
    client.get(f"/api/v1/jobs/{job['id']}")
    client.get(f"/api/v1/jobs/{job['id']}/result")
    client.get(f"/api/v1/jobs/{job['id']}/result.csv")
client.get("/api/v1/jobs")
bad = sorted(m for m in sys.modules if m.split(".")[0] in ("pyspark", "py4j"))
print(bad)
sys.exit(1 if bad else 0)
"""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "webapp.settings"}
    settings_dict = connection.settings_dict
    env["DATABASE_URL"] = (
        f"postgres://{settings_dict['USER']}:{settings_dict['PASSWORD'] or ''}"
        f"@{settings_dict['HOST'] or '127.0.0.1'}:{settings_dict['PORT'] or 5432}"
        f"/{settings_dict['NAME']}"
    )
    env["CELERY_BROKER_URL"] = "memory://"
    env["TESSERA_DATA_DIR"] = str(tmp_path)
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert Job.objects.filter(user__username="carol").count() == 4
