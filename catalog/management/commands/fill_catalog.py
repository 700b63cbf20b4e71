"""Fill a synthetic catalog, fast, for benchmarks: ``manage.py fill_catalog --catalog bench``.

Rows are written with ``bulk_create`` in batches, one transaction per database, so that
100 databases x 1,000 tables x 20 columns (2,000,000 ``Column`` rows) take minutes on
PostgreSQL. The JSON stored for each table is exactly what ``services.table_create`` and
``services.view_create`` would store: the declared schema is a ``core.schema.Schema``
resolved with ``SchemaResolver`` (once per distinct shape), and the ``Column`` rows are the
resolved columns.

Tables are *external* (``{"connector": "parquet", "path": "<storage root>/<catalog>/..."}``)
rather than managed: a managed table owns a warehouse directory, and creating 100,000 empty
directories would only slow the fill down. No directory is created for the paths.
"""

from __future__ import annotations

import posixpath
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, transaction

from catalog import storage
from catalog.models import Catalog, Column, ColumnName, Database, Function, Table, data_paths
from core.datatypes import parse_data_type
from core.identifiers import validate_name
from core.schema import PhysicalColumn, PrimaryKey, Schema, SchemaResolver

# Column names and the types that go with them; names get a suffix to vary.
COLUMN_WORDS: tuple[tuple[str, str], ...] = (
    ("customer_id", "BIGINT"),
    ("order_id", "BIGINT"),
    ("product_id", "BIGINT"),
    ("account_id", "BIGINT"),
    ("session_id", "STRING"),
    ("user_id", "BIGINT"),
    ("store_id", "INT"),
    ("order_ts", "TIMESTAMP"),
    ("event_ts", "TIMESTAMP"),
    ("created_at", "TIMESTAMP"),
    ("updated_at", "TIMESTAMP"),
    ("shipped_at", "TIMESTAMP_NTZ"),
    ("event_date", "DATE"),
    ("birth_date", "DATE"),
    ("amount", "DECIMAL(12, 2)"),
    ("price", "DECIMAL(10, 2)"),
    ("discount", "DECIMAL(5, 2)"),
    ("tax_amount", "DECIMAL(12, 2)"),
    ("balance", "DECIMAL(18, 4)"),
    ("quantity", "INT"),
    ("line_count", "SMALLINT"),
    ("priority", "TINYINT"),
    ("score", "DOUBLE"),
    ("latitude", "DOUBLE"),
    ("longitude", "DOUBLE"),
    ("ratio", "FLOAT"),
    ("status", "STRING"),
    ("channel", "STRING"),
    ("currency", "CHAR(3)"),
    ("country_code", "CHAR(2)"),
    ("email", "VARCHAR(255)"),
    ("phone_number", "VARCHAR(32)"),
    ("first_name", "STRING"),
    ("last_name", "STRING"),
    ("city", "STRING"),
    ("postal_code", "VARCHAR(16)"),
    ("description", "STRING"),
    ("category", "STRING"),
    ("sku", "VARCHAR(64)"),
    ("referrer_url", "STRING"),
    ("user_agent", "STRING"),
    ("ip_address", "STRING"),
    ("is_active", "BOOLEAN"),
    ("is_deleted", "BOOLEAN"),
    ("tags", "ARRAY<STRING>"),
    ("item_ids", "ARRAY<BIGINT>"),
    ("line_prices", "ARRAY<DECIMAL(10, 2)>"),
    ("attributes", "MAP<STRING, STRING>"),
    ("counters", "MAP<STRING, BIGINT>"),
    ("address", "STRUCT<street: STRING, city: STRING, zip: STRING>"),
    ("geo", "STRUCT<lat: DOUBLE, lon: DOUBLE>"),
    ("payload", "BINARY"),
    ("checksum", "STRING"),
    ("version", "INT"),
    ("revenue", "DECIMAL(14, 2)"),
    ("cost", "DECIMAL(14, 2)"),
    ("duration_ms", "BIGINT"),
    ("page_views", "BIGINT"),
    ("clicks", "INT"),
    ("impressions", "BIGINT"),
)
COLUMN_SUFFIXES = ("", "", "", "src", "raw", "usd", "local", "prev", "v2", "ext", "utc", "agg")
DOMAIN_WORDS = (
    "sales", "finance", "marketing", "web", "mobile", "billing", "inventory", "logistics",
    "support", "risk", "growth", "payments", "crm", "hr", "ads", "search", "catalog", "pricing",
    "fraud", "shipping", "retail", "partner", "product", "analytics", "ops", "legal",
)  # fmt: skip
ENTITY_WORDS = (
    "orders", "customers", "events", "sessions", "invoices", "payments", "clicks", "visits",
    "products", "shipments", "returns", "refunds", "accounts", "leads", "campaigns", "tickets",
    "transactions", "balances", "stock", "suppliers", "contracts", "users", "devices", "reviews",
    "subscriptions", "carts", "prices", "metrics", "snapshots", "audits", "transfers", "quotes",
)  # fmt: skip
# Data types are immutable: parse each text once.
TYPES = {text: parse_data_type(text) for text in {t for _, t in COLUMN_WORDS} | {"BIGINT NOT NULL"}}
TABLE_SUFFIXES = ("daily", "hourly", "raw", "clean", "agg", "hist", "stage", "v2", "latest", "")


@dataclass(frozen=True)
class Shape:
    """A table shape: the declared and resolved schema JSON and the Column row values."""

    schema: dict[str, Any]
    resolved: dict[str, Any]
    columns: tuple[tuple[str, str, str, str | None], ...]  # name, name_key, kind, data_type


def _column_name(rng: random.Random, word: str) -> str:
    """``customer_id``, ``amount_usd_417``, ``order_ts_88``: mostly a numeric suffix, so that
    names differ across shapes while their words repeat, as in a real warehouse."""
    suffix = rng.choice(COLUMN_SUFFIXES)
    number = rng.randint(1, 999) if rng.random() < 0.75 else None
    parts = [word, suffix, str(number) if number is not None else ""]
    return "_".join(part for part in parts if part)


def make_shape(rng: random.Random, width: int, resolver: SchemaResolver) -> Shape:
    """A random physical-column schema of ``width`` columns, resolved once."""
    entity = rng.choice(ENTITY_WORDS).rstrip("s")
    names: set[str] = set()
    columns: list[PhysicalColumn] = []
    key_name = f"{entity}_id"
    columns.append(PhysicalColumn(key_name, TYPES["BIGINT NOT NULL"]))
    names.add(key_name)
    while len(columns) < width:
        word, type_text = rng.choice(COLUMN_WORDS)
        name = _column_name(rng, word)
        if name in names:
            continue
        names.add(name)
        comment = f"The {word.replace('_', ' ')}." if rng.random() < 0.2 else None
        columns.append(PhysicalColumn(name, TYPES[type_text], comment))
    primary_key = PrimaryKey(f"pk_{entity}", (key_name,)) if rng.random() < 0.6 else None
    schema = Schema(tuple(columns[:width]), primary_key=primary_key)
    resolved = resolver.resolve(schema)
    return Shape(
        schema=schema.to_dict(),
        resolved=resolved.to_dict(),
        columns=tuple(
            (
                c.name,
                c.name.lower(),
                c.kind,
                c.data_type.sql() if c.data_type is not None else None,
            )
            for c in resolved.columns
        ),
    )


def _table_names(rng: random.Random, count: int) -> list[str]:
    names: set[str] = set()
    while len(names) < count:
        suffix = rng.choice(TABLE_SUFFIXES)
        parts = [
            rng.choice(DOMAIN_WORDS),
            rng.choice(ENTITY_WORDS),
            suffix,
            str(rng.randint(1, 999)),
        ]
        names.add("_".join(part for part in parts if part))
    result = sorted(names)
    rng.shuffle(result)
    return result


class Command(BaseCommand):
    help = (
        "Fill a synthetic catalog for benchmarks with bulk inserts: DATABASES databases of "
        "TABLES_PER_DATABASE tables (a share of them views) with COLUMNS columns each. Table "
        "JSON is what the services store. Tables are EXTERNAL (options connector=parquet, "
        "path under the first storage root, <data dir>/external by default, in <root>/<catalog>/"
        "...): no directory is created, because 100,000 empty warehouse directories would only "
        "slow the fill down. Refuses an existing catalog unless --drop-existing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--catalog", default="bench", help="catalog name (default: bench)")
        parser.add_argument("--databases", type=int, default=100)
        parser.add_argument("--tables-per-database", type=int, default=1000)
        parser.add_argument("--columns", type=int, default=20, help="columns per table")
        parser.add_argument(
            "--views-percent",
            type=float,
            default=5.0,
            help="share of each database's tables that are views (default 5)",
        )
        parser.add_argument(
            "--shapes",
            type=int,
            default=10_000,
            help="distinct table schemas, each resolved once and shared by several tables "
            "(default 10000)",
        )
        parser.add_argument("--seed", type=int, default=42)
        parser.add_argument("--owner", default=None, help="username (default: first superuser)")
        parser.add_argument("--batch-size", type=int, default=5000, help="rows per INSERT")
        parser.add_argument(
            "--drop-existing", action="store_true", help="drop the catalog first if it exists"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        name: str = options["catalog"]
        validate_name(name, "catalog name")
        databases: int = options["databases"]
        per_database: int = options["tables_per_database"]
        width: int = options["columns"]
        batch: int = options["batch_size"]
        if databases < 1 or per_database < 0 or width < 1 or batch < 1 or options["shapes"] < 1:
            raise CommandError("Sizes must be positive.")
        if not 0 <= options["views_percent"] <= 100:
            raise CommandError("--views-percent must be between 0 and 100.")
        owner = self._owner(options["owner"])
        rng = random.Random(options["seed"])
        started = time.perf_counter()

        existing = Catalog.objects.filter(name_key=name.lower()).first()
        if existing is not None:
            if not options["drop_existing"]:
                raise CommandError(
                    f"Catalog [{existing.name}] already exists; pass --drop-existing to replace it."
                )
            self._drop(existing)
            self.stdout.write(f"Dropped catalog [{existing.name}] ({self._since(started)}).")

        resolver = SchemaResolver()
        shapes = [make_shape(rng, width, resolver) for _ in range(options["shapes"])]
        views_per_database = round(per_database * options["views_percent"] / 100)
        root = Path(settings.TESSERA_STORAGE_ROOTS[0])

        db_names = [f"{rng.choice(DOMAIN_WORDS)}_{i:03d}" for i in range(databases)]
        with transaction.atomic():
            catalog = Catalog(
                name=name,
                name_key=name.lower(),
                comment="Synthetic catalog for benchmarks (manage.py fill_catalog).",
                default_database=db_names[0],
                owner=owner,
            )
            catalog.save()

        total_tables = total_columns = 0
        every = max(1, databases // 20)
        for index, db_name in enumerate(db_names):
            names = _table_names(rng, per_database)
            with transaction.atomic():
                database = Database(catalog=catalog, name=db_name, owner=owner)
                database.save()
                tables: list[Table] = []
                table_shapes: list[Shape] = []
                for position, table_name in enumerate(names):
                    shape = rng.choice(shapes)
                    view = position < views_per_database
                    tables.append(
                        self._table(rng, database, table_name, shape, view, root=root, owner=owner)
                    )
                    table_shapes.append(shape)
                # A table row carries two schema JSONs (a few KB): fewer rows per INSERT.
                Table.objects.bulk_create(tables, batch_size=max(1, batch // 5))
                columns = [
                    Column(
                        table_id=table.pk,
                        position=position,
                        name=column_name,
                        name_key=column_key,
                        kind=kind,
                        data_type=data_type,
                    )
                    for table, shape in zip(tables, table_shapes, strict=True)
                    for position, (column_name, column_key, kind, data_type) in enumerate(
                        shape.columns
                    )
                ]
                Column.objects.bulk_create(columns, batch_size=batch)
                ColumnName.objects.bulk_create(
                    [ColumnName(name_key=key) for key in {c.name_key for c in columns}],
                    ignore_conflicts=True,
                    batch_size=batch,
                )
            total_tables += len(tables)
            total_columns += len(columns)
            if (index + 1) % every == 0 or index + 1 == databases:
                elapsed = time.perf_counter() - started
                self.stdout.write(
                    f"  {index + 1}/{databases} databases, {total_tables:,} tables, "
                    f"{total_columns:,} columns, {elapsed:.1f} s "
                    f"({total_tables / max(elapsed, 1e-9):,.0f} tables/s)"
                )

        self._analyze()
        self.stdout.write(
            self.style.SUCCESS(
                f"Filled catalog [{name}]: {databases} databases, {total_tables:,} tables and "
                f"views, {total_columns:,} columns in {self._since(started)}."
            )
        )

    # --- helpers ---------------------------------------------------------------------------

    def _table(
        self,
        rng: random.Random,
        database: Database,
        name: str,
        shape: Shape,
        view: bool,
        *,
        root: Path,
        owner: User | None,
    ) -> Table:
        """A table or view row as services.table_create / view_create would store it."""
        comment = f"Synthetic {name.replace('_', ' ')}." if rng.random() < 0.3 else ""
        common: dict[str, Any] = {
            "database": database,
            "name": name,
            "name_key": name.lower(),
            "comment": comment,
            "schema": shape.schema,
            "resolved_schema": shape.resolved,
            "created_by": owner,
            "owner": owner,  # as the services set it: the creator owns what they create
        }
        if view:
            source = rng.choice(shape.columns)[0]
            return Table(
                kind=Table.KIND_VIEW,
                query=f"SELECT * FROM {database.name}.source_{name} WHERE {source} IS NOT NULL",
                **common,
            )
        path = posixpath.normpath(
            str(root / database.catalog.name_key / database.name_key / name.lower())
        )
        options = {"connector": "parquet", "path": path}
        # bulk_create does not call save(): the indexed paths are set here, as save() would.
        data_path, data_real_path = data_paths(Table.KIND_TABLE, options)
        return Table(
            kind=Table.KIND_TABLE,
            options=options,
            data_path=data_path,
            data_real_path=data_real_path,
            **common,
        )

    @staticmethod
    def _owner(username: str | None) -> User | None:
        if username is None:
            return User.objects.filter(is_superuser=True).order_by("pk").first()
        user = User.objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user named '{username}'.")
        return user

    @staticmethod
    def _since(started: float) -> str:
        return f"{time.perf_counter() - started:.1f} s"

    def _drop(self, catalog: Catalog) -> None:
        """Delete the catalog with a handful of set-based DELETEs (the ORM's cascade would
        load every row first); managed tables' directories go after commit, as in services."""
        quote = connection.ops.quote_name
        column, table, function, database, catalog_table = (
            quote(model._meta.db_table) for model in (Column, Table, Function, Database, Catalog)
        )
        databases = f"SELECT id FROM {database} WHERE catalog_id = %s"
        tables = f"SELECT id FROM {table} WHERE database_id IN ({databases})"
        locations = [
            loc
            for loc in Table.objects.filter(database__catalog=catalog)
            .exclude(location="")
            .values_list("location", flat=True)
        ]
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM {column} WHERE table_id IN ({tables})", [catalog.pk])
            cursor.execute(f"DELETE FROM {table} WHERE database_id IN ({databases})", [catalog.pk])
            cursor.execute(
                f"DELETE FROM {function} WHERE database_id IN ({databases})", [catalog.pk]
            )
            cursor.execute(f"DELETE FROM {database} WHERE catalog_id = %s", [catalog.pk])
            cursor.execute(f"DELETE FROM {catalog_table} WHERE id = %s", [catalog.pk])

            def cleanup() -> None:
                for location in locations:
                    storage.delete_location(location)

            transaction.on_commit(cleanup)

    def _analyze(self) -> None:
        """Refresh planner statistics and the visibility map, as autovacuum would after a
        bulk load, so that the queries that follow are planned on the real sizes."""
        if connection.vendor != "postgresql":
            return
        started = time.perf_counter()
        quote = connection.ops.quote_name
        with connection.cursor() as cursor:
            for model in (Catalog, Database, Table, Column, ColumnName):
                cursor.execute(f"VACUUM (ANALYZE) {quote(model._meta.db_table)}")
        self.stdout.write(f"VACUUM (ANALYZE) done ({self._since(started)}).")
