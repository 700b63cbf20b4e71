"""Tables' data paths in indexed columns: no two tables' paths may overlap.

``data_path`` is an external table's path as paths are compared (``core.locations.comparable``)
and ``data_real_path`` the same with its symbolic links resolved when the row was saved ("" for
managed tables and views). ``catalog.storage.find_overlap`` looks up a path's ancestors (an
equality ``IN``) and descendants (a prefix): on PostgreSQL ``db_index`` also makes Django
create a ``varchar_pattern_ops`` index, which serves ``LIKE 'prefix%'``; SQLite's BINARY
b-tree serves the same prefix as a range. Existing rows are filled in here (paths resolved
now, on the machine that migrates).
"""

from __future__ import annotations

import os
from typing import Any

from django.db import migrations, models

from core import locations


def _paths(kind: str, options: dict[str, Any]) -> tuple[str, str]:
    # A copy of catalog.models.data_paths as of this migration (models change, this must not).
    if kind != "table":
        return "", ""
    raw = next((v for k, v in options.items() if str(k).lower() == "path"), None)
    path = locations.comparable(raw) if isinstance(raw, str) else ""
    if not path:
        return "", ""
    real = os.path.realpath(path)

    def fits(text: str) -> str:
        return text if len(text.encode("utf-8")) <= 1024 else ""

    return fits(path), fits(real)


def fill(apps: Any, schema_editor: Any) -> None:
    table = apps.get_model("catalog", "Table")
    for row in table.objects.filter(kind="table").only("pk", "kind", "options").iterator():
        path, real = _paths(row.kind, dict(row.options or {}))
        if path:
            table.objects.filter(pk=row.pk).update(data_path=path, data_real_path=real)


class Migration(migrations.Migration):
    dependencies = [("catalog", "0006_completion_prefix_indexes")]

    operations = [
        migrations.AddField(
            model_name="table",
            name="data_path",
            field=models.CharField(blank=True, db_index=True, default="", max_length=1024),
        ),
        migrations.AddField(
            model_name="table",
            name="data_real_path",
            field=models.CharField(blank=True, db_index=True, default="", max_length=1024),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
