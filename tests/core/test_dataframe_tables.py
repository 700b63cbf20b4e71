"""Temporary tables over a pipeline's live DataFrames (``'connector' = 'dataframe'``) in the
planner: only a statement planned for the running pipeline job the options name may
declare or read one (``PlanContext.pipeline_job``); the hidden view's name stays out of
the query, which reads the relation's alias."""

from __future__ import annotations

import dataclasses

import pytest

from core.errors import CoreError
from core.planner import Plan, plan_statement
from core.planner.errors import ForbiddenSql
from tests.core.test_planner_support import MemoryCatalog, context, sample_catalog

JOB = "0b6e1c9a-7f55-4d2e-8a37-5c1d2e3f4a5b"
OTHER = "6f1c2a4e-0d3b-4c5a-9e7f-1a2b3c4d5e6f"
VIEW = "__tessera_df_" + "ab" * 16
WITH = f"WITH ('connector' = 'dataframe', 'view' = '{VIEW}', 'job' = '{JOB}')"


def plan(sql: str, catalog: MemoryCatalog | None = None, pipeline_job: str | None = JOB) -> Plan:
    ctx = dataclasses.replace(context(), pipeline_job=pipeline_job)
    return plan_statement(sql, catalog or sample_catalog(), ctx)


def test_the_pipeline_declares_a_table_over_its_data_frame() -> None:
    result = plan(f"CREATE TEMPORARY TABLE t (id INT, twice AS id * 2) {WITH}")
    assert result.args["options"] == {"connector": "dataframe", "view": VIEW, "job": JOB}
    assert result.args["temporary"] is True


def test_reading_it_gives_the_relation_an_alias_not_the_view_name() -> None:
    catalog = sample_catalog()
    options = {"connector": "dataframe", "view": VIEW, "job": JOB}
    catalog.add_table("c.d.frame", ["id BIGINT"], options=options, temporary=True)
    result = plan("SELECT id FROM frame WHERE id > 1", catalog)
    relation = result.relations[0]
    assert (relation.format, relation.path) == ("dataframe", "")
    assert dict(relation.options) == {"view": VIEW, "job": JOB}
    assert relation.physical_schema == "`id` BIGINT"
    assert VIEW not in (result.sql or "") and relation.alias in (result.sql or "")
    # Any other statement — no pipeline, another pipeline — is refused at planning.
    for job in (None, OTHER):
        with pytest.raises(ForbiddenSql, match="only that pipeline's own statements"):
            plan("SELECT id FROM frame", catalog, pipeline_job=job)


@pytest.mark.parametrize(
    ("sql", "job", "fragment"),
    [
        (f"CREATE TEMPORARY TABLE t (id INT) {WITH}", None, "running pipeline job"),
        (f"CREATE TEMPORARY TABLE t (id INT) {WITH}", OTHER, f"({OTHER}), not '{JOB}'"),
        ("CREATE TEMPORARY TABLE t (id INT) USING dataframe", None, "running pipeline job"),
        (
            f"CREATE TEMPORARY TABLE t (id INT) WITH ('format' = 'DATAFRAME', 'view' = "
            f"'{VIEW}', 'job' = '{JOB}')",
            None,
            "running pipeline job",
        ),
        (
            f"CREATE TEMPORARY TABLE t (id INT) WITH ('connector' = 'dataframe', "
            f"'view' = 'range', 'job' = '{JOB}')",
            JOB,
            "not 'range'",
        ),
        (
            f"CREATE TEMPORARY TABLE t (id INT) WITH ('connector' = 'dataframe', "
            f"'view' = '{VIEW}', 'job' = '{JOB}', 'path' = '/tmp/x')",
            JOB,
            "drop 'path'",
        ),
        (f"CREATE TEMPORARY TABLE t (id INT) {WITH} LOCATION '/tmp/x'", JOB, "drop LOCATION"),
        (f"CREATE TABLE t (id INT) {WITH}", JOB, "running pipeline job"),
    ],
)
def test_refusals(sql: str, job: str | None, fragment: str) -> None:
    with pytest.raises(ForbiddenSql) as raised:
        plan(sql, pipeline_job=job)
    assert fragment in raised.value.message


def test_it_is_not_partitioned_and_lists_its_columns() -> None:
    with pytest.raises(CoreError, match="cannot be partitioned"):
        plan(f"CREATE TEMPORARY TABLE t (id INT) PARTITIONED BY (id) {WITH}")
    with pytest.raises(CoreError, match="needs its column list"):
        plan(f"CREATE TEMPORARY TABLE t {WITH}")
