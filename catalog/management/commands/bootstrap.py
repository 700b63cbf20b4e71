"""First-run setup for `make run`: an admin user when there is none, and a demo catalog."""

from __future__ import annotations

import os
import random
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand
from django.db import transaction

from catalog import services
from catalog.models import Catalog
from core.schema import Schema

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
                comment="One row per order.",
            )
            customers = services.table_create(
                user=admin,
                database=sales,
                name="customers",
                schema=Schema.from_dict(DEMO_CUSTOMERS),
                comment="One row per customer.",
            )
        write_demo_rows(Path(orders.location), Path(customers.location))
        self.stdout.write("Created the demo catalog (demo.sales.orders, demo.sales.customers).")


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
