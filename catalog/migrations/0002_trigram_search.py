"""Trigram indexes so that substring search over names (`name_key LIKE '%q%'`) is indexed.

PostgreSQL only (pg_trgm); on SQLite, the embedded default, search scans, which is fine at
the sizes the embedded default is meant for.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations

TABLES = ("catalog_table", "catalog_column", "catalog_function")


def forwards(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    for table in TABLES:
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {table}_name_trgm "
            f"ON {table} USING gin (name_key gin_trgm_ops)"
        )


def backwards(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    for table in TABLES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {table}_name_trgm")


class Migration(migrations.Migration):
    dependencies = [("catalog", "0001_initial")]
    operations = [migrations.RunPython(forwards, backwards)]
