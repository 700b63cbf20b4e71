"""Tables through the REST API: create with the full FLIP-164 schema and read back the
resolved schema; list, patch and the table/view namespace."""

from __future__ import annotations

import copy

import pytest

from catalog.models import Column, Table
from tests.conftest import API, assert_error, simple_schema
from tests.schemas import RICH_SCHEMA

pytestmark = pytest.mark.django_db

TABLES = f"{API}/catalogs/demo/databases/sales/tables"


@pytest.fixture
def sales(make):
    make.catalog("demo")
    make.database("demo", "sales")


def test_create_and_read_back_a_table_with_every_column_kind(alice_api, sales, analyzer):
    response = alice_api.post(
        TABLES, {"name": "Orders", "comment": "all orders", "schema": RICH_SCHEMA}
    )
    assert response.status_code == 201, response.content
    created = response.json()
    fetched = alice_api.get(f"{TABLES}/orders").json()
    assert fetched == created

    assert fetched["catalog"] == "demo"
    assert fetched["database"] == "sales"
    assert fetched["name"] == "Orders"
    assert fetched["kind"] == "table"
    assert fetched["comment"] == "all orders"
    assert fetched["managed"] is True
    assert fetched["options"] == {"format": "parquet"}
    assert fetched["partition_by"] == []
    assert fetched["status"] == "active"
    assert fetched["created_by"] == "alice"

    # The declared schema comes back as declared.
    assert fetched["schema"] == RICH_SCHEMA

    resolved = fetched["resolved_schema"]
    assert resolved["columns"] == [
        # The primary key column becomes NOT NULL.
        {"name": "id", "kind": "physical", "data_type": "BIGINT NOT NULL", "nullable": False},
        {"name": "price", "kind": "physical", "data_type": "DECIMAL(10, 2)", "nullable": True},
        {"name": "qty", "kind": "physical", "data_type": "INT", "nullable": True},
        # Computed columns are typed by Spark's analyzer (a worker) before the table is
        # stored: DECIMAL(10, 2) * INT is Spark's DECIMAL(21, 2).
        {
            "name": "total",
            "kind": "computed",
            "data_type": "DECIMAL(21, 2)",
            "nullable": True,
            "expression": "price * qty",
        },
        {
            "name": "file",
            "kind": "metadata",
            "data_type": "STRING",
            "nullable": True,
            "metadata_key": "file_path",
            "virtual": True,
        },
        {"name": "ts", "kind": "physical", "data_type": "TIMESTAMP", "nullable": True},
    ]
    assert resolved["watermarks"] == [
        {"column": "ts", "expression": "ts - INTERVAL 5 SECONDS", "data_type": "TIMESTAMP"}
    ]
    assert resolved["primary_key"] == {"name": "pk_t", "columns": ["id"]}
    assert resolved["expressions_resolved"] is True

    # The column copy used by search matches the resolved schema.
    table = Table.objects.get(name="Orders")
    assert list(Column.objects.filter(table=table).values_list("name", "kind", "data_type")) == [
        ("id", "physical", "BIGINT NOT NULL"),
        ("price", "physical", "DECIMAL(10, 2)"),
        ("qty", "physical", "INT"),
        ("total", "computed", "DECIMAL(21, 2)"),
        ("file", "metadata", "STRING"),
        ("ts", "physical", "TIMESTAMP"),
    ]


def test_schema_defaults_are_filled_in(alice_api, sales):
    schema = {
        "columns": [
            {"name": "ID", "data_type": "long"},  # kind defaults to physical, aliases resolve
            {"name": "amount", "data_type": "numeric(12,3)"},
            {"name": "file_size", "kind": "metadata", "data_type": "BIGINT"},  # key = name
        ],
        "primary_key": {"columns": ["id"]},  # matched case-insensitively; name generated
    }
    body = alice_api.post(TABLES, {"name": "t", "schema": schema}).json()
    assert body["schema"]["columns"] == [
        {"name": "ID", "kind": "physical", "data_type": "BIGINT"},
        {"name": "amount", "kind": "physical", "data_type": "DECIMAL(12, 3)"},
        {
            "name": "file_size",
            "kind": "metadata",
            "data_type": "BIGINT",
            "metadata_key": None,
            "virtual": False,
        },
    ]
    resolved = body["resolved_schema"]
    assert resolved["primary_key"] == {"name": "PK_ID", "columns": ["ID"]}
    assert resolved["columns"][0]["data_type"] == "BIGINT NOT NULL"
    assert resolved["columns"][2]["metadata_key"] == "file_size"
    assert resolved["columns"][2]["virtual"] is False
    # No expression anywhere: nothing awaits Spark.
    assert resolved["expressions_resolved"] is True
    assert resolved["watermarks"] == []


def test_partitioned_table(alice_api, sales):
    schema = simple_schema("id BIGINT", "Day DATE", "region STRING")
    body = alice_api.post(
        TABLES, {"name": "t", "schema": schema, "partition_by": ["day", "REGION"]}
    ).json()
    assert body["partition_by"] == ["Day", "region"]  # the columns' own spelling


def test_list_tables_in_name_order_without_views(alice_api, make, sales, analyzer):
    for name in ("b", "C", "a"):
        make.table("demo", "sales", name)
    make.view("demo", "sales", "v")
    body = alice_api.get(TABLES).json()
    assert [t["name"] for t in body["items"]] == ["a", "b", "C"]
    assert body["next_page_token"] is None
    assert all(t["kind"] == "table" for t in body["items"])
    assert body["items"][0] == alice_api.get(f"{TABLES}/a").json()


def test_tables_and_views_share_a_namespace(alice_api, make, sales, analyzer):
    make.view("demo", "sales", "V1")
    clash = alice_api.post(TABLES, {"name": "v1", "schema": simple_schema()})
    assert_error(clash, 409, "ALREADY_EXISTS", "View `demo`.`sales`.`V1` already exists.")
    assert_error(alice_api.get(f"{TABLES}/v1"), 404, "NOT_FOUND", "`demo`.`sales`.`v1` is a view")


def test_patch_table_schema_comment_and_partitioning(alice_api, make, sales, analyzer):
    make.table("demo", "sales", "t", schema=simple_schema("id BIGINT", "day DATE"))
    schema = copy.deepcopy(RICH_SCHEMA)
    schema["columns"].append({"name": "day", "kind": "physical", "data_type": "DATE"})
    response = alice_api.patch(
        f"{TABLES}/t", {"comment": "now rich", "schema": schema, "partition_by": ["day"]}
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["comment"] == "now rich"
    assert body["schema"] == schema
    assert body["partition_by"] == ["day"]
    assert [c["name"] for c in body["resolved_schema"]["columns"]][-1] == "day"
    assert alice_api.get(f"{TABLES}/t").json() == body
    table = Table.objects.get(name="t")
    assert Column.objects.filter(table=table).count() == len(schema["columns"])


def test_patch_table_is_validated_and_changes_nothing_when_refused(alice_api, make, sales):
    make.table("demo", "sales", "t", schema=simple_schema("id BIGINT", "day DATE"))
    before = alice_api.get(f"{TABLES}/t").json()
    bad_schema = {"columns": [{"name": "a", "data_type": "INT"}, {"name": "A", "data_type": "INT"}]}
    assert_error(
        alice_api.patch(f"{TABLES}/t", {"comment": "x", "schema": bad_schema}),
        400,
        "VALIDATION_ERROR",
        "Column `a` is declared twice (as `a` and `A`).",
    )
    # Dropping a partition column from the schema leaves the partitioning dangling: refused.
    alice_api.patch(f"{TABLES}/t", {"partition_by": ["day"]})
    assert_error(
        alice_api.patch(f"{TABLES}/t", {"schema": simple_schema("id BIGINT")}),
        400,
        "VALIDATION_ERROR",
        "Partition column `day` does not exist. Available columns: id.",
    )
    # A managed table cannot become external (its data would have to move).
    error = assert_error(
        alice_api.patch(f"{TABLES}/t", {"options": {"connector": "csv", "path": "/anything"}}),
        400,
        "VALIDATION_ERROR",
    )
    assert error["details"]["field"].startswith("options")
    after = alice_api.get(f"{TABLES}/t").json()
    assert after["schema"] == before["schema"]
    assert after["options"] == {"format": "parquet"}
    assert after["comment"] == ""


def test_patch_managed_table_format(alice_api, make, sales):
    make.table("demo", "sales", "t")
    body = alice_api.patch(f"{TABLES}/t", {"options": {"format": "ORC"}}).json()
    assert body["options"] == {"format": "orc"}
    assert body["managed"] is True
