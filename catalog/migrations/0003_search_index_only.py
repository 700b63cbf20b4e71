"""An index that lets table and view search read only an index to pick a page.

Search pages are ``WHERE kind = %s AND name_key LIKE '%q%' ORDER BY name_key, id``. With
``(kind, name_key, id)`` the planner walks the kind's names in order and tests each name in
the index itself (an index-only scan), instead of fetching every skipped table row (a few
KB of schema JSON each) to read its kind. Columns and functions already have their
``(name_key, id)`` index. PostgreSQL only, like 0002: SQLite, the embedded default, holds
catalogs small enough to scan.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations


def forwards(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(
        "CREATE INDEX IF NOT EXISTS catalog_table_kind_search_idx "
        "ON catalog_table (kind, name_key, id)"
    )


def backwards(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("DROP INDEX IF EXISTS catalog_table_kind_search_idx")


class Migration(migrations.Migration):
    dependencies = [("catalog", "0002_trigram_search")]
    operations = [migrations.RunPython(forwards, backwards)]
