"""The planner never refuses a statement only because sqlglot reads it otherwise than Spark
(issue 36): sqlglot's arity checks, nested comments, ``TEMP``, view column lists; and no
library's class name in any message. (On the worker: tests/sessions/worker/test_fidelity.py.)"""

from __future__ import annotations

import pytest

from core.errors import CoreError
from core.planner import ParseError
from tests.core.test_planner_support import plan

PLANNED = [
    "SELECT corr(DISTINCT x, y) FROM VALUES (1, 2) AS t(x, y)",
    "SELECT stack()",
    "SELECT from_json()",
    "SELECT concat_ws()",
    "SELECT format_string()",
    "SELECT substr('abc', 1, 2, 3, 4, 5)",
    "/*/**/*/ SELECT 1",
    "SELECT * FROM VALUES ('a', 2012, 1) AS t(course, year, e) "
    "PIVOT (ceil(sum(e)), avg(e) + 1 AS a1 FOR course IN ('a', 'b'))",
    "SELECT * FROM VALUES (1, 2) AS t(a, b) PIVOT (sum(b) AS s, avg(b) FOR a IN (1, 2))",
    "SELECT * FROM VALUES (1, 2) AS t(a, b) PIVOT (sum(b) s FOR a IN (1 AS one, 2))",
    "/* a /* b */ c */ SELECT 1 /* d /* e */ */",
    "SELECT a, b FROM VALUES (1, 2) AS t(a, b) "
    "GROUP BY CUBE(a, b), ROLLUP(a, b) GROUPING SETS(a, b)",
]


@pytest.mark.parametrize("sql", PLANNED)
def test_planned_and_sent_to_spark_unchanged(sql: str) -> None:
    planned = plan(sql)
    assert planned.action.value == "query"
    assert planned.sql == sql


def test_comment_markers_inside_strings_and_line_comments_are_text() -> None:
    sql = "SELECT '/* /* */' AS s -- /* /* \n, 2 AS n"
    assert plan(sql).sql == sql


@pytest.mark.parametrize(
    "sql",
    ["SELECT a +", "SELECT (1", "WITH t() AS (SELECT 1) SELECT * FROM t", "SELECT * FROM"],
)
def test_syntax_errors_stay_errors_without_class_names(sql: str) -> None:
    with pytest.raises(ParseError) as caught:
        plan(sql)
    assert "<class" not in caught.value.message and "sqlglot" not in caught.value.message


def test_temp_is_temporary() -> None:
    assert plan("CREATE TEMP VIEW v AS SELECT 1 AS a").args["temporary"] is True
    assert plan("DROP TEMP VIEW v").action.value == "drop_view"


def test_a_view_column_list_renames_its_query() -> None:
    planned = plan("CREATE TEMPORARY VIEW emp(id, `emp name`) AS VALUES (1, 'a')")
    expected = "SELECT * FROM (VALUES (1, 'a')\n) AS `emp`(`id`, `emp name`)"
    assert planned.sql == planned.args["query"] == expected


def test_a_view_column_comment_is_refused_with_its_reason() -> None:
    with pytest.raises(CoreError, match="Column comments in a view's column list"):
        plan("CREATE TEMPORARY VIEW v (a COMMENT 'x') AS SELECT 1")
