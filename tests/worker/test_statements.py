"""Statements on a real worker: results, errors, cancel, timeout, isolation, idempotency,
the sweeper, and Spark-backed DDL (typing, view schemas).

Statements go through ``POST /api/v1/sessions/{id}/statements`` when the planner is there;
until then the same plan is made by hand (docs/statements.md) and stored and enqueued by
``jobs.submission.submit_plan``, as the web does after planning.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from celery import current_app
from django.conf import settings
from django.contrib.auth.models import User

from catalog import services as catalog_services
from catalog.models import Column, Database, Table
from core.schema import Schema
from jobs import lifecycle
from jobs.models import Job, Session
from tests.conftest import API
from tests.worker.conftest import wait_until
from tests.worker.helpers import (
    api_for,
    create_user,
    events,
    hand_plan,
    json_value,
    open_session,
    result_rows,
    statement,
    submit_plan,
    wait_job,
)

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker"),
]

# Long enough to be cancelled, timed out or killed: a count over a big cross join.
SLOW_SQL = "SELECT count(*) AS n FROM range(0, 100000000) AS a CROSS JOIN range(0, 100000) AS b"

PHYSICAL = "`id` BIGINT, `name` STRING, `price` DECIMAL(10, 2), `qty` INT"
SCHEMA = {
    "columns": [
        {"name": "id", "kind": "physical", "data_type": "BIGINT"},
        {"name": "name", "kind": "physical", "data_type": "STRING"},
        {"name": "price", "kind": "physical", "data_type": "DECIMAL(10, 2)"},
        {"name": "qty", "kind": "physical", "data_type": "INT"},
        {"name": "total", "kind": "computed", "expression": "price * qty"},
        {
            "name": "file",
            "kind": "metadata",
            "data_type": "STRING",
            "metadata_key": "file_path",
            "virtual": True,
        },
    ]
}


def planner_ready() -> bool:
    import core.planner

    return hasattr(core.planner, "plan_statement")


class Pipeline:
    """One user with an API client and a SQL session."""

    def __init__(self, name: str, properties: dict[str, str] | None = None) -> None:
        self.user: User = create_user(name)
        self.api = api_for(self.user)
        self.session_id = open_session(self.api, properties)

    @property
    def session(self) -> Session:
        return Session.objects.get(pk=self.session_id)

    def submit(self, sql: str, plan: dict[str, Any]) -> str:
        """Submit ``sql`` through the API (planner there) or its hand-made ``plan``."""
        if planner_ready():
            return str(statement(self.api, self.session_id, sql)["id"])
        return str(submit_plan(self.user, plan, session=self.session, sql=sql).id)

    def run(self, sql: str, plan: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
        return wait_job(self.api, self.submit(sql, plan), timeout=timeout)


@pytest.fixture
def alice() -> Pipeline:
    return Pipeline("alice")


@pytest.fixture
def sales(alice: Pipeline, plain_spark: Any) -> dict[str, Any]:
    """An external parquet table c.d.sales (written by plain PySpark), in the catalog."""
    root = Path(settings.TESSERA_STORAGE_ROOTS[0])
    path = root / f"sales-{uuid.uuid4().hex[:8]}"
    frame = plain_spark.createDataFrame(
        [(i, f"item {i}", f"{i}.25", i % 7) for i in range(1, 501)],
        "id BIGINT, name STRING, price STRING, qty INT",
    ).selectExpr("id", "name", "CAST(price AS DECIMAL(10, 2)) AS price", "qty")
    frame.repartition(3).write.parquet(str(path))
    catalog = catalog_services.catalog_create(user=alice.user, name="c", default_database="d")
    database = Database.objects.get(catalog=catalog, name="d")
    catalog_services.table_create(
        user=alice.user,
        database=database,
        name="sales",
        schema=Schema.from_dict(SCHEMA),
        options={"connector": "parquet", "path": str(path)},
    )
    relation = {
        "alias": "__tessera_r1",
        "identifier": ["c", "d", "sales"],
        "kind": "table",
        "format": "parquet",
        "path": str(path),
        "options": {},
        "physical_schema": PHYSICAL,
        "columns": [
            {"name": "id", "kind": "physical"},
            {"name": "name", "kind": "physical"},
            {"name": "price", "kind": "physical"},
            {"name": "qty", "kind": "physical"},
            {"name": "total", "kind": "computed", "expression": "price * qty"},
            {"name": "file", "kind": "metadata", "metadata_key": "file_path"},
        ],
    }
    return {"path": str(path), "relation": relation}


def test_query_rows_equal_plain_pyspark(alice: Pipeline, sales: dict[str, Any], plain_spark):
    sql = "SELECT id, name, price, total, file FROM c.d.sales WHERE id % 3 = 0 ORDER BY id"
    plan = hand_plan(
        "SELECT id, name, price, total, file FROM `__tessera_r1` AS `sales` "
        "WHERE id % 3 = 0 ORDER BY id",
        relations=[sales["relation"]],
    )
    job = alice.run(sql, plan)
    assert job["status"] == "FINISHED", job
    columns, rows = result_rows(alice.api, job["id"])

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
    assert columns == [
        {"name": "id", "data_type": "BIGINT"},
        {"name": "name", "data_type": "STRING"},
        {"name": "price", "data_type": "DECIMAL(10, 2)"},
        {"name": "total", "data_type": "DECIMAL(21, 2)"},
        {"name": "file", "data_type": "STRING"},
    ]
    assert job["result"] == {"columns": columns, "row_count": 166, "truncated": False}
    progress = job["progress"]
    assert progress["stages_total"] >= 1 and progress["stages_done"] == progress["stages_total"]
    assert progress["tasks_total"] >= 1 and progress["tasks_done"] == progress["tasks_total"]
    assert events(job["id"]) == ["created", "running", "finished"]


def test_result_max_rows_truncates(sales: dict[str, Any]):
    bob = Pipeline("bob", {"result.max_rows": "10"})
    plan = hand_plan("SELECT id FROM `__tessera_r1` AS `sales`", relations=[sales["relation"]])
    job = bob.run("SELECT id FROM c.d.sales", plan)
    assert job["status"] == "FINISHED", job
    assert job["result"]["row_count"] == 10 and job["result"]["truncated"] is True
    assert len(result_rows(bob.api, job["id"])[1]) == 10


def test_udfs_python_and_sql(alice: Pipeline):
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
    job = wait_job(alice.api, submit_plan(alice.user, plan, session=alice.session).id)
    assert job["status"] == "FINISHED", job
    columns, rows = result_rows(alice.api, job["id"])
    assert rows == [["hello-world", 42, 10.0]]
    assert [c["data_type"] for c in columns] == ["STRING", "INT", "DOUBLE"]


def test_udf_outside_the_allowlist_is_refused(alice: Pipeline):
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
    job = wait_job(alice.api, submit_plan(alice.user, plan, session=alice.session).id)
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
def test_spark_errors_are_short(alice: Pipeline, sql: str, fragment: str):
    job = alice.run(sql, hand_plan(sql))
    assert job["status"] == "FAILED"
    error = job["error"]
    assert error["code"] == "SPARK_ERROR"
    assert fragment in error["message"]
    for noise in ("\tat ", "Traceback", "org.apache.spark", "py4j", "\n"):
        assert noise not in error["message"], error["message"]
    assert events(job["id"]) == ["created", "running", "failed"]


def test_python_udf_failure_names_the_python_error(alice: Pipeline):
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
    job = wait_job(alice.api, submit_plan(alice.user, plan, session=alice.session).id)
    assert job["status"] == "FAILED"
    message = job["error"]["message"]
    assert "TypeError" in message and "Traceback" not in message and "File " not in message


def test_cancel_stops_spark_within_a_second(alice: Pipeline):
    job_id = alice.submit(SLOW_SQL, hand_plan(SLOW_SQL))
    wait_until(
        lambda: Job.objects.filter(pk=job_id, progress__tasks_total__gt=0).exists(),
        60,
        what="the slow query's Spark tasks",
    )
    asked = time.monotonic()
    response = alice.api.post(f"{API}/jobs/{job_id}/cancel")
    assert response.status_code in (200, 202), response.content
    job = wait_job(alice.api, job_id, {"CANCELED"}, timeout=1.0)
    latency = time.monotonic() - asked
    assert latency < 1.0
    assert job["error"]["code"] == "CANCELED"
    assert events(job_id) == ["created", "running", "cancel_requested", "canceled"]

    # Spark's job is gone: with 2 local cores, a query right after runs promptly.
    started = time.monotonic()
    follow = alice.run("SELECT 42 AS x", hand_plan("SELECT 42 AS x"), timeout=10)
    assert follow["status"] == "FINISHED", follow
    assert time.monotonic() - started < 5
    print(f"cancel latency {latency:.3f} s")


def test_timeout_fails_the_job_and_stops_spark():
    carol = Pipeline("carol", {"job.timeout_seconds": "2"})
    started = time.monotonic()
    job = carol.run(SLOW_SQL, hand_plan(SLOW_SQL), timeout=15)
    assert job["status"] == "FAILED", job
    assert job["error"]["code"] == "TIMEOUT"
    assert "timeout of 2 s" in job["error"]["message"]
    assert 2 <= time.monotonic() - started < 6
    follow = carol.run("SELECT 1 AS x", hand_plan("SELECT 1 AS x"), timeout=10)
    assert follow["status"] == "FINISHED", follow


def _explain_partitions(pipeline: Pipeline) -> str:
    sql = "EXPLAIN SELECT id % 5 AS k, count(*) FROM range(100) GROUP BY id % 5"
    job = pipeline.run(sql, hand_plan(sql, action="explain"))
    assert job["status"] == "FINISHED", job
    columns, rows = result_rows(pipeline.api, job["id"])
    assert len(rows) == 1 and len(columns) == 1
    text: str = rows[0][0]
    assert "== Physical Plan ==" in text
    return text


def test_sessions_do_not_share_spark_conf():
    dave = Pipeline("dave")
    setting = "SET spark.sql.shuffle.partitions = 3"
    if planner_ready():
        assert statement(dave.api, dave.session_id, setting, wait=10)["status"] == "FINISHED"
    else:
        Session.objects.filter(pk=dave.session_id).update(
            properties={"spark.sql.shuffle.partitions": "3"}
        )
    erin = Pipeline("erin")
    mine = _explain_partitions(dave).split("hashpartitioning", 1)[1].split("\n")[0]
    other = _explain_partitions(erin).split("hashpartitioning", 1)[1].split("\n")[0]
    assert ", 3)" in mine
    assert ", 8)" in other  # the worker's default, not dave's 3


def test_jobs_do_not_share_temporary_views_or_functions(alice: Pipeline):
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
    first = wait_job(alice.api, submit_plan(alice.user, secret, session=alice.session).id)
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
        again = wait_job(alice.api, submit_plan(alice.user, hand_plan(sql), alice.session).id)
        assert again["status"] == "FAILED", again


def test_duplicated_message_runs_the_job_once(alice: Pipeline):
    sql = "SELECT sum(id) AS s FROM range(3000000)"
    job = submit_plan(alice.user, hand_plan(sql), session=alice.session)
    for _ in range(3):
        current_app.send_task("tessera.run_job", args=[str(job.id)])
    done = wait_job(alice.api, job.id)
    assert done["status"] == "FINISHED", done
    current_app.send_task("tessera.run_job", args=[str(job.id)])  # after the end, too
    time.sleep(1.0)
    assert events(job.id) == ["created", "running", "finished"]
    assert result_rows(alice.api, job.id)[1] == [[sum(range(3000000))]]


def test_lost_message_is_swept_and_runs(alice: Pipeline):
    sql = "SELECT 7 AS seven"
    job = Job(
        session=alice.session,
        user=alice.user,
        sql=sql,
        kind="query",
        plan=hand_plan(sql),
        timeout_seconds=60,
    )
    job.save()
    lifecycle.created(job)  # stored, never enqueued: as if the broker lost the message
    done = wait_job(alice.api, job.id, timeout=20)
    assert done["status"] == "FINISHED", done
    assert events(job.id, requeued=True) == ["created", "requeued", "running", "finished"]
    assert Job.objects.get(pk=job.id).enqueue_count == 1


def test_view_schema_is_derived_by_spark(alice: Pipeline, sales: dict[str, Any]):
    query = "SELECT id, total, upper(name) AS shout FROM c.d.sales"
    plan = hand_plan(
        "SELECT id, total, upper(name) AS shout FROM `__tessera_r1` AS `sales`",
        action="create_view",
        relations=[sales["relation"]],
        args={
            "identifier": ["c", "d", "big_sales"],
            "if_not_exists": False,
            "or_replace": False,
            "query": query,
            "comment": "",
        },
    )
    job = wait_job(alice.api, alice.submit(f"CREATE VIEW c.d.big_sales AS {query}", plan))
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


def test_rest_created_table_gets_its_expressions_typed(alice: Pipeline, sales: dict[str, Any]):
    # The web process has no Spark: it stores the table untyped and, after commit, asks a
    # worker (tessera.type_table_expressions) to type the expressions with Spark's analyzer.
    schema = {
        "columns": [
            {"name": "price", "kind": "physical", "data_type": "DECIMAL(10, 2)"},
            {"name": "qty", "kind": "physical", "data_type": "INT"},
            {"name": "total", "kind": "computed", "expression": "price * qty"},
        ]
    }
    catalog_services.catalog_create(user=alice.user, name="rest", default_database="d")
    response = alice.api.post(
        "/api/v1/catalogs/rest/databases/d/tables", {"name": "t", "schema": schema}, format="json"
    )
    assert response.status_code == 201, response.content
    assert response.json()["resolved_schema"]["columns"][2]["data_type"] is None
    table = Table.objects.get(name="t", database__catalog__name="rest")

    def typed() -> bool:
        schema = Table.objects.get(pk=table.id).resolved_schema or {}
        return bool(schema["expressions_resolved"])

    wait_until(typed, 30, 0.1, "the table's computed column to be typed")
    total = Column.objects.get(table_id=table.id, name="total")
    assert total.data_type == "DECIMAL(21, 2)"


def test_create_table_with_computed_column_is_typed_on_the_worker(alice: Pipeline):
    catalog_services.catalog_create(user=alice.user, name="c", default_database="d")
    sql = "CREATE TABLE c.d.orders (price DECIMAL(10, 2), qty INT, total AS price * qty)"
    schema = {
        "columns": [
            {"name": "price", "kind": "physical", "data_type": "DECIMAL(10, 2)"},
            {"name": "qty", "kind": "physical", "data_type": "INT"},
            {"name": "total", "kind": "computed", "expression": "price * qty"},
        ],
        "watermarks": [],
        "primary_key": None,
    }
    plan = hand_plan(
        "",
        action="create_table",
        args={
            "identifier": ["c", "d", "orders"],
            "if_not_exists": False,
            "schema": schema,
            "options": {},
            "partition_by": [],
            "comment": None,
        },
    )
    job = alice.run(sql, plan)
    assert job["status"] == "FINISHED", job
    resolved = Table.objects.get(name="orders").resolved_schema or {}
    assert resolved["expressions_resolved"] is True
    assert resolved["columns"][2]["data_type"] == "DECIMAL(21, 2)"

    bad = sql.replace("orders", "broken").replace("price * qty", "price * nope")
    plan["args"] = {**plan["args"], "identifier": ["c", "d", "broken"]}
    plan["args"]["schema"]["columns"][2]["expression"] = "price * nope"
    failed = alice.run(bad, plan)
    assert failed["status"] == "FAILED", failed
    assert failed["error"]["code"] == "VALIDATION_ERROR"
    assert "`total`" in failed["error"]["message"] and "nope" in failed["error"]["message"]
    assert not Table.objects.filter(name="broken").exists()


def test_python_function_created_checked_and_called(alice: Pipeline):
    catalog_services.catalog_create(user=alice.user, name="c", default_database="d")
    create = "CREATE FUNCTION c.d.slug AS 'tessera_udfs.text.slugify' LANGUAGE PYTHON"
    args = {
        "identifier": ["c", "d", "slug"],
        "if_not_exists": False,
        "language": "python",
        "implementation": "tessera_udfs.text.slugify",
        "parameters": [],
        "return_type": "",
        "comment": None,
    }
    job = alice.run(create, hand_plan("", action="create_function", args=args))
    assert job["status"] == "FINISHED", job

    missing = create.replace("slug AS", "nothing AS").replace("slugify", "no_such_function")
    args = {**args, "identifier": ["c", "d", "nothing"], "implementation": missing.split("'")[1]}
    failed = alice.run(missing, hand_plan("", action="create_function", args=args))
    assert failed["status"] == "FAILED", failed
    assert "no_such_function" in failed["error"]["message"]

    call = "SELECT c.d.slug('Hello, Wörld!') AS s"
    plan = hand_plan(
        "SELECT `__tessera_f1`('Hello, Wörld!') AS s",
        functions=[
            {
                "alias": "__tessera_f1",
                "identifier": ["c", "d", "slug"],
                "language": "python",
                "implementation": "tessera_udfs.text.slugify",
                "return_type": "",
            }
        ],
    )
    done = alice.run(call, plan)
    assert done["status"] == "FINISHED", done
    assert result_rows(alice.api, done["id"]) == (
        [{"name": "s", "data_type": "STRING"}],
        [["hello-world"]],
    )
