"""First-run setup for `make run`: an admin user when there is none, and a demo catalog."""

from __future__ import annotations

import os
from typing import Any

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
        with transaction.atomic():
            demo = services.catalog_create(
                user=admin,
                name="demo",
                comment="Demo data to explore Tessera with.",
                default_database="sales",
            )
            sales = demo.databases.get()
            services.table_create(
                user=admin,
                database=sales,
                name="orders",
                schema=Schema.from_dict(DEMO_ORDERS),
                comment="One row per order.",
            )
            services.table_create(
                user=admin,
                database=sales,
                name="customers",
                schema=Schema.from_dict(DEMO_CUSTOMERS),
                comment="One row per customer.",
            )
        self.stdout.write("Created the demo catalog (demo.sales.orders, demo.sales.customers).")
