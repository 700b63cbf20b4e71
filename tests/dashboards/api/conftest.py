"""API-level tests, no worker (tests/fixtures/api.py): PostgreSQL only, a private warehouse
and storage root per test."""

from tests.fixtures.api import _postgresql_only, storage  # noqa: F401 (fixtures)
