"""Pipelines from the SQL editor (issue 16): a shipped example run as EXECUTE PIPELINE gives
the rows plain PySpark computes; a pipeline outside the allowed packages is refused before
any import; a pipeline that raises shows its own message and frames."""

from __future__ import annotations

import os
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from catalog.models import Table
from jobs.models import Job
from tests.browser.conftest import UI
from tests.browser.test_editor import pane, run_and_wait, set_sql

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PACKAGES = ("tessera_pipelines", "tests.pipelines", "tests.conformance")


@pytest.fixture(autouse=True)
def _pipeline_packages(settings: Any) -> None:
    """The web process allows what the test workers allow (tests/workers.py)."""
    settings.TESSERA_PIPELINE_PACKAGES = PACKAGES


def pipeline_job() -> Job:
    return Job.objects.filter(kind="pipeline").order_by("-created_at").first()  # type: ignore[return-value]


def test_the_daily_revenue_example_runs_from_the_editor(
    ui: UI, page: Any, demo: User, plain_spark: Any
) -> None:
    ui.login(page, "alice")
    set_sql(
        page,
        "EXECUTE PIPELINE 'tessera_pipelines.revenue:daily_revenue' WITH (\n"
        "  'orders' = 'demo.sales.orders', 'target' = 'demo.sales.daily_revenue',\n"
        "  'ts_column' = 'ts', 'amount_column' = 'total')",
    )
    run_and_wait(page, timeout=240_000)
    job = pipeline_job()
    assert job.status == "FINISHED"
    children = list(job.children.order_by("created_at").values_list("kind", "status"))
    assert children and all(status == "FINISHED" for _, status in children)
    assert ("insert", "FINISHED") in children

    target = Table.objects.get(name="daily_revenue", database__name="sales")
    assert target.status == "active"
    got = {
        row["day"]: (row["revenue"], row["orders"])
        for row in plain_spark.read.parquet(target.location).collect()
    }
    orders = Table.objects.get(name="orders", database__name="sales")
    from pyspark.sql import functions as F

    expected = {
        row["day"]: (row["revenue"], row["orders"])
        for row in plain_spark.read.parquet(str(Path(orders.location)))
        .groupBy(F.to_date("ts").alias("day"))
        .agg(
            F.sum(F.col("price") * F.col("qty")).cast("decimal(18,2)").alias("revenue"),
            F.count("*").alias("orders"),
        )
        .collect()
    }
    assert len(expected) == 25  # 5,000 orders, one every 7 minutes from 2026-01-01
    assert got == expected
    assert all(isinstance(revenue, Decimal) for revenue, _ in got.values())


def test_a_pipeline_outside_the_allowed_packages_is_refused(ui: UI, page: Any, demo: User) -> None:
    ui.login(page, "alice")
    set_sql(page, "EXECUTE PIPELINE 'tests.pipelines_evil.boom:run'")
    run_and_wait(page, "FAILED")
    alert = pane(page).get_by_test_id("job-error")
    expect(alert).to_contain_text("FORBIDDEN")
    expect(alert).to_contain_text("tests.pipelines_evil")
    # Importing the module would write this file (tests/pipelines_evil/boom.py): nothing was.
    assert not (Path(os.environ["TESSERA_DATA_DIR"]) / "pipelines_evil_imported").exists()


def test_a_pipeline_that_raises_shows_its_own_error(ui: UI, page: Any, demo: User) -> None:
    ui.login(page, "alice")
    set_sql(
        page, "EXECUTE PIPELINE 'tests.pipelines.cases:fails' WITH ('message' = 'no orders today')"
    )
    run_and_wait(page, "FAILED", timeout=120_000)
    alert = pane(page).get_by_test_id("job-error")
    expect(alert).to_contain_text("PIPELINE_FAILED")
    expect(alert).to_contain_text("no orders today")
    frames = pane(page).get_by_test_id("job-traceback")
    expect(frames).to_contain_text('File "tests/pipelines/cases.py"')
    expect(frames).not_to_contain_text("engine")
