"""Commits onto external tables (docs/writes.md, "External tables"), and their clean-up:
``tabledata.commit`` calls them for its external targets, under the tables' locks, inside the
FINISHED transaction. See ``tabledata.commit``'s docstring for the whole protocol."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from django.db import transaction

from catalog import storage
from catalog.models import Table
from core import jobstate
from core.errors import CoreError
from core.planner.errors import ForbiddenSql
from jobs.models import Job
from tabledata import manifest
from tabledata.commit_files import external_staging, remove
from tabledata.staging import hidden_name, path_holds_data, table_options, table_row

log = logging.getLogger(__name__)

# In a job's staging while its commit renames data into the table's path.
COMMITTING_MARKER = "_tessera_committing"


def _external_paths(table: Table, item: Mapping[str, Any], job_id: str) -> tuple[Path, Path]:
    """The table's path and this job's staging directory in it, checked for the commit:
    the path (its own links resolved now, strictly below a root, apart from every other
    table's)."""
    path = Path(table_options(table)["path"])
    staged = external_staging(path, job_id)
    if Path(item["location"]) != staged:
        raise RuntimeError(f"Refusing to commit {item['location']}: not this job's staging.")
    if item["mode"] == "ctas" and path_holds_data(path):
        raise CoreError(
            f"The path '{path}' holds files now; CREATE TABLE … AS SELECT writes only into an "
            "empty or new directory. Nothing was committed.",
            details={"field": "options.path"},
        )
    return path, staged


@dataclass
class _Move:
    """One rename of the commit: a staged file or partition directory into the table."""

    source: Path
    destination: Path
    entry: str  # the destination relative to the table's path (a manifest entry)


@dataclass
class ExternalCommit:
    """One external target of a commit: where its data goes and the manifests around it."""

    path: Path
    staged: Path
    overwrite: bool
    every_directory: bool
    moves: list[_Move]
    current: tuple[str, ...] = ()  # the table's entries before this commit
    initial: bool = False  # no manifest before this commit
    removed: tuple[str, ...] = ()


def prepare_external(table: Table, item: Mapping[str, Any], job_id: str) -> ExternalCommit:
    path, staged = _external_paths(table, item, job_id)
    moves = _planned_moves(path, staged, job_id)
    _check_destinations(path, moves)
    return ExternalCommit(
        path, staged, item["mode"] == "overwrite", _reads_subdirectories(table), moves
    )


def _planned_moves(path: Path, staged: Path, job_id: str) -> list[_Move]:
    """What the commit renames: each data file Spark wrote at the top of the staging (an
    unpartitioned table) becomes ``<path>/tessera-<job>-<name>``; each partition directory
    holding data files (``k=v/…``) becomes ``<path>/k=v/…/tessera-<job>`` — one rename per
    partition. Deepest first; every entry checked as the manifest will be read."""
    if not staged.is_dir() or staged.is_symlink():
        return []
    moves: list[_Move] = []
    for directory, subdirs, files in os.walk(staged):
        subdirs[:] = [name for name in subdirs if not hidden_name(name)]
        base = Path(directory)
        data = [name for name in files if not hidden_name(name) and not (base / name).is_symlink()]
        if not data:
            continue
        relative = base.relative_to(staged)
        if relative == Path("."):
            for name in sorted(data):
                destination = manifest.free_name(path / manifest.file_name(job_id, name))
                moves.append(_Move(base / name, destination, destination.name))
        else:
            destination = path / relative / manifest.directory_name(job_id)
            moves.append(_Move(base, destination, str(relative / destination.name)))
    moves.sort(key=lambda move: -len(move.source.parts))
    for move in moves:
        try:
            manifest.check_entry(move.entry, str(path))
        except manifest.ManifestError as exc:
            raise CoreError(
                f"The job wrote '{move.entry}' into {path}, a name Tessera cannot list in the "
                "table's manifest. Nothing was committed.",
                details={"path": str(path), "entry": move.entry},
            ) from exc
    return moves


def _check_destinations(path: Path, moves: Sequence[_Move]) -> None:
    """Refuse to move the staging's files into ``path`` through a symbolic link: every
    directory below ``path`` that something is renamed into must be a plain directory (or
    not exist yet), and no destination may exist. One ``lstat`` per directory."""
    checked: set[Path] = set()
    for move in moves:
        if os.path.lexists(move.destination):
            raise RuntimeError(f"Refusing to commit onto {move.destination}: it exists.")
        current = path
        for part in move.destination.relative_to(path).parent.parts:
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


def _directory_entries(directory: Path, *, every_directory: bool, top: Path) -> list[str]:
    """What Spark reads as table data in a path that has no manifest yet, as manifest
    entries: its data files and, recursively, those of its ``k=v`` partition directories
    (every directory with ``recursiveFileLookup``). Hidden files and directories, and plain
    directories of a table Spark reads by partitions, are not its data (Spark 4 reads no
    file in them). Links are entries themselves, never followed."""
    found: list[str] = []
    if not directory.is_dir() or directory.is_symlink():
        return found
    for child in sorted(directory.iterdir()):
        if hidden_name(child.name):
            continue
        if child.is_symlink() or not child.is_dir():
            found.append(str(child.relative_to(top)))
        elif every_directory or "=" in child.name:
            found.extend(_directory_entries(child, every_directory=every_directory, top=top))
    return found


def _job_committed(other: str, job_id: str) -> bool:
    """Whether the job that wrote a manifest committed. Asked under the table's lock: that
    job's commit held it, so its transaction is over — FINISHED or rolled back. A job row
    that is gone is taken as committed (its data is kept)."""
    if other == job_id:
        return False  # this job's own earlier attempt, rolled back
    status = Job.objects.filter(pk=other).values_list("status", flat=True).first()
    return status is None or status == jobstate.FINISHED


def _settled(path: Path, job_id: str, *, every_directory: bool) -> tuple[tuple[str, ...], bool]:
    """The table's entries before this commit (under its lock): the manifest's, after
    undoing the commit of a job that never finished and deleting what an earlier committed
    OVERWRITE replaced; without a manifest, the directory as Spark reads it. Returns
    ``(entries, initial)``."""
    found = _undo_uncommitted(path, lambda other: not _job_committed(other, job_id))
    if found is None:
        # The path as Spark reads it, written down before anything is renamed into it, so
        # that Tessera's readers do not see the renames of this first commit one by one.
        entries = tuple(_directory_entries(path, every_directory=every_directory, top=path))
        path.mkdir(parents=True, exist_ok=True)
        manifest.write(path, manifest.Manifest(entries))
        return entries, True
    if found.removed:
        _delete_entries(path, [e for e in found.removed if e not in set(found.entries)])
    return found.entries, False


def _undo_uncommitted(path: Path, uncommitted: Any) -> manifest.Manifest | None:
    """The manifest, with the commit it records undone when ``uncommitted(job)``: the
    entries go back to what they were (an initial manifest is deleted) and that job's data
    is deleted. None when (then) there is no manifest."""
    found = manifest.read(path)
    if found is None or not found.job or not uncommitted(found.job):
        return found
    log.warning("undoing the uncommitted commit of job %s in %s", found.job, path)
    undone = None if found.initial else found.undone()
    if undone is None:
        manifest.delete(path)
    else:
        manifest.write(path, undone)
    kept = set(undone.entries) if undone is not None else set()
    _delete_entries(path, [e for e in found.added if e not in kept])
    return undone


def _move_in(target: ExternalCommit, job_id: str) -> None:
    """Rename the job's data into the table (visible to Spark reading the path, not yet to
    Tessera: the manifest does not list it). A marker in the staging tells the clean-up to
    look for moved data if the commit stops here."""
    if not target.moves:
        return
    (target.staged / COMMITTING_MARKER).touch()
    for move in target.moves:
        move.destination.parent.mkdir(parents=True, exist_ok=True)
        if move.source.is_dir():
            os.rename(move.source, move.destination)  # one step per partition
        else:
            os.replace(move.source, move.destination)


def _swap(target: ExternalCommit, job_id: str) -> None:
    """The commit point for Tessera's readers: one rename of the manifest."""
    added = tuple(move.entry for move in target.moves)
    if target.overwrite:
        entries, target.removed = manifest.merged(added), target.current
    else:
        entries, target.removed = manifest.merged(target.current, added), ()
    target.path.mkdir(parents=True, exist_ok=True)
    manifest.write(
        target.path,
        manifest.Manifest(entries, job_id, added, target.removed, initial=target.initial),
    )


def commit_external(targets: Sequence[ExternalCommit], job_id: str) -> None:
    """Settle every target's manifest, move every target's data in, then swap the
    manifests one after the other (the database transaction commits right after)."""
    for target in targets:
        target.current, target.initial = _settled(
            target.path, job_id, every_directory=target.every_directory
        )
    for target in targets:
        _move_in(target, job_id)
    for target in targets:
        _swap(target, job_id)
    for target in targets:
        if os.path.lexists(target.staged):
            remove(target.staged)
        if target.removed:
            transaction.on_commit(partial(_delete_replaced, target.path, target.removed))


def _delete_replaced(path: Path, entries: Sequence[str]) -> None:
    """After an OVERWRITE committed: delete the data it replaced (outside readers of the
    path stop seeing it). A failure is only litter: the next commit deletes it again."""
    try:
        _delete_entries(path, entries)
    except Exception:
        log.exception("could not delete the replaced data of %s", path)


def _entry_path(path: Path, entry: str) -> Path | None:
    """``<path>/<entry>`` when no directory on the way is a symbolic link (never delete
    through a link), else None."""
    current = path
    parts = Path(entry).parts
    for part in parts[:-1]:
        current = current / part
        if current.is_symlink() or not current.is_dir():
            return None
    return current / parts[-1]


def _delete_entries(path: Path, entries: Iterable[str]) -> None:
    """Delete manifest entries of the table at ``path`` (files with their ``.<name>.crc``,
    directories with what is in them, links themselves), then the (non-hidden) directories
    that this left empty."""
    for entry in entries:
        target = _entry_path(path, manifest.check_entry(entry, str(path)))
        if target is None or not os.path.lexists(target):
            continue
        remove(target)
        checksum = target.with_name(f".{target.name}.crc")
        if checksum.is_file() and not checksum.is_symlink():
            checksum.unlink(missing_ok=True)
        parent = target.parent
        while parent != path and not hidden_name(parent.name) and not parent.is_symlink():
            try:
                parent.rmdir()
            except OSError:
                break
            parent = parent.parent


def _own_moved(path: Path, job_id: str) -> list[str]:
    """What a commit of ``job_id`` moved into ``path`` (by name), found by listing the top
    of the path and its ``k=v`` directories (never through a link)."""
    found: list[str] = []
    prefix, directory_name = manifest.file_name(job_id, ""), manifest.directory_name(job_id)
    pending = [path]
    while pending:
        directory = pending.pop()
        try:
            children = list(os.scandir(directory))
        except OSError:
            continue
        for child in children:
            if child.name == directory_name or (
                directory == path and child.name.startswith(prefix)
            ):
                found.append(str(Path(child.path).relative_to(path)))
            elif (
                "=" in child.name
                and not hidden_name(child.name)
                and child.is_dir(follow_symlinks=False)
            ):
                pending.append(Path(child.path))
    return sorted(found)


def clean_external(item: Mapping[str, Any], job_id: str) -> bool:
    """Delete the job's staging and undo whatever of its commit reached the table's path:
    a manifest it wrote (the database transaction did not commit) goes back to what it was,
    and data it renamed into the path is deleted. Under the table's lock, so no other
    commit runs meanwhile. The path itself is checked (text, its own links)."""
    path = Path(storage.normalize_external_path(str(item["final"]), tree=False))
    staged = external_staging(path, job_id)
    deleted = False
    with transaction.atomic():
        with contextlib.suppress(CoreError):  # the table was dropped: nothing commits into it
            table_row(item["identifier"], lock=True)
        moving = os.path.lexists(staged / COMMITTING_MARKER)
        if os.path.lexists(staged):
            remove(staged)
            deleted = True
        if path.is_dir() and not path.is_symlink():
            before = manifest.read(path)
            after = _undo_uncommitted(path, lambda other: other == job_id)
            deleted |= before != after
            if moving:
                kept = set(after.entries) if after is not None else set()
                moved = [entry for entry in _own_moved(path, job_id) if entry not in kept]
                _delete_entries(path, moved)
                deleted |= bool(moved)
    if item.get("mode") == "ctas" and not item.get("path_existed") and path.is_dir():
        with contextlib.suppress(CoreError):
            left = manifest.read(path)
            if left is not None and not left.entries:
                manifest.delete(path)  # the empty manifest the CTAS's commit began with
        try:
            path.rmdir()  # the directory the CTAS made, only while it is empty
            deleted = True
        except OSError:
            pass
    return deleted
