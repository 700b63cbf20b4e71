"""A job's Spark parse or analysis error carries its place in the statement the user wrote
(``error.details.line``/``column``/``span``, docs/api.md), through the real planner, which
splices the table's name into an alias of another length before Spark sees the text."""

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


def _pointed(sql: str, error: dict[str, Any]) -> str:
    start, end = error["details"]["span"]
    return sql[start:end]


def test_spark_errors_point_at_the_users_text(alice_sql: Pipeline, catalog: str) -> None:
    alice_sql.ok(f"CREATE TABLE {catalog}.d.orders (id INT, qty INT)")

    analysis = f"SELECT o.id\n  FROM {catalog}.d.orders AS o\n  WHERE o.qtty > 1"
    job = alice_sql.run(analysis)
    assert job["status"] == "FAILED"
    error = job["error"]
    assert error["code"] == "SPARK_ERROR"
    assert error["details"]["condition"].startswith("UNRESOLVED_COLUMN")
    assert _pointed(analysis, error) == "o.qtty"
    assert (error["details"]["line"], error["details"]["column"]) == (3, 9)

    parse = f"SELECT *\n  FROM {catalog}.d.orders\n  WHERE id IN (1, 2,, 3)"
    job = alice_sql.run(parse)
    assert job["status"] == "FAILED"
    error = job["error"]
    assert error["details"]["condition"] == "PARSE_SYNTAX_ERROR"
    assert error["details"]["span"][0] == parse.index(",,") + 1
    assert error["details"]["line"] == 3
    assert f"(line 3, pos {error['details']['column'] - 1})" in error["message"]
    assert "__tessera" not in error["message"]


def test_an_insert_points_at_its_query_in_the_statement(alice_sql: Pipeline, catalog: str) -> None:
    alice_sql.ok(f"CREATE TABLE {catalog}.d.orders (id INT, qty INT)")
    # Spark runs only the query, with an alias for the table: the place is in the INSERT.
    insert = f"INSERT INTO {catalog}.d.orders\nSELECT id, qtty FROM {catalog}.d.orders"
    job = alice_sql.run(insert)
    assert job["status"] == "FAILED"
    error = job["error"]
    assert error["details"]["condition"].startswith("UNRESOLVED_COLUMN")
    assert _pointed(insert, error) == "qtty"
    assert (error["details"]["line"], error["details"]["column"]) == (2, 12)


def test_a_runtime_error_with_sparks_context_is_placed_too(alice_sql: Pipeline) -> None:
    sql = "SELECT id,\n  1 / (id - id) AS x FROM range(2)"
    job = alice_sql.run(sql)
    assert job["status"] == "FAILED"
    error = job["error"]
    assert error["details"]["condition"] == "DIVIDE_BY_ZERO"
    assert _pointed(sql, error) == "1 / (id - id)"
    assert error["details"]["line"] == 2
