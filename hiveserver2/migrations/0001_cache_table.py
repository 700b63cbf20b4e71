"""The database cache table of HiveServer2 over HTTP (settings.CACHES["hiveserver2"])."""

from __future__ import annotations

from typing import Any

from django.core.management import call_command
from django.db import migrations


def create_cache_table(apps: Any, schema_editor: Any) -> None:
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


def drop_cache_table(apps: Any, schema_editor: Any) -> None:
    schema_editor.execute("DROP TABLE IF EXISTS tessera_hs2_cache")


class Migration(migrations.Migration):
    dependencies: list[tuple[str, str]] = [("accounts", "0001_throttle_cache_table")]
    operations = [migrations.RunPython(create_cache_table, drop_cache_table)]
