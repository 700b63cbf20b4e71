"""Streaming mode in the planner (core/planner/streaming.py, docs/streaming.md): which
statements become streams, what their plans carry (``args.streaming``, ``streaming`` and
``watermark`` on the tables read), and what is refused before anything runs."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from core.datatypes import parse_data_type
from core.errors import CoreError
from core.planner import Action, Plan, plan_statement
from core.planner.streaming import declared_watermark
from core.schema import ResolvedColumn, ResolvedSchema, ResolvedWatermark, WatermarkSpec
from tests.core.test_planner_support import (
    STORAGE_ROOT,
    MemoryCatalog,
    context,
    sample_catalog,
)

EVENTS = f"{STORAGE_ROOT}/clicks"


def clicks_catalog(watermark: str | None = "ts - INTERVAL '5' SECOND") -> MemoryCatalog:
    catalog = sample_catalog()
    catalog.add_table(
        "c.d.clicks",
        ["ts TIMESTAMP", "user_id BIGINT", "url STRING"],
        options={"connector": "parquet", "path": EVENTS},
        watermarks=[WatermarkSpec("ts", watermark)] if watermark else [],
    )
    catalog.add_table("c.d.sink", ["ts TIMESTAMP", "user_id BIGINT", "url STRING"])
    return catalog


def streaming(sql: str, catalog: MemoryCatalog | None = None, **extra: Any) -> Plan:
    ctx = replace(context(), runtime_mode="streaming", checkpoint_interval_ms=2000, **extra)
    return plan_statement(sql, catalog or clicks_catalog(), ctx)


def batch(sql: str, catalog: MemoryCatalog | None = None) -> Plan:
    return plan_statement(sql, catalog or clicks_catalog(), context())


def refused(sql: str, *words: str, mode: str = "streaming") -> CoreError:
    with pytest.raises(CoreError) as raised:
        if mode == "streaming":
            streaming(sql)
        else:
            batch(sql)
    for word in words:
        assert word in raised.value.message, raised.value.message
    return raised.value


def test_a_streaming_ctas_reads_its_tables_as_streams_with_their_watermark() -> None:
    plan = streaming("CREATE TABLE c.d.copy AS SELECT ts, user_id FROM clicks")
    assert plan.action == Action.CTAS
    assert plan.args["streaming"] == {"trigger_ms": 2000}
    assert plan.args["atomic"] is False  # FLIP-218: the table exists from the start
    (relation,) = plan.relations
    assert relation.streaming is True
    assert relation.watermark == {"column": "ts", "delay": "5 seconds"}
    as_json = plan.to_dict()["relations"][0]
    assert as_json["streaming"] is True
    assert as_json["watermark"] == {"column": "ts", "delay": "5 seconds"}
    assert Plan.from_dict(plan.to_dict()) == plan


def test_batch_plans_carry_the_watermark_but_are_not_streams() -> None:
    plan = batch("SELECT * FROM clicks")
    assert "streaming" not in plan.args
    assert plan.relations[0].streaming is False
    assert "streaming" not in plan.to_dict()["relations"][0]
    assert plan.relations[0].watermark == {"column": "ts", "delay": "5 seconds"}


def test_streaming_insert_select_and_a_windowed_aggregation() -> None:
    insert = streaming("INSERT INTO sink SELECT * FROM clicks")
    assert insert.action == Action.INSERT and insert.args["streaming"]["trigger_ms"] == 2000
    windowed = streaming(
        "SELECT window(ts, '10 seconds') AS w, count(*) AS n FROM clicks "
        "GROUP BY window(ts, '10 seconds')"
    )
    assert windowed.action == Action.QUERY and "streaming" in windowed.args
    # The user's text reaches Spark as written (the stand-in is sqlglot's only).
    assert "GROUP BY window(ts, '10 seconds')" in windowed.sql
    assert [f.identifier[-1] for f in windowed.functions] == []  # built-ins: not registered


def test_the_mode_per_statement() -> None:
    ctas = batch(
        "CREATE TABLE c.d.copy WITH ('execution.runtime-mode' = 'streaming') AS "
        "SELECT * FROM clicks"
    )
    assert "streaming" in ctas.args
    assert "execution.runtime-mode" not in ctas.args["options"]  # never stored
    assert "execution.runtime-mode" not in ctas.args
    insert = batch(
        "INSERT INTO sink /*+ OPTIONS('execution.runtime-mode' = 'streaming') */ "
        "SELECT * FROM clicks"
    )
    assert "streaming" in insert.args and "execution.runtime-mode" not in insert.args
    # ... and back to batch in a streaming session.
    once = streaming(
        "INSERT INTO sink /*+ OPTIONS('execution.runtime-mode' = 'batch') */ SELECT * FROM clicks"
    )
    assert "streaming" not in once.args and not once.relations[0].streaming


def test_statements_that_read_nothing_run_as_in_batch_mode() -> None:
    for sql in ("SHOW TABLES", "SET 'result.max_rows' = '10'", "CREATE VIEW v AS SELECT 1 AS x"):
        assert "streaming" not in streaming(sql).args


@pytest.mark.parametrize(
    ("sql", "words"),
    [
        ("EXPLAIN SELECT * FROM clicks", ("EXPLAIN of a stream",)),
        (
            "EXECUTE STATEMENT SET BEGIN INSERT INTO sink SELECT * FROM clicks; END",
            ("batch mode only",),
        ),
        ("INSERT OVERWRITE sink SELECT * FROM clicks", ("OVERWRITE cannot stream",)),
        (
            "INSERT INTO c.d.events SELECT ts, url FROM clicks",
            ("external", "managed tables only"),
        ),
        (
            f"CREATE TABLE c.d.out USING parquet LOCATION '{STORAGE_ROOT}/out' AS "
            "SELECT * FROM clicks",
            ("managed table",),
        ),
        (
            "CREATE TABLE c.d.out WITH ('table.ctas.atomic' = 'true') AS SELECT * FROM clicks",
            ("table.ctas.atomic",),
        ),
        ("SELECT 1 AS x", ("reads none",)),
        (
            "CREATE TABLE c.d.out WITH ('execution.runtime-mode' = 'sometimes') AS SELECT 1",
            ("'batch' or 'streaming'",),
        ),
    ],
)
def test_refused_in_streaming_mode(sql: str, words: tuple[str, ...]) -> None:
    refused(sql, *words)


def test_a_statement_set_member_cannot_ask_for_streaming() -> None:
    refused(
        "EXECUTE STATEMENT SET BEGIN INSERT INTO sink /*+ OPTIONS('execution.runtime-mode' = "
        "'streaming') */ SELECT * FROM clicks; END",
        "statement set runs in batch mode",
        mode="batch",
    )


def test_a_watermark_spark_cannot_express_is_refused_in_streaming_mode_only() -> None:
    catalog = clicks_catalog("ts - INTERVAL '5' SECOND + INTERVAL '1' SECOND")
    assert batch("SELECT * FROM clicks", catalog).relations[0].watermark == {
        "column": "ts",
        "expression": "ts - INTERVAL '5' SECOND + INTERVAL '1' SECOND",
    }
    with pytest.raises(CoreError) as raised:
        streaming("SELECT * FROM clicks", catalog)
    assert "cannot be applied to a stream" in raised.value.message


@pytest.mark.parametrize(
    ("expression", "delay"),
    [
        ("ts", "0 seconds"),
        ("ts - INTERVAL '5' SECOND", "5 seconds"),
        ("`ts` - interval '2' minutes", "2 minutes"),
        ("ts - INTERVAL '1 hour'", "1 hours"),
        ("ts - INTERVAL 3 DAY", "3 days"),
        ("ts - INTERVAL '250' MILLISECOND", "250 milliseconds"),
    ],
)
def test_watermarks_as_withwatermark_takes_them(expression: str, delay: str) -> None:
    schema = ResolvedSchema(
        (ResolvedColumn("ts", "physical", parse_data_type("TIMESTAMP")),),
        (ResolvedWatermark("ts", expression),),
    )
    assert declared_watermark(schema) == {"column": "ts", "delay": delay}


def test_a_watermark_on_another_column_than_its_expression_is_not_a_delay() -> None:
    schema = ResolvedSchema(
        (ResolvedColumn("ts", "physical", parse_data_type("TIMESTAMP")),),
        (ResolvedWatermark("ts", "other - INTERVAL '5' SECOND"),),
    )
    assert declared_watermark(schema) == {
        "column": "ts",
        "expression": "other - INTERVAL '5' SECOND",
    }


def test_the_rate_connector() -> None:
    catalog = clicks_catalog()
    created = plan_statement(
        "CREATE TEMPORARY TABLE r WITH ('connector' = 'rate', 'rows-per-second' = '50')",
        catalog,
        context(),
    )
    assert created.args["options"] == {"connector": "rate", "rows-per-second": "50"}
    assert [c["name"] for c in created.args["schema"]["columns"]] == ["timestamp", "value"]


@pytest.mark.parametrize(
    ("sql", "words"),
    [
        (
            "CREATE TABLE c.d.r (`timestamp` TIMESTAMP) WITH ('connector' = 'rate')",
            ("Only a temporary table",),
        ),
        (
            "CREATE TEMPORARY TABLE r (v STRING) WITH ('connector' = 'rate')",
            ("`v` STRING is not one of them",),
        ),
        (
            "CREATE TEMPORARY TABLE r WITH ('connector' = 'rate', 'rows-per-second' = '0')",
            ("from 1 to 1,000,000",),
        ),
        (
            "CREATE TEMPORARY TABLE r WITH ('connector' = 'rate', 'path' = '/etc')",
            ("drop 'path'",),
        ),
        (
            f"CREATE TEMPORARY TABLE r WITH ('connector' = 'rate') LOCATION '{STORAGE_ROOT}/x'",
            ("drop LOCATION",),
        ),
    ],
)
def test_refused_rate_tables(sql: str, words: tuple[str, ...]) -> None:
    with pytest.raises(CoreError) as raised:
        plan_statement(sql, clicks_catalog(), context())
    for word in words:
        assert word in raised.value.message, raised.value.message


def test_a_rate_table_is_read_as_a_stream_only() -> None:
    catalog = clicks_catalog()
    catalog.add_table(
        "c.d.r",
        ["timestamp TIMESTAMP", "value BIGINT"],
        options={"connector": "rate", "rows-per-second": "50"},
        temporary=True,
    )
    plan = streaming("SELECT value FROM r", catalog)
    relation = plan.relations[0]
    assert (relation.format, relation.path, relation.streaming) == ("rate", "", True)
    assert relation.options == {"rowsPerSecond": "50", "numPartitions": "1"}
    with pytest.raises(CoreError) as raised:
        batch("SELECT value FROM r", catalog)
    assert "SET 'execution.runtime-mode' = 'streaming'" in raised.value.message
    # A view over it may be defined in batch mode; reading it is a stream.
    view = batch("CREATE TEMPORARY VIEW v AS SELECT value FROM r", catalog)
    assert view.action == Action.CREATE_VIEW


@pytest.mark.parametrize("fmt", ["parquet", "json", "csv", "orc", "text"])
def test_file_formats_a_stream_reads(fmt: str) -> None:
    catalog = clicks_catalog()
    catalog.add_table(
        "c.d.files",
        ["line STRING"],
        options={"connector": fmt, "path": f"{STORAGE_ROOT}/files-{fmt}"},
    )
    sql = "SELECT line FROM c.d.files"
    if fmt == "text":  # read as a batch only (docs/streaming.md, "Formats …")
        with pytest.raises(CoreError) as raised:
            streaming(sql, catalog)
        assert raised.value.code == "UNSUPPORTED_STATEMENT"
        assert "csv, json, orc, parquet" in raised.value.message
        assert batch(sql, catalog).relations[0].format == "text"
        return
    (relation,) = streaming(sql, catalog).relations
    assert relation.streaming is True and relation.format == fmt
    assert relation.path == f"{STORAGE_ROOT}/files-{fmt}"


def test_a_pipelines_own_statements_are_never_streams() -> None:
    """A pipeline is a batch program: its statements (``pipeline_job`` in the context) are
    refused in streaming mode instead of starting a stream that never ends and that no
    stream slot counts (docs/pipelines.md)."""
    with pytest.raises(CoreError) as raised:
        streaming("SELECT ts, user_id FROM clicks", pipeline_job="job-1")
    error = raised.value
    assert error.code == "STREAMING_UNSUPPORTED"
    assert "A pipeline runs its statements once, in batch mode" in error.message
    assert "SET 'execution.runtime-mode' = 'batch'" in error.message
    assert error.details == {"pipeline": True}
    with pytest.raises(CoreError) as hinted:  # the mode asked by the statement itself
        plan_statement(
            "CREATE TABLE c.d.copy WITH ('execution.runtime-mode' = 'streaming') AS "
            "SELECT ts FROM clicks",
            clicks_catalog(),
            replace(context(), pipeline_job="job-1"),
        )
    assert hinted.value.code == "STREAMING_UNSUPPORTED"
    assert "drop the statement's 'execution.runtime-mode' = 'streaming' option" in (
        hinted.value.message
    )
    # The same statements in batch mode, and streams outside a pipeline, are planned.
    plan = plan_statement(
        "SELECT ts FROM clicks", clicks_catalog(), replace(context(), pipeline_job="job-1")
    )
    assert "streaming" not in plan.args
    assert streaming("SELECT ts, user_id FROM clicks").args["streaming"] == {"trigger_ms": 2000}
