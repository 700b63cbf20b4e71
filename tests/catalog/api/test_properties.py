"""The FLIP-164 catalog-properties encoding: read it, create from it, refuse bad keys."""

from __future__ import annotations

import pytest

from catalog.models import Column, Table
from tests.conftest import API, assert_error
from tests.schemas import RICH_SCHEMA

pytestmark = pytest.mark.django_db

TABLES = f"{API}/catalogs/demo/databases/default/tables"

RICH_PROPERTIES = {
    "schema.0.name": "id",
    "schema.0.data-type": "BIGINT",
    "schema.1.name": "price",
    "schema.1.data-type": "DECIMAL(10, 2)",
    "schema.2.name": "qty",
    "schema.2.data-type": "INT",
    "schema.3.name": "total",
    "schema.3.expr": "price * qty",
    "schema.4.name": "file",
    "schema.4.data-type": "STRING",
    "schema.4.metadata": "file_path",
    "schema.4.virtual": "true",
    "schema.5.name": "ts",
    "schema.5.data-type": "TIMESTAMP",
    "schema.watermark.0.rowtime": "ts",
    "schema.watermark.0.strategy.expr": "ts - INTERVAL 5 SECONDS",
    "schema.primary-key.name": "pk_t",
    "schema.primary-key.columns": "id",
    "format": "parquet",
}


@pytest.fixture
def demo(make, analyzer):
    make.catalog("demo")


def test_properties_of_a_table_are_the_flip164_encoding(alice_api, make, demo):
    make.table("demo", "default", "t", schema=RICH_SCHEMA)
    response = alice_api.get(f"{TABLES}/T/properties")
    assert response.status_code == 200
    assert response.json() == {"properties": RICH_PROPERTIES}


def test_properties_round_trip_into_an_equal_table(alice_api, make, demo, storage):
    (storage.external / "orders").mkdir()
    original = make.table(
        "demo",
        "default",
        "t",
        schema={
            **RICH_SCHEMA,
            "columns": [
                *RICH_SCHEMA["columns"],
                {"name": "day", "kind": "physical", "data_type": "DATE", "comment": "a, b"},
            ],
        },
        options={"connector": "csv", "path": f"{storage.external}/orders", "header": "true"},
        partition_by=["day"],
    )
    properties = alice_api.get(f"{TABLES}/t/properties").json()["properties"]
    assert properties["partition.keys.0.name"] == "day"
    assert properties["schema.6.comment"] == "a, b"
    assert properties["connector"] == "csv"
    assert properties["header"] == "true"

    # Two tables may not share a path (docs/security.md §2): the copy takes it over.
    assert alice_api.delete(f"{TABLES}/t").status_code == 204
    response = alice_api.post(TABLES, {"name": "t2", "properties": properties})
    assert response.status_code == 201, response.content
    copy = response.json()
    for field in ("schema", "resolved_schema", "options", "partition_by", "managed"):
        assert copy[field] == original[field], field
    assert copy["name"] == "t2"
    assert alice_api.get(f"{TABLES}/t2/properties").json()["properties"] == properties
    assert Column.objects.filter(table__name="t2").count() == 7


def test_create_from_properties_of_a_managed_table(alice_api, demo):
    response = alice_api.post(TABLES, {"name": "t", "properties": RICH_PROPERTIES})
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["schema"] == RICH_SCHEMA
    assert body["options"] == {"format": "parquet"}
    assert body["managed"] is True
    assert body["resolved_schema"]["columns"][0]["data_type"] == "BIGINT NOT NULL"


@pytest.mark.parametrize(
    ("change", "fragment", "key"),
    [
        ({"schema.0.data-typ": "INT"}, "Unknown property key 'schema.0.data-typ'.", None),
        ({"schema.7.name": "x"}, "'schema.7.name' skips index 6", "schema.7.name"),
        ({"schema.01.name": "x"}, "'schema.01.name' has an invalid index '01'", None),
        ({"schema.4.virtual": "yes"}, "'schema.4.virtual' must be 'true' or 'false'", None),
        ({"schema.0.data-type": "INTEGR"}, "Unknown data type 'INTEGR'", "schema.0.data-type"),
        ({"schema.primary-key.columns": "id,`qty"}, "Unclosed backtick", None),
        ({"schema.watermark.0.rowtim": "ts"}, "'schema.watermark.0.rowtim'", None),
        ({"partition.keys.0.nam": "x"}, "'partition.keys.0.nam'", None),
    ],
)
def test_invalid_properties_are_refused_naming_the_key(alice_api, demo, change, fragment, key):
    properties = {**RICH_PROPERTIES, **change}
    response = alice_api.post(TABLES, {"name": "t", "properties": properties})
    error = assert_error(response, 400, "VALIDATION_ERROR", fragment)
    expected_key = key or next(iter(change))
    assert error["details"]["key"] == expected_key
    assert not Table.objects.exists()
    assert not Column.objects.exists()


def test_missing_column_name_in_properties(alice_api, demo):
    properties = {k: v for k, v in RICH_PROPERTIES.items() if k != "schema.2.name"}
    error = assert_error(
        alice_api.post(TABLES, {"name": "t", "properties": properties}),
        400,
        "VALIDATION_ERROR",
        "Property 'schema.2.name' is missing.",
    )
    assert error["details"]["key"] == "schema.2.name"


def test_properties_that_decode_to_an_invalid_schema_are_refused(alice_api, demo):
    properties = {**RICH_PROPERTIES, "schema.primary-key.columns": "total"}
    assert_error(
        alice_api.post(TABLES, {"name": "t", "properties": properties}),
        400,
        "VALIDATION_ERROR",
        "Primary key column `total` is a computed column",
    )
    properties = {**RICH_PROPERTIES, "format": "avro"}
    assert_error(
        alice_api.post(TABLES, {"name": "t", "properties": properties}),
        400,
        "VALIDATION_ERROR",
        "Unknown format 'avro'",
    )
    assert not Table.objects.exists()


def test_property_values_must_be_strings(alice_api, demo):
    properties = {**RICH_PROPERTIES, "schema.4.virtual": True}
    error = assert_error(
        alice_api.post(TABLES, {"name": "t", "properties": properties}),
        400,
        "VALIDATION_ERROR",
        "'properties.schema.4.virtual' must be a string",
    )
    assert error["details"]["field"] == "properties.schema.4.virtual"


def test_properties_and_schema_together_are_refused(alice_api, demo):
    response = alice_api.post(
        TABLES, {"name": "t", "properties": RICH_PROPERTIES, "schema": RICH_SCHEMA}
    )
    assert_error(response, 400, "VALIDATION_ERROR", "either 'properties' or 'schema'")
    missing = alice_api.post(TABLES, {"name": "t"})
    assert_error(missing, 400, "VALIDATION_ERROR", "A table needs a schema.")
    assert not Table.objects.exists()


def test_properties_of_a_missing_table_or_a_view_is_404(alice_api, make, demo):
    assert_error(alice_api.get(f"{TABLES}/nope/properties"), 404, "NOT_FOUND", "`nope`")
    make.view("demo", "default", "v")
    assert_error(alice_api.get(f"{TABLES}/v/properties"), 404, "NOT_FOUND", "is a view")
