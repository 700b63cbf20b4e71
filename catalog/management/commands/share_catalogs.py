"""``manage.py share_catalogs [--all | c …] [--privileges USE,SELECT,EXECUTE]``: give team
``everyone`` privileges on catalogs — today's openness back after upgrading to grants
(docs/deploy.md, "Upgrading to grants"). Idempotent; each catalog's new grant is audited
(actor: the system)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from catalog import access, grants
from catalog.models import EVERYONE, Catalog
from core.errors import CoreError
from core.privileges import Kind

DEFAULT_PRIVILEGES = "USE,SELECT,EXECUTE"


class Command(BaseCommand):
    help = (
        "Grant privileges on catalogs to team everyone (default USE, SELECT, EXECUTE): "
        "--all or the catalogs' names."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("catalogs", nargs="*", help="catalog names")
        parser.add_argument("--all", action="store_true", help="every catalog")
        parser.add_argument(
            "--privileges",
            default=DEFAULT_PRIVILEGES,
            help=f"comma-separated privileges (default {DEFAULT_PRIVILEGES}); ALL PRIVILEGES too",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        names: list[str] = options["catalogs"]
        if bool(options["all"]) == bool(names):
            raise CommandError("Name the catalogs to share, or give --all (not both).")
        privileges = [p.strip() for p in str(options["privileges"]).split(",") if p.strip()]
        try:
            grants.parse_privileges(Kind.CATALOG, privileges)
        except CoreError as exc:
            raise CommandError(exc.message) from None
        if options["all"]:
            catalogs = list(Catalog.objects.order_by("name_key"))
        else:
            catalogs = []
            for name in names:
                found = Catalog.objects.filter(name_key=name.lower()).first()
                if found is None:
                    raise CommandError(f"A catalog with name [{name}] does not exist.")
                catalogs.append(found)
        everyone = grants.find_principal("team", EVERYONE)
        for catalog in catalogs:
            new = grants.system_grant(
                securable=access.catalog_securable(catalog),
                privileges=privileges,
                principal=everyone,
            )
            shown = ", ".join(p.value for p in new) if new else "nothing new"
            self.stdout.write(f"{catalog.name}: {shown}")
