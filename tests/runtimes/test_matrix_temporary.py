"""Temporary objects on every runtime: a temporary view shadowing a permanent table (and
back), function resolution with temporary functions, joins of temporary and permanent
objects equal to plain PySpark. The tests are ``tests/sessions/worker/test_temporary_objects.py``'s,
run here on each runtime of the matrix."""

from __future__ import annotations

import pytest

from tests.sessions.worker.test_temporary_objects import (  # noqa: F401 (fixtures and tests)
    sales,
    test_a_join_of_temporary_and_permanent_objects_equals_plain_pyspark,
    test_a_temporary_view_over_a_dropped_temporary_table_fails_at_use,
    test_a_temporary_view_shadows_a_permanent_table_and_back,
    test_function_resolution_order_with_temporary_functions,
)

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.runtime_matrix,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker"),
]
