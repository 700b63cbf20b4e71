"""Writes through the client: descriptors (round trip), CTAS, temporary objects, statement sets."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest
import requests
from django.conf import settings

from tests.client.conftest import tessera
from tests.conftest import token_for

pytestmark = [pytest.mark.slow, pytest.mark.spark]


def table_json(url, path):
    c, d, t = (quote(p, safe="") for p in path)
    response = requests.get(
        f"{url}/api/v1/catalogs/{c}/databases/{d}/tables/{t}",
        headers={"Authorization": f"Token {token_for('alice')}"},
        timeout=10,
    )
    assert response.status_code == 200, response.text
    return response.json()


RICH = (
    tessera.Schema.new_builder()
    .column("id", "BIGINT NOT NULL")
    .column("price", "DECIMAL(10, 2)")
    .column("qty", "INT")
    .column_by_expression("total", "price * qty")
    .column_by_metadata("file", "STRING", "file_path", is_virtual=True)
    .column_by_metadata("file_size", "BIGINT")
    .column("ts", "TIMESTAMP")
    .watermark("ts", "ts - INTERVAL 5 SECONDS")
    .primary_key_named("pk_rich", "id")
    .build()
)


def test_managed_descriptor_round_trip(t_env, shop):
    descriptor = (
        tessera.TableDescriptor.for_managed("parquet")
        .schema(RICH)
        .partitioned_by("qty")
        .comment("it's rich")
        .build()
    )
    assert t_env.create_table("rich", descriptor) is None
    body = table_json(shop, ["shop", "sales", "rich"])
    assert body["schema"] == RICH.to_json()
    assert tessera.Schema.from_json(body["schema"]) == RICH
    assert tessera.TableDescriptor.from_json(body) == descriptor
    resolved = tessera.ResolvedSchema.from_json(body["resolved_schema"])
    assert resolved.column_names == ["id", "price", "qty", "total", "file", "file_size", "ts"]
    # ignore_if_exists, and the error without it
    t_env.create_table("rich", descriptor, ignore_if_exists=True)
    with pytest.raises(tessera.AlreadyExistsError):
        t_env.create_table("rich", descriptor)
    key = tessera.Schema.new_builder().column("k", "INT").primary_key("k").build()
    t_env.create_table("keyed", tessera.TableDescriptor.for_managed().schema(key).build())
    assert tessera.Schema.from_json(table_json(shop, ["shop", "sales", "keyed"])["schema"]) == key


def test_connector_descriptor_round_trip_and_temporary_table(t_env, shop):
    root = settings.TESSERA_STORAGE_ROOTS[0]
    schema = tessera.Schema.new_builder().column("id", "BIGINT").column("s", "STRING").build()
    descriptor = (
        tessera.TableDescriptor.for_connector("csv")
        .schema(schema)
        .option("path", f"{root}/client-csv")
        .option("header", "true")
        .build()
    )
    t_env.create_table("ext", descriptor)
    body = table_json(shop, ["shop", "sales", "ext"])
    assert body["managed"] is False
    assert tessera.TableDescriptor.from_json(body) == descriptor
    t_env.execute_sql("INSERT INTO ext VALUES (1, 'a'), (2, 'it''s')").wait()
    # a temporary table (Tessera does not write those) over files of its own, a hostile name
    folder = Path(root) / "client-tmp"
    folder.mkdir(parents=True)
    (folder / "part-0.csv").write_text("id,s\n1,a\n2,its\n")
    name = "tmp `ext` 'x'"
    temp = (
        tessera.TableDescriptor.for_connector("csv")
        .schema(schema)
        .option("path", f"{root}/client-tmp")
        .option("header", "true")
        .build()
    )
    t_env.create_temporary_table(tessera.col(name), temp)
    assert t_env.list_temporary_tables() == ["`shop`.`sales`.`tmp ``ext`` 'x'`"]
    rows = sorted(tuple(r) for r in t_env.from_path(tessera.col(name)).collect())
    assert rows == [(1, "a"), (2, "its")]
    assert t_env.drop_temporary_table(tessera.col(name)) is True
    # option values are literals: a hostile value stays the value of its own option
    hostile = f"{root}/x') , ('a'='b"
    evil = tessera.TableDescriptor.for_connector("csv").schema(schema).option("path", hostile)
    try:
        t_env.create_temporary_table("evil", evil.build())
    except tessera.ValidationError as refused:  # the server may refuse such a path, as a path
        assert refused.details.get("field") == "options.path"
    else:
        found = t_env._http.get(f"{t_env._path}/resolve", {"path": "evil"})["object"]
        assert found["options"] == {"connector": "csv", "path": hostile}
    with pytest.raises(tessera.ValidationError):
        tessera.TableDescriptor.for_connector("csv) OPTIONS (path '/'").schema(
            schema
        ).build().ddl_clauses()


def test_ctas_is_a_job_with_the_stage_lifecycle(t_env):
    query = t_env.from_path("orders").where("qty > 1").select("id", "price")
    result = t_env.create_table(
        "big", tessera.TableDescriptor.for_managed("parquet").build(), query=query
    )
    assert isinstance(result, tessera.TableResult)
    result.wait()
    assert result.job["kind"] == "ctas"
    types = [e["type"] for e in result.events()]
    assert "stage_table_created" in types and "data_committed" in types
    assert sorted(r["id"] for r in t_env.from_path("big").collect()) == [1, 3]
    again = t_env.create_table(
        "big", tessera.TableDescriptor.for_managed().build(), query=query, ignore_if_exists=True
    )
    assert again is not None
    again.wait()
    assert "skipped_exists" in [e["type"] for e in again.events()]
    with pytest.raises(tessera.ValidationError):
        t_env.create_table(
            "x", tessera.TableDescriptor.for_managed().schema(RICH).build(), query=query
        )


def test_temporary_view_of_a_table(t_env):
    t_env.create_temporary_view("cheap", t_env.from_path("orders").where("price < 5"))
    assert t_env.list_temporary_views() == ["`shop`.`sales`.`cheap`"]
    assert sorted(r["id"] for r in t_env.from_path("cheap").collect()) == [1, 3]
    with pytest.raises(tessera.TesseraError):
        t_env.create_temporary_view("cheap", t_env.from_path("orders"))


def test_statement_set_commits_all_targets(t_env):
    t_env.execute_sql("CREATE TABLE a (id BIGINT)").wait()
    t_env.execute_sql("CREATE TABLE b (id BIGINT)").wait()
    orders = t_env.from_path("orders")
    statement_set = t_env.create_statement_set()
    statement_set.add_insert("a", orders.select("id").where("id < 3"))
    statement_set.add_insert_sql("INSERT INTO b SELECT id FROM orders WHERE id >= 3;")
    result = statement_set.execute().wait()
    assert result.job["kind"] == "statement_set"
    assert sorted(r[0] for r in t_env.from_path("a").collect()) == [1, 2]
    assert sorted(r[0] for r in t_env.from_path("b").collect()) == [3, 4]


def test_statement_set_failing_on_its_second_insert_changes_neither_target(t_env):
    """The issue's "must show": all or nothing."""
    t_env.execute_sql("CREATE TABLE a (id BIGINT)").wait()
    t_env.execute_sql("CREATE TABLE b (id BIGINT)").wait()
    t_env.execute_sql("INSERT INTO a VALUES (100)").wait()
    t_env.execute_sql("INSERT INTO b VALUES (200)").wait()
    statement_set = t_env.create_statement_set()
    statement_set.add_insert("a", t_env.from_path("orders").select("id"), overwrite=True)
    # the second insert fails while it runs: a cast that cannot succeed (ANSI mode)
    statement_set.add_insert_sql("INSERT INTO b SELECT CAST(concat('x', id) AS BIGINT) FROM orders")
    # As in PyFlink (and API.md §4): the job is returned; reading its end raises.
    result = statement_set.execute()
    assert result.status == "FAILED"
    with pytest.raises(tessera.JobFailedError) as failed:
        result.wait()
    assert failed.value.job_id == result.job_id
    assert [r[0] for r in t_env.from_path("a").collect()] == [100]
    assert [r[0] for r in t_env.from_path("b").collect()] == [200]


def test_statement_set_refuses_what_is_not_an_insert(t_env):
    statement_set = t_env.create_statement_set()
    with pytest.raises(tessera.ValidationError):
        statement_set.add_insert_sql("DROP TABLE orders")
    with pytest.raises(tessera.ValidationError):
        statement_set.add_insert_sql("INSERT INTO a SELECT 1; DROP TABLE orders")
    with pytest.raises(tessera.ValidationError):
        statement_set.execute()
