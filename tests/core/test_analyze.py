"""ANALYZE TABLE … COMPUTE STATISTICS: plans, column selection and refusals
(docs/statements.md, "ANALYZE TABLE")."""

from __future__ import annotations

import json

import pytest

from core.datatypes import parse_data_type
from core.errors import CoreError, NotFound, PermissionDenied
from core.planner import ParseError, Plan, UnsupportedStatement, statement_kind
from core.planner.analyze import column_stats_kind
from core.schema import PhysicalColumn
from tests.core.test_planner_support import MemoryCatalog, plan, sample_catalog


def _catalog() -> MemoryCatalog:
    catalog = sample_catalog()
    catalog.add_table(
        "c.d.wide",
        [
            "id BIGINT NOT NULL",
            "name STRING",
            "raw BINARY",
            "tags ARRAY<STRING>",
            "attrs MAP<STRING, INT>",
            "point STRUCT<x: DOUBLE, y: DOUBLE>",
            "born DATE",
            PhysicalColumn("Odd Name", parse_data_type("DECIMAL(10, 2)")),
        ],
    )
    catalog.add_table("c.d.tmp", ["id BIGINT"], temporary=True)
    catalog.add_view("c.d.tmp_view", "SELECT 1 AS id", temporary=True)
    catalog.add_table("c.d.staged", ["id BIGINT"], status="staged", staged_by_job="job-7")
    catalog.add_table("c.d.theirs", ["id BIGINT"])
    catalog.read_only.add(("c", "d", "theirs"))
    return catalog


def _plan(sql: str) -> Plan:
    result = plan(sql, _catalog())
    assert Plan.from_dict(json.loads(json.dumps(result.to_dict()))) == result
    return result


def test_for_all_columns_plans_every_column_with_its_figures() -> None:
    result = _plan("ANALYZE TABLE wide COMPUTE STATISTICS FOR ALL COLUMNS")
    assert result.kind == "ddl"
    assert result.action == "analyze_table"
    assert result.needs_spark
    assert result.target == ("c", "d", "wide")
    assert [r.alias for r in result.relations] == ["__tessera_r1"]
    assert result.relations[0].identifier == ("c", "d", "wide")
    assert result.args["mode"] == "columns"
    assert result.args["alias"] == "__tessera_r1"
    assert [(c["name"], c["stats"]) for c in result.args["columns"]] == [
        ("id", "full"),
        ("name", "length"),
        ("raw", "length"),
        ("tags", "nulls"),
        ("attrs", "nulls"),
        ("point", "nulls"),
        ("born", "full"),
        ("Odd Name", "full"),
    ]
    assert result.args["columns"][0]["data_type"] == "BIGINT NOT NULL"


def test_for_columns_takes_a_subset_in_the_order_given_case_insensitively() -> None:
    result = _plan("analyze table c.d.WIDE compute statistics for columns NAME, `odd name`, id")
    assert [c["name"] for c in result.args["columns"]] == ["name", "Odd Name", "id"]


def test_plain_and_noscan_modes() -> None:
    table = _plan("ANALYZE TABLE wide COMPUTE STATISTICS")
    assert table.args["mode"] == "table"
    assert table.args["columns"] == []
    assert len(table.relations) == 1
    noscan = _plan("ANALYZE TABLE wide COMPUTE STATISTICS NOSCAN;")
    assert noscan.args["mode"] == "noscan"
    assert noscan.relations == ()
    assert noscan.args["alias"] is None
    assert noscan.needs_spark


def test_statement_kind_without_a_plan_is_ddl() -> None:
    assert statement_kind("ANALYZE TABLE nope COMPUTE STATISTICS") == "ddl"


def test_an_unknown_column_is_named() -> None:
    with pytest.raises(CoreError) as caught:
        _plan("ANALYZE TABLE wide COMPUTE STATISTICS FOR COLUMNS id, nope")
    assert caught.value.code == "VALIDATION_ERROR"
    assert "`nope`" in caught.value.message
    assert caught.value.details["column"] == "nope"


def test_a_column_named_twice_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="named twice"):
        _plan("ANALYZE TABLE wide COMPUTE STATISTICS FOR COLUMNS id, ID")


def test_views_temporary_objects_and_staged_tables_are_refused() -> None:
    with pytest.raises(CoreError, match="is a view"):
        _plan("ANALYZE TABLE big_orders COMPUTE STATISTICS")
    with pytest.raises(CoreError, match="temporary view"):
        _plan("ANALYZE TABLE tmp_view COMPUTE STATISTICS")
    with pytest.raises(CoreError, match="temporary table"):
        _plan("ANALYZE TABLE tmp COMPUTE STATISTICS FOR ALL COLUMNS")
    with pytest.raises(CoreError, match="job-7"):
        _plan("ANALYZE TABLE staged COMPUTE STATISTICS")
    with pytest.raises(NotFound):
        _plan("ANALYZE TABLE missing COMPUTE STATISTICS")


def test_a_table_the_user_may_not_change_is_refused() -> None:
    with pytest.raises(PermissionDenied) as caught:
        _plan("ANALYZE TABLE theirs COMPUTE STATISTICS FOR ALL COLUMNS")
    assert caught.value.code == "PERMISSION_DENIED"
    assert caught.value.details["identifier"] == ["c", "d", "theirs"]


@pytest.mark.parametrize(
    ("sql", "error"),
    [
        ("ANALYZE TABLE wide", ParseError),
        ("ANALYZE TABLE wide COMPUTE", ParseError),
        ("ANALYZE TABLE wide COMPUTE STATISTICS FOR", ParseError),
        ("ANALYZE TABLE wide COMPUTE STATISTICS FOR COLUMNS", ParseError),
        ("ANALYZE TABLE wide COMPUTE STATISTICS NOSCAN extra", ParseError),
        ("ANALYZE wide COMPUTE STATISTICS", ParseError),
        ("ANALYZE TABLES IN d COMPUTE STATISTICS", UnsupportedStatement),
        ("ANALYZE TABLE wide PARTITION (id = 1) COMPUTE STATISTICS", UnsupportedStatement),
    ],
)
def test_bad_syntax_is_refused(sql: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        _plan(sql)


def test_a_file_path_is_not_a_table() -> None:
    with pytest.raises(CoreError):
        _plan("ANALYZE TABLE parquet.`/etc` COMPUTE STATISTICS")


@pytest.mark.parametrize(
    ("type_text", "kind"),
    [
        ("INT", "full"),
        ("DOUBLE", "full"),
        ("DECIMAL(10, 2)", "full"),
        ("BOOLEAN", "full"),
        ("TIMESTAMP", "full"),
        ("STRING", "length"),
        ("VARCHAR(10)", "length"),
        ("BINARY", "length"),
        ("ARRAY<INT>", "nulls"),
        ("MAP<STRING, STRING>", "nulls"),
        ("STRUCT<a: INT>", "nulls"),
    ],
)
def test_column_stats_kind(type_text: str, kind: str) -> None:
    assert column_stats_kind(parse_data_type(type_text)) == kind
    assert column_stats_kind(None) == "nulls"
