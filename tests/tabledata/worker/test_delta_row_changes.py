"""MERGE, UPDATE and DELETE on managed Delta tables (issue 31 item 3, ADR 0019 "Row-level
DML"): Delta's own commands run in the worker; the version each commits becomes the table's
at FINISHED; an independent Delta reader (delta-rs) reads every version with the rows
Tessera's ``VERSION AS OF`` returns; UPDATE and DELETE write deletion vectors and the change
data feed. Hostile: another user without MODIFY writes nothing; a failing MERGE and forged
plans (another target, another directory, a query for a change) leave the table and its log
at their previous version."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest
from deltalake import DeltaTable

from catalog.models import TableVersion
from tests.security.boundary import files_under, outside_dir, refused
from tests.tabledata.worker.test_managed_delta import _delta_rows, _row, _state, _versions
from tests.worker_helpers import Pipeline, planned, result_rows, submit_plan, wait_for_status

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker"),
]


def _commit(path: str, version: int) -> list[dict[str, Any]]:
    text = Path(path, "_delta_log", f"{version:020d}.json").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _operations(catalog: str, name: str) -> dict[int, str]:
    rows = TableVersion.objects.filter(table=_row(catalog, name))
    return {row.version: row.operation for row in rows}


def _message(actor: Any, job: dict[str, Any]) -> str:
    return str(result_rows(actor.api, job["id"])[1][0][0])


def test_merge_update_delete_are_delta_versions_delta_rs_reads(alice_sql, catalog) -> None:
    t = f"{catalog}.d.rc"
    alice_sql.ok(
        f"CREATE TABLE {t} USING delta AS SELECT id, concat('n', id) AS name FROM range(8)"
    )
    path = _row(catalog, "rc").location
    merged = alice_sql.ok(
        f"MERGE INTO {t} AS t USING (SELECT 1 AS id, 'u' AS name UNION ALL "
        "SELECT 9, 'new') AS s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET name = s.name WHEN NOT MATCHED THEN INSERT *"
    )
    assert "1 updated, 1 inserted, 0 deleted" in _message(alice_sql, merged)
    alice_sql.ok(f"UPDATE {t} SET name = upper(name) WHERE id = 2")
    deleted = alice_sql.ok(f"DELETE FROM {t} WHERE id = 0")
    assert "Deleted 1 row from" in _message(alice_sql, deleted)
    expected = [[1, "u"], [2, "N2"], *[[i, f"n{i}"] for i in range(3, 8)], [9, "new"]]
    assert alice_sql.rows(f"SELECT id, name FROM {t} ORDER BY id") == expected
    versions = _versions(catalog, "rc")
    latest = DeltaTable(path).version()
    assert versions == list(range(latest + 1)), versions
    operations = _operations(catalog, "rc")
    assert [operations[v] for v in versions[-3:]] == ["MERGE", "UPDATE", "DELETE"]
    for version in versions:
        ours = alice_sql.rows(f"SELECT id, name FROM {t} VERSION AS OF {version} ORDER BY id")
        assert ours == _delta_rows(path, version), version
    # Deletion vectors: the UPDATE and the DELETE mark rows, they do not rewrite the file.
    for version in versions[-2:]:
        adds = [a["add"] for a in _commit(path, version) if "add" in a]
        assert any(add.get("deletionVector") for add in adds), (version, adds)
    # The change data feed of the UPDATE: its pre- and post-images.
    cdc = [a["cdc"]["path"] for a in _commit(path, versions[-2]) if "cdc" in a]
    assert cdc
    kinds = {
        kind
        for file in cdc
        for kind in pq.read_table(Path(path, file)).column("_change_type").to_pylist()
    }
    assert kinds == {"update_preimage", "update_postimage"}


def test_a_temporary_view_as_source_and_a_change_that_changes_nothing(alice_sql, catalog) -> None:
    t = f"{catalog}.d.tv"
    alice_sql.ok(f"CREATE TABLE {t} USING delta AS SELECT id, 'a' AS name FROM range(2)")
    alice_sql.ok(f"USE {catalog}.d")  # temporary objects live in the current database
    alice_sql.ok("CREATE TEMPORARY VIEW src AS SELECT 1 AS id, 'b' AS name")
    alice_sql.ok(f"MERGE INTO {t} t USING src s ON t.id = s.id WHEN MATCHED THEN UPDATE SET *")
    assert alice_sql.rows(f"SELECT id, name FROM {t} ORDER BY id") == [[0, "a"], [1, "b"]]
    before = _state(catalog, "tv")
    job = alice_sql.ok(f"DELETE FROM {t} WHERE id > 100")
    assert _state(catalog, "tv") == before
    assert "No new version" in _message(alice_sql, job)


def test_another_user_without_modify_changes_nothing(alice_sql, shared_catalog) -> None:
    t = f"{shared_catalog}.d.rs"
    alice_sql.ok(f"CREATE TABLE {t} USING delta AS SELECT 1 AS id")
    before = _state(shared_catalog, "rs")
    bob = Pipeline("bob")
    assert bob.rows(f"SELECT id FROM {t}") == [[1]]
    for sql in (
        f"DELETE FROM {t}",
        f"UPDATE {t} SET id = 2",
        f"MERGE INTO {t} t USING (SELECT 1 AS id) s ON t.id = s.id WHEN MATCHED THEN DELETE",
    ):
        refused(bob, bob.run(sql), "PERMISSION_DENIED", "MODIFY")
    # A plan alice made, run as bob: the worker checks MODIFY before Delta commits anything.
    plan = planned(alice_sql.session, f"DELETE FROM {t}")
    job = submit_plan(bob.user, plan)
    wait_for_status(job.pk, {"FINISHED", "FAILED"})
    job.refresh_from_db()
    assert job.status == "FAILED" and job.error is not None
    assert job.error["code"] in ("PERMISSION_DENIED", "NOT_FOUND")
    assert _state(shared_catalog, "rs") == before


def test_a_failing_merge_leaves_the_previous_version(alice_sql, catalog) -> None:
    t = f"{catalog}.d.fm"
    alice_sql.ok(f"CREATE TABLE {t} USING delta AS SELECT id, 'a' AS name FROM range(3)")
    before = _state(catalog, "fm")
    # Two source rows match one target row: Delta refuses the MERGE.
    job = alice_sql.run(
        f"MERGE INTO {t} t USING (SELECT 1 AS id UNION ALL SELECT 1) s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET name = 'x'"
    )
    assert job["status"] == "FAILED", job
    assert _state(catalog, "fm") == before
    assert alice_sql.rows(f"SELECT count(*) FROM {t} WHERE name = 'a'") == [[3]]


def test_other_tables_are_refused(alice_sql, catalog) -> None:
    alice_sql.ok(f"CREATE TABLE {catalog}.d.pq AS SELECT 1 AS id")
    job = alice_sql.run(f"DELETE FROM {catalog}.d.pq")
    refused(alice_sql, job, "UNSUPPORTED_STATEMENT", "is stored as parquet")
    alice_sql.ok(f"CREATE VIEW {catalog}.d.vw AS SELECT 1 AS id")
    job = alice_sql.run(f"UPDATE {catalog}.d.vw SET id = 2")
    assert job["status"] == "FAILED" and "is a view" in job["error"]["message"]


def _forged(alice_sql, statement: str, **changes: Any) -> Any:
    """The plan of ``statement``, changed (``sql``: the text Spark gets; else its args)."""
    plan = planned(alice_sql.session, statement)
    for key, value in changes.items():
        if key == "sql":
            plan["sql"] = value
        else:
            plan["args"][key] = value
    job = submit_plan(alice_sql.user, plan, alice_sql.session)
    wait_for_status(job.pk, {"FINISHED", "FAILED"})
    job.refresh_from_db()
    return job


def test_forged_plans_change_the_planned_table_only(alice_sql, catalog) -> None:
    t = f"{catalog}.d.fg"
    o = f"{catalog}.d.other"
    alice_sql.ok(f"CREATE TABLE {t} USING delta AS SELECT id FROM range(3)")
    alice_sql.ok(f"CREATE TABLE {o} USING delta AS SELECT id FROM range(3)")
    before, other = _state(catalog, "fg"), _state(catalog, "other")
    merge = f"MERGE INTO {t} t USING {o} s ON t.id = s.id WHEN MATCHED THEN DELETE"
    for sql in (
        # The MERGE's target made its source (another table than planned).
        "MERGE INTO `__tessera_r1` t USING `__tessera_t1` s ON t.id = s.id "
        "WHEN MATCHED THEN DELETE",
        # A relation the plan never resolved, a path, a query in place of the change.
        "MERGE INTO `__tessera_t1` t USING `secret` s ON true WHEN MATCHED THEN DELETE",
        "DELETE FROM delta.`/tmp` WHERE true",
        "SELECT * FROM `__tessera_r1`",
        "MERGE WITH SCHEMA EVOLUTION INTO `__tessera_t1` t USING `__tessera_r1` s "
        "ON t.id = s.id WHEN NOT MATCHED THEN INSERT *",
    ):
        job = _forged(alice_sql, merge, sql=sql)
        assert job.status == "FAILED" and job.error["code"] == "FORBIDDEN_SQL", (sql, job.error)
    assert _state(catalog, "fg") == before and _state(catalog, "other") == other
    # Another directory in the plan: the change lands in the table's own, or nowhere.
    outside = outside_dir()
    outside_files = files_under(outside)
    table = planned(alice_sql.session, f"DELETE FROM {t} WHERE id = 0")["args"]["table"]
    job = _forged(
        alice_sql,
        f"DELETE FROM {t} WHERE id = 0",
        location=str(outside),
        table={**table, "path": str(outside)},
    )
    assert files_under(outside) == outside_files
    assert _state(catalog, "other") == other
    version, recorded = _state(catalog, "fg")
    assert recorded[-1] == version
    shutil.rmtree(outside, ignore_errors=True)
