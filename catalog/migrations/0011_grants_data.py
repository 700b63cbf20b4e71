"""Existing data under grants (issue 18): every table, view and function is owned by its
creator; the team ``everyone`` exists; the ``demo`` catalog stays readable by all
(``USE``, ``SELECT``, ``EXECUTE`` to ``TEAM everyone``). Other catalogs become private to their
owners: ``manage.py share_catalogs`` gives operators today's openness back (docs/deploy.md)."""

from __future__ import annotations

from typing import Any

from django.db import migrations
from django.db.models import F

EVERYONE = "everyone"
DEMO_PRIVILEGES = ("USE", "SELECT", "EXECUTE")


def forward(apps: Any, schema_editor: Any) -> None:
    table = apps.get_model("catalog", "Table")
    function = apps.get_model("catalog", "Function")
    table.objects.filter(owner__isnull=True).update(owner=F("created_by"))
    function.objects.filter(owner__isnull=True).update(owner=F("created_by"))
    group, _ = apps.get_model("auth", "Group").objects.get_or_create(name=EVERYONE)
    demo = apps.get_model("catalog", "Catalog").objects.filter(name_key="demo").first()
    if demo is None:
        return
    grant = apps.get_model("catalog", "Grant")
    for privilege in DEMO_PRIVILEGES:
        grant.objects.get_or_create(
            securable_key=f"catalog:{demo.pk}",
            principal_key=f"team:{group.pk}",
            privilege=privilege,
            defaults={"securable_kind": "catalog", "catalog": demo, "team": group},
        )


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0010_grants"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunPython(forward, migrations.RunPython.noop)]
