"""The Spark Connect runtime (``SPARK_REMOTE``) on a real worker and a real Connect server.

A Spark Connect server from the pinned PySpark (``tests/runtimes/connect_server.py``) and a
live Celery worker started with ``SPARK_REMOTE`` pointing at it: every job executes on the
server, while the worker's own small JVM parses for the SQL guard. Statements go through the
REST API (the real planner) except where a plan the planner never makes is the point.

The first test runs a worker against a server that is not there; it runs before the module's
Connect worker starts (both would take jobs from the same queue).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from catalog import services as catalog_services
from catalog.models import Database, Table
from core.schema import Schema
from jobs.models import Job
from tests.conftest import API
from tests.grants_support import share
from tests.runtimes.connect_server import ConnectServer, free_port, start_connect_server
from tests.waiting import wait_until
from tests.worker_helpers import (
    SCHEMA,
    Pipeline,
    api_for,
    create_user,
    events,
    hand_plan,
    json_value,
    open_session,
    result_rows,
    statement,
    submit_plan,
    wait_for_status,
    wait_job,
)
from tests.workers import WorkerProcess, purge_queue, start_worker

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("own_workers_only"),
]

SLOW_SQL = "SELECT count(*) AS n FROM range(0, 100000000) AS a CROSS JOIN range(0, 100000) AS b"


# --- the server and the worker --------------------------------------------------------------


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConnectServer]:
    server = start_connect_server(tmp_path_factory.mktemp("connect-server"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def connect_worker(
    connect_server: ConnectServer,
    own_workers_only: None,
    django_db_blocker: Any,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[WorkerProcess]:
    yield from start_worker(
        "connect-worker",
        tmp_path_factory,
        django_db_blocker,
        env={"SPARK_REMOTE": connect_server.url},
    )


@pytest.fixture
def alice_sql(connect_worker: WorkerProcess, alice_sql: Pipeline) -> Pipeline:
    """The shared ``alice_sql``, once the Connect worker runs (it runs her statements)."""
    return alice_sql


@pytest.fixture
def sales(alice_sql: Pipeline, plain_spark: Any) -> dict[str, Any]:
    """An external parquet table ``<catalog>.d.sales`` written by plain PySpark."""
    root = Path(settings.TESSERA_STORAGE_ROOTS[0])
    path = root / f"connect-sales-{uuid.uuid4().hex[:8]}"
    frame = plain_spark.createDataFrame(
        [(i, f"item {i}", f"{i}.25", i % 7) for i in range(1, 501)],
        "id BIGINT, name STRING, price STRING, qty INT",
    ).selectExpr("id", "name", "CAST(price AS DECIMAL(10, 2)) AS price", "qty")
    frame.repartition(3).write.parquet(str(path))
    name = f"k{uuid.uuid4().hex[:8]}"
    catalog = catalog_services.catalog_create(user=alice_sql.user, name=name, default_database="d")
    catalog_services.table_create(
        user=alice_sql.user,
        database=Database.objects.get(catalog=catalog, name="d"),
        name="sales",
        schema=Schema.from_dict(SCHEMA),
        options={"connector": "parquet", "path": str(path)},
    )
    return {"path": str(path), "catalog": name}


# --- an unreachable server (first: no other worker takes the job) ----------------------------


def test_an_unreachable_connect_server_fails_jobs_engine_lost(
    own_workers_only: None, django_db_blocker: Any, tmp_path: Path
) -> None:
    url = f"sc://127.0.0.1:{free_port()}"  # nothing listens there
    purge_queue()
    worker = WorkerProcess(
        "connect-nowhere", tmp_path / "worker.log", django_db_blocker, {"SPARK_REMOTE": url}
    )
    worker.start()
    try:
        user = create_user(f"nowhere{uuid.uuid4().hex[:6]}")
        api = api_for(user)
        session_id = open_session(api)
        started = time.monotonic()
        job = wait_job(api, statement(api, session_id, "SELECT 1 AS one")["id"], timeout=180)
        assert job["status"] == "FAILED", job
        assert job["error"]["code"] == "ENGINE_LOST", job["error"]
        message = job["error"]["message"]
        assert url in message and "cannot be reached" in message, message
        assert "Traceback" not in message
        # It fails within the connect timeout once the worker's parser JVM is up, and keeps
        # failing clearly for the next job (it tries to connect again each time).
        again = wait_job(api, statement(api, session_id, "SELECT 2 AS two")["id"], timeout=60)
        assert again["error"]["code"] == "ENGINE_LOST", again["error"]
        assert time.monotonic() - started < 180
    finally:
        worker.stop()
        purge_queue()


def test_a_server_lost_mid_job_fails_it_engine_lost_and_the_next_job_reconnects(
    own_workers_only: None, django_db_blocker: Any, tmp_path: Path
) -> None:
    server = start_connect_server(tmp_path / "first")
    purge_queue()
    worker = WorkerProcess(
        "connect-lost", tmp_path / "worker.log", django_db_blocker, {"SPARK_REMOTE": server.url}
    )
    replacement: ConnectServer | None = None
    try:
        worker.start()
        user = create_user(f"lost{uuid.uuid4().hex[:6]}")
        api = api_for(user)
        session_id = open_session(api)
        first = wait_job(api, statement(api, session_id, "SELECT 1 AS one")["id"], timeout=180)
        assert first["status"] == "FINISHED", first
        job_id = statement(api, session_id, SLOW_SQL)["id"]
        wait_until(
            lambda: Job.objects.filter(pk=job_id, progress__tasks_total__gt=0).exists(),
            90,
            message="the slow query's Spark tasks",
        )
        server.kill()
        killed = time.monotonic()
        job = wait_job(api, job_id, timeout=60)
        assert job["status"] == "FAILED", job
        assert job["error"]["code"] == "ENGINE_LOST", job["error"]
        assert "broke while this job was running" in job["error"]["message"], job["error"]
        assert time.monotonic() - killed < 30
        # A server back at the same address: the worker connects again for the next job.
        replacement = start_connect_server(tmp_path / "second", port=server.port)
        again = wait_job(api, statement(api, session_id, "SELECT 2 AS two")["id"], timeout=60)
        assert again["status"] == "FINISHED", (
            again["error"],
            (tmp_path / "worker.log").read_text(errors="replace")[-6000:],
        )
        assert result_rows(api, again["id"])[1] == [[2]]
        assert worker.alive()
    finally:
        worker.stop()
        purge_queue()
        server.stop()
        if replacement is not None:
            replacement.stop()


# --- queries --------------------------------------------------------------------------------


def test_select_equals_plain_pyspark(alice_sql: Pipeline, plain_spark: Any) -> None:
    sql = (
        "SELECT id, id * 3 AS triple, CAST(id AS STRING) AS label, "
        "CAST(id / 7 AS DECIMAL(10, 3)) AS seventh FROM range(0, 50) ORDER BY id"
    )
    job = alice_sql.run(sql)
    assert job["status"] == "FINISHED", job
    columns, rows = result_rows(alice_sql.api, job["id"])
    expected = [[json_value(v) for v in row] for row in plain_spark.sql(sql).collect()]
    assert rows == expected and len(rows) == 50
    assert [c["data_type"] for c in columns] == ["BIGINT", "BIGINT", "STRING", "DECIMAL(10, 3)"]
    assert events(job["id"]) == ["created", "running", "finished"]


def test_catalog_table_with_computed_and_metadata_columns(
    alice_sql: Pipeline, sales: dict[str, Any], plain_spark: Any
) -> None:
    catalog = sales["catalog"]
    sql = f"SELECT id, name, price, total, file FROM {catalog}.d.sales WHERE id % 3 = 0 ORDER BY id"
    job = alice_sql.run(sql)
    assert job["status"] == "FINISHED", job
    columns, rows = result_rows(alice_sql.api, job["id"])
    expected_frame = (
        plain_spark.read.parquet(sales["path"])
        .selectExpr("id", "name", "price", "price * qty AS total", "_metadata.file_path AS file")
        .where("id % 3 = 0")
        .orderBy("id")
    )
    assert rows == [[json_value(v) for v in row] for row in expected_frame.collect()]
    assert len(rows) == 166 and rows[0][4].endswith(".parquet") and sales["path"] in rows[0][4]
    assert [c["data_type"] for c in columns][3] == "DECIMAL(21, 2)"
    # Progress comes from the Connect client's progress handler.
    progress = job["progress"]
    assert progress["stages_total"] >= 1 and progress["tasks_total"] >= 1, progress
    # The client cannot see the server's status store: no per-stage metrics on Connect.
    assert progress["stages"] is None, progress


def test_a_temporary_view_shadows_a_permanent_table(
    alice_sql: Pipeline, sales: dict[str, Any]
) -> None:
    share(sales["catalog"])  # the other users read alice's table
    sql = Pipeline("shadow", catalog=sales["catalog"])
    query = "SELECT count(*) AS n, max(name) AS top FROM sales"
    assert sql.rows(query) == [[500, "item 99"]]
    created = sql.rows(
        "CREATE TEMPORARY VIEW sales AS SELECT * FROM VALUES (1, 'temp a'), (2, 'temp b') "
        "AS v(id, name)"
    )
    assert "shadows the permanent table" in created[0][0]
    assert sql.rows(query) == [[2, "temp b"]]
    # Each job has its own server-side session: another session still sees the table.
    other = Pipeline("other", catalog=sales["catalog"])
    assert other.rows(query) == [[500, "item 99"]]
    sql.rows("DROP TEMPORARY VIEW sales")
    assert sql.rows(query) == [[500, "item 99"]]


def test_spark_backed_ddl_types_expressions_and_views(alice_sql: Pipeline) -> None:
    catalog = f"t{uuid.uuid4().hex[:8]}"
    catalog_services.catalog_create(user=alice_sql.user, name=catalog, default_database="d")
    sql = f"CREATE TABLE {catalog}.d.orders (price DECIMAL(10, 2), qty INT, total AS price * qty)"
    job = alice_sql.run(sql)
    assert job["status"] == "FINISHED", job
    resolved = Table.objects.get(database__catalog__name=catalog, name="orders").resolved_schema
    assert (resolved or {})["columns"][2]["data_type"] == "DECIMAL(21, 2)"
    failed = alice_sql.run(sql.replace("orders", "broken").replace("price * qty", "price * nope"))
    assert failed["status"] == "FAILED" and failed["error"]["code"] == "VALIDATION_ERROR", failed
    assert "nope" in failed["error"]["message"]
    view = alice_sql.run(f"CREATE VIEW {catalog}.d.v AS SELECT 1 AS one, 'x' AS letter")
    assert view["status"] == "FINISHED", view
    schema = Table.objects.get(database__catalog__name=catalog, name="v").resolved_schema
    assert [c["data_type"] for c in (schema or {})["columns"]] == [
        "INT NOT NULL",
        "STRING NOT NULL",
    ]


# --- writes ---------------------------------------------------------------------------------


def test_ctas_and_insert_commit(alice_sql: Pipeline, plain_spark: Any) -> None:
    catalog = f"w{uuid.uuid4().hex[:10]}"
    catalog_services.catalog_create(user=alice_sql.user, name=catalog, default_database="d")
    query = "SELECT id, id * 2 AS twice, CAST(id AS STRING) AS label FROM range(0, 3000, 1, 3)"
    job = alice_sql.run(f"CREATE TABLE {catalog}.d.t AS {query}")
    assert job["status"] == "FINISHED", job
    expected_events = [
        "created",
        "stage_table_created",
        "running",
        "data_written",
        "data_committed",
        "finished",
    ]
    wait_until(lambda: events(job["id"]) == expected_events, 15, 0.1, "the CTAS's events")
    table = Table.objects.get(database__catalog__name=catalog, name_key="t")
    assert table.status == "active" and table.staged_by_job is None
    assert sorted(tuple(r) for r in plain_spark.read.parquet(table.location).collect()) == sorted(
        tuple(r) for r in plain_spark.sql(query).collect()
    )
    written = [e.detail for e in Job.objects.get(pk=job["id"]).events.filter(type="data_written")]
    assert written == [{"table": f"`{catalog}`.`d`.`t`", "rows": 3000}]

    insert = alice_sql.run(
        f"INSERT INTO {catalog}.d.t SELECT id, id * 2, 'new' FROM range(3000, 3010)"
    )
    assert insert["status"] == "FINISHED", insert
    assert alice_sql.rows(f"SELECT count(*), count_if(label = 'new') FROM {catalog}.d.t") == [
        [3010, 10]
    ]
    staging = [p for p in Path(table.location).rglob("_tessera_staging_*")]
    assert staging == []

    # A statement set: both inserts written on the server, committed together.
    second = alice_sql.run(f"CREATE TABLE {catalog}.d.u AS SELECT id FROM range(0, 4)")
    assert second["status"] == "FINISHED", second
    both = alice_sql.run(
        "EXECUTE STATEMENT SET BEGIN "
        f"INSERT INTO {catalog}.d.t SELECT id, id * 2, 'set' FROM range(5000, 5005); "
        f"INSERT INTO {catalog}.d.u SELECT id FROM range(10, 13); "
        "END"
    )
    assert both["status"] == "FINISHED", both
    assert result_rows(alice_sql.api, both["id"])[1] == [
        [f"Inserted 5 rows into `{catalog}`.`d`.`t`."],
        [f"Inserted 3 rows into `{catalog}`.`d`.`u`."],
    ]
    wait_until(lambda: events(both["id"]).count("data_committed") == 2, 15, 0.1, "both commits")
    assert alice_sql.rows(f"SELECT count(*) FROM {catalog}.d.t") == [[3015]]
    assert alice_sql.rows(f"SELECT count(*) FROM {catalog}.d.u") == [[7]]


# --- cancel -------------------------------------------------------------------------------


def test_cancel_stops_the_query_on_the_server(
    alice_sql: Pipeline, connect_server: ConnectServer
) -> None:
    job_id = alice_sql.submit(SLOW_SQL)
    wait_until(
        lambda: Job.objects.filter(pk=job_id, progress__tasks_total__gt=0).exists(),
        90,
        message="the slow query's Spark tasks (progress over Connect)",
    )
    seen = len(connect_server.log_text())
    asked = time.monotonic()
    response = alice_sql.api.post(f"{API}/jobs/{job_id}/cancel")
    assert response.status_code in (200, 202), response.content
    job = wait_job(alice_sql.api, job_id, {"CANCELED"}, timeout=30)
    assert time.monotonic() - asked < 10
    assert job["error"]["code"] == "CANCELED"
    assert "its Spark work was stopped" in job["error"]["message"], job["error"]
    assert events(job_id) == ["created", "running", "cancel_requested", "canceled"]
    # The server cancelled the operation's Spark job (not only the client's stream).
    wait_until(
        lambda: (
            "Asked to cancel jobs with tag SparkConnect_OperationTag"
            in connect_server.log_text()[seen:]
        ),
        10,
        message="the server to cancel the Spark job",
    )
    # Its cores are free again: a query on the same two-core server ends at once.
    follow_started = time.monotonic()
    follow = alice_sql.run("SELECT sum(id) AS s FROM range(0, 1000, 1, 2)", timeout=60)
    assert follow["status"] == "FINISHED", follow
    assert time.monotonic() - follow_started < 30


# --- the guard ------------------------------------------------------------------------------


def test_the_guard_judges_spark_parse_over_connect(alice_sql: Pipeline, tmp_path: Path) -> None:
    # A plan the planner never makes: the worker's Spark-parse guard must refuse it.
    job = submit_plan(alice_sql.user, hand_plan("SELECT * FROM text.`/etc/passwd`"))
    done = wait_for_status(job.id, {"FAILED", "FINISHED", "CANCELED"}, 90)
    assert done.status == "FAILED", (done.status, done.error)
    error: dict[str, Any] = dict(done.error or {})
    assert error["code"] == "FORBIDDEN_SQL", error
    assert error["details"]["checked_by"] == "spark_parser", error
    assert "root:x:0:0" not in repr(error) and done.result is None

    # Through the planner: a comment Spark's lexer continues onto the next line.
    marker = tmp_path / f"ran-{uuid.uuid4().hex[:6]}"
    trick = f"-- \\\nSELECT '\nSELECT TRANSFORM(1) USING \"touch {marker}\" -- '"
    job2 = alice_sql.run(trick)
    assert job2["status"] == "FAILED", job2
    assert job2["error"]["code"] == "FORBIDDEN_SQL", job2["error"]
    assert job2["error"]["details"]["checked_by"] == "spark_lexer", job2["error"]
    assert not marker.exists()

    # Variables are never substituted on the Connect session.
    rows = alice_sql.rows("SELECT '${system:user.name}' AS v")
    assert rows == [["${system:user.name}"]]


def test_every_value_is_read_over_connect(alice_sql: Pipeline, plain_spark: Any) -> None:
    """Issue 36: intervals and far dates, served as Spark's text, as on local Spark."""
    sql = (
        "SELECT INTERVAL '1-2' YEAR TO MONTH AS ym, make_interval(1, 2) AS calendar, "
        "DATE'999999-03-18' AS far, DATE'2024-02-29' AS near"
    )
    job = alice_sql.run(sql)
    assert job["status"] == "FINISHED", job
    columns, rows = result_rows(alice_sql.api, job["id"])
    cast = plain_spark.sql(sql).selectExpr(
        *[f"CAST({c} AS STRING)" for c in ("ym", "calendar", "far")]
    )
    assert rows == [[*cast.collect()[0], "2024-02-29"]]
    assert [c.get("served_as") for c in columns] == ["STRING", "STRING", "STRING", None]
