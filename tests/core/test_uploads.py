"""Temporary tables over uploads (``'connector' = 'upload'``) in the planner: the options
stored, the upload's columns when none are declared, the relation plan at use, and every
refusal (permanent tables, CTAS, paths, options, ids that are not the session's)."""

from __future__ import annotations

import dataclasses

import pytest

from core.errors import CoreError
from core.planner import Plan, UploadRef, plan_statement
from tests.core.test_planner_support import MemoryCatalog, context, sample_catalog

UPLOAD_ID = "6f1c2a4e-0d3b-4c5a-9e7f-1a2b3c4d5e6f"
UPLOAD = UploadRef(
    UPLOAD_ID,
    f"/data/uploads/0b6e1c9a-7f55-4d2e-8a37-5c1d2e3f4a5b/{UPLOAD_ID}",
    (("id", "BIGINT"), ("amount", "DECIMAL(38, 10)"), ("at", "TIMESTAMP")),
)


def lookup(text: str) -> UploadRef | None:
    return UPLOAD if text.strip().lower() == UPLOAD_ID else None


def plan(sql: str, catalog: MemoryCatalog | None = None, uploads: bool = True) -> Plan:
    ctx = dataclasses.replace(context(), uploads=lookup if uploads else None)
    return plan_statement(sql, catalog or sample_catalog(), ctx)


WITH = f"WITH ('connector' = 'upload', 'upload' = '{UPLOAD_ID}')"


def test_a_declared_schema_over_an_upload() -> None:
    result = plan(
        "CREATE TEMPORARY TABLE t (at TIMESTAMP, id BIGINT NOT NULL, twice AS id * 2, "
        "WATERMARK FOR at AS at - INTERVAL '5' SECOND, PRIMARY KEY (id) NOT ENFORCED) " + WITH
    )
    assert result.args["options"] == {"connector": "upload", "upload": UPLOAD_ID}
    assert result.args["temporary"] is True and result.needs_spark
    names = [c["name"] for c in result.args["schema"]["columns"]]
    assert names == ["at", "id", "twice"]


def test_a_declared_not_null_is_checked_against_the_uploads_first_null() -> None:
    with_nulls = dataclasses.replace(UPLOAD, first_nulls={"amount": 7})
    ctx = dataclasses.replace(context(), uploads=lambda text: with_nulls)
    # NOT NULL where the upload has no NULL, and a nullable column over one: planned.
    plan_statement(
        "CREATE TEMPORARY TABLE t (id BIGINT NOT NULL, amount DECIMAL(38, 10)) " + WITH,
        sample_catalog(),
        ctx,
    )
    with pytest.raises(CoreError, match="Column `AMOUNT` is declared NOT NULL but row 7") as e:
        plan_statement(
            "CREATE TEMPORARY TABLE t (AMOUNT DECIMAL(38, 10) NOT NULL) " + WITH,
            sample_catalog(),
            ctx,
        )
    assert e.value.details == {"column": "AMOUNT", "row": 7, "upload": UPLOAD_ID}


def test_a_not_null_column_is_marked_in_the_relation_plan() -> None:
    catalog = sample_catalog()
    catalog.add_table(
        "c.d.up",
        ["id BIGINT NOT NULL", "amount DECIMAL(38, 10)"],
        options={"connector": "upload", "upload": UPLOAD_ID},
        temporary=True,
    )
    relation = plan("SELECT id FROM up", catalog).relations[0]
    assert [(c.name, c.not_null) for c in relation.columns] == [("id", True), ("amount", False)]
    assert relation.columns[0].to_dict() == {"name": "id", "kind": "physical", "not_null": True}
    assert relation.columns[1].to_dict() == {"name": "amount", "kind": "physical"}
    assert type(relation.columns[0]).from_dict(relation.columns[0].to_dict()).not_null


def test_without_a_column_list_the_upload_columns_are_taken() -> None:
    result = plan(
        f"CREATE TEMPORARY TABLE t USING upload OPTIONS ('upload' = '{UPLOAD_ID.upper()}')"
    )
    assert result.args["options"] == {"connector": "upload", "upload": UPLOAD_ID}
    assert [(c["name"], c["data_type"]) for c in result.args["schema"]["columns"]] == [
        ("id", "BIGINT"),
        ("amount", "DECIMAL(38, 10)"),
        ("at", "TIMESTAMP"),
    ]
    assert not result.needs_spark


def test_reading_a_table_over_an_upload_reads_its_parquet_directory() -> None:
    catalog = sample_catalog()
    catalog.add_table(
        "c.d.up",
        ["id BIGINT", "amount DECIMAL(38, 10)"],
        options={"connector": "upload", "upload": UPLOAD_ID},
        temporary=True,
    )
    relation = plan("SELECT id FROM up", catalog).relations[0]
    assert (relation.format, relation.path, dict(relation.options)) == (
        "parquet",
        UPLOAD.path,
        {},
    )
    assert relation.physical_schema == "`id` BIGINT, `amount` DECIMAL(38, 10)"
    # The upload was deleted (or the plan is made in another session): refused at planning.
    with pytest.raises(CoreError, match=f"its upload '{UPLOAD_ID}' no longer exists"):
        plan("SELECT id FROM up", catalog, uploads=False)


@pytest.mark.parametrize(
    ("sql", "fragment"),
    [
        (f"CREATE TABLE t (id BIGINT) {WITH}", "Only a temporary table can read an upload"),
        (f"CREATE TABLE t {WITH} AS SELECT 1 AS id", "Only a temporary table can read an upload"),
        (
            f"CREATE TABLE t USING upload OPTIONS ('upload' = '{UPLOAD_ID}') AS SELECT 1 AS id",
            "Only a temporary table can read an upload",
        ),
        (
            "CREATE TEMPORARY TABLE t (id BIGINT) WITH ('connector' = 'upload')",
            "needs the option 'upload'",
        ),
        (
            "CREATE TEMPORARY TABLE t (id BIGINT) WITH ('connector' = 'upload', 'upload' = '../x')",
            "Upload '../x' does not exist in this session",
        ),
        (
            "CREATE TEMPORARY TABLE t (id BIGINT) WITH ('connector' = 'upload', "
            "'upload' = '00000000-0000-0000-0000-000000000000')",
            "does not exist in this session",
        ),
        (
            f"CREATE TEMPORARY TABLE t (id BIGINT) {WITH} LOCATION '/data/uploads'",
            "drop LOCATION and 'path'",
        ),
        (
            f"CREATE TEMPORARY TABLE t (id BIGINT) USING upload OPTIONS ('upload' = "
            f"'{UPLOAD_ID}', 'path' = '/etc')",
            "drop LOCATION and 'path'",
        ),
        (
            f"CREATE TEMPORARY TABLE t (id BIGINT) USING upload OPTIONS ('upload' = "
            f"'{UPLOAD_ID}', 'fs.defaultFS' = 'hdfs://x')",
            "takes only the option 'upload'",
        ),
        (
            f"CREATE TEMPORARY TABLE t (id BIGINT) {WITH} PARTITIONED BY (id)",
            "cannot be partitioned",
        ),
        (
            "CREATE TEMPORARY TABLE t USING parquet LOCATION '/x'",
            "needs a column list",
        ),
    ],
)
def test_refusals(sql: str, fragment: str) -> None:
    with pytest.raises(CoreError) as raised:
        plan(sql)
    assert fragment in raised.value.message, raised.value.message


def test_a_session_without_uploads_refuses_every_id() -> None:
    with pytest.raises(CoreError, match="does not exist in this session"):
        plan(f"CREATE TEMPORARY TABLE t (id BIGINT) {WITH}", uploads=False)
