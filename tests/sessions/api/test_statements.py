"""Statements through SQL, end to end: POST /sessions/{id}/statements → planner → job →
command (in the web process) or enqueued for a worker → result rows.

Statements that need Spark stay CREATED here (no worker runs in these tests); where a test
needs one to end, it plays the worker's part through the same functions a worker calls.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from core import jobstate
from core.datatypes import AtomicType, DataType
from core.schema import PhysicalColumn, ResolvedColumn, Schema
from jobs import lifecycle, notify
from jobs.models import Job, Session
from sessions import commands, statements
from tests.conftest import API, assert_error, simple_schema
from tests.jobs.api.test_jobs import RecordingHook
from tests.schemas import RICH_SCHEMA

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, settings, tmp_path):
    """Results in a private directory; no job reaches the shared broker (the tests play the
    worker). Questions for Spark's analyzer (``analyzer`` fixture) still go to the worker."""
    from jobs.dispatch import CHECK_SCHEMA_TASK
    from webapp.celery import app

    settings.RESULTS_DIR = tmp_path / "results"
    send = app.send_task

    def send_checks_only(name: str, *args: Any, **kwargs: Any) -> Any:
        return send(name, *args, **kwargs) if name == CHECK_SCHEMA_TASK else None

    monkeypatch.setattr(app, "send_task", send_checks_only)


class Console:
    """One SQL session of a user, driven through the REST API."""

    def __init__(self, client: Any, **body: Any) -> None:
        self.client = client
        response = client.post(f"{API}/sessions", body)
        assert response.status_code == 201, response.content
        self.id = response.json()["id"]

    def submit(self, sql: str, **extra: Any) -> dict[str, Any]:
        response = self.client.post(f"{API}/sessions/{self.id}/statements", {"sql": sql, **extra})
        assert response.status_code == 201, response.content
        return dict(response.json())

    def run(self, sql: str) -> list[list[Any]]:
        """Run a statement that must finish here; its result rows."""
        job = self.submit(sql)
        assert job["status"] == "FINISHED", (sql, job["error"])
        return self.rows(job)

    def rows(self, job: dict[str, Any]) -> list[list[Any]]:
        response = self.client.get(f"{API}/jobs/{job['id']}/result")
        assert response.status_code == 200, response.content
        return list(response.json()["rows"])

    def message(self, sql: str) -> str:
        rows = self.run(sql)
        assert len(rows) == 1 and len(rows[0]) == 1, rows
        return str(rows[0][0])

    def fails(self, sql: str, code: str, *fragments: str) -> dict[str, Any]:
        job = self.submit(sql)
        assert job["status"] == "FAILED", (sql, job)
        error = job["error"]
        assert error["code"] == code, (sql, error)
        for fragment in fragments:
            assert fragment in error["message"], (fragment, error["message"])
        return dict(error)

    def state(self) -> dict[str, Any]:
        return dict(self.client.get(f"{API}/sessions/{self.id}").json())


def play_worker(job_id: Any, **kwargs: Any) -> Job:
    """What a worker does with a DDL plan that needed Spark: hand it to run_command."""
    job = Job.objects.select_related("user", "session").get(pk=job_id)
    return commands.run_command(job, **kwargs)


@pytest.fixture
def sql(alice_api, make) -> Console:
    make.catalog("demo")
    return Console(alice_api, current_catalog="demo")


# --- USE and session state -------------------------------------------------------------------


def test_use_moves_only_its_own_session(alice_api, make):
    make.catalog("a", default_database="main")
    make.catalog("b")
    make.database("a", "x")
    one, two = Console(alice_api), Console(alice_api)
    assert "`a`.`main`" in one.message("USE CATALOG a")
    assert (one.state()["current_catalog"], one.state()["current_database"]) == ("a", "main")
    one.run("USE x")
    assert one.state()["current_database"] == "x"
    one.run("USE b.default")
    two.run("USE a.x")
    assert (one.state()["current_catalog"], one.state()["current_database"]) == ("b", "default")
    assert (two.state()["current_catalog"], two.state()["current_database"]) == ("a", "x")
    error = one.fails("USE CATALOG nope", "NOT_FOUND", "A catalog with name [nope] does not exist.")
    assert error["message"]
    one.fails("USE nope", "NOT_FOUND", "`b`.`nope`")
    assert one.state()["current_catalog"] == "b"


def test_set_and_reset_change_the_session_properties(sql):
    assert sql.run("SET") == []
    assert sql.run("SET result.max_rows = 10") == [["result.max_rows", "10"]]
    assert sql.run("SET spark.sql.ansi.enabled=false") == [["spark.sql.ansi.enabled", "false"]]
    assert sql.run("SET") == [["result.max_rows", "10"], ["spark.sql.ansi.enabled", "false"]]
    assert sql.run("SET result.max_rows") == [["result.max_rows", "10"]]
    assert sql.run("SET job.timeout_seconds") == [["job.timeout_seconds", "3600"]]
    assert sql.state()["properties"] == {
        "result.max_rows": "10",
        "spark.sql.ansi.enabled": "false",
    }
    assert "was reset" in sql.message("RESET result.max_rows")
    assert "nothing changed" in sql.message("RESET result.max_rows")
    assert sql.state()["properties"] == {"spark.sql.ansi.enabled": "false"}
    sql.message("RESET")
    assert sql.state()["properties"] == {}
    sql.fails("SET spark.sql.warehouse.dir = /tmp", "FORBIDDEN_SQL", "spark.sql.warehouse.dir")
    sql.fails("SET result.max_rows = lots", "VALIDATION_ERROR", "whole number from 1 to")
    assert sql.state()["properties"] == {}


# --- SHOW ------------------------------------------------------------------------------------


def test_show_catalogs_and_databases_with_like(sql, make):
    make.catalog("Sales")
    make.catalog("hr")
    make.database("demo", "eu_west")
    make.database("demo", "EU_east")
    make.database("demo", "us")
    assert sql.run("SHOW CATALOGS") == [["demo"], ["hr"], ["Sales"]]
    assert sql.run("SHOW CATALOGS LIKE 'sa*|HR'") == [["hr"], ["Sales"]]
    assert sql.run("SHOW CATALOGS LIKE 'x*'") == []
    assert sql.run("SHOW DATABASES") == [["default"], ["EU_east"], ["eu_west"], ["us"]]
    assert sql.run("SHOW DATABASES LIKE 'eu*'") == [["EU_east"], ["eu_west"]]
    assert sql.run("SHOW DATABASES IN Sales") == [["default"]]
    job = sql.submit("SHOW DATABASES")
    assert job["kind"] == "show"
    assert job["result"] == {
        "columns": [{"name": "database", "data_type": "STRING"}],
        "row_count": 4,
        "truncated": False,
    }


def test_show_tables_views_functions(sql, make, analyzer):
    make.database("demo", "other")
    make.table("demo", "default", "orders")
    make.table("demo", "default", "Order_Lines")
    make.table("demo", "default", "customers")
    make.table("demo", "other", "elsewhere")
    make.view("demo", "default", "recent_orders")
    make.function("demo", "default", "slugify")
    make.function("demo", "default", "Upper2")
    assert sql.run("SHOW TABLES") == [
        ["default", "customers", False],
        ["default", "Order_Lines", False],
        ["default", "orders", False],
    ]
    assert sql.run("SHOW TABLES LIKE 'order*'") == [
        ["default", "Order_Lines", False],
        ["default", "orders", False],
    ]
    assert sql.run("SHOW TABLES IN other") == [["other", "elsewhere", False]]
    assert sql.run("SHOW TABLES FROM demo.other LIKE 'else*'") == [["other", "elsewhere", False]]
    assert sql.run("SHOW VIEWS") == [["default", "recent_orders", False]]
    views = sql.submit("SHOW VIEWS")
    assert [c["name"] for c in views["result"]["columns"]] == [
        "database",
        "viewName",
        "isTemporary",
    ]
    assert sql.run("SHOW FUNCTIONS") == [["slugify"], ["Upper2"]]
    assert sql.run("SHOW FUNCTIONS LIKE 'up*'") == [["Upper2"]]
    sql.fails("SHOW TABLES IN nope", "NOT_FOUND", "nope")


# --- DESCRIBE and SHOW CREATE TABLE ----------------------------------------------------------


def test_describe_shows_columns_watermark_and_primary_key(sql, make, analyzer):
    make.table("demo", "default", "t", RICH_SCHEMA, partition_by=["qty"])
    job = sql.submit("DESCRIBE t")
    assert job["kind"] == "describe"
    assert [c["name"] for c in job["result"]["columns"]] == [
        "col_name",
        "data_type",
        "comment",
        "kind",
        "expression",
        "metadata",
    ]
    assert sql.rows(job) == [
        ["id", "BIGINT NOT NULL", None, "physical", None, None],
        ["price", "DECIMAL(10, 2)", None, "physical", None, None],
        ["qty", "INT", None, "physical", None, None],
        # Typed by Spark's analyzer before the table was stored.
        ["total", "DECIMAL(21, 2)", None, "computed", "price * qty", None],
        ["file", "STRING", None, "metadata", None, "file_path VIRTUAL"],
        ["ts", "TIMESTAMP", None, "physical", None, None],
        ["# Partition Information", None, None, None, None, None],
        ["qty", "INT", None, None, None, None],
        ["# Watermark", None, None, None, None, None],
        ["ts", "TIMESTAMP", None, "watermark", "ts - INTERVAL 5 SECONDS", None],
        ["# Constraints", None, None, None, None, None],
        ["pk_t", "PRIMARY KEY (`id`) NOT ENFORCED", None, "primary_key", None, None],
    ]
    sql.fails("DESCRIBE nope", "NOT_FOUND", "nope")


def _table(client, name: str) -> dict[str, Any]:
    response = client.get(f"{API}/catalogs/demo/databases/default/tables/{name}")
    assert response.status_code == 200, response.content
    return dict(response.json())


SAME_KEYS = ("schema", "options", "partition_by", "comment", "managed")


def test_show_create_table_round_trips_through_the_planner(sql, make, alice_api, storage):
    schema = {
        "columns": [
            {"name": "id", "kind": "physical", "data_type": "BIGINT"},
            {"name": "Name", "kind": "physical", "data_type": "STRING", "comment": "it's \\ ok"},
            {"name": "odd `col`", "kind": "physical", "data_type": "ARRAY<STRUCT<a: INT>>"},
            {
                "name": "file",
                "kind": "metadata",
                "data_type": "STRING",
                "metadata_key": "file_path",
                "virtual": True,
            },
            {
                "name": "size",
                "kind": "metadata",
                "data_type": "BIGINT",
                "metadata_key": "file_size",
            },
        ],
        "watermarks": [],
        "primary_key": {"name": "pk_orders", "columns": ["id"]},
    }
    external = storage.external / "orders"
    make.table(
        "demo",
        "default",
        "orders",
        schema,
        options={"connector": "csv", "path": str(external), "header": "true"},
        partition_by=["Name"],
        comment="Orders, 'quoted'",
    )
    make.table("demo", "default", "managed", simple_schema("a INT", "b STRING"))
    for name in ("orders", "managed"):
        before = _table(alice_api, name)
        job = sql.submit(f"SHOW CREATE TABLE {name}")
        assert [c["name"] for c in job["result"]["columns"]] == ["createtab_stmt"]
        (ddl,) = sql.rows(job)[0]
        assert ddl.startswith(f"CREATE TABLE `demo`.`default`.`{name}` (")
        assert "dropped" in sql.message(f"DROP TABLE {name}").lower()
        assert sql.message(ddl).startswith("Created table")
        after = _table(alice_api, name)
        for key in SAME_KEYS:
            assert after[key] == before[key], (name, key, before[key], after[key])


def test_show_create_table_of_a_table_with_expressions_plans_back_to_its_schema(
    sql, make, analyzer
):
    make.table("demo", "default", "rich", RICH_SCHEMA)
    (ddl,) = sql.run("SHOW CREATE TABLE rich")[0]
    session = Session.objects.get(pk=sql.id)
    plan = statements.plan_sql(session, ddl.replace("`rich`", "`rich2`"))
    assert plan["action"] == "create_table" and plan["needs_spark"] is True
    assert Schema.from_dict(plan["args"]["schema"]) == Schema.from_dict(RICH_SCHEMA)


def test_show_create_table_of_a_view(sql, make, analyzer):
    make.view("demo", "default", "v", query="SELECT 1 AS one", comment="a view")
    (ddl,) = sql.run("SHOW CREATE TABLE v")[0]
    assert ddl == "CREATE VIEW `demo`.`default`.`v`\nCOMMENT 'a view'\nAS SELECT 1 AS one"


# --- CREATE and DROP -------------------------------------------------------------------------


def test_create_and_drop_catalogs_and_databases(sql, alice_api):
    assert "Created catalog [shop]" in sql.message("CREATE CATALOG shop COMMENT 'the shop'")
    assert alice_api.get(f"{API}/catalogs/shop").json()["comment"] == "the shop"
    assert "already exists; nothing was created" in sql.message("CREATE CATALOG IF NOT EXISTS SHOP")
    sql.fails("CREATE CATALOG shop", "ALREADY_EXISTS", "[shop]")
    assert "Created database `shop`.`eu`" in sql.message("CREATE DATABASE shop.eu")
    assert "nothing was created" in sql.message("CREATE DATABASE IF NOT EXISTS shop.EU")
    sql.fails("CREATE DATABASE shop.eu", "ALREADY_EXISTS")
    sql.fails("CREATE DATABASE nope.eu", "NOT_FOUND", "[nope]")
    sql.fails("DROP CATALOG shop", "NOT_EMPTY", "cascade")
    assert "Dropped database `shop`.`eu`" in sql.message("DROP DATABASE shop.eu")
    assert "does not exist; nothing was dropped" in sql.message("DROP DATABASE IF EXISTS shop.eu")
    sql.fails("DROP DATABASE shop.eu", "NOT_FOUND", "`shop`.`eu`")
    assert "Dropped catalog [shop]" in sql.message("DROP CATALOG shop")
    assert "nothing was dropped" in sql.message("DROP CATALOG IF EXISTS shop")
    sql.fails("DROP CATALOG shop", "NOT_FOUND", "[shop]")
    assert alice_api.get(f"{API}/catalogs/shop").status_code == 404


def test_create_and_drop_tables(sql, alice_api, storage):
    created = sql.submit("CREATE TABLE t (id BIGINT NOT NULL, name STRING) USING json")
    assert created["status"] == "FINISHED" and created["kind"] == "ddl"
    assert created["target"] == ["demo", "default", "t"]
    table = _table(alice_api, "t")
    assert table["options"] == {"format": "json"} and table["created_by"] == "alice"
    assert [c["data_type"] for c in table["schema"]["columns"]] == ["BIGINT NOT NULL", "STRING"]
    assert "nothing was created" in sql.message("CREATE TABLE IF NOT EXISTS t (x INT)")
    sql.fails("CREATE TABLE t (x INT)", "ALREADY_EXISTS", "`demo`.`default`.`t`")
    sql.fails("CREATE TABLE bad (x INT, X STRING)", "VALIDATION_ERROR", "declared twice")
    sql.fails("CREATE TABLE ext (x INT) USING csv LOCATION '/etc'", "FORBIDDEN_SQL", "/etc")
    where = storage.external / "ext"
    assert "Created table" in sql.message(f"CREATE TABLE ext (x INT) USING csv LOCATION '{where}'")
    assert _table(alice_api, "ext")["options"] == {"connector": "csv", "path": str(where)}
    assert "Dropped table `demo`.`default`.`t`" in sql.message("DROP TABLE t")
    assert "nothing was dropped" in sql.message("DROP TABLE IF EXISTS t")
    sql.fails("DROP TABLE t", "NOT_FOUND", "`demo`.`default`.`t`")


def test_drop_table_refuses_a_view_and_drop_view_a_table(sql, make, analyzer):
    make.view("demo", "default", "v")
    make.table("demo", "default", "t")
    sql.fails("DROP TABLE v", "VALIDATION_ERROR", "is a view; use DROP VIEW")
    sql.fails("DROP VIEW t", "VALIDATION_ERROR", "is a table; use DROP TABLE")
    assert "Dropped view" in sql.message("DROP VIEW v")


def test_create_and_drop_a_sql_function_with_a_worker(sql, alice_api):
    job = sql.submit("CREATE FUNCTION plus1(x INT) RETURNS INT RETURN x + 1")
    assert job["status"] == "CREATED"  # needs Spark: it waits for a worker
    ended = play_worker(job["id"])
    assert ended.status == "FINISHED", ended.error
    function = alice_api.get(f"{API}/catalogs/demo/databases/default/functions/plus1").json()
    assert function["language"] == "sql"
    assert function["implementation"] == "x + 1"
    assert function["parameters"] == [{"name": "x", "data_type": "INT"}]
    assert function["return_type"] == "INT"
    again = sql.submit("CREATE FUNCTION IF NOT EXISTS plus1(x INT) RETURNS INT RETURN x + 2")
    assert play_worker(again["id"]).status == "FINISHED"
    assert sql.rows({"id": again["id"]}) == [
        ["Function `demo`.`default`.`plus1` already exists; nothing was created."]
    ]
    assert sql.run("SHOW FUNCTIONS") == [["plus1"]]
    assert "Dropped function `demo`.`default`.`plus1`" in sql.message("DROP FUNCTION plus1")
    assert "nothing was dropped" in sql.message("DROP FUNCTION IF EXISTS plus1")
    sql.fails("DROP FUNCTION plus1", "NOT_FOUND", "plus1")


def test_a_worker_types_computed_columns_through_run_command(sql, alice_api):
    class Typer:
        def type_expressions(
            self, columns: Any, expressions: dict[str, str]
        ) -> dict[str, DataType]:
            assert all(isinstance(c, ResolvedColumn) for c in columns)
            return {name: AtomicType("BIGINT") for name in expressions}

    job = sql.submit("CREATE TABLE t (a INT, b AS a * 2) USING parquet")
    assert job["status"] == "CREATED"
    assert play_worker(job["id"], typer=Typer()).status == "FINISHED"
    resolved = _table(alice_api, "t")["resolved_schema"]
    assert resolved["columns"][1]["data_type"] == "BIGINT"
    assert resolved["expressions_resolved"] is True


def test_a_worker_derives_a_view_schema_through_run_command(sql, alice_api, make):
    make.table("demo", "default", "t", simple_schema("id BIGINT", "name STRING"))
    seen: list[str] = []

    def derive(spark_sql: str) -> Schema:
        seen.append(spark_sql)
        return Schema((PhysicalColumn("id", AtomicType("BIGINT")),))

    job = sql.submit("CREATE VIEW v COMMENT 'ids' AS SELECT id FROM t")
    assert job["status"] == "CREATED"
    assert play_worker(job["id"], derive_view_schema=derive).status == "FINISHED"
    assert seen and "__tessera_r1" in seen[0]
    view = alice_api.get(f"{API}/catalogs/demo/databases/default/views/v").json()
    assert view["query"] == "SELECT id FROM t"
    assert "`demo`.`default`.`t`" in view["expanded_query"]
    assert view["comment"] == "ids"
    assert [c["name"] for c in view["resolved_schema"]["columns"]] == ["id"]
    replaced = sql.submit("CREATE OR REPLACE VIEW v AS SELECT name FROM t")

    def derive_name(spark_sql: str) -> Schema:
        return Schema((PhysicalColumn("name", AtomicType("STRING")),))

    assert play_worker(replaced["id"], derive_view_schema=derive_name).status == "FINISHED"
    assert sql.rows(replaced) == [["Replaced view `demo`.`default`.`v`."]]
    clash = sql.submit("CREATE VIEW t AS SELECT 1 AS one")
    failed = play_worker(clash["id"])
    assert failed.status == "FAILED" and failed.error is not None
    assert failed.error["code"] == "ALREADY_EXISTS"


# --- errors become failed jobs ---------------------------------------------------------------


def test_planner_errors_are_failed_jobs_in_the_history(sql, alice_api):
    parse = sql.fails("SELECT 1,\n  FROM WHERE", "PARSE_ERROR")
    assert set(parse["details"]) >= {"line", "column"}
    assert parse["details"]["line"] == 2
    sql.fails("SELECT * FROM parquet.`/etc`", "FORBIDDEN_SQL", "/etc")
    sql.fails("SELECT reflect('java.lang.System', 'exit', 0)", "FORBIDDEN_SQL", "reflect")
    sql.fails("SELECT * FROM missing", "NOT_FOUND", "`demo`.`default`.`missing`")
    job = sql.submit("SELECT * FROM missing")
    assert job["kind"] == "query" and job["started_at"] is None and job["finished_at"]
    events = alice_api.get(f"{API}/jobs/{job['id']}/events").json()["items"]
    assert [e["type"] for e in events] == ["created", "failed"]
    assert events[1]["detail"]["error"]["code"] == "NOT_FOUND"
    history = alice_api.get(f"{API}/jobs?status=FAILED").json()["items"]
    assert len(history) == 5
    assert_error(alice_api.get(f"{API}/jobs/{job['id']}/result"), 404, "NOT_FOUND", "FAILED")


def test_bad_statement_bodies_are_400(sql, alice_api):
    url = f"{API}/sessions/{sql.id}/statements"
    assert_error(alice_api.post(url, {"sql": "   "}), 400, "VALIDATION_ERROR", "sql")
    assert_error(alice_api.post(url, {}), 400, "VALIDATION_ERROR", "sql")
    assert_error(alice_api.post(url, {"sql": "SET", "wait": 31}), 400, "VALIDATION_ERROR")
    assert_error(alice_api.post(url, {"sql": "SET", "wait": -1}), 400, "VALIDATION_ERROR")
    assert Job.objects.count() == 0


# --- Spark statements, wait, hooks -----------------------------------------------------------


def test_a_query_is_planned_and_left_for_a_worker(sql, make):
    make.table("demo", "default", "t", simple_schema("id BIGINT"))
    job = sql.submit("SELECT id FROM t WHERE id > 1")
    assert (job["status"], job["kind"]) == ("CREATED", "query")
    row = Job.objects.get(pk=job["id"])
    assert row.plan["needs_spark"] is True
    assert row.plan["relations"][0]["identifier"] == ["demo", "default", "t"]
    assert row.timeout_seconds == 3600


class FakeClock:
    """``time.monotonic`` and ``time.sleep`` on a clock that moves only when slept on."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        self.slept += seconds


def test_wait_holds_the_answer_until_the_time_passes(sql, monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(time, "monotonic", clock.monotonic)

    def wait(watch: notify.Watch, timeout: float) -> bool:  # nobody announces: time passes
        clock.sleep(timeout)
        return False

    monkeypatch.setattr(notify.Watch, "wait", wait)
    job = sql.submit("SELECT 1", wait=0.3)
    assert clock.slept == pytest.approx(0.3)  # held until the time passed, no longer
    assert job["status"] == "CREATED"
    clock.slept = 0.0
    assert sql.submit("SHOW CATALOGS", wait=5)["status"] == "FINISHED"
    assert clock.slept == 0.0  # a terminal job answers at once


def test_hooks_run_once_per_transition_of_a_statement(sql):
    hook = RecordingHook()
    lifecycle.register_hook(hook)
    try:
        job = sql.submit("SHOW CATALOGS")
        failed = sql.submit("SELEC 1")
    finally:
        lifecycle.unregister_hook(hook)
    assert [(m, i) for m, i, _ in hook.calls] == [
        ("on_created", job["id"]),
        ("on_running", job["id"]),
        ("on_finished", job["id"]),
        ("on_created", failed["id"]),
        ("on_failed", failed["id"]),
    ]


# --- scripts ---------------------------------------------------------------------------------


def submit_script(console: Console, text: str, **extra: Any) -> list[dict[str, Any]]:
    response = console.client.post(
        f"{API}/sessions/{console.id}/statements", {"sql": text, "script": True, **extra}
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) == {"jobs"}
    return list(body["jobs"])


def test_a_script_runs_in_order_each_statement_in_the_state_the_last_left(sql, alice_api):
    jobs = submit_script(
        sql,
        "CREATE DATABASE shop;\nUSE shop;\n-- a comment\nCREATE TABLE t (id INT);\nSHOW TABLES",
    )
    assert [j["status"] for j in jobs] == ["FINISHED"] * 4
    assert [j["script"]["index"] for j in jobs] == [0, 1, 2, 3]
    assert len({j["script"]["id"] for j in jobs}) == 1
    assert jobs[2]["sql"].endswith("CREATE TABLE t (id INT)")
    assert sql.rows(jobs[3]) == [["shop", "t", False]]
    assert sql.state()["current_database"] == "shop"
    single = sql.submit("SHOW TABLES")
    assert "script" not in single


def test_each_statement_of_a_script_says_where_it_starts_in_the_text(sql, alice_api):
    # Offsets count code points (an emoji is one), past strings and comments holding ';'.
    text = "  CREATE DATABASE `😀;a`;\n/* x; */ ;\n-- c;\nCREATE DATABASE `b;` ; SHOW DATABASES"
    jobs = submit_script(sql, text)
    assert [j["status"] for j in jobs] == ["FINISHED"] * 3
    offsets = [j["script"]["offset"] for j in jobs]
    assert [
        text[offset : offset + len(j["sql"])] for offset, j in zip(offsets, jobs, strict=True)
    ] == [j["sql"] for j in jobs]
    assert offsets == [
        2,
        text.index("/* x; */ ;") + len("/* x; */ ;") + 1,
        text.index("SHOW DATABASES"),
    ]


def test_a_script_stops_at_the_first_failure(sql, alice_api):
    jobs = submit_script(sql, "CREATE DATABASE one; USE nope; CREATE DATABASE two; SET")
    assert [j["status"] for j in jobs] == ["FINISHED", "FAILED", "CANCELED", "CANCELED"]
    assert jobs[1]["error"]["code"] == "NOT_FOUND"
    for job in jobs[2:]:
        assert job["error"]["code"] == "CANCELED"
        assert "because statement 2 failed" in job["error"]["message"]
        assert job["error"]["details"]["stopped_by"] == jobs[1]["id"]
    assert alice_api.get(f"{API}/catalogs/demo/databases/two").status_code == 404
    events = alice_api.get(f"{API}/jobs/{jobs[2]['id']}/events").json()["items"]
    assert [e["type"] for e in events] == ["queued", "canceled"]


def test_a_script_waits_for_its_spark_statement_and_goes_on_when_it_finished(sql, alice_api):
    jobs = submit_script(sql, "CREATE DATABASE one; SELECT 1; CREATE DATABASE two")
    assert [j["status"] for j in jobs] == ["FINISHED", "CREATED", "CREATED"]
    waiting = Job.objects.get(pk=jobs[2]["id"])
    assert waiting.plan == {}  # planned only when its turn comes
    assert Job.objects.get(pk=jobs[1]["id"]).plan["needs_spark"] is True
    # The worker runs the query and ends it; the script's hook starts the next statement.
    lifecycle.transition(jobs[1]["id"], jobstate.CREATED, jobstate.RUNNING, worker="w")
    lifecycle.transition(jobs[1]["id"], jobstate.RUNNING, jobstate.FINISHED, result=None)
    assert Job.objects.get(pk=jobs[2]["id"]).status == "FINISHED"
    assert alice_api.get(f"{API}/catalogs/demo/databases/two").status_code == 200
    events = alice_api.get(f"{API}/jobs/{jobs[2]['id']}/events").json()["items"]
    assert [e["type"] for e in events] == ["queued", "created", "running", "finished"]


def test_canceling_a_scripts_statement_cancels_the_rest(sql, alice_api):
    jobs = submit_script(sql, "SELECT 1; SHOW CATALOGS; SHOW DATABASES")
    assert [j["status"] for j in jobs] == ["CREATED"] * 3
    canceled = alice_api.post(f"{API}/jobs/{jobs[0]['id']}/cancel").json()
    assert canceled["status"] == "CANCELED"
    after = [alice_api.get(f"{API}/jobs/{j['id']}").json() for j in jobs]
    assert [j["status"] for j in after] == ["CANCELED"] * 3
    assert "because statement 1 was canceled" in after[1]["error"]["message"]


def test_a_script_that_cannot_be_split_is_one_failed_job(sql):
    jobs = submit_script(sql, "SELECT 'unterminated; SHOW CATALOGS")
    assert len(jobs) == 1
    assert jobs[0]["status"] == "FAILED" and jobs[0]["error"]["code"] == "PARSE_ERROR"
    assert_error(
        sql.client.post(f"{API}/sessions/{sql.id}/statements", {"sql": ";;", "script": True}),
        400,
        "VALIDATION_ERROR",
        "no statement",
    )


def test_a_waited_statement_can_carry_its_first_result_page(sql, alice_api, make):
    make.catalog("second")
    catalogs = sql.run("SHOW CATALOGS")
    assert len(catalogs) >= 2, catalogs
    job = sql.submit("SHOW CATALOGS", wait=5, page_size=1)
    assert job["status"] == "FINISHED"
    page = job["result_page"]
    assert [c["name"] for c in page["columns"]] == [c["name"] for c in job["result"]["columns"]]
    assert page["rows"] == catalogs[:1]
    # The same page GET /result gives, and its token leads on from there.
    following = alice_api.get(
        f"{API}/jobs/{job['id']}/result?page_size=10&page_token={page['next_page_token']}"
    ).json()
    assert following["rows"] == catalogs[1:]
    # Not asked for, not sent; not for a job that failed or has not finished.
    assert "result_page" not in sql.submit("SHOW CATALOGS", wait=5)
    assert "result_page" not in sql.submit("SELEC 1", wait=5, page_size=10)
    created = sql.submit("SELECT 1", wait=0, page_size=10)  # no worker here: still CREATED
    assert created["status"] == "CREATED" and "result_page" not in created


@pytest.mark.parametrize("page_size", [0, -1, 1001, "ten", True, 2.5])
def test_a_page_size_out_of_range_is_a_400(sql, alice_api, page_size):
    response = alice_api.post(
        f"{API}/sessions/{sql.id}/statements",
        {"sql": "SHOW CATALOGS", "wait": 1, "page_size": page_size},
    )
    assert_error(response, 400, "VALIDATION_ERROR")
