"""Managed Delta tables (issue 31, ADR 0019): ``CREATE TABLE … USING delta`` without
LOCATION, CTAS, INSERT INTO and INSERT OVERWRITE through the worker; the table's versions are
Delta's, recorded in Tessera's database at FINISHED; an independent Delta reader (delta-rs,
no Spark) reads the table's directory at every version with the rows Tessera's
``VERSION AS OF`` returns. Hostile: a failed or canceled job leaves the table (and its log)
at its previous version; another user without MODIFY writes nothing; forged options and
plans cannot move a managed Delta table's files out of its directory."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pytest
from deltalake import DeltaTable, QueryBuilder

from catalog.models import Table, TableVersion
from tests.conftest import API
from tests.security.boundary import files_under, no_table, outside_dir, refused
from tests.tabledata.worker.test_writes import wait_running_write
from tests.worker_helpers import Pipeline, planned, submit_plan, wait_for_status, wait_job

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker"),
]


def _row(catalog: str, name: str) -> Table:
    return Table.objects.get(database__catalog__name=catalog, name_key=name)


def _versions(catalog: str, name: str) -> list[int]:
    return sorted(
        TableVersion.objects.filter(table=_row(catalog, name)).values_list("version", flat=True)
    )


def _delta_rows(path: str, version: int) -> list[list[Any]]:
    """delta-rs's rows at ``version``: its DataFusion reader (its pyarrow reader refuses
    the column mapping and deletion vectors reader features)."""
    builder = QueryBuilder().register("t", DeltaTable(path, version=version))
    data = pa.table(builder.execute("SELECT id, name FROM t ORDER BY id").read_all())
    return [list(r.values()) for r in data.to_pylist()]


def test_ctas_insert_overwrite_are_delta_versions_delta_rs_reads(alice_sql, catalog) -> None:
    t = f"{catalog}.d.ev"
    alice_sql.ok(
        f"CREATE TABLE {t} USING delta AS SELECT id, concat('n', id) AS name FROM range(3)"
    )
    alice_sql.ok(f"INSERT INTO {t} VALUES (10, 'x'), (11, 'y')")
    alice_sql.ok(f"INSERT OVERWRITE {t} SELECT 7, 'z'")
    row = _row(catalog, "ev")
    path = row.location
    assert row.options.get("format") == "delta"
    assert Path(path, "_delta_log").is_dir()
    versions = _versions(catalog, "ev")
    assert versions == list(range(DeltaTable(path).version() + 1)), versions
    for version in versions:
        ours = alice_sql.rows(f"SELECT id, name FROM {t} VERSION AS OF {version} ORDER BY id")
        assert ours == _delta_rows(path, version), version
    assert alice_sql.rows(f"SELECT id, name FROM {t}") == [[7, "z"]]
    config = DeltaTable(path).metadata().configuration
    assert config.get("delta.columnMapping.mode") == "name"
    assert config.get("delta.enableChangeDataFeed") == "true"
    assert config.get("delta.enableDeletionVectors") == "true"


def test_create_then_insert(alice_sql, catalog) -> None:
    t = f"{catalog}.d.m"
    alice_sql.ok(f"CREATE TABLE {t} (id BIGINT, name STRING) USING delta")
    assert alice_sql.rows(f"SELECT * FROM {t}") == []
    alice_sql.ok(f"INSERT INTO {t} VALUES (1, 'a')")
    alice_sql.ok(f"INSERT INTO {t} VALUES (2, 'b')")
    assert alice_sql.rows(f"SELECT id, name FROM {t} ORDER BY id") == [[1, "a"], [2, "b"]]
    path = _row(catalog, "m").location
    for version in _versions(catalog, "m"):
        ours = alice_sql.rows(f"SELECT id, name FROM {t} VERSION AS OF {version} ORDER BY id")
        assert ours == _delta_rows(path, version), version


def _state(catalog: str, name: str) -> tuple[int, list[int]]:
    """The table's log version (delta-rs) and the versions Tessera recorded."""
    return DeltaTable(_row(catalog, name).location).version(), _versions(catalog, name)


def test_a_failed_write_leaves_the_table_and_its_log(alice_sql, catalog) -> None:
    t = f"{catalog}.d.f"
    alice_sql.ok(f"CREATE TABLE {t} USING delta AS SELECT 1 AS id, 'a' AS name")
    before = _state(catalog, "f")
    for sql in (
        f"INSERT INTO {t} SELECT CAST(raise_error('boom') AS INT), 'x' FROM range(3)",
        f"INSERT OVERWRITE {t} SELECT CAST(raise_error('boom') AS INT), 'x'",
    ):
        job = alice_sql.run(sql)
        assert job["status"] == "FAILED", job
    assert _state(catalog, "f") == before
    assert alice_sql.rows(f"SELECT id, name FROM {t}") == [[1, "a"]]


def test_another_user_without_modify_writes_nothing(alice_sql, shared_catalog) -> None:
    t = f"{shared_catalog}.d.s"
    alice_sql.ok(f"CREATE TABLE {t} USING delta AS SELECT 1 AS id")
    before = _state(shared_catalog, "s")
    bob = Pipeline("bob")
    assert bob.rows(f"SELECT id FROM {t}") == [[1]]  # SELECT through the share, no MODIFY
    for sql in (f"INSERT INTO {t} SELECT 2", f"INSERT OVERWRITE {t} SELECT 2"):
        job = bob.run(sql)
        refused(bob, job, "PERMISSION_DENIED", "MODIFY")
    assert _state(shared_catalog, "s") == before


def test_forged_options_and_plans_cannot_move_the_files(alice_sql, catalog) -> None:
    outside = outside_dir()
    outside_files = files_under(outside)
    job = alice_sql.run(
        f"CREATE TABLE {catalog}.d.o USING delta OPTIONS ('path' = '{outside}') AS SELECT 1 AS id"
    )
    refused(alice_sql, job, job["error"]["code"])
    job = alice_sql.run(
        f"CREATE TABLE {catalog}.d.o (id BIGINT) USING delta "
        "OPTIONS ('delta.columnMapping.mode' = 'none')"
    )
    refused(alice_sql, job, "FORBIDDEN_SQL", "'delta.columnMapping.mode' is not allowed")
    no_table(catalog, "o")
    t = f"{catalog}.d.g"
    alice_sql.ok(f"CREATE TABLE {t} USING delta AS SELECT 1 AS id")
    before = _state(catalog, "g")
    # A plan whose target names another directory: the worker writes the row's directory
    # (the staging entry is the server's), or nothing.
    plan = planned(alice_sql.session, f"INSERT INTO {t} SELECT 2")
    plan["args"]["location"] = str(outside)
    plan["args"]["table"]["path"] = str(outside)
    job_row = submit_plan(alice_sql.user, plan, alice_sql.session)
    wait_for_status(job_row.pk, {"FINISHED", "FAILED"})
    assert files_under(outside) == outside_files
    version, recorded = _state(catalog, "g")
    assert version in (before[0], before[0] + 1) and recorded[-1] == version
    shutil.rmtree(outside, ignore_errors=True)


def test_a_canceled_write_leaves_the_table_and_its_log(alice_sql, catalog) -> None:
    t = f"{catalog}.d.c"
    alice_sql.ok(f"CREATE TABLE {t} USING delta AS SELECT 1 AS id, 'a' AS digest")
    before = _state(catalog, "c")
    job_id = alice_sql.submit(
        f"INSERT INTO {t} SELECT CAST(id AS INT), sha2(CAST(id AS STRING), 256) "
        "FROM range(0, 3000000000, 1, 4)"
    )
    wait_running_write(job_id)
    response = alice_sql.api.post(f"{API}/jobs/{job_id}/cancel")
    assert response.status_code in (200, 202), response.content
    job = wait_job(alice_sql.api, job_id, {"CANCELED"}, timeout=60)
    assert job["error"]["code"] == "CANCELED"
    assert _state(catalog, "c") == before
    assert alice_sql.rows(f"SELECT id, digest FROM {t}") == [[1, "a"]]
