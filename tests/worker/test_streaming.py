"""Streaming jobs on a real worker (issue 17): streaming CTAS/INSERT/SELECT on Structured
Streaming, the exactly-once commit per micro-batch, cancel, watermarks, previews.

Statements go through the REST API in a session in streaming mode (the real planner);
hostile plans are the planner's plans altered by hand. Each test uses its own catalog and
its own source directory under the storage root; files are written atomically (a hidden
name, then a rename), as a producer feeding a stream must.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest
from django.conf import settings

from catalog import services as catalog_services
from catalog.models import Table, TableVersion
from jobs import stream_commit
from jobs.models import Job, Session
from tests.conftest import API
from tests.waiting import wait_until
from tests.worker.helpers import (
    Pipeline,
    events,
    get_job,
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

TRIGGER_MS = 300
SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])
EVENT_SCHEMA = pa.schema([("id", pa.int64()), ("ts", pa.timestamp("us", tz="UTC"))])


@pytest.fixture
def alice() -> Pipeline:
    return Pipeline("alice")


@pytest.fixture
def catalog(alice: Pipeline) -> str:
    name = f"s{uuid.uuid4().hex[:10]}"
    catalog_services.catalog_create(user=alice.user, name=name, default_database="d")
    return name


@pytest.fixture
def source_dir() -> Path:
    path = Path(settings.TESSERA_STORAGE_ROOTS[0]) / f"src-{uuid.uuid4().hex[:10]}"
    path.mkdir(parents=True)
    return path


@pytest.fixture
def streams(alice: Pipeline) -> Iterator[list[str]]:
    """Jobs a test started: cancelled at its end, so that no stream outlives its test."""
    started: list[str] = []
    yield started
    for job_id in started:
        if Job.objects.filter(pk=job_id, status__in=["CREATED", "RUNNING"]).exists():
            alice.api.post(f"{API}/jobs/{job_id}/cancel")
    for job_id in started:
        wait_until(partial(_ended, job_id), 60, 0.1, f"stream {job_id} to end")


def _ended(job_id: str) -> bool:
    return Job.objects.get(pk=job_id).status in {"FINISHED", "FAILED", "CANCELED"}


def write_file(directory: Path, name: str, table: pa.Table) -> Path:
    """A parquet file that appears at once, whole (Spark skips hidden names)."""
    hidden = directory / f".{name}.tmp"
    pq.write_table(table, hidden)
    final = directory / f"{name}.parquet"
    os.replace(hidden, final)
    return final


def rows_file(directory: Path, name: str, ids: range) -> Path:
    table = pa.table({"id": list(ids), "name": [f"n{i % 7}" for i in ids]}, schema=SCHEMA)
    return write_file(directory, name, table)


STREAMING = {
    "execution.runtime-mode": "streaming",
    "execution.checkpointing.interval": f"{TRIGGER_MS} ms",
}


def stream_session(alice: Pipeline) -> Session:
    return Session.objects.get(pk=open_session(alice.api, STREAMING))


def start_stream(alice: Pipeline, streams: list[str], sql: str) -> str:
    """``sql`` submitted over REST in a session in streaming mode."""
    session = stream_session(alice)
    job_id = str(statement(alice.api, str(session.pk), sql)["id"])
    streams.append(job_id)
    return job_id


def start_plan(alice: Pipeline, streams: list[str], plan: dict[str, Any], sql: str) -> str:
    """A (hand-altered) plan stored and enqueued as the web does after planning."""
    job = submit_plan(alice.user, plan, session=alice.session, sql=sql)
    streams.append(str(job.pk))
    return str(job.pk)


def table_of(catalog: str, name: str) -> Table | None:
    return Table.objects.filter(
        database__catalog__name=catalog, database__name="d", name_key=name.lower()
    ).first()


def table_rows(plain_spark: Any, catalog: str, name: str) -> list[tuple[Any, ...]]:
    table = table_of(catalog, name)
    assert table is not None and table.location
    return sorted(tuple(r) for r in plain_spark.read.parquet(table.location).collect())


def count_of(catalog: str, name: str) -> int:
    table = table_of(catalog, name)
    if table is None or not table.location or not Path(table.location).is_dir():
        return -1
    return sum(
        pq.read_metadata(p).num_rows
        for p in Path(table.location).rglob("*.parquet")
        if not p.name.startswith((".", "_"))
    )


def create_source(alice: Pipeline, catalog: str, directory: Path, columns: str) -> None:
    alice.ok(
        f"CREATE TABLE {catalog}.d.src ({columns}) "
        f"WITH ('connector' = 'parquet', 'path' = '{directory}')"
    )


def stream_of(job_id: str) -> dict[str, Any]:
    return dict((Job.objects.get(pk=job_id).progress or {}).get("stream") or {})


def cancel(alice: Pipeline, job_id: str) -> dict[str, Any]:
    response = alice.api.post(f"{API}/jobs/{job_id}/cancel")
    assert response.status_code in (200, 202), response.content
    return wait_job(alice.api, job_id, {"CANCELED"}, timeout=30)


def stream_leftovers(job_id: str) -> list[Path]:
    return [
        p
        for p in (stream_commit.streams_dir(job_id), stream_commit.checkpoint_dir(job_id))
        if p.exists()
    ]


# --- streaming CTAS ----------------------------------------------------------------------------


def test_streaming_ctas_follows_new_files_and_commits_each_batch_once(
    alice: Pipeline, catalog: str, source_dir: Path, streams: list[str], plain_spark: Any
) -> None:
    rows_file(source_dir, "f0", range(0, 100))
    create_source(alice, catalog, source_dir, "id BIGINT, name STRING")
    job_id = start_stream(
        alice, streams, f"CREATE TABLE {catalog}.d.t AS SELECT id, name FROM {catalog}.d.src"
    )
    wait_job(alice.api, job_id, {"RUNNING"})
    # The first files are committed; the table is readable through Tessera meanwhile.
    wait_until(lambda: count_of(catalog, "t") == 100, 60, 0.1, "the first file in t")
    assert alice.rows(f"SELECT count(*) FROM {catalog}.d.t") == [[100]]

    rows_file(source_dir, "f1", range(100, 250))
    rows_file(source_dir, "f2", range(250, 300))
    wait_until(lambda: count_of(catalog, "t") == 300, 60, 0.1, "the later files in t")
    expected = sorted(tuple(r) for r in plain_spark.read.parquet(str(source_dir)).collect())
    assert table_rows(plain_spark, catalog, "t") == expected

    job = get_job(alice.api, job_id)
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

    # Cancel: CANCELED within seconds; the table and its committed rows stay.
    began = time.monotonic()
    canceled = cancel(alice, job_id)
    assert time.monotonic() - began < 15
    assert canceled["error"]["code"] == "CANCELED"
    wait_until(lambda: not stream_leftovers(job_id), 30, 0.1, "the checkpoint to go")
    assert count_of(catalog, "t") == 310
    assert alice.rows(f"SELECT count(*) FROM {catalog}.d.t") == [[310]]
    assert "stage_table_dropped" not in events(job_id)


def test_streaming_ctas_canceled_before_any_batch_drops_its_table(
    alice: Pipeline, catalog: str, source_dir: Path, streams: list[str]
) -> None:
    create_source(alice, catalog, source_dir, "id BIGINT, name STRING")
    job_id = start_stream(
        alice, streams, f"CREATE TABLE {catalog}.d.e AS SELECT id, name FROM {catalog}.d.src"
    )
    wait_job(alice.api, job_id, {"RUNNING"})
    # Readable (active, empty) before any data came.
    wait_until(lambda: "table_ready" in events(job_id), 60, 0.1, "the table to be ready")
    assert alice.rows(f"SELECT count(*) FROM {catalog}.d.e") == [[0]]
    cancel(alice, job_id)
    wait_until(lambda: table_of(catalog, "e") is None, 15, 0.1, "the table to be dropped")
    assert "stage_table_dropped" in events(job_id)
    root = Path(settings.WAREHOUSE_DIR) / catalog / "d"
    wait_until(lambda: not root.exists() or not any(root.iterdir()), 15, 0.1, "no files left")
    wait_until(lambda: not stream_leftovers(job_id), 30, 0.1, "the checkpoint to go")


def test_streaming_aggregation_without_watermark_is_refused_at_start(
    alice: Pipeline, catalog: str, source_dir: Path, streams: list[str]
) -> None:
    rows_file(source_dir, "f0", range(0, 10))
    create_source(alice, catalog, source_dir, "id BIGINT, name STRING")
    job_id = start_stream(
        alice,
        streams,
        f"CREATE TABLE {catalog}.d.g AS SELECT name, count(*) AS n FROM {catalog}.d.src "
        "GROUP BY name",
    )
    job = wait_job(alice.api, job_id, {"FAILED"}, timeout=90)
    assert job["error"]["code"] == "STREAMING_UNSUPPORTED", job["error"]
    assert "watermark" in job["error"]["message"].lower()
    assert str(settings.DATA_DIR) not in job["error"]["message"]
    wait_until(lambda: table_of(catalog, "g") is None, 15, 0.1, "the table to be dropped")


# --- streaming INSERT ------------------------------------------------------------------------


def test_streaming_insert_appends_and_aggregate_upserts_into_a_keyed_table(
    alice: Pipeline, catalog: str, source_dir: Path, streams: list[str], plain_spark: Any
) -> None:
    rows_file(source_dir, "f0", range(0, 70))
    create_source(alice, catalog, source_dir, "id BIGINT, name STRING")
    alice.ok(f"CREATE TABLE {catalog}.d.m (id BIGINT, name STRING)")
    alice.ok(f"INSERT INTO {catalog}.d.m VALUES (-1, 'before')")
    alice.ok(f"CREATE TABLE {catalog}.d.k (name STRING, n BIGINT, PRIMARY KEY (name) NOT ENFORCED)")
    append = start_stream(
        alice, streams, f"INSERT INTO {catalog}.d.m SELECT id, name FROM {catalog}.d.src"
    )
    upsert = start_stream(
        alice,
        streams,
        f"INSERT INTO {catalog}.d.k SELECT name, count(*) AS n FROM {catalog}.d.src GROUP BY name",
    )
    wait_until(lambda: count_of(catalog, "m") == 71, 90, 0.1, "the first file in m")
    wait_until(lambda: count_of(catalog, "k") == 7, 90, 0.1, "the counts in k")
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
        cancel(alice, job_id)
    assert count_of(catalog, "m") == 101 and count_of(catalog, "k") == 7


# --- watermarks ------------------------------------------------------------------------------

# (file, event seconds): window 10 s, watermark delay 5 s. After f0 the watermark is 7 s,
# after f1 20 s, after f2 55 s: 3 (f1) and 9, 18 (f2) are late and dropped.
EVENT_FILES = [
    ("e0", [1, 2, 12]),
    ("e1", [3, 8, 25]),
    ("e2", [9, 18, 22, 60]),
]
WINDOWED = (
    "SELECT window.start AS ws, window.end AS we, count(*) AS n FROM {src} "
    "GROUP BY window(ts, '10 seconds')"
)


def _event_table(seconds: list[int]) -> pa.Table:
    base = 1_700_000_000
    return pa.table(
        {"id": list(range(len(seconds))), "ts": [(base + s) * 1_000_000 for s in seconds]},
        schema=EVENT_SCHEMA,
    )


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
    alice: Pipeline,
    catalog: str,
    source_dir: Path,
    streams: list[str],
    plain_spark: Any,
    tmp_path: Path,
) -> None:
    create_source(
        alice,
        catalog,
        source_dir,
        "id BIGINT, ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND",
    )
    job_id = start_stream(
        alice, streams, f"CREATE TABLE {catalog}.d.w AS " + WINDOWED.format(src=f"{catalog}.d.src")
    )
    wait_job(alice.api, job_id, {"RUNNING"})

    # Plain Structured Streaming on the same files, batch for batch.
    plain_rows: list[tuple[Any, ...]] = []

    def keep(batch: Any, batch_id: int) -> None:
        plain_rows.extend(tuple(r) for r in batch.collect())

    from pyspark.sql import functions as sf

    reader = plain_spark.readStream.schema("id BIGINT, ts TIMESTAMP").parquet(str(source_dir))
    frame = reader.withWatermark("ts", "5 seconds").groupBy(sf.window("ts", "10 seconds")).count()
    frame = frame.selectExpr("window.start AS ws", "window.end AS we", "count AS n")
    plain = (
        frame.writeStream.outputMode("append")
        .option("checkpointLocation", str(tmp_path / "plain-checkpoint"))
        .trigger(processingTime=f"{TRIGGER_MS} milliseconds")
        .foreachBatch(keep)
        .start()
    )
    try:
        for name, seconds in EVENT_FILES:
            write_file(source_dir, name, _event_table(seconds))
            wait_until(partial(_checkpoint_has, job_id, name), 60, 0.1, name)
            plain.processAllAvailable()
        # The windows the last watermark closed come out in the next (no-data) batch.
        wait_until(lambda: len(plain_rows) == 3, 30, 0.1, lambda: f"plain: {plain_rows}")
    finally:
        plain.stop()
    expected = sorted(plain_rows)
    assert [r[2] for r in expected] == [3, 1, 2]  # Spark's own answer, late rows dropped
    wait_until(
        lambda: count_of(catalog, "w") == 3,
        60,
        0.1,
        lambda: f"w to hold 3 windows, not {count_of(catalog, 'w')}",
    )
    assert table_rows(plain_spark, catalog, "w") == expected
    assert stream_of(job_id)["watermark"] is not None
    cancel(alice, job_id)


# --- streaming SELECT preview ------------------------------------------------------------------


def test_streaming_select_preview_while_running_and_after_cancel(
    alice: Pipeline, catalog: str, source_dir: Path, streams: list[str]
) -> None:
    rows_file(source_dir, "f0", range(0, 20))
    create_source(alice, catalog, source_dir, "id BIGINT, name STRING")
    job_id = start_stream(alice, streams, f"SELECT id, name FROM {catalog}.d.src")
    wait_job(alice.api, job_id, {"RUNNING"})

    def preview() -> list[list[Any]] | None:
        response = alice.api.get(f"{API}/jobs/{job_id}/result")
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
    assert get_job(alice.api, job_id)["status"] == "RUNNING"

    cancel(alice, job_id)
    _, rows = result_rows(alice.api, job_id)
    assert sorted(r[0] for r in rows) == list(range(25))


def test_rate_connector_preview_grows_until_stopped(alice: Pipeline, streams: list[str]) -> None:
    session_id = open_session(alice.api, STREAMING)
    created = statement(
        alice.api,
        session_id,
        "CREATE TEMPORARY TABLE r (`timestamp` TIMESTAMP, `value` BIGINT) "
        "WITH ('connector' = 'rate', 'rows-per-second' = '50')",
        wait=30,
    )
    assert created["status"] == "FINISHED", created
    job_id = str(statement(alice.api, session_id, "SELECT value, `timestamp` FROM r")["id"])
    streams.append(job_id)

    def values(least: int) -> list[int] | None:
        response = alice.api.get(f"{API}/jobs/{job_id}/result?page_size=1000")
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
    stream = get_job(alice.api, job_id)["progress"]["stream"]
    assert stream["rows_committed"] >= len(later) and stream["batches"] >= 2
    cancel(alice, job_id)
    assert values(1)  # the last tail stays


# --- hostile plans -----------------------------------------------------------------------------


def test_streaming_source_outside_the_storage_roots_is_refused(
    alice: Pipeline, catalog: str, source_dir: Path, streams: list[str], tmp_path: Path
) -> None:
    rows_file(source_dir, "f0", range(0, 5))
    outside = tmp_path / "outside"
    outside.mkdir()
    rows_file(outside, "secret", range(0, 5))
    create_source(alice, catalog, source_dir, "id BIGINT, name STRING")
    sql = f"SELECT id, name FROM {catalog}.d.src"
    plan = planned(stream_session(alice), sql)
    assert plan["relations"][0]["streaming"] is True
    plan["relations"][0]["path"] = str(outside)
    job_id = start_plan(alice, streams, plan, sql)
    job = wait_job(alice.api, job_id, {"FAILED"}, timeout=90)
    assert job["error"]["code"] == "FORBIDDEN_SQL", job["error"]
    assert "cannot be read" in job["error"]["message"]

    rate = planned(stream_session(alice), sql)
    rate["relations"][0].update(format="rate", path="", options={"rampUpTime": "1"})
    job_id = start_plan(alice, streams, rate, sql)
    job = wait_job(alice.api, job_id, {"FAILED"}, timeout=90)
    assert job["error"]["code"] == "FORBIDDEN_SQL", job["error"]
    assert "rowsPerSecond" in job["error"]["message"]
