"""Where table data lives: managed tables in the warehouse, external ones under storage roots.

A managed table owns one warehouse directory, created with the table and deleted with it.
An external table's ``path`` must lie under one of ``TESSERA_STORAGE_ROOTS`` after
normalisation: no ``..`` segments and no symbolic link that leads outside a root. Its files
are never touched by Tessera.
"""

from __future__ import annotations

import posixpath
import shutil
import uuid
from pathlib import Path
from urllib.parse import quote

from django.conf import settings

from core.errors import CoreError


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


def _is_under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def normalize_external_path(raw: str) -> str:
    """Validate an external table's ``path`` option and return its normalised form."""
    roots = [str(r) for r in settings.TESSERA_STORAGE_ROOTS]
    where = "Allowed storage roots: " + ", ".join(roots) + "."
    if not raw.strip():
        raise CoreError("The option 'path' must not be empty.", details={"field": "options.path"})
    text = raw.strip()
    if text.startswith("file://"):
        text = text[len("file://") :]
    if "://" in text:
        raise CoreError(
            f"The path '{raw}' is not a local path; external tables must lie under a storage "
            f"root. {where}",
            details={"field": "options.path"},
        )
    if not text.startswith("/"):
        raise CoreError(
            f"The path '{raw}' must be absolute. {where}", details={"field": "options.path"}
        )
    if ".." in text.split("/"):
        raise CoreError(
            f"The path '{raw}' must not contain '..' segments.", details={"field": "options.path"}
        )
    normal = posixpath.normpath(text)
    # realpath follows symbolic links of the parts that exist: a link out of a root is refused.
    real = str(Path(normal).resolve())
    for root in roots:
        real_root = str(Path(root).resolve())
        if _is_under(real, real_root):
            return normal
    raise CoreError(
        f"The path '{raw}' lies outside the storage roots this server may use. {where}",
        details={"field": "options.path"},
    )
