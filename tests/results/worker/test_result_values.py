"""Every value Spark returns can be read (issue 36, item 3), on the REST path with plain
PySpark as the oracle: intervals of both kinds, calendar intervals, and dates and timestamps
beyond Python's years 1 … 9999, in result pages, ``result.arrow``, the CSV and JSON
downloads and the Python client's reading of the Arrow stream."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.ipc as ipc  # type: ignore[import-untyped]
import pytest

from tests.conftest import API
from tests.results.worker.test_result_arrow import SMALL_LIMIT, run
from tests.worker_helpers import Pipeline

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker"),
]

FAR_SQL = """
SELECT id,
       DATE'999999-03-18' AS far_day,
       TIMESTAMP'99999-01-01 00:00:00' AS far_instant,
       TIMESTAMP_NTZ'-0044-03-15 12:00:00' AS ides,
       DATE'2024-02-29' AS near_day,
       array(DATE'999999-03-18') AS far_days
FROM range(0, 2) ORDER BY id
"""

INTERVAL_SQL = """
SELECT INTERVAL '1-2' YEAR TO MONTH AS ym,
       INTERVAL '-3' MONTH AS months,
       INTERVAL '1 02:03:04.5' DAY TO SECOND AS dt,
       make_interval(1, 2, 3, 4, 5, 6, 7) AS calendar,
       array(INTERVAL '2' YEAR) AS years,
       CAST(NULL AS INTERVAL YEAR TO MONTH) AS none
"""


def text_of(plain_spark: Any, sql: str, columns: list[str]) -> list[list[Any]]:
    """Plain PySpark's own text of each value of ``columns`` (``CAST(… AS STRING)``)."""
    frame = plain_spark.sql(sql)
    cast = frame.selectExpr(*[f"CAST(`{c}` AS STRING)" for c in columns])
    return [list(row) for row in cast.collect()]


def page(alice_sql: Pipeline, job: dict[str, Any]) -> dict[str, Any]:
    response = alice_sql.api.get(f"{API}/jobs/{job['id']}/result?page_size=100")
    assert response.status_code == 200, response.content
    body: dict[str, Any] = response.json()
    return body


def download(alice_sql: Pipeline, job: dict[str, Any], fmt: str) -> str:
    response: Any = alice_sql.api.get(f"{API}/jobs/{job['id']}/result.{fmt}")
    assert response.status_code == 200
    return b"".join(response.streaming_content).decode("utf-8")


def arrow(alice_sql: Pipeline, job: dict[str, Any]) -> pa.Table:
    response: Any = alice_sql.api.get(f"{API}/jobs/{job['id']}/result.arrow")
    assert response.status_code == 200
    return ipc.open_stream(b"".join(response.streaming_content)).read_all()


@pytest.mark.parametrize("row_limit", [None, SMALL_LIMIT + 1], ids=["to_arrow", "large"])
def test_dates_beyond_python_are_served_as_spark_text(alice_sql, plain_spark, row_limit):
    job = run(alice_sql, FAR_SQL, row_limit)
    by_name = {c["name"]: c for c in job["result"]["columns"]}
    assert by_name["near_day"] == {"name": "near_day", "data_type": "DATE", "nullable": False}
    body = page(alice_sql, job)
    rows = body["rows"]
    assert [r[0] for r in rows] == [0, 1]
    assert all(r[4] == "2024-02-29" for r in rows)
    # Collected or written without collecting: Spark's own text, the columns flagged.
    far = ["far_day", "far_instant", "ides", "far_days"]
    expected = text_of(plain_spark, FAR_SQL, far)
    assert [[r[1], r[2], r[3], r[5]] for r in rows] == expected
    assert expected[0][:2] == ["+999999-03-18", "+99999-01-01 00:00:00"]
    for name, data_type in [
        ("far_day", "DATE"),
        ("far_instant", "TIMESTAMP"),
        ("ides", "TIMESTAMP_NTZ"),
        ("far_days", "ARRAY<DATE NOT NULL>"),
    ]:
        assert by_name[name] == {
            "name": name,
            "data_type": data_type,
            "nullable": False,
            "served_as": "STRING",
        }
    assert body["columns"] == job["result"]["columns"]
    table = arrow(alice_sql, job)
    assert table.column("far_day").to_pylist() == ["+999999-03-18"] * 2
    assert table.schema.field("near_day").type == pa.date32()
    lines = download(alice_sql, job, "csv").splitlines()
    assert len(lines) == 3 and "+999999-03-18" in lines[1]
    first = json.loads(download(alice_sql, job, "json").splitlines()[0])
    assert first["id"] == 0 and "999999-03-18" in first["far_day"]


def test_intervals_of_every_kind_are_values(alice_sql, plain_spark):
    job = run(alice_sql, INTERVAL_SQL)
    columns = job["result"]["columns"]
    assert [(c["data_type"], c.get("served_as")) for c in columns] == [
        ("INTERVAL YEAR TO MONTH", "STRING"),
        ("INTERVAL MONTH", "STRING"),
        ("INTERVAL DAY TO SECOND", None),  # Arrow's duration: a value of its own
        ("INTERVAL", "STRING"),
        ("ARRAY<INTERVAL YEAR NOT NULL>", "STRING"),
        ("INTERVAL YEAR TO MONTH", "STRING"),
    ]
    texts = text_of(plain_spark, INTERVAL_SQL, ["ym", "months", "calendar", "years", "none"])[0]
    assert texts[:2] == ["INTERVAL '1-2' YEAR TO MONTH", "INTERVAL '-3' MONTH"]
    row = page(alice_sql, job)["rows"][0]
    assert [row[0], row[1], row[3], row[4], row[5]] == texts
    assert row[2] == "P1DT2H3M4.5S"  # day-time intervals: ISO-8601 durations (docs/api.md)
    table = arrow(alice_sql, job)
    expected_dt = plain_spark.sql(INTERVAL_SQL).select("dt").toArrow()
    assert table.column("dt").type == expected_dt.column("dt").type == pa.duration("us")
    assert table.column("dt").to_pylist() == [timedelta(days=1, seconds=7384, microseconds=500000)]
    assert table.column("ym").to_pylist() == [texts[0]]
    cells = next(iter(csv.reader(io.StringIO(download(alice_sql, job, "csv")).readlines()[1:])))
    assert cells[0] == texts[0] and cells[2] == "P1DT2H3M4.5S" and cells[5] == ""
    line = json.loads(download(alice_sql, job, "json"))
    assert line["ym"] == texts[0] and line["calendar"] == texts[2] and line["none"] is None


def test_an_interval_result_written_without_collecting(alice_sql, plain_spark):
    sql = "SELECT id, make_ym_interval(CAST(id AS INT), 1) AS ym FROM range(0, 3) ORDER BY id"
    job = run(alice_sql, sql, SMALL_LIMIT + 1)
    assert job["result"]["columns"][1]["served_as"] == "STRING"
    rows = page(alice_sql, job)["rows"]
    assert [r[1] for r in rows] == [t[0] for t in text_of(plain_spark, sql, ["ym"])]
