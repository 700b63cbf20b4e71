"""Statements on a real worker: results, errors, cancel, timeout, isolation, idempotency,
the sweeper, and Spark-backed DDL (typing, view schemas).

Statements go through ``POST /api/v1/sessions/{id}/statements``; where a test stores a job
itself (a duplicated or lost message), its plan comes from the real planner (``planned``).
Plans made by hand (``hand_plan``) are only the ones the planner never makes, which the
worker must refuse or isolate on its own.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from celery import current_app
from django.conf import settings

from catalog import services as catalog_services
from catalog.models import Column, Database, Table
from core.schema import Schema
from jobs import lifecycle
from jobs.models import Job
from tests import worker_helpers as helpers
from tests.conftest import API
from tests.grants_support import share
from tests.waiting import wait_until
from tests.worker_helpers import (
    SCHEMA,
    events,
    hand_plan,
    json_value,
    planned,
    result_rows,
    statement,
    submit_plan,
    submit_sql,
    wait_job,
)
from tests.workers import WorkerProcess

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker"),
]

# Long enough to be cancelled, timed out or killed: a count over a big cross join.
SLOW_SQL = "SELECT count(*) AS n FROM range(0, 100000000) AS a CROSS JOIN range(0, 100000) AS b"
# A slow query that is one Spark job from its first task (SLOW_SQL first broadcasts one
# side: a job of its own). On Spark Connect a cancel that lands between two Spark jobs of
# one operation does not stop the second (docs/deploy.md, "What differs"): the cancel test
# of the runtime matrix cancels a query whose Spark work has started.
SLOW_SCAN_SQL = "SELECT count(*) AS n FROM range(0, 1000000000000000, 1, 2) WHERE id % 7 = 3"


class Pipeline(helpers.Pipeline):
    """The helpers' pipeline; its jobs here end within 60 s."""

    def run(self, sql: str, timeout: float = 60) -> dict[str, Any]:
        return super().run(sql, timeout)


@pytest.fixture
def sales(alice_sql: Pipeline, plain_spark: Any) -> dict[str, Any]:
    """An external parquet table c.d.sales (written by plain PySpark), in the catalog."""
    root = Path(settings.TESSERA_STORAGE_ROOTS[0])
    path = root / f"sales-{uuid.uuid4().hex[:8]}"
    frame = plain_spark.createDataFrame(
        [(i, f"item {i}", f"{i}.25", i % 7) for i in range(1, 501)],
        "id BIGINT, name STRING, price STRING, qty INT",
    ).selectExpr("id", "name", "CAST(price AS DECIMAL(10, 2)) AS price", "qty")
    frame.repartition(3).write.parquet(str(path))
    catalog = catalog_services.catalog_create(user=alice_sql.user, name="c", default_database="d")
    share(catalog)  # everyone reads it (bob's test reads it too)
    database = Database.objects.get(catalog=catalog, name="d")
    catalog_services.table_create(
        user=alice_sql.user,
        database=database,
        name="sales",
        schema=Schema.from_dict(SCHEMA),
        options={"connector": "parquet", "path": str(path)},
    )
    return {"path": str(path)}


def test_query_rows_equal_plain_pyspark(alice_sql: Pipeline, sales: dict[str, Any], plain_spark):
    sql = "SELECT id, name, price, total, file FROM c.d.sales WHERE id % 3 = 0 ORDER BY id"
    job = alice_sql.run(sql)
    assert job["status"] == "FINISHED", job
    columns, rows = result_rows(alice_sql.api, job["id"])

    expected_frame = (
        plain_spark.read.parquet(sales["path"])
        .selectExpr("id", "name", "price", "price * qty AS total", "_metadata.file_path AS file")
        .where("id % 3 = 0")
        .orderBy("id")
    )
    expected = [[json_value(v) for v in row] for row in expected_frame.collect()]
    assert len(rows) == 166
    assert rows == expected
    assert rows[0][:4] == [3, "item 3", "3.25", "9.75"]
    assert rows[0][4].endswith(".parquet") and sales["path"] in rows[0][4]
    nullable = [f.nullable for f in expected_frame.schema.fields]  # as Spark analysed it
    assert columns == [
        {"name": "id", "data_type": "BIGINT", "nullable": nullable[0]},
        {"name": "name", "data_type": "STRING", "nullable": nullable[1]},
        {"name": "price", "data_type": "DECIMAL(10, 2)", "nullable": nullable[2]},
        {"name": "total", "data_type": "DECIMAL(21, 2)", "nullable": nullable[3]},
        {"name": "file", "data_type": "STRING", "nullable": nullable[4]},
    ]
    assert job["result"] == {"columns": columns, "row_count": 166, "truncated": False}
    progress = job["progress"]
    assert progress["stages_total"] >= 1 and progress["stages_done"] == progress["stages_total"]
    assert progress["tasks_total"] >= 1 and progress["tasks_done"] == progress["tasks_total"]
    assert events(job["id"]) == ["created", "running", "finished"]


def test_result_max_rows_truncates(sales: dict[str, Any]):
    bob = Pipeline("bob", {"result.max_rows": "10"})
    job = bob.run("SELECT id FROM c.d.sales")
    assert job["status"] == "FINISHED", job
    assert job["result"]["row_count"] == 10 and job["result"]["truncated"] is True
    assert len(result_rows(bob.api, job["id"])[1]) == 10


def test_udfs_python_and_sql(alice_sql: Pipeline):
    plan = hand_plan(
        "SELECT `__tessera_f1`('Hello, Wörld!') AS slug, `__tessera_f2`(41) AS answer, "
        "`__tessera_f3`(12.5, 0, 10) AS clamped",
        functions=[
            {
                "alias": "__tessera_f1",
                "identifier": ["c", "d", "slug"],
                "language": "python",
                "implementation": "tessera_udfs.text.slugify",
                "return_type": "",
            },
            {
                "alias": "__tessera_f2",
                "identifier": ["c", "d", "plus1"],
                "language": "sql",
                "parameters": [["x", "INT"]],
                "return_type": "INT",
                "body": "x + 1",
            },
            {
                "alias": "__tessera_f3",
                "identifier": ["c", "d", "clamp"],
                "language": "python",
                "implementation": "tessera_udfs.math.clamp",
                "return_type": "DOUBLE",
            },
        ],
    )
    job = wait_job(alice_sql.api, submit_plan(alice_sql.user, plan, session=alice_sql.session).id)
    assert job["status"] == "FINISHED", job
    columns, rows = result_rows(alice_sql.api, job["id"])
    assert rows == [["hello-world", 42, 10.0]]
    assert [c["data_type"] for c in columns] == ["STRING", "INT", "DOUBLE"]


def test_udf_outside_the_allowlist_is_refused(alice_sql: Pipeline):
    plan = hand_plan(
        "SELECT `__tessera_f1`('x')",
        functions=[
            {
                "alias": "__tessera_f1",
                "identifier": ["c", "d", "sys"],
                "language": "python",
                "implementation": "os.system",
                "return_type": "INT",
            }
        ],
    )
    job = wait_job(alice_sql.api, submit_plan(alice_sql.user, plan, session=alice_sql.session).id)
    assert job["status"] == "FAILED"
    assert job["error"]["code"] == "VALIDATION_ERROR"
    # The worker's loader and the planner share one check (core.planner.guard).
    assert "must come from the allowlisted packages" in job["error"]["message"]


@pytest.mark.parametrize(
    ("sql", "fragment"),
    [
        ("SELECT 1 / 0 AS x", "[DIVIDE_BY_ZERO] Division by zero."),
        ("SELECT nope FROM range(3)", "[UNRESOLVED_COLUMN.WITH_SUGGESTION]"),
        ("SELECT raise_error('custom failure')", "custom failure"),
    ],
)
def test_spark_errors_are_short(alice_sql: Pipeline, sql: str, fragment: str):
    job = alice_sql.run(sql)
    assert job["status"] == "FAILED"
    error = job["error"]
    assert error["code"] == "SPARK_ERROR"
    assert fragment in error["message"]
    for noise in ("\tat ", "Traceback", "org.apache.spark", "py4j", "\n"):
        assert noise not in error["message"], error["message"]
    assert events(job["id"]) == ["created", "running", "failed"]


def test_python_udf_failure_names_the_python_error(alice_sql: Pipeline):
    plan = hand_plan(
        "SELECT `__tessera_f1`(id) FROM range(2)",
        functions=[
            {
                "alias": "__tessera_f1",
                "identifier": ["c", "d", "clamp"],
                "language": "python",
                "implementation": "tessera_udfs.math.clamp",
                "return_type": "DOUBLE",
            }
        ],
    )
    job = wait_job(alice_sql.api, submit_plan(alice_sql.user, plan, session=alice_sql.session).id)
    assert job["status"] == "FAILED"
    message = job["error"]["message"]
    assert "TypeError" in message and "Traceback" not in message and "File " not in message


def test_cancel_stops_spark(alice_sql: Pipeline):
    # How fast a cancel ends the job is measured by bench/cancel_latency.py, not asserted.
    job_id = alice_sql.submit(SLOW_SCAN_SQL)
    wait_until(
        lambda: Job.objects.filter(pk=job_id, progress__tasks_total__gt=0).exists(),
        60,
        message="the slow query's Spark tasks",
    )
    response = alice_sql.api.post(f"{API}/jobs/{job_id}/cancel")
    assert response.status_code in (200, 202), response.content
    job = wait_job(alice_sql.api, job_id, {"CANCELED"}, timeout=30)
    assert job["error"]["code"] == "CANCELED"
    assert events(job_id) == ["created", "running", "cancel_requested", "canceled"]

    # Spark's job is gone: the session's next query runs and ends.
    follow = alice_sql.run("SELECT 42 AS x", timeout=30)
    assert follow["status"] == "FINISHED", follow


def test_timeout_fails_the_job_and_stops_spark():
    carol = Pipeline("carol", {"job.timeout_seconds": "2"})
    job = carol.run(SLOW_SQL, timeout=30)
    assert job["status"] == "FAILED", job
    assert job["error"]["code"] == "TIMEOUT"
    assert "timeout of 2 s" in job["error"]["message"]
    # Not before its time: the job's own record ran for at least the timeout.
    ran = datetime.fromisoformat(job["finished_at"]) - datetime.fromisoformat(job["started_at"])
    assert ran >= timedelta(seconds=2), job
    assert events(job["id"]) == ["created", "running", "failed"]
    follow = carol.run("SELECT 1 AS x", timeout=30)
    assert follow["status"] == "FINISHED", follow


def _explain_partitions(pipeline: Pipeline) -> str:
    sql = "EXPLAIN SELECT id % 5 AS k, count(*) FROM range(100) GROUP BY id % 5"
    job = pipeline.run(sql)
    assert job["status"] == "FINISHED", job
    columns, rows = result_rows(pipeline.api, job["id"])
    assert len(rows) == 1 and len(columns) == 1
    text: str = rows[0][0]
    assert "== Physical Plan ==" in text
    return text


def test_sessions_do_not_share_spark_conf():
    dave = Pipeline("dave")
    setting = "SET spark.sql.shuffle.partitions = 3"
    assert statement(dave.api, dave.session_id, setting, wait=10)["status"] == "FINISHED"
    erin = Pipeline("erin")
    mine = _explain_partitions(dave).split("hashpartitioning", 1)[1].split("\n")[0]
    other = _explain_partitions(erin).split("hashpartitioning", 1)[1].split("\n")[0]
    assert ", 3)" in mine
    assert ", 8)" in other  # the worker's default, not dave's 3


def test_jobs_do_not_share_temporary_views_or_functions(alice_sql: Pipeline):
    secret = hand_plan(
        "SELECT * FROM `__tessera_r1`",
        relations=[
            {
                "alias": "__tessera_r1",
                "identifier": ["c", "d", "v"],
                "kind": "view",
                "sql": "SELECT 'secret' AS s",
            }
        ],
        functions=[
            {
                "alias": "__tessera_f1",
                "identifier": ["c", "d", "f"],
                "language": "sql",
                "parameters": [],
                "return_type": "STRING",
                "body": "'mine'",
            }
        ],
    )
    first = wait_job(
        alice_sql.api, submit_plan(alice_sql.user, secret, session=alice_sql.session).id
    )
    assert first["status"] == "FINISHED", first
    frank = Pipeline("frank")
    for sql in ("SELECT * FROM `__tessera_r1`", "SELECT `__tessera_f1`()"):
        job = wait_job(frank.api, submit_plan(frank.user, hand_plan(sql), frank.session).id)
        assert job["status"] == "FAILED", job
        # The worker's guard refuses a name the job's own plan did not register before Spark
        # looks for it (and Spark's newSession() would not find it either).
        assert job["error"]["code"] == "FORBIDDEN_SQL", job["error"]
        assert job["error"]["details"]["checked_by"] == "spark_parser"
        assert "__tessera_" in job["error"]["message"]
        # Not even the same user's next job sees them.
        again = wait_job(
            alice_sql.api, submit_plan(alice_sql.user, hand_plan(sql), alice_sql.session).id
        )
        assert again["status"] == "FAILED", again


def drop_note(line: str) -> bool:
    """A worker log line saying it did not run a job's message (engine.run)."""
    return "message dropped" in line or "claimed by someone else" in line


def test_duplicated_message_runs_the_job_once(alice_sql: Pipeline, worker: WorkerProcess):
    sql = "SELECT sum(id) AS s FROM range(3000000)"
    job = submit_sql(alice_sql.user, sql, session=alice_sql.session)
    for _ in range(3):
        current_app.send_task("tessera.run_job", args=[str(job.id)])
    done = wait_job(alice_sql.api, job.id)
    assert done["status"] == "FINISHED", done
    current_app.send_task("tessera.run_job", args=[str(job.id)])  # after the end, too

    # Every message but the one that ran it is dropped, the one sent after the end too (the
    # worker logs each drop; a sweeper re-send would be one more message).
    def dropped() -> bool:
        log = worker.log_path.read_text(errors="replace").splitlines()
        drops = [line for line in log if f"job {job.id} " in line and drop_note(line)]
        return len(drops) >= 4 + events(job.id, requeued=True).count("requeued")

    wait_until(dropped, 30, 0.1, "the worker to drop the duplicated messages")
    assert events(job.id) == ["created", "running", "finished"]
    assert result_rows(alice_sql.api, job.id)[1] == [[sum(range(3000000))]]


def test_lost_message_is_swept_and_runs(alice_sql: Pipeline):
    sql = "SELECT 7 AS seven"
    job = Job(
        session=alice_sql.session,
        user=alice_sql.user,
        sql=sql,
        kind="query",
        plan=planned(alice_sql.session, sql),
        timeout_seconds=60,
    )
    job.save()
    lifecycle.created(job)  # stored, never enqueued: as if the broker lost the message
    done = wait_job(alice_sql.api, job.id, timeout=20)
    assert done["status"] == "FINISHED", done
    assert events(job.id, requeued=True) == ["created", "requeued", "running", "finished"]
    assert Job.objects.get(pk=job.id).enqueue_count == 1


def test_view_schema_is_derived_by_spark(alice_sql: Pipeline, sales: dict[str, Any]):
    query = "SELECT id, total, upper(name) AS shout FROM c.d.sales"
    job = wait_job(alice_sql.api, alice_sql.submit(f"CREATE VIEW c.d.big_sales AS {query}"))
    assert job["status"] == "FINISHED", job
    view = Table.objects.get(name="big_sales", kind=Table.KIND_VIEW)
    assert view.query == query
    resolved = view.resolved_schema or {}
    assert [(c["name"], c["data_type"]) for c in resolved["columns"]] == [
        ("id", "BIGINT"),
        ("total", "DECIMAL(21, 2)"),
        ("shout", "STRING"),
    ]
    assert events(job["id"]) == ["created", "running", "finished"]


def test_rest_created_table_is_typed_before_it_is_stored(
    alice_sql: Pipeline, sales: dict[str, Any]
):
    # The web process has no Spark: it asks a worker's analyzer (tessera.check_schema) and
    # waits for the answer before it stores the table: it is never stored untyped.
    schema = {
        "columns": [
            {"name": "price", "kind": "physical", "data_type": "DECIMAL(10, 2)"},
            {"name": "qty", "kind": "physical", "data_type": "INT"},
            {"name": "total", "kind": "computed", "expression": "price * qty"},
        ]
    }
    catalog_services.catalog_create(user=alice_sql.user, name="rest", default_database="d")
    response = alice_sql.api.post(
        "/api/v1/catalogs/rest/databases/d/tables", {"name": "t", "schema": schema}, format="json"
    )
    assert response.status_code == 201, response.content
    resolved = response.json()["resolved_schema"]
    assert resolved["columns"][2]["data_type"] == "DECIMAL(21, 2)"
    assert resolved["expressions_resolved"] is True
    table = Table.objects.get(name="t", database__catalog__name="rest")
    total = Column.objects.get(table_id=table.id, name="total")
    assert total.data_type == "DECIMAL(21, 2)"


def test_create_table_with_computed_column_is_typed_on_the_worker(alice_sql: Pipeline):
    catalog_services.catalog_create(user=alice_sql.user, name="c", default_database="d")
    sql = "CREATE TABLE c.d.orders (price DECIMAL(10, 2), qty INT, total AS price * qty)"
    job = alice_sql.run(sql)
    assert job["status"] == "FINISHED", job
    resolved = Table.objects.get(name="orders").resolved_schema or {}
    assert resolved["expressions_resolved"] is True
    assert resolved["columns"][2]["data_type"] == "DECIMAL(21, 2)"

    bad = sql.replace("orders", "broken").replace("price * qty", "price * nope")
    failed = alice_sql.run(bad)
    assert failed["status"] == "FAILED", failed
    assert failed["error"]["code"] == "VALIDATION_ERROR"
    assert "`total`" in failed["error"]["message"] and "nope" in failed["error"]["message"]
    assert not Table.objects.filter(name="broken").exists()


def test_python_function_created_checked_and_called(alice_sql: Pipeline):
    catalog_services.catalog_create(user=alice_sql.user, name="c", default_database="d")
    create = "CREATE FUNCTION c.d.slug AS 'tessera_udfs.text.slugify' LANGUAGE PYTHON"
    job = alice_sql.run(create)
    assert job["status"] == "FINISHED", job

    missing = create.replace("slug AS", "nothing AS").replace("slugify", "no_such_function")
    failed = alice_sql.run(missing)
    assert failed["status"] == "FAILED", failed
    assert "no_such_function" in failed["error"]["message"]

    call = "SELECT c.d.slug('Hello, Wörld!') AS s"
    done = alice_sql.run(call)
    assert done["status"] == "FINISHED", done
    assert result_rows(alice_sql.api, done["id"]) == (
        [{"name": "s", "data_type": "STRING", "nullable": True}],
        [["hello-world"]],
    )
