"""Indexes for name completion (jobs/completion.py): prefix search in name order.

Completion asks ``name_key COLLATE "C" LIKE 'pre%' ORDER BY name_key COLLATE "C" LIMIT n``
within one parent (a database's tables or functions, a catalog's databases, the catalogs).
A b-tree on ``name_key COLLATE "C"`` answers both the prefix (as a range) and the order, so a
page of completions reads ``n`` index entries even in a database of 100,000 tables; the
existing indexes use the database's collation, where LIKE cannot use a b-tree. PostgreSQL
only, like 0002 and 0003: SQLite, the embedded default, holds catalogs small enough to scan.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations

INDEXES = {
    "catalog_table_prefix_idx": 'catalog_table (database_id, name_key COLLATE "C")',
    "catalog_function_prefix_idx": 'catalog_function (database_id, name_key COLLATE "C")',
    "catalog_database_prefix_idx": 'catalog_database (catalog_id, name_key COLLATE "C")',
    "catalog_catalog_prefix_idx": 'catalog_catalog (name_key COLLATE "C")',
}


def forwards(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    for name, target in INDEXES.items():
        schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {target}")


def backwards(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    for name in INDEXES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [("catalog", "0005_column_names")]
    operations = [migrations.RunPython(forwards, backwards)]
