"""The profile dbt-tests-adapter's ``project`` fixture signs in with: dbt-spark's ``thrift``
method against the Tessera HiveServer2 endpoint named by ``TESSERA_DBT_*`` (set by
tests/hiveserver2/test_dbt.py)."""

from __future__ import annotations

import os
from typing import Any

import pytest

pytest_plugins = ["dbt.tests.fixtures.project"]


@pytest.fixture(scope="class")
def dbt_profile_target() -> dict[str, Any]:
    return {
        "type": "spark",
        "method": "thrift",
        "host": "127.0.0.1",
        "port": int(os.environ["TESSERA_DBT_PORT"]),
        "user": os.environ["TESSERA_DBT_USER"],
        "password": os.environ["TESSERA_DBT_PASSWORD"],
        "auth": "CUSTOM",
        "connect_retries": 0,
        "connect_timeout": 10,
        # Tessera's sessions need a current catalog: dbt's schemas are its databases.
        "server_side_parameters": {"use:catalog": os.environ["TESSERA_DBT_CATALOG"]},
    }
