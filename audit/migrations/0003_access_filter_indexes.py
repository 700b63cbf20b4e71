"""Indexes for GET /audit's filters: ``actor``, ``principal``, and on PostgreSQL ``object``
(a prefix of ``object_key``, compared in the "C" collation so that a b-tree answers it as a
range, as catalog/0006 does for completion; SQLite scans)."""

from __future__ import annotations

from typing import Any

from django.db import migrations, models

OBJECT_PREFIX_INDEX = "audit_object_prefix_idx"


def forwards(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(
        f"CREATE INDEX IF NOT EXISTS {OBJECT_PREFIX_INDEX} "
        'ON audit_auditevent (object_key COLLATE "C", at DESC, id DESC)'
    )


def backwards(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(f"DROP INDEX IF EXISTS {OBJECT_PREFIX_INDEX}")


class Migration(migrations.Migration):
    dependencies = [("audit", "0002_append_only_triggers")]

    operations = [
        migrations.AddIndex(
            model_name="auditevent",
            index=models.Index(fields=["actor_name", "-at", "-id"], name="audit_actor_name_idx"),
        ),
        migrations.AddIndex(
            model_name="auditevent",
            index=models.Index(
                fields=["principal_type", "principal_name", "-at", "-id"],
                name="audit_principal_idx",
            ),
        ),
        migrations.RunPython(forwards, backwards),
    ]
