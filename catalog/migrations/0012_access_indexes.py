"""Indexes that keep lists, search and completion index-only when they filter by what the
user may see (issue 18, ADR 0011 §2.2; docs/benchmarks.md "Catalog at scale with grants").

A restricted user's search tests every candidate row against their grants: its table's
``kind``, ``database_id`` and ``owner_id``, or its own id. Without these indexes that is a
heap fetch per candidate — of a wide table row (a few KB of schema JSON), and for column
search of every column of a common name (thousands) and then its table:

- ``catalog_column_vis_idx (name_key, id) INCLUDE (table_id)``: a column name's columns
  and their tables, from the index alone (the page and ``_COLUMN_NAMES_SQL``'s ``EXISTS``);
- ``catalog_table_vis_idx (id) INCLUDE (kind, database_id, owner_id)``: whether a table is
  visible, from the index alone (joined from a column);
- ``catalog_table_kind_search_idx`` (0003) recreated as ``(kind, name_key, id) INCLUDE
  (database_id, owner_id)``: table and view search stays index-only with the filter.

PostgreSQL only, like 0002, 0003 and 0006: SQLite, the embedded default, holds catalogs
small enough to scan.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations

INDEXES = {
    "catalog_column_vis_idx": "catalog_column (name_key, id) INCLUDE (table_id)",
    "catalog_table_vis_idx": "catalog_table (id) INCLUDE (kind, database_id, owner_id)",
}
SEARCH = "catalog_table_kind_search_idx"


def forwards(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    for name, target in INDEXES.items():
        schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {target}")
    schema_editor.execute(f"DROP INDEX IF EXISTS {SEARCH}")
    schema_editor.execute(
        f"CREATE INDEX {SEARCH} ON catalog_table (kind, name_key, id) "
        "INCLUDE (database_id, owner_id)"
    )


def backwards(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    for name in INDEXES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {name}")
    schema_editor.execute(f"DROP INDEX IF EXISTS {SEARCH}")
    schema_editor.execute(f"CREATE INDEX {SEARCH} ON catalog_table (kind, name_key, id)")


class Migration(migrations.Migration):
    dependencies = [("catalog", "0011_grants_data")]
    operations = [migrations.RunPython(forwards, backwards)]
