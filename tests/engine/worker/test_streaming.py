"""Streaming jobs on a real worker (issue 17): streaming CTAS/INSERT/SELECT on Structured
Streaming, the exactly-once commit per micro-batch, cancel, watermarks, previews.

Statements go through the REST API in a session in streaming mode (the real planner);
hostile plans are the planner's plans altered by hand. Each test uses its own catalog and
its own source directory under the storage root; files are written atomically (a hidden
name, then a rename), as a producer feeding a stream must.
"""

from __future__ import annotations

import json
import time
from functools import partial
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pytest
from django.conf import settings

import jobs.identity
from catalog.models import Catalog, Database, Table, TableVersion
from jobs.models import Job
from tabledata import stream_commit
from tests.conftest import API
from tests.grants_support import share
from tests.waiting import wait_until
from tests.worker_helpers import (
    STREAMING,
    TRIGGER_MS,
    Pipeline,
    cancel,
    count_of,
    events,
    get_job,
    open_session,
    planned,
    result_rows,
    start_stream,
    state_of,
    statement,
    stream_session,
    submit_plan,
    table_of,
    table_rows,
    wait_job,
    write_file,
)

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker"),
]

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])
EVENT_SCHEMA = pa.schema([("id", pa.int64()), ("ts", pa.timestamp("us", tz="UTC"))])


def rows_file(directory: Path, name: str, ids: range) -> Path:
    table = pa.table({"id": list(ids), "name": [f"n{i % 7}" for i in ids]}, schema=SCHEMA)
    return write_file(directory, name, table)


def start_plan(alice_sql: Pipeline, streams: list[str], plan: dict[str, Any], sql: str) -> str:
    """A (hand-altered) plan stored and enqueued as the web does after planning."""
    job = submit_plan(alice_sql.user, plan, session=alice_sql.session, sql=sql)
    streams.append(str(job.pk))
    return str(job.pk)


def create_source(alice_sql: Pipeline, catalog: str, directory: Path, columns: str) -> None:
    alice_sql.ok(
        f"CREATE TABLE {catalog}.d.src ({columns}) "
        f"WITH ('connector' = 'parquet', 'path' = '{directory}')"
    )


def stream_of(job_id: str) -> dict[str, Any]:
    return dict((Job.objects.get(pk=job_id).progress or {}).get("stream") or {})


def stream_leftovers(job_id: str) -> list[Path]:
    return [
        p
        for p in (stream_commit.streams_dir(job_id), stream_commit.checkpoint_dir(job_id))
        if p.exists()
    ]


# --- streaming CTAS ----------------------------------------------------------------------------


def test_streaming_ctas_follows_new_files_and_commits_each_batch_once(
    alice_sql: Pipeline,
    catalog: str,
    source_dir: Path,
    streams: list[str],
    plain_spark: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows_file(source_dir, "f0", range(0, 100))
    create_source(alice_sql, catalog, source_dir, "id BIGINT, name STRING")
    job_id = start_stream(
        alice_sql, streams, f"CREATE TABLE {catalog}.d.t AS SELECT id, name FROM {catalog}.d.src"
    )
    wait_job(alice_sql.api, job_id, {"RUNNING"})
    # The first files are committed; the table is readable through Tessera meanwhile.
    wait_until(lambda: count_of(catalog, "t") == 100, 60, 0.1, "the first file in t")
    assert alice_sql.rows(f"SELECT count(*) FROM {catalog}.d.t") == [[100]]

    rows_file(source_dir, "f1", range(100, 250))
    rows_file(source_dir, "f2", range(250, 300))
    wait_until(lambda: count_of(catalog, "t") == 300, 60, 0.1, "the later files in t")
    # Spark's figures of the trigger that read them reach the job's progress.
    wait_until(
        lambda: stream_of(job_id).get("num_input_rows", 0) > 0, 30, 0.1, "the stream's figures"
    )
    expected = sorted(tuple(r) for r in plain_spark.read.parquet(str(source_dir)).collect())
    assert table_rows(plain_spark, catalog, "t") == expected

    job = get_job(alice_sql.api, job_id)
    assert job["status"] == "RUNNING"
    stream = wait_until(
        lambda: (s := stream_of(job_id)) and s.get("rows_committed") == 300 and s, 10, 0.1
    )
    assert stream["batches"] >= 2 and stream["target_rows"] == 300
    assert set(stream) >= {
        "batch_id",
        "input_rows_per_second",
        "processed_rows_per_second",
        "batch_duration_ms",
        "num_input_rows",
        "watermark",
        "updated_at",
    }
    committed = [e.detail for e in Job.objects.get(pk=job_id).events.filter(type="batch_committed")]
    assert sum(d["rows"] for d in committed) == 300
    # Each event's Spark figures are its own batch's (rows read = rows written here), or
    # absent when its report came too late, never another batch's.
    reported = [d for d in committed if d["num_input_rows"] is not None]
    assert reported and all(d["num_input_rows"] == d["rows"] for d in reported)
    assert [d["batch_id"] for d in committed] == sorted({d["batch_id"] for d in committed})
    table = table_of(catalog, "t")
    assert table is not None and table.status == "active" and table.staged_by_job is None
    versions = list(TableVersion.objects.filter(table=table).order_by("version"))
    assert versions[0].operation == "CREATE TABLE AS SELECT" and versions[0].rows == 0
    assert {v.operation for v in versions[1:]} == {"STREAMING UPDATE"}
    assert [v.metrics["batch_id"] for v in versions[1:]] == [d["batch_id"] for d in committed]
    assert {v.metrics["job"] for v in versions[1:]} == {job_id}

    # A replayed batch (Spark re-runs the last batch after a restart) is skipped, and its
    # staging directory removed; a new batch id commits once however often it is sent.
    identifier = [catalog, "d", "t"]
    first = committed[0]["batch_id"]
    location = table.location
    for batch_id, expect in ((first, False), (10**6, True), (10**6, False)):
        staged = stream_commit.batch_staging(job_id, batch_id)
        staged.mkdir(parents=True, exist_ok=True)
        rows_file(staged, "part-replay", range(1000, 1010))
        done = stream_commit.commit_batch(job_id, identifier, batch_id, staged, rows=10, ctas=True)
        assert done.committed is expect
        assert not staged.exists()
        if not expect:
            assert table_of(catalog, "t").location == location  # type: ignore[union-attr]
        location = table_of(catalog, "t").location  # type: ignore[union-attr]
    assert count_of(catalog, "t") == 310
    assert TableVersion.objects.filter(table=table, metrics__batch_id=10**6).count() == 1

    # A worker taken for lost whose stream another worker runs now commits nothing more.
    monkeypatch.setattr(jobs.identity, "_identity", "another-worker@host/1/0")
    staged = stream_commit.batch_staging(job_id, 10**6 + 1)
    staged.mkdir(parents=True, exist_ok=True)
    rows_file(staged, "part-zombie", range(2000, 2010))
    with pytest.raises(stream_commit.StreamStopped, match="another worker"):
        stream_commit.commit_batch(job_id, identifier, 10**6 + 1, staged, rows=10, ctas=True)
    monkeypatch.undo()
    assert count_of(catalog, "t") == 310

    # Cancel: CANCELED within seconds; the table and its committed rows stay.
    began = time.monotonic()
    canceled = cancel(alice_sql, job_id)
    assert time.monotonic() - began < 15
    assert canceled["error"]["code"] == "CANCELED"
    wait_until(lambda: not stream_leftovers(job_id), 30, 0.1, "the checkpoint to go")
    assert count_of(catalog, "t") == 310
    assert alice_sql.rows(f"SELECT count(*) FROM {catalog}.d.t") == [[310]]
    assert "stage_table_dropped" not in events(job_id)


def test_streaming_ctas_canceled_before_any_batch_drops_its_table(
    alice_sql: Pipeline, catalog: str, source_dir: Path, streams: list[str]
) -> None:
    create_source(alice_sql, catalog, source_dir, "id BIGINT, name STRING")
    job_id = start_stream(
        alice_sql, streams, f"CREATE TABLE {catalog}.d.e AS SELECT id, name FROM {catalog}.d.src"
    )
    wait_job(alice_sql.api, job_id, {"RUNNING"})
    # Readable (active, empty) before any data came.
    wait_until(lambda: "table_ready" in events(job_id), 60, 0.1, "the table to be ready")
    assert alice_sql.rows(f"SELECT count(*) FROM {catalog}.d.e") == [[0]]
    cancel(alice_sql, job_id)
    wait_until(lambda: table_of(catalog, "e") is None, 15, 0.1, "the table to be dropped")
    assert "stage_table_dropped" in events(job_id)
    root = Path(settings.WAREHOUSE_DIR) / catalog / "d"
    wait_until(lambda: not root.exists() or not any(root.iterdir()), 15, 0.1, "no files left")
    wait_until(lambda: not stream_leftovers(job_id), 30, 0.1, "the checkpoint to go")


def test_streaming_aggregation_without_watermark_is_refused_at_start(
    alice_sql: Pipeline, catalog: str, source_dir: Path, streams: list[str]
) -> None:
    rows_file(source_dir, "f0", range(0, 10))
    create_source(alice_sql, catalog, source_dir, "id BIGINT, name STRING")
    job_id = start_stream(
        alice_sql,
        streams,
        f"CREATE TABLE {catalog}.d.g AS SELECT name, count(*) AS n FROM {catalog}.d.src "
        "GROUP BY name",
    )
    job = wait_job(alice_sql.api, job_id, {"FAILED"}, timeout=90)
    assert job["error"]["code"] == "STREAMING_UNSUPPORTED", job["error"]
    assert "watermark" in job["error"]["message"].lower()
    assert str(settings.DATA_DIR) not in job["error"]["message"]
    wait_until(lambda: table_of(catalog, "g") is None, 15, 0.1, "the table to be dropped")


def test_a_spark_failure_fails_the_stream_and_keeps_its_committed_batches(
    alice_sql: Pipeline, catalog: str, source_dir: Path, streams: list[str]
) -> None:
    rows_file(source_dir, "f0", range(0, 100))
    create_source(alice_sql, catalog, source_dir, "id BIGINT, name STRING")
    job_id = start_stream(
        alice_sql,
        streams,
        f"CREATE TABLE {catalog}.d.f AS SELECT id, 10 DIV (id - 150) AS r FROM {catalog}.d.src",
    )
    wait_until(lambda: count_of(catalog, "f") == 100, 60, 0.1, lambda: state_of(job_id))
    rows_file(source_dir, "f1", range(100, 200))  # id 150 divides by zero
    job = wait_job(alice_sql.api, job_id, {"FAILED"}, timeout=60)
    assert job["error"]["code"] == "SPARK_ERROR", job["error"]
    assert "zero" in job["error"]["message"].lower()
    assert str(settings.DATA_DIR) not in json.dumps(job["error"])
    # FLIP-218 streaming: the table and the batch committed before the failure stay.
    assert count_of(catalog, "f") == 100
    assert alice_sql.rows(f"SELECT count(*) FROM {catalog}.d.f") == [[100]]
    wait_until(lambda: not stream_leftovers(job_id), 30, 0.1, "the checkpoint to go")


def test_only_a_timeout_the_session_set_ends_a_stream(
    alice_sql: Pipeline, catalog: str, source_dir: Path, streams: list[str]
) -> None:
    rows_file(source_dir, "f0", range(0, 10))
    create_source(alice_sql, catalog, source_dir, "id BIGINT, name STRING")
    session_id = open_session(alice_sql.api, {**STREAMING, "job.timeout_seconds": "8"})
    job_id = str(
        statement(
            alice_sql.api,
            session_id,
            f"CREATE TABLE {catalog}.d.o AS SELECT id, name FROM {catalog}.d.src",
        )["id"]
    )
    streams.append(job_id)
    wait_until(lambda: count_of(catalog, "o") == 10, 60, 0.1, lambda: state_of(job_id))
    job = wait_job(alice_sql.api, job_id, {"FAILED"}, timeout=60)
    assert job["error"]["code"] == "TIMEOUT", job["error"]
    assert count_of(catalog, "o") == 10
    # Without one, the server's default timeout does not apply to a stream.
    from engine.monitor import job_properties
    from engine.streaming import stream_timeout

    preview = start_stream(alice_sql, streams, f"SELECT id FROM {catalog}.d.src")
    other = Job.objects.select_related("session").get(pk=preview)
    assert stream_timeout(other, job_properties(other)) == float("inf")
    ended = Job.objects.select_related("session").get(pk=job_id)
    assert stream_timeout(ended, job_properties(ended)) == 8


# --- streaming INSERT ------------------------------------------------------------------------


def test_streaming_insert_appends_and_aggregate_upserts_into_a_keyed_table(
    alice_sql: Pipeline, catalog: str, source_dir: Path, streams: list[str], plain_spark: Any
) -> None:
    rows_file(source_dir, "f0", range(0, 70))
    create_source(alice_sql, catalog, source_dir, "id BIGINT, name STRING")
    alice_sql.ok(f"CREATE TABLE {catalog}.d.m (id BIGINT, name STRING)")
    alice_sql.ok(f"INSERT INTO {catalog}.d.m VALUES (-1, 'before')")
    alice_sql.ok(
        f"CREATE TABLE {catalog}.d.k (name STRING, n BIGINT, PRIMARY KEY (name) NOT ENFORCED)"
    )
    append = start_stream(
        alice_sql, streams, f"INSERT INTO {catalog}.d.m SELECT id, name FROM {catalog}.d.src"
    )
    upsert = start_stream(
        alice_sql,
        streams,
        f"INSERT INTO {catalog}.d.k SELECT name, count(*) AS n FROM {catalog}.d.src GROUP BY name",
    )
    wait_until(lambda: count_of(catalog, "m") == 71, 90, 0.1, lambda: state_of(append))
    wait_until(lambda: count_of(catalog, "k") == 7, 90, 0.1, lambda: state_of(upsert))
    rows_file(source_dir, "f1", range(70, 100))
    wait_until(lambda: count_of(catalog, "m") == 101, 60, 0.1, "the second file in m")
    expected_counts = sorted(
        tuple(r)
        for r in plain_spark.read.parquet(str(source_dir)).groupBy("name").count().collect()
    )
    wait_until(
        lambda: table_rows(plain_spark, catalog, "k") == expected_counts,
        60,
        0.2,
        lambda: f"k to hold {expected_counts}, not {table_rows(plain_spark, catalog, 'k')}",
    )
    expected = sorted(
        [(-1, "before")] + [tuple(r) for r in plain_spark.read.parquet(str(source_dir)).collect()]
    )
    assert table_rows(plain_spark, catalog, "m") == expected
    assert "update" in json.dumps(
        [e.detail for e in Job.objects.get(pk=upsert).events.filter(type="stream_started")]
    )
    for job_id in (append, upsert):
        cancel(alice_sql, job_id)
    assert count_of(catalog, "m") == 101 and count_of(catalog, "k") == 7


def test_rights_are_checked_again_at_every_batch(
    alice_sql: Pipeline, catalog: str, source_dir: Path, streams: list[str]
) -> None:
    rows_file(source_dir, "f0", range(0, 10))
    create_source(alice_sql, catalog, source_dir, "id BIGINT, name STRING")
    alice_sql.ok(f"CREATE TABLE {catalog}.d.m (id BIGINT, name STRING)")
    job_id = start_stream(
        alice_sql, streams, f"INSERT INTO {catalog}.d.m SELECT id, name FROM {catalog}.d.src"
    )
    wait_until(lambda: count_of(catalog, "m") == 10, 60, 0.1, lambda: state_of(job_id))
    # The table, its database and its catalog change hands while the stream runs: alice
    # may no longer write it, and the next batch is not committed.
    bob = Pipeline("bob")
    table = table_of(catalog, "m")
    assert table is not None
    Table.objects.filter(pk=table.pk).update(created_by=bob.user, owner=bob.user)
    Database.objects.filter(pk=table.database_id).update(owner=bob.user)
    Catalog.objects.filter(pk=table.database.catalog_id).update(owner=bob.user)
    share(catalog, ["USE"], user=alice_sql.user)  # she still sees the catalog: MODIFY is refused
    rows_file(source_dir, "f1", range(10, 20))
    job = wait_job(alice_sql.api, job_id, {"FAILED"}, timeout=60)
    assert job["error"]["code"] == "PERMISSION_DENIED", job["error"]
    assert "You need MODIFY on table" in job["error"]["message"], job["error"]
    assert count_of(catalog, "m") == 10


# --- watermarks ------------------------------------------------------------------------------

# (file, event seconds, the watermark after it): window 10 s, watermark delay 5 s. After e0
# the watermark is 7 s, after e1 20 s, after e2 55 s. Spark drops a row when its window has
# closed (window end <= watermark): 3 (in e1) is older than the watermark but its window
# [0, 10) is open, so it counts; 9 and 18 (in e2) are dropped. The windows [0, 10) (1, 2, 3,
# 8), [10, 20) (12) and [20, 30) (25, 22) close; [60, 70) stays open.
BASE_SECONDS = 1_700_000_000
EVENT_FILES = [
    ("e0", [1, 2, 12], 7),
    ("e1", [3, 8, 25], 20),
    ("e2", [9, 18, 22, 60], 55),
]
WINDOWED = (
    "SELECT window.start AS ws, window.end AS we, count(*) AS n FROM {src} "
    "GROUP BY window(ts, '10 seconds')"
)


def _event_table(seconds: list[int]) -> pa.Table:
    return pa.table(
        {"id": list(range(len(seconds))), "ts": [(BASE_SECONDS + s) * 1_000_000 for s in seconds]},
        schema=EVENT_SCHEMA,
    )


def _settled(checkpoint: Path, watermark: int) -> bool:
    """The last batch a checkpoint records as committed ran with this watermark (seconds
    after ``BASE_SECONDS``): the batch after a watermark moved (a no-data batch, which also
    emits the windows it closed) is done. Which watermark drops a late row depends on
    whether that batch ran before the row's file was read (Spark drops rows older than the
    previous batch's watermark), so both sides wait for it before the next file."""
    commits = checkpoint / "commits"
    done = [int(p.name) for p in commits.iterdir() if p.name.isdigit()] if commits.is_dir() else []
    if not done:
        return False
    lines = (checkpoint / "offsets" / str(max(done))).read_text().splitlines()
    metadata = json.loads(lines[1])
    return int(metadata.get("batchWatermarkMs", -1)) == (BASE_SECONDS + watermark) * 1000


def _checkpoint_has(job_id: str, name: str) -> bool:
    """Spark's checkpoint of the job records ``name`` as read by a batch it committed."""
    root = stream_commit.checkpoint_dir(job_id)
    sources = root / "sources" / "0"
    if not sources.is_dir():
        return False
    for entry in sources.iterdir():
        if not entry.name.isdigit() or f"/{name}.parquet" not in entry.read_text():
            continue
        return (root / "commits" / entry.name).exists()
    return False


def test_windowed_count_drops_late_rows_as_plain_structured_streaming(
    alice_sql: Pipeline,
    catalog: str,
    source_dir: Path,
    streams: list[str],
    plain_spark: Any,
    tmp_path: Path,
) -> None:
    create_source(
        alice_sql,
        catalog,
        source_dir,
        "id BIGINT, ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND",
    )
    job_id = start_stream(
        alice_sql,
        streams,
        f"CREATE TABLE {catalog}.d.w AS " + WINDOWED.format(src=f"{catalog}.d.src"),
    )
    wait_job(alice_sql.api, job_id, {"RUNNING"})

    # Plain Structured Streaming on the same files, batch for batch.
    plain_rows: list[tuple[Any, ...]] = []
    plain_checkpoint = tmp_path / "plain-checkpoint"

    def keep(batch: Any, batch_id: int) -> None:
        plain_rows.extend(tuple(r) for r in batch.collect())

    from pyspark.sql import functions as sf

    reader = plain_spark.readStream.schema("id BIGINT, ts TIMESTAMP").parquet(str(source_dir))
    frame = reader.withWatermark("ts", "5 seconds").groupBy(sf.window("ts", "10 seconds")).count()
    frame = frame.selectExpr("window.start AS ws", "window.end AS we", "count AS n")
    plain = (
        frame.writeStream.outputMode("append")
        .option("checkpointLocation", str(plain_checkpoint))
        .trigger(processingTime=f"{TRIGGER_MS} milliseconds")
        .foreachBatch(keep)
        .start()
    )
    ours = stream_commit.checkpoint_dir(job_id)
    try:
        for name, seconds, watermark in EVENT_FILES:
            write_file(source_dir, name, _event_table(seconds))
            wait_until(partial(_checkpoint_has, job_id, name), 60, 0.1, name)
            wait_until(partial(_settled, ours, watermark), 60, 0.1, f"Tessera at {watermark}")
            wait_until(partial(_settled, plain_checkpoint, watermark), 60, 0.1, "plain")
    finally:
        plain.stop()
    expected = sorted(plain_rows)
    assert [r[2] for r in expected] == [4, 1, 2]  # Spark's own answer: 9 and 18 dropped
    wait_until(
        lambda: count_of(catalog, "w") == 3,
        60,
        0.1,
        lambda: f"w to hold 3 windows, not {count_of(catalog, 'w')}",
    )
    assert table_rows(plain_spark, catalog, "w") == expected
    assert stream_of(job_id)["watermark"] is not None
    cancel(alice_sql, job_id)


# --- streaming SELECT preview ------------------------------------------------------------------


def test_streaming_select_preview_while_running_and_after_cancel(
    alice_sql: Pipeline, catalog: str, source_dir: Path, streams: list[str]
) -> None:
    rows_file(source_dir, "f0", range(0, 20))
    create_source(alice_sql, catalog, source_dir, "id BIGINT, name STRING")
    job_id = start_stream(alice_sql, streams, f"SELECT id, name FROM {catalog}.d.src")
    wait_job(alice_sql.api, job_id, {"RUNNING"})

    def preview() -> list[list[Any]] | None:
        response = alice_sql.api.get(f"{API}/jobs/{job_id}/result")
        if response.status_code != 200:
            return None
        return list(response.json()["rows"]) or None

    first = wait_until(preview, 60, 0.2, "a preview")
    assert sorted(r[0] for r in first) == list(range(20))
    rows_file(source_dir, "f1", range(20, 25))
    wait_until(lambda: len(preview() or []) == 25, 60, 0.2, "the new rows in the preview")

    # Another user can neither read nor stop it.
    bob = Pipeline("bob")
    assert bob.api.get(f"{API}/jobs/{job_id}/result").status_code == 404
    assert bob.api.post(f"{API}/jobs/{job_id}/cancel").status_code == 404
    assert get_job(alice_sql.api, job_id)["status"] == "RUNNING"

    cancel(alice_sql, job_id)
    _, rows = result_rows(alice_sql.api, job_id)
    assert sorted(r[0] for r in rows) == list(range(25))


def test_rate_connector_preview_grows_until_stopped(
    alice_sql: Pipeline, catalog: str, streams: list[str]
) -> None:
    session_id = open_session(alice_sql.api, STREAMING, catalog)
    created = statement(
        alice_sql.api,
        session_id,
        "CREATE TEMPORARY TABLE r WITH ('connector' = 'rate', 'rows-per-second' = '50')",
        wait=30,
    )
    assert created["status"] == "FINISHED", created["error"]
    # A view over it: its schema is derived on the worker, from no rows of the rate columns.
    view = statement(
        alice_sql.api,
        session_id,
        "CREATE TEMPORARY VIEW v AS SELECT value, `timestamp` FROM r",
        wait=30,
    )
    assert view["status"] == "FINISHED", view["error"]
    job_id = str(statement(alice_sql.api, session_id, "SELECT value, `timestamp` FROM v")["id"])
    streams.append(job_id)

    def values(least: int) -> list[int] | None:
        response = alice_sql.api.get(f"{API}/jobs/{job_id}/result?page_size=1000")
        if response.status_code != 200:
            return None
        found = [row[0] for row in response.json()["rows"]]
        return found if len(found) >= least else None

    first = wait_until(lambda: values(1), 90, 0.2, "the first rows of the rate source")

    def grown() -> list[int] | None:
        found = values(1)
        return found if found and max(found) > max(first) + 20 else None

    later = wait_until(grown, 60, 0.2, "more rows")
    assert len(set(later)) == len(later)
    stream = get_job(alice_sql.api, job_id)["progress"]["stream"]
    assert stream["rows_committed"] >= len(later) and stream["batches"] >= 2
    cancel(alice_sql, job_id)
    assert values(1)  # the last tail stays


# --- hostile plans -----------------------------------------------------------------------------


def test_streaming_source_outside_the_storage_roots_is_refused(
    alice_sql: Pipeline, catalog: str, source_dir: Path, streams: list[str], tmp_path: Path
) -> None:
    rows_file(source_dir, "f0", range(0, 5))
    outside = tmp_path / "outside"
    outside.mkdir()
    rows_file(outside, "secret", range(0, 5))
    create_source(alice_sql, catalog, source_dir, "id BIGINT, name STRING")
    sql = f"SELECT id, name FROM {catalog}.d.src"
    plan = planned(stream_session(alice_sql), sql)
    assert plan["relations"][0]["streaming"] is True
    plan["relations"][0]["path"] = str(outside)
    job_id = start_plan(alice_sql, streams, plan, sql)
    job = wait_job(alice_sql.api, job_id, {"FAILED"}, timeout=90)
    assert job["error"]["code"] == "FORBIDDEN_SQL", job["error"]
    assert "cannot be read" in job["error"]["message"]

    rate = planned(stream_session(alice_sql), sql)
    rate["relations"][0].update(format="rate", path="", options={"rampUpTime": "1"})
    job_id = start_plan(alice_sql, streams, rate, sql)
    job = wait_job(alice_sql.api, job_id, {"FAILED"}, timeout=90)
    assert job["error"]["code"] == "FORBIDDEN_SQL", job["error"]
    assert "rowsPerSecond" in job["error"]["message"]
