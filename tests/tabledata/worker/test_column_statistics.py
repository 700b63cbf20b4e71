"""ANALYZE TABLE … COMPUTE STATISTICS on a real worker (docs/statements.md "ANALYZE TABLE"):
the figures a job stores on the table equal what plain PySpark computes over the same files;
refusals (unknown column, another user, a view) store nothing."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from catalog import services as catalog_services
from catalog.models import Table
from tests.conftest import API
from tests.grants_support import share
from tests.worker_helpers import (
    Pipeline,
    create_user,
    events,
    planned,
    result_rows,
    session_for,
    submit_plan,
    wait_for_status,
)

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker"),
]

# Numbers, strings with NULLs, a decimal, a date, a binary, an array and a struct.
DATA = (
    "SELECT id, CAST(id % 7 AS INT) AS k, "
    "IF(id % 5 = 0, NULL, concat('name-', id)) AS name, "
    "CAST(id AS DECIMAL(10, 2)) / 4 AS price, "
    "IF(id % 3 = 0, NULL, id * 1.5D) AS score, "
    "date_add(DATE'2024-01-01', CAST(id AS INT)) AS born, "
    "CAST(repeat('x', CAST(id % 9 AS INT)) AS BINARY) AS raw, "
    "IF(id % 4 = 0, NULL, sequence(0L, id % 3)) AS tags, "
    "named_struct('a', id, 'b', 'z') AS s "
    "FROM range(0, 700, 1, 3)"
)
COLUMNS = ["id", "k", "name", "price", "score", "born", "raw", "tags", "s"]


@pytest.fixture
def table(alice_sql: Pipeline) -> str:
    """``<catalog>.d.t`` of alice's, filled by CTAS with ``DATA``."""
    catalog = f"s{uuid.uuid4().hex[:10]}"
    catalog_services.catalog_create(user=alice_sql.user, name=catalog, default_database="d")
    job = alice_sql.run(f"CREATE TABLE {catalog}.d.t AS {DATA}")
    assert job["status"] == "FINISHED", job["error"]
    return f"{catalog}.d.t"


def _row(path: str) -> Table:
    catalog, database, name = path.split(".")
    return Table.objects.get(database__catalog__name=catalog, database__name=database, name=name)


def _statistics(api: Any, path: str) -> dict[str, Any]:
    catalog, database, name = path.split(".")
    response = api.get(f"{API}/catalogs/{catalog}/databases/{database}/tables/{name}/statistics")
    assert response.status_code == 200, response.content
    body: dict[str, Any] = response.json()
    return body


def _expected(plain_spark: Any, location: str, columns: list[str]) -> dict[str, dict[str, Any]]:
    """The figures plain PySpark computes over the table's files, column by column."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as st

    frame = plain_spark.read.parquet(location)
    fields = {f.name: f.dataType for f in frame.schema.fields}
    expected: dict[str, dict[str, Any]] = {}
    for name in columns:
        column = F.col(name)
        kind = fields[name]
        figures: dict[str, Any] = {
            "null_count": frame.filter(column.isNull()).count(),
            "distinct_count": None,
            "min": None,
            "max": None,
            "avg": None,
            "avg_length": None,
            "max_length": None,
        }
        if isinstance(kind, st.ArrayType | st.MapType | st.StructType):
            expected[name] = figures
            continue
        row = frame.agg(
            F.approx_count_distinct(column).alias("d"),
            F.min(column).cast("string").alias("lo"),
            F.max(column).cast("string").alias("hi"),
            F.avg(F.length(column)).alias("al"),
            F.max(F.length(column)).alias("ml"),
        ).first()
        assert row is not None
        figures["distinct_count"] = row["d"]
        if isinstance(kind, st.StringType | st.BinaryType):
            figures.update(avg_length=row["al"], max_length=row["ml"])
        else:
            figures.update(min=row["lo"], max=row["hi"])
        if isinstance(kind, st.NumericType):
            avg = frame.agg(F.avg(column).cast("double")).first()
            assert avg is not None
            figures["avg"] = avg[0]
        expected[name] = figures
    return expected


def _by_name(stored: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        entry["name"]: {k: v for k, v in entry.items() if k not in ("name", "data_type")}
        for entry in stored["columns"]
    }


def test_all_columns_equal_plain_pyspark(alice_sql: Pipeline, table: str, plain_spark: Any) -> None:
    row = _row(table)
    schema_before, updated_before = row.resolved_schema, row.updated_at
    assert _statistics(alice_sql.api, table)["column_statistics"] is None

    job = alice_sql.run(f"ANALYZE TABLE {table} COMPUTE STATISTICS FOR ALL COLUMNS")
    assert job["status"] == "FINISHED", job["error"]
    assert job["kind"] == "ddl"
    assert "statistics_stored" in events(job["id"])

    body = _statistics(alice_sql.api, table)
    stored = body["column_statistics"]
    assert stored["row_count"] == 700 == plain_spark.read.parquet(row.location).count()
    assert stored["files"] == body["files"] and stored["size_bytes"] == body["size_bytes"]
    assert stored["computed_at"] and stored["size_computed_at"]
    assert [c["name"] for c in stored["columns"]] == COLUMNS
    assert stored["columns"][0]["data_type"] == "BIGINT NOT NULL"
    expected = _expected(plain_spark, row.location, COLUMNS)
    actual = _by_name(stored)
    for name in COLUMNS:
        for key, value in expected[name].items():
            if isinstance(value, float):
                assert actual[name][key] == pytest.approx(value), (name, key)
            else:
                assert actual[name][key] == value, (name, key)
    # Spot checks a reader can verify by hand: 140 names of 700 are NULL (id % 5 = 0).
    assert actual["name"]["null_count"] == 140
    assert actual["id"]["min"] == "0" and actual["id"]["max"] == "699"
    assert actual["born"]["min"] == "2024-01-01"

    # The job's result lists the same figures, one row per column.
    columns, rows = result_rows(alice_sql.api, job["id"])
    assert [c["name"] for c in columns][:3] == ["column", "data_type", "null_count"]
    assert [r[0] for r in rows] == COLUMNS
    assert rows[2][2] == 140

    row.refresh_from_db()
    assert row.resolved_schema == schema_before
    # CTAS stored tags as ARRAY<BIGINT NOT NULL>, which Spark's DDL cannot say in a read
    # schema: the table is read all the same (core.datatypes.read_schema_type).
    tags = next(c for c in (row.resolved_schema or {})["columns"] if c["name"] == "tags")
    assert tags["data_type"] == "ARRAY<BIGINT NOT NULL>"
    read = alice_sql.run(f"SELECT tags FROM {table} WHERE id = 2")
    assert read["status"] == "FINISHED", read["error"]
    assert result_rows(alice_sql.api, read["id"])[1] == [[[0, 1, 2]]]
    assert row.updated_at == updated_before


def test_for_columns_stores_the_subset_and_noscan_keeps_it(alice_sql: Pipeline, table: str) -> None:
    job = alice_sql.run(f"ANALYZE TABLE {table} COMPUTE STATISTICS FOR COLUMNS score, NAME")
    assert job["status"] == "FINISHED", job["error"]
    stored = _statistics(alice_sql.api, table)["column_statistics"]
    assert [c["name"] for c in stored["columns"]] == ["score", "name"]
    assert stored["columns"][0]["null_count"] == 234  # id % 3 = 0 for 0..699

    # NOSCAN refreshes the files and their size; the scan's figures stay.
    Path(_row(table).location, "part-extra.parquet").write_bytes(b"")  # an empty file
    noscan = alice_sql.run(f"ANALYZE TABLE {table} COMPUTE STATISTICS NOSCAN")
    assert noscan["status"] == "FINISHED", noscan["error"]
    after = _statistics(alice_sql.api, table)["column_statistics"]
    assert after["files"] == stored["files"] + 1
    assert after["columns"] == stored["columns"]
    assert after["computed_at"] == stored["computed_at"]
    assert after["size_computed_at"] > stored["size_computed_at"]
    _, rows = result_rows(alice_sql.api, noscan["id"])
    assert rows == [[None, after["files"], after["size_bytes"]]]  # no row count: no scan


def test_refusals_store_nothing(alice_sql: Pipeline, table: str) -> None:
    catalog = table.split(".")[0]
    unknown = alice_sql.run(f"ANALYZE TABLE {table} COMPUTE STATISTICS FOR COLUMNS id, nope")
    assert unknown["status"] == "FAILED"
    assert unknown["error"]["code"] == "VALIDATION_ERROR"
    assert "`nope`" in unknown["error"]["message"]

    bob = Pipeline("bob")
    share(catalog)  # bob may read the table, not analyze it (that needs MODIFY)
    refused = bob.run(f"ANALYZE TABLE {table} COMPUTE STATISTICS FOR ALL COLUMNS")
    assert refused["status"] == "FAILED"
    assert refused["error"]["code"] == "PERMISSION_DENIED"

    assert alice_sql.run(f"CREATE VIEW {catalog}.d.v AS SELECT id FROM {table}")["status"] == (
        "FINISHED"
    )
    view = alice_sql.run(f"ANALYZE TABLE {catalog}.d.v COMPUTE STATISTICS")
    assert view["status"] == "FAILED"
    assert "is a view" in view["error"]["message"]
    made = alice_sql.run(f"CREATE TEMPORARY VIEW {catalog}.d.tv AS SELECT 1 AS id")
    assert made["status"] == "FINISHED", made["error"]
    temporary = alice_sql.run(f"ANALYZE TABLE {catalog}.d.tv COMPUTE STATISTICS")
    assert temporary["status"] == "FAILED"
    assert "temporary view" in temporary["error"]["message"]

    assert _row(table).column_statistics is None
    assert _statistics(alice_sql.api, table)["column_statistics"] is None


def test_a_scan_that_fails_stores_nothing(alice_sql: Pipeline, table: str) -> None:
    # A file that is not Parquet: the scan fails inside Spark, after the plan was accepted.
    Path(_row(table).location, "part-broken.parquet").write_bytes(b"not parquet at all")
    job = alice_sql.run(f"ANALYZE TABLE {table} COMPUTE STATISTICS FOR ALL COLUMNS")
    assert job["status"] == "FAILED", job
    assert job["error"]["code"].startswith("SPARK_"), job["error"]
    assert "statistics_stored" not in events(job["id"])
    assert _row(table).column_statistics is None


def test_a_plan_run_by_another_user_stores_nothing(alice_sql: Pipeline, table: str) -> None:
    """Alice's plan stored as bob's job (never what the planner makes for bob): the worker
    checks the permission again before it scans (and the store at FINISHED once more)."""
    plan = planned(session_for(alice_sql.user), f"ANALYZE TABLE {table} COMPUTE STATISTICS")
    share(table.split(".")[0])  # bob may read it: the refusal is of MODIFY, not a hidden table
    bob = create_user(f"bob{uuid.uuid4().hex[:6]}")
    job = submit_plan(bob, plan, sql=f"ANALYZE TABLE {table} COMPUTE STATISTICS")
    ended = wait_for_status(job.id, {"FAILED"}, timeout=120)
    assert ended.error is not None and ended.error["code"] == "PERMISSION_DENIED", ended.error
    assert "statistics_stored" not in events(job.id)
    assert _row(table).column_statistics is None
