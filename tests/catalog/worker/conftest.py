"""Tests on the run's shared live worker (tests/fixtures/worker.py): alice with a SQL session,
her catalog, a stream's source directory and the streams a test started."""

from tests.fixtures.worker import (  # noqa: F401 (fixtures)
    alice,
    catalog,
    shared_catalog,
    source_dir,
    streams,
)
