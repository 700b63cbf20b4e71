"""Temporary objects (FLIP-64) without a worker: SQL through the statements API, the
session's temporary-object endpoints and ``resolve``, isolation and expiry.

Statements that need Spark (temporary views and functions) stay CREATED here; where a test
needs one to end, it plays the worker's part through ``run_command`` as a worker does.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from core.datatypes import AtomicType
from core.schema import PhysicalColumn, Schema
from jobs import maintenance
from jobs.models import Session, TemporaryObject
from tests.conftest import API, assert_error
from tests.sessions.api.test_statements import Console, play_worker

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


@pytest.fixture
def sql(alice_api, make) -> Console:
    make.catalog("demo")
    return Console(alice_api, current_catalog="demo")


def temp_table(storage: Any, path: str, columns: str = "id BIGINT", extra: str = "") -> str:
    """``CREATE TEMPORARY TABLE`` of ``path`` over a directory under the storage root."""
    where = storage.external / f"data-{abs(hash(path))}"
    return (
        f"CREATE TEMPORARY TABLE {extra}{path} ({columns}) USING parquet "
        f"OPTIONS ('path' = '{where}')"
    )


def one_column(spark_sql: str) -> Schema:
    """What a worker's view-schema derivation would answer, for views of ``SELECT 1 AS one``."""
    return Schema((PhysicalColumn("one", AtomicType("INT")),))


def finish(console: Console, statement: str, **worker: Any) -> list[list[Any]]:
    """Submit a statement that needs Spark and play the worker; its rows."""
    job = console.submit(statement)
    assert job["status"] == "CREATED", (statement, job["error"])
    ended = play_worker(job["id"], **worker)
    assert ended.status == "FINISHED", (statement, ended.error)
    return console.rows({"id": job["id"]})


def resolve(client: Any, session: str, path: str, kind: str = "table") -> Any:
    return client.get(f"{API}/sessions/{session}/resolve?path={quote(path, safe='')}&kind={kind}")


def resolved(client: Any, session: str, path: str, kind: str = "table") -> dict[str, Any]:
    response = resolve(client, session, path, kind)
    assert response.status_code == 200, response.content
    return dict(response.json())


def listing(client: Any, session: str, kinds: str, query: str = "") -> dict[str, Any]:
    response = client.get(f"{API}/sessions/{session}/temporary/{kinds}{query}")
    assert response.status_code == 200, response.content
    return dict(response.json())


# --- CREATE TEMPORARY TABLE ------------------------------------------------------------------


def test_create_temporary_table_twice_with_and_without_if_not_exists(sql, storage):
    job = sql.submit(temp_table(storage, "t"))
    assert job["status"] == "FINISHED", job["error"]  # no expressions: no worker needed
    assert job["kind"] == "ddl" and job["target"] == ["demo", "default", "t"]
    assert sql.rows(job) == [["Created temporary table `demo`.`default`.`t`."]]
    sql.fails(
        temp_table(storage, "T"),
        "ALREADY_EXISTS",
        "Temporary table `demo`.`default`.`t` already exists.",
    )
    assert sql.message(temp_table(storage, "t", extra="IF NOT EXISTS ")) == (
        "Temporary table `demo`.`default`.`t` already exists; nothing was created."
    )
    assert TemporaryObject.objects.count() == 1
    row = TemporaryObject.objects.get()
    assert (row.kind, row.catalog, row.database, row.name) == ("table", "demo", "default", "t")
    assert row.definition["options"]["connector"] == "parquet"
    assert row.definition["options"]["path"].startswith(str(storage.external))
    assert row.definition["resolved_schema"]["columns"][0]["data_type"] == "BIGINT"
    assert str(row.created_by_job_id) == job["id"]
    # Tessera owns no temporary table's data: a path is required, a non-file source refused.
    sql.fails("CREATE TEMPORARY TABLE u (id INT) USING parquet", "VALIDATION_ERROR", "path")
    sql.fails("CREATE TEMPORARY TABLE u (id INT) USING jdbc", "FORBIDDEN_SQL")
    assert not storage.warehouse.exists() or not any(storage.warehouse.rglob("*"))


def test_create_temporary_table_as_select_is_refused(sql):
    sql.fails(
        "CREATE TEMPORARY TABLE t AS SELECT 1 AS one",
        "UNSUPPORTED_STATEMENT",
        "CREATE TEMPORARY TABLE … AS SELECT is not supported",
        "Use CREATE TEMPORARY VIEW … AS SELECT instead.",
    )


def test_temporary_objects_need_no_catalog_or_database(sql, storage, alice_api):
    assert sql.message(temp_table(storage, "nowhere.nothing.t")) == (
        "Created temporary table `nowhere`.`nothing`.`t`."
    )
    assert finish(
        sql,
        "CREATE TEMPORARY VIEW nowhere.nothing.v AS SELECT 1 AS one",
        derive_view_schema=one_column,
    ) == [["Created temporary view `nowhere`.`nothing`.`v`."]]
    assert sql.run("SHOW TEMPORARY TABLES") == [["nowhere", "nothing", "t", False]]
    assert sql.run("SHOW TEMPORARY VIEWS") == [["nowhere", "nothing", "v", False]]
    found = resolved(alice_api, sql.id, "nowhere.nothing.v")
    assert found["identifier"] == ["nowhere", "nothing", "v"] and found["temporary"] is True
    view = found["object"]
    assert view["kind"] == "view" and view["query"] == "SELECT 1 AS one"
    assert view["resolved_schema"]["columns"][0]["name"] == "one"
    assert finish(
        sql,
        "CREATE OR REPLACE TEMPORARY VIEW nowhere.nothing.v AS SELECT 2 AS one",
        derive_view_schema=one_column,
    ) == [["Replaced temporary view `nowhere`.`nothing`.`v`."]]
    assert finish(
        sql, "CREATE TEMPORARY VIEW IF NOT EXISTS nowhere.nothing.v AS SELECT 3 AS one"
    ) == [["Temporary view `nowhere`.`nothing`.`v` already exists; nothing was created."]]
    assert resolved(alice_api, sql.id, "nowhere.nothing.v")["object"]["query"] == "SELECT 2 AS one"
    assert TemporaryObject.objects.filter(kind="view").count() == 1
    # Permanent objects there still need the catalog.
    sql.fails("CREATE TABLE nowhere.nothing.p (id INT)", "NOT_FOUND", "nowhere")


# --- shadowing, DROP TEMPORARY vs DROP -------------------------------------------------------


def test_a_temporary_table_shadows_the_permanent_one_until_dropped(sql, storage, alice_api, make):
    make.table("demo", "default", "orders")
    before = resolved(alice_api, sql.id, "orders")
    assert before["identifier"] == ["demo", "default", "orders"]
    assert before["temporary"] is False
    assert before["object"]["managed"] is True and before["object"]["temporary"] is False

    assert sql.message(temp_table(storage, "orders", "id BIGINT, note STRING")) == (
        "Created temporary table `demo`.`default`.`orders`; it shadows the permanent table of "
        "that name."
    )
    during = resolved(alice_api, sql.id, "demo.default.ORDERS")
    assert during["identifier"] == ["demo", "default", "orders"] and during["temporary"] is True
    table = during["object"]
    assert table["kind"] == "table" and table["temporary"] is True and table["managed"] is False
    assert [c["name"] for c in table["schema"]["columns"]] == ["id", "note"]
    assert table["options"]["path"].startswith(str(storage.external))

    # DROP TABLE drops only permanent tables, and not while a temporary one shadows it.
    error = sql.fails("DROP TABLE orders", "TEMPORARY_OBJECT_EXISTS")
    assert error["message"] == (
        "Temporary table with identifier '`demo`.`default`.`orders`' exists. Drop it first "
        "before removing the permanent table."
    )
    assert sql.run("SHOW TABLES") == [["default", "orders", False]]
    assert sql.run("SHOW TEMPORARY TABLES") == [["demo", "default", "orders", True]]

    assert sql.run("DROP TEMPORARY TABLE orders") == [
        ["Dropped temporary table `demo`.`default`.`orders`.", True]
    ]
    after = resolved(alice_api, sql.id, "orders")
    assert after["temporary"] is False and after["object"]["managed"] is True
    assert "Dropped table `demo`.`default`.`orders`" in sql.message("DROP TABLE orders")


def test_drop_temporary_considers_only_temporary_objects(sql, storage, make, analyzer):
    make.table("demo", "default", "t")
    make.view("demo", "default", "v")
    sql.fails(
        "DROP TEMPORARY TABLE t",
        "NOT_FOUND",
        "Temporary table `demo`.`default`.`t` does not exist (a permanent table has that name; "
        "DROP TABLE drops it).",
    )
    sql.fails(
        "DROP TEMPORARY VIEW v",
        "NOT_FOUND",
        "(a permanent view has that name; DROP VIEW drops it).",
    )
    sql.fails("DROP TEMPORARY VIEW nope", "NOT_FOUND", "Temporary view `demo`.`default`.`nope`")
    assert sql.run("DROP TEMPORARY TABLE IF EXISTS t") == [
        ["Temporary table `demo`.`default`.`t` does not exist; nothing was dropped.", False]
    ]
    assert sql.run("SHOW TABLES") == [["default", "t", False]]  # the permanent one stays
    # A temporary table is not dropped by DROP TEMPORARY VIEW, nor the other way round.
    sql.run(temp_table(storage, "x"))
    sql.fails("DROP TEMPORARY VIEW x", "VALIDATION_ERROR", "is a temporary table")
    assert sql.run("DROP TEMPORARY TABLE x")[0][1] is True
    assert sql.run("DROP TEMPORARY TABLE IF EXISTS x")[0][1] is False


def test_temporary_functions_block_permanent_create_and_drop(sql, make):
    make.function("demo", "default", "f", implementation="tessera_udfs.text.slugify")
    assert finish(sql, "CREATE TEMPORARY FUNCTION f AS 'tessera_udfs.text.word_count'") == [
        [
            "Created temporary function `demo`.`default`.`f`; it shadows the permanent function of "
            "that name."
        ]
    ]
    error = sql.fails("DROP FUNCTION f", "TEMPORARY_OBJECT_EXISTS")
    assert error["message"] == (
        "Temporary function with identifier '`demo`.`default`.`f`' exists. Drop it first before "
        "removing the permanent function."
    )
    sql.fails(
        "CREATE FUNCTION f AS 'tessera_udfs.text.slugify'",
        "TEMPORARY_OBJECT_EXISTS",
        "Drop it first before creating the permanent function.",
    )
    found = resolved(sql.client, sql.id, "f", kind="function")
    assert found["temporary"] is True
    assert found["object"]["implementation"] == "tessera_udfs.text.word_count"
    assert sql.run("DROP TEMPORARY FUNCTION f")[0][1] is True
    assert resolved(sql.client, sql.id, "f", kind="function")["temporary"] is False
    assert "Dropped function" in sql.message("DROP FUNCTION f")


def test_function_resolution_order_through_resolve(sql, make):
    make.function("demo", "default", "upper", implementation="tessera_udfs.text.slugify")
    make.function("demo", "default", "g", implementation="tessera_udfs.text.slugify")
    # 1-part: a built-in wins over catalog functions, temporary or not.
    assert resolved(sql.client, sql.id, "upper", kind="function")["object"]["builtin"] is True
    finish(sql, "CREATE TEMPORARY FUNCTION upper AS 'tessera_udfs.text.word_count'")
    assert resolved(sql.client, sql.id, "upper", kind="function")["object"]["builtin"] is True
    # ... but a qualified name reaches the temporary catalog function, then the catalog one.
    qualified = resolved(sql.client, sql.id, "demo.default.upper", kind="function")
    assert qualified["temporary"] is True
    assert qualified["identifier"] == ["demo", "default", "upper"]
    # A temporary system function shadows the built-in.
    assert finish(sql, "CREATE TEMPORARY SYSTEM FUNCTION Upper AS 'tessera_udfs.text.slugify'") == [
        ["Created temporary system function `Upper`; it shadows the built-in function `Upper`."]
    ]
    system = resolved(sql.client, sql.id, "UPPER", kind="function")
    assert system["identifier"] == ["Upper"] and system["temporary"] is True
    assert system["object"]["system"] is True and system["object"]["catalog"] is None
    # 1-part names that are no built-in: temporary catalog function, then catalog function.
    assert resolved(sql.client, sql.id, "g", kind="function")["temporary"] is False
    finish(sql, "CREATE TEMPORARY FUNCTION g(x INT) RETURNS INT RETURN x + 1")
    temporary_g = resolved(sql.client, sql.id, "g", kind="function")
    assert temporary_g["temporary"] is True
    assert temporary_g["object"]["language"] == "sql"
    assert temporary_g["object"]["parameters"] == [{"name": "x", "data_type": "INT"}]
    sql.fails(
        "CREATE TEMPORARY SYSTEM FUNCTION demo.default.h AS 'tessera_udfs.text.slugify'",
        "VALIDATION_ERROR",
        "one-part name",
    )
    assert sql.run("SHOW TEMPORARY FUNCTIONS") == [
        [None, None, "Upper", True, True],
        ["demo", "default", "g", False, True],
        ["demo", "default", "upper", False, True],
    ]
    assert sql.run("DROP TEMPORARY SYSTEM FUNCTION upper") == [
        ["Dropped temporary system function `Upper`.", True]
    ]
    assert resolved(sql.client, sql.id, "upper", kind="function")["object"]["builtin"] is True
    assert_error(resolve(sql.client, sql.id, "nope", kind="function"), 404, "NOT_FOUND", "nope")


# --- paths: expansion and quoting ------------------------------------------------------------


def test_one_two_and_three_part_paths_expand_with_the_session(alice_api, make, storage):
    make.catalog("a", default_database="main")
    make.catalog("b")
    make.database("a", "x")
    sql = Console(alice_api)
    sql.run("USE CATALOG a")
    assert "`a`.`main`.`t1`" in sql.message(temp_table(storage, "t1"))
    assert "`a`.`x`.`t2`" in sql.message(temp_table(storage, "x.t2"))
    assert "`b`.`default`.`t3`" in sql.message(temp_table(storage, "b.default.t3"))
    assert "`a`.`nodb`.`t4`" in sql.message(temp_table(storage, "nodb.t4"))
    sql.run("USE b.default")
    assert sql.run("SHOW TEMPORARY TABLES") == [
        ["a", "main", "t1", False],
        ["a", "nodb", "t4", False],
        ["a", "x", "t2", False],
        ["b", "default", "t3", False],
    ]
    assert resolved(alice_api, sql.id, "t3")["identifier"] == ["b", "default", "t3"]
    assert_error(resolve(alice_api, sql.id, "x.t2"), 404, "NOT_FOUND", "`b`.`x`.`t2`")
    assert resolved(alice_api, sql.id, "a.x.t2")["temporary"] is True
    sql.fails("DROP TEMPORARY TABLE t1", "NOT_FOUND", "`b`.`default`.`t1`")
    assert sql.run("DROP TEMPORARY TABLE a.main.t1")[0][1] is True
    sql.run("USE a.x")
    assert sql.run("DROP TEMPORARY TABLE t2") == [["Dropped temporary table `a`.`x`.`t2`.", True]]


def test_quoted_parts_with_dots_spaces_and_backticks(sql, alice_api, storage):
    path = "`my.cat`.`a b`.`we``ird`"
    assert sql.message(temp_table(storage, path)) == (
        "Created temporary table `my.cat`.`a b`.`we``ird`."
    )
    assert sql.run("SHOW TEMPORARY TABLES") == [["my.cat", "a b", "we`ird", False]]
    found = resolved(alice_api, sql.id, path)
    assert found["identifier"] == ["my.cat", "a b", "we`ird"]
    assert found["object"]["catalog"] == "my.cat" and found["object"]["name"] == "we`ird"
    url = f"{API}/sessions/{sql.id}/temporary/tables/{quote(path, safe='')}"
    assert alice_api.delete(url).status_code == 204
    assert_error(alice_api.delete(url), 404, "NOT_FOUND", "`my.cat`.`a b`.`we``ird`")
    assert sql.run("SHOW TEMPORARY TABLES") == []


# --- SHOW ------------------------------------------------------------------------------------


def test_show_temporary_lists_the_sessions_objects_and_show_the_permanent_ones(sql, storage, make):
    make.table("demo", "default", "p")
    make.function("demo", "default", "pf", implementation="tessera_udfs.text.slugify")
    sql.run(temp_table(storage, "t"))
    sql.run(temp_table(storage, "p"))
    finish(sql, "CREATE TEMPORARY VIEW v AS SELECT 1 AS one", derive_view_schema=one_column)
    finish(sql, "CREATE TEMPORARY FUNCTION f AS 'tessera_udfs.text.slugify'")
    assert sql.run("SHOW TABLES") == [["default", "p", False]]
    assert sql.run("SHOW VIEWS") == []
    assert sql.run("SHOW FUNCTIONS") == [["pf"]]
    assert sql.run("SHOW TEMPORARY TABLES") == [
        ["demo", "default", "p", True],
        ["demo", "default", "t", False],
    ]
    assert sql.run("SHOW TEMPORARY VIEWS") == [["demo", "default", "v", False]]
    assert sql.run("SHOW TEMPORARY FUNCTIONS") == [["demo", "default", "f", False, False]]
    assert sql.run("SHOW TEMPORARY TABLES LIKE 't*'") == [["demo", "default", "t", False]]
    job = sql.submit("SHOW TEMPORARY TABLES")
    columns = sql.client.get(f"{API}/jobs/{job['id']}/result").json()["columns"]
    assert [c["name"] for c in columns] == ["catalog", "database", "name", "shadows"]
    # A temporary view and a temporary table share one namespace, functions have their own.
    clash = sql.submit("CREATE TEMPORARY VIEW t AS SELECT 1 AS one")
    failed = play_worker(clash["id"], derive_view_schema=one_column)
    assert failed.status == "FAILED" and failed.error is not None
    assert failed.error["code"] == "ALREADY_EXISTS"
    assert failed.error["message"] == (
        "Temporary table `demo`.`default`.`t` already exists; a view cannot replace a table."
    )
    assert sql.message(temp_table(storage, "f")) == "Created temporary table `demo`.`default`.`f`."


def test_describe_and_show_create_table_see_the_temporary_table(sql, storage, make):
    make.table("demo", "default", "t")
    sql.run(temp_table(storage, "t", "id BIGINT, label STRING COMMENT 'shown'"))
    assert [row[:3] for row in sql.run("DESCRIBE t")] == [
        ["id", "BIGINT", None],
        ["label", "STRING", "shown"],
    ]
    text = sql.message("SHOW CREATE TABLE t")
    assert text.startswith("CREATE TEMPORARY TABLE `demo`.`default`.`t` (")
    assert "USING parquet" in text and str(storage.external) in text


# --- REST ------------------------------------------------------------------------------------


def test_rest_lists_deletes_and_resolves_temporary_objects(sql, alice_api, storage, make):
    make.table("demo", "default", "b")
    for name in ("c", "a", "b"):
        sql.run(temp_table(storage, name))
    finish(sql, "CREATE TEMPORARY VIEW v AS SELECT 1 AS one", derive_view_schema=one_column)
    finish(sql, "CREATE TEMPORARY SYSTEM FUNCTION slug AS 'tessera_udfs.text.slugify'")

    body = listing(alice_api, sql.id, "tables")
    assert [item["name"] for item in body["items"]] == ["a", "b", "c"]
    assert [item["shadows"] for item in body["items"]] == [False, True, False]
    first = body["items"][0]
    assert first["catalog"] == "demo" and first["database"] == "default"
    assert first["kind"] == "table" and first["temporary"] is True and first["managed"] is False
    assert set(first) >= {"options", "schema", "resolved_schema", "partition_by", "comment"}
    page = listing(alice_api, sql.id, "tables", "?page_size=2")
    assert [item["name"] for item in page["items"]] == ["a", "b"]
    rest = listing(
        alice_api, sql.id, "tables", f"?page_size=2&page_token={page['next_page_token']}"
    )
    assert [item["name"] for item in rest["items"]] == ["c"] and rest["next_page_token"] is None
    views = listing(alice_api, sql.id, "views")["items"]
    assert [(v["name"], v["query"]) for v in views] == [("v", "SELECT 1 AS one")]
    functions = listing(alice_api, sql.id, "functions")["items"]
    assert [(f["name"], f["system"], f["catalog"]) for f in functions] == [("slug", True, None)]
    assert_error(alice_api.get(f"{API}/sessions/{sql.id}/temporary/schemas"), 404, "NOT_FOUND")

    base = f"{API}/sessions/{sql.id}/temporary"
    assert_error(alice_api.delete(f"{base}/views/a"), 404, "NOT_FOUND", "Temporary view")
    assert alice_api.delete(f"{base}/tables/a").status_code == 204
    assert alice_api.delete(f"{base}/tables/demo.default.B").status_code == 204
    assert alice_api.delete(f"{base}/tables/default.c").status_code == 204
    assert listing(alice_api, sql.id, "tables")["items"] == []
    assert resolved(alice_api, sql.id, "b")["temporary"] is False  # the permanent one again
    assert_error(alice_api.delete(f"{base}/functions/slug"), 404, "NOT_FOUND")
    assert alice_api.delete(f"{base}/functions/slug?system=true").status_code == 204
    assert listing(alice_api, sql.id, "functions")["items"] == []

    assert_error(resolve(alice_api, sql.id, "a"), 404, "NOT_FOUND", "`demo`.`default`.`a`")
    assert_error(resolve(alice_api, sql.id, "v", kind="column"), 400, "VALIDATION_ERROR", "kind")
    assert_error(alice_api.get(f"{API}/sessions/{sql.id}/resolve"), 400, "VALIDATION_ERROR", "path")
    assert_error(resolve(alice_api, sql.id, "a..b"), 400, "VALIDATION_ERROR")
    assert_error(alice_api.delete(f"{base}/tables/a.`b"), 400, "VALIDATION_ERROR", "backtick")


def test_the_list_costs_the_same_queries_for_any_number_of_objects(sql, alice_api, storage):
    sql.run(temp_table(storage, "t0"))

    def count() -> int:
        with CaptureQueriesContext(connection) as ctx:
            listing(alice_api, sql.id, "tables")
        return len(ctx.captured_queries)

    one = count()
    for index in range(1, 6):
        sql.run(temp_table(storage, f"t{index}"))
    assert count() == one


# --- isolation, deletion, expiry --------------------------------------------------------------


def test_temporary_objects_are_invisible_to_other_sessions_and_users(
    alice_api, bob_api, make, storage
):
    make.catalog("demo")
    one = Console(alice_api, current_catalog="demo")
    two = Console(alice_api, current_catalog="demo")
    bobs = Console(bob_api, current_catalog="demo")
    one.run(temp_table(storage, "t"))
    for other in (two, bobs):
        assert other.run("SHOW TEMPORARY TABLES") == []
        other.fails("SELECT * FROM t", "NOT_FOUND", "`demo`.`default`.`t`")
        other.fails("DROP TEMPORARY TABLE t", "NOT_FOUND")
        assert_error(resolve(other.client, other.id, "t"), 404, "NOT_FOUND")
    # Another session may have its own object of that name.
    two.run(temp_table(storage, "t", "other STRING"))
    assert resolved(alice_api, one.id, "t")["object"]["schema"]["columns"][0]["name"] == "id"
    assert resolved(alice_api, two.id, "t")["object"]["schema"]["columns"][0]["name"] == "other"
    # Bob cannot reach alice's session at all.
    base = f"{API}/sessions/{one.id}"
    assert_error(bob_api.get(f"{base}/temporary/tables"), 404, "NOT_FOUND")
    assert_error(bob_api.get(f"{base}/resolve?path=t"), 404, "NOT_FOUND")
    assert_error(bob_api.delete(f"{base}/temporary/tables/t"), 404, "NOT_FOUND")
    assert [item["name"] for item in listing(alice_api, one.id, "tables")["items"]] == ["t"]


def test_deleting_or_expiring_the_session_removes_its_objects_and_no_file(alice_api, make, storage):
    make.catalog("demo")
    closed = Console(alice_api, current_catalog="demo")
    idle = Console(alice_api, current_catalog="demo", idle_timeout_seconds=60)
    kept = Console(alice_api, current_catalog="demo")
    data = storage.external / "kept-data"
    data.mkdir()
    (data / "part-0.parquet").write_bytes(b"not really parquet")
    for console in (closed, idle, kept):
        console.run(f"CREATE TEMPORARY TABLE t (id INT) USING parquet OPTIONS ('path' = '{data}')")
    assert TemporaryObject.objects.count() == 3

    assert alice_api.delete(f"{API}/sessions/{closed.id}").status_code == 204
    assert not TemporaryObject.objects.filter(session_id=closed.id).exists()

    session = Session.objects.get(pk=idle.id)
    Session.objects.filter(pk=idle.id).update(
        last_used_at=session.last_used_at - timedelta(seconds=61)
    )
    assert maintenance.expire_sessions() == 1
    assert not TemporaryObject.objects.filter(session_id=idle.id).exists()
    assert_error(alice_api.get(f"{API}/sessions/{idle.id}/temporary/tables"), 404, "NOT_FOUND")

    assert TemporaryObject.objects.filter(session_id=kept.id).count() == 1
    assert (Path(data) / "part-0.parquet").read_bytes() == b"not really parquet"
    kept.run("DROP TEMPORARY TABLE t")
    assert (Path(data) / "part-0.parquet").exists()  # DROP TEMPORARY never deletes data
