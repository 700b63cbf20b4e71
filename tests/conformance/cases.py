"""The conformance cases of the Python Table API (API.md §4): one capability each.

Every case is a function ``case_<name>(t_env, db)`` written only against the §4
``TableEnvironment`` interface (no HTTP, no Django, no pyspark), so the same function runs

- with a remote ``tessera.connect(...)`` environment (tests/conformance/test_remote.py), and
- as a pipeline job on a worker, whose ``t_env`` is bound to the worker's SparkSession:
  ``EXECUTE PIPELINE 'tests.conformance.cases:case_<name>' WITH ('db' = '…')``
  (tests/conformance/test_in_worker.py).

A case checks with plain ``assert`` (each with a message) and raises on the first failure.
``db`` (a string, as pipeline arguments are) names a database the case creates in the
session's current catalog and works in, so that cases never collide.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any

import tessera

Case = Callable[..., None]

_NAME = re.compile(r"[a-z][a-z0-9_]{0,62}")


# --- set-up shared by the cases -------------------------------------------------------------


def enter(t_env: Any, db: str) -> str:
    """Create database ``db`` in the current catalog and make it current; the catalog."""
    assert _NAME.fullmatch(db), f"db must be a lower-case identifier, not {db!r}"
    catalog = t_env.get_current_catalog()
    assert catalog, "the session needs a current catalog"
    t_env.execute_sql(f"CREATE DATABASE {tessera.col(catalog)}.{tessera.col(db)}").wait()
    t_env.use_database(db)
    assert t_env.get_current_database() == db, t_env.get_current_database()
    return str(catalog)


def add_orders(t_env: Any) -> None:
    """``orders`` (id, customer, price, qty) with 4 rows and ``customers`` (name, city)."""
    t_env.execute_sql(
        "CREATE TABLE orders (id BIGINT, customer STRING, price DECIMAL(10, 2), qty INT)"
    ).wait()
    t_env.execute_sql(
        "INSERT INTO orders VALUES (1, 'ada', 2.50, 4), (2, 'bo', 7.00, 1), "
        "(3, 'ada', 1.50, 8), (4, 'cy', 99.99, 1)"
    ).wait()
    t_env.execute_sql("CREATE TABLE customers (name STRING, city STRING)").wait()
    t_env.execute_sql(
        "INSERT INTO customers VALUES ('ada', 'London'), ('bo', 'Oslo'), ('dee', 'Lima')"
    ).wait()


def rows(table_or_result: Any) -> list[tuple[Any, ...]]:
    """The rows of a Table or TableResult as tuples, in the order read."""
    return [tuple(row) for row in table_or_result.collect()]


def ids(table: Any, column: str = "id") -> list[Any]:
    """One column of a Table's rows, sorted."""
    return sorted(row[column] for row in table.collect())


def _expect_error(
    call: Callable[[], Any], kind: type[BaseException], codes: Iterable[str], what: str
) -> Any:
    try:
        call()
    except kind as error:
        code = getattr(error, "code", None)
        assert code in set(codes), f"{what}: code {code!r}, expected one of {sorted(codes)}"
        message = getattr(error, "message", "")
        assert isinstance(message, str) and message.strip(), f"{what}: no message"
        return error
    raise AssertionError(f"{what}: no {kind.__name__} was raised")


# --- the cases ------------------------------------------------------------------------------


def case_query_operations(t_env: Any, db: str) -> None:
    """sql_query and the Table operations: select, where, group_by, order_by, limit,
    distinct, join, union_all, alias."""
    enter(t_env, db)
    add_orders(t_env)
    query = t_env.sql_query("SELECT id, qty FROM orders WHERE qty > 1")
    assert ids(query) == [1, 3], f"sql_query: {rows(query)}"
    orders = t_env.from_path("orders")
    top = (
        orders.select("id", "price * qty AS total")
        .where("total > 8")
        .order_by("total DESC")
        .limit(2)
    )
    assert rows(top) == [(4, Decimal("99.99")), (3, Decimal("12.00"))], f"top: {rows(top)}"
    per_customer = orders.group_by("customer").select("customer", "sum(qty) AS n")
    assert sorted(rows(per_customer)) == [("ada", 12), ("bo", 1), ("cy", 1)], rows(per_customer)
    names = orders.select("customer").distinct()
    assert sorted(rows(names)) == [("ada",), ("bo",), ("cy",)], f"distinct: {rows(names)}"
    joined = (
        orders.alias("o")
        .join(t_env.from_path("customers").alias("c"), "o.customer = c.name")
        .select("o.id", "c.city")
    )
    assert sorted(rows(joined)) == [(1, "London"), (2, "Oslo"), (3, "London")], rows(joined)
    left = orders.alias("o").join(
        t_env.from_path("customers").alias("c"), "o.customer = c.name", how="left"
    )
    assert len(rows(left.select("o.id", "c.city"))) == 4, "a left join keeps every order"
    both = orders.where("id = 1").select("id").union_all(t_env.sql_query("SELECT 9 AS id"))
    assert ids(both) == [1, 9], f"union_all: {rows(both)}"
    assert ids(orders.where("customer = 'ada'").filter("qty > 5")) == [3], "where + filter"


def case_schema_of_path(t_env: Any, db: str) -> None:
    """from_path + get_schema: physical and computed columns, the primary key; a computed
    column computed on read."""
    enter(t_env, db)
    schema = (
        tessera.Schema.new_builder()
        .column("id", "BIGINT NOT NULL")
        .column("price", "DECIMAL(10, 2)")
        .column("qty", "INT")
        .column_by_expression("total", "price * qty")
        .primary_key_named("pk_items", "id")
        .build()
    )
    made = t_env.create_table("items", tessera.TableDescriptor.for_managed().schema(schema).build())
    assert made is None, "create_table without a query creates the table at once"
    resolved = t_env.from_path("items").get_schema()
    assert resolved.column_names == ["id", "price", "qty", "total"], resolved.column_names
    kinds = {c.name: c.kind for c in resolved.columns}
    assert kinds["total"] == "computed" and kinds["id"] == "physical", kinds
    total = next(c for c in resolved.columns if c.name == "total")
    assert total.expression and "price" in total.expression, total
    assert resolved.data_types[0].upper().startswith("BIGINT"), resolved.data_types
    key = resolved.primary_key or {}
    assert list(key.get("columns", [])) == ["id"], f"primary key: {resolved.primary_key}"
    t_env.execute_sql("INSERT INTO items VALUES (1, 2.50, 4), (2, 1.00, 3)").wait()
    totals = rows(t_env.from_path("items").select("id", "total").order_by("id"))
    assert totals == [(1, Decimal("10.00")), (2, Decimal("3.00"))], f"computed: {totals}"
    query_schema = t_env.from_path("items").select("id", "qty + 1 AS next").get_schema()
    assert query_schema.column_names == ["id", "next"], query_schema.column_names


def case_ddl_through_execute_sql(t_env: Any, db: str) -> None:
    """execute_sql runs DDL: CREATE TABLE / VIEW, DROP, and the lists see it."""
    enter(t_env, db)
    t_env.execute_sql("CREATE TABLE plain (a INT, b STRING) COMMENT 'made by DDL'").wait()
    t_env.execute_sql("CREATE VIEW plain_a AS SELECT a FROM plain").wait()
    assert "plain" in t_env.list_tables(), t_env.list_tables()
    assert "plain_a" in t_env.list_views(), t_env.list_views()
    t_env.execute_sql("INSERT INTO plain VALUES (1, 'x'), (2, 'y')").wait()
    assert ids(t_env.from_path("plain_a"), "a") == [1, 2], "a view reads its table"
    assert t_env.from_path("plain").get_schema().column_names == ["a", "b"]
    _expect_error(
        lambda: t_env.execute_sql("CREATE TABLE plain (a INT)").wait(),
        tessera.TesseraError,
        {"ALREADY_EXISTS"},
        "creating a table twice",
    )
    t_env.execute_sql("DROP VIEW plain_a").wait()
    assert "plain_a" not in t_env.list_views(), t_env.list_views()
    assert t_env.drop_table("plain") is True, "drop_table of an existing table"
    assert t_env.drop_table("plain") is False, "drop_table of a missing table"
    assert t_env.list_tables() == [], t_env.list_tables()


def case_temporary_view_over_table(t_env: Any, db: str) -> None:
    """create_temporary_view over a Table: readable by name, listed, shadowing, dropped."""
    enter(t_env, db)
    add_orders(t_env)
    t_env.create_temporary_view("big_orders", t_env.from_path("orders").where("qty > 1"))
    assert ids(t_env.from_path("big_orders")) == [1, 3], rows(t_env.from_path("big_orders"))
    assert "big_orders" in t_env.list_views(), t_env.list_views()
    assert any(p.endswith("`big_orders`") for p in t_env.list_temporary_views()), (
        t_env.list_temporary_views()
    )
    # a temporary view shadows the permanent table of the same name
    t_env.create_temporary_view("customers", t_env.sql_query("SELECT 'zed' AS name"))
    assert rows(t_env.from_path("customers")) == [("zed",)], "the temporary view shadows"
    assert t_env.drop_temporary_view("customers") is True
    assert len(rows(t_env.from_path("customers"))) == 3, "the table is back"
    assert t_env.drop_temporary_view("big_orders") is True
    assert t_env.drop_temporary_view("big_orders") is False


def case_ctas(t_env: Any, db: str) -> None:
    """create_table with a query (CTAS, FLIP-218): a job through the stage table, the new
    table active with the rows."""
    enter(t_env, db)
    add_orders(t_env)
    query = t_env.from_path("orders").where("customer = 'ada'").select("id", "price")
    result = t_env.create_table("ada_orders", tessera.TableDescriptor.for_managed().build(), query)
    assert isinstance(result, tessera.TableResult), type(result)
    result.wait()
    assert result.status == "FINISHED", result.status
    assert result.job["kind"] == "ctas", result.job["kind"]
    types = [event["type"] for event in result.events()]
    for expected in ("stage_table_created", "data_committed"):
        assert expected in types, f"CTAS events: {types}"
    assert types.index("stage_table_created") < types.index("data_committed"), types
    assert "ada_orders" in t_env.list_tables(), t_env.list_tables()
    assert rows(t_env.from_path("ada_orders").order_by("id")) == [
        (1, Decimal("2.50")),
        (3, Decimal("1.50")),
    ]
    assert t_env.from_path("ada_orders").get_schema().column_names == ["id", "price"]
    again = t_env.create_table(
        "ada_orders", tessera.TableDescriptor.for_managed().build(), query, ignore_if_exists=True
    )
    assert again is not None, "CTAS IF NOT EXISTS is still a job"
    again.wait()
    assert ids(t_env.from_path("ada_orders")) == [1, 3], "IF NOT EXISTS changed nothing"


def case_execute_insert(t_env: Any, db: str) -> None:
    """execute_insert appends, and with overwrite=True replaces the rows."""
    enter(t_env, db)
    add_orders(t_env)
    t_env.execute_sql("CREATE TABLE picked (id BIGINT)").wait()
    orders = t_env.from_path("orders")
    first = orders.where("id <= 2").select("id").execute_insert("picked").wait()
    assert first.status == "FINISHED", first.status
    assert ids(t_env.from_path("picked")) == [1, 2]
    orders.where("id > 2").select("id").execute_insert("picked").wait()
    assert ids(t_env.from_path("picked")) == [1, 2, 3, 4], "append"
    orders.where("id = 4").select("id").execute_insert("picked", overwrite=True).wait()
    assert ids(t_env.from_path("picked")) == [4], "overwrite"


def case_statement_set_all_or_nothing(t_env: Any, db: str) -> None:
    """A statement set is one job: every insert is committed, or none (one failing insert
    leaves every target as it was)."""
    enter(t_env, db)
    add_orders(t_env)
    t_env.execute_sql("CREATE TABLE a (id BIGINT)").wait()
    t_env.execute_sql("CREATE TABLE b (id BIGINT)").wait()
    t_env.execute_sql("INSERT INTO a VALUES (100)").wait()
    t_env.execute_sql("INSERT INTO b VALUES (200)").wait()
    orders = t_env.from_path("orders")
    good = t_env.create_statement_set()
    good.add_insert("a", orders.where("id < 3").select("id"))
    good.add_insert_sql("INSERT INTO b SELECT id FROM orders WHERE id >= 3")
    done = good.execute().wait()
    assert done.job["kind"] == "statement_set", done.job["kind"]
    assert ids(t_env.from_path("a")) == [1, 2, 100] and ids(t_env.from_path("b")) == [3, 4, 200]
    bad = t_env.create_statement_set()
    bad.add_insert("a", orders.select("id"), overwrite=True)
    # fails while it runs: a cast that cannot succeed (ANSI mode)
    bad.add_insert_sql("INSERT INTO b SELECT CAST(concat('x', id) AS BIGINT) FROM orders")
    try:
        bad.execute().wait()
    except tessera.JobFailedError as error:
        assert error.job_id, "the failed job is named"
    else:
        raise AssertionError("the statement set with a failing insert did not fail")
    assert ids(t_env.from_path("a")) == [1, 2, 100], "a changed by a failed statement set"
    assert ids(t_env.from_path("b")) == [3, 4, 200], "b changed by a failed statement set"


def case_pandas_round_trip(t_env: Any, db: str) -> None:
    """from_pandas → Table (joined, filtered) → to_pandas / to_arrow."""
    import pandas as pd  # type: ignore[import-untyped]

    enter(t_env, db)
    add_orders(t_env)
    frame = pd.DataFrame(
        {
            "id": [1, 2, 3],
            "note": ["first", None, "third"],
            "discount": [0.5, 0.25, 0.0],
        }
    )
    table = t_env.from_pandas(frame)
    assert table.get_schema().column_names == ["id", "note", "discount"]
    back = table.order_by("id").to_pandas()
    assert back.to_dict("records") == frame.to_dict("records"), back.to_dict("records")
    assert str(back["id"].dtype) == "int64" and str(back["discount"].dtype) == "float64", (
        back.dtypes
    )
    assert any("tmp_" in p for p in t_env.list_temporary_tables()), t_env.list_temporary_tables()
    joined = (
        t_env.from_path("orders")
        .alias("o")
        .join(table.alias("d"), "o.id = d.id")
        .select("o.id", "o.customer", "d.discount")
        .where("discount > 0")
        .order_by("id")
    )
    arrow = joined.to_arrow()
    assert arrow.column_names == ["id", "customer", "discount"], arrow.column_names
    assert arrow.to_pylist() == [
        {"id": 1, "customer": "ada", "discount": 0.5},
        {"id": 2, "customer": "bo", "discount": 0.25},
    ], arrow.to_pylist()
    t_env.create_temporary_view("notes", pd.DataFrame({"k": ["a", "b"]}))
    assert sorted(rows(t_env.from_path("notes"))) == [("a",), ("b",)]


def case_collect_rows(t_env: Any, db: str) -> None:
    """TableResult.collect gives rows by name, by attribute and by position."""
    enter(t_env, db)
    add_orders(t_env)
    result = t_env.execute_sql("SELECT id, customer AS who, qty FROM orders ORDER BY id").wait()
    assert result.get_resolved_schema().column_names == ["id", "who", "qty"]
    collected = list(result.collect())
    assert len(collected) == 4, collected
    first = collected[0]
    assert first["who"] == first.who == first[1] == "ada", first
    assert first["id"] == first[0] == 1 and first.qty == first[-1] == 4, first
    assert first.asdict() == {"id": 1, "who": "ada", "qty": 4}, first.asdict()
    assert tuple(first) == (1, "ada", 4), tuple(first)
    assert [row.id for row in t_env.from_path("orders").order_by("id DESC").collect()] == [
        4,
        3,
        2,
        1,
    ]
    assert len(result.to_pandas()) == 4 and result.to_arrow().num_rows == 4


def case_lists_and_current(t_env: Any, db: str) -> None:
    """list_* and use_catalog / use_database / get_current_*."""
    catalog = enter(t_env, db)
    assert catalog in t_env.list_catalogs(), t_env.list_catalogs()
    assert db in t_env.list_databases(), t_env.list_databases()
    assert t_env.list_tables() == [] and t_env.list_views() == [], "a new database is empty"
    t_env.execute_sql("CREATE TABLE t1 (x INT)").wait()
    t_env.execute_sql("CREATE VIEW v1 AS SELECT x FROM t1").wait()
    t_env.execute_sql("CREATE TEMPORARY VIEW tv AS SELECT 1 AS one").wait()
    t_env.execute_sql("CREATE TEMPORARY FUNCTION slug AS 'tessera_udfs.text.slugify'").wait()
    assert t_env.list_tables() == ["t1"], t_env.list_tables()
    assert t_env.list_views() == ["tv", "v1"], t_env.list_views()
    assert any(p.endswith("`tv`") for p in t_env.list_temporary_views())
    assert "slug" in t_env.list_user_defined_functions(), t_env.list_user_defined_functions()
    other = f"{db}_other"
    t_env.execute_sql(f"CREATE DATABASE {tessera.col(catalog)}.{tessera.col(other)}").wait()
    t_env.use_database(other)
    assert t_env.get_current_database() == other
    assert t_env.list_tables() == [], "the other database has no tables"
    t_env.use_catalog(catalog)
    assert t_env.get_current_catalog() == catalog
    assert t_env.get_current_database() == "default", "use_catalog goes to its default db"
    t_env.use_database(db)
    assert rows(t_env.from_path("t1")) == [], "back in the first database"
    assert rows(t_env.from_path(f"{tessera.col(catalog)}.{db}.t1")) == [], "a full path"
    _expect_error(
        lambda: t_env.use_catalog(f"{catalog}_missing"),
        tessera.NotFoundError,
        {"NOT_FOUND"},
        "use_catalog of a missing catalog",
    )


def case_errors(t_env: Any, db: str) -> None:
    """Errors carry the API's code: unknown table, bad SQL, a job failing on Spark."""
    enter(t_env, db)
    _expect_error(
        lambda: t_env.execute_sql("SELECT * FROM no_such_table"),
        tessera.NotFoundError,
        {"NOT_FOUND"},
        "an unknown table in SQL",
    )
    _expect_error(
        lambda: t_env.from_path("no_such_table").collect(),
        tessera.NotFoundError,
        {"NOT_FOUND"},
        "an unknown table by path",
    )
    parse = _expect_error(
        lambda: t_env.execute_sql("SELEC 1"), tessera.ParseError, {"PARSE_ERROR"}, "bad SQL"
    )
    assert "line" in parse.details, parse.details
    _expect_error(
        lambda: t_env.execute_sql("SELECT * FROM parquet.`/etc`"),
        tessera.ForbiddenSqlError,
        {"FORBIDDEN_SQL"},
        "a path read in SQL",
    )
    failed = _expect_error(
        lambda: t_env.execute_sql("SELECT assert_true(1 = 2)").wait(),
        tessera.JobFailedError,
        {"SPARK_ERROR"},
        "a query failing on Spark",
    )
    assert failed.job_id, "the failed job is named"


CASES: dict[str, Case] = {
    name.removeprefix("case_"): function
    for name, function in sorted(globals().items())
    if name.startswith("case_") and callable(function)
}
