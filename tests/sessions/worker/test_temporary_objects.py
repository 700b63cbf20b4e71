"""Temporary objects (FLIP-64) on a real worker: shadowing of tables and functions, the
function resolution order, views over dropped objects, and a join of temporary and permanent
objects checked against plain PySpark.

Everything goes through ``POST /api/v1/sessions/{id}/statements``; the session's temporary
objects live in the database, so the worker (another process) sees them as the web does.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User

from catalog import services as catalog_services
from catalog.models import Database
from core.schema import Schema
from tests.conftest import API
from tests.worker_helpers import api_for, json_value, result_rows, wait_job

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker"),
]

SALES_SCHEMA = {
    "columns": [
        {"name": "id", "kind": "physical", "data_type": "BIGINT"},
        {"name": "name", "kind": "physical", "data_type": "STRING"},
        {"name": "qty", "kind": "physical", "data_type": "INT"},
    ]
}


class Console:
    """One user's SQL session in catalog ``c``, database ``d``, through the REST API."""

    def __init__(self, user: User) -> None:
        self.api = api_for(user)
        response = self.api.post(f"{API}/sessions", {"current_catalog": "c"})
        assert response.status_code == 201, response.content
        self.id = str(response.json()["id"])

    def job(self, sql: str) -> dict[str, Any]:
        response = self.api.post(f"{API}/sessions/{self.id}/statements", {"sql": sql, "wait": 30})
        assert response.status_code == 201, response.content
        return wait_job(self.api, response.json()["id"], timeout=90)

    def rows(self, sql: str) -> list[list[Any]]:
        job = self.job(sql)
        assert job["status"] == "FINISHED", (sql, job["error"])
        return result_rows(self.api, job["id"])[1]

    def fails(self, sql: str, code: str, *fragments: str) -> str:
        job = self.job(sql)
        assert job["status"] == "FAILED", (sql, job)
        assert job["error"]["code"] == code, (sql, job["error"])
        message = str(job["error"]["message"])
        for fragment in fragments:
            assert fragment in message, (fragment, message)
        return message


def write_parquet(spark: Any, rows: list[tuple[Any, ...]], ddl: str, prefix: str) -> str:
    """Write rows with plain PySpark under the storage root; the directory."""
    path = Path(settings.TESSERA_STORAGE_ROOTS[0]) / f"{prefix}-{uuid.uuid4().hex[:8]}"
    spark.createDataFrame(rows, ddl).repartition(2).write.parquet(str(path))
    return str(path)


@pytest.fixture
def sales(alice: User, plain_spark: Any) -> str:
    """The permanent external table ``c.d.sales`` (id, name, qty), 200 rows."""
    path = write_parquet(
        plain_spark,
        [(i, f"item {i}", i % 7) for i in range(1, 201)],
        "id BIGINT, name STRING, qty INT",
        "sales",
    )
    catalog = catalog_services.catalog_create(user=alice, name="c", default_database="d")
    catalog_services.table_create(
        user=alice,
        database=Database.objects.get(catalog=catalog, name="d"),
        name="sales",
        schema=Schema.from_dict(SALES_SCHEMA),
        options={"connector": "parquet", "path": path},
    )
    return path


def test_a_temporary_view_shadows_a_permanent_table_and_back(alice: User, sales: str):
    sql = Console(alice)
    query = "SELECT count(*) AS n, max(name) AS top FROM sales"
    assert sql.rows(query) == [[200, "item 99"]]
    created = sql.rows(
        "CREATE TEMPORARY VIEW sales AS SELECT * FROM VALUES (1, 'temp a'), (2, 'temp b') "
        "AS v(id, name)"
    )
    assert created == [
        ["Created temporary view `c`.`d`.`sales`; it shadows the permanent table of that name."]
    ]
    assert sql.rows(query) == [[2, "temp b"]]
    assert sql.rows("SELECT id, name FROM c.d.sales ORDER BY id") == [[1, "temp a"], [2, "temp b"]]
    # Another session of the same user still reads the permanent table.
    assert Console(alice).rows(query) == [[200, "item 99"]]
    assert sql.rows("DROP TEMPORARY VIEW sales")[0][1] is True
    assert sql.rows(query) == [[200, "item 99"]]


def test_function_resolution_order_with_temporary_functions(alice: User, sales: str):
    sql = Console(alice)
    sql.rows("CREATE FUNCTION fmt AS 'tessera_udfs.text.slugify'")
    sql.rows("CREATE FUNCTION upper AS 'tessera_udfs.text.word_count'")
    probe = "SELECT upper('Hello World') AS u, fmt('Hello World') AS f, c.d.upper('a b c') AS q"
    # Built-in upper; catalog fmt; the qualified name reaches the catalog function.
    assert sql.rows(probe) == [["HELLO WORLD", "hello-world", 3]]

    # A temporary catalog function shadows the catalog function (1-part and qualified) ...
    sql.rows("CREATE TEMPORARY FUNCTION fmt(s STRING) RETURNS STRING RETURN concat('<', s, '>')")
    sql.rows("CREATE TEMPORARY FUNCTION upper(s STRING) RETURNS INT RETURN length(s)")
    assert sql.rows(probe) == [["HELLO WORLD", "<Hello World>", 5]]
    # ... but not a built-in: that takes a temporary system function.
    created = sql.rows("CREATE TEMPORARY SYSTEM FUNCTION upper AS 'tessera_udfs.text.slugify'")
    assert created == [
        ["Created temporary system function `upper`; it shadows the built-in function `upper`."]
    ]
    assert sql.rows(probe) == [["hello-world", "<Hello World>", 5]]
    # A temporary system function comes before temporary catalog functions too.
    sql.rows("CREATE TEMPORARY SYSTEM FUNCTION fmt AS 'tessera_udfs.text.word_count'")
    assert sql.rows(probe) == [["hello-world", 2, 5]]

    # Dropping them walks back down the order.
    sql.rows("DROP TEMPORARY SYSTEM FUNCTION fmt")
    sql.rows("DROP TEMPORARY SYSTEM FUNCTION upper")
    assert sql.rows(probe) == [["HELLO WORLD", "<Hello World>", 5]]
    sql.rows("DROP TEMPORARY FUNCTION fmt")
    sql.rows("DROP TEMPORARY FUNCTION upper")
    assert sql.rows(probe) == [["HELLO WORLD", "hello-world", 3]]

    # The worker's import check applies to temporary Python functions.
    sql.fails(
        "CREATE TEMPORARY FUNCTION bad AS 'tessera_udfs.text.nope'",
        "VALIDATION_ERROR",
        "'nope' is not a function",
    )
    assert sql.rows("SHOW TEMPORARY FUNCTIONS") == []


def test_a_temporary_view_over_a_dropped_temporary_table_fails_at_use(
    alice: User, plain_spark: Any
):
    catalog_services.catalog_create(user=alice, name="c", default_database="d")
    path = write_parquet(plain_spark, [(1, "a"), (2, "b")], "id BIGINT, tag STRING", "tags")
    sql = Console(alice)
    sql.rows(f"CREATE TEMPORARY TABLE tags (id BIGINT, tag STRING) USING parquet LOCATION '{path}'")
    sql.rows("CREATE TEMPORARY VIEW tagged AS SELECT upper(tag) AS tag FROM tags")
    assert sql.rows("SELECT tag FROM tagged ORDER BY tag") == [["A"], ["B"]]
    assert sql.rows("DROP TEMPORARY TABLE tags") == [
        ["Dropped temporary table `c`.`d`.`tags`.", True]
    ]
    sql.fails("SELECT * FROM tagged", "NOT_FOUND", "`c`.`d`.`tags`", "`c`.`d`.`tagged`")
    assert Path(path).is_dir()  # the data stays


def test_a_join_of_temporary_and_permanent_objects_equals_plain_pyspark(
    alice: User, sales: str, plain_spark: Any
):
    regions = write_parquet(
        plain_spark,
        [(i, ["north", "south", "east"][i % 3]) for i in range(1, 301, 2)],
        "cust_id BIGINT, region STRING",
        "regions",
    )
    sql = Console(alice)
    # A temporary table with a computed column: the worker types its expression.
    created = sql.rows(
        "CREATE TEMPORARY TABLE regions (cust_id BIGINT, region STRING, "
        f"code AS upper(substr(region, 1, 1))) USING parquet OPTIONS ('path' = '{regions}')"
    )
    assert created == [["Created temporary table `c`.`d`.`regions`."]]
    sql.rows("CREATE TEMPORARY VIEW busy AS SELECT id, qty * 10 AS weight FROM sales WHERE qty > 3")
    query = (
        "SELECT s.id, s.name, r.region, r.code, b.weight "
        "FROM sales s JOIN regions r ON r.cust_id = s.id JOIN busy b ON b.id = s.id "
        "ORDER BY s.id"
    )
    rows = sql.rows(query)

    plain_spark.read.parquet(sales).createOrReplaceTempView("p_sales")
    plain_spark.read.parquet(regions).selectExpr(
        "cust_id", "region", "upper(substr(region, 1, 1)) AS code"
    ).createOrReplaceTempView("p_regions")
    plain_spark.sql(
        "SELECT id, qty * 10 AS weight FROM p_sales WHERE qty > 3"
    ).createOrReplaceTempView("p_busy")
    expected = plain_spark.sql(
        "SELECT s.id, s.name, r.region, r.code, b.weight "
        "FROM p_sales s JOIN p_regions r ON r.cust_id = s.id JOIN p_busy b ON b.id = s.id "
        "ORDER BY s.id"
    ).collect()
    assert rows == [[json_value(v) for v in row] for row in expected]
    assert len(rows) > 20
    assert rows[0][:4] == [5, "item 5", "east", "E"]
