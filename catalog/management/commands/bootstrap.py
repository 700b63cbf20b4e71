"""First-run setup for `make run`: an admin user when there is none, and a demo catalog that
every signed-in user may read (``USE``, ``SELECT``, ``EXECUTE`` to team ``everyone``)."""

from __future__ import annotations

import os
import random
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand
from django.db import transaction

from catalog import access, grants, services
from catalog.models import EVERYONE, Catalog
from core.datatypes import DataType, parse_data_type
from core.errors import SchemaError
from core.schema import ResolvedColumn, Schema

DEMO_ORDERS = {
    "columns": [
        {"name": "id", "kind": "physical", "data_type": "BIGINT NOT NULL"},
        {"name": "customer_id", "kind": "physical", "data_type": "BIGINT"},
        {"name": "price", "kind": "physical", "data_type": "DECIMAL(10, 2)"},
        {"name": "qty", "kind": "physical", "data_type": "INT"},
        {"name": "total", "kind": "computed", "expression": "price * qty"},
        {"name": "ts", "kind": "physical", "data_type": "TIMESTAMP"},
        {
            "name": "file",
            "kind": "metadata",
            "data_type": "STRING",
            "metadata_key": "file_path",
            "virtual": True,
        },
    ],
    "watermarks": [{"column": "ts", "expression": "ts - INTERVAL 5 SECONDS"}],
    "primary_key": {"name": "pk_orders", "columns": ["id"]},
}
DEMO_CUSTOMERS = {
    "columns": [
        {"name": "id", "kind": "physical", "data_type": "BIGINT NOT NULL"},
        {"name": "name", "kind": "physical", "data_type": "STRING"},
        {"name": "country", "kind": "physical", "data_type": "CHAR(2)"},
        {"name": "tags", "kind": "physical", "data_type": "ARRAY<STRING>"},
    ],
    "primary_key": {"name": "pk_customers", "columns": ["id"]},
}
DEMO_PAGE_VIEWS = {
    "columns": [
        {"name": "id", "kind": "physical", "data_type": "BIGINT NOT NULL"},
        {"name": "customer_id", "kind": "physical", "data_type": "BIGINT"},
        {"name": "url", "kind": "physical", "data_type": "STRING"},
        {"name": "referrer", "kind": "physical", "data_type": "STRING"},
        {"name": "duration_ms", "kind": "physical", "data_type": "INT"},
        {"name": "seconds", "kind": "computed", "expression": "duration_ms / 1000.0"},
        {"name": "ts", "kind": "physical", "data_type": "TIMESTAMP"},
        {"name": "day", "kind": "physical", "data_type": "DATE"},
    ],
    "watermarks": [{"column": "ts", "expression": "ts - INTERVAL 1 MINUTE"}],
    "primary_key": {"name": "pk_page_views", "columns": ["id"]},
}
PAGE_VIEWS = 100_000
# What everyone holds on the demo catalog (as migration 0011 gives an existing one).
DEMO_PRIVILEGES = ("USE", "SELECT", "EXECUTE")  # enough rows to page through in the result grid

# The types Spark's analyzer gives the demo's expressions (checked against Spark by
# tests/engine/spark/test_demo_types.py). ``make run`` creates the demo catalog before any worker
# may be up, and only resolved schemas enter the catalog (FLIP-164): so the demo brings the
# answers with it instead of asking a worker.
DEMO_EXPRESSION_TYPES = {
    "price * qty": "DECIMAL(21, 2)",
    "ts - INTERVAL 5 SECONDS": "TIMESTAMP",
    "duration_ms / 1000.0": "DECIMAL(17, 6)",
    "ts - INTERVAL 1 MINUTE": "TIMESTAMP",
}


class DemoTypes:
    """The ``ExpressionTyper`` of the demo tables: Spark's answers, known in advance; any
    other expression is refused (it would need a worker)."""

    def type_expressions(
        self, columns: Sequence[ResolvedColumn], expressions: Mapping[str, str]
    ) -> Mapping[str, DataType]:
        typed: dict[str, DataType] = {}
        for name, expression in expressions.items():
            known = DEMO_EXPRESSION_TYPES.get(expression)
            if known is None:
                raise SchemaError(
                    f"The demo does not know the type of `{name}` ({expression}).",
                    details={"column": name},
                )
            typed[name] = parse_data_type(known)
        return typed


class Command(BaseCommand):
    help = "Create an admin user (when no user exists) and the demo catalog (when missing)."

    def handle(self, *args: Any, **options: Any) -> None:
        admin = User.objects.filter(is_superuser=True).order_by("pk").first()
        if not User.objects.exists():
            username = os.environ.get("TESSERA_ADMIN_USER", "admin")
            password = os.environ.get("TESSERA_ADMIN_PASSWORD", "admin")
            admin = User.objects.create_superuser(username, "", password)
            self.stdout.write(
                f"Created admin user '{username}' (password from "
                "TESSERA_ADMIN_PASSWORD, default 'admin')."
            )
        if Catalog.objects.filter(name_key="demo").exists() or admin is None:
            return
        with transaction.atomic():  # the warehouse directories appear at commit
            demo = services.catalog_create(
                user=admin,
                name="demo",
                comment="Demo data to explore Tessera with.",
                default_database="sales",
            )
            sales = demo.databases.get()
            orders = services.table_create(
                user=admin,
                database=sales,
                name="orders",
                schema=Schema.from_dict(DEMO_ORDERS),
                typer=DemoTypes(),
                comment="One row per order.",
            )
            customers = services.table_create(
                user=admin,
                database=sales,
                name="customers",
                schema=Schema.from_dict(DEMO_CUSTOMERS),
                typer=DemoTypes(),
                comment="One row per customer.",
            )
            web = services.database_create(
                user=admin, catalog=demo, name="web", comment="Clickstream of the shop."
            )
            page_views = services.table_create(
                user=admin,
                database=web,
                name="page_views",
                schema=Schema.from_dict(DEMO_PAGE_VIEWS),
                typer=DemoTypes(),
                comment="One row per page view; NULL referrer for direct visits.",
            )
            grants.system_grant(
                securable=access.catalog_securable(demo),
                privileges=DEMO_PRIVILEGES,
                principal=grants.find_principal("team", EVERYONE),
                actor=admin,
            )
        write_demo_rows(Path(orders.location), Path(customers.location))
        write_page_views(Path(page_views.location))
        self.stdout.write(
            "Created the demo catalog (demo.sales.orders, demo.sales.customers, "
            "demo.web.page_views), readable by everyone."
        )


def write_demo_rows(orders_dir: Path, customers_dir: Path, seed: int = 7) -> None:
    """Generated rows for the demo tables, written as Parquet into their warehouse
    directories with pyarrow (the web process has no Spark)."""
    rng = random.Random(seed)
    countries = ["DE", "FR", "NL", "US", "JP", "BR"]
    tags = ["new", "vip", "b2b", "newsletter"]
    customer_ids = list(range(1, 201))
    customers = pa.table(
        {
            "id": pa.array(customer_ids, pa.int64()),
            "name": [f"Customer {i:03d}" for i in customer_ids],
            "country": [rng.choice(countries) for _ in customer_ids],
            "tags": [rng.sample(tags, rng.randint(0, 2)) for _ in customer_ids],
        }
    )
    start = datetime(2026, 1, 1, tzinfo=UTC)
    count = 5000
    orders = pa.table(
        {
            "id": pa.array(range(1, count + 1), pa.int64()),
            "customer_id": pa.array([rng.choice(customer_ids) for _ in range(count)], pa.int64()),
            "price": pa.array(
                [Decimal(rng.randint(100, 50000)) / 100 for _ in range(count)], pa.decimal128(10, 2)
            ),
            "qty": pa.array([rng.randint(1, 12) for _ in range(count)], pa.int32()),
            "ts": pa.array(
                [start + timedelta(minutes=7 * i) for i in range(count)], pa.timestamp("us", "UTC")
            ),
        }
    )
    for folder, table in ((customers_dir, customers), (orders_dir, orders)):
        folder.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, folder / "part-00000.parquet")


def write_page_views(folder: Path, seed: int = 11) -> None:
    """Generated page views (Parquet, pyarrow), with NULL and empty-string referrers."""
    rng = random.Random(seed)
    pages = ["/", "/search", "/cart", "/checkout", "/product/42", "/product/7", "/help"]
    referrers = [None, "", "https://example.com/", "https://news.example.org/a?b=1"]
    start = datetime(2026, 1, 1, tzinfo=UTC)
    stamps = [start + timedelta(seconds=37 * i) for i in range(PAGE_VIEWS)]
    table = pa.table(
        {
            "id": pa.array(range(1, PAGE_VIEWS + 1), pa.int64()),
            "customer_id": pa.array([rng.randint(1, 200) for _ in stamps], pa.int64()),
            "url": [rng.choice(pages) for _ in stamps],
            "referrer": pa.array([rng.choice(referrers) for _ in stamps], pa.string()),
            "duration_ms": pa.array([rng.randint(200, 120_000) for _ in stamps], pa.int32()),
            "ts": pa.array(stamps, pa.timestamp("us", "UTC")),
            "day": pa.array([s.date() for s in stamps], pa.date32()),
        }
    )
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, folder / "part-00000.parquet")
