"""Queries on every runtime: results equal to plain PySpark's, Python and SQL UDFs (the
Python ones run in the executors' Python workers), cancel, isolation of jobs' sessions,
schemas derived and computed columns typed by the runtime's analyzer. The tests are
``tests/sessions/worker/test_statements.py``'s, run here on each runtime of the matrix."""

from __future__ import annotations

import pytest

from tests.sessions.worker.test_statements import (  # noqa: F401 (fixtures and tests, collected here)
    sales,
    test_cancel_stops_spark,
    test_create_table_with_computed_column_is_typed_on_the_worker,
    test_jobs_do_not_share_temporary_views_or_functions,
    test_python_function_created_checked_and_called,
    test_python_udf_failure_names_the_python_error,
    test_query_rows_equal_plain_pyspark,
    test_spark_errors_are_short,
    test_udfs_python_and_sql,
    test_view_schema_is_derived_by_spark,
)

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.runtime_matrix,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker"),
]
