"""Every conformance case with a remote ``tessera.connect(...)`` environment (alice's
session over HTTP to the live server, the shared worker running the statements)."""

from __future__ import annotations

import pytest

from tests.conformance.cases import CASES
from tests.conformance.conftest import CATALOG, db_for
from tests.live_client import connect_as

pytestmark = [pytest.mark.slow, pytest.mark.spark]


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_passes_with_the_remote_client(server, name):
    with connect_as(server, "alice") as env:
        env.execute_sql(f"CREATE CATALOG {CATALOG}").wait()
    with connect_as(server, "alice", catalog=CATALOG) as t_env:
        CASES[name](t_env, db=db_for(name))


def test_every_case_is_collected():
    """A case added to cases.py is run here by its name (and fails loudly when misnamed)."""
    assert len(CASES) >= 10, sorted(CASES)
    for name, case in CASES.items():
        assert case.__name__ == f"case_{name}"
        assert case.__doc__, f"case_{name} says what it checks"
