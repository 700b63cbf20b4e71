"""Delta tables in the planner (issue 31): external ``USING delta LOCATION`` over a storage
root, read-only, time travel reaching Delta's reader; managed ``USING delta`` tables (ADR
0019), written by jobs and read at the version Tessera's database records."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from core import options as table_options
from core.errors import CoreError
from core.planner import ForbiddenSql, ParseError, Plan, UnsupportedStatement, plan_statement
from tests.core.test_planner_support import (
    STORAGE_ROOT,
    MemoryCatalog,
    context,
    plan,
    sample_catalog,
)

DELTA_PATH = f"{STORAGE_ROOT}/events"


def _catalog() -> MemoryCatalog:
    catalog = sample_catalog()
    catalog.add_table(
        "c.d.events",
        ["id BIGINT", "name STRING"],
        options={"connector": "delta", "path": DELTA_PATH},
    )
    catalog.add_table(
        "c.d.archive", ["id BIGINT"], options={"connector": "json", "path": f"{STORAGE_ROOT}/a"}
    )
    return catalog


def _round_trips(result: Plan) -> dict[str, Any]:
    data = result.to_dict()
    assert Plan.from_dict(json.loads(json.dumps(data))) == result
    return data


@pytest.mark.parametrize(
    "sql",
    [
        f"CREATE TABLE t (id BIGINT, name STRING) USING delta LOCATION '{DELTA_PATH}'",
        f"CREATE TABLE t (id BIGINT, name STRING) USING DELTA LOCATION '{DELTA_PATH}/'",
        f"CREATE TABLE t (id BIGINT, name STRING) WITH ('connector' = 'delta', "
        f"'path' = '{DELTA_PATH}')",
        f"CREATE TABLE t (id BIGINT, name STRING) USING delta WITH ('format' = 'delta', "
        f"'path' = '{DELTA_PATH}')",
    ],
)
def test_create_external_delta_table(sql: str) -> None:
    result = plan(sql, _catalog())
    args = _round_trips(result)["args"]
    assert args["options"] == {"connector": "delta", "path": DELTA_PATH}


def test_columns_are_required() -> None:
    with pytest.raises(CoreError, match="USING delta needs its column list"):
        plan(f"CREATE TABLE t USING delta LOCATION '{DELTA_PATH}'", _catalog())
    with pytest.raises(CoreError, match="needs its column list"):
        plan(f"CREATE TABLE t WITH ('connector' = 'delta', 'path' = '{DELTA_PATH}')", _catalog())
    with pytest.raises(ParseError):  # other formats keep the parser's answer
        plan(f"CREATE TABLE t USING csv LOCATION '{DELTA_PATH}'", _catalog())


def test_a_managed_delta_table_is_planned() -> None:
    for sql in (
        "CREATE TABLE t (id BIGINT) USING delta",
        "CREATE TABLE t (id BIGINT) WITH ('format' = 'delta')",
    ):
        assert plan(sql, _catalog()).args["options"] == {"format": "delta"}


def test_a_managed_delta_table_takes_no_options() -> None:
    with pytest.raises(CoreError, match="delta tables take: no options"):
        plan("CREATE TABLE t (id BIGINT) USING delta OPTIONS ('compression' = 'none')", _catalog())


def _managed(version: int | None) -> MemoryCatalog:
    catalog = _catalog()
    made = catalog.add_table("c.d.m", ["id BIGINT"], options={"format": "delta"})
    catalog.relations[made.identifier.key] = replace(made, delta_version=version)
    return catalog


def test_a_managed_delta_table_is_read_at_its_recorded_version() -> None:
    relation = _round_trips(plan("SELECT * FROM m", _managed(4)))["relations"][0]
    assert relation["format"] == "delta"
    assert relation["time_travel"] == {"versionAsOf": "4"}
    relation = _round_trips(plan("SELECT * FROM m", _managed(None)))["relations"][0]
    assert relation["time_travel"] == {"unwritten": "true"}


def test_a_past_version_of_a_managed_delta_table_has_its_logs_columns() -> None:
    # ALTER TABLE changes the columns: a past version is read as its log has it; the
    # recorded version keeps the catalog's columns (its NOT NULL, computed columns).
    catalog = _managed(4)
    path = catalog.relations[("c", "d", "m")].location
    catalog.versions[("c", "d", "m")] = {v: path for v in range(5)}
    past = plan("SELECT * FROM m VERSION AS OF 2", catalog).relations[0]
    assert past.time_travel == {"versionAsOf": "2"}
    assert (past.physical_schema, past.columns) == ("", ())
    current = plan("SELECT * FROM m VERSION AS OF 4", catalog).relations[0]
    assert current.physical_schema and current.columns
    assert plan("SELECT * FROM m", catalog).relations[0] == current


def test_managed_delta_writes_are_planned_and_upserts_and_streams_refused() -> None:
    for sql in ("INSERT INTO m SELECT 1", "INSERT OVERWRITE m SELECT 1"):
        assert plan(sql, _managed(1)).writes
    assert plan("CREATE TABLE n USING delta AS SELECT 1 AS id", _catalog()).writes
    with pytest.raises(UnsupportedStatement, match="upserts by key are not built yet"):
        plan("INSERT INTO m /*+ OPTIONS('write.mode' = 'upsert') */ SELECT 1", _managed(1))
    ctx = replace(context(), runtime_mode="streaming", checkpoint_interval_ms=1000)
    with pytest.raises(UnsupportedStatement, match="does not write managed Delta tables"):
        plan_statement("INSERT INTO m SELECT id FROM archive", _managed(1), ctx)
    with pytest.raises(UnsupportedStatement, match="does not write managed Delta tables"):
        plan_statement("CREATE TABLE n USING delta AS SELECT id FROM archive", _catalog(), ctx)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("versionAsOf", "0"),  # time travel is the engine's, from VERSION AS OF
        ("timestampAsOf", "2026-01-01"),
        ("readChangeFeed", "true"),
        ("ignoreCorruptFiles", "true"),  # a file-source option: not Delta's
        ("fs.defaultFS", "hdfs://x"),
        ("spark.sql.x", "1"),
    ],
)
def test_reader_options_are_refused(key: str, value: str) -> None:
    sql = (
        f"CREATE TABLE t (id BIGINT) USING delta OPTIONS ('{key}' = '{value}') "
        f"LOCATION '{DELTA_PATH}'"
    )
    with pytest.raises(CoreError) as raised:
        plan(sql, _catalog())
    assert key in raised.value.message
    with pytest.raises(CoreError):
        table_options.check_options("delta", {key: value})


@pytest.mark.parametrize(
    "location",
    [f"{STORAGE_ROOT}/../etc", "/etc", f"{STORAGE_ROOT}/x/..", f"file://evil{STORAGE_ROOT}/x"],
)
def test_paths_outside_the_roots_are_refused(location: str) -> None:
    with pytest.raises(ForbiddenSql):
        plan(f"CREATE TABLE t (id BIGINT) USING delta LOCATION '{location}'", _catalog())


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM delta.`/srv/tessera/external/events`",
        "SELECT * FROM delta.`/etc/passwd`",
        "INSERT INTO delta.`/srv/tessera/external/events` SELECT 1",
        "CREATE TABLE t AS SELECT * FROM delta.`/srv/tessera/external/events`",
    ],
)
def test_path_identifiers_are_refused(sql: str) -> None:
    with pytest.raises(ForbiddenSql):
        plan(sql, _catalog())


def test_select_reads_the_delta_table() -> None:
    relation = _round_trips(plan("SELECT id FROM events", _catalog()))["relations"][0]
    assert relation["format"] == "delta"
    assert relation["path"] == DELTA_PATH
    assert relation["options"] == {}
    assert "time_travel" not in relation


def test_version_as_of_reaches_the_reader() -> None:
    result = plan(
        "SELECT a.id FROM events VERSION AS OF 2 a JOIN events VERSION AS OF 0 b ON a.id = b.id "
        "JOIN events VERSION AS OF 2 c ON a.id = c.id",
        _catalog(),
    )
    relations = _round_trips(result)["relations"]
    assert [r["time_travel"] for r in relations] == [{"versionAsOf": "2"}, {"versionAsOf": "0"}]
    assert all(r["format"] == "delta" and r["path"] == DELTA_PATH for r in relations)


def test_timestamp_as_of_reaches_the_reader_in_utc() -> None:
    result = plan("SELECT * FROM events TIMESTAMP AS OF '2026-11-24 11:00:00+01:00'", _catalog())
    relation = _round_trips(result)["relations"][0]
    assert relation["time_travel"] == {"timestampAsOf": "2026-11-24 10:00:00.000000+00:00"}


def test_other_external_formats_keep_their_refusal() -> None:
    with pytest.raises(CoreError, match="it is an external table"):
        plan("SELECT * FROM archive VERSION AS OF 1", _catalog())


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO events SELECT 1, 'a'",
        "INSERT OVERWRITE events SELECT 1, 'a'",
        "EXECUTE STATEMENT SET BEGIN INSERT INTO events SELECT 1, 'a'; END",
    ],
)
def test_writes_into_a_delta_table_are_refused(sql: str) -> None:
    with pytest.raises(UnsupportedStatement, match="external Delta table is read-only"):
        plan(sql, _catalog())


@pytest.mark.parametrize(
    "sql",
    [
        f"CREATE TABLE n USING delta LOCATION '{STORAGE_ROOT}/n' AS SELECT 1 AS id",
        f"CREATE TABLE n WITH ('connector' = 'delta', 'path' = '{STORAGE_ROOT}/n') AS SELECT 1",
    ],
)
def test_ctas_into_delta_is_refused(sql: str) -> None:
    with pytest.raises(UnsupportedStatement, match="external Delta table is read-only"):
        plan(sql, _catalog())


def _streaming(sql: str) -> Plan:
    ctx = replace(context(), runtime_mode="streaming", checkpoint_interval_ms=1000)
    return plan_statement(sql, _catalog(), ctx)


def test_a_stream_neither_writes_nor_reads_a_delta_table_yet() -> None:
    with pytest.raises(UnsupportedStatement, match="external Delta table is read-only"):
        _streaming("INSERT INTO events SELECT * FROM archive")
    with pytest.raises(UnsupportedStatement, match="cannot be read as a stream"):
        _streaming("INSERT INTO orders SELECT id, 1.0, 1, id FROM events")


def test_a_temporary_delta_table_reads_and_travels() -> None:
    result = plan(
        f"CREATE TEMPORARY TABLE tmp (id BIGINT) USING delta LOCATION '{STORAGE_ROOT}/tmp'",
        _catalog(),
    )
    assert result.args["options"] == {"connector": "delta", "path": f"{STORAGE_ROOT}/tmp"}
    catalog = _catalog()
    catalog.add_table("c.d.tmp", ["id BIGINT"], options=result.args["options"], temporary=True)
    relation = plan("SELECT * FROM tmp VERSION AS OF 1", catalog).relations[0]
    assert relation.time_travel == {"versionAsOf": "1"}
