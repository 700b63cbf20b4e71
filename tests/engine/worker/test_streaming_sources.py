"""Streaming on a real worker beyond parquet (issue 17, docs/streaming.md): sources over
json, csv (with and without a header, as the table declares it) and orc directories, read
with the catalog's schema; partitioned managed targets (streaming INSERT and CTAS); and an
interactive batch query of another session beside a running stream (the stream runs in its
own FAIR pool, ``streaming``).

Every source is compared with a plain PySpark batch read of the same files with the same
schema and options; files are written atomically (a hidden name, then a rename), as a
producer feeding a stream must. Fixtures ``source_dir`` and ``streams``: tests/fixtures/worker.py.
"""

from __future__ import annotations

import csv
import json
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.orc as orc  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest

from catalog import services as catalog_services
from tests.waiting import wait_until
from tests.worker_helpers import (
    Pipeline,
    cancel,
    count_of,
    get_job,
    json_value,
    open_session,
    result_rows,
    start_stream,
    state_of,
    statement,
    table_of,
    wait_job,
    write_atomically,
    write_file,
)

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker"),
]

# The source tables' columns (the catalog's schema; the files carry none for json and csv).
COLUMNS = "id BIGINT, name STRING, price DECIMAL(10, 2), day DATE, ok BOOLEAN"
Row = tuple[int, str, Decimal, date, bool]


def source_rows(ids: Iterable[int]) -> list[Row]:
    """Rows with a quote, a comma and a non-ASCII letter in their names (csv quoting)."""
    names = ["plain", 'say "hi"', "a, b", "ünï"]
    return [
        (
            i,
            f"{names[i % 4]} {i}",
            (Decimal(i * 7 % 1000) / 4).quantize(Decimal("0.01")),
            date(2024, 1, 1 + i % 28),
            i % 3 == 0,
        )
        for i in ids
    ]


def _json_lines(rows: Sequence[Row]) -> Callable[[Path], Any]:
    def write(path: Path) -> None:
        with path.open("w", encoding="utf-8") as out:
            for i, name, price, day, ok in rows:
                record = {"id": i, "name": name, "price": float(price), "day": str(day), "ok": ok}
                out.write(json.dumps(record, ensure_ascii=False) + "\n")

    return write


def _csv(rows: Sequence[Row], header: bool) -> Callable[[Path], Any]:
    def write(path: Path) -> None:
        with path.open("w", encoding="utf-8", newline="") as out:
            writer = csv.writer(out, quoting=csv.QUOTE_ALL, doublequote=False, escapechar="\\")
            if header:
                writer.writerow(["id", "name", "price", "day", "ok"])
            for i, name, price, day, ok in rows:
                writer.writerow([i, name, f"{price:.2f}", day.isoformat(), str(ok).lower()])

    return write


def _orc(rows: Sequence[Row]) -> Callable[[Path], Any]:
    schema = pa.schema(
        [
            ("id", pa.int64()),
            ("name", pa.string()),
            ("price", pa.decimal128(10, 2)),
            ("day", pa.date32()),
            ("ok", pa.bool_()),
        ]
    )
    table = pa.Table.from_pylist(
        [dict(zip(schema.names, row, strict=True)) for row in rows], schema=schema
    )
    return lambda path: orc.write_table(table, str(path))


# fmt -> (the table's options besides connector and path, extension, writer of a file).
FORMATS: dict[str, tuple[dict[str, str], str, Callable[[Sequence[Row]], Callable[[Path], Any]]]] = {
    "json": ({}, "json", _json_lines),
    # A header line, as the table declares: skipped, columns by position (Spark's default).
    "csv-header": ({"header": "true"}, "csv", lambda rows: _csv(rows, True)),
    # No header declared: the first line is data.
    "csv": ({}, "csv", lambda rows: _csv(rows, False)),
    "orc": ({}, "orc", _orc),
}


def write_source(case: str, directory: Path, name: str, ids: range) -> None:
    _, extension, writer = FORMATS[case]
    write_atomically(directory / f"{name}.{extension}", writer(source_rows(ids)))


def sorted_rows(rows: Iterable[Any]) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in rows), key=repr)


def managed_rows(plain_spark: Any, catalog: str, name: str, columns: str) -> list[tuple[Any, ...]]:
    """A managed table's current version read by plain PySpark, ``columns`` in this order
    (partition columns come last from a plain read of the directory)."""
    table = table_of(catalog, name)
    assert table is not None and table.location
    frame = plain_spark.read.parquet(table.location)
    return sorted_rows(frame.selectExpr(*columns.split(",")).collect())


# --- json, csv and orc sources -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "insert"),
    [("json", False), ("csv-header", True), ("csv", False), ("orc", True)],
)
def test_a_file_source_of_each_format_streams_what_a_batch_read_reads(
    alice_sql: Pipeline,
    catalog: str,
    source_dir: Path,
    streams: list[str],
    plain_spark: Any,
    case: str,
    insert: bool,
) -> None:
    options, _, _ = FORMATS[case]
    fmt = case.split("-")[0]
    write_source(case, source_dir, "f0", range(0, 40))
    declared = ", ".join(f"'{k}' = '{v}'" for k, v in options.items())
    alice_sql.ok(
        f"CREATE TABLE {catalog}.d.src ({COLUMNS}) WITH ('connector' = '{fmt}', "
        f"'path' = '{source_dir}'{', ' + declared if declared else ''})"
    )
    select = f"SELECT id, name, price, day, ok FROM {catalog}.d.src"
    if insert:
        alice_sql.ok(f"CREATE TABLE {catalog}.d.t ({COLUMNS})")
        job_id = start_stream(alice_sql, streams, f"INSERT INTO {catalog}.d.t {select}")
    else:
        job_id = start_stream(alice_sql, streams, f"CREATE TABLE {catalog}.d.t AS {select}")
    wait_until(lambda: count_of(catalog, "t") == 40, 90, 0.1, lambda: state_of(job_id))

    # Files added after the start appear.
    write_source(case, source_dir, "f1", range(40, 100))
    write_source(case, source_dir, "f2", range(100, 130))
    wait_until(lambda: count_of(catalog, "t") == 130, 60, 0.1, lambda: state_of(job_id))
    assert get_job(alice_sql.api, job_id)["status"] == "RUNNING"

    batch = plain_spark.read.format(fmt).schema(COLUMNS).options(**options).load(str(source_dir))
    expected = sorted_rows(batch.collect())
    assert expected == sorted_rows(source_rows(range(130)))  # the files hold what was written
    assert managed_rows(plain_spark, catalog, "t", "id,name,price,day,ok") == expected
    # And through Tessera, as a batch query of the table.
    assert alice_sql.rows(
        f"SELECT count(*), count(DISTINCT id), sum(price) FROM {catalog}.d.t WHERE ok"
    ) == [[44, 44, f"{sum(r[2] for r in source_rows(range(130)) if r[4]):.2f}"]]
    cancel(alice_sql, job_id)
    assert count_of(catalog, "t") == 130


def test_computed_and_metadata_columns_of_a_json_source_stream(
    alice_sql: Pipeline, catalog: str, source_dir: Path, streams: list[str], plain_spark: Any
) -> None:
    write_source("json", source_dir, "f0", range(0, 10))
    alice_sql.ok(
        f"CREATE TABLE {catalog}.d.src ({COLUMNS}, total AS price * 2, "
        "file STRING METADATA FROM 'file_path' VIRTUAL) "
        f"WITH ('connector' = 'json', 'path' = '{source_dir}', 'maxFilesPerTrigger' = '1')"
    )
    job_id = start_stream(
        alice_sql,
        streams,
        f"CREATE TABLE {catalog}.d.t AS SELECT id, total, file FROM {catalog}.d.src",
    )
    wait_until(lambda: count_of(catalog, "t") == 10, 90, 0.1, lambda: state_of(job_id))
    write_source("json", source_dir, "f1", range(10, 15))
    wait_until(lambda: count_of(catalog, "t") == 15, 60, 0.1, lambda: state_of(job_id))
    got = managed_rows(plain_spark, catalog, "t", "id,total,file")
    assert [(r[0], r[1]) for r in sorted(got)] == [(r[0], r[2] * 2) for r in source_rows(range(15))]
    assert {Path(r[2].removeprefix("file:")).name for r in got} == {"f0.json", "f1.json"}
    # The option is the stream's (one file a batch); a batch read of the table ignores it.
    assert alice_sql.rows(f"SELECT count(*) FROM {catalog}.d.src") == [[15]]
    cancel(alice_sql, job_id)


def test_a_partitioned_external_source_written_by_tessera_and_by_a_producer(
    alice_sql: Pipeline, catalog: str, source_dir: Path, streams: list[str], plain_spark: Any
) -> None:
    """Partition directories (``grp=g0``) of a json table: a batch INSERT (Tessera writes
    ``grp=g0/tessera-<job>/…`` and its manifest) and a producer's own files."""
    alice_sql.ok(
        f"CREATE TABLE {catalog}.d.src (id BIGINT, name STRING, grp STRING) "
        f"WITH ('connector' = 'json', 'path' = '{source_dir}') PARTITIONED BY (grp)"
    )
    alice_sql.ok(
        f"INSERT INTO {catalog}.d.src SELECT id, concat('n', CAST(id AS STRING)), "
        "concat('g', CAST(id % 2 AS STRING)) FROM (SELECT explode(sequence(0L, 9L)) AS id)"
    )
    job_id = start_stream(
        alice_sql,
        streams,
        f"CREATE TABLE {catalog}.d.t AS SELECT id, name, grp FROM {catalog}.d.src",
    )
    wait_until(lambda: count_of(catalog, "t") == 10, 90, 0.1, lambda: state_of(job_id))
    produced = source_dir / "grp=g7"
    produced.mkdir()
    lines = "".join(json.dumps({"id": i, "name": f"n{i}"}) + "\n" for i in range(10, 14))
    write_atomically(produced / "p0.json", lambda path: path.write_text(lines))
    wait_until(lambda: count_of(catalog, "t") == 14, 60, 0.1, lambda: state_of(job_id))
    expected = sorted_rows(
        [(i, f"n{i}", f"g{i % 2}") for i in range(10)] + [(i, f"n{i}", "g7") for i in range(10, 14)]
    )
    assert managed_rows(plain_spark, catalog, "t", "id,name,grp") == expected
    batch = plain_spark.read.schema("id BIGINT, name STRING, grp STRING").json(str(source_dir))
    assert sorted_rows(batch.select("id", "name", "grp").collect()) == expected
    cancel(alice_sql, job_id)


@pytest.mark.parametrize(
    ("fmt", "options"), [("orc", ""), ("json", ""), ("csv", "'header' = 'true'")]
)
def test_a_stream_writes_a_managed_table_of_another_format(
    alice_sql: Pipeline,
    catalog: str,
    source_dir: Path,
    streams: list[str],
    plain_spark: Any,
    fmt: str,
    options: str,
) -> None:
    write_source("orc", source_dir, "f0", range(0, 25))
    alice_sql.ok(
        f"CREATE TABLE {catalog}.d.src ({COLUMNS}) "
        f"WITH ('connector' = 'orc', 'path' = '{source_dir}')"
    )
    with_options = f" WITH ({options})" if options else ""
    alice_sql.ok(f"CREATE TABLE {catalog}.d.t ({COLUMNS}) USING {fmt}{with_options}")
    job_id = start_stream(
        alice_sql, streams, f"INSERT INTO {catalog}.d.t SELECT * FROM {catalog}.d.src"
    )

    def tessera_count() -> int:
        return int(alice_sql.rows(f"SELECT count(*) FROM {catalog}.d.t")[0][0])

    wait_until(lambda: tessera_count() == 25, 90, 0.5, lambda: state_of(job_id))
    write_source("orc", source_dir, "f1", range(25, 40))
    wait_until(lambda: tessera_count() == 40, 60, 0.5, lambda: state_of(job_id))
    expected = sorted_rows(source_rows(range(40)))
    assert sorted_rows(alice_sql.rows(f"SELECT * FROM {catalog}.d.t")) == sorted_rows(
        tuple(json_value(v) for v in r) for r in expected
    )
    table = table_of(catalog, "t")
    assert table is not None
    read_options = {"header": "true"} if options else {}
    files = plain_spark.read.format(fmt).schema(COLUMNS).options(**read_options)
    assert sorted_rows(files.load(table.location).collect()) == expected
    cancel(alice_sql, job_id)


# --- partitioned targets -----------------------------------------------------------------------

PARTITIONED = pa.schema([("id", pa.int64()), ("grp", pa.string()), ("name", pa.string())])


def partitioned_file(directory: Path, name: str, ids: range) -> None:
    rows = [{"id": i, "grp": f"g{i % 3}", "name": f"n{i}"} for i in ids]
    write_file(directory, name, pa.Table.from_pylist(rows, schema=PARTITIONED))


def test_a_stream_inserts_into_a_partitioned_table(
    alice_sql: Pipeline, catalog: str, source_dir: Path, streams: list[str], plain_spark: Any
) -> None:
    partitioned_file(source_dir, "f0", range(0, 30))
    alice_sql.ok(
        f"CREATE TABLE {catalog}.d.src (id BIGINT, grp STRING, name STRING) "
        f"WITH ('connector' = 'parquet', 'path' = '{source_dir}')"
    )
    # The partition column in the middle of the declared columns.
    alice_sql.ok(
        f"CREATE TABLE {catalog}.d.p (id BIGINT, grp STRING, name STRING) PARTITIONED BY (grp)"
    )
    job_id = start_stream(
        alice_sql, streams, f"INSERT INTO {catalog}.d.p SELECT id, grp, name FROM {catalog}.d.src"
    )
    wait_until(lambda: count_of(catalog, "p") == 30, 90, 0.1, lambda: state_of(job_id))
    partitioned_file(source_dir, "f1", range(30, 75))
    wait_until(lambda: count_of(catalog, "p") == 75, 60, 0.1, lambda: state_of(job_id))

    table = table_of(catalog, "p")
    assert table is not None and table.partition_by == ["grp"]
    location = Path(table.location)
    assert sorted(p.name for p in location.iterdir() if p.is_dir()) == [
        "grp=g0",
        "grp=g1",
        "grp=g2",
    ]
    # No data file outside the partition directories, and none holds the partition column.
    assert not [p for p in location.glob("*.parquet") if not p.name.startswith((".", "_"))]
    files = [p for p in location.glob("grp=*/*.parquet") if not p.name.startswith((".", "_"))]
    assert files and all("grp" not in pq.read_schema(p).names for p in files)

    expected = sorted_rows(plain_spark.read.parquet(str(source_dir)).collect())
    assert managed_rows(plain_spark, catalog, "p", "id,grp,name") == expected
    # Tessera's batch reads: the declared column order, partitions pruned by a filter.
    assert sorted_rows(tuple(r) for r in alice_sql.rows(f"SELECT * FROM {catalog}.d.p")) == [
        tuple(r) for r in expected
    ]
    assert alice_sql.rows(f"SELECT count(*), min(id) FROM {catalog}.d.p WHERE grp = 'g1'") == [
        [25, 1]
    ]
    cancel(alice_sql, job_id)


def test_a_streaming_ctas_makes_a_partitioned_table(
    alice_sql: Pipeline, catalog: str, source_dir: Path, streams: list[str], plain_spark: Any
) -> None:
    partitioned_file(source_dir, "f0", range(0, 20))
    alice_sql.ok(
        f"CREATE TABLE {catalog}.d.src (id BIGINT, grp STRING, name STRING) "
        f"WITH ('connector' = 'parquet', 'path' = '{source_dir}')"
    )
    job_id = start_stream(
        alice_sql,
        streams,
        f"CREATE TABLE {catalog}.d.q PARTITIONED BY (bucket) AS "
        f"SELECT id, name, CAST(id % 4 AS INT) AS bucket FROM {catalog}.d.src",
    )
    wait_until(lambda: count_of(catalog, "q") == 20, 90, 0.1, lambda: state_of(job_id))
    partitioned_file(source_dir, "f1", range(20, 50))
    wait_until(lambda: count_of(catalog, "q") == 50, 60, 0.1, lambda: state_of(job_id))

    table = table_of(catalog, "q")
    assert table is not None and table.partition_by == ["bucket"]
    location = Path(table.location)
    assert sorted(p.name for p in location.iterdir() if p.is_dir()) == [
        f"bucket={b}" for b in range(4)
    ]
    expected = sorted_rows((i, f"n{i}", i % 4) for i in range(50))
    assert managed_rows(plain_spark, catalog, "q", "id,name,bucket") == expected
    assert sorted_rows(tuple(r) for r in alice_sql.rows(f"SELECT * FROM {catalog}.d.q")) == expected
    assert alice_sql.rows(f"SELECT count(*) FROM {catalog}.d.q WHERE bucket = 3") == [[12]]
    cancel(alice_sql, job_id)


def test_a_streaming_ctas_partitioned_by_a_column_it_lacks_fails_and_drops_its_table(
    alice_sql: Pipeline, catalog: str, source_dir: Path, streams: list[str]
) -> None:
    partitioned_file(source_dir, "f0", range(0, 5))
    alice_sql.ok(
        f"CREATE TABLE {catalog}.d.src (id BIGINT, grp STRING, name STRING) "
        f"WITH ('connector' = 'parquet', 'path' = '{source_dir}')"
    )
    job_id = start_stream(
        alice_sql,
        streams,
        f"CREATE TABLE {catalog}.d.x PARTITIONED BY (nope) AS SELECT id, grp FROM {catalog}.d.src",
    )
    job = wait_job(alice_sql.api, job_id, {"FAILED"}, timeout=90)
    assert job["error"]["code"] == "VALIDATION_ERROR", job["error"]
    assert "nope" in job["error"]["message"]
    wait_until(lambda: table_of(catalog, "x") is None, 15, 0.1, "the table to be dropped")


def test_an_aggregating_stream_upserts_into_a_partitioned_keyed_table(
    alice_sql: Pipeline, catalog: str, source_dir: Path, streams: list[str], plain_spark: Any
) -> None:
    partitioned_file(source_dir, "f0", range(0, 30))
    alice_sql.ok(
        f"CREATE TABLE {catalog}.d.src (id BIGINT, grp STRING, name STRING) "
        f"WITH ('connector' = 'parquet', 'path' = '{source_dir}')"
    )
    alice_sql.ok(
        f"CREATE TABLE {catalog}.d.k (grp STRING, n BIGINT, top BIGINT, "
        "PRIMARY KEY (grp) NOT ENFORCED) PARTITIONED BY (grp)"
    )
    job_id = start_stream(
        alice_sql,
        streams,
        f"INSERT INTO {catalog}.d.k SELECT grp, count(*) AS n, max(id) AS top "
        f"FROM {catalog}.d.src GROUP BY grp",
    )

    def rows() -> list[tuple[Any, ...]]:
        if count_of(catalog, "k") <= 0:
            return []
        return managed_rows(plain_spark, catalog, "k", "grp,n,top")

    wait_until(
        lambda: rows() == [("g0", 10, 27), ("g1", 10, 28), ("g2", 10, 29)],
        90,
        0.2,
        lambda: f"{state_of(job_id)}: {rows()}",
    )
    partitioned_file(source_dir, "f1", range(30, 40))
    expected = [("g0", 14, 39), ("g1", 13, 37), ("g2", 13, 38)]
    wait_until(lambda: rows() == expected, 60, 0.2, lambda: f"{state_of(job_id)}: {rows()}")
    table = table_of(catalog, "k")
    assert table is not None
    location = Path(table.location)
    assert sorted(p.name for p in location.iterdir() if p.is_dir()) == [
        "grp=g0",
        "grp=g1",
        "grp=g2",
    ]
    assert alice_sql.rows(f"SELECT grp, n, top FROM {catalog}.d.k ORDER BY grp") == [
        list(r) for r in expected
    ]
    cancel(alice_sql, job_id)


# --- a stream beside interactive queries -------------------------------------------------------


def test_a_batch_query_of_another_session_finishes_while_a_stream_runs(
    alice_sql: Pipeline, catalog: str, streams: list[str]
) -> None:
    # A busy stream: the rate source into a table, a commit every trigger.
    session_id = open_session(
        alice_sql.api,
        {"execution.runtime-mode": "streaming", "execution.checkpointing.interval": "300 ms"},
        catalog,
    )
    created = statement(
        alice_sql.api,
        session_id,
        "CREATE TEMPORARY TABLE r WITH ('connector' = 'rate', 'rows-per-second' = '2000', "
        "'num-partitions' = '1')",
        wait=30,
    )
    assert created["status"] == "FINISHED", created["error"]
    job_id = str(
        statement(alice_sql.api, session_id, f"CREATE TABLE {catalog}.d.r AS SELECT value FROM r")[
            "id"
        ]
    )
    streams.append(job_id)
    wait_until(lambda: count_of(catalog, "r") > 0, 90, 0.1, lambda: state_of(job_id))
    before = int(get_job(alice_sql.api, job_id)["progress"]["stream"]["batches"])

    # Another user, another session, batch mode: a write and a grouped read both finish.
    bob = Pipeline("bob")
    other = f"b{uuid.uuid4().hex[:10]}"
    catalog_services.catalog_create(user=bob.user, name=other, default_database="d")
    began = time.monotonic()
    bob.ok(f"CREATE TABLE {other}.d.b (id BIGINT, name STRING)")
    bob.ok(
        f"INSERT INTO {other}.d.b SELECT id, concat('n', CAST(id % 5 AS STRING)) "
        "FROM (SELECT explode(sequence(0L, 999L)) AS id)"
    )
    job = wait_job(
        bob.api,
        bob.submit(f"SELECT name, count(*), sum(id) FROM {other}.d.b GROUP BY name ORDER BY name"),
        timeout=120,
    )
    assert job["status"] == "FINISHED", job["error"]
    assert time.monotonic() - began < 180  # generous: not starved, not blocked behind the stream
    _, rows = result_rows(bob.api, job["id"])
    assert rows == [[f"n{k}", 200, sum(range(k, 1000, 5))] for k in range(5)]

    # The stream ran on meanwhile, and still does.
    assert get_job(alice_sql.api, job_id)["status"] == "RUNNING"
    wait_until(
        lambda: int(get_job(alice_sql.api, job_id)["progress"]["stream"]["batches"]) > before,
        60,
        0.2,
        "more batches of the stream",
    )
    cancel(alice_sql, job_id)
