"""The manifest of an external table's committed data: ``<path>/_tessera_current``.

An external table's path holds the data Tessera committed next to what other tools put
there. Once Tessera has committed into a path, the manifest says which of its files and
directories are the table's rows for Tessera; the worker reads exactly those
(``engine.registration``), so an INSERT or OVERWRITE becomes visible to Tessera's
readers with one ``rename(2)`` of the manifest (docs/writes.md, "External tables").

The file is JSON, written to a temporary file in the same directory and renamed over the
old one (never edited in place)::

    {"format": 1, "entries": ["tessera-<job>-part-….parquet", "k=1/tessera-<job>", …],
     "job": "<the job whose commit wrote it>", "added": [...], "removed": [...],
     "initial": true|false}

- ``entries``: paths relative to the table's path, files or directories, read as its data
  (with ``basePath`` = the path, so ``k=v`` directories still give partition values).
- ``job``, ``added``, ``removed``: the last commit, so that a commit whose database
  transaction did not go through can be undone (``entries - added + removed``) and an
  OVERWRITE's replaced data deleted once it did. ``initial``: no manifest existed before
  that commit (undoing it deletes the manifest).

Entries are checked when read: relative, no ``.``/``..``/empty segments, no hidden
segment, nothing Hadoop would read differently (globs, ``\\``, ``:``, ``#``); a manifest
that is a symbolic link or not a regular file is refused. Pure file handling: no Django.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import stat
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core import locations

MANIFEST = "_tessera_current"
FORMAT = 1
MAX_BYTES = 64 * 1024 * 1024
# The names a commit gives the data it moves into a table's path (job ids are UUIDs).
DATA_PREFIX = "tessera-"


class ManifestError(locations.LocationRefused):
    """A manifest that cannot be trusted (unreadable, a link, an entry out of bounds): on
    the worker a refusal of the storage boundary, ``FORBIDDEN_SQL``."""


def file_name(job_id: str, name: str) -> str:
    """The name of a staged file moved into an unpartitioned table's path."""
    return f"{DATA_PREFIX}{job_id}-{name}"


def directory_name(job_id: str) -> str:
    """The name of a staged partition directory moved below the table's ``k=v`` directory."""
    return f"{DATA_PREFIX}{job_id}"


def hidden(name: str) -> bool:
    """Spark's rule for names it skips when it lists a directory (``_…`` without ``=``,
    ``.…``, ``…._COPYING_``)."""
    return (
        (name.startswith("_") and "=" not in name)
        or name.startswith(".")
        or name.endswith("._COPYING_")
    )


@dataclass(frozen=True)
class Manifest:
    entries: tuple[str, ...]
    job: str = ""
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    initial: bool = False
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self) -> str:
        return json.dumps(
            {
                "format": FORMAT,
                "entries": list(self.entries),
                "job": self.job,
                "added": list(self.added),
                "removed": list(self.removed),
                "initial": self.initial,
            },
            separators=(",", ":"),
        )

    def undone(self) -> Manifest:
        """The manifest as it was before ``job``'s commit (settled: no job)."""
        added = set(self.added)
        kept = [entry for entry in self.entries if entry not in added]
        return Manifest(tuple(sorted({*kept, *self.removed})))


def check_entry(entry: Any, path: str = "/") -> str:
    """A manifest entry, checked: a relative path below the table's path that Hadoop reads
    exactly as written and Spark does not skip."""
    if not isinstance(entry, str) or not entry or entry.startswith("/"):
        raise ManifestError(f"The manifest of '{path}' lists an entry that is not a relative path.")
    parts = entry.split("/")
    if any(part in ("", ".", "..") or hidden(part) for part in parts):
        raise ManifestError(
            f"The manifest of '{path}' lists '{entry}', which is not a plain path below it.",
            details={"path": path, "entry": entry},
        )
    try:
        locations.local_path("/" + entry, allow_percent=True)
    except locations.LocationRefused:
        raise ManifestError(
            f"The manifest of '{path}' lists '{entry}', which Hadoop would not read as written.",
            details={"path": path, "entry": entry},
        ) from None
    return entry


def _strings(value: Any, path: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ManifestError(f"The manifest of '{path}' is not one Tessera wrote.")
    return tuple(check_entry(item, path) for item in value)


def read(path: str | Path) -> Manifest | None:
    """The manifest of the table at ``path``; None when there is none (Tessera then reads
    the directory as Spark does). The manifest itself is never followed through a link."""
    target = os.path.join(str(path), MANIFEST)
    try:
        descriptor = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ManifestError(
                f"The manifest '{target}' is a symbolic link; Tessera does not follow it.",
                details={"path": str(path)},
            ) from None
        raise ManifestError(
            f"The manifest '{target}' cannot be read: {exc.strerror}.", details={"path": str(path)}
        ) from None
    with os.fdopen(descriptor, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
            raise ManifestError(
                f"The manifest '{target}' is not a file Tessera wrote.", details={"path": str(path)}
            )
        raw = handle.read(MAX_BYTES + 1)
    try:
        data = json.loads(raw)
    except ValueError:
        raise ManifestError(
            f"The manifest '{target}' is not valid JSON.", details={"path": str(path)}
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ManifestError(
            f"The manifest '{target}' has a format this Tessera does not read.",
            details={"path": str(path)},
        )
    job = data.get("job") or ""
    if not isinstance(job, str):
        raise ManifestError(f"The manifest '{target}' is not one Tessera wrote.")
    return Manifest(
        entries=_strings(data.get("entries"), str(path)),
        job=job,
        added=_strings(data.get("added", []), str(path)),
        removed=_strings(data.get("removed", []), str(path)),
        initial=bool(data.get("initial", False)),
    )


def write(path: str | Path, manifest: Manifest) -> None:
    """Replace the manifest in one step: a new file (never through a link), flushed to
    disk, renamed over the old one; the directory is flushed too."""
    directory = str(path)
    temporary = os.path.join(directory, f".{MANIFEST}.{uuid.uuid4().hex}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    descriptor = os.open(temporary, flags, 0o644)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(manifest.to_json())
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, os.path.join(directory, MANIFEST))
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    sync_directory(directory)


def delete(path: str | Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(os.path.join(str(path), MANIFEST))
    sync_directory(str(path))


def sync_directory(directory: str) -> None:
    with contextlib.suppress(OSError):
        descriptor = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def read_paths(path: str, entries: Sequence[str]) -> list[str]:
    """What Spark is given for a table with a manifest: each entry below ``path``."""
    return [f"{path.rstrip('/')}/{entry}" for entry in entries]


def merged(*groups: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted({entry for group in groups for entry in group}))


def free_name(target: Path) -> Path:
    """``target``, or ``target`` with a counter when that name is taken (never overwrite)."""
    candidate, counter = target, 1
    while os.path.lexists(candidate):
        candidate = target.with_name(f"{counter}-{target.name}")
        counter += 1
    return candidate


def link_files(source: Path, target: Path, files: Iterable[Path]) -> None:
    """Hard-link ``files`` (relative to ``source``) into ``target`` under free names; copy
    where a link is not possible (another file system)."""
    for relative in files:
        destination = free_name(target / relative)
        destination.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(source / relative, destination)
        except OSError:  # another file system, or links not allowed: copy
            shutil.copy2(source / relative, destination)
