"""Where table data lives: managed tables in the warehouse, external ones under storage roots.

A managed table owns one warehouse directory, created with the table and deleted with it.
An external table's ``path`` must read the same to Hadoop as to us (``core.locations``:
no globs, escapes, schemes, ``..``) and lie under one of ``TESSERA_STORAGE_ROOTS`` with its
symbolic links resolved — the path's own and every link inside its directory tree. Its
files are never touched by Tessera. The check runs at creation and again at every use
(``resolved_external_path``, which the worker passes to Spark).
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path
from urllib.parse import quote

from django.conf import settings

from core import locations


def warehouse_location(catalog: str, database: str, table: str) -> Path:
    """A new, unique directory for a managed table (a suffix keeps re-created names apart)."""

    def part(name: str) -> str:
        return quote(name.lower(), safe="")

    suffix = uuid.uuid4().hex[:8]
    return Path(settings.WAREHOUSE_DIR) / part(catalog) / part(database) / f"{part(table)}-{suffix}"


def create_location(location: str) -> None:
    Path(location).mkdir(parents=True, exist_ok=True)


def delete_location(location: str) -> None:
    """Delete a managed table's directory; refuse anything outside the warehouse."""
    path = Path(location).resolve()
    warehouse = Path(settings.WAREHOUSE_DIR).resolve()
    if path == warehouse or warehouse not in path.parents:
        raise RuntimeError(f"Refusing to delete {path}: it is not a table directory.")
    shutil.rmtree(path, ignore_errors=True)


def storage_roots() -> list[str]:
    """The configured storage roots as written (normalised, absolute)."""
    return [locations.normal_root(str(root)) for root in settings.TESSERA_STORAGE_ROOTS]


def _real(path: str) -> str:
    # Follows every symbolic link of the parts that exist now; the rest is kept as written.
    return os.path.realpath(path)


def _under_any(path: str, roots: list[str]) -> bool:
    return any(locations.is_under(path, root) for root in roots)


def escaping_link(top: str, real_roots: list[str]) -> str | None:
    """The first symbolic link inside the directory tree ``top`` whose target lies outside
    ``real_roots`` (Hadoop's local file system follows links when it lists and reads), or
    None. Directories reached through links inside the roots are searched too, once."""
    pending = [top]
    seen: set[str] = set()
    while pending:
        directory = pending.pop()
        if directory in seen:
            continue
        seen.add(directory)
        try:
            entries = list(os.scandir(directory))
        except OSError:  # not a directory, gone, unreadable: Spark reads nothing there either
            continue
        for entry in entries:
            if entry.is_symlink():
                target = _real(entry.path)
                if not _under_any(target, real_roots):
                    return entry.path
                if os.path.isdir(target):
                    pending.append(target)
            elif entry.is_dir(follow_symlinks=False):
                pending.append(entry.path)
    return None


def check_resolved(path: str, roots: list[str], raw: str, field: str) -> str:
    """``path`` (already checked as text) with its symbolic links resolved now: it must
    stay under a root, read the same to Hadoop, and hold no link leading out; returns the
    resolved path (what to hand to Spark)."""
    real_roots = [_real(root) for root in roots]
    real = _real(path)
    if not _under_any(real, real_roots):
        raise locations.outside_roots(raw, roots, field)
    # The target of a link must itself be a path Hadoop reads as written.
    locations.local_path(real, field=field)
    link = escaping_link(real, real_roots)
    if link is not None:
        raise locations.LocationRefused(
            f"The path '{raw}' holds a symbolic link ({link}) that leads outside the storage "
            "roots; Spark would follow it.",
            details={"field": field, "path": raw},
        )
    return real


def normalize_external_path(raw: str, field: str = "options.path") -> str:
    """Validate an external table's ``path`` option and return its normalised form (as
    written, links not replaced: what the catalog stores)."""
    roots = storage_roots()
    path = locations.check_location(raw, roots, field=field)
    check_resolved(path, roots, raw, field)
    return path


def resolved_external_path(raw: str, field: str = "options.path") -> str:
    """Check an external table's path now, at use, and return it with its links resolved,
    so that what Spark opens is the directory that was checked."""
    roots = storage_roots()
    path = locations.check_location(raw, roots, field=field)
    return check_resolved(path, roots, raw, field)


def resolved_managed_location(location: str) -> str:
    """A managed table's (or a job's staging) directory, checked to lie in the warehouse
    with its links resolved; returns the resolved directory."""
    warehouse = locations.normal_root(str(settings.WAREHOUSE_DIR))
    field = "location"
    # The warehouse's directory names percent-encode table names; Hadoop keeps '%' as is.
    path = locations.local_path(location, field=field, allow_percent=True)
    if not locations.is_under(path, warehouse) or path == warehouse:
        raise locations.LocationRefused(
            f"The location '{location}' is not a table directory in the warehouse.",
            details={"field": field, "path": location},
        )
    real_warehouse = _real(warehouse)
    real = _real(path)
    if not locations.is_under(real, real_warehouse) or real == real_warehouse:
        raise locations.LocationRefused(
            f"The location '{location}' leads outside the warehouse.",
            details={"field": field, "path": location},
        )
    locations.local_path(real, field=field, allow_percent=True)
    link = escaping_link(real, [real_warehouse])
    if link is not None:
        raise locations.LocationRefused(
            f"The location '{location}' holds a symbolic link ({link}) that leads outside "
            "the warehouse.",
            details={"field": field, "path": location},
        )
    return real
