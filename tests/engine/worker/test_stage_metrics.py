"""Per-stage Spark metrics of a job (``engine.stage_metrics``), on a real worker.

The worker reads the stages of the job's Spark jobs from the driver's status store when its
Spark work ends, and stores them as ``progress.stages``; the job's owner reads them with the
job (``GET /jobs/{id}``), nobody else.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from catalog import services as catalog_services
from catalog.models import Database
from core.schema import Schema
from engine import stage_metrics
from jobs.models import Job
from tests.conftest import API, assert_error
from tests.waiting import wait_until
from tests.worker_helpers import Pipeline, wait_job, with_stages

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker"),
]

ROWS = 600
# Stages of the query that fails: one row in the middle divides by zero (ANSI mode).
FAILING_SQL = "SELECT sum(10 DIV (id - 1999999)) AS s FROM range(0, 3000000, 1, 3)"
# A scan that runs for minutes, to be cancelled once its tasks run.
SLOW_SCAN_SQL = "SELECT count(*) AS n FROM range(0, 1000000000000000, 1, 2) WHERE id % 7 = 3"
STAGE_KEYS = {
    "stage_id",
    "attempt",
    "name",
    "status",
    "tasks",
    "tasks_completed",
    "tasks_failed",
    "rows_read",
    "bytes_read",
    "rows_written",
    "bytes_written",
    "shuffle_read_rows",
    "shuffle_read_bytes",
    "shuffle_write_rows",
    "shuffle_write_bytes",
    "memory_spilled",
    "disk_spilled",
    "duration_ms",
    "run_time_ms",
    "failure",
}


@pytest.fixture
def orders(alice_sql: Pipeline, catalog: str, plain_spark: Any) -> dict[str, Any]:
    """An external parquet table ``<catalog>.d.orders`` of ``ROWS`` rows in 3 files."""
    path = Path(settings.TESSERA_STORAGE_ROOTS[0]) / f"orders-{uuid.uuid4().hex[:8]}"
    frame = plain_spark.createDataFrame(
        [(i, i % 7) for i in range(ROWS)], "id BIGINT, qty INT"
    ).repartition(3)
    frame.write.parquet(str(path))
    size = sum(f.stat().st_size for f in path.glob("*.parquet"))
    database = Database.objects.get(catalog__name=catalog, name="d")
    schema = Schema.from_dict(
        {
            "columns": [
                {"name": "id", "kind": "physical", "data_type": "BIGINT"},
                {"name": "qty", "kind": "physical", "data_type": "INT"},
            ]
        }
    )
    catalog_services.table_create(
        user=alice_sql.user,
        database=database,
        name="orders",
        schema=schema,
        options={"connector": "parquet", "path": str(path)},
    )
    return {"table": f"{catalog}.d.orders", "bytes": size}


def total(stages: list[dict[str, Any]], key: str) -> int:
    return sum(int(stage[key]) for stage in stages)


def test_a_query_with_a_shuffle_records_its_stages(alice_sql: Pipeline, orders: dict[str, Any]):
    job = alice_sql.run(
        f"SELECT qty, count(*) AS n FROM {orders['table']} GROUP BY qty ORDER BY qty"
    )
    assert job["status"] == "FINISHED", job
    stages = with_stages(alice_sql.api, job)["progress"]["stages"]
    assert isinstance(stages, list) and len(stages) >= 2, stages
    assert all(set(stage) == STAGE_KEYS for stage in stages), stages
    assert [s["stage_id"] for s in stages] == sorted(s["stage_id"] for s in stages)
    assert {s["status"] for s in stages} == {"COMPLETE"}, stages
    assert all(s["tasks"] >= 1 and s["tasks_completed"] == s["tasks"] for s in stages), stages
    assert all(s["name"] and s["duration_ms"] is not None for s in stages), stages
    # Named by the action that ran them, never by a place in the server's files.
    assert all("/" not in s["name"] and " at " not in s["name"] for s in stages), stages
    # Every row of the table read once; the scan's output crosses the shuffle.
    assert total(stages, "rows_read") == ROWS
    assert 0 < total(stages, "bytes_read") <= orders["bytes"] * 2
    assert total(stages, "shuffle_write_bytes") > 0
    assert total(stages, "shuffle_read_bytes") == total(stages, "shuffle_write_bytes")
    assert total(stages, "rows_written") == 0
    # Stored with the job, as the API shows it.
    assert Job.objects.get(pk=job["id"]).progress["stages"] == stages


def test_a_ctas_records_what_it_wrote(alice_sql: Pipeline, catalog: str):
    job = alice_sql.run(
        f"CREATE TABLE {catalog}.d.copy AS SELECT id, id * 2 AS twice FROM range(0, 5000, 1, 2)"
    )
    assert job["status"] == "FINISHED", job
    stages = with_stages(alice_sql.api, job)["progress"]["stages"]
    assert stages, job["progress"]
    assert total(stages, "rows_written") == 5000
    assert total(stages, "bytes_written") > 0


def test_an_insert_records_what_it_wrote(alice_sql: Pipeline, catalog: str, orders: dict[str, Any]):
    created = alice_sql.run(f"CREATE TABLE {catalog}.d.small (id BIGINT, qty INT)")
    assert created["status"] == "FINISHED", created
    job = alice_sql.run(f"INSERT INTO {catalog}.d.small SELECT id, qty FROM {orders['table']}")
    assert job["status"] == "FINISHED", job
    stages = with_stages(alice_sql.api, job)["progress"]["stages"]
    assert total(stages, "rows_read") == ROWS
    assert total(stages, "rows_written") == ROWS
    assert total(stages, "bytes_written") > 0


def test_a_failed_query_keeps_the_stages_that_ran(alice_sql: Pipeline):
    job = alice_sql.run(FAILING_SQL)
    assert job["status"] == "FAILED", job
    stages = with_stages(alice_sql.api, job)["progress"]["stages"]
    assert stages, job["progress"]
    failed = [s for s in stages if s["status"] == "FAILED"]
    assert failed, stages
    assert failed[0]["tasks_failed"] >= 1 and failed[0]["failure"], failed
    assert "\n" not in failed[0]["failure"]


def test_a_canceled_query_keeps_the_stages_that_ran(alice_sql: Pipeline):
    job_id = alice_sql.submit(SLOW_SCAN_SQL)
    wait_until(
        lambda: Job.objects.filter(pk=job_id, progress__tasks_total__gt=0).exists(),
        60,
        message="the slow query's Spark tasks",
    )
    response = alice_sql.api.post(f"{API}/jobs/{job_id}/cancel")
    assert response.status_code in (200, 202), response.content
    wait_job(alice_sql.api, job_id, {"CANCELED"}, timeout=30)
    # Recorded once the stopped tasks settled, after the cancel's transition.
    stages = wait_until(
        lambda: wait_job(alice_sql.api, job_id, {"CANCELED"})["progress"]["stages"],
        30,
        message="the canceled job's stages",
    )
    assert stages[0]["tasks"] == 2, stages
    assert stages[0]["status"] in {"FAILED", "COMPLETE"}, stages
    assert stages[0]["tasks_completed"] < stages[0]["tasks"], stages
    assert stages[0]["run_time_ms"] > 0, stages


def test_another_user_cannot_read_the_stages(alice_sql: Pipeline):
    job = alice_sql.run("SELECT k, count(*) FROM (SELECT id % 3 AS k FROM range(100)) GROUP BY k")
    assert job["status"] == "FINISHED" and with_stages(alice_sql.api, job)["progress"]["stages"]
    bob = Pipeline("bob")
    assert_error(bob.api.get(f"{API}/jobs/{job['id']}"), 404, "NOT_FOUND", job["id"])
    listed = bob.api.get(f"{API}/jobs")
    assert listed.status_code == 200, listed.content
    assert job["id"] not in {item["id"] for item in listed.json()["items"]}


def test_jobs_without_spark_work_have_no_stages(alice_sql: Pipeline, catalog: str):
    job = alice_sql.run(f"SHOW TABLES IN {catalog}.d")
    assert job["status"] == "FINISHED", job
    assert job["progress"]["stages"] is None


def test_the_stages_of_a_group_are_bounded_and_in_order(plain_spark: Any):
    """``collect`` on the test process's own Spark: only the group's stages, at most
    ``limit``, by stage id."""
    sc = plain_spark.sparkContext
    group, other = f"tessera-job-{uuid.uuid4()}", f"tessera-job-{uuid.uuid4()}"
    query = "SELECT id % 3 AS k, count(*) AS n FROM range(0, 300, 1, 2) GROUP BY k"
    try:
        sc.setJobGroup(other, "another job", True)
        plain_spark.sql(query).collect()
        sc.setJobGroup(group, "this job", True)
        for _ in range(3):
            plain_spark.sql(query).collect()
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    stages = stage_metrics.collect(plain_spark, group)
    assert len(stages) >= 6, stages
    assert total(stages, "rows_read") == 3 * 300
    ids = [stage["stage_id"] for stage in stages]
    assert ids == sorted(ids)
    assert stage_metrics.collect(plain_spark, group, limit=2) == stages[:2]
    assert total(stage_metrics.collect(plain_spark, other), "rows_read") == 300


def test_stage_names_drop_the_call_site():
    assert stage_metrics.stage_name("toArrow at /srv/tessera/jobs/executor/run.py:237") == "toArrow"
    assert stage_metrics.stage_name("save at NativeMethodAccessorImpl.java:0\nmore") == "save"
    assert "/etc" not in stage_metrics.stage_name("scan /etc/hosts")
