"""Never refuse what Spark accepts (issue 36, "Why" and item 2), on the REST path with plain
PySpark as the oracle in the same run: statements sqlglot could not read, or the guard
refused, are answered as plain PySpark answers them, or refused with Spark's own error
class and sentence; no library's class name reaches the user."""

from __future__ import annotations

from typing import Any

import pytest

from tests.worker_helpers import Pipeline

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker"),
]

ANSWERED = [
    "SELECT corr(DISTINCT x, y) AS c FROM VALUES (1, 2), (2, 3), (3, 7) AS t(x, y)",
    "/*/**/*/ SELECT 1 AS one",
    "/* a /* nested */ comment */ SELECT 2 AS two /* and /* another */ */",
    "SELECT '/* not a comment */' AS s",
    "SELECT a, b, count(*) AS n FROM VALUES (1, 2), (1, 3) AS t(a, b) "
    "GROUP BY ROLLUP(a, b) ORDER BY a, b",
    "SELECT * FROM VALUES ('dotNET', 2012, 10000), ('Java', 2012, 20000), ('dotNET', 2013, 48000) "
    "AS courses(course, year, earnings) "
    "PIVOT (ceil(sum(earnings)), avg(earnings) + 1 AS a1 FOR course IN ('dotNET', 'Java')) "
    "ORDER BY year",
]


def plain_rows(plain_spark: Any, sql: str) -> list[list[Any]]:
    return [list(row) for row in plain_spark.sql(sql).collect()]


def plain_error(plain_spark: Any, sql: str) -> str:
    with pytest.raises(Exception) as raised:
        plain_spark.sql(sql).collect()
    return str(raised.value)


@pytest.mark.parametrize("sql", ANSWERED)
def test_statements_spark_answers_are_answered_alike(alice_sql: Pipeline, plain_spark, sql):
    assert alice_sql.rows(sql) == plain_rows(plain_spark, sql)


def test_create_temp_view_is_a_temporary_view(alice_sql: Pipeline, catalog: str):
    alice_sql.ok(f"USE {catalog}.d")  # temporary objects live in the current database
    alice_sql.ok("CREATE TEMP VIEW tv AS SELECT 1 AS a UNION ALL SELECT 2")
    assert alice_sql.rows("SELECT sum(a) AS s FROM tv") == [[3]]
    alice_sql.ok("DROP TEMP VIEW tv")  # Tessera's DROP TEMPORARY, TEMP as in CREATE
    assert alice_sql.run("SELECT * FROM tv")["error"]["code"] == "NOT_FOUND"


# (statement, Spark's error class)
SPARK_REFUSES = [
    ("SELECT stack()", "WRONG_NUM_ARGS"),
    ("SELECT from_json()", "WRONG_NUM_ARGS"),
    ("SELECT concat_ws()", "WRONG_NUM_ARGS"),
    ("SELECT format_string()", "WRONG_NUM_ARGS"),
    (
        "SELECT a, b, count(*) FROM VALUES (1, 2) AS t(a, b) "
        "GROUP BY CUBE(a, b), ROLLUP(a, b) GROUPING SETS(a, b)",
        "UNRESOLVED_ROUTINE",
    ),
]


@pytest.mark.parametrize(("sql", "error_class"), SPARK_REFUSES)
def test_statements_spark_refuses_answer_sparks_sentence(
    alice_sql: Pipeline, plain_spark, sql: str, error_class: str
):
    assert f"[{error_class}" in plain_error(plain_spark, sql)
    job = alice_sql.run(sql)
    assert job["status"] == "FAILED"
    error = job["error"]
    assert error["code"] == "SPARK_ERROR", error
    assert f"[{error_class}" in error["message"], error
    assert "sqlglot" not in error["message"] and "<class" not in error["message"]


def test_a_relation_the_planner_did_not_see_is_still_refused(alice_sql: Pipeline):
    """Hostile: sqlglot drops a call's surplus arguments when it accepts a statement for
    Spark to judge; a relation inside them was never resolved nor granted, so Spark's parse
    on the worker refuses it before anything runs (docs/security.md §1)."""
    job = alice_sql.run("SELECT substr('abc', 1, 2, 3, 4, (SELECT max(x) FROM other.secret)) AS s")
    assert job["status"] == "FAILED"
    assert job["error"]["code"] == "FORBIDDEN_SQL", job["error"]
    assert job["error"]["details"]["checked_by"] == "spark_parser"


def test_a_call_that_is_not_a_function_stays_refused(alice_sql: Pipeline):
    """Hostile: CUBE and ROLLUP pass as syntax only; reflect() and friends stay refused
    beside them."""
    job = alice_sql.run(
        "SELECT a FROM VALUES (1) AS t(a) "
        "GROUP BY CUBE(a), reflect('java.lang.System', 'exit', '0') GROUPING SETS(a)"
    )
    assert job["status"] == "FAILED"
    assert job["error"]["code"] == "FORBIDDEN_SQL", job["error"]
    assert "reflect" in job["error"]["message"]


def test_a_view_column_list_names_the_columns(alice_sql: Pipeline, catalog: str, plain_spark):
    alice_sql.ok(f"USE {catalog}.d")
    create = "CREATE TEMPORARY VIEW emp(id, emp_name) AS VALUES (1, 'a'), (2, 'b')"
    alice_sql.ok(create)
    query = "SELECT emp_name, id FROM emp ORDER BY id"
    plain_spark.sql(create.replace("emp(", "emp_plain(")).collect()
    expected = plain_rows(plain_spark, query.replace("emp ", "emp_plain "))
    assert alice_sql.rows(query) == expected == [["a", 1], ["b", 2]]
    # Too few names for the query's columns: Spark's own refusal, no view.
    job = alice_sql.run("CREATE TEMPORARY VIEW bad(id) AS VALUES (1, 'a')")
    assert job["status"] == "FAILED" and "<class" not in job["error"]["message"]
    assert alice_sql.run("SELECT * FROM bad")["error"]["code"] == "NOT_FOUND"
