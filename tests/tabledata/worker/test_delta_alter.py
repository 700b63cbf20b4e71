"""ALTER TABLE and COMMENT ON TABLE on managed Delta tables, and the constraints Delta enforces
(issue 31 item 4, ADR 0019 "ALTER TABLE"): each change is Delta's own command, its version
the table's at FINISHED with the catalog's schema changed in the same transaction; NOT NULL
and CHECK refuse a write that breaks them and nothing is committed. Hostile: another user
without MANAGE, a forged plan, a refused table property."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pytest
from deltalake import DeltaTable, QueryBuilder

from catalog.models import Column
from tests.security.boundary import refused
from tests.tabledata.worker.test_managed_delta import _row, _state, _versions
from tests.worker_helpers import Pipeline, planned, submit_plan, wait_for_status

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker"),
    pytest.mark.timeout(900),  # a dozen Delta commands, one job each, on a shared machine
]


def _columns(catalog: str, name: str) -> list[tuple[str, str | None]]:
    rows = Column.objects.filter(table=_row(catalog, name)).order_by("position")
    return [(c.name, c.data_type) for c in rows]


def _delta_rs(path: str, sql: str) -> list[dict[str, Any]]:
    builder = QueryBuilder().register("t", DeltaTable(path))
    return list(pa.table(builder.execute(sql).read_all()).to_pylist())


def test_schema_changes_are_delta_versions_with_the_catalogs_schema(alice_sql, catalog) -> None:
    t = f"{catalog}.d.al"
    alice_sql.ok(
        f"CREATE TABLE {t} USING delta AS SELECT id, concat('n', id) AS name FROM range(3)"
    )
    path = _row(catalog, "al").location
    first = _versions(catalog, "al")
    alice_sql.ok(f"ALTER TABLE {t} ADD COLUMNS (score INT COMMENT 'points', tmp STRING)")
    alice_sql.ok(f"ALTER TABLE {t} RENAME COLUMN name TO label")
    alice_sql.ok(f"ALTER TABLE {t} DROP COLUMN tmp")
    alice_sql.ok(f"ALTER TABLE {t} ALTER COLUMN id COMMENT 'the key'")
    alice_sql.ok(f"COMMENT ON TABLE {t} IS 'scores'")
    alice_sql.ok(
        f"ALTER TABLE {t} SET TBLPROPERTIES ('delta.logRetentionDuration' = 'interval 40 days')"
    )
    alice_sql.ok(f"INSERT INTO {t} VALUES (7, 'x', 5)")
    assert alice_sql.rows(f"SELECT id, label, score FROM {t} ORDER BY id") == [
        [0, "n0", None],
        [1, "n1", None],
        [2, "n2", None],
        [7, "x", 5],
    ]
    versions = _versions(catalog, "al")
    assert versions == list(range(versions[-1] + 1)) and len(versions) == len(first) + 7
    assert DeltaTable(path).version() == versions[-1]
    table = _row(catalog, "al")
    assert table.comment == "scores"
    assert _columns(catalog, "al") == [
        ("id", "BIGINT NOT NULL"),
        ("label", "STRING NOT NULL"),
        ("score", "INT"),
    ]
    declared = {c["name"]: c for c in table.schema["columns"]}
    assert declared["id"]["comment"] == "the key" and declared["score"]["comment"] == "points"
    # Any Delta reader sees the same columns (column mapping: renamed and dropped by name).
    rows = _delta_rs(path, "SELECT id, label, score FROM t ORDER BY id")
    assert [r["label"] for r in rows] == ["n0", "n1", "n2", "x"]
    metadata = DeltaTable(path).metadata()
    assert metadata.configuration.get("delta.logRetentionDuration") == "interval 40 days"
    # A version from before the changes is read with the columns its log had then.
    old = alice_sql.rows(f"SELECT * FROM {t} VERSION AS OF {first[-1]} ORDER BY id")
    assert old == [[0, "n0"], [1, "n1"], [2, "n2"]]
    # DESCRIBE shows the new schema with its comments.
    described = alice_sql.rows(f"DESCRIBE {t}")
    assert [r[0] for r in described[:3]] == ["id", "label", "score"], described


def test_not_null_and_check_are_enforced_and_commit_nothing(alice_sql, catalog) -> None:
    t = f"{catalog}.d.ck"
    alice_sql.ok(f"CREATE TABLE {t} USING delta AS SELECT id, 'a' AS name FROM range(3)")
    alice_sql.ok(f"ALTER TABLE {t} ALTER COLUMN name SET NOT NULL")
    alice_sql.ok(f"ALTER TABLE {t} ADD CONSTRAINT small CHECK (id < 100)")
    assert ("name", "STRING NOT NULL") in _columns(catalog, "ck")
    before = _state(catalog, "ck")
    for sql, fragment in (
        # Tessera's own check of the catalog's NOT NULL comes first; Delta's stands behind it.
        (f"INSERT INTO {t} VALUES (5, NULL)", "Cannot insert NULL into NOT NULL column `name`"),
        (f"INSERT INTO {t} VALUES (500, 'b')", "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES"),
        (f"UPDATE {t} SET id = 1000 WHERE id = 1", "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES"),
        (
            f"MERGE INTO {t} t USING (SELECT 1 AS id) s ON t.id = s.id "
            "WHEN MATCHED THEN UPDATE SET name = NULL",
            "NOT_NULL",
        ),
    ):
        job = alice_sql.run(sql)
        assert job["status"] == "FAILED", (sql, job)
        assert fragment in job["error"]["message"], (sql, job["error"])
        assert _state(catalog, "ck") == before, sql
    # Adding a constraint the rows break fails, and so does a NOT NULL on a column with NULLs.
    job = alice_sql.run(f"ALTER TABLE {t} ADD CONSTRAINT tiny CHECK (id < 1)")
    assert job["status"] == "FAILED" and "DELTA_NEW_CHECK_CONSTRAINT_VIOLATION" in str(job["error"])
    alice_sql.ok(f"ALTER TABLE {t} DROP CONSTRAINT small")
    alice_sql.ok(f"INSERT INTO {t} VALUES (500, 'b')")
    alice_sql.ok(f"ALTER TABLE {t} ALTER COLUMN name DROP NOT NULL")
    alice_sql.ok(f"INSERT INTO {t} VALUES (6, NULL)")
    assert alice_sql.rows(f"SELECT count(*) FROM {t}") == [[5]]


def test_hostile_alters_change_nothing(alice_sql, shared_catalog) -> None:
    t = f"{shared_catalog}.d.ho"
    alice_sql.ok(f"CREATE TABLE {t} USING delta AS SELECT 1 AS id")
    before = _state(shared_catalog, "ho")
    bob = Pipeline("bob")
    for sql in (f"ALTER TABLE {t} ADD COLUMNS (x INT)", f"COMMENT ON TABLE {t} IS 'mine'"):
        refused(bob, bob.run(sql), "PERMISSION_DENIED", "MANAGE")
    job = alice_sql.run(f"ALTER TABLE {t} SET TBLPROPERTIES ('delta.columnMapping.mode' = 'none')")
    assert job["status"] == "FAILED" and "cannot be changed" in job["error"]["message"]
    # A plan alice made, run as bob: the worker checks MANAGE before Delta commits anything.
    plan = planned(alice_sql.session, f"ALTER TABLE {t} ADD COLUMNS (x INT)")
    job_row = submit_plan(bob.user, plan)
    wait_for_status(job_row.pk, {"FINISHED", "FAILED"})
    job_row.refresh_from_db()
    assert job_row.status == "FAILED" and job_row.error is not None
    assert job_row.error["code"] in ("PERMISSION_DENIED", "NOT_FOUND")
    # Forged plans of alice: a refused property, a change Spark reads otherwise.
    data = json.loads(json.dumps(plan))
    data["args"]["change"] = {
        "op": "set_properties",
        "properties": {"delta.columnMapping.mode": "none"},
    }
    forged = submit_plan(alice_sql.user, data)
    wait_for_status(forged.pk, {"FINISHED", "FAILED"})
    forged.refresh_from_db()
    assert forged.status == "FAILED" and "cannot be changed" in str(forged.error)
    data["args"]["change"] = {
        "op": "add_columns",
        "columns": [{"name": "x", "data_type": "INT DEFAULT 1"}],
    }
    forged = submit_plan(alice_sql.user, data)
    wait_for_status(forged.pk, {"FINISHED", "FAILED"})
    forged.refresh_from_db()
    assert forged.status == "FAILED", forged.error
    assert _state(shared_catalog, "ho") == before
