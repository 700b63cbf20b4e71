"""Event time on TIMESTAMP_NTZ (Flink's ``TIMESTAMP(3)``): Spark's ``withWatermark`` takes
only TIMESTAMP, so ``CREATE TABLE`` refuses a watermark on a TIMESTAMP_NTZ column with the
fix (core/schema/resolver.py), the fix — a computed ``CAST(ts AS TIMESTAMP)`` column carrying
the watermark — streams with the event time read in the session's time zone, and a table
stored before the refusal fails at start with the same fix instead of Spark's
``EVENT_TIME_IS_NOT_ON_TIMESTAMP_TYPE``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa  # type: ignore[import-untyped]
import pytest

from tests.waiting import wait_until
from tests.worker_helpers import (
    Pipeline,
    count_of,
    open_session,
    planned,
    result_rows,
    statement,
    stream_session,
    submit_plan,
    wait_job,
    write_file,
)

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker"),
]

NTZ_SCHEMA = pa.schema([("id", pa.int64()), ("ts", pa.timestamp("us"))])
# Wall-clock times, no zone: 2023-11-14 22:13:20 and after.
BASE = datetime(2023, 11, 14, 22, 13, 20)
ZONE = "Asia/Kolkata"  # +05:30: 10-second windows stay aligned on the wall clock
ZONE_OFFSET = timedelta(hours=5, minutes=30)


def _ntz_file(directory: Path, name: str, seconds: list[int]) -> None:
    table = pa.table(
        {"id": list(range(len(seconds))), "ts": [BASE + timedelta(seconds=s) for s in seconds]},
        schema=NTZ_SCHEMA,
    )
    write_file(directory, name, table)


def _source(catalog: str, directory: Path, columns: str) -> str:
    return (
        f"CREATE TABLE {catalog}.d.src ({columns}) "
        f"WITH ('connector' = 'parquet', 'path' = '{directory}')"
    )


def test_a_watermark_on_timestamp_ntz_is_refused_with_the_fix_that_streams(
    alice_sql: Pipeline, catalog: str, source_dir: Path, streams: list[str]
) -> None:
    refused = alice_sql.run(
        _source(
            catalog,
            source_dir,
            "id BIGINT, ts TIMESTAMP_NTZ, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND",
        )
    )
    assert refused["status"] == "FAILED", refused
    assert refused["error"]["code"] == "VALIDATION_ERROR", refused["error"]
    assert refused["error"]["message"] == (
        "Watermark column `ts` is TIMESTAMP_NTZ, but event time must be a TIMESTAMP (Spark's "
        "streaming refuses TIMESTAMP_NTZ event time). Declare a computed column "
        "`ts_ltz AS CAST(ts AS TIMESTAMP)` (the value read in the session's time zone) and put "
        "the watermark on `ts_ltz`."
    )
    # The fix, as the message words it.
    alice_sql.ok(
        _source(
            catalog,
            source_dir,
            "id BIGINT, ts TIMESTAMP_NTZ, ts_ltz AS CAST(ts AS TIMESTAMP), "
            "WATERMARK FOR ts_ltz AS ts_ltz - INTERVAL '5' SECOND",
        )
    )
    # A streaming windowed count in a session whose time zone is Asia/Kolkata. Events at
    # 1, 2, 12 s; then one at 60 s moves the watermark to 55 s: [0, 10) and [10, 20) close.
    _ntz_file(source_dir, "e0", [1, 2, 12])
    session = stream_session(alice_sql, {"spark.sql.session.timeZone": ZONE})
    job = statement(
        alice_sql.api,
        str(session.pk),
        f"CREATE TABLE {catalog}.d.w AS SELECT window.start AS ws, count(*) AS n "
        f"FROM {catalog}.d.src GROUP BY window(ts_ltz, '10 seconds')",
    )
    streams.append(str(job["id"]))
    wait_job(alice_sql.api, job["id"], {"RUNNING"})
    _ntz_file(source_dir, "e1", [60])
    wait_until(
        lambda: count_of(catalog, "w") == 2,
        90,
        0.1,
        lambda: f"w to hold 2 windows, not {count_of(catalog, 'w')}",
    )
    # Read back in the same zone, the windows start at the events' wall-clock times; as
    # instants they are those times in Asia/Kolkata (5:30 before the same time in UTC).
    zoned = open_session(alice_sql.api, {"spark.sql.session.timeZone": ZONE})
    query = statement(
        alice_sql.api,
        zoned,
        f"SELECT CAST(CAST(ws AS TIMESTAMP_NTZ) AS STRING), unix_timestamp(ws), n "
        f"FROM {catalog}.d.w ORDER BY ws",
    )
    assert wait_job(alice_sql.api, query["id"])["status"] == "FINISHED"
    first = BASE.replace(second=BASE.second - BASE.second % 10)
    assert result_rows(alice_sql.api, query["id"])[1] == [
        [str(window), int((window - ZONE_OFFSET).replace(tzinfo=UTC).timestamp()), n]
        for window, n in ((first, 2), (first + timedelta(seconds=10), 1))
    ]


def test_a_stored_watermark_on_timestamp_ntz_fails_at_start_with_the_fix(
    alice_sql: Pipeline, catalog: str, source_dir: Path, streams: list[str]
) -> None:
    """A table stored before CREATE TABLE refused it (a plan altered by hand stands in)."""
    _ntz_file(source_dir, "e0", [1, 2])
    alice_sql.ok(_source(catalog, source_dir, "id BIGINT, ts TIMESTAMP_NTZ"))
    sql = f"SELECT id, ts FROM {catalog}.d.src"
    session = stream_session(alice_sql)
    plan = planned(session, sql)
    assert plan["relations"][0]["streaming"] is True
    plan["relations"][0]["watermark"] = {"column": "ts", "delay": "5 seconds"}
    job = submit_plan(alice_sql.user, plan, session=session, sql=sql)
    streams.append(str(job.pk))
    failed = wait_job(alice_sql.api, str(job.pk), {"FAILED"}, timeout=90)
    assert failed["error"]["code"] == "VALIDATION_ERROR", failed["error"]
    message = failed["error"]["message"]
    assert "`ts`, a TIMESTAMP_NTZ column" in message, message
    assert "`ts_ltz AS CAST(ts AS TIMESTAMP)`" in message, message
    assert "EVENT_TIME_IS_NOT_ON_TIMESTAMP_TYPE" not in message
