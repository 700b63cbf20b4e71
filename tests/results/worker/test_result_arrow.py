"""Whole results on a live worker: ``row_limit`` and ``GET /jobs/{id}/result.arrow``.

Results up to ``TESSERA_RESULT_MAX_ROWS`` (100,000 on the test worker) are collected with
``toArrow``; a ``row_limit`` above it is written without collecting in the driver JVM
(``engine.large_results``). Both must store exactly what plain PySpark's ``toArrow``
gives.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]
import pyarrow.ipc as ipc  # type: ignore[import-untyped]
import pytest
from django.http import StreamingHttpResponse

from tests.conftest import API
from tests.worker_helpers import Pipeline, wait_job

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker"),
]

SMALL_LIMIT = 100_000  # the test worker's TESSERA_RESULT_MAX_ROWS (the default)

EVERY_TYPE_SQL = """
SELECT id,
       CAST(id * 1.25 AS DECIMAL(38, 10)) AS amount,
       TIMESTAMP'2024-01-02 03:04:05.123456' + make_interval(0, 0, 0, CAST(id AS INT)) AS ts,
       TIMESTAMP_NTZ'2024-01-02 03:04:05.5' AS ntz,
       DATE'2024-02-29' + CAST(id AS INT) AS day,
       CAST(CONCAT('b', CAST(id AS STRING)) AS BINARY) AS raw,
       array(named_struct('k', id, 'label', CONCAT('x', CAST(id AS STRING)))) AS items,
       map('a', CAST(id AS INT), 'b', CAST(NULL AS INT)) AS attrs,
       IF(id % 2 = 0, NULL, CONCAT('n', CAST(id AS STRING))) AS maybe,
       CAST(NULL AS DECIMAL(38, 10)) AS nothing
FROM range(0, 7) ORDER BY id DESC
"""


def run(alice_sql: Pipeline, sql: str, row_limit: int | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"sql": sql}
    if row_limit is not None:
        body["row_limit"] = row_limit
    response = alice_sql.api.post(
        f"{API}/sessions/{alice_sql.session_id}/statements", body, format="json"
    )
    assert response.status_code == 201, response.content
    job = wait_job(alice_sql.api, response.json()["id"], timeout=120)
    assert job["status"] == "FINISHED", job
    return job


def arrow(alice_sql: Pipeline, job: dict[str, Any]) -> tuple[pa.Table, Any, list[bytes]]:
    response: Any = alice_sql.api.get(f"{API}/jobs/{job['id']}/result.arrow")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/vnd.apache.arrow.stream"
    chunks = list(response.streaming_content)
    return ipc.open_stream(b"".join(chunks)).read_all(), response, chunks


@pytest.mark.parametrize("row_limit", [None, SMALL_LIMIT + 1], ids=["to_arrow", "large"])
def test_every_type_arrives_as_plain_pyspark_gives_it(alice_sql, plain_spark, row_limit):
    job = run(alice_sql, EVERY_TYPE_SQL, row_limit)
    table, response, _ = arrow(alice_sql, job)
    expected = plain_spark.sql(EVERY_TYPE_SQL).toArrow()
    assert table.schema == expected.schema, (table.schema, expected.schema)
    assert table.equals(expected)
    assert response["X-Tessera-Row-Count"] == "7"
    assert response["X-Tessera-Truncated"] == "false"
    assert job["result"]["row_count"] == 7 and job["result"]["truncated"] is False
    # The JSON pages read the same file.
    page = alice_sql.api.get(f"{API}/jobs/{job['id']}/result?page_size=2").json()
    assert page["rows"][0][0] == 6 and page["rows"][0][1] == "7.5000000000"


def test_row_limit_truncates_a_small_result(alice_sql):
    job = run(alice_sql, "SELECT id FROM range(0, 10)", row_limit=5)
    assert job["result"] == {
        "columns": [{"name": "id", "data_type": "BIGINT", "nullable": False}],
        "row_count": 5,
        "truncated": True,
    }
    table, response, _ = arrow(alice_sql, job)
    assert table["id"].to_pylist() == [0, 1, 2, 3, 4]
    assert response["X-Tessera-Truncated"] == "true"
    assert response["X-Tessera-Row-Count"] == "5"


def test_a_large_result_is_truncated_at_its_row_limit_in_order(alice_sql):
    sql = (
        f"SELECT id, CAST(id AS STRING) AS s FROM range(0, {SMALL_LIMIT + 50}, 1, 3) "
        "ORDER BY id DESC"
    )
    job = run(alice_sql, sql, row_limit=SMALL_LIMIT + 10)
    assert job["result"]["row_count"] == SMALL_LIMIT + 10 and job["result"]["truncated"] is True
    table, response, _ = arrow(alice_sql, job)
    assert table.num_rows == SMALL_LIMIT + 10
    ids = table["id"].to_pylist()
    assert ids[0] == SMALL_LIMIT + 49 and ids[-1] == 40 and ids == sorted(ids, reverse=True)
    assert response["X-Tessera-Truncated"] == "true"


def test_two_million_rows_arrive_whole_and_streamed(alice_sql):
    rows = 2_000_000
    sql = (
        f"SELECT id, id * 2 AS twice, CAST(id % 1000 AS STRING) AS tag FROM range(0, {rows}, 1, 2)"
    )
    job = run(alice_sql, sql, row_limit=3_000_000)
    assert job["result"]["row_count"] == rows and job["result"]["truncated"] is False
    table, response, chunks = arrow(alice_sql, job)
    assert isinstance(response, StreamingHttpResponse)  # never the whole table in the web
    assert len(chunks) > 10  # chunks of whole batches (about 1 MiB), as they are read
    assert response["X-Tessera-Row-Count"] == str(rows)
    assert response["X-Tessera-Truncated"] == "false"
    assert table.num_rows == rows
    assert pc.sum(table["id"]).as_py() == rows * (rows - 1) // 2
    assert table.slice(0, 3).to_pylist() == [
        {"id": 0, "twice": 0, "tag": "0"},
        {"id": 1, "twice": 2, "tag": "1"},
        {"id": 2, "twice": 4, "tag": "2"},
    ]
    assert table.slice(rows - 1).to_pylist() == [
        {"id": rows - 1, "twice": 2 * (rows - 1), "tag": "999"}
    ]
    assert table["id"].to_pylist()[1_234_567] == 1_234_567
