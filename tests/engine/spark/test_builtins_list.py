"""core/planner/spark_builtins.txt must list exactly the built-in functions of our Spark."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

BUILTINS_FILE = Path(__file__).resolve().parents[3] / "core" / "planner" / "spark_builtins.txt"


@pytest.fixture(scope="module")
def spark(plain_spark: Any) -> Any:
    return plain_spark  # the run's plain PySpark session (tests/conftest.py)


@pytest.mark.spark
def test_builtins_file_matches_spark(spark: object) -> None:
    from pyspark.sql import SparkSession

    assert isinstance(spark, SparkSession)
    current = {row[0].lower() for row in spark.sql("SHOW SYSTEM FUNCTIONS").collect()}
    lines = BUILTINS_FILE.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("#"), "the first line says how the file was generated"
    listed = [line for line in lines if line and not line.startswith("#")]
    assert listed == sorted(set(listed)), "one name per line, sorted, no duplicates"
    assert set(listed) == current, (
        f"missing from the file: {sorted(current - set(listed))}; "
        f"no longer in Spark: {sorted(set(listed) - current)}"
    )
