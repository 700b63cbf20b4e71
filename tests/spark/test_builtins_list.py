"""core/planner/spark_builtins.txt must list exactly the built-in functions of our Spark."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

BUILTINS_FILE = Path(__file__).resolve().parents[2] / "core" / "planner" / "spark_builtins.txt"


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    from pyspark.sql import SparkSession

    # py4j logs at interpreter exit, after pytest closed its capture streams.
    logging.getLogger("py4j").setLevel(logging.WARNING)
    existing = SparkSession.getActiveSession()
    session = (
        existing
        or SparkSession.builder.master("local[1]")
        .appName("tessera-builtins-check")
        .config("spark.ui.enabled", "false")
        # Spark would otherwise create spark-warehouse/ in the working directory (the repo).
        .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("warehouse")))
        .getOrCreate()
    )
    yield session
    if existing is None:
        session.stop()


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
