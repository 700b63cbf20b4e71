"""``engine.errors`` on real Java exceptions: a wrapper's message gives way to its
causes' and suppressed ones' (AQE's ``STAGE_MATERIALIZATION_MULTIPLE_FAILURES`` keeps the
other stages' failures suppressed), so an upsert's own check is found in any of them."""

from __future__ import annotations

from typing import Any

import pytest
from py4j.protocol import Py4JJavaError

from core.errors import CoreError
from engine import errors, upsert

pytestmark = pytest.mark.spark

NULL_KEY = (
    "[USER_RAISED_EXCEPTION] TESSERA_UPSERT: A row of the upsert into c.d.k has a NULL key "
    "(k): every row needs its key. SQLSTATE: P0001"
)


def _multiple_failures(spark: Any, *, marked_first: bool) -> Py4JJavaError:
    """The exception AQE raises when two stages fail: the first failure as the cause, the
    others suppressed; the job-abort messages end in ``Driver stacktrace:``."""
    jvm = spark.sparkContext._jvm
    marked = jvm.java.lang.RuntimeException(NULL_KEY)
    aborted = jvm.org.apache.spark.SparkException(
        "Job aborted due to stage failure: Task 0 in stage 3.0 failed 1 times:\nDriver stacktrace:",
        marked,
    )
    cancelled = jvm.org.apache.spark.SparkException(
        "Job 12 cancelled part of cancelled job group 7:"
    )
    first, other = (aborted, cancelled) if marked_first else (cancelled, aborted)
    wrapper = jvm.org.apache.spark.SparkException(
        "[STAGE_MATERIALIZATION_MULTIPLE_FAILURES] Multiple failures (2) in stage materialization:",
        first,
    )
    wrapper.addSuppressed(other)
    # capture_sql_exception re-raises a plain SparkException as the Py4JJavaError itself
    return Py4JJavaError("An error occurred while calling o80.save.\n", wrapper)


@pytest.mark.parametrize("marked_first", [True, False])
def test_the_upsert_check_is_found_under_multiple_stage_failures(
    plain_spark: Any, marked_first: bool
) -> None:
    exc = _multiple_failures(plain_spark, marked_first=marked_first)
    refused = upsert.validation_error(exc)
    assert isinstance(refused, CoreError)
    assert (
        str(refused)
        == "A row of the upsert into c.d.k has a NULL key (k): every row needs its key."
    )
    # the wrapper's and the job abort's messages end in a colon: the marked one is shown
    assert errors.spark_message(exc) == NULL_KEY


def test_a_failure_without_the_marker_is_not_a_validation_error(plain_spark: Any) -> None:
    jvm = plain_spark.sparkContext._jvm
    wrapper = jvm.org.apache.spark.SparkException(
        "Multiple failures (2) in stage materialization:",
        jvm.java.lang.RuntimeException("Disk quota exceeded"),
    )
    exc = Py4JJavaError("An error occurred while calling o80.save.\n", wrapper)
    assert upsert.validation_error(exc) is None
    assert errors.spark_message(exc) == "Disk quota exceeded"
