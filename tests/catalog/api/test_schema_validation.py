"""Every refused table is a 400 VALIDATION_ERROR in the contract's shape, whose message
names the offending column or type, and after which nothing at all was written."""

from __future__ import annotations

import os
from typing import Any

import pytest

from catalog.models import Column, Table
from tests.conftest import API, assert_error

pytestmark = pytest.mark.django_db

TABLES = f"{API}/catalogs/demo/databases/default/tables"


def cols(*specs: dict[str, Any] | str) -> list[dict[str, Any]]:
    """Columns from "name TYPE" strings (physical) or full dicts."""
    out: list[dict[str, Any]] = []
    for spec in specs:
        if isinstance(spec, str):
            name, data_type = spec.split(" ", 1)
            out.append({"name": name, "kind": "physical", "data_type": data_type})
        else:
            out.append(spec)
    return out


TOTAL = {"name": "total", "kind": "computed", "expression": "a * 2"}
FILE = {"name": "f", "kind": "metadata", "data_type": "STRING", "metadata_key": "file_path"}


def schema(*specs: dict[str, Any] | str, **extra: Any) -> dict[str, Any]:
    return {"columns": cols(*specs), **extra}


# (body, message fragments, expected details.field or None)
SCHEMA_CASES: dict[str, tuple[dict[str, Any], tuple[str, ...], str | None]] = {
    "duplicate column, other case": (
        {"schema": schema("id INT", "name STRING", "ID BIGINT")},
        ("Column `id` is declared twice (as `id` and `ID`).",),
        "schema.columns[2].name",
    ),
    "unknown type": (
        {"schema": schema("id INTEGR")},
        ("Unknown data type 'INTEGR'",),
        "schema.columns[0].data_type",
    ),
    "malformed type": (
        {"schema": schema("id INT", "price DECIMAL(10,")},
        ("'DECIMAL(10,'",),
        "schema.columns[1].data_type",
    ),
    "unclosed array type": (
        {"schema": schema("tags ARRAY<STRING")},
        ("Expected '>'", "'ARRAY<STRING'"),
        "schema.columns[0].data_type",
    ),
    "decimal precision out of range": (
        {"schema": schema("price DECIMAL(40, 2)")},
        ("DECIMAL precision must be between 1 and 38, got 40.",),
        "schema.columns[0].data_type",
    ),
    "decimal scale above precision": (
        {"schema": schema("price DECIMAL(5, 7)")},
        ("DECIMAL",),
        "schema.columns[0].data_type",
    ),
    "pk on a missing column": (
        {"schema": schema("a INT", "b INT", primary_key={"columns": ["c"]})},
        ("Primary key column `c` does not exist. Available columns: a, b.",),
        "schema.primary_key.columns[0]",
    ),
    "pk on a computed column": (
        {"schema": schema("a INT", TOTAL, primary_key={"columns": ["total"]})},
        ("Primary key column `total` is a computed column",),
        "schema.primary_key.columns[0]",
    ),
    "pk on a metadata column": (
        {"schema": schema("a INT", FILE, primary_key={"columns": ["f"]})},
        ("Primary key column `f` is a metadata column",),
        "schema.primary_key.columns[0]",
    ),
    "pk column repeated": (
        {"schema": schema("a INT", "b INT", primary_key={"columns": ["a", "b", "A"]})},
        ("Primary key column `A` is listed twice.",),
        "schema.primary_key.columns[2]",
    ),
    "pk without columns": (
        {"schema": schema("a INT", primary_key={"columns": []})},
        ("A primary key needs at least one column.",),
        "schema.primary_key.columns",
    ),
    "two watermarks": (
        {
            "schema": schema(
                "ts TIMESTAMP",
                "ts2 TIMESTAMP",
                watermarks=[
                    {"column": "ts", "expression": "ts"},
                    {"column": "ts2", "expression": "ts2"},
                ],
            )
        },
        ("at most one watermark, but 2 are declared",),
        "schema.watermarks",
    ),
    "watermark on a missing column": (
        {
            "schema": schema(
                "id INT", "ts TIMESTAMP", watermarks=[{"column": "tz", "expression": "tz"}]
            )
        },
        ("Watermark column `tz` does not exist. Available columns: id, ts.",),
        "schema.watermarks[0].column",
    ),
    "watermark on a non-timestamp column": (
        {"schema": schema("ts STRING", watermarks=[{"column": "ts", "expression": "ts"}])},
        ("Watermark column `ts` must be of type TIMESTAMP, but is STRING.",),
        "schema.watermarks[0].column",
    ),
    "watermark with an empty expression": (
        {"schema": schema("ts TIMESTAMP", watermarks=[{"column": "ts", "expression": " "}])},
        ("watermark expression for column `ts` must not be empty",),
        "schema.watermarks[0].expression",
    ),
    "unknown metadata key": (
        {
            "schema": schema(
                "id INT",
                {
                    "name": "f",
                    "kind": "metadata",
                    "data_type": "STRING",
                    "metadata_key": "file_pth",
                },
            )
        },
        ("Unknown metadata key 'file_pth' for column `f`.", "file_path"),
        "schema.columns[1].metadata_key",
    ),
    "metadata column named after no key": (
        {"schema": schema({"name": "origin", "kind": "metadata", "data_type": "STRING"})},
        ("Unknown metadata key 'origin' for column `origin`.",),
        "schema.columns[0].name",
    ),
    "metadata type mismatch": (
        {
            "schema": schema(
                {"name": "f", "kind": "metadata", "data_type": "INT", "metadata_key": "file_size"}
            )
        },
        ("Metadata column `f` is declared as INT but metadata key 'file_size' provides BIGINT.",),
        "schema.columns[0].data_type",
    ),
    "empty column name": (
        {"schema": schema({"name": "", "data_type": "INT"})},
        ("A column name must not be empty.",),
        "schema.columns[0].name",
    ),
    "whitespace column name": (
        {"schema": schema("a INT", {"name": "  ", "data_type": "INT"})},
        ("A column name must not be only whitespace.",),
        "schema.columns[1].name",
    ),
    "computed column without expression": (
        {"schema": schema({"name": "c", "kind": "computed", "expression": ""})},
        ("Computed column `c` needs a non-empty expression.",),
        "schema.columns[0].expression",
    ),
    "unknown column kind": (
        {"schema": schema({"name": "c", "kind": "virtual", "data_type": "INT"})},
        ("Unknown column kind 'virtual' for column `c`",),
        "schema.columns[0].kind",
    ),
    "missing data type": (
        {"schema": schema({"name": "c", "kind": "physical"})},
        ("'columns[0].data_type' is required",),
        "schema.columns[0].data_type",
    ),
    "no columns": ({"schema": {"columns": []}}, ("at least one column",), "schema.columns"),
    "schema not an object": ({"schema": ["id INT"]}, ("schema must be a JSON object",), "schema"),
    "empty table name": (
        {"name": "", "schema": schema("a INT")},
        ("A table name must not be empty.",),
        None,
    ),
    "whitespace table name": (
        {"name": " \t ", "schema": schema("a INT")},
        ("A table name must not be only whitespace.",),
        None,
    ),
    "partition by a missing column": (
        {"schema": schema("a INT", "b INT"), "partition_by": ["c"]},
        ("Partition column `c` does not exist. Available columns: a, b.",),
        "partition_by[0]",
    ),
    "partition by a computed column": (
        {"schema": schema("a INT", TOTAL), "partition_by": ["total"]},
        ("Partition column `total` must be a physical column, not a computed column.",),
        "partition_by[0]",
    ),
    "partition column twice": (
        {"schema": schema("a INT"), "partition_by": ["a", "A"]},
        ("Partition column `A` is listed twice.",),
        "partition_by[1]",
    ),
    "unknown format": (
        {"schema": schema("a INT"), "options": {"format": "avro"}},
        ("Unknown format 'avro'. Supported: parquet, csv, json, orc, text.",),
        "options.format",
    ),
    "unknown connector": (
        {"schema": schema("a INT"), "options": {"connector": "kafka", "path": "/x"}},
        ("Unknown connector 'kafka'",),
        "options.connector",
    ),
    "connector without path": (
        {"schema": schema("a INT"), "options": {"connector": "csv"}},
        ("'path' is missing",),
        "options.path",
    ),
    "path without connector": (
        {"schema": schema("a INT"), "options": {"path": "{root}/data"}},
        ("'connector' is missing",),
        "options.connector",
    ),
    "option under a reserved prefix": (
        {"schema": schema("a INT"), "options": {"schema.0.name": "x"}},
        ("'schema.0.name'", "reserved"),
        "options.schema.0.name",
    ),
    "option value not a string": (
        {"schema": schema("a INT"), "options": {"format": 3}},
        ("'options.format' must be a string",),
        "options.format",
    ),
}


def _fill(value: Any, root: str) -> Any:
    if isinstance(value, str):
        return value.replace("{root}", root)
    if isinstance(value, dict):
        return {k: _fill(v, root) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, root) for v in value]
    return value


@pytest.fixture
def demo(make):
    make.catalog("demo")


@pytest.fixture
def refuse(alice_api, storage, django_capture_on_commit_callbacks, demo):
    """POST a table that must be refused; check the error and that nothing was written."""

    def run(body: dict[str, Any], *fragments: str, field: str | None = None) -> dict[str, Any]:
        body = {"name": "t", **body}
        with django_capture_on_commit_callbacks(execute=True) as callbacks:
            response = alice_api.post(TABLES, body)
        error = assert_error(response, 400, "VALIDATION_ERROR", *fragments)
        if field is not None:
            assert error["details"]["field"] == field, error
        # Nothing was written: no table row, no column copy, no directory, nothing scheduled.
        assert callbacks == []
        assert not Table.objects.exists()
        assert not Column.objects.exists()
        assert not storage.warehouse.exists()
        if body["name"].strip():
            assert_error(alice_api.get(f"{TABLES}/{body['name']}"), 404, "NOT_FOUND")
        return error

    return run


@pytest.mark.parametrize("case", list(SCHEMA_CASES))
def test_invalid_table_is_refused_and_nothing_is_written(refuse, storage, case):
    body, fragments, field = SCHEMA_CASES[case]
    refuse(_fill(body, str(storage.external)), *fragments, field=field)


def test_type_errors_carry_the_column_in_details(refuse):
    error = refuse({"schema": schema("id INT", "price DECIMAL(10,")})
    assert error["details"]["column"] == "price"
    assert error["details"]["text"] == "DECIMAL(10,"
    assert error["details"]["position"] == 11


def test_path_outside_the_storage_roots_is_refused(refuse, storage, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    refuse(
        {"schema": schema("a INT"), "options": {"connector": "csv", "path": str(outside)}},
        f"The path '{outside}' lies outside the storage roots",
        str(storage.external.resolve()),
        field="options.path",
    )


def test_path_with_dot_dot_is_refused_even_when_it_stays_inside(refuse, storage):
    (storage.external / "a").mkdir()
    path = f"{storage.external}/a/../a"
    refuse(
        {"schema": schema("a INT"), "options": {"connector": "csv", "path": path}},
        "must not contain '..' segments",
        field="options.path",
    )
    refuse(
        {
            "schema": schema("a INT"),
            "options": {"connector": "csv", "path": f"{storage.external}/../etc"},
        },
        "'..'",
    )


def test_relative_and_remote_paths_are_refused(refuse, storage):
    refuse(
        {"schema": schema("a INT"), "options": {"connector": "csv", "path": "data/x.csv"}},
        "must be absolute",
    )
    refuse(
        {"schema": schema("a INT"), "options": {"connector": "csv", "path": "s3://bucket/x"}},
        "is not a local path",
    )
    refuse(
        {"schema": schema("a INT"), "options": {"connector": "csv", "path": "  "}},
        "must not be empty",
    )


def test_symlink_inside_a_root_pointing_outside_is_refused(refuse, storage, tmp_path):
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "passwords.csv").write_text("user,password\n")
    link = storage.external / "innocent"
    os.symlink(secret, link)
    for path in (str(link), f"{link}/passwords.csv", f"{link}/not-yet-there"):
        refuse(
            {"schema": schema("a INT"), "options": {"connector": "csv", "path": path}},
            "lies outside the storage roots",
            field="options.path",
        )


def test_names_with_control_characters_are_refused(refuse):
    refuse({"name": "a\x01b", "schema": schema("a INT")}, "control characters")
    # Refused where the body enters, naming the field (core.storable).
    refuse({"name": "a\x00b", "schema": schema("a INT")}, "The field 'name' holds U+0000 (NUL)")
    refuse({"schema": schema({"name": "a\tb", "data_type": "INT"})}, "control characters")


def test_the_first_error_wins_in_declaration_order(refuse):
    error = refuse(
        {"schema": schema("a INTEGR", "a INT", primary_key={"columns": ["zzz"]})},
        "Unknown data type 'INTEGR'",
    )
    assert error["details"]["column"] == "a"


def test_refused_create_does_not_disturb_existing_tables(alice_api, make, storage):
    make.catalog("demo")
    kept = make.table("demo", "default", "kept")
    response = alice_api.post(
        TABLES, {"name": "t", "schema": schema("a INT", "A INT"), "options": {}}
    )
    assert_error(response, 400, "VALIDATION_ERROR", "`a`")
    assert list(Table.objects.values_list("name", flat=True)) == ["kept"]
    assert list(Column.objects.values_list("table__name", flat=True)) == ["kept"]
    assert alice_api.get(f"{TABLES}/kept").json() == kept
