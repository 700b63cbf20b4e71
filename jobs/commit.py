"""How write jobs (CTAS, INSERT, statement sets) are committed, and cleaned up when they
are not; where they staged their data is ``jobs.staging``.

- Managed tables: the table row's ``location`` is its current data directory. Commit points
  the row at the job's new warehouse directory in the caller's transaction (INSERT INTO
  first hard-links the table's current files into it) and deletes the old directory after
  commit. One pointer swap per table, so every commit is one step, for all targets of a
  statement set alike.
- External tables: commit moves the staged files into ``<path>`` (OVERWRITE first deletes
  the old data: data files and ``k=v`` partition directories, nothing else; not atomic) and
  removes the staging directory. Clean-up deletes only that directory.

Before anything is staged (CREATED) and again at the commit, a target must be one the job's
user may write and whose files are its own: its path equals, holds or lies inside no other
table's (``catalog.storage.check_table_apart``). The commit lists only what it moves: the
worker looked for symbolic links in the staging before the commit's transaction
(``catalog.storage.check_tree``), and the commit refuses to move files through a link.

Every delete stays under the warehouse (managed) or under the table's own path, inside a
storage root (external); a directory a table row points at is never deleted here.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import time
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection, transaction

from catalog import services as catalog_services
from catalog import storage
from catalog.models import Table
from core import jobstate, locations
from core.errors import CoreError, PermissionDenied
from core.identifiers import quote_path
from core.planner.errors import ForbiddenSql
from jobs.models import Job
from jobs.write_staging import (
    STAGING_PREFIX,
    JobRef,
    hidden_name,
    job_id_of,
    path_holds_data,
    table_options,
    table_row,
)

log = logging.getLogger(__name__)

# --- commit ----------------------------------------------------------------------------------


def commit(job: JobRef) -> list[dict[str, Any]]:
    """Make everything the job staged the tables' data; run it inside the transaction that
    moves the job to FINISHED (the hook does). Raises (and so aborts that transaction) when a
    target is gone. Returns one ``{"table", "rows"?}`` per target, for ``data_committed``.

    Tables are locked in key order (two commits onto one table run one after the other, each
    keeping the other's files); managed tables swap first, external files move last.
    """
    if not connection.in_atomic_block:
        raise RuntimeError("writes.commit must run inside the job's FINISHED transaction.")
    job_id = job_id_of(job)
    staging: dict[str, Any] = Job.objects.values_list("staging", flat=True).get(pk=job_id) or {}
    entries = [dict(staging[key]) for key in sorted(staging)]
    tables = [table_row(item["identifier"], lock=True) for item in entries]
    _check_rights(job_id, entries, tables)  # every target, before anything changes
    for item, table in zip(entries, tables, strict=True):
        if item["managed"]:
            _commit_managed(table, item)
    external = [
        (_external_paths(table, item, job_id), item, _reads_subdirectories(table))
        for item, table in zip(entries, tables, strict=True)
        if not item["managed"]
    ]  # every check before the first file moves
    for (path, staged), item, every_directory in external:
        _move_external(path, staged, item, every_directory=every_directory)
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
) -> None:
    """The job's user must still be allowed to write every table it inserts into or
    overwrites (the planner checked it too, but a plan need not come from the planner, and
    rights can change while a job runs). One refusal refuses the whole job: nothing is
    committed. A CTAS writes only the table it created itself (``_check_own``)."""
    job = Job.objects.select_related("user").get(pk=job_id)
    for item, table in zip(entries, tables, strict=True):
        if item["mode"] == "ctas":
            _check_own(job, item, table)
        else:
            catalog_services.ensure_can_write_table(job.user, table)


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


def _commit_managed(table: Table, item: Mapping[str, Any]) -> None:
    new = Path(item["location"])
    _require_under(new, _warehouse())
    new.mkdir(parents=True, exist_ok=True)
    old = table.location
    if old == str(new):
        return  # CTAS: the table was made pointing here
    if item["mode"] == "insert" and old:
        _link_tree(Path(old), new)
    table.location = str(new)
    table.save(update_fields=["location", "updated_at"])
    if old:
        transaction.on_commit(partial(_delete_old_location, old))


def _delete_old_location(location: str) -> None:
    try:
        storage.delete_location(location)
    except Exception:  # the data is committed; an old directory left behind is only litter
        log.exception("could not delete the old table directory %s", location)


def _external_paths(table: Table, item: Mapping[str, Any], job_id: str) -> tuple[Path, Path]:
    """The table's path and this job's staging directory in it, checked for the commit:
    the path (its own links resolved now, strictly below a root, apart from every other
    table's) and each directory the job's files will be moved into (no link among them)."""
    path = Path(table_options(table)["path"])
    staged = _external_staging(path, job_id)
    if Path(item["location"]) != staged:
        raise RuntimeError(f"Refusing to commit {item['location']}: not this job's staging.")
    if item["mode"] == "ctas" and path_holds_data(path):
        raise CoreError(
            f"The path '{path}' holds files now; CREATE TABLE … AS SELECT writes only into an "
            "empty or new directory. Nothing was committed.",
            details={"field": "options.path"},
        )
    _check_destinations(path, staged)
    return path, staged


def _check_destinations(path: Path, staged: Path) -> None:
    """Refuse to move the staging's files into ``path`` through a symbolic link: every
    directory below ``path`` that a file goes into must be a plain directory (or not exist
    yet). One ``lstat`` per directory the job wrote, not a walk of the table."""
    if not staged.is_dir():
        return
    directories = {relative.parent for relative in _data_files(staged)} - {Path(".")}
    checked: set[Path] = set()
    for relative in sorted(directories):
        current = path
        for part in relative.parts:
            current = current / part
            if current in checked:
                continue
            if current.is_symlink():
                raise ForbiddenSql(
                    f"The table's directory {current} is a symbolic link; the commit does not "
                    "move files through links. Nothing was committed.",
                    details={"path": str(current)},
                )
            checked.add(current)


def _reads_subdirectories(table: Table) -> bool:
    """Whether Spark reads the files of every subdirectory of the table's path as its rows
    (the option ``recursiveFileLookup``), not only those of ``k=v`` partitions."""
    return any(
        key.lower() == "recursivefilelookup" and str(value).strip().lower() == "true"
        for key, value in table.options.items()
    )


def _remove_data(directory: Path, *, every_directory: bool) -> None:
    """Delete what Spark reads as table data in ``directory``: its data files (with their
    ``.<name>.crc`` checksums) and its ``k=v`` partition directories — every directory with
    ``every_directory`` (``recursiveFileLookup``) — recursively. Hidden files and
    directories stay (another job's staging, ``_SUCCESS``), and so do plain directories of
    a table Spark reads by partitions: Spark 4 reads no file in them, so they are not this
    table's data."""
    for child in list(directory.iterdir()):
        if hidden_name(child.name):
            continue
        if child.is_symlink() or not child.is_dir():
            _remove(child)  # a link itself, never what it points at
            checksum = child.with_name(f".{child.name}.crc")
            if checksum.is_file() and not checksum.is_symlink():
                checksum.unlink(missing_ok=True)
        elif every_directory or "=" in child.name:
            _remove_data(child, every_directory=every_directory)
            with contextlib.suppress(OSError):  # kept when something else is left inside
                child.rmdir()


def _move_external(
    path: Path, staged: Path, item: Mapping[str, Any], *, every_directory: bool
) -> None:
    """OVERWRITE: the old data goes first (not atomic); then this job's files move in."""
    if item["mode"] == "overwrite" and path.is_dir():
        _remove_data(path, every_directory=every_directory)
    if staged.is_dir():
        _move_tree(staged, path)
        _remove(staged)


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
                deleted |= _clean_external(item, job_id)
        except CoreError as exc:  # e.g. a path no longer under a storage root: leave it
            log.warning("job %s: not cleaning %s: %s", job_id, item.get("location"), exc)
    return deleted


def _clean_managed(location: str) -> bool:
    path = Path(location)
    if not _is_strictly_under(path, _warehouse()):
        log.warning("not deleting %s: it is not under the warehouse", location)
        return False
    if Table.objects.filter(location=location).exists():
        return False  # a table's data now (committed, or a stage table not dropped yet)
    if not os.path.lexists(path):
        return False
    _remove(path)
    return True


def _clean_external(item: Mapping[str, Any], job_id: str) -> bool:
    # The path itself is checked (text, its own links): only its staging child is deleted.
    path = Path(storage.normalize_external_path(str(item["final"]), tree=False))
    staged = _external_staging(path, job_id)
    deleted = False
    if os.path.lexists(staged):
        _remove(staged)
        deleted = True
    if item.get("mode") == "ctas" and not item.get("path_existed") and path.is_dir():
        try:
            path.rmdir()  # the directory the CTAS made, only while it is empty
            deleted = True
        except OSError:
            pass
    return deleted


# --- files -----------------------------------------------------------------------------------


def _warehouse() -> Path:
    return Path(settings.WAREHOUSE_DIR)


def _external_staging(path: Path, job_id: str) -> Path:
    return path / f"{STAGING_PREFIX}{job_id}"


def _is_strictly_under(path: Path, root: Path) -> bool:
    real, real_root = path.resolve(), root.resolve()
    return real != real_root and real_root in real.parents


def _require_under(path: Path, root: Path) -> None:
    if not _is_strictly_under(path, root):
        raise RuntimeError(f"Refusing to touch {path}: it is not under {root}.")


def _remove(path: Path, attempts: int = 5) -> None:
    """Delete a file or a tree. A cancelled Spark write may still be adding or renaming
    files inside it (its `_temporary` dirs come and go): files that vanish under us are
    fine, and files that appear meanwhile are caught by another pass."""

    def vanished_ok(function: object, name: str, exc_info: Any) -> None:
        error = exc_info[1]
        if not isinstance(error, FileNotFoundError):
            raise error

    for attempt in range(attempts):
        if path.is_symlink() or not path.is_dir():
            path.unlink(missing_ok=True)
            return
        try:
            shutil.rmtree(path, onerror=vanished_ok)
            return
        except OSError:  # e.g. "directory not empty": something was written meanwhile
            if attempt == attempts - 1:
                raise
            time.sleep(0.2)


def _data_files(root: Path) -> list[Path]:
    """The data files under ``root`` (partition directories included), relative to it."""
    found: list[Path] = []
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = [name for name in subdirs if not hidden_name(name)]
        base = Path(directory)
        found.extend((base / name).relative_to(root) for name in files if not hidden_name(name))
    return sorted(found)


def _free_name(target: Path) -> Path:
    """``target``, or ``target`` with a counter when that name is taken (never overwrite)."""
    candidate, counter = target, 1
    while os.path.lexists(candidate):
        candidate = target.with_name(f"{counter}-{target.name}")
        counter += 1
    return candidate


def _link_tree(source: Path, target: Path) -> None:
    """Hard-link the data files of ``source`` into ``target`` (copy across devices)."""
    if not source.is_dir():
        return
    for relative in _data_files(source):
        destination = _free_name(target / relative)
        destination.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(source / relative, destination)
        except OSError:  # another file system, or links not allowed: copy
            shutil.copy2(source / relative, destination)


def _move_tree(source: Path, target: Path) -> None:
    """Move the data files of ``source`` into ``target`` (renames: one file system)."""
    for relative in _data_files(source):
        destination = _free_name(target / relative)
        destination.parent.mkdir(parents=True, exist_ok=True)
        os.replace(source / relative, destination)
