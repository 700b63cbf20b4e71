"""The commit of a managed Delta table's write (ADR 0019), run by ``tabledata.commit`` inside
the transaction that moves the job to FINISHED.

The worker staged the job's data files with Delta's own writer (``engine.delta_tables``),
against a Delta version it recorded (``delta_base``), without committing them. Committing
them needs the Spark driver that wrote them, so the worker lends its committer for the
duration of the FINISHED transition (``lend``); a transition made anywhere else (the web,
the reaper) has none and commits nothing. The Delta version the commit made is recorded
as the table's version in the same transaction (``catalog.versions``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from catalog import versions
from catalog.models import Table, TableVersion
from core.errors import CoreError, WriteConflict
from core.planner import ROW_CHANGE_ACTIONS, Action
from jobs.models import Job

ROW_CHANGE_MODES = frozenset(str(action) for action in ROW_CHANGE_ACTIONS)

# (staging entry) -> the Delta version committed; raises WriteConflict on a conflict.
Committer = Callable[[Mapping[str, Any]], int]

_COMMITTER: ContextVar[Committer | None] = ContextVar("tessera_delta_committer", default=None)


@contextmanager
def lend(committer: Committer) -> Iterator[None]:
    """While the block runs (the worker's FINISHED transition), Delta commits use it."""
    token = _COMMITTER.set(committer)
    try:
        yield
    finally:
        _COMMITTER.reset(token)


def commit_managed_delta(table: Table, item: Mapping[str, Any], job: Job) -> None:
    """Commit the job's staged files into the table's Delta log and record the version."""
    shown = str(item.get("table") or "")
    if table.location != str(item.get("final")) or not versions.is_managed_delta(table):
        raise CoreError(
            f"Table {shown} is no longer the managed Delta table the job wrote; nothing was "
            "committed.",
            details={"identifier": list(item["identifier"])},
        )
    if item.get("mode") in ROW_CHANGE_MODES:
        _record_row_change(table, item, job)
        return
    if "delta_actions" not in item or not isinstance(item.get("delta_base"), int):
        raise CoreError(
            f"The job finished without its staged files for {shown}: nothing was committed.",
            details={"identifier": list(item["identifier"])},
        )
    committer = _COMMITTER.get()
    if committer is None:
        raise CoreError(
            f"The Delta commit of {shown} runs only in the worker that wrote its files; "
            "nothing was committed.",
            details={"identifier": list(item["identifier"])},
        )
    created = item.get("delta_created")
    if isinstance(created, int) and not TableVersion.objects.filter(table=table).exists():
        # The empty table the worker created (Delta's version 0) is the table's first version.
        versions.record(
            table,
            location=table.location,
            operation=versions.OP_CREATE,
            user_id=job.user_id,
            job_id=job.pk,
            rows=0,
            number=created,
        )
    number = committer(item)
    rows = item.get("rows") if isinstance(item.get("rows"), int) else None
    versions.record(
        table,
        location=table.location,
        operation=versions.operation_of(item),
        user_id=job.user_id,
        job_id=job.pk,
        rows=rows,
        number=number,
    )


def _record_row_change(table: Table, item: Mapping[str, Any], job: Job) -> None:
    """A MERGE / UPDATE / DELETE: Delta's command committed its version in the worker (ADR
    0019, "Row-level DML"); it becomes the table's version here, if the table's recorded
    version is still the one the command read (else the worker undoes Delta's commit). A
    command that changed nothing committed nothing: no version."""
    shown = str(item.get("table") or "")
    base = item.get("delta_base")
    committed = item.get("delta_committed")
    if not isinstance(base, int) or "delta_marker" not in item:
        raise CoreError(
            f"The job finished without running its change of {shown}: nothing was committed.",
            details={"identifier": list(item["identifier"])},
        )
    if versions.current_delta_version(table) != base:
        raise WriteConflict(
            f"Table {shown} changed while the job ran (another write committed first); "
            "nothing was committed. Run the statement again.",
            details={"identifier": list(item["identifier"])},
        )
    if not isinstance(committed, int):
        return
    metrics = item.get("metrics") if isinstance(item.get("metrics"), dict) else {}
    versions.record(
        table,
        location=table.location,
        operation=versions.operation_of(item),
        user_id=job.user_id,
        job_id=job.pk,
        rows=item.get("rows") if isinstance(item.get("rows"), int) else None,
        metrics=metrics,
        number=committed,
    )
    if item.get("mode") in (Action.OPTIMIZE, Action.VACUUM):
        from catalog.services.tables import table_maintained

        table_maintained(
            user=job.user, table=table, operation=versions.operation_of(item), version=committed
        )
    if item.get("mode") == "alter_table":
        # The catalog's schema changes with the version that changed the Delta table's.
        from catalog.services.tables import table_schema_altered

        change = job.typed_plan.args.get("change") if job.typed_plan is not None else None
        if not isinstance(change, Mapping):
            raise CoreError(f"The job's plan names no change of {shown}; nothing was committed.")
        table_schema_altered(user=job.user, table=table, change=change)
