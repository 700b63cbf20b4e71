"""External Delta tables through the worker (issue 31, item 7; managed ones:
tests/tabledata/worker/test_managed_delta.py): a Delta table written
outside Tessera by delta-rs (no Spark), registered ``USING delta LOCATION`` under a storage
root, read by REST at every version with the rows delta-rs reads; and the hostile side —
paths and links out of the roots, forged options and plans, another user, a path without a
Delta log, writes, ``delta.`path``` identifiers. Each refusal leaves the files as they were."""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest
from deltalake import DeltaTable, write_deltalake

from jobs.models import Session
from tests.conftest import API, assert_error, simple_schema
from tests.security.boundary import (
    SECRET,
    error_of,
    files_under,
    no_table,
    outside_dir,
    refused,
    storage_root,
    uid,
)
from tests.worker_helpers import Pipeline, hand_plan, submit_plan, wait_for_status

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker"),
]

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])


def _batch(*ids: int) -> pa.Table:
    return pa.table({"id": list(ids), "name": [f"n{i}" for i in ids]}, schema=SCHEMA)


def _delta_rows(
    path: Path, version: int | None = None, moment: datetime | None = None
) -> list[list[Any]]:
    table = DeltaTable(str(path), version=version)
    if moment is not None:
        table.load_as_version(moment)
    data = table.to_pyarrow_table().sort_by("id")
    return [[i, n] for i, n in zip(data["id"].to_pylist(), data["name"].to_pylist(), strict=True)]


@pytest.fixture
def events() -> Any:
    """A Delta table under the storage root written by delta-rs: append, append, overwrite."""
    path = storage_root() / f"delta-{uid()}"
    write_deltalake(str(path), _batch(1, 2, 3))
    write_deltalake(str(path), _batch(4, 5), mode="append")
    write_deltalake(str(path), _batch(10, 20), mode="overwrite")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def outside() -> Any:
    path = outside_dir()
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _register(actor: Pipeline, catalog: str, path: Path, name: str = "ev") -> str:
    actor.ok(
        f"CREATE TABLE {catalog}.d.{name} (id BIGINT, name STRING) USING delta LOCATION '{path}'"
    )
    return f"{catalog}.d.{name}"


def test_rest_reads_every_version_delta_rs_wrote(alice_sql, catalog, events) -> None:
    table = _register(alice_sql, catalog, events)
    assert DeltaTable(str(events)).version() == 2
    for version in range(3):
        rows = alice_sql.rows(f"SELECT id, name FROM {table} VERSION AS OF {version} ORDER BY id")
        assert rows == _delta_rows(events, version), version
    assert alice_sql.rows(f"SELECT id, name FROM {table} ORDER BY id") == _delta_rows(events)
    # Two versions of one table in one statement are two relations.
    assert alice_sql.rows(
        f"SELECT (SELECT count(*) FROM {table} VERSION AS OF 1), "
        f"(SELECT count(*) FROM {table} VERSION AS OF 0)"
    ) == [[5, 3]]
    # TIMESTAMP AS OF the moment of version 1's commit: the version delta-rs picks too.
    history = {h["version"]: h["timestamp"] for h in DeltaTable(str(events)).history()}
    moment = datetime.fromtimestamp(history[1] / 1000, tz=UTC)
    shown = moment.strftime("%Y-%m-%d %H:%M:%S.%f")
    rows = alice_sql.rows(f"SELECT id, name FROM {table} TIMESTAMP AS OF '{shown}' ORDER BY id")
    assert rows == _delta_rows(events, moment=moment)
    # A writer outside Tessera commits again: the log is the truth, read at the next query.
    write_deltalake(str(events), _batch(7), mode="append")
    assert alice_sql.rows(f"SELECT id FROM {table} ORDER BY id") == [[7], [10], [20]]


def test_a_missing_version_is_a_clear_error(alice_sql, catalog, events) -> None:
    table = _register(alice_sql, catalog, events)
    job = alice_sql.run(f"SELECT * FROM {table} VERSION AS OF 9")
    error = refused(alice_sql, job, "VALIDATION_ERROR", "cannot be read at 9")
    assert "version" in error["message"].lower()
    assert str(events) not in error["message"]
    job = alice_sql.run(f"SELECT * FROM {table} TIMESTAMP AS OF '2001-01-01 00:00:00'")
    refused(alice_sql, job, "VALIDATION_ERROR", "cannot be read at 2001-01-01")


def test_a_path_without_a_delta_log_is_a_clear_error(alice_sql, catalog) -> None:
    path = storage_root() / f"not-delta-{uid()}"
    path.mkdir()
    pq.write_table(_batch(1), path / "part-0.parquet")
    table = _register(alice_sql, catalog, path)
    job = alice_sql.run(f"SELECT * FROM {table}")
    refused(alice_sql, job, "VALIDATION_ERROR", "no Delta table", "_delta_log")


def test_declared_columns_must_be_the_delta_tables(alice_sql, catalog, events) -> None:
    # Two tables may not share a path: a copy of the Delta table for each declaration.
    copies = [shutil.copytree(events, f"{events}-{n}") for n in range(3)]
    alice_sql.ok(f"CREATE TABLE {catalog}.d.sub (id BIGINT) USING delta LOCATION '{copies[0]}'")
    assert alice_sql.rows(f"SELECT * FROM {catalog}.d.sub ORDER BY id") == [[10], [20]]
    alice_sql.ok(f"CREATE TABLE {catalog}.d.other (zz INT) USING delta LOCATION '{copies[1]}'")
    job = alice_sql.run(f"SELECT * FROM {catalog}.d.other")
    refused(alice_sql, job, "VALIDATION_ERROR", "`zz`", "does not have")
    alice_sql.ok(f"CREATE TABLE {catalog}.d.typed (id STRING) USING delta LOCATION '{copies[2]}'")
    job = alice_sql.run(f"SELECT * FROM {catalog}.d.typed")
    refused(alice_sql, job, "VALIDATION_ERROR", "as string", "holds bigint")


def test_writes_are_refused_and_write_nothing(alice_sql, catalog, events) -> None:
    table = _register(alice_sql, catalog, events)
    before = files_under(events)
    for sql in (
        f"INSERT INTO {table} SELECT 99, 'x'",
        f"INSERT OVERWRITE {table} SELECT 99, 'x'",
        f"CREATE TABLE {catalog}.d.c USING delta LOCATION '{storage_root()}/c-{uid()}' "
        "AS SELECT 1 AS id",
    ):
        job = alice_sql.run(sql)
        refused(alice_sql, job, "UNSUPPORTED_STATEMENT", "external Delta table is read-only")
    no_table(catalog, "c")
    assert files_under(events) == before
    assert DeltaTable(str(events)).version() == 2


def test_another_user_without_select_reads_nothing(alice_sql, catalog, events) -> None:
    table = _register(alice_sql, catalog, events)
    bob = Pipeline("bob")
    for sql in (f"SELECT * FROM {table}", f"SELECT * FROM {table} VERSION AS OF 0"):
        job = bob.run(sql)
        error = refused(bob, job, job["error"]["code"])
        assert error["code"] in ("NOT_FOUND", "PERMISSION_DENIED"), error
        assert "n1" not in str(error)


@pytest.mark.parametrize(
    "location",
    ["{root}/../{outside}", "{outside_path}", "{root}/x/..", "{root}/./x", "file://evil{root}/x"],
)
def test_paths_outside_the_roots_are_refused(alice_sql, catalog, outside, location) -> None:
    root = storage_root()
    path = location.format(root=root, outside=outside.name, outside_path=outside)
    job = alice_sql.run(f"CREATE TABLE {catalog}.d.t (id BIGINT) USING delta LOCATION '{path}'")
    refused(alice_sql, job, "FORBIDDEN_SQL")
    no_table(catalog, "t")


def test_a_symlink_out_of_the_root_is_refused(alice_sql, catalog, events, outside) -> None:
    """At creation (a link out), and at use (a Delta directory swapped for a link out)."""
    secret = outside / "delta"
    write_deltalake(str(secret), pa.table({"id": [1], "name": [SECRET]}, schema=SCHEMA))
    linked = storage_root() / f"linked-{uid()}"
    os.symlink(secret, linked)
    job = alice_sql.run(
        f"CREATE TABLE {catalog}.d.t (id BIGINT, name STRING) USING delta LOCATION '{linked}'"
    )
    refused(alice_sql, job, job["error"]["code"], "outside the storage roots")
    no_table(catalog, "t")
    table = _register(alice_sql, catalog, events)
    shutil.rmtree(events)
    os.symlink(secret, events)
    job = alice_sql.run(f"SELECT * FROM {table}")
    refused(alice_sql, job, "FORBIDDEN_SQL", "outside the storage roots")
    job = alice_sql.run(f"SELECT * FROM {table} VERSION AS OF 0")
    refused(alice_sql, job, "FORBIDDEN_SQL", "outside the storage roots")
    os.unlink(events)


@pytest.mark.parametrize(
    ("key", "value"), [("versionAsOf", "0"), ("readChangeFeed", "true"), ("fs.defaultFS", "x")]
)
def test_forged_options_are_refused(alice_sql, catalog, events, key, value) -> None:
    job = alice_sql.run(
        f"CREATE TABLE {catalog}.d.t (id BIGINT) USING delta OPTIONS ('{key}' = '{value}') "
        f"LOCATION '{events}'"
    )
    assert job["status"] == "FAILED", job
    assert job["error"]["code"] in ("FORBIDDEN_SQL", "VALIDATION_ERROR"), job
    assert key in job["error"]["message"]
    no_table(catalog, "t")
    response = alice_sql.api.post(
        f"{API}/catalogs/{catalog}/databases/d/tables",
        {
            "name": "t",
            "schema": simple_schema("id BIGINT"),
            "options": {"connector": "delta", "path": str(events), key: value},
        },
    )
    assert_error(response, 400, "VALIDATION_ERROR", key)
    no_table(catalog, "t")


def test_rest_creates_external_and_managed_delta_tables(alice_sql, catalog, events):
    url = f"{API}/catalogs/{catalog}/databases/d/tables"
    schema = simple_schema("id BIGINT", "name STRING")
    response = alice_sql.api.post(
        url, {"name": "m", "schema": schema, "options": {"format": "delta"}}
    )
    assert response.status_code == 201, response.content  # managed (ADR 0019): no rows yet
    assert alice_sql.rows(f"SELECT * FROM {catalog}.d.m") == []
    forged = alice_sql.api.post(
        url,
        {
            "name": "f",
            "schema": schema,
            "options": {"format": "delta", "delta.columnMapping.mode": "none"},
        },
    )
    assert_error(forged, 400, "VALIDATION_ERROR", "'delta.columnMapping.mode' is not allowed")
    no_table(catalog, "f")
    created = alice_sql.api.post(
        url,
        {"name": "r", "schema": schema, "options": {"connector": "delta", "path": str(events)}},
    )
    assert created.status_code == 201, created.content
    assert alice_sql.rows(f"SELECT id FROM {catalog}.d.r VERSION AS OF 0 ORDER BY id") == [
        [1],
        [2],
        [3],
    ]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM delta.`{path}`",
        "SELECT * FROM delta.`{path}` VERSION AS OF 0",
        "INSERT INTO delta.`{path}` SELECT 1, 'x'",
        "CREATE TABLE {catalog}.d.t AS SELECT * FROM delta.`{path}`",
    ],
)
def test_path_identifiers_are_refused(alice_sql, catalog, events, sql) -> None:
    job = alice_sql.run(sql.format(path=events, catalog=catalog))
    refused(alice_sql, job, "FORBIDDEN_SQL")
    assert DeltaTable(str(events)).version() == 2


def _delta_relation(location: Path, **extra: Any) -> dict[str, Any]:
    return {
        "alias": "__tessera_r1",
        "identifier": ["c", "d", "t"],
        "kind": "table",
        "format": "delta",
        "path": str(location),
        "options": {},
        "physical_schema": "`id` BIGINT, `name` STRING",
        "columns": [{"name": "id", "kind": "physical"}, {"name": "name", "kind": "physical"}],
        **extra,
    }


@pytest.mark.parametrize(
    "extra",
    [
        {"options": {"versionAsOf": "0"}},  # time travel is the plan's, never an option
        {"options": {"fs.defaultFS": "file:///"}},
        {"time_travel": {"versionAsOf": "0", "timestampAsOf": "2026-01-01 00:00:00"}},
        {"time_travel": {"readChangeFeed": "true"}},
        {"time_travel": {"versionAsOf": "0 OR 1"}},
        {"format": "parquet", "time_travel": {"versionAsOf": "0"}},
        {"path": "{outside}"},
    ],
)
def test_hand_made_plans_are_refused_by_the_worker(alice_sql, events, outside, extra) -> None:
    relation = _delta_relation(events, **extra)
    if relation["path"] == "{outside}":
        write_deltalake(str(outside / "d"), pa.table({"id": [1], "name": [SECRET]}, schema=SCHEMA))
        relation["path"] = str(outside / "d")
    plan = hand_plan("SELECT * FROM `__tessera_r1`", relations=[relation])
    session = Session.objects.get(pk=alice_sql.session_id)
    job = wait_for_status(
        submit_plan(alice_sql.user, plan, session).id, {"FINISHED", "FAILED", "CANCELED"}, 120
    )
    assert job.status == "FAILED", (extra, job.error)
    assert error_of(job)["code"] in ("FORBIDDEN_SQL", "VALIDATION_ERROR"), job.error
    assert SECRET not in str(job.error)


@pytest.mark.parametrize("form", ["absolute", "file uri", "dot dot", "link inside"])
def test_a_log_naming_files_outside_the_path_is_refused(
    alice_sql, catalog, events, outside, form
) -> None:
    """A Delta log may name any file (absolute URIs, ``../``): a commit forged after the
    table was registered, pointing at a parquet file outside the roots, is refused at read
    (at that version only)."""
    table = _register(alice_sql, catalog, events)
    secret = outside / "secret.parquet"
    pq.write_table(pa.table({"id": [66], "name": [SECRET]}, schema=SCHEMA), secret)
    if form == "link inside":
        os.symlink(secret, events / "linked.parquet")
    named = {
        "absolute": str(secret),
        "file uri": secret.as_uri(),
        "dot dot": f"../{outside.name}/secret.parquet",
        "link inside": "linked.parquet",
    }[form]
    add = {
        "path": named,
        "partitionValues": {},
        "size": secret.stat().st_size,
        "modificationTime": 1,
        "dataChange": True,
    }
    (events / "_delta_log" / f"{3:020d}.json").write_text(json.dumps({"add": add}) + "\n")
    for sql in (f"SELECT * FROM {table}", f"SELECT * FROM {table} VERSION AS OF 3"):
        job = alice_sql.run(sql)
        # A link in the tree is caught by the path's own check first.
        why = "outside the storage roots" if form == "link inside" else "names a data file outside"
        refused(alice_sql, job, "FORBIDDEN_SQL", why)
    if form != "link inside":  # a link refuses the whole path, every version
        rows = alice_sql.rows(f"SELECT id FROM {table} VERSION AS OF 2 ORDER BY id")
        assert rows == [[10], [20]]
