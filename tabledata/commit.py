"""How write jobs (CTAS, INSERT, statement sets) are committed, and cleaned up when they
are not; where they staged their data is ``tabledata.staging``.

- Managed tables: the table row's ``location`` is its current data directory. Commit points
  the row at the job's new warehouse directory in the caller's transaction (INSERT INTO
  first hard-links the table's current files into it) and records it as the table's next
  version (``catalog.versions``); the old directory stays, as the previous version, until
  the maintenance expires it. One pointer swap per table, so every commit is one step, for
  all targets of a statement set alike.
- Managed Delta tables (ADR 0019): the job's staged files are committed into the table's
  Delta log by the worker's committer (``tabledata.delta_commit``), and the Delta version
  made is recorded as the table's version in the same transaction.
- External tables (docs/writes.md, "External tables"): commit renames the staged data into
  ``<path>`` (each file of an unpartitioned table as ``tessera-<job>-<name>``, each
  partition directory as ``k=v/…/tessera-<job>``: one rename per partition), then replaces
  the manifest ``<path>/_tessera_current`` (``tabledata.manifest``) by one rename — the step
  that makes the commit visible to Tessera's readers — and removes the staging directory.
  After the database commits, an OVERWRITE deletes the entries it replaced. A manifest
  written by a job that did not finish is undone by that job's clean-up, or by the next
  commit onto the table (both under the table's lock).

Before anything is staged (CREATED) and again at the commit, a target must be one the job's
user may write and whose files are its own: its path equals, holds or lies inside no other
table's (``catalog.storage.check_table_apart``). The commit lists only what it moves: the
worker looked for symbolic links in the staging before the commit's transaction
(``catalog.storage.check_tree``), and the commit refuses to move files through a link.

Every delete stays under the warehouse (managed) or under the table's own path, inside a
storage root (external), never through a symbolic link; a directory a table row points at,
and an entry the current manifest lists, are never deleted here.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from django.db import connection

from catalog import access as catalog_access
from catalog import versions
from catalog.models import Table, TableVersion
from core import jobstate, locations, privileges
from core.errors import Conflict, CoreError, NotFound, PermissionDenied
from core.identifiers import quote_path
from core.planner import TABLE_CHANGE_ACTIONS
from core.privileges import Decision, Privilege
from jobs import access_log
from jobs.models import Job
from tabledata import delta_commit, external_commit
from tabledata.commit_files import is_strictly_under, link_tree, remove, require_under, warehouse
from tabledata.staging import JobRef, job_id_of, table_row

log = logging.getLogger(__name__)

# ALTER TABLE, OPTIMIZE, VACUUM: they change the table, not its rows (MANAGE, not MODIFY).
TABLE_CHANGE_MODES = frozenset(str(action) for action in TABLE_CHANGE_ACTIONS)


# --- commit ----------------------------------------------------------------------------------


def commit(job: JobRef) -> list[dict[str, Any]]:
    """Make everything the job staged the tables' data; run it inside the transaction that
    moves the job to FINISHED (``write_steps.commit_write`` does). Raises (and so aborts that
    transaction) when a target is gone. Returns one ``{"table", "rows"?}`` per target, for
    ``data_committed``.

    Tables are locked in key order (two commits onto one table run one after the other, each
    keeping the other's files); managed tables swap first, external files move last.
    """
    if not connection.in_atomic_block:
        raise RuntimeError("writes.commit must run inside the job's FINISHED transaction.")
    job_id = job_id_of(job)
    staging: dict[str, Any] = Job.objects.values_list("staging", flat=True).get(pk=job_id) or {}
    entries = [dict(staging[key]) for key in sorted(staging)]
    tables = [table_row(item["identifier"], lock=True) for item in entries]
    writer = _check_rights(job_id, entries, tables)  # every target, before anything changes
    _check_upsert_bases(entries, tables)
    for item, table in zip(entries, tables, strict=True):
        if item.get("delta"):
            delta_commit.commit_managed_delta(table, item, writer)
        elif item["managed"]:
            _commit_managed(table, item, writer)
    external = [
        external_commit.prepare_external(table, item, job_id)
        for item, table in zip(entries, tables, strict=True)
        if not item["managed"]
    ]  # every check before the first file moves
    external_commit.commit_external(external, job_id)
    access_log.record_writes(writer, tables, [str(item.get("mode") or "") for item in entries])
    committed = []
    for item, table in zip(entries, tables, strict=True):
        detail: dict[str, Any] = {
            "table": quote_path([table.database.catalog.name, table.database.name, table.name])
        }
        if isinstance(item.get("rows"), int):
            detail["rows"] = item["rows"]
        committed.append(detail)
    return committed


def _check_rights(
    job_id: str, entries: Sequence[Mapping[str, Any]], tables: Sequence[Table]
) -> Job:
    """The job's user must still hold MODIFY on every table it inserts into, overwrites or
    upserts into (the planner checked it too, but a plan need not come from the planner, and
    rights can change while a job runs: loaded afresh here). One refusal refuses the whole
    job: nothing is committed. A CTAS writes only the table it created itself
    (``_check_own``). Returns the job (with its user)."""
    job = Job.objects.select_related("user").get(pk=job_id)
    for item, table in zip(entries, tables, strict=True):
        if item["mode"] == "ctas":
            _check_own(job, item, table)
        elif item["mode"] in TABLE_CHANGE_MODES:
            require_modify(job.user, table, Privilege.MANAGE)
        else:
            require_modify(job.user, table)
    return job


def require_modify(user: Any, table: Table, privilege: Privilege = Privilege.MODIFY) -> None:
    """``user`` holds MODIFY (``privilege``: MANAGE for ALTER TABLE) on ``table`` now (what
    they hold is loaded afresh, so a revoke counts from the next commit or stream batch).
    Refused: ``PermissionDenied`` naming the table and the privilege; a table the user may no
    longer see at all answers as a missing one (``NotFound``, as ``write_staging.table_row``
    words it)."""
    access = catalog_access.load_access(user)
    s = catalog_access.relation_securable(table)
    decision = catalog_access.decide(access, s, privilege)
    if decision is Decision.ALLOWED:
        return
    if decision is Decision.HIDDEN:
        raise NotFound(
            f"Table {quote_path(list(s.path))} no longer exists; nothing was written to it.",
            details={"identifier": list(s.path)},
        )
    message, details = privileges.denied_message(s, privilege, privileges.effective(access, s))
    raise PermissionDenied(message + " Nothing was committed.", details=details)


def _check_upsert_bases(entries: Sequence[Mapping[str, Any]], tables: Sequence[Table]) -> None:
    """An upsert merged its changes into the table's data at ``base_location``; if another
    commit moved the table on since (its row is locked now), committing would lose that
    commit's rows: CONFLICT, nothing committed (docs/writes.md, "Upserts")."""
    for item, table in zip(entries, tables, strict=True):
        if item["mode"] != "upsert":
            continue
        if "base_location" not in item or str(item["base_location"]) != table.location:
            raise Conflict(
                f"Table {item.get('table', '')} changed while the upsert ran (another write "
                "committed first); nothing was committed. Run the statement again.",
                details={"identifier": list(item["identifier"])},
            )


def _check_own(job: Job, item: Mapping[str, Any], table: Table) -> None:
    """A CTAS target must be the table this job made: staged by this job, or made by its
    user, and pointing where this job wrote (a managed table at this job's new directory,
    an external one at the path it staged in). A hand-made plan naming someone else's
    table as a CTAS target commits nothing."""
    own = str(table.staged_by_job or "") == str(job.pk) or (
        table.created_by_id is not None and table.created_by_id == job.user_id
    )
    if item["managed"]:
        own = own and table.managed and table.location == str(item["location"])
    else:
        path = next((v for k, v in table.options.items() if k.lower() == "path"), "")
        own = own and not table.managed and locations.comparable(str(path)) == item["final"]
    if not own:
        name = quote_path([table.database.catalog.name, table.database.name, table.name])
        raise PermissionDenied(
            f"Job {job.pk} did not create table {name}: CREATE TABLE … AS SELECT writes only "
            "the table it creates. Nothing was committed.",
            details={"identifier": list(item["identifier"])},
        )


def _commit_managed(table: Table, item: Mapping[str, Any], job: Job) -> None:
    """Point the table at the job's new directory and number it as the table's next
    version (``catalog.versions``). The directory it replaces stays: it is the previous
    version, removed by the maintenance once the retention has passed."""
    new = Path(item["location"])
    require_under(new, warehouse())
    new.mkdir(parents=True, exist_ok=True)
    old = table.location
    rows = item.get("rows") if isinstance(item.get("rows"), int) else None
    metrics = item.get("metrics") if isinstance(item.get("metrics"), dict) else {}
    recorded = partial(
        versions.record,
        table,
        location=str(new),
        operation=versions.operation_of(item),
        user_id=job.user_id,
        job_id=job.pk,
        rows=rows,
        metrics=metrics,
    )
    if old == str(new):  # CTAS: the table was made pointing here
        if not TableVersion.objects.filter(table=table, location=str(new)).exists():
            recorded()
        return
    if old:
        versions.ensure_initial(table)
    if item["mode"] == "insert" and old:
        link_tree(Path(old), new)
    table.location = str(new)
    table.save(update_fields=["location", "updated_at"])
    recorded()


# --- clean-up --------------------------------------------------------------------------------


def clean_up(job: JobRef) -> bool:
    """Delete everything this job staged; True if something was deleted. Idempotent; never
    touches committed data (a FINISHED job's, a directory a table points at) or other jobs'
    staging directories."""
    job_id = job_id_of(job)
    row = Job.objects.filter(pk=job_id).values("status", "staging").first()
    if row is None or row["status"] == jobstate.FINISHED:
        return False
    deleted = False
    for item in (row["staging"] or {}).values():
        try:
            if item.get("managed"):
                deleted |= _clean_managed(str(item["location"]))
            else:
                deleted |= external_commit.clean_external(item, job_id)
        except CoreError as exc:  # e.g. a path no longer under a storage root: leave it
            log.warning("job %s: not cleaning %s: %s", job_id, item.get("location"), exc)
    return deleted


def _clean_managed(location: str) -> bool:
    path = Path(location)
    if not is_strictly_under(path, warehouse()):
        log.warning("not deleting %s: it is not under the warehouse", location)
        return False
    if versions.in_use(location):
        return False  # a table's data (committed, a kept version, a stage table not dropped yet)
    if not os.path.lexists(path):
        return False
    remove(path)
    return True
