"""The file operations of commits and clean-ups (``tabledata.commit``,
``tabledata.external_commit``): every path checked to lie under its root, deletes that
tolerate a cancelled write still adding files, and hard links for INSERT's copy-on-write."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

from django.conf import settings

from tabledata import manifest
from tabledata.staging import STAGING_PREFIX, hidden_name


def warehouse() -> Path:
    return Path(settings.WAREHOUSE_DIR)


def external_staging(path: Path, job_id: str) -> Path:
    return path / f"{STAGING_PREFIX}{job_id}"


def is_strictly_under(path: Path, root: Path) -> bool:
    real, real_root = path.resolve(), root.resolve()
    return real != real_root and real_root in real.parents


def require_under(path: Path, root: Path) -> None:
    if not is_strictly_under(path, root):
        raise RuntimeError(f"Refusing to touch {path}: it is not under {root}.")


def remove(path: Path, attempts: int = 5) -> None:
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


def data_files(root: Path) -> list[Path]:
    """The data files under ``root`` (partition directories included), relative to it."""
    found: list[Path] = []
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = [name for name in subdirs if not hidden_name(name)]
        base = Path(directory)
        found.extend((base / name).relative_to(root) for name in files if not hidden_name(name))
    return sorted(found)


def link_tree(source: Path, target: Path) -> None:
    """Hard-link the data files of ``source`` into ``target`` (copy across devices)."""
    if source.is_dir():
        manifest.link_files(source, target, data_files(source))
