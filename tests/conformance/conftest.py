"""The conformance suite: the cases of cases.py (API.md §4, one capability each), run with
a remote ``tessera.connect`` environment (test_remote.py) and as pipeline jobs on a worker
(test_in_worker.py). Fixtures ``server`` and ``connect_as`` come from tests.live_client."""

from __future__ import annotations

CATALOG = "conformance"


def db_for(case: str) -> str:
    """The database a case works in: unique per case."""
    return f"db_{case}"
