"""Schemas are always resolved (FLIP-164): REST creation and alteration of tables with
computed columns or watermarks, and of views, wait for Spark's analyzer on a live worker
before anything is stored; a refusal is 400 naming the column, no worker in time 503.

Real parts: the shared live worker (its Spark), Redis, PostgreSQL. The warehouse is the
worker's own (the ``storage`` fixture below), so that a view may read a managed table.
"""

from __future__ import annotations

import copy
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import redis
from django.conf import settings as django_settings
from django.utils import timezone

from catalog.models import Column, Table
from jobs.models import SchemaCheck
from tests.conftest import API, assert_error
from tests.fixtures.api import Storage
from tests.schemas import RICH_SCHEMA

pytestmark = pytest.mark.django_db(transaction=True)

TABLES = f"{API}/catalogs/shop/databases/sales/tables"
VIEWS = f"{API}/catalogs/shop/databases/sales/views"

# RICH_SCHEMA without its metadata column and its primary key.
ORDERS: dict[str, Any] = {
    "columns": [c for c in copy.deepcopy(RICH_SCHEMA["columns"]) if c["kind"] != "metadata"],
    "watermarks": copy.deepcopy(RICH_SCHEMA["watermarks"]),
}


def with_expression(expression: str) -> dict[str, Any]:
    schema = copy.deepcopy(ORDERS)
    schema["columns"][3]["expression"] = expression
    return schema


@pytest.fixture(autouse=True)
def storage(settings: Any) -> Storage:
    """The worker's warehouse and storage root (the environment's), not a private one: the
    worker registers the tables a view reads from where it finds them."""
    root = Path(settings.TESSERA_STORAGE_ROOTS[0])
    root.mkdir(parents=True, exist_ok=True)
    return Storage(warehouse=Path(settings.WAREHOUSE_DIR), external=root)


@pytest.fixture
def shop(make: Any, analyzer: Any) -> None:
    make.catalog("shop", default_database="sales")


def nothing_stored(name: str) -> None:
    assert not Table.objects.filter(name_key=name.lower()).exists()
    assert not Column.objects.filter(table__name_key=name.lower()).exists()
    assert not SchemaCheck.objects.exists()  # the question is gone, answered or not


# --- tables ----------------------------------------------------------------------------------


def test_computed_columns_and_watermarks_are_stored_typed(alice_api, shop):
    response = alice_api.post(TABLES, {"name": "orders", "schema": ORDERS})
    assert response.status_code == 201, response.content
    resolved = response.json()["resolved_schema"]
    assert resolved["expressions_resolved"] is True
    assert resolved["columns"][3] == {
        "name": "total",
        "kind": "computed",
        "data_type": "DECIMAL(21, 2)",
        "nullable": True,
        "expression": "price * qty",
    }
    assert resolved["watermarks"][0]["data_type"] == "TIMESTAMP"
    table = Table.objects.get(name="orders")
    assert table.resolved_schema == resolved
    assert Column.objects.get(table=table, name="total").data_type == "DECIMAL(21, 2)"
    assert not SchemaCheck.objects.exists()


def test_an_unknown_column_in_an_expression_is_refused_naming_it(alice_api, shop):
    response = alice_api.post(TABLES, {"name": "orders", "schema": with_expression("price * qtyy")})
    error = assert_error(response, 400, "VALIDATION_ERROR", "`total`", "qtyy")
    assert error["details"] == {"field": "schema.columns[3].expression", "column": "total"}
    nothing_stored("orders")


@pytest.mark.parametrize(
    ("expression", "kind"),
    [
        ("sum(qty)", "an aggregate function (sum(qty))"),
        ("price * count(*)", "an aggregate function (count(1))"),
        ("row_number() OVER (ORDER BY qty)", "a window function"),
        ("lag(qty) OVER (ORDER BY ts)", "a window function"),
        ("explode(array(qty, qty))", "a generator function"),
    ],
)
def test_aggregate_window_and_generator_functions_are_refused(alice_api, shop, expression, kind):
    """``SELECT sum(qty)`` alone is valid Spark, yet every read of the table would fail."""
    error = assert_error(
        alice_api.post(TABLES, {"name": "orders", "schema": with_expression(expression)}),
        400,
        "VALIDATION_ERROR",
        f"The expression of column `total` calls {kind}: a computed column is computed from "
        "the values of its own row",
    )
    assert error["details"] == {"field": "schema.columns[3].expression", "column": "total"}
    nothing_stored("orders")


def test_a_computed_column_over_a_computed_column_is_refused_naming_both(alice_api, shop):
    schema = copy.deepcopy(ORDERS)
    schema["columns"].append({"name": "Twice", "kind": "computed", "expression": "TOTAL * 2"})
    error = assert_error(
        alice_api.post(TABLES, {"name": "orders", "schema": schema}),
        400,
        "VALIDATION_ERROR",
        "Computed column `Twice` refers to computed column `total`: a computed column can only "
        "refer to physical and metadata columns (FLIP-164).",
    )
    index = len(schema["columns"]) - 1
    assert error["details"] == {
        "field": f"schema.columns[{index}].expression",
        "column": "Twice",
        "refers_to": "total",
    }
    schema["columns"][index]["expression"] = "twice + 1"
    assert_error(
        alice_api.post(TABLES, {"name": "orders", "schema": schema}),
        400,
        "VALIDATION_ERROR",
        "Computed column `Twice` refers to itself.",
    )
    nothing_stored("orders")


def test_a_syntax_error_in_an_expression_is_refused(alice_api, shop):
    response = alice_api.post(TABLES, {"name": "orders", "schema": with_expression("price +* qty")})
    error = assert_error(response, 400, "VALIDATION_ERROR", "`total`", "is not valid")
    assert error["details"]["field"] == "schema.columns[3].expression"
    nothing_stored("orders")


def test_a_watermark_that_is_not_a_timestamp_is_refused(alice_api, shop):
    schema = copy.deepcopy(ORDERS)
    schema["watermarks"] = [{"column": "ts", "expression": "qty + 1"}]
    error = assert_error(
        alice_api.post(TABLES, {"name": "orders", "schema": schema}),
        400,
        "VALIDATION_ERROR",
        "watermark expression for column `ts` must be of type TIMESTAMP",
        "INT",
    )
    assert error["details"]["field"] == "schema.watermarks[0].expression"
    nothing_stored("orders")


def test_an_expression_that_tries_to_end_the_select_is_refused(alice_api, shop):
    schema = with_expression("qty) AS x FROM range(1); DROP TABLE shop.sales.orders; --")
    error = assert_error(
        alice_api.post(TABLES, {"name": "orders", "schema": schema}), 400, "VALIDATION_ERROR"
    )
    assert error["details"]["field"] == "schema.columns[3].expression"
    nothing_stored("orders")


def test_a_huge_expression_is_refused_before_a_worker_is_asked(alice_api, shop, settings):
    huge = " + ".join(["qty"] * (settings.TESSERA_SQL_MAX_CHARS // 4))
    response = alice_api.post(TABLES, {"name": "orders", "schema": with_expression(huge)})
    error = assert_error(response, 413, "STATEMENT_TOO_LARGE", "expression of column `total`")
    assert error["details"]["field"] == "schema.columns[3].expression"
    nothing_stored("orders")


def test_patch_with_a_bad_computed_column_leaves_the_table_as_it_was(alice_api, shop):
    created = alice_api.post(TABLES, {"name": "orders", "schema": ORDERS}).json()
    bad = copy.deepcopy(ORDERS)
    bad["columns"].append({"name": "discount", "kind": "computed", "expression": "price * rate"})
    error = assert_error(
        alice_api.patch(f"{TABLES}/orders", {"schema": bad, "comment": "changed"}),
        400,
        "VALIDATION_ERROR",
        "`discount`",
        "rate",
    )
    assert error["details"]["field"] == "schema.columns[5].expression"
    after = alice_api.get(f"{TABLES}/orders").json()
    assert after == created
    assert not Column.objects.filter(name="discount").exists()

    good = copy.deepcopy(bad)
    good["columns"][5]["expression"] = "price * 0.9"
    patched = alice_api.patch(f"{TABLES}/orders", {"schema": good})
    assert patched.status_code == 200, patched.content
    assert patched.json()["resolved_schema"]["columns"][5]["data_type"] == "DECIMAL(12, 3)"


def test_another_user_cannot_alter_the_table_and_no_worker_is_asked(alice_api, bob_api, shop):
    created = alice_api.post(TABLES, {"name": "orders", "schema": ORDERS}).json()
    response = bob_api.patch(f"{TABLES}/orders", {"schema": with_expression("price * qtyy")})
    assert_error(response, 403, "PERMISSION_DENIED", "`shop`.`sales`.`orders`")
    assert alice_api.get(f"{TABLES}/orders").json() == created


def test_a_table_without_expressions_needs_no_worker(alice_api, make, settings):
    # No ``analyzer`` fixture: whether a worker runs or not, no question is sent.
    settings.TESSERA_SCHEMA_CHECK_QUEUE = f"tessera-nobody-{uuid.uuid4().hex[:8]}"
    settings.TESSERA_SCHEMA_CHECK_SECONDS = 0.5
    make.catalog("shop", default_database="sales")
    plain = {"columns": [{"name": "id", "data_type": "BIGINT"}]}
    response = alice_api.post(TABLES, {"name": "plain", "schema": plain})
    assert response.status_code == 201, response.content


@pytest.fixture
def no_worker_queue(settings: Any) -> Any:
    """Questions go to a queue on the real Redis that no worker consumes, and are waited
    for one second; the queue is deleted afterwards."""
    queue = f"tessera-nobody-{uuid.uuid4().hex[:8]}"
    settings.TESSERA_SCHEMA_CHECK_QUEUE = queue
    settings.TESSERA_SCHEMA_CHECK_SECONDS = 1
    yield queue
    client = redis.Redis.from_url(django_settings.CELERY_BROKER_URL)
    assert client.llen(queue) == 1  # the one question, never taken
    client.delete(queue)


def test_no_worker_in_time_is_503_and_nothing_is_stored(alice_api, make, no_worker_queue):
    make.catalog("shop", default_database="sales")
    response = alice_api.post(TABLES, {"name": "orders", "schema": ORDERS})
    error = assert_error(response, 503, "UNAVAILABLE", "No worker answered within 1 s")
    assert error["details"] == {"timeout_seconds": 1.0}
    nothing_stored("orders")


# --- views -----------------------------------------------------------------------------------


def test_a_view_without_a_schema_gets_the_derived_one(alice_api, shop):
    alice_api.post(TABLES, {"name": "orders", "schema": ORDERS})
    query = "SELECT id, total, upper(CAST(qty AS STRING)) AS q FROM orders WHERE qty > 1"
    response = alice_api.post(VIEWS, {"name": "big", "query": query})
    assert response.status_code == 201, response.content
    view = response.json()
    assert [(c["name"], c["data_type"]) for c in view["resolved_schema"]["columns"]] == [
        ("id", "BIGINT"),
        ("total", "DECIMAL(21, 2)"),
        ("q", "STRING"),
    ]
    assert view["schema"]["columns"][0] == {"name": "id", "kind": "physical", "data_type": "BIGINT"}
    stored = Table.objects.get(name="big", kind=Table.KIND_VIEW)
    assert list(Column.objects.filter(table=stored).values_list("name", flat=True)) == [
        "id",
        "total",
        "q",
    ]


def test_a_view_over_an_unknown_column_is_refused(alice_api, shop):
    alice_api.post(TABLES, {"name": "orders", "schema": ORDERS})
    response = alice_api.post(VIEWS, {"name": "v", "query": "SELECT id, qtyy FROM orders"})
    error = assert_error(response, 400, "VALIDATION_ERROR", "qtyy")
    assert error["details"]["field"] == "query"
    assert "__tessera" not in error["message"]  # the table's name, not the plan's alias
    nothing_stored("v")


def test_a_view_whose_declared_schema_differs_from_its_query_is_refused(alice_api, shop):
    body = {
        "name": "v",
        "query": "SELECT 'a' AS s",
        "schema": {"columns": [{"name": "s", "data_type": "INT"}]},
    }
    error = assert_error(
        alice_api.post(VIEWS, body), 400, "VALIDATION_ERROR", "declared INT", "STRING"
    )
    assert error["details"]["field"] == "schema.columns[0].data_type"
    nothing_stored("v")


def test_a_view_query_must_be_a_query(alice_api, shop):
    alice_api.post(TABLES, {"name": "orders", "schema": ORDERS})
    response = alice_api.post(VIEWS, {"name": "v", "query": "DROP TABLE orders"})
    assert_error(response, 400, "VALIDATION_ERROR", "must be a query")
    assert Table.objects.filter(name="orders").exists()
    nothing_stored("v")


def test_patching_a_view_query_derives_its_schema_again(alice_api, shop):
    alice_api.post(TABLES, {"name": "orders", "schema": ORDERS})
    alice_api.post(VIEWS, {"name": "v", "query": "SELECT id FROM orders"})
    bad = alice_api.patch(f"{VIEWS}/v", {"query": "SELECT nope FROM orders"})
    assert_error(bad, 400, "VALIDATION_ERROR", "nope")
    assert alice_api.get(f"{VIEWS}/v").json()["query"] == "SELECT id FROM orders"
    good = alice_api.patch(f"{VIEWS}/v", {"query": "SELECT price FROM orders"})
    assert good.status_code == 200, good.content
    columns = good.json()["resolved_schema"]["columns"]
    assert [(c["name"], c["data_type"]) for c in columns] == [("price", "DECIMAL(10, 2)")]


def test_a_view_with_no_worker_in_time_is_503(alice_api, make, no_worker_queue):
    make.catalog("shop", default_database="sales")
    response = alice_api.post(VIEWS, {"name": "v", "query": "SELECT 1 AS one"})
    assert_error(response, 503, "UNAVAILABLE", "No worker answered")
    nothing_stored("v")


def test_a_question_left_by_a_dead_web_process_is_removed_by_the_next(alice_api, shop):
    left = SchemaCheck.objects.create(kind="table", request={"schema": ORDERS})
    SchemaCheck.objects.filter(pk=left.pk).update(created_at=timezone.now() - timedelta(hours=2))
    recent = SchemaCheck.objects.create(kind="table", request={"schema": ORDERS})
    response = alice_api.post(TABLES, {"name": "orders", "schema": ORDERS})
    assert response.status_code == 201, response.content
    assert list(SchemaCheck.objects.values_list("pk", flat=True)) == [recent.pk]
