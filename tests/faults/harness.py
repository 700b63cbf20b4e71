"""What every fault test checks after an injection: the job's end, its stage table and
staging files, the permanent tables, and that nothing ran twice."""

from __future__ import annotations

import contextlib
import os
import signal
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from django.conf import settings
from django.contrib.auth.models import User
from django.db import DatabaseError, InterfaceError, connection

from catalog import services as catalog_services
from catalog.models import Table, TableVersion
from jobs.models import Job, JobEvent
from tests.waiting import poll, wait_until
from tests.worker_helpers import TERMINAL, create_user, session_for, submit_sql
from tests.workers import WorkerProcess, exists, java_children

T = TypeVar("T")
# A CTAS that writes for minutes (≈ 3·10⁹ rows): killed long before it ends.
SLOW_CTAS_QUERY = (
    "SELECT id, id * 7 AS seven, sha2(CAST(id AS STRING), 256) AS digest "
    "FROM range(0, 3000000000, 1, 4)"
)
SLOW_QUERY = "SELECT count(*) AS n FROM range(0, 100000000) AS a CROSS JOIN range(0, 100000) AS b"
DB_ERRORS = (DatabaseError, InterfaceError)


def db(read: Callable[[], T]) -> T:
    """A read of the test process that survives a PostgreSQL restart: a broken connection
    is closed (the next read opens a new one) and the error re-raised (``wait_until``
    ignores it: "not yet")."""
    try:
        return read()
    except DB_ERRORS:
        connection.close()
        raise


def kill_worker_and_jvm(worker: WorkerProcess) -> None:
    """kill -9 of the worker process and of its JVM, as a machine or container dying."""
    jvms = java_children(worker.pid)
    worker.kill()
    for pid in jvms:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not any(exists(p) for p in jvms), 30, 0.1, "the killed worker's JVM gone")


@dataclass
class Owner:
    """A user, a session and a catalog of their own, with one committed table ``keep``."""

    user: User
    catalog: str
    keep_rows: int = 0

    @property
    def warehouse(self) -> Path:
        return Path(settings.WAREHOUSE_DIR) / self.catalog

    def keep(self) -> Table:
        return Table.objects.get(database__catalog__name=self.catalog, name_key="keep")

    def snapshot(self) -> tuple[str, str, list[str]]:
        """The permanent table as it stands: status, location, data files."""
        table = self.keep()
        return table.status, table.location, files_under(Path(table.location))


def new_owner(prefix: str) -> Owner:
    user = create_user(f"{prefix}{uuid.uuid4().hex[:6]}")
    catalog = f"{prefix}{uuid.uuid4().hex[:8]}"
    catalog_services.catalog_create(user=user, name=catalog, default_database="d")
    return Owner(user, catalog)


def make_keep(owner: Owner, rows: int = 1000, timeout: float = 180) -> None:
    """The permanent table every fault must leave unchanged (or fully committed)."""
    job = submit_sql(
        owner.user, f"CREATE TABLE {owner.catalog}.d.keep AS SELECT id FROM range(0, {rows})"
    )
    finished = wait_terminal(job.id, timeout)
    assert finished.status == "FINISHED", (finished.status, finished.error)
    owner.keep_rows = rows


def files_under(root: Path) -> list[str]:
    if not root.exists():
        return []
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def wait_terminal(job_id: Any, timeout: float, message: str = "") -> Job:
    def ended() -> Job | None:
        job = db(lambda: Job.objects.get(pk=job_id))
        return job if job.status in TERMINAL else None

    return wait_until(ended, timeout, 0.1, message or f"job {job_id} to end", ignoring=DB_ERRORS)


def wait_writing(job_id: Any, timeout: float = 180) -> Job:
    """Until the job runs and Spark has made every staging directory it recorded."""

    def writing() -> Job | None:
        job = Job.objects.get(pk=job_id)
        assert job.status in {"CREATED", "RUNNING"}, (job.status, job.error)
        staged = [Path(entry["location"]) for entry in (job.staging or {}).values()]
        running = job.status == "RUNNING" and staged and all(p.exists() for p in staged)
        return job if running else None

    return wait_until(writing, timeout, 0.1, f"job {job_id} to write its staging directory")


def wait_running(job_id: Any, timeout: float = 180) -> Job:
    """Until the job runs and Spark reports progress (its tasks started)."""

    def running() -> Job | None:
        job = Job.objects.get(pk=job_id)
        assert job.status in {"CREATED", "RUNNING"}, (job.status, job.error)
        return job if job.status == "RUNNING" and job.progress else None

    return wait_until(running, timeout, 0.1, f"job {job_id} to run")


def event_types(job_id: Any) -> list[str]:
    return list(
        db(
            lambda: (
                JobEvent.objects.filter(job_id=job_id).order_by("id").values_list("type", flat=True)
            )
        )
    )


def assert_ran_once(job_id: Any) -> list[str]:
    """One claim and one end: the job never ran twice."""
    types = event_types(job_id)
    assert types.count("running") <= 1, types
    assert sum(types.count(t) for t in ("finished", "failed", "canceled")) == 1, types
    return types


def assert_left_nothing(job: Job, owner: Owner, name: str) -> None:
    """A CTAS that never committed: no catalog row, no staging directory, and the only data
    in the catalog's warehouse is the permanent table's."""
    assert not Table.objects.filter(
        database__catalog__name=owner.catalog, name_key=name.lower()
    ).exists(), f"the stage table {name} is still in the catalog"
    for entry in (job.staging or {}).values():
        assert not Path(entry["location"]).exists(), f"staging left: {entry['location']}"
    tables = {
        Path(location)
        for location in Table.objects.filter(database__catalog__name=owner.catalog).values_list(
            "location", flat=True
        )
        if location
    } | {  # the kept versions of the tables (docs/writes.md, "Table versions")
        Path(location)
        for location in TableVersion.objects.filter(
            table__database__catalog__name=owner.catalog, expired_at__isnull=True
        ).values_list("location", flat=True)
    }
    data = [p for p in (owner.warehouse / "d").iterdir() if p not in tables]
    assert data == [], f"directories of no table left in the warehouse: {data}"


def new_session(owner: Owner) -> Any:
    return session_for(owner.user)


CLEAN_UP_BOUND = 30.0  # the FAILED hooks and the worker's settle-and-clean after the end


def wait_left_nothing(job: Job, owner: Owner, name: str) -> None:
    """``assert_left_nothing`` within ``CLEAN_UP_BOUND``: the status is written before the
    hooks of the transition run (drop the stage table, delete the staging), and the worker
    cleans again once the job's stopped tasks have settled."""

    def clean() -> bool:
        assert_left_nothing(job, owner, name)
        return True

    if not poll(clean, CLEAN_UP_BOUND, 0.1, ignoring=(AssertionError,)):
        assert_left_nothing(job, owner, name)  # fails, saying what is left
