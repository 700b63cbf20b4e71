"""Spark's parse and analysis errors carry their place in the statement the user wrote
(``details.line``/``column``/``span``), mapped back through the splice: the text Spark ran
has aliases (``__tessera_r0``) where the user wrote table names of other lengths."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from core.planner.positions import splice
from engine import errors, sqlguard

pytestmark = pytest.mark.spark


@pytest.fixture
def orders(plain_spark: Any) -> Iterator[Any]:
    # A job's session as the worker makes it: variable substitution off (the guard's check).
    session = plain_spark.newSession()
    session.conf.set("spark.sql.variable.substitute", "false")
    session.range(3).selectExpr("id", "id * 2 AS qty").createOrReplaceTempView("__tessera_r0")
    session.range(3).selectExpr("id AS oid").createOrReplaceTempView("__tessera_r1")
    yield session


def _spliced(original: str, references: dict[str, str]) -> str:
    """``original`` with each name replaced as the planner splices it."""
    run = []
    for name, alias in references.items():
        start = original.index(name)
        run.append((start, start + len(name), alias))
    return splice(original, 0, len(original), run)


def _error(exc: BaseException, spliced: str, original: str) -> dict[str, Any]:
    return errors.job_error(exc, {}, texts=(spliced, original)).to_json()


def _pointed(original: str, error: dict[str, Any]) -> str:
    start, end = error["details"]["span"]
    return original[start:end]


def test_an_analysis_error_after_a_spliced_reference_points_at_the_column(orders: Any) -> None:
    original = (
        "SELECT o.id\nFROM sales.shop.orders AS o\n  JOIN it ON o.id = it.oid\nWHERE o.qtty > 1"
    )
    spliced = _spliced(
        original,
        {"sales.shop.orders": "`__tessera_r0`", "it ON": "`__tessera_r1` AS `it` ON"},
    )
    assert len(spliced) != len(original)
    with pytest.raises(Exception) as raised:
        orders.sql(spliced).collect()
    error = _error(raised.value, spliced, original)
    assert error["code"] == "SPARK_ERROR"
    assert error["details"]["condition"].startswith("UNRESOLVED_COLUMN")
    assert _pointed(original, error) == "o.qtty"
    assert (error["details"]["line"], error["details"]["column"]) == (4, 7)
    assert "__tessera" not in error["message"]


def test_a_parse_error_points_at_the_token_in_the_users_text(orders: Any) -> None:
    original = "SELECT *\n  FROM c.d.orders\n  WHERE id IN (1, 2,, 3)"
    spliced = _spliced(original, {"c.d.orders": "`__tessera_r0` AS `orders`"})
    with pytest.raises(Exception) as raised:
        sqlguard.parse(orders, spliced)  # the guard's parse: where the worker meets it
    error = _error(raised.value, spliced, original)
    assert error["details"]["condition"] == "PARSE_SYNTAX_ERROR"
    # Spark points at the second comma (the token it did not expect)
    assert error["details"]["span"][0] == original.index(",,") + 1
    assert _pointed(original, error) == ","
    assert error["details"]["line"] == 3
    assert error["details"]["column"] == original.split("\n")[2].index(",,") + 2
    # Spark's "(line 3, pos N)" counts in the user's statement, not the spliced text
    column = error["details"]["column"] - 1
    assert f"(line 3, pos {column})" in error["message"]


def test_a_statement_run_as_written_keeps_sparks_place(orders: Any) -> None:
    sql = "SELECT qtty FROM __tessera_r0"
    with pytest.raises(Exception) as raised:
        orders.sql(sql).collect()
    error = _error(raised.value, sql, sql)
    assert error["details"]["span"] == [7, 11]
    assert (error["details"]["line"], error["details"]["column"]) == (1, 8)


def test_a_position_in_another_text_is_not_reported(orders: Any) -> None:
    # Spark parsed a different text (a function's body, an EXPLAIN): no place is made up.
    with pytest.raises(Exception) as raised:
        sqlguard.parse(orders, "SELECT 1 WHERE x IN (1, 2,, 3)")
    error = _error(raised.value, "SELECT 1", "SELECT 1")
    assert "line" not in error["details"] and "span" not in error["details"]
    assert "(line" not in error["message"]
