"""API tokens of our own (accounts.ApiToken), and DRF's tokens carried over.

Each key of ``rest_framework.authtoken`` (one per user, stored in clear) becomes an
``ApiToken`` named "carried over" with the same creation time and no expiry of its own
(``TESSERA_TOKEN_MAX_AGE_SECONDS`` still applies to it), stored as its SHA-256: scripts
keep working. The clear keys are then deleted from DRF's table, which stays empty (the app
is no longer installed; a fresh database never has it)."""

from __future__ import annotations

import hashlib
from typing import Any

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

DRF_TABLE = "authtoken_token"


def carry_over_drf_tokens(apps: Any, schema_editor: Any) -> None:
    connection = schema_editor.connection
    if DRF_TABLE not in connection.introspection.table_names():
        return
    api_token = apps.get_model("accounts", "ApiToken")
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT key, user_id, created FROM {DRF_TABLE}")
        rows = cursor.fetchall()
    api_token.objects.bulk_create(
        [
            api_token(
                user_id=user_id,
                name="carried over",
                digest=hashlib.sha256(key.encode()).hexdigest(),
                created=created,
            )
            for key, user_id, created in rows
        ]
    )
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {DRF_TABLE}")


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_throttle_cache_table"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="ApiToken",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(blank=True, default="", max_length=100)),
                ("digest", models.CharField(max_length=64, unique=True)),
                ("created", models.DateTimeField(default=django.utils.timezone.now)),
                ("last_used", models.DateTimeField(blank=True, null=True)),
                ("expires", models.DateTimeField(blank=True, null=True)),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="api_tokens",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["-id"],
                "indexes": [models.Index(fields=["user", "-id"], name="accounts_token_user_idx")],
            },
        ),
        # Not reversible: the clear keys are gone (reversing keeps DRF's table empty).
        migrations.RunPython(carry_over_drf_tokens, migrations.RunPython.noop),
    ]
