"""Writes on a real worker (FLIP-218): CTAS, INSERT and statement sets, over REST.

Every path is checked in the catalog AND on disk: a finished write leaves its data only
where the table points (no staging directory anywhere under the warehouse or the external
path); a failed, cancelled, timed-out or lost write leaves nothing (no table, no files) and
an INSERT that did not finish leaves the table's old data as it was.

Each test uses its own catalog (``w<hex>``), so its warehouse directory
``<warehouse>/<catalog>/`` holds only its own tables' files. The test that kills the worker
runs last and starts it again.
"""

from __future__ import annotations

import contextlib
import os
import threading
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.db import connection

from catalog.models import Table
from jobs.models import Job
from tests.conftest import API
from tests.grants_support import share
from tests.waiting import holds_for, wait_until
from tests.worker_helpers import (
    Pipeline,
    events,
    get_job,
    result_rows,
    wait_job,
)
from tests.workers import WorkerProcess

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker"),
]

STAGING_PREFIX = "_tessera_staging_"
# A write that takes minutes on this machine: cancelled, timed out or killed mid-way.
SLOW_QUERY = (
    "SELECT id, id * 7 AS seven, sha2(CAST(id AS STRING), 256) AS digest "
    "FROM range(0, 3000000000, 1, 4)"
)
# The events of a CTAS that failed: its stage table dropped and its files deleted after.
CTAS_FAILED_EVENTS = [
    "created",
    "stage_table_created",
    "running",
    "failed",
    "stage_table_dropped",
    "data_cleaned",
]
# Fails inside Spark on one row, after other rows (and tasks) were written.
FAILING_QUERY = "SELECT id, 10 DIV (id - 1999999) AS r FROM range(0, 3000000, 1, 3)"


@pytest.fixture
def external_dir() -> Path:
    return Path(settings.TESSERA_STORAGE_ROOTS[0]) / f"ext-{uuid.uuid4().hex[:10]}"


# --- what is in the catalog and on disk --------------------------------------------------------


def table_row(catalog: str, name: str) -> Table | None:
    return Table.objects.filter(
        database__catalog__name=catalog, database__name="d", name_key=name.lower()
    ).first()


def warehouse_dirs(catalog: str) -> set[str]:
    """The directories under the catalog's warehouse folder (tables' data, staging)."""
    root = Path(settings.WAREHOUSE_DIR) / catalog / "d"
    return {str(p) for p in root.iterdir()} if root.is_dir() else set()


def warehouse_files(catalog: str) -> list[str]:
    """Everything under the catalog's warehouse folder, for a failure's message."""
    root = Path(settings.WAREHOUSE_DIR) / catalog / "d"
    return [str(p.relative_to(root)) for p in root.rglob("*")] if root.is_dir() else []


def staging_dirs(path: Path) -> list[str]:
    """Staging directories anywhere under ``path``."""
    if not path.exists():
        return []
    return [
        str(Path(directory) / name)
        for directory, subdirs, _ in os.walk(path)
        for name in subdirs
        if name.startswith(STAGING_PREFIX)
    ]


def data_files(path: Path) -> list[Path]:
    return sorted(
        p
        for p in path.rglob("*")
        if p.is_file() and not p.name.startswith(("_", ".")) and STAGING_PREFIX not in str(p)
    )


def assert_nothing_left(catalog: str, name: str, external: Path | None = None) -> None:
    """No table, no stage table, no files of the write.

    The stage table is dropped by a hook that runs after the terminal transition commits, so
    a client that has just seen FAILED or CANCELED may still see it for a moment."""
    wait_until(lambda: table_row(catalog, name) is None, 15, 0.1, f"the stage table {name} to go")
    holds_for(
        lambda: not warehouse_dirs(catalog),
        3.0,
        60,
        lambda: f"the warehouse to stay empty (left: {sorted(warehouse_files(catalog))[:20]})",
    )
    if external is not None:
        holds_for(
            lambda: not external.exists() or not any(external.iterdir()),
            3.0,
            60,
            f"{external} to stay empty",
        )


def settled_events(job_id: Any, expected: list[str], timeout: float = 15) -> list[str]:
    """The job's events once they equal ``expected`` (the hooks after a terminal transition
    run after its transaction commits, so a client may see the status a moment earlier)."""
    with contextlib.suppress(pytest.fail.Exception):  # the caller's assert shows the difference
        wait_until(lambda: events(job_id) == expected, timeout, 0.1, f"the events {expected}")
    return events(job_id)


def sorted_rows(frame: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(row) for row in frame.collect())


def wait_running_write(job_id: str) -> Job:
    """Until Spark is writing the job's files: its staging location exists on disk and the
    job's progress shows the write's tasks. (The location appears as the write sets up,
    before its Spark job starts; a cancel in that gap is one Spark Connect can lose, see
    docs/deploy.md, and not the mid-write cancel the tests mean.)"""

    def writing() -> Job | None:
        job = Job.objects.get(pk=job_id)
        assert job.status in {"CREATED", "RUNNING"}, (job.status, job.error)
        locations = [Path(entry["location"]) for entry in (job.staging or {}).values()]
        tasks = int((job.progress or {}).get("tasks_total") or 0)
        if job.status == "RUNNING" and locations and all(p.exists() for p in locations):
            return job if tasks > 0 else None
        return None

    job: Job = wait_until(writing, 60, 0.1, "the write to start")
    return job


# --- CTAS ------------------------------------------------------------------------------------


def test_ctas_managed(alice_sql: Pipeline, catalog: str, plain_spark: Any) -> None:
    query = (
        "SELECT id, id * 2 AS twice, CAST(id AS STRING) AS label, "
        "CAST(id / 4 AS DECIMAL(12, 2)) AS quarter FROM range(0, 5000, 1, 3)"
    )
    job = alice_sql.run(f"CREATE TABLE {catalog}.d.t AS {query}")
    assert job["status"] == "FINISHED", job
    assert result_rows(alice_sql.api, job["id"])[1] == [
        [f"Created table `{catalog}`.`d`.`t` with 5000 rows."]
    ]
    expected_events = [
        "created",
        "stage_table_created",
        "running",
        "data_written",
        "data_committed",
        "finished",
    ]
    assert settled_events(job["id"], expected_events) == expected_events

    table = table_row(catalog, "t")
    assert table is not None and table.status == "active" and table.staged_by_job is None
    from engine.typing import to_tessera_type

    expected_types = [
        (f.name, to_tessera_type(f.dataType, f.nullable).sql())
        for f in plain_spark.sql(query).schema.fields
    ]
    columns = (table.resolved_schema or {})["columns"]
    assert [(c["name"], c["data_type"]) for c in columns] == expected_types
    assert {c["kind"] for c in columns} == {"physical"}
    assert list(table.columns.values_list("name", flat=True)) == ["id", "twice", "label", "quarter"]

    # The data lives only where the table points; nothing staged is left.
    assert warehouse_dirs(catalog) == {table.location}
    assert sorted_rows(plain_spark.read.parquet(table.location)) == sorted_rows(
        plain_spark.sql(query)
    )
    assert alice_sql.rows(f"SELECT count(*), sum(twice) FROM {catalog}.d.t") == [
        [5000, sum(range(5000)) * 2]
    ]
    committed = Job.objects.get(pk=job["id"])
    written = [e.detail for e in committed.events.filter(type="data_written")]
    assert written == [{"table": f"`{catalog}`.`d`.`t`", "rows": 5000}]


def test_ctas_external_partitioned(
    alice_sql: Pipeline, catalog: str, external_dir: Path, plain_spark: Any
) -> None:
    query = "SELECT id, id % 3 AS k, concat('n', id) AS name FROM range(0, 900, 1, 2)"
    job = alice_sql.run(
        f"CREATE TABLE {catalog}.d.ext WITH ('connector' = 'parquet', 'path' = '{external_dir}') "
        f"PARTITIONED BY (k) AS {query}"
    )
    assert job["status"] == "FINISHED", job
    table = table_row(catalog, "ext")
    assert table is not None and table.status == "active"
    assert table.partition_by == ["k"] and table.location == ""
    assert sorted(p.name for p in external_dir.iterdir() if not p.name.startswith("_")) == [
        "k=0",
        "k=1",
        "k=2",
    ]
    assert staging_dirs(external_dir) == []
    assert warehouse_dirs(catalog) == set()
    expected = plain_spark.sql(query).select("id", "name", "k")
    assert sorted_rows(plain_spark.read.parquet(str(external_dir)).select("id", "name", "k")) == (
        sorted_rows(expected)
    )
    assert alice_sql.rows(f"SELECT k, count(*) FROM {catalog}.d.ext GROUP BY k ORDER BY k") == [
        [0, 300],
        [1, 300],
        [2, 300],
    ]


def test_ctas_failing_inside_spark_leaves_nothing(alice_sql: Pipeline, catalog: str) -> None:
    job = alice_sql.run(f"CREATE TABLE {catalog}.d.bad AS {FAILING_QUERY}")
    assert job["status"] == "FAILED", job
    assert job["error"]["code"] == "SPARK_ERROR"
    assert "DIVIDE_BY_ZERO" in job["error"]["message"]
    for noise in ("\tat ", "Traceback", "org.apache.spark", "\n"):
        assert noise not in job["error"]["message"]
    assert settled_events(job["id"], CTAS_FAILED_EVENTS) == CTAS_FAILED_EVENTS
    assert_nothing_left(catalog, "bad")


def test_ctas_raise_error_on_an_external_path_leaves_nothing(
    alice_sql: Pipeline, catalog: str, external_dir: Path
) -> None:
    query = (
        "SELECT id, CASE WHEN id = 2500000 THEN CAST(raise_error('row 2500000 is bad') AS BIGINT) "
        "ELSE id END AS v FROM range(0, 3000000, 1, 3)"
    )
    job = alice_sql.run(
        f"CREATE TABLE {catalog}.d.bad WITH ('connector' = 'parquet', 'path' = '{external_dir}') "
        f"AS {query}"
    )
    assert job["status"] == "FAILED", job
    assert job["error"]["code"] == "SPARK_ERROR"
    assert "row 2500000 is bad" in job["error"]["message"]
    assert settled_events(job["id"], CTAS_FAILED_EVENTS) == CTAS_FAILED_EVENTS
    assert_nothing_left(catalog, "bad", external_dir)
    assert not external_dir.exists()  # the CTAS made it; clean-up removed it


def test_ctas_partition_column_must_exist(alice_sql: Pipeline, catalog: str) -> None:
    job = alice_sql.run(f"CREATE TABLE {catalog}.d.p PARTITIONED BY (nope) AS SELECT 1 AS a")
    assert job["status"] == "FAILED", job
    assert job["error"]["code"] == "VALIDATION_ERROR"
    assert "`nope`" in job["error"]["message"]
    assert "data_written" not in events(job["id"])
    assert_nothing_left(catalog, "p")


def test_ctas_void_column_is_refused_before_writing(alice_sql: Pipeline, catalog: str) -> None:
    job = alice_sql.run(f"CREATE TABLE {catalog}.d.v AS SELECT 1 AS a, NULL AS b")
    assert job["status"] == "FAILED", job
    assert job["error"]["code"] == "VALIDATION_ERROR"
    assert "`b`" in job["error"]["message"] and "VOID" in job["error"]["message"]
    assert_nothing_left(catalog, "v")


def test_ctas_cancel_mid_write_leaves_nothing(alice_sql: Pipeline, catalog: str) -> None:
    job_id = alice_sql.submit(f"CREATE TABLE {catalog}.d.slow AS {SLOW_QUERY}")
    wait_running_write(job_id)
    assert table_row(catalog, "slow") is not None  # the stage table, while it runs
    response = alice_sql.api.post(f"{API}/jobs/{job_id}/cancel")
    assert response.status_code in (200, 202), response.content
    job = wait_job(alice_sql.api, job_id, {"CANCELED"}, timeout=30)
    assert job["error"]["code"] == "CANCELED"
    expected_events = [
        "created",
        "stage_table_created",
        "running",
        "cancel_requested",
        "canceled",
        "stage_table_dropped",
        "data_cleaned",
    ]
    assert settled_events(job_id, expected_events) == expected_events
    assert_nothing_left(catalog, "slow")


def test_ctas_timeout_leaves_nothing(catalog: str, external_dir: Path) -> None:
    share(catalog, ("USE", "SELECT", "CREATE"))  # other users create tables in alice's catalog
    carol = Pipeline("carol", {"job.timeout_seconds": "4"})
    job = carol.run(
        f"CREATE TABLE {catalog}.d.slow WITH ('connector' = 'parquet', 'path' = '{external_dir}') "
        f"AS {SLOW_QUERY}",
        timeout=30,
    )
    assert job["status"] == "FAILED", job
    assert job["error"]["code"] == "TIMEOUT"
    # Not before its time: the job's own record ran for at least the timeout.
    ran = datetime.fromisoformat(job["finished_at"]) - datetime.fromisoformat(job["started_at"])
    assert ran >= timedelta(seconds=4), job
    assert settled_events(job["id"], CTAS_FAILED_EVENTS) == CTAS_FAILED_EVENTS
    assert_nothing_left(catalog, "slow", external_dir)


def test_ctas_if_not_exists_on_an_existing_table_runs_nothing(
    alice_sql: Pipeline, catalog: str
) -> None:
    first = alice_sql.run(f"CREATE TABLE {catalog}.d.t AS SELECT id FROM range(10)")
    assert first["status"] == "FINISHED", first
    before = warehouse_dirs(catalog)
    job = alice_sql.run(f"CREATE TABLE IF NOT EXISTS {catalog}.d.t AS SELECT 'other' AS s")
    assert job["status"] == "FINISHED", job
    kinds = events(job["id"])
    assert "skipped_exists" in kinds
    assert "stage_table_created" not in kinds and "data_written" not in kinds
    assert Job.objects.get(pk=job["id"]).worker == ""  # no worker, no Spark
    assert warehouse_dirs(catalog) == before
    assert alice_sql.rows(f"SELECT count(*) FROM {catalog}.d.t") == [[10]]

    again = alice_sql.run(f"CREATE TABLE {catalog}.d.t AS SELECT 1 AS x")
    assert again["status"] == "FAILED" and again["error"]["code"] == "ALREADY_EXISTS", again


def _submit_together(pipelines: list[Pipeline], sqls: list[str]) -> list[str]:
    """Submit one statement per pipeline at the same moment (one thread each)."""
    barrier = threading.Barrier(len(pipelines))
    ids: list[str] = [""] * len(pipelines)
    failures: list[BaseException] = []

    def submit(index: int) -> None:
        try:
            barrier.wait(10)
            ids[index] = pipelines[index].submit(sqls[index])
        except BaseException as exc:
            failures.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=submit, args=(i,)) for i in range(len(pipelines))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not failures, failures
    return ids


@pytest.mark.parametrize("atomic", [False, True], ids=["staged", "atomic"])
def test_concurrent_ctas_one_wins(catalog: str, atomic: bool, plain_spark: Any) -> None:
    properties = {"table.ctas.atomic": "true"} if atomic else {}
    share(catalog, ("USE", "SELECT", "CREATE"))  # other users create tables in alice's catalog
    racers = [Pipeline("racer", properties), Pipeline("racer", properties)]
    sqls = [
        f"CREATE TABLE {catalog}.d.race AS SELECT id, {n} AS who FROM range(0, 200000, 1, 2)"
        for n in (1, 2)
    ]
    ids = _submit_together(racers, sqls)
    jobs = [wait_job(p.api, job_id) for p, job_id in zip(racers, ids, strict=True)]
    finished = [j for j in jobs if j["status"] == "FINISHED"]
    failed = [j for j in jobs if j["status"] == "FAILED"]
    assert len(finished) == 1 and len(failed) == 1, jobs
    assert failed[0]["error"]["code"] == "ALREADY_EXISTS", failed[0]
    assert "already exists" in failed[0]["error"]["message"]
    loser_events = events(failed[0]["id"])
    if atomic:  # both ran; the second commit found the name taken
        assert "data_written" in loser_events and "stage_table_created" not in loser_events
        wait_until(lambda: "data_cleaned" in events(failed[0]["id"]), 15, 0.1, "clean-up")
    else:  # the stage table of the first made the second fail before it ran
        assert "running" not in loser_events
    table = table_row(catalog, "race")
    assert table is not None and table.status == "active"
    winner = 1 if finished[0]["id"] == ids[0] else 2
    assert warehouse_dirs(catalog) == {table.location}  # nothing of the loser
    data = plain_spark.read.parquet(table.location)
    assert data.count() == 200000
    assert {row.who for row in data.select("who").distinct().collect()} == {winner}


def test_atomic_ctas_has_no_catalog_entry_until_commit(catalog: str, plain_spark: Any) -> None:
    share(catalog, ("USE", "SELECT", "CREATE"))  # other users create tables in alice's catalog
    dave = Pipeline("dave")
    setting = dave.run("SET table.ctas.atomic = true")
    assert setting["status"] == "FINISHED", setting
    job_id = dave.submit(
        f"CREATE TABLE {catalog}.d.atomic AS "
        "SELECT id, sha2(CAST(id AS STRING), 256) AS digest FROM range(0, 6000000, 1, 2)"
    )
    wait_running_write(job_id)
    seen_while_running = table_row(catalog, "atomic")
    job = wait_job(dave.api, job_id, timeout=120)
    assert seen_while_running is None
    assert job["status"] == "FINISHED", job
    table = table_row(catalog, "atomic")
    assert table is not None and table.status == "active"
    expected_events = ["created", "running", "data_written", "data_committed", "finished"]
    assert settled_events(job_id, expected_events) == expected_events
    assert warehouse_dirs(catalog) == {table.location}
    assert plain_spark.read.parquet(table.location).count() == 6000000


# --- INSERT ----------------------------------------------------------------------------------


@pytest.fixture
def managed(alice_sql: Pipeline, catalog: str) -> str:
    """A managed table ``m`` (id BIGINT, name STRING, price DECIMAL(10, 2)) with 100 rows."""
    job = alice_sql.run(
        f"CREATE TABLE {catalog}.d.m AS SELECT id, concat('m', id) AS name, "
        "CAST(id * 1.5 AS DECIMAL(10, 2)) AS price FROM range(0, 100)"
    )
    assert job["status"] == "FINISHED", job
    return f"{catalog}.d.m"


def _table_frame(plain_spark: Any, catalog: str, name: str) -> Any:
    table = table_row(catalog, name)
    assert table is not None
    path = table.location or table.options["path"]
    return plain_spark.read.parquet(path)


def test_insert_into_managed_appends(
    alice_sql: Pipeline, catalog: str, managed: str, plain_spark: Any
) -> None:
    old_location = table_row(catalog, "m").location  # type: ignore[union-attr]
    before = sorted_rows(_table_frame(plain_spark, catalog, "m"))
    addition = (
        "SELECT CAST(id AS INT) AS id, concat('new', id) AS name, CAST(id AS DECIMAL(6, 1)) "
        "FROM range(1000, 1050)"
    )
    job = alice_sql.run(f"INSERT INTO {managed} {addition}")
    assert job["status"] == "FINISHED", job
    assert result_rows(alice_sql.api, job["id"])[1] == [
        [f"Inserted 50 rows into `{catalog}`.`d`.`m`."]
    ]
    expected_events = ["created", "running", "data_written", "data_committed", "finished"]
    assert settled_events(job["id"], expected_events) == expected_events
    table = table_row(catalog, "m")
    assert table is not None and table.location != old_location
    # The old directory stays: it is version 0 (docs/writes.md, "Table versions").
    assert warehouse_dirs(catalog) == {old_location, table.location}
    plain = plain_spark.sql(
        "SELECT id, concat('new', id) AS name, CAST(id AS DECIMAL(10, 2)) AS price "
        "FROM range(1000, 1050)"
    )
    assert sorted_rows(plain_spark.read.parquet(table.location)) == sorted(
        before + sorted_rows(plain)
    )
    assert alice_sql.rows(f"SELECT count(*) FROM {managed}") == [[150]]

    # A column list: reordered, by name.
    listed = alice_sql.run(f"INSERT INTO {managed} (price, id, name) SELECT 9.99, 7777, 'listed'")
    assert listed["status"] == "FINISHED", listed
    assert alice_sql.rows(f"SELECT id, name, price FROM {managed} WHERE id = 7777") == [
        [7777, "listed", "9.99"]
    ]


def test_insert_into_external_appends(
    alice_sql: Pipeline, catalog: str, external_dir: Path, plain_spark: Any
) -> None:
    created = alice_sql.run(
        f"CREATE TABLE {catalog}.d.x WITH ('connector' = 'parquet', 'path' = '{external_dir}') "
        "AS SELECT id, id % 5 AS bucket FROM range(0, 300, 1, 2)"
    )
    assert created["status"] == "FINISHED", created
    files_before = data_files(external_dir)
    job = alice_sql.run(f"INSERT INTO {catalog}.d.x SELECT id, id % 5 FROM range(300, 420, 1, 2)")
    assert job["status"] == "FINISHED", job
    assert staging_dirs(external_dir) == []
    files_after = data_files(external_dir)
    assert set(files_before) < set(files_after)
    expected = sorted_rows(plain_spark.sql("SELECT id, id % 5 AS bucket FROM range(0, 420)"))
    assert sorted_rows(plain_spark.read.parquet(str(external_dir))) == expected
    assert alice_sql.rows(f"SELECT count(*), max(id) FROM {catalog}.d.x") == [[420, 419]]


def test_insert_type_mismatch_writes_nothing(
    alice_sql: Pipeline, catalog: str, managed: str
) -> None:
    before = warehouse_dirs(catalog)
    job = alice_sql.run(f"INSERT INTO {managed} SELECT 'x' AS a, 'y' AS b, 'z' AS c")
    assert job["status"] == "FAILED", job
    assert job["error"]["code"] == "VALIDATION_ERROR"
    message = job["error"]["message"]
    assert "`id`" in message and "`a`" in message and "STRING" in message and "BIGINT" in message
    assert "data_written" not in events(job["id"])
    assert warehouse_dirs(catalog) == before
    assert alice_sql.rows(f"SELECT count(*) FROM {managed}") == [[100]]


def test_insert_null_into_a_not_null_column_fails(
    alice_sql: Pipeline, catalog: str, managed: str
) -> None:
    table = table_row(catalog, "m")
    assert table is not None and (table.resolved_schema or {})["columns"][0]["nullable"] is False
    job = alice_sql.run(f"INSERT INTO {managed} SELECT CAST(NULL AS BIGINT), 'n', 1.0")
    assert job["status"] == "FAILED", job
    assert job["error"]["code"] == "SPARK_ERROR"
    assert "NOT NULL column `id`" in job["error"]["message"]
    wait_until(lambda: warehouse_dirs(catalog) == {table.location}, 20, 0.2, "the clean-up")
    assert alice_sql.rows(f"SELECT count(*) FROM {managed}") == [[100]]


def test_insert_column_count_mismatch_found_by_the_worker(
    alice_sql: Pipeline, catalog: str, managed: str
) -> None:
    job = alice_sql.run(f"INSERT INTO {managed} SELECT * FROM range(3)")
    assert job["status"] == "FAILED", job
    assert job["error"]["code"] == "VALIDATION_ERROR"
    assert "1 column" in job["error"]["message"] and "`price`" in job["error"]["message"]
    assert alice_sql.rows(f"SELECT count(*) FROM {managed}") == [[100]]


def test_insert_overwrite_replaces_and_its_failure_keeps_the_old_data(
    alice_sql: Pipeline, catalog: str, managed: str
) -> None:
    failed = alice_sql.run(
        f"INSERT OVERWRITE {managed} "
        "SELECT id, 'bad', CAST(10 DIV (id - 1999999) AS DECIMAL(10, 2)) "
        "FROM range(0, 3000000, 1, 3)"
    )
    assert failed["status"] == "FAILED", failed
    assert failed["error"]["code"] == "SPARK_ERROR"
    table = table_row(catalog, "m")
    assert table is not None
    wait_until(lambda: warehouse_dirs(catalog) == {table.location}, 20, 0.2, "clean-up")
    assert alice_sql.rows(f"SELECT count(*), min(name) FROM {managed}") == [[100, "m0"]]

    job = alice_sql.run(f"INSERT OVERWRITE {managed} SELECT 1, 'only', 2.5")
    assert job["status"] == "FINISHED", job
    assert alice_sql.rows(f"SELECT id, name, price FROM {managed}") == [[1, "only", "2.50"]]
    assert len(warehouse_dirs(catalog)) == 2  # the new version and the kept old one


# --- statement sets ---------------------------------------------------------------------------


def _two_tables(alice_sql: Pipeline, catalog: str, external_dir: Path) -> None:
    for sql in (
        f"CREATE TABLE {catalog}.d.a AS SELECT id, 'a' AS src FROM range(0, 10)",
        f"CREATE TABLE {catalog}.d.b WITH ('connector' = 'parquet', 'path' = '{external_dir}') "
        "AS SELECT id, 'b' AS src FROM range(0, 20)",
    ):
        job = alice_sql.run(sql)
        assert job["status"] == "FINISHED", job


def test_statement_set_commits_every_insert(
    alice_sql: Pipeline, catalog: str, external_dir: Path
) -> None:
    _two_tables(alice_sql, catalog, external_dir)
    job = alice_sql.run(
        "EXECUTE STATEMENT SET BEGIN "
        f"INSERT INTO {catalog}.d.a SELECT id, 'set' FROM range(100, 105); "
        f"INSERT INTO {catalog}.d.b SELECT id, 'set' FROM range(200, 203); "
        "END"
    )
    assert job["status"] == "FINISHED", job
    assert result_rows(alice_sql.api, job["id"])[1] == [
        [f"Inserted 5 rows into `{catalog}`.`d`.`a`."],
        [f"Inserted 3 rows into `{catalog}`.`d`.`b`."],
    ]
    kinds = events(job["id"])
    assert kinds.count("data_written") == 2 and kinds.count("data_committed") == 2
    assert alice_sql.rows(f"SELECT count(*) FROM {catalog}.d.a") == [[15]]
    assert alice_sql.rows(f"SELECT count(*) FROM {catalog}.d.b") == [[23]]
    assert staging_dirs(external_dir) == []
    assert len(warehouse_dirs(catalog)) == 2  # a's new version and its kept old one


def test_statement_set_with_a_failing_insert_commits_nothing(
    alice_sql: Pipeline, catalog: str, external_dir: Path
) -> None:
    _two_tables(alice_sql, catalog, external_dir)
    a_before = table_row(catalog, "a").location  # type: ignore[union-attr]
    b_files = data_files(external_dir)
    job = alice_sql.run(
        "EXECUTE STATEMENT SET BEGIN "
        f"INSERT INTO {catalog}.d.a SELECT id, 'set' FROM range(100, 105); "
        f"INSERT INTO {catalog}.d.b SELECT id, CAST(10 DIV (id - 1999999) AS STRING) "
        "FROM range(0, 3000000, 1, 3); "
        "END"
    )
    assert job["status"] == "FAILED", job
    assert job["error"]["code"] == "SPARK_ERROR"
    wait_until(lambda: "data_cleaned" in events(job["id"]), 15, 0.1, "the failure hooks")
    kinds = events(job["id"])
    assert kinds.count("data_written") == 1 and "data_committed" not in kinds
    wait_until(lambda: warehouse_dirs(catalog) == {a_before}, 20, 0.2, "the clean-up")
    assert staging_dirs(external_dir) == []
    assert data_files(external_dir) == b_files
    assert alice_sql.rows(f"SELECT count(*) FROM {catalog}.d.a") == [[10]]
    assert alice_sql.rows(f"SELECT count(*) FROM {catalog}.d.b") == [[20]]


# --- the worker dies mid-write (runs after the other tests; the ``worker`` fixture starts the
# shared worker again if a later test needs it) -----------------------------------------------


@pytest.mark.kills_shared_worker
def test_worker_killed_mid_write_leaves_nothing(
    alice_sql: Pipeline, catalog: str, worker: WorkerProcess, settings: Any
) -> None:
    settings.TESSERA_WORKER_TIMEOUT_SECONDS = 4  # as the worker was told (tests/workers.py)
    job_id = alice_sql.submit(f"CREATE TABLE {catalog}.d.lost AS {SLOW_QUERY}")
    wait_running_write(job_id)
    assert warehouse_dirs(catalog)  # Spark is writing the staging directory
    worker.kill()

    def ended() -> dict[str, Any] | None:
        body = get_job(alice_sql.api, job_id)  # GET reaps lazily once the heartbeat is stale
        return body if body["status"] != "RUNNING" else None

    body = wait_until(ended, 30, 0.25, "the lost job to fail")
    assert body["status"] == "FAILED" and body["error"]["code"] == "WORKER_LOST", body
    assert settled_events(job_id, CTAS_FAILED_EVENTS) == CTAS_FAILED_EVENTS
    assert_nothing_left(catalog, "lost")
