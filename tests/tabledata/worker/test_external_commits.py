"""External tables commit in one step (docs/writes.md, "External tables: one step for
Tessera, what other readers see"), on a real worker with real Spark.

A commit renames the job's data into the table's path (one rename per file of an
unpartitioned table, one per partition directory of a partitioned one), then swaps the
manifest ``<path>/_tessera_current`` by one rename; the worker reads exactly what the
manifest lists. Checked here: results through Tessera after INSERT and OVERWRITE
(unpartitioned and partitioned; parquet, csv and json), what plain PySpark reading the path
sees, readers running while many commits run (never a partial commit), and failures — in
Spark, and in the commit itself between its steps — leaving the table as it was and no
staging behind.
"""

from __future__ import annotations

import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from catalog import services as catalog_services
from engine.registration import DataChanging, load_committed
from tabledata import manifest
from tests.grants_support import share
from tests.waiting import holds_for, wait_until
from tests.worker_helpers import (
    Pipeline,
    events,
    result_rows,
)

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker"),
]

STAGING_PREFIX = "_tessera_staging_"


@pytest.fixture
def catalog(alice_sql: Pipeline) -> str:
    name = f"x{uuid.uuid4().hex[:10]}"
    catalog_services.catalog_create(user=alice_sql.user, name=name, default_database="d")
    return name


def new_path() -> Path:
    return Path(settings.TESSERA_STORAGE_ROOTS[0]) / f"ext-{uuid.uuid4().hex[:10]}"


def staging_left(path: Path) -> list[str]:
    return [str(p) for p in path.rglob(f"{STAGING_PREFIX}*")] if path.exists() else []


def tessera_read(spark: Any, path: Path, fmt: str, schema: str) -> Any:
    """Read the path as the worker does (``registration.load_committed``: the manifest's
    entries, ``basePath`` = the path, listed again when a commit swapped the manifest)."""
    return load_committed(spark.read.format(fmt).schema(schema), str(path), {}, str(path))


def outside_read(spark: Any, path: Path, fmt: str, schema: str) -> Any:
    """What a reader outside Tessera sees: plain ``spark.read.<fmt>(path)``."""
    return spark.read.format(fmt).schema(schema).load(str(path))


def ids(frame: Any) -> list[int]:
    return sorted(int(row[0]) for row in frame.select("id").collect())


# --- INSERT and OVERWRITE ---------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["parquet", "csv", "json"])
def test_unpartitioned_insert_and_overwrite(
    alice_sql: Pipeline, catalog: str, plain_spark: Any, fmt: str
) -> None:
    path = new_path()
    table = f"{catalog}.d.u"
    schema = "id BIGINT, label STRING"
    alice_sql.ok(
        f"CREATE TABLE {table} WITH ('connector' = '{fmt}', 'path' = '{path}') AS "
        "SELECT id, concat('a', id) AS label FROM range(0, 30, 1, 3)"
    )
    first = manifest.read(path)
    assert first is not None and first.initial and len(first.entries) >= 1
    assert all(entry.startswith("tessera-") and "/" not in entry for entry in first.entries)

    insert = alice_sql.ok(
        f"INSERT INTO {table} SELECT id, concat('b', id) FROM range(30, 50, 1, 2)"
    )
    assert alice_sql.rows(f"SELECT count(*), min(id), max(id) FROM {table}") == [[50, 0, 49]]
    after_insert = manifest.read(path)
    assert after_insert is not None and after_insert.job == insert["id"]
    assert set(first.entries) < set(after_insert.entries)
    assert not after_insert.removed
    # Outside readers see the same rows once the commit is done.
    assert ids(outside_read(plain_spark, path, fmt, schema)) == list(range(50))
    assert ids(tessera_read(plain_spark, path, fmt, schema)) == list(range(50))

    overwrite = alice_sql.ok(f"INSERT OVERWRITE {table} SELECT id, 'c' FROM range(100, 107, 1, 2)")
    assert alice_sql.rows(f"SELECT count(*), min(id), max(label) FROM {table}") == [[7, 100, "c"]]
    replaced = manifest.read(path)
    assert replaced is not None and replaced.job == overwrite["id"]
    assert set(replaced.removed) == set(after_insert.entries)
    assert not set(replaced.entries) & set(after_insert.entries)
    # The replaced files are deleted right after the commit: outside readers see 7 rows.
    wait_until(lambda: not any((path / e).exists() for e in replaced.removed), 10, 0.1, "old files")
    assert ids(outside_read(plain_spark, path, fmt, schema)) == list(range(100, 107))
    assert staging_left(path) == []


def test_partitioned_insert_and_overwrite(
    alice_sql: Pipeline, catalog: str, plain_spark: Any
) -> None:
    path = new_path()
    table = f"{catalog}.d.p"
    alice_sql.ok(
        f"CREATE TABLE {table} WITH ('connector' = 'parquet', 'path' = '{path}') "
        "PARTITIONED BY (k) AS SELECT id, id % 3 AS k FROM range(0, 30, 1, 2)"
    )
    ctas = manifest.read(path)
    assert ctas is not None
    # One directory per partition, renamed in one step each: k=v/tessera-<job>.
    assert sorted(e.split("/")[0] for e in ctas.entries) == ["k=0", "k=1", "k=2"]
    assert all(e.split("/")[1] == f"tessera-{ctas.job}" for e in ctas.entries)

    insert = alice_sql.ok(f"INSERT INTO {table} SELECT id, id % 4 FROM range(30, 42, 1, 3)")
    assert alice_sql.rows(f"SELECT k, count(*) FROM {table} GROUP BY k ORDER BY k") == [
        [0, 13],
        [1, 13],
        [2, 13],
        [3, 3],
    ]
    listed = manifest.read(path)
    assert listed is not None
    assert f"k=3/tessera-{insert['id']}" in listed.entries
    assert f"k=0/tessera-{insert['id']}" in listed.entries  # next to the CTAS's directory
    outside = outside_read(plain_spark, path, "parquet", "id BIGINT, k INT")
    assert sorted((r.id, r.k) for r in outside.collect()) == sorted(
        [(i, i % 3) for i in range(30)] + [(i, i % 4) for i in range(30, 42)]
    )

    alice_sql.ok(f"INSERT OVERWRITE {table} SELECT id, 9 FROM range(0, 5)")
    assert alice_sql.rows(f"SELECT k, count(*) FROM {table} GROUP BY k") == [[9, 5]]
    # The old partition directories go once the commit is done.
    wait_until(
        lambda: sorted(p.name for p in path.iterdir() if not p.name.startswith("_")) == ["k=9"],
        10,
        0.1,
        "the replaced partitions to go",
    )
    outside = outside_read(plain_spark, path, "parquet", "id BIGINT, k INT")
    assert sorted((r.id, r.k) for r in outside.collect()) == [(i, 9) for i in range(5)]
    assert staging_left(path) == []


def test_a_path_filled_by_another_tool_keeps_its_files(
    alice_sql: Pipeline, catalog: str, plain_spark: Any
) -> None:
    """A table over files Tessera did not write: the first commit lists them in the new
    manifest (INSERT keeps them) — afterwards Tessera reads what the manifest lists."""
    path = new_path()
    plain_spark.range(0, 10).selectExpr("id", "'old' AS label").write.parquet(str(path))
    alice_sql.ok(
        f"CREATE TABLE {catalog}.d.t (id BIGINT, label STRING) "
        f"WITH ('connector' = 'parquet', 'path' = '{path}')"
    )
    assert manifest.read(path) is None
    alice_sql.ok(f"INSERT INTO {catalog}.d.t SELECT id, 'new' FROM range(10, 13)")
    assert alice_sql.rows(
        f"SELECT label, count(*) FROM {catalog}.d.t GROUP BY label ORDER BY 1"
    ) == [
        ["new", 3],
        ["old", 10],
    ]
    listed = manifest.read(path)
    assert listed is not None and listed.initial
    assert [e for e in listed.entries if not e.startswith("tessera-")]  # the old files
    # A file another tool adds now is read by plain Spark, not by Tessera.
    plain_spark.range(50, 52).selectExpr("id", "'late' AS label").write.mode("append").parquet(
        str(path)
    )
    assert alice_sql.rows(f"SELECT count(*) FROM {catalog}.d.t") == [[13]]
    assert outside_read(plain_spark, path, "parquet", "id BIGINT, label STRING").count() == 15


# --- readers while commits run ---------------------------------------------------------------


@pytest.mark.parametrize("partitioned", [False, True])
def test_readers_never_see_a_partial_commit(
    alice_sql: Pipeline, catalog: str, plain_spark: Any, partitioned: bool
) -> None:
    """Many commits (INSERTs of several files each, and OVERWRITEs) while readers count the
    rows: through Tessera (SELECT count(*)) and the worker's own read in a tight loop. Every
    count is one the table had after some commit."""
    path = new_path()
    table = f"{catalog}.d.c"
    partitioning = "PARTITIONED BY (k) " if partitioned else ""
    alice_sql.ok(
        f"CREATE TABLE {table} WITH ('connector' = 'parquet', 'path' = '{path}') {partitioning}"
        "AS SELECT id, id % 3 AS k FROM range(0, 10, 1, 2)"
    )
    allowed = {10}
    statements: list[tuple[str, int]] = []
    count = 10
    for round_ in range(4):
        for _ in range(2):
            count += 7
            statements.append(
                (f"INSERT INTO {table} SELECT id, id % 3 FROM range(0, 7, 1, 3)", count)
            )
        count = 20 + round_
        statements.append(
            (f"INSERT OVERWRITE {table} SELECT id, id % 3 FROM range(0, {count}, 1, 3)", count)
        )
    allowed |= {expected for _, expected in statements}

    stop = threading.Event()
    seen_local: list[int] = []
    missing: list[str] = []  # reads that lost a file an OVERWRITE deleted (documented)
    unexpected: list[str] = []

    def local_reader() -> None:
        while not stop.is_set():
            try:
                frame = tessera_read(plain_spark, path, "parquet", "id BIGINT, k INT")
                seen_local.append(frame.count())
            except DataChanging as exc:  # listed again too often: refused, never a wrong count
                missing.append(str(exc))
            except Exception as exc:
                text = str(exc)
                lost = ("FileNotFound", "does not exist", "PATH_NOT_FOUND", "FAILED_READ_FILE")
                (missing if any(word in text for word in lost) else unexpected).append(text[:300])

    seen_tessera: list[int] = []
    failed_reads: list[dict[str, Any]] = []
    share(catalog)  # another user reads alice's table
    reader = Pipeline("ext")

    def tessera_reader() -> None:
        while not stop.is_set():
            job = reader.run(f"SELECT count(*) FROM {table}")
            if job["status"] == "FINISHED":
                seen_tessera.append(int(result_rows(reader.api, job["id"])[1][0][0]))
            else:  # a read that lost a file an OVERWRITE deleted: allowed, documented
                failed_reads.append(job)

    threads = [threading.Thread(target=local_reader), threading.Thread(target=tessera_reader)]
    for thread in threads:
        thread.start()
    try:
        for sql, _ in statements:
            alice_sql.ok(sql)
    finally:
        stop.set()
        for thread in threads:
            thread.join(120)
    assert alice_sql.rows(f"SELECT count(*) FROM {table}") == [[statements[-1][1]]]
    assert not unexpected, unexpected
    assert all(job["error"]["code"] == "SPARK_ERROR" for job in failed_reads), failed_reads
    assert seen_local and seen_tessera, (seen_local, seen_tessera)
    assert set(seen_local) <= allowed, sorted(set(seen_local) - allowed)
    assert set(seen_tessera) <= allowed, sorted(set(seen_tessera) - allowed)
    assert len(missing) <= len(seen_local)  # most reads go through
    assert staging_left(path) == []


# --- failures leave the table as it was -----------------------------------------------------


def _snapshot(path: Path) -> dict[str, bytes]:
    """Every file under the path (data, manifest) with its contents."""
    return {
        str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()
    }


@pytest.mark.parametrize(
    "query",
    [
        "SELECT id, if(id = 150000, raise_error('stop here'), id % 3) FROM range(0, 300000, 1, 3)",
        "SELECT id, CAST(id * 3037000500 * 3037000500 AS INT) FROM range(0, 300000, 1, 3)",
    ],
    ids=["raise_error", "ansi_overflow"],
)
@pytest.mark.parametrize("overwrite", [False, True])
def test_a_failed_write_leaves_the_table_unchanged(
    alice_sql: Pipeline, catalog: str, query: str, overwrite: bool
) -> None:
    path = new_path()
    table = f"{catalog}.d.f"
    alice_sql.ok(
        f"CREATE TABLE {table} WITH ('connector' = 'parquet', 'path' = '{path}') "
        "PARTITIONED BY (k) AS SELECT id, id % 3 AS k FROM range(0, 30, 1, 2)"
    )
    before = _snapshot(path)
    verb = "INSERT OVERWRITE" if overwrite else "INSERT INTO"
    job = alice_sql.run(f"{verb} {table} {query}")
    assert job["status"] == "FAILED" and job["error"]["code"] == "SPARK_ERROR", job
    wait_until(lambda: "data_cleaned" in events(job["id"]), 15, 0.1, "the clean-up")
    holds_for(lambda: staging_left(path) == [], 2.0, 60, "no staging")
    assert _snapshot(path) == before
    assert alice_sql.rows(f"SELECT count(*) FROM {table}") == [[30]]


def test_a_commit_failing_between_its_steps_changes_no_table(
    alice_sql: Pipeline, catalog: str, plain_spark: Any
) -> None:
    """A statement set into two external tables whose commit fails for real after the first
    table's data was renamed in and before any manifest was swapped (a file stands where the
    second table's new partition directory must go): the job fails, both tables read as
    before — through Tessera and outside — and no staging is left."""
    first, second = new_path(), new_path()
    alice_sql.ok(
        f"CREATE TABLE {catalog}.d.a WITH ('connector' = 'parquet', 'path' = '{first}') "
        "AS SELECT id FROM range(0, 10, 1, 2)"
    )
    alice_sql.ok(
        f"CREATE TABLE {catalog}.d.b WITH ('connector' = 'parquet', 'path' = '{second}') "
        "PARTITIONED BY (k) AS SELECT id, id % 2 AS k FROM range(0, 10)"
    )
    a_before, b_before = _snapshot(first), _snapshot(second)
    (second / "k=7").write_bytes(b"")  # a file: the new partition directory cannot go there
    job = alice_sql.run(
        "EXECUTE STATEMENT SET BEGIN "
        f"INSERT INTO {catalog}.d.a SELECT id FROM range(100, 110, 1, 3); "
        f"INSERT INTO {catalog}.d.b SELECT id, 7 FROM range(100, 103); "
        "END"
    )
    assert job["status"] == "FAILED", job
    assert "data_committed" not in events(job["id"])
    wait_until(lambda: "data_cleaned" in events(job["id"]), 15, 0.1, "the clean-up")
    (second / "k=7").unlink()
    holds_for(lambda: staging_left(first) == staging_left(second) == [], 2.0, 60, "no staging")
    assert _snapshot(first) == a_before  # the renamed files went again
    assert _snapshot(second) == b_before
    assert alice_sql.rows(f"SELECT count(*) FROM {catalog}.d.a") == [[10]]
    assert alice_sql.rows(f"SELECT count(*) FROM {catalog}.d.b") == [[10]]
    assert ids(outside_read(plain_spark, first, "parquet", "id BIGINT")) == list(range(10))
