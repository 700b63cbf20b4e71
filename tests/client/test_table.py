"""The lazy Table against the live server: composed SQL, schemas, results, hostile names."""

from __future__ import annotations

import io
import re
import sys
import time
from decimal import Decimal

import pytest

from tests.client.conftest import tessera

pytestmark = [pytest.mark.slow, pytest.mark.spark]


def ids(table):
    return [row["id"] for row in table.collect()]


def test_operations_compose_and_run(t_env):
    orders = t_env.from_path("orders")
    assert orders.sql == "SELECT * FROM `orders`"
    big = orders.where("qty > 1")
    assert big is not orders and orders.sql == "SELECT * FROM `orders`"  # immutable
    assert ids(big.order_by("id")) == [1, 3]
    assert ids(orders.order_by("price DESC").limit(2)) == [4, 2]
    totals = orders.select("id", "price * qty AS total").where("total > 9").order_by("id")
    assert [(r.id, r.total) for r in totals.collect()] == [
        (1, Decimal("10.00")),
        (2, Decimal("10.00")),
        (3, Decimal("10.00")),
        (4, Decimal("99.99")),
    ]
    per_customer = orders.group_by("customer").select("customer", "sum(qty) AS n")
    assert sorted(tuple(r) for r in per_customer.collect()) == [(10, 5), (11, 8), (12, 1)]
    customers = t_env.from_path("shop.sales.customers")
    joined = (
        orders.alias("o")
        .join(customers.alias("c"), "o.customer = c.id")
        .where("o.qty > 1")
        .select("o.id", "c.name")
        .order_by("id")
    )
    assert [tuple(r) for r in joined.collect()] == [(1, "Ada"), (3, "Bo")]
    left = orders.alias("o").join(customers.alias("c"), "o.customer = c.id + 100", how="left")
    assert len(list(left.collect())) == 4
    assert sorted(r[0] for r in orders.select("customer").distinct().collect()) == [10, 11, 12]
    both = orders.select("id").union_all(customers.select("id"))
    assert len(list(both.collect())) == 7
    assert ids(t_env.sql_query("SELECT * FROM orders WHERE id < 3").order_by("id")) == [1, 2]


def test_results_whole(t_env):
    orders = t_env.from_path("orders").order_by("id")
    frame = orders.to_pandas()
    assert frame["id"].tolist() == [1, 2, 3, 4]
    arrow = orders.to_arrow()
    assert arrow.column_names == ["id", "customer", "price", "qty"]
    assert arrow.num_rows == 4
    result = orders.execute()
    assert result.wait().status == "FINISHED"
    assert result.job["kind"] == "query"


def test_get_schema(t_env):
    schema = t_env.from_path("orders").get_schema()
    assert schema.column_names == ["id", "customer", "price", "qty"]
    assert schema.data_types[2] == "DECIMAL(10, 2)"
    derived = t_env.from_path("orders").select("id", "price * qty AS total").get_schema()
    assert derived.column_names == ["id", "total"]
    assert derived.data_types[1].startswith("DECIMAL")
    t_env.execute_sql("CREATE TEMPORARY VIEW tv AS SELECT 'x' AS s").wait()
    assert t_env.from_path("tv").get_schema().column_names == ["s"]
    with pytest.raises(tessera.NotFoundError):
        t_env.from_path("missing").get_schema()


def test_explain_and_insert(t_env):
    plan = t_env.from_path("orders").where("qty > 1").explain()
    assert "Physical Plan" in plan or "Scan" in plan
    # the target does not exist: the planner refuses it, the client raises at once
    with pytest.raises(tessera.NotFoundError):
        t_env.from_path("orders").where("qty = 1").execute_insert("no_such_target")


def test_execute_insert_into_and_overwrite(t_env):
    t_env.execute_sql("CREATE TABLE ids (id BIGINT)").wait()
    orders = t_env.from_path("orders")
    orders.select("id").where("id < 3").execute_insert("ids").wait()
    orders.select("id").where("id = 4").execute_insert("shop.sales.ids").wait()
    assert sorted(ids(t_env.from_path("ids"))) == [1, 2, 4]
    orders.select("id").where("id = 3").execute_insert("ids", overwrite=True).wait()
    assert ids(t_env.from_path("ids")) == [3]


def test_hostile_column_names_stay_identifiers_and_values(t_env):
    weird = "we`ird'col\"; DROP TABLE orders; --"
    quoted = tessera.col(weird)
    assert quoted == "`we``ird'col\"; DROP TABLE orders; --`"
    t_env.execute_sql(f"CREATE TABLE hostile ({quoted} STRING, id INT)").wait()
    t_env.execute_sql("INSERT INTO hostile VALUES ('x'' OR 1=1', 1), ('plain', 2)").wait()
    table = t_env.from_path("hostile")
    assert table.get_schema().column_names == [weird, "id"]
    value = "x' OR 1=1 --"
    picked = table.select(quoted, "id").where(f"{quoted} = {tessera.lit(value)}")
    assert list(picked.collect()) == []  # the injection attempt is a value that matches nothing
    picked = table.where(f"{quoted} = {tessera.lit('plain')}").select(quoted)
    rows = list(picked.collect())
    assert len(rows) == 1 and rows[0][weird] == "plain"
    assert "orders" in t_env.list_tables()  # nothing was dropped
    # an expression that smuggles a second statement is refused before anything is sent
    with pytest.raises(tessera.ParseError):
        table.where("1 = 1; DROP TABLE orders")
    with pytest.raises(tessera.ParseError):
        table.select("id FROM orders --")
    with pytest.raises(tessera.ParseError):
        t_env.from_path("orders; DROP TABLE orders")
    # a hostile path is one quoted name
    assert t_env.from_path(tessera.col("a`b.c")).sql == "SELECT * FROM `a``b.c`"


def test_the_server_guard_still_applies(t_env):
    with pytest.raises(tessera.ForbiddenSqlError):
        t_env.from_path("orders").select("reflect('java.lang.System', 'exit', '0')").to_arrow()


def test_cancel_and_wait_timeout(t_env):
    t_env.statement_wait = 0
    slow = t_env.sql_query("SELECT count(*) AS n FROM range(1000000000) a CROSS JOIN range(1000) b")
    result = slow.execute()
    with pytest.raises(tessera.TesseraError) as timeout:
        result.wait(timeout=1)
    assert timeout.value.code == "TIMEOUT"
    assert result.cancel() in ("CANCELED", "RUNNING", "CREATED")
    with pytest.raises(tessera.CanceledError):
        result.wait(timeout=60)
    assert result.status == "CANCELED"
    assert result.cancel() == "CANCELED"  # a no-op once ended
    assert any("cancel" in e["type"].lower() for e in result.events())


def test_wait_shows_the_tasks_as_a_progress_bar_in_a_terminal(t_env, monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    t_env.statement_wait = 0
    seen = []
    result = t_env.execute_sql(
        "SELECT count(*) AS n FROM range(0, 400000000, 1, 24) WHERE id % 7 = 3"
    )
    original = result._poll

    def poll(seconds):
        original(min(seconds, 0.5))  # short polls: every progress change is drawn
        seen.append(dict(result._job.get("progress") or {}))

    monkeypatch.setattr(result, "_poll", poll)
    assert result.wait(timeout=120).status == "FINISHED"
    drawn = screen.getvalue()
    assert any(p.get("tasks_total") for p in seen), seen
    assert re.search(r"tasks: +\d+%\|.*\| \d+/\d+ ", drawn), drawn[-500:]


def test_keyboard_interrupt_cancels_the_job(t_env, monkeypatch):
    t_env.statement_wait = 0
    result = t_env.execute_sql(
        "SELECT count(*) AS n FROM range(1000000000) a CROSS JOIN range(1000) b"
    )
    calls = []

    def interrupted(seconds):
        calls.append(seconds)
        raise KeyboardInterrupt

    monkeypatch.setattr(result, "_poll", interrupted)
    with pytest.raises(KeyboardInterrupt):
        result.wait()
    monkeypatch.undo()
    deadline = time.monotonic() + 60
    while result.status != "CANCELED" and time.monotonic() < deadline:
        time.sleep(0.5)
    assert result.status == "CANCELED"


def test_to_data_frame(t_env, plain_spark):
    frame = t_env.from_path("orders").order_by("id").to_data_frame(plain_spark)
    assert [r["id"] for r in frame.collect()] == [1, 2, 3, 4]
    assert frame.schema["price"].dataType.simpleString() == "decimal(10,2)"
