"""API-test wiring: PostgreSQL only, and a private warehouse and storage root per test."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from tests.conftest import require_postgresql


@pytest.fixture(autouse=True, scope="session")
def _postgresql_only() -> None:
    # Lives here, not in tests/conftest.py: tests/core and tests/smoke run without a database.
    require_postgresql()
    # WhiteNoise warns on every request when the (throw-away) static root is missing.
    Path(django_settings.STATIC_ROOT).mkdir(parents=True, exist_ok=True)


@dataclass(frozen=True)
class Storage:
    warehouse: Path
    external: Path  # the one storage root external tables may point into


@pytest.fixture(autouse=True)
def storage(settings, tmp_path: Path) -> Storage:
    warehouse = tmp_path / "warehouse"
    external = tmp_path / "external"
    external.mkdir()
    settings.WAREHOUSE_DIR = warehouse
    settings.TESSERA_STORAGE_ROOTS = [external.resolve()]
    return Storage(warehouse=warehouse, external=external)
