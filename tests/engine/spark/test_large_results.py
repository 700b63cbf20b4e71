"""``engine.large_results`` on plain PySpark: a result above the small-result limit is
written batch by batch from Spark's Python workers, in ``toArrow``'s types and order."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from core.planner.plan import Action, Plan
from engine import large_results, run
from engine.typing import type_text
from results import store

pytestmark = pytest.mark.spark

SQL = """
SELECT id, CAST(id AS DECIMAL(38, 10)) AS amount,
       TIMESTAMP'2024-01-02 03:04:05' + make_interval(0, 0, 0, 0, 0, 0, id) AS ts,
       TIMESTAMP_NTZ'2024-01-02 03:04:05' AS ntz, DATE'2024-02-29' AS day,
       CAST(CAST(id AS STRING) AS BINARY) AS raw,
       array(named_struct('a', id, 'b', 'x')) AS items, map('k', CAST(id AS INT)) AS attrs,
       IF(id % 3 = 0, NULL, id) AS maybe, NULL AS nothing, id AS id
FROM range(0, 1000, 1, 4) ORDER BY id DESC
"""


@pytest.fixture
def python_workers(plain_spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Spark's Python workers with this interpreter (pyarrow), as the worker sets them up."""
    monkeypatch.setattr(plain_spark.sparkContext, "pythonExec", sys.executable)


@pytest.fixture
def stores(settings: Any, tmp_path: Path) -> Path:
    settings.RESULTS_DIR = tmp_path / "results"
    settings.WAREHOUSE_DIR = tmp_path / "warehouse"
    settings.TESSERA_RESULT_MAX_ROWS = 10
    return tmp_path / "warehouse" / large_results.SCRATCH


def columns_of(frame: Any) -> list[dict[str, Any]]:
    return [{"name": f.name, "data_type": type_text(f.dataType)} for f in frame.schema.fields]


@pytest.mark.parametrize(("limit", "truncated"), [(500, True), (1000, False), (5000, False)])
@pytest.mark.usefixtures("python_workers")
def test_large_result_is_what_to_arrow_gives(plain_spark, stores, limit, truncated):
    frame = plain_spark.sql(SQL)
    assert large_results.is_large(limit)
    meta = large_results.write_large_result(plain_spark, frame, "job", limit, columns_of(frame))
    kept = min(limit, 1000)
    assert meta["row_count"] == kept and meta["truncated"] is truncated
    stored = store.open_result("job").read_all()
    expected = plain_spark.sql(SQL).limit(kept).toArrow()  # a repeated name (id) too
    assert stored.schema == expected.schema
    assert stored.equals(expected)
    assert list(stores.iterdir()) == []  # the scratch folder is gone


def test_leftovers_of_dead_workers_are_cleared_once_no_job_can_own_them(stores, settings):
    old, new = stores / "old-job", stores / "new-job"
    for folder in (old, new):
        folder.mkdir(parents=True)
        (folder / "part-000000-0.arrow").write_bytes(b"x")
    ages = time.time() - settings.TESSERA_JOB_TIMEOUT_MAX_SECONDS - 7200
    os.utime(old, (ages, ages))
    large_results.clear_leftovers(stores)
    assert sorted(p.name for p in stores.iterdir()) == ["new-job"]


def query_plan(sql: str) -> Plan:
    return Plan.of(Action.QUERY, needs_spark=True, sql=sql)


@pytest.mark.usefixtures("python_workers")
def test_a_result_asked_whole_that_is_small_skips_the_large_path(plain_spark, stores, monkeypatch):
    """A row_limit above the small limit: a result Spark estimates small is collected as a
    small one (no Python workers, no scratch files); one larger than its estimate, or
    estimated large, is written the large way — the same rows either way."""
    calls: list[int] = []
    write = large_results.write_large_result

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return write(*args, **kwargs)

    monkeypatch.setattr(large_results, "write_large_result", counted)
    small = run.execute_query(plain_spark, query_plan("SELECT 1 AS one"), "small", 1000)
    assert calls == [] and small["row_count"] == 1 and small["truncated"] is False
    assert store.open_result("small").read_all().to_pylist() == [{"one": 1}]
    # Estimated small (a range), 50 rows: over the small limit of 10, so the large way.
    over = run.execute_query(plain_spark, query_plan("SELECT id FROM range(0, 50)"), "over", 1000)
    assert calls == [1] and over["row_count"] == 50 and over["truncated"] is False
    assert store.open_result("over").read_all()["id"].to_pylist() == list(range(50))
    big = plain_spark.sql("SELECT id, CAST(id AS STRING) AS s FROM range(0, 10000000)")
    assert not large_results.probably_small(big)
    assert large_results.probably_small(plain_spark.sql("SELECT 1"))
    assert list(stores.iterdir()) == []
