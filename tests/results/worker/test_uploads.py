"""Uploads on a real worker: Arrow data sent to a session, read through a temporary table
with a declared schema (reordered columns, a computed column, a watermark) and compared with
what plain PySpark reads of the same Arrow data; kept with CTAS; gone with the session; and
the worker's own check that a job reads only its session's uploads."""

from __future__ import annotations

import copy
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest
from django.conf import settings

from catalog import services as catalog_services
from jobs.models import Session, Upload
from tests.conftest import API
from tests.results.api.test_uploads import EVERY_TYPE, ipc, post
from tests.worker_helpers import (
    Pipeline,
    open_session,
    planned,
    result_rows,
    statement,
    submit_plan,
    wait_job,
)

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker"),
]

# Every column as text both sides agree on (the results API's JSON is not the point here).
QUERY = (
    "SELECT CAST(id AS STRING), CAST(doubled AS STRING), CAST(price AS STRING), "
    "CAST(`at` AS STRING), CAST(`local` AS STRING), CAST(`day` AS STRING), hex(raw), name, "
    "to_json(items), to_json(tags), CAST(`count` AS STRING), kind, CAST(small AS STRING), "
    "CAST(flag AS STRING) FROM {table} ORDER BY id NULLS FIRST"
)

# Another order than the upload's, a computed column and a watermark.
DECLARED = (
    "(name STRING, id BIGINT, price DECIMAL(38, 10), `at` TIMESTAMP, `local` TIMESTAMP_NTZ, "
    "`day` DATE, raw BINARY, items ARRAY<STRUCT<k: STRING, v: DOUBLE>>, tags MAP<STRING, INT>, "
    "`count` DECIMAL(20, 0), kind STRING, small TINYINT, flag BOOLEAN, doubled AS id * 2, "
    "WATERMARK FOR `at` AS `at` - INTERVAL '5' SECOND)"
)


def upload(pipeline: Pipeline, table: pa.Table) -> dict[str, Any]:
    response = post(pipeline.api, pipeline.session_id, ipc(table))
    assert response.status_code == 201, response.content
    return dict(response.json())


def uploads_dir() -> Path:
    return Path(settings.UPLOADS_DIR)


@pytest.fixture
def catalog() -> str:
    return f"up{uuid.uuid4().hex[:6]}"


@pytest.fixture
def alice_sql(alice_sql: Pipeline, catalog: str) -> Pipeline:
    """The shared ``alice_sql`` in her own catalog ``catalog`` (database ``d``)."""
    catalog_services.catalog_create(user=alice_sql.user, name=catalog, default_database="d")
    alice_sql.ok(f"USE {catalog}.d")
    return alice_sql


def test_an_upload_through_a_declared_schema_equals_plain_spark(
    alice_sql: Pipeline, catalog: str, plain_spark: Any, tmp_path: Path
):
    sent = upload(alice_sql, EVERY_TYPE)
    alice_sql.ok(
        f"CREATE TEMPORARY TABLE up {DECLARED} "
        f"WITH ('connector' = 'upload', 'upload' = '{sent['id']}')"
    )
    rows = alice_sql.rows(QUERY.format(table="up"))

    # Plain Spark over the same Arrow data, written by pyarrow as parquet Spark reads.
    plain = tmp_path / "plain"
    plain.mkdir()
    pq.write_table(EVERY_TYPE, plain / "data.parquet", coerce_timestamps="us")
    plain_spark.read.parquet(str(plain)).selectExpr(
        "*", "id * 2 AS doubled"
    ).createOrReplaceTempView("p_up")
    expected = [list(r) for r in plain_spark.sql(QUERY.format(table="p_up")).collect()]
    assert rows == expected
    assert len(rows) == 3
    assert rows[1][2] == "12345678901234567890.1234567890"  # DECIMAL(38, 10) whole

    # Without a column list the table takes the upload's columns.
    alice_sql.ok(
        f"CREATE TEMPORARY TABLE bare WITH ('connector' = 'upload', 'upload' = '{sent['id']}')"
    )
    assert alice_sql.rows("SELECT count(*), count(price), max(`day`) FROM bare") == [
        [3, 2, "2024-02-29"]
    ]

    # CTAS keeps the data past the session.
    kept = f"{catalog}.d.kept"
    alice_sql.ok(f"CREATE TABLE {kept} AS SELECT * FROM up")
    before = alice_sql.rows(f"SELECT count(*), sum(doubled), max(name) FROM {kept}")
    assert before == [[3, 6, "ü"]]

    where = uploads_dir() / alice_sql.session_id / sent["id"]
    assert (where / "part-00000.parquet").is_file()
    assert alice_sql.api.delete(f"{API}/sessions/{alice_sql.session_id}").status_code == 204
    assert not (uploads_dir() / alice_sql.session_id).exists()
    assert not Upload.objects.filter(pk=sent["id"]).exists()

    again = open_session(alice_sql.api)
    job = wait_job(
        alice_sql.api,
        statement(alice_sql.api, again, f"SELECT count(*), sum(doubled), max(name) FROM {kept}")[
            "id"
        ],
        timeout=120,
    )
    assert job["status"] == "FINISHED", job
    assert result_rows(alice_sql.api, job["id"])[1] == before


def test_the_worker_reads_only_the_jobs_own_sessions_uploads(alice_sql: Pipeline):
    sent = upload(alice_sql, pa.table({"a": [1, 2, 3]}))
    alice_sql.ok(
        f"CREATE TEMPORARY TABLE t WITH ('connector' = 'upload', 'upload' = '{sent['id']}')"
    )
    plan = planned(alice_sql.session, "SELECT sum(a) FROM t")
    assert alice_sql.rows("SELECT sum(a) FROM t") == [[6]]
    # Metadata columns and a primary key, as over any parquet table.
    alice_sql.ok(
        "CREATE TEMPORARY TABLE m (a BIGINT, f STRING METADATA FROM 'file_name' VIRTUAL, "
        "PRIMARY KEY (a) NOT ENFORCED) "
        f"USING upload OPTIONS ('upload' = '{sent['id']}')"
    )
    assert alice_sql.rows("SELECT DISTINCT f FROM m") == [["part-00000.parquet"]]
    relation = plan["relations"][0]
    own = f"{uploads_dir()}/{alice_sql.session_id}/{sent['id']}"
    assert relation["path"] == own and relation["format"] == "parquet"

    def refused(path: str, *fragments: str, session: Any = None) -> None:
        forged = copy.deepcopy(plan)
        forged["relations"][0]["path"] = path
        job = submit_plan(alice_sql.user, forged, session=session or alice_sql.session)
        done = wait_job(alice_sql.api, job.id, timeout=120)
        assert done["status"] == "FAILED", done
        for fragment in fragments:
            assert fragment in done["error"]["message"], done["error"]

    # The same plan in another session of the same user: not its session's upload.
    other = Session.objects.get(pk=open_session(alice_sql.api))
    refused(own, "belongs to another session", session=other)
    # Path tricks and made-up ids.
    refused(f"{own}/../{sent['id']}", "cannot be read")
    refused(f"{uploads_dir()}/{alice_sql.session_id}/{uuid.uuid4()}", "no longer exists")
    refused(f"{uploads_dir()}/{alice_sql.session_id}", "names no upload")
    refused(
        f"{uploads_dir()}/{alice_sql.session_id}/{sent['id']}/part-00000.parquet", "names no upload"
    )
    # A link in place of the upload's directory.
    target = uploads_dir() / alice_sql.session_id / sent["id"]
    moved = target.with_name("moved")
    target.rename(moved)
    target.symlink_to(moved)
    try:
        refused(own, "symbolic link")
    finally:
        target.unlink()
        moved.rename(target)
    assert alice_sql.rows("SELECT sum(a) FROM t") == [[6]]


def test_a_deleted_upload_cannot_be_read(alice_sql: Pipeline):
    sent = upload(alice_sql, pa.table({"a": [1]}))
    alice_sql.ok(
        f"CREATE TEMPORARY TABLE t WITH ('connector' = 'upload', 'upload' = '{sent['id']}')"
    )
    plan = planned(alice_sql.session, "SELECT * FROM t")
    assert (
        alice_sql.api.delete(
            f"{API}/sessions/{alice_sql.session_id}/uploads/{sent['id']}"
        ).status_code
        == 204
    )
    assert not (uploads_dir() / alice_sql.session_id / sent["id"]).exists()
    # A plan made before the deletion: the worker checks again at use.
    job = wait_job(
        alice_sql.api, submit_plan(alice_sql.user, plan, session=alice_sql.session).id, timeout=120
    )
    assert job["status"] == "FAILED" and "no longer exists" in job["error"]["message"], job
