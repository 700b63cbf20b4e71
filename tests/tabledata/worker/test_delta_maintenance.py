"""OPTIMIZE and VACUUM on a managed Delta table (issue 31 item 6, ADR 0019 "Maintenance"):
Delta's own commands, run as ALTER TABLE runs, their version the table's at FINISHED with an
audit event; an independent Delta reader (delta-rs) reads every version with the same rows
before and after; VACUUM DRY RUN answers the files it would delete. Hostile: another user
without MANAGE, forged plans, a VACUUM below Tessera's retention, an unknown ZORDER column —
each changes nothing. One table, kept lean (CI time)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from deltalake import DeltaTable

from audit.models import AuditEvent
from tests.security.boundary import refused
from tests.tabledata.worker.test_managed_delta import _delta_rows, _row, _state, _versions
from tests.worker_helpers import Pipeline, planned, result_rows, submit_plan, wait_for_status

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker"),
    pytest.mark.timeout(600),
]

MONTH = 30 * 24 * 3600


def _failed(actor: Pipeline, plan: dict[str, object]) -> str:
    """Run ``plan`` as ``actor``; it must fail: its error's text."""
    job = submit_plan(actor.user, plan)
    wait_for_status(job.pk, {"FINISHED", "FAILED"})
    job.refresh_from_db()
    assert job.status == "FAILED", job.error
    return json.dumps(job.error)


def test_optimize_and_vacuum_keep_every_version(alice_sql, shared_catalog) -> None:
    c = shared_catalog
    t = f"{c}.d.mt"
    alice_sql.ok(
        f"CREATE TABLE {t} USING delta AS SELECT id, concat('n', id) AS name FROM range(2)"
    )
    for first in (2, 4):
        alice_sql.ok(f"INSERT INTO {t} SELECT id, concat('n', id) FROM range({first}, {first + 2})")
    path = _row(c, "mt").location
    before = {v: _delta_rows(path, v) for v in _versions(c, "mt")}
    assert len(DeltaTable(path).file_uris()) >= 3

    # Hostile first: nothing changes.
    state = _state(c, "mt")
    bob = Pipeline("bob")
    refused(bob, bob.run(f"OPTIMIZE {t}"), "PERMISSION_DENIED", "MANAGE")
    for sql, fragment in (
        (f"VACUUM {t} RETAIN 1 HOURS", "at least 168 hours"),
        (f"OPTIMIZE {t} ZORDER BY (nope)", "no column `nope`"),
    ):
        job = alice_sql.run(sql)
        assert job["status"] == "FAILED" and fragment in job["error"]["message"], job
    plan = planned(alice_sql.session, f"OPTIMIZE {t} ZORDER BY (id)")
    assert "PERMISSION_DENIED" in _failed(bob, plan)
    forged = json.loads(json.dumps(plan))
    forged["args"]["change"].update(where="id > 0 ZORDER BY (name)", zorder=[])
    assert "differently" in _failed(alice_sql, forged)
    forged = json.loads(json.dumps(plan))
    forged["args"]["change"] = {"op": "vacuum", "retain_hours": 168, "dry_run": False}
    assert "not its action" in _failed(alice_sql, forged)
    vacuum = planned(alice_sql.session, f"VACUUM {t} DRY RUN")
    vacuum["args"]["change"]["retain_hours"] = 0
    assert "at least" in _failed(alice_sql, vacuum)
    assert _state(c, "mt") == state

    # OPTIMIZE: one file, a new version with the same rows; every older one still reads.
    job = alice_sql.ok(f"OPTIMIZE {t} ZORDER BY (id)")
    assert "files compacted into 1" in result_rows(alice_sql.api, job["id"])[1][0][0]
    optimized = _versions(c, "mt")[-1]
    assert optimized == max(before) + 1 == DeltaTable(path).version()
    assert len(DeltaTable(path).file_uris()) == 1
    assert DeltaTable(path).history(1)[0]["operation"] == "OPTIMIZE"
    assert _delta_rows(path, optimized) == before[max(before)]
    event = AuditEvent.objects.filter(object=[c, "d", "mt"], action="alter").latest("id")
    assert event.detail["changed"] == ["optimize"] and event.detail["version"] == optimized

    # A file no version names, a month old: DRY RUN lists it, VACUUM deletes only it.
    stray = Path(path) / "part-stray.parquet"
    stray.write_bytes(b"not data")
    old = time.time() - MONTH
    os.utime(stray, (old, old))
    job = alice_sql.ok(f"VACUUM {t} DRY RUN")
    assert result_rows(alice_sql.api, job["id"])[1] == [["part-stray.parquet"]]
    assert stray.exists() and _versions(c, "mt")[-1] == optimized
    alice_sql.ok(f"VACUUM {t} RETAIN 200 HOURS")
    assert not stray.exists()
    assert _versions(c, "mt")[-1] == DeltaTable(path).version() > optimized
    for version, rows in before.items():
        assert _delta_rows(path, version) == rows, version
    # The table takes writes after VACUUM's commits (they are recorded, not a conflict).
    alice_sql.ok(f"INSERT INTO {t} VALUES (9, 'n9')")
    assert _delta_rows(path, _versions(c, "mt")[-1]) == [*before[max(before)], [9, "n9"]]
