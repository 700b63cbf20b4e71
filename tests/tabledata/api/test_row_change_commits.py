"""The FINISHED step of a MERGE / UPDATE / DELETE on a managed Delta table (ADR 0019,
"Row-level DML"), without a worker: the version Delta's command committed (recorded by the
worker in the job's staging) becomes the table's version only if the table's recorded
version is still the one the statement was planned on; a job that never ran its command,
or that targets a table other than a managed Delta one, records nothing."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import transaction

from catalog import versions
from catalog.models import Table, TableVersion
from jobs.models import Job, Session
from tabledata import staging as write_staging
from tests.tabledata.api.test_writes_lifecycle import (  # noqa: F401 (fixtures)
    claim,
    finish,
    ident,
    results_dir,
    sent_tasks,
    submit,
)

pytestmark = pytest.mark.django_db


def _delta_table(make: Any, name: str, version: int | None = 1) -> Table:
    make.table("demo", "sales", name, options={"format": "delta"})
    table = Table.objects.get(name=name)
    if version is not None:
        with transaction.atomic():
            versions.record(table, location=table.location, operation="INSERT", number=version)
    return table


def change_plan(name: str, action: str = "delete", read_version: int = 1) -> dict[str, Any]:
    table = Table.objects.get(name=name)
    return {
        "kind": "insert",
        "action": action,
        "needs_spark": True,
        "sql": "DELETE FROM `__tessera_t1` AS `t` WHERE id = 1",
        "relations": [],
        "functions": [],
        "target": ident(name),
        "args": {
            "identifier": ident(name),
            "operation": action.upper(),
            "table": {"alias": "__tessera_t1", "identifier": ident(name), "kind": "table"},
            "location": table.location,
            "managed": True,
            "format": "delta",
            "read_version": read_version,
        },
    }


def _ran(job: Job, name: str, committed: int | None, base: int = 1) -> None:
    """What the worker records once Delta's command ran."""
    fields: dict[str, Any] = {
        "delta_base": base,
        "delta_read": base,
        "delta_marker": f"tessera-job:{job.pk}",
        "metrics": {"num_affected_rows": 2},
        "rows": 2,
    }
    if committed is not None:
        fields["delta_committed"] = committed
    write_staging.record(job, ident(name), **fields)


def _recorded(table: Table) -> list[tuple[int, str]]:
    rows = TableVersion.objects.filter(table=table).order_by("version")
    return [(row.version, row.operation) for row in rows]


@pytest.mark.parametrize("action", ["merge", "update", "delete"])
def test_finished_records_the_version_delta_committed(
    session: Session, make: Any, storage: Any, action: str
) -> None:
    table = _delta_table(make, "m")
    job = submit(session, change_plan("m", action), sql=f"{action.upper()} …")
    assert job.kind == "insert" and job.status == "CREATED"
    entry = write_staging.entry(job, ident("m"))
    assert entry["mode"] == action and entry["operation"] == action.upper()
    assert entry["delta"] is True and entry["location"] == entry["final"] == table.location
    claim(job)
    _ran(job, "m", committed=2)
    assert finish(job).status == "FINISHED"
    assert _recorded(table) == [(1, "INSERT"), (2, action.upper())]
    assert versions.current_delta_version(table) == 2


def test_a_change_that_committed_nothing_records_nothing(
    session: Session, make: Any, storage: Any
) -> None:
    table = _delta_table(make, "n")
    job = submit(session, change_plan("n"))
    claim(job)
    _ran(job, "n", committed=None)
    assert finish(job).status == "FINISHED"
    assert _recorded(table) == [(1, "INSERT")]


def test_another_recorded_version_since_is_a_write_conflict(
    session: Session, make: Any, storage: Any
) -> None:
    table = _delta_table(make, "c")
    job = submit(session, change_plan("c"))
    claim(job)
    _ran(job, "c", committed=3)
    with transaction.atomic():  # another job's commit, recorded first
        versions.record(table, location=table.location, operation="INSERT", number=2)
    failed = finish(job)
    assert failed.status == "FAILED" and failed.error is not None
    assert failed.error["code"] == "WRITE_CONFLICT"
    assert "changed while the job ran" in failed.error["message"]
    assert _recorded(table) == [(1, "INSERT"), (2, "INSERT")]


def test_a_job_that_never_ran_its_command_records_nothing(
    session: Session, make: Any, storage: Any
) -> None:
    table = _delta_table(make, "r")
    job = submit(session, change_plan("r"))
    claim(job)
    write_staging.record(job, ident("r"), delta_committed=2)  # forged: no base, no marker
    failed = finish(job)
    assert failed.status == "FAILED" and failed.error is not None
    assert "without running its change" in failed.error["message"]
    assert _recorded(table) == [(1, "INSERT")]


def test_a_change_of_a_parquet_table_stages_nothing(
    session: Session, make: Any, storage: Any
) -> None:
    make.table("demo", "sales", "p")
    job = submit(session, change_plan("p"))
    job = Job.objects.get(pk=job.pk)
    assert job.status == "FAILED" and job.error is not None
    assert job.error["code"] == "UNSUPPORTED_STATEMENT"
    assert "managed Delta tables only" in job.error["message"]
