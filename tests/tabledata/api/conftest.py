"""API-level tests, no worker (tests/fixtures/api.py): PostgreSQL only, a private warehouse
and storage root per test."""

from typing import Any

import pytest
from django.utils import timezone

from jobs.models import Session
from tests.fixtures.api import _postgresql_only, storage  # noqa: F401 (fixtures)


@pytest.fixture
def session(make: Any, alice: Any) -> Session:
    """Alice's session in demo.sales (the catalog and database made for it)."""
    make.catalog("demo")
    make.database("demo", "sales")
    return Session.objects.create(
        user=alice,
        current_catalog="demo",
        current_database="sales",
        last_used_at=timezone.now(),
        idle_timeout_seconds=3600,
    )
