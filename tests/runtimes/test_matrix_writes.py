"""Writes on every runtime: CTAS (managed, external partitioned), INSERT, INSERT
OVERWRITE and statement sets — their lifecycle (events, stage tables, staging removed,
one-step commits) and failures and cancel leaving nothing behind. The executors write the
staging files; the worker commits them. The tests are ``tests/tabledata/worker/test_writes.py``'s,
run here on each runtime of the matrix."""

from __future__ import annotations

import pytest

from tests.tabledata.worker.test_writes import (  # noqa: F401 (fixtures and tests, collected here)
    external_dir,
    managed,
    test_ctas_cancel_mid_write_leaves_nothing,
    test_ctas_external_partitioned,
    test_ctas_failing_inside_spark_leaves_nothing,
    test_ctas_managed,
    test_insert_into_external_appends,
    test_insert_into_managed_appends,
    test_insert_overwrite_replaces_and_its_failure_keeps_the_old_data,
    test_statement_set_commits_every_insert,
    test_statement_set_with_a_failing_insert_commits_nothing,
)

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.runtime_matrix,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker"),
]
