"""Table statistics: what ANALYZE TABLE … COMPUTE STATISTICS computed, stored on the table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catalog.models import Table
from catalog.services._common import User, _object_path
from catalog.services.tables import ensure_can_write_table
from core import storable
from core.errors import CoreError


def table_store_statistics(
    *, user: User, table: Table, mode: str, figures: Mapping[str, Any]
) -> dict[str, Any]:
    """Store what ``ANALYZE TABLE`` computed on ``table`` (``column_statistics``), as its
    user may: ``MODIFY`` on the table.

    ``mode`` ``noscan`` refreshes ``files``, ``size_bytes`` and ``size_computed_at`` and
    keeps the scan's figures; ``table`` and ``columns`` replace everything (a scan's
    ``row_count`` and ``columns`` belong to its ``computed_at``). Only this field is
    written: the schema, the data and ``updated_at`` (which dates the table's commits)
    stay as they are."""
    path = _object_path(table.database, table.name)
    if table.kind != Table.KIND_TABLE or table.status != Table.STATUS_ACTIVE:
        raise CoreError(f"{path} is not an active table: its statistics cannot be stored.")
    ensure_can_write_table(user, table)
    size = {
        "files": int(figures["files"]),
        "size_bytes": int(figures["size_bytes"]),
        "size_computed_at": str(figures["size_computed_at"]),
    }
    if mode == "noscan":
        previous = table.column_statistics or {}
        stored = {
            "computed_at": previous.get("computed_at"),
            "row_count": previous.get("row_count"),
            "columns": list(previous.get("columns") or []),
            **size,
        }
    elif mode in ("table", "columns"):
        stored = {
            "computed_at": str(figures["computed_at"]),
            "row_count": int(figures["row_count"]),
            # A string column's min and max are its data: a NUL in them cannot be stored.
            "columns": storable.scrubbed([dict(c) for c in figures.get("columns") or []]),
            **size,
        }
    else:
        raise CoreError(f"Unknown ANALYZE TABLE mode '{mode}'.")
    Table.objects.filter(pk=table.pk).update(column_statistics=stored)
    table.column_statistics = stored
    return stored
