"""The FINISHED step of an ALTER TABLE on a managed Delta table (ADR 0019, "ALTER TABLE"),
without a worker: the version Delta's command committed becomes the table's version and the
catalog's schema changes with it, in one transaction; a concurrent write recorded first is a
WRITE_CONFLICT that changes neither; MANAGE is checked again at the commit."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import transaction

from audit.models import ALTER, AuditEvent
from catalog import versions
from catalog.models import Column, Table
from jobs.models import Session
from tabledata import staging as write_staging
from tests.tabledata.api.test_row_change_commits import (
    _delta_table,
    _ran,
    _recorded,
    change_plan,
)
from tests.tabledata.api.test_writes_lifecycle import (  # noqa: F401 (fixtures)
    claim,
    finish,
    ident,
    results_dir,
    sent_tasks,
    submit,
)

pytestmark = pytest.mark.django_db


def _alter_plan(name: str, change: dict[str, Any]) -> dict[str, Any]:
    plan = change_plan(name, "alter_table")
    plan["sql"] = "ALTER TABLE `__tessera_t1` …"
    plan["args"].update(operation="ALTER TABLE", change=change)
    return plan


def _columns(table: Table) -> list[tuple[str, str | None]]:
    return [(c.name, c.data_type) for c in Column.objects.filter(table=table).order_by("position")]


def test_finished_records_the_version_and_the_schema(
    session: Session,
    make: Any,
    storage: Any,
) -> None:
    table = _delta_table(make, "a")
    before = _columns(table)
    change = {"op": "add_columns", "columns": [{"name": "extra", "data_type": "INT NOT NULL"}]}
    job = submit(session, _alter_plan("a", change))
    entry = write_staging.entry(job, ident("a"))
    assert entry["mode"] == "alter_table" and entry["operation"] == "ALTER TABLE"
    claim(job)
    _ran(job, "a", committed=2)
    assert finish(job).status == "FINISHED"
    table.refresh_from_db()
    assert _recorded(table) == [(1, "INSERT"), (2, "ALTER TABLE")]
    assert _columns(table) == [*before, ("extra", "INT NOT NULL")]
    assert table.schema["columns"][-1] == {
        "name": "extra",
        "kind": "physical",
        "data_type": "INT NOT NULL",
    }
    assert AuditEvent.objects.filter(action=ALTER, object_kind="table").exists()


def test_a_concurrent_write_recorded_first_is_a_write_conflict(
    session: Session,
    make: Any,
    storage: Any,
) -> None:
    table = _delta_table(make, "w")
    schema = dict(table.schema)
    job = submit(session, _alter_plan("w", {"op": "comment_table", "comment": "new"}))
    claim(job)
    _ran(job, "w", committed=3)
    with transaction.atomic():  # an INSERT's commit, recorded while the ALTER ran
        versions.record(table, location=table.location, operation="INSERT", number=2)
    failed = finish(job)
    assert failed.status == "FAILED" and failed.error is not None
    assert failed.error["code"] == "WRITE_CONFLICT"
    table.refresh_from_db()
    assert table.comment != "new" and table.schema == schema
    assert _recorded(table) == [(1, "INSERT"), (2, "INSERT")]


def test_manage_is_checked_again_at_the_commit(
    session: Session,
    make: Any,
    storage: Any,
    bob: Any,
) -> None:
    table = _delta_table(make, "g")
    bob_session = Session.objects.create(
        user=bob,
        current_catalog="demo",
        current_database="sales",
        last_used_at=session.last_used_at,
        idle_timeout_seconds=3600,
    )
    job = submit(bob_session, _alter_plan("g", {"op": "comment_table", "comment": "bob's"}))
    if job.status == "CREATED":
        claim(job)
        _ran(job, "g", committed=2)
        job = finish(job)
    assert job.status == "FAILED" and job.error is not None
    assert job.error["code"] in ("PERMISSION_DENIED", "NOT_FOUND")
    table.refresh_from_db()
    assert table.comment != "bob's" and _recorded(table) == [(1, "INSERT")]
