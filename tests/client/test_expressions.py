"""tessera.expressions and the Table operations built on them: the SQL they render, before
anything is sent (pure Python, no server). tests/client/test_table_api.py runs them on Spark."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

import pytest
from tessera import Over, Session, Slide, Tumble
from tessera.elements import values_query
from tessera.expressions import (
    CURRENT_RANGE,
    UNBOUNDED_ROW,
    call,
    col,
    count,
    if_then_else,
    lit,
    when,
)
from tessera.result import Row
from tessera.table import Table

from tests.client.conftest import tessera


class NoServer:
    """A TableEnvironment stand-in: building SQL must not talk to anyone."""


def from_path(path: str) -> Table:
    return tessera.TableEnvironment.from_path(NoServer(), path)  # type: ignore[arg-type]


def test_operators_render_with_the_grouping_of_the_tree():
    assert str((col("a") + 1) * 2) == "(`a` + 1) * 2"
    assert str(col("a") + 1 * 2) == "`a` + 2"
    assert str(2 - col("a")) == "2 - `a`"
    assert str(-(col("a") - col("b"))) == "-(`a` - `b`)"
    assert str(col("a") / 4 % 3) == "(`a` / 4) % 3"
    assert str(col("a") ** 2) == "POWER(`a`, 2)"
    condition = ~(col("x") > 1) & col("y").is_null | col("z").is_not_null
    assert str(condition) == "((NOT (`x` > 1)) AND (`y` IS NULL)) OR (NOT (`z` IS NULL))"
    assert str(col("a") == "b") == "`a` = 'b'"  # a Python value is a literal, not SQL
    assert str(col("a") != None) == "`a` <> NULL"  # noqa: E711 - SQL's comparison, on purpose
    assert str(col("a").between(1, 5)) == "`a` BETWEEN 1 AND 5"
    assert str(col("a").not_between(1, 5)) == "NOT (`a` BETWEEN 1 AND 5)"
    assert str(col("a").in_(1, "x", None)) == "`a` IN (1, 'x', NULL)"
    assert str(col("a").like("x%")) == "`a` LIKE 'x%'"
    assert str(col("a").cast("DECIMAL(10, 2)")) == "CAST(`a` AS DECIMAL(10, 2))"
    assert str(col("s").get("f")) == "`s`.`f`" and str(col("xs").get(0)) == "`xs`[0]"


def test_aggregates_functions_and_case():
    assert str(col("a").sum) == "SUM(`a`)" and str(count(col("*"))) == "COUNT(*)"
    assert str(col("a").count.distinct) == "COUNT(DISTINCT `a`)"
    assert str(col("a").sum0) == "COALESCE(SUM(`a`), 0)"
    assert str(col("a").avg.alias("mean")) == "AVG(`a`) AS `mean`"
    assert str(col("n").upper_case) == "UPPER(`n`)" and str(col("n").round(2)) == "ROUND(`n`, 2)"
    assert str(col("n").substring(2, 3)) == "SUBSTRING(`n`, 2, 3)"
    assert str(call("my_db.f", col("a"), "x")) == "MY_DB.F(`a`, 'x')"
    assert str(if_then_else(col("a") > 0, "+", "-")) == "IF(`a` > 0, '+', '-')"
    case = when(col("a") > 9, "big").when(col("a") > 0, "small").otherwise(None).alias("size")
    assert str(case) == (
        "CASE WHEN `a` > 9 THEN 'big' WHEN `a` > 0 THEN 'small' ELSE NULL END AS `size`"
    )
    assert str(when(col("a") > 0, 1)) == "CASE WHEN `a` > 0 THEN 1 END"
    assert str(when(col("a") > 0, 1) + 1) == "(CASE WHEN `a` > 0 THEN 1 END) + 1"
    with pytest.raises(tessera.ValidationError):
        col("a").sum.distinct.distinct  # noqa: B018 - raises
    with pytest.raises(tessera.ValidationError):
        col("a").distinct  # noqa: B018 - not an aggregate


def test_hostile_names_and_values_stay_one_token():
    assert str(col("a`b")) == "`a``b`"
    assert str(col("x` FROM t; DROP TABLE t --")) == "`x`` FROM t; DROP TABLE t --`"
    assert str(col("o", "id")) == "`o`.`id`" and str(col("a.b")) == "`a.b`"
    assert str(col("*")) == "*"
    assert str(lit("it's")) == "'it\\'s'"
    assert str(lit("back\\slash")) == "'back\\\\slash'"
    assert str(lit("x' OR 1=1 --")) == "'x\\' OR 1=1 --'"
    assert str(lit("\\' OR 1=1 --")) == "'\\\\\\' OR 1=1 --'"
    assert str(lit(col("a`b").alias("c`d"))) == "`a``b` AS `c``d`"
    for bad in ("f(", "f; DROP TABLE t", "a b", "`f`", "", "f.g.h.i", "1f"):
        with pytest.raises(tessera.ValidationError):
            call(bad)
    for bad_name in ("", None, 5):
        with pytest.raises(tessera.ValidationError):
            col(bad_name)  # type: ignore[arg-type]
    with pytest.raises(tessera.ValidationError):
        col("a").alias("")
    for bad_type in ("INT) FROM t --", "INT garbage", "DECIMAL(10, 2) x", "", "NOT_A_TYPE("):
        with pytest.raises((tessera.ParseError, tessera.ValidationError)):
            col("a").cast(bad_type)
    with pytest.raises(tessera.ValidationError, match="TIME"):
        col("a").cast("TIME")
    with pytest.raises(tessera.ValidationError, match="truth value"):
        bool(col("a") > 1)


def test_literals_of_every_python_type():
    assert str(lit(None)) == "NULL"
    assert (str(lit(True)), str(lit(False))) == ("TRUE", "FALSE")
    assert str(lit(7)) == "7" and str(lit(-(2**63))) == "-9223372036854775808"
    assert str(lit(1.5)) == "CAST('1.5' AS DOUBLE)"
    assert str(lit(1e300)) == "CAST('1e+300' AS DOUBLE)"
    assert str(lit(float("nan"))) == "CAST('NaN' AS DOUBLE)"
    assert str(lit(float("-inf"))) == "CAST('-Infinity' AS DOUBLE)"
    assert str(lit(Decimal("-12.340"))) == "CAST('-12.340' AS DECIMAL(5, 3))"
    assert str(lit(Decimal("1E+5"))) == "CAST('100000' AS DECIMAL(6, 0))"
    assert str(lit(Decimal("0.001"))) == "CAST('0.001' AS DECIMAL(3, 3))"
    with pytest.raises(tessera.ValidationError, match="38"):
        lit(Decimal("1" * 39))
    with pytest.raises(tessera.ValidationError):
        lit(Decimal("NaN"))
    assert str(lit(b"\x00'\xff")) == "X'0027ff'" and str(lit(b"")) == "X''"
    assert str(lit(bytearray(b"a"))) == "X'61'"
    assert str(lit(dt.date(1, 1, 1))) == "CAST('0001-01-01' AS DATE)"
    assert str(lit(dt.datetime(2024, 1, 1, 10, 0, 0, 5))) == (
        "CAST('2024-01-01 10:00:00.000005' AS TIMESTAMP_NTZ)"
    )
    aware = dt.datetime(2024, 1, 1, 10, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert str(lit(aware)) == "CAST('2024-01-01 08:00:00Z' AS TIMESTAMP)"
    assert str(lit(dt.timedelta(days=1, seconds=3723, microseconds=5))) == (
        "INTERVAL '1 01:02:03.000005' DAY TO SECOND"
    )
    assert str(lit(dt.timedelta(seconds=-5))) == "INTERVAL '-0 00:00:05.000000' DAY TO SECOND"
    assert str(lit([1, "a'", None])) == "ARRAY(1, 'a\\'', NULL)"
    assert str(lit({"k'": [1]})) == "MAP('k\\'', ARRAY(1))"
    assert str(lit(5, "BIGINT")) == "CAST(5 AS BIGINT)"
    for bad in (object(), dt.time(10), {1, 2}, 1j):
        with pytest.raises(tessera.ValidationError):
            lit(bad)


def test_table_operations_take_expressions_and_strings():
    orders = from_path("orders")
    query = (
        orders.where((col("qty") > 1) & (col("price") < 3))
        .select(col("id"), (col("price") * col("qty")).alias("total"), "customer")
        .order_by(col("total").desc(), "id")
        .limit(5)
    )
    assert re.sub(r"_t\d+", "_t", query.sql) == (
        "SELECT * FROM (SELECT `id`, `price` * `qty` AS `total`, customer FROM `orders` "
        "WHERE (`qty` > 1) AND (`price` < 3)) AS `_t` ORDER BY `total` DESC, id LIMIT 5"
    )
    grouped = orders.group_by(col("customer")).select(col("customer"), col("qty").sum.alias("n"))
    assert grouped.sql == "SELECT `customer`, SUM(`qty`) AS `n` FROM `orders` GROUP BY `customer`"
    joined = orders.alias("o").join(
        from_path("customers").alias("c"), col("o", "customer") == col("c", "id")
    )
    assert joined.sql.endswith("ON `o`.`customer` = `c`.`id`")
    assert orders.order_by(col("id").asc()).offset(2).fetch(3).sql == (
        "SELECT * FROM `orders` ORDER BY `id` ASC LIMIT 3 OFFSET 2"
    )
    assert orders.fetch(3).sql == "SELECT * FROM `orders` LIMIT 3"
    other = from_path("returns")
    for method, keyword in (
        ("union", "UNION"),
        ("union_all", "UNION ALL"),
        ("minus", "EXCEPT"),
        ("minus_all", "EXCEPT ALL"),
        ("intersect", "INTERSECT"),
        ("intersect_all", "INTERSECT ALL"),
    ):
        sql = getattr(orders, method)(other).sql
        assert sql == f"SELECT * FROM `orders` {keyword} SELECT * FROM `returns`", method
    aggregated = (
        orders.group_by(col("customer"))
        .aggregate(col("qty").sum.alias("n"), col("*").count.alias("c"))
        .select(col("customer"), col("n") / col("c"))
    )
    assert aggregated.sql.startswith(
        "SELECT `customer`, `n` / `c` FROM (SELECT `customer`, SUM(`qty`) AS `n`, COUNT(*) AS `c` "
        "FROM `orders` GROUP BY `customer`) AS `_t"
    )
    assert "SELECT MAX(`id`) AS `top` FROM `orders`" in (
        orders.aggregate(col("id").max.alias("top")).select(col("*")).sql
    )


def test_misplaced_expressions_are_refused():
    orders = from_path("orders")
    with pytest.raises(tessera.ValidationError, match="named"):
        orders.where((col("a") > 1).alias("x"))
    with pytest.raises(tessera.ValidationError, match="order_by"):
        orders.select(col("a").desc())  # type: ignore[arg-type]
    with pytest.raises(tessera.ValidationError):
        orders.select()
    for bad in (-1, 1.5, True):
        with pytest.raises(tessera.ValidationError):
            orders.fetch(bad)  # type: ignore[arg-type]
        with pytest.raises(tessera.ValidationError):
            orders.offset(bad)  # type: ignore[arg-type]
    with pytest.raises(tessera.ParseError):
        orders.where("1 = 1; DROP TABLE x")


def test_from_elements_renders_values():
    sql = values_query([(1, "it's"), (2, None)], None).sql(dialect="spark")
    assert sql == (
        "SELECT `_c1` AS `_1`, `_c2` AS `_2` FROM VALUES (1, 'it\\'s'), (2, NULL) "
        "AS `_v`(`_c1`, `_c2`)"
    )
    assert "AS `x``y`" in values_query([{"x`y": 1}], None).sql(dialect="spark")
    row = Row(("id", "name"), (1, "a"))
    assert (
        values_query([row], None)
        .sql(dialect="spark")
        .startswith("SELECT `_c1` AS `id`, `_c2` AS `name` FROM VALUES (1, 'a')")
    )
    schema = tessera.Schema.new_builder().column("id", "BIGINT").column("d", "DATE").build()
    assert values_query([], schema).sql(dialect="spark") == (
        "SELECT CAST(NULL AS BIGINT) AS `id`, CAST(NULL AS DATE) AS `d` WHERE FALSE"
    )
    for rows, names in (
        ([(1, 2)], ["a"]),  # too many values
        ([{"b": 1}], ["a"]),  # a key not in the schema
        ([(1, 2)], ["a", "A"]),  # a repeated name
        ([], ["a"]),  # no rows, no types
        ([], None),
        ([(1,)], "a"),  # a string is not a list of names
    ):
        with pytest.raises(tessera.ValidationError):
            values_query(rows, names)
    computed = tessera.Schema.new_builder().column("a", "INT").column_by_expression("b", "a + 1")
    with pytest.raises(tessera.ValidationError, match="physical"):
        values_query([(1,)], computed.build())


def test_windows_render_as_spark_window_functions():
    events = from_path("events")
    tumble = Tumble.over(lit(10).minutes).on(col("ts")).alias("w")
    assert events.window(tumble).group_by(col("w"), col("k")).select(
        col("k"), col("w").start, col("x").sum
    ).sql == (
        "SELECT `k`, `window`.`start`, SUM(`x`) FROM `events` "
        "GROUP BY WINDOW(`ts`, '10 minute'), `k`"
    )
    slide = Slide.over(dt.timedelta(hours=1)).every("10 minutes").on(col("ts")).alias("w")
    assert "GROUP BY WINDOW(`ts`, '3600000000 microseconds', '10 minutes')" in (
        events.window(slide).group_by(col("w")).select(col("w").end).sql
    )
    session = Session.with_gap("5 minutes").on(col("ts")).alias("s")
    assert events.window(session).group_by(col("s")).select(col("s")).sql == (
        "SELECT `session_window` FROM `events` GROUP BY SESSION_WINDOW(`ts`, '5 minutes')"
    )
    over = Over.partition_by(col("k")).order_by(col("ts").desc()).preceding(lit(1).hours)
    assert events.over_window(over.alias("w")).select(col("x").max.over(col("w"))).sql == (
        "SELECT MAX(`x`) OVER (PARTITION BY `k` ORDER BY `ts` DESC "
        "RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW) FROM `events`"
    )
    rows_frame = Over.order_by(col("ts")).preceding(UNBOUNDED_ROW).following(2).alias("w")
    assert "ROWS BETWEEN UNBOUNDED PRECEDING AND 2 FOLLOWING" in (
        events.over_window(rows_frame).select(col("x").sum.over(col("w"))).sql
    )
    for bad in (
        lambda: Tumble.over("").on(col("ts")),
        lambda: Tumble.over(dt.timedelta(0)),
        lambda: Tumble.over(5),
        lambda: events.window(Tumble.over("1 hour").alias("w")),  # no time column
        lambda: events.window(Tumble.over("1 hour").on(col("ts"))),  # no name
        lambda: events.over_window(Over.partition_by(col("k")).alias("w")),  # no order
        lambda: events.over_window(Over.order_by(col("t")).preceding(-1).alias("w")),
        lambda: events.over_window(
            Over.order_by(col("t")).preceding(2).following(CURRENT_RANGE).alias("w")
        ),
        lambda: lit("x").minutes,
        lambda: col("x").over(col("a") + 1),
    ):
        with pytest.raises(tessera.ValidationError):
            bad()
