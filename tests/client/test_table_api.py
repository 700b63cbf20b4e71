"""The PyFlink-style Table API on the live server: expressions, column and set operations,
from_elements, execute_insert by name — every one planned and run by Spark."""

from __future__ import annotations

import datetime as dt
import io
import math
import sys
from decimal import Decimal

import pytest
from tessera import Over, Session, Slide, Tumble
from tessera.expressions import UNBOUNDED_RANGE, call, col, concat, lit, when

from tests.client.conftest import tessera

pytestmark = [pytest.mark.slow, pytest.mark.spark]


def rows(table):
    return [tuple(r) for r in table.collect()]


def test_literals_of_every_type_read_back_as_themselves(t_env):
    values = {
        "none": None,
        "yes": True,
        "small": 7,
        "big": -(2**63),
        "double": 0.1,
        "nan": float("nan"),
        "inf": float("-inf"),
        "dec": Decimal("-12.340"),
        "quotes": "it's \\ \"quoted\" \\' --",
        "bin": b"\x00'\xff",
        "day": dt.date(1, 1, 1),
        "later": dt.date(2100, 12, 31),
        "ntz": dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
        "span": dt.timedelta(days=-1, seconds=5, microseconds=7),
        "list": [1, None, 3],
        "map": {"k'": 1},
    }
    table = t_env.from_elements([(1,)], ["id"]).select(
        *[lit(v).alias(name) for name, v in values.items()],
        lit(dt.datetime(2024, 1, 1, 10, tzinfo=dt.UTC)).alias("instant"),
    )
    (row,) = table.collect()
    got = row.asdict()
    assert math.isnan(got.pop("nan"))
    assert got.pop("instant") == dt.datetime(2024, 1, 1, 10, tzinfo=dt.UTC)
    expected = {k: v for k, v in values.items() if k != "nan"}
    assert got == expected
    types = dict(zip(table.get_schema().column_names, table.get_schema().data_types, strict=True))
    assert types["ntz"] == "TIMESTAMP_NTZ" and types["dec"] == "DECIMAL(5, 3)"
    assert types["double"] == "DOUBLE" and types["day"] == "DATE"


def test_expressions_and_operations_run(t_env):
    orders = t_env.from_path("orders")
    totals = (
        orders.where((col("qty") > 1) | col("price").between(10, 20))
        .select(col("id"), (col("price") * col("qty")).alias("total"))
        .order_by(col("id").desc())
    )
    assert rows(totals) == [(3, Decimal("10.00")), (2, Decimal("10.00")), (1, Decimal("10.00"))]
    sizes = orders.select(
        col("id"),
        when(col("qty") > 4, "many").when(col("qty") > 1, "some").otherwise("one").alias("n"),
        concat(col("id").cast("STRING"), "'", call("upper", "x")).alias("tag"),
    ).order_by("id")
    assert rows(sizes) == [
        (1, "some", "1'X"),
        (2, "one", "2'X"),
        (3, "many", "3'X"),
        (4, "one", "4'X"),
    ]
    per_customer = (
        orders.group_by(col("customer"))
        .aggregate(col("qty").sum.alias("n"), col("*").count.alias("c"))
        .select(col("customer"), (col("n") * 10 / col("c")).alias("x"))
        .order_by(col("customer"))
    )
    assert rows(per_customer) == [(10, 25.0), (11, 80.0), (12, 10.0)]
    assert rows(orders.aggregate(col("customer").count.distinct.alias("d")).select(col("d"))) == [
        (3,)
    ]
    assert [r[0] for r in orders.order_by(col("id").asc()).offset(1).fetch(2).collect()] == [2, 3]
    assert rows(orders.where(col("id").in_(1, 4)).select(col("id")).order_by("id")) == [(1,), (4,)]


def test_column_operations_read_the_schema(t_env):
    orders = t_env.from_path("orders")
    added = orders.add_columns((col("qty") + 1).alias("more"))
    assert added.get_schema().column_names == ["id", "customer", "price", "qty", "more"]
    replaced = orders.add_or_replace_columns((col("qty") * 0).alias("QTY"), lit("x").alias("k"))
    assert replaced.get_schema().column_names == ["id", "customer", "price", "QTY", "k"]
    assert {r.QTY for r in replaced.collect()} == {0}
    dropped = orders.drop_columns(col("price"), "customer")
    assert dropped.get_schema().column_names == ["id", "qty"]
    renamed = orders.rename_columns(col("id").alias("a`b"), "qty AS q")
    assert renamed.get_schema().column_names == ["a`b", "customer", "price", "q"]
    assert sorted(r[0] for r in renamed.select(col("a`b")).collect()) == [1, 2, 3, 4]
    with pytest.raises(tessera.ValidationError, match="exists already") as error:
        orders.add_columns(lit(1).alias("ID"))
    assert error.value.details["column"] == "id"
    for bad in (
        lambda: orders.add_columns(lit(1)),  # no name
        lambda: orders.drop_columns("nope"),
        lambda: orders.drop_columns("id", "customer", "price", "qty"),
        lambda: orders.rename_columns(col("id").alias("qty")),  # two columns named qty
        lambda: orders.rename_columns(col("nope").alias("x")),
        lambda: orders.rename_columns(col("id") + 1),
    ):
        with pytest.raises(tessera.ValidationError):
            bad()
    out = io.StringIO()
    sys.stdout, saved = out, sys.stdout
    try:
        dropped.print_schema()
    finally:
        sys.stdout = saved
    assert out.getvalue() == "(\n  `id` BIGINT,\n  `qty` INT\n)\n"


def test_set_operations_and_from_elements(t_env):
    a = t_env.from_elements([(1, "x"), (1, "x"), (2, "y")], ["n", "s"])
    b = t_env.from_elements([{"n": 1, "s": "x"}, {"n": 3, "s": "z"}])
    assert sorted(rows(a.union(b))) == [(1, "x"), (2, "y"), (3, "z")]
    assert len(rows(a.union_all(b))) == 5
    assert rows(a.minus(b)) == [(2, "y")]
    assert sorted(rows(a.minus_all(b))) == [(1, "x"), (2, "y")]
    assert rows(a.intersect(b)) == [(1, "x")]
    assert rows(a.intersect_all(a)) and len(rows(a.intersect_all(a))) == 3
    schema = tessera.Schema.new_builder().column("id", "BIGINT").column("d", "DATE").build()
    typed = t_env.from_elements([(1, None), (2, dt.date(1900, 1, 1))], schema)
    assert typed.get_schema().data_types == ["BIGINT", "DATE"]
    assert rows(typed.order_by("id")) == [(1, None), (2, dt.date(1900, 1, 1))]
    empty = t_env.from_elements([], schema)
    assert rows(empty) == [] and empty.get_schema().column_names == ["id", "d"]
    hostile = t_env.from_elements([("it's", 1)], ["a`b", "x' --"])
    assert hostile.get_schema().column_names == ["a`b", "x' --"]
    assert rows(hostile.where(col("a`b") == "it's").select(col("x' --"))) == [(1,)]


def test_execute_insert_by_name(t_env):
    t_env.execute_sql("CREATE TABLE pairs (a BIGINT, b STRING)").wait()
    reordered = t_env.from_elements([("one", 1)], ["b", "a"])
    assert reordered.insert_sql("pairs", by_name=True).startswith(
        "INSERT INTO `pairs` (`b`, `a`) SELECT"
    )
    reordered.execute_insert("pairs", by_name=True).wait()
    t_env.create_statement_set().add_insert(
        "pairs", t_env.from_elements([("two", 2)], ["b", "a"]), by_name=True
    ).execute().wait()
    assert rows(t_env.from_path("pairs").order_by("a")) == [(1, "one"), (2, "two")]
    # Spark's own INSERT … BY NAME: the query's names, in any order; a column left out is NULL.
    t_env.execute_sql("INSERT INTO pairs BY NAME SELECT 'x' AS b, 3 AS a").wait()
    t_env.execute_sql("INSERT INTO pairs BY NAME SELECT 4 AS A").wait()
    assert rows(t_env.from_path("pairs").where("a > 2").order_by("a")) == [(3, "x"), (4, None)]
    with pytest.raises(tessera.TesseraError, match="Column `c` does not exist in"):
        t_env.execute_sql("INSERT INTO pairs BY NAME SELECT 5 AS a, 'y' AS c").wait()
    t_env.execute_sql("CREATE TABLE strict_pairs (a BIGINT NOT NULL, b STRING)").wait()
    with pytest.raises(tessera.TesseraError, match="`a` is NOT NULL"):
        t_env.execute_sql("INSERT INTO strict_pairs BY NAME SELECT 'z' AS b").wait()
    assert rows(t_env.from_path("pairs").where("a = 5")) == []


def test_group_and_over_windows(t_env):
    at = [dt.datetime(2024, 1, 1, 10, m) for m in (1, 7, 13, 30)]
    events = t_env.from_elements(
        [(1, "a", at[0]), (2, "a", at[1]), (3, "b", at[2]), (4, "a", at[3])], ["x", "k", "ts"]
    )
    tumbling = (
        events.window(Tumble.over(lit(10).minutes).on(col("ts")).alias("w"))
        .group_by(col("w"), col("k"))
        .select(col("k"), col("w").start.alias("s"), col("x").sum.alias("n"))
    )
    assert sorted(rows(tumbling)) == [
        ("a", dt.datetime(2024, 1, 1, 10, 0), 3),
        ("a", dt.datetime(2024, 1, 1, 10, 30), 4),
        ("b", dt.datetime(2024, 1, 1, 10, 10), 3),
    ]
    five = dt.timedelta(minutes=5)
    sliding = (
        events.window(Slide.over("10 minutes").every(five).on(col("ts")).alias("w"))
        .group_by(col("w"))
        .select(col("*").count.alias("c"))
    )
    assert sum(r[0] for r in rows(sliding)) == 8  # every event in two windows
    sessions = (
        events.window(Session.with_gap("10 minutes").on(col("ts")).alias("w"))
        .group_by(col("w"))
        .select(col("w").end.alias("e"), col("*").count.alias("c"))
    )
    assert sorted(rows(sessions)) == [
        (dt.datetime(2024, 1, 1, 10, 23), 3),
        (dt.datetime(2024, 1, 1, 10, 40), 1),
    ]
    running = Over.partition_by(col("k")).order_by(col("ts")).preceding(UNBOUNDED_RANGE).alias("w")
    pairs = Over.partition_by(col("k")).order_by(col("ts")).preceding(1).alias("p")
    over = events.over_window(running, pairs).select(
        col("x"), col("x").sum.over(col("w")).alias("total"), col("x").sum.over(col("p"))
    )
    assert sorted(rows(over)) == [(1, 1, 1), (2, 3, 3), (3, 3, 3), (4, 7, 6)]
    with pytest.raises(tessera.ValidationError, match="must name the window"):
        events.window(Tumble.over("1 hour").on(col("ts")).alias("w")).group_by(col("k"))
    with pytest.raises(tessera.ValidationError, match="No over window"):
        events.over_window(running).select(col("x").sum.over(col("nope")))
