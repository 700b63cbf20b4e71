"""Writes (FLIP-218): CTAS, INSERT and statement sets — plans, args and errors as in
docs/statements.md, "Writes"."""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.datatypes import parse_data_type
from core.errors import AlreadyExists, CoreError, NotFound
from core.planner import ForbiddenSql, ParseError, Plan, UnsupportedStatement, split_script
from core.schema import ComputedColumn, PhysicalColumn
from tests.core.test_planner_support import STORAGE_ROOT, MemoryCatalog, plan, sample_catalog

WAREHOUSE = "/srv/tessera/warehouse"

CUSTOMERS_PLAN: dict[str, Any] = {
    "alias": "__tessera_r1",
    "identifier": ["c", "d", "customers"],
    "kind": "table",
    "format": "parquet",
    "path": f"{WAREHOUSE}/c/d/customers",
    "options": {},
    "physical_schema": "`id` BIGINT, `name` STRING",
    "columns": [{"name": "id", "kind": "physical"}, {"name": "name", "kind": "physical"}],
}
SLUGIFY_PLAN: dict[str, Any] = {
    "alias": "__tessera_f1",
    "identifier": ["c", "d", "slugify"],
    "language": "python",
    "implementation": "tessera_udfs.text.slugify",
    "return_type": "STRING",
}
ORDERS_COLUMNS: list[dict[str, Any]] = [
    {"name": "id", "kind": "physical", "not_null": True},  # declared NOT NULL
    {"name": "price", "kind": "physical"},
    {"name": "qty", "kind": "physical"},
    {"name": "total", "kind": "computed", "expression": "price * qty"},
    {"name": "file", "kind": "metadata", "metadata_key": "file_path"},
    {"name": "customer_id", "kind": "physical"},
]
ORDERS_SCHEMA = "`id` BIGINT NOT NULL, `price` DECIMAL(10, 2), `qty` INT, `customer_id` BIGINT"


def _round_trips(result: Plan) -> dict[str, Any]:
    data = result.to_dict()
    assert Plan.from_dict(json.loads(json.dumps(data))) == result
    return data


def _catalog() -> MemoryCatalog:
    catalog = sample_catalog()
    catalog.add_table("c.d.tmp", ["id BIGINT", "name STRING"], temporary=True)
    catalog.add_view("c.d.tmp_view", "SELECT 1 AS id", temporary=True)
    catalog.add_table("c.d.staged", ["id BIGINT"], status="staged", staged_by_job="job-7")
    catalog.add_table("c.d.staged_old", ["id BIGINT"], status="staged")
    catalog.add_table(
        "c.d.archive",
        ["id BIGINT", "name STRING"],
        options={"connector": "json", "path": f"{STORAGE_ROOT}/archive", "multiLine": "true"},
    )
    catalog.add_database("my cat", "d b")
    catalog.add_table("my cat.d b.t`x", [PhysicalColumn("a b", parse_data_type("INT")), "c INT"])
    return catalog


# -- CTAS -----------------------------------------------------------------------------------

CTAS = (
    "CREATE TABLE IF NOT EXISTS new_t\n"
    "  USING csv\n"
    "  WITH ('table.ctas.atomic' = 'true', 'header' = 'true')\n"
    "  COMMENT 'made by CTAS'\n"
    "  PARTITIONED BY (id)\n"
    f"  LOCATION '{STORAGE_ROOT}/new_t'\n"
    "AS SELECT c.id, slugify(c.name) AS slug FROM customers c -- trailing"
)


def test_ctas_plan_exactly() -> None:
    assert _round_trips(plan(CTAS)) == {
        "kind": "ctas",
        "action": "ctas",
        "needs_spark": True,
        "sql": "SELECT c.id, `__tessera_f1`(c.name) AS slug FROM `__tessera_r1` c -- trailing",
        "relations": [CUSTOMERS_PLAN],
        "functions": [SLUGIFY_PLAN],
        "target": ["c", "d", "new_t"],
        "args": {
            "identifier": ["c", "d", "new_t"],
            "if_not_exists": True,
            "options": {
                "connector": "csv",
                "path": f"{STORAGE_ROOT}/new_t",
                "header": "true",
            },
            "partition_by": ["id"],
            "comment": "made by CTAS",
            "atomic": True,
        },
    }


def test_bare_ctas_is_a_managed_parquet_table() -> None:
    result = plan("CREATE TABLE t AS SELECT * FROM customers")
    assert (result.kind, result.action, result.needs_spark) == ("ctas", "ctas", True)
    assert result.sql == "SELECT * FROM `__tessera_r1` AS `customers`"
    assert result.target == ("c", "d", "t")
    assert result.args == {
        "identifier": ["c", "d", "t"],
        "if_not_exists": False,
        "options": {"format": "parquet"},
        "partition_by": [],
        "comment": None,
        "atomic": None,
    }


def test_ctas_clauses_in_any_order() -> None:
    query = "AS SELECT 1 AS a, 2 AS b"
    first = plan(
        f"CREATE TABLE t PARTITIONED BY (b) COMMENT 'x' OPTIONS (sep ';') USING csv "
        f"LOCATION '{STORAGE_ROOT}/t' {query}"
    ).args
    second = plan(
        f"CREATE TABLE t LOCATION '{STORAGE_ROOT}/t' USING CSV COMMENT 'x' "
        f"WITH ('sep' = ';') PARTITIONED BY (b) {query}"
    ).args
    assert first == second
    assert first["options"] == {"connector": "csv", "path": f"{STORAGE_ROOT}/t", "sep": ";"}


@pytest.mark.parametrize(
    ("clauses", "options"),
    [
        ("", {"format": "parquet"}),
        ("USING orc", {"format": "orc"}),
        ("USING ORC OPTIONS ('compression' = 'zstd')", {"format": "orc", "compression": "zstd"}),
        ("WITH ('format' = 'json')", {"format": "json"}),
        ("OPTIONS (format 'json')", {"format": "json"}),
        ("WITH ('compression' = 'snappy')", {"format": "parquet", "compression": "snappy"}),
        (
            f"USING text OPTIONS (path '{STORAGE_ROOT}/logs')",
            {"connector": "text", "path": f"{STORAGE_ROOT}/logs"},
        ),
        (
            f"WITH ('connector' = 'parquet', 'path' = 'file://{STORAGE_ROOT}/p/')",
            {"connector": "parquet", "path": f"{STORAGE_ROOT}/p"},
        ),
        (
            f"USING json LOCATION '{STORAGE_ROOT}/j'",
            {"connector": "json", "path": f"{STORAGE_ROOT}/j"},
        ),
    ],
)
def test_ctas_options_managed_and_external(clauses: str, options: dict[str, str]) -> None:
    assert plan(f"CREATE TABLE t {clauses} AS SELECT 1 AS a").args["options"] == options


@pytest.mark.parametrize(
    ("clauses", "atomic"),
    [
        ("", None),
        ("WITH ('table.ctas.atomic' = 'true')", True),
        ("WITH ('table.ctas.atomic' = 'false')", False),
        ("OPTIONS (table.ctas.atomic = true)", True),
        ("OPTIONS (table.ctas.atomic FALSE)", False),
        ("WITH ('TABLE.CTAS.ATOMIC' = 'True')", True),
        ("USING csv OPTIONS ('table.ctas.atomic' 'true', header 'true')", True),
    ],
)
def test_ctas_atomic_option_is_an_arg_not_an_option(clauses: str, atomic: bool | None) -> None:
    args = plan(f"CREATE TABLE t {clauses} AS SELECT 1 AS a").args
    assert args["atomic"] is atomic
    assert not any(key.lower() == "table.ctas.atomic" for key in args["options"])


@pytest.mark.parametrize("value", ["'yes'", "'1'", "''", "1"])
def test_ctas_atomic_option_must_be_a_boolean(value: str) -> None:
    with pytest.raises(CoreError) as caught:
        plan(f"CREATE TABLE t WITH ('table.ctas.atomic' = {value}) AS SELECT 1")
    assert caught.value.code == "VALIDATION_ERROR"
    assert "'table.ctas.atomic' must be 'true' or 'false'" in caught.value.message


def test_ctas_with_quoted_names() -> None:
    catalog = _catalog()
    result = plan(
        "CREATE TABLE `my cat`.`d b`.`new``t` AS SELECT `a b` AS `x y` FROM `my cat`.`d b`.`t``x`",
        catalog,
    )
    assert result.target == ("my cat", "d b", "new`t")
    assert result.args["identifier"] == ["my cat", "d b", "new`t"]
    assert result.sql == "SELECT `a b` AS `x y` FROM `__tessera_r1` AS `t``x`"
    assert result.relations[0].identifier == ("my cat", "d b", "t`x")


def test_ctas_two_part_name_uses_the_current_catalog() -> None:
    assert plan("CREATE TABLE other.t AS SELECT 1").target == ("c", "other", "t")
    assert plan("CREATE TABLE x.y.t AS SELECT 1").target == ("x", "y", "t")


def test_ctas_query_is_spliced_byte_identical() -> None:
    query = (
        "WITH recent AS (\n"
        "    SELECT /* keep me */ id,  name\n"
        "    FROM   customers   -- and me\n"
        ")\n"
        "select r.id, Slugify( r.name ) AS s, o.qty\n"
        "FROM recent r JOIN c.d.orders AS o ON o.customer_id = r.id"
    )
    result = plan(f"CREATE TABLE t AS\n{query}\n-- the end")
    assert result.sql == (
        query.replace("FROM   customers", "FROM   `__tessera_r1` AS `customers`")
        .replace("Slugify(", "`__tessera_f1`(")
        .replace("c.d.orders AS o", "`__tessera_r2` AS o")
        + "\n-- the end"
    )


def test_ctas_over_a_view_temporary_objects_and_values() -> None:
    catalog = _catalog()
    result = plan("CREATE TABLE t AS SELECT * FROM big_orders JOIN tmp USING (id)", catalog)
    assert [r.identifier[2] for r in result.relations] == ["orders", "big_orders", "tmp"]
    assert plan("CREATE TABLE t AS VALUES (1, 'a'), (2, 'b')").relations == ()
    assert plan("CREATE TABLE t AS TABLE customers").sql == "TABLE `__tessera_r1`"


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE TABLE IF NOT EXISTS orders AS SELECT * FROM customers",
        "CREATE TABLE IF NOT EXISTS c.d.ORDERS USING csv AS SELECT * FROM missing_table",
        "CREATE TABLE IF NOT EXISTS big_orders AS SELECT nope(1)",
        "CREATE TABLE IF NOT EXISTS staged AS SELECT 1",
    ],
)
def test_ctas_if_not_exists_on_an_existing_target_is_a_skip(sql: str) -> None:
    catalog = _catalog()
    result = plan(sql, catalog)
    assert (result.kind, result.action, result.needs_spark) == ("ctas", "ctas", False)
    assert result.args["skip"] is True
    assert result.args["if_not_exists"] is True
    assert (result.sql, result.relations, result.functions) == ("", (), ())
    assert result.target is not None and len(result.target) == 3
    # only the target was looked up: the query was guarded, not resolved
    assert len(catalog.lookups) == 1 and catalog.lookups[0].startswith("relation ")


def test_ctas_skip_still_guards_the_query() -> None:
    with pytest.raises(ForbiddenSql, match="parquet"):
        plan("CREATE TABLE IF NOT EXISTS orders AS SELECT * FROM parquet.`/x`")
    with pytest.raises(ForbiddenSql, match=r"reflect\(\)"):
        plan("CREATE TABLE IF NOT EXISTS orders AS SELECT reflect('a', 'b')")


def test_ctas_skip_is_absent_when_the_target_is_new() -> None:
    result = plan("CREATE TABLE IF NOT EXISTS t AS SELECT 1")
    assert "skip" not in result.args
    assert result.needs_spark


@pytest.mark.parametrize(
    ("sql", "identifier"),
    [
        ("CREATE TABLE orders AS SELECT 1", "`c`.`d`.`orders`"),
        ("CREATE TABLE C.D.Orders USING csv AS SELECT 1", "`C`.`D`.`Orders`"),
        ("CREATE TABLE big_orders AS SELECT 1", "`c`.`d`.`big_orders`"),
        ("CREATE TABLE staged AS SELECT 1", "`c`.`d`.`staged`"),
    ],
)
def test_ctas_on_an_existing_target_already_exists(sql: str, identifier: str) -> None:
    with pytest.raises(AlreadyExists) as caught:
        plan(sql, _catalog())
    assert caught.value.code == "ALREADY_EXISTS"
    assert caught.value.message == f"Table {identifier} already exists."


def test_ctas_existing_check_comes_before_resolving_the_query() -> None:
    with pytest.raises(AlreadyExists):
        plan("CREATE TABLE orders AS SELECT * FROM missing_table")


@pytest.mark.parametrize("if_not_exists", ["", "IF NOT EXISTS "])
def test_ctas_over_a_temporary_object_does_not_count(if_not_exists: str) -> None:
    # The reader shows the temporary object first: the permanent one is unknown here, so
    # the plan goes ahead and the catalog's unique constraint decides on the web side.
    catalog = _catalog()
    for name in ("tmp", "tmp_view"):
        result = plan(f"CREATE TABLE {if_not_exists}{name} AS SELECT 1 AS id", catalog)
        assert result.action == "ctas"
        assert result.needs_spark
        assert "skip" not in result.args
        assert result.target == ("c", "d", name)


def test_ctas_database_must_exist() -> None:
    with pytest.raises(NotFound, match=r"Database `c`.`nope` does not exist."):
        plan("CREATE TABLE nope.t AS SELECT 1")
    with pytest.raises(NotFound, match=r"A catalog with name \[k\] does not exist."):
        plan("CREATE TABLE IF NOT EXISTS k.d.t AS SELECT 1")


def test_ctas_query_reading_a_missing_table() -> None:
    with pytest.raises(NotFound, match=r"Table or view `c`\.`d`\.`missing` not found"):
        plan("CREATE TABLE t AS SELECT * FROM missing")


def test_ctas_query_reading_a_staged_table_names_the_job() -> None:
    with pytest.raises(CoreError) as caught:
        plan("CREATE TABLE t AS SELECT * FROM staged", _catalog())
    assert caught.value.message == (
        "Table `c`.`d`.`staged` is being created by job job-7 and cannot be read yet."
    )


@pytest.mark.parametrize(
    ("sql", "error", "fragment"),
    [
        ("CREATE TABLE t (a INT) AS SELECT 1", CoreError, "takes no column list"),
        ("CREATE TABLE t PARTITIONED BY (a, A) AS SELECT 1 AS a", CoreError, "listed twice"),
        ("CREATE TABLE t PARTITIONED BY (a.b) AS SELECT 1 AS a", ParseError, "Expected ')'"),
        ("CREATE TABLE t PARTITIONED BY (a + 1) AS SELECT 1 AS a", ParseError, "Expected ')'"),
        ("CREATE TABLE t PARTITIONED BY (a) LOCATION AS SELECT 1", ParseError, "quoted path"),
        ("CREATE TABLE t FOO AS SELECT 1", ParseError, "LOCATION or AS but found 'FOO'"),
        ("CREATE TABLE t COMMENT 'a' COMMENT 'b' AS SELECT 1", ParseError, "given twice"),
        ("CREATE TABLE t AS", ParseError, "Expected a query"),
        ("CREATE TABLE t AS DROP TABLE orders", ParseError, "Expected a query"),
        ("CREATE TABLE t AS SELECT FROM WHERE", ParseError, "Cannot parse"),
        (f"CREATE TABLE t LOCATION '{STORAGE_ROOT}/t' AS SELECT 1", CoreError, "needs a format"),
        ("CREATE TABLE t WITH ('connector' = 'csv') AS SELECT 1", CoreError, "needs a path"),
        (
            f"CREATE TABLE t WITH ('path' = '{STORAGE_ROOT}/a') LOCATION '{STORAGE_ROOT}/b' "
            "AS SELECT 1",
            CoreError,
            "either LOCATION or the 'path' option",
        ),
        ("CREATE TABLE t USING csv WITH ('format' = 'json') AS SELECT 1", CoreError, "contradicts"),
        ("CREATE TABLE t USING csv LOCATION '/etc' AS SELECT 1", ForbiddenSql, "storage roots"),
        ("CREATE OR REPLACE TABLE t AS SELECT 1", ForbiddenSql, "CREATE OR REPLACE TABLE"),
        ("CREATE TEMPORARY TABLE t AS SELECT 1", UnsupportedStatement, "TEMPORARY VIEW"),
    ],
)
def test_ctas_errors(sql: str, error: type[CoreError], fragment: str) -> None:
    with pytest.raises(error) as caught:
        plan(sql)
    assert fragment in caught.value.message


# -- INSERT ---------------------------------------------------------------------------------


def test_insert_plan_exactly() -> None:
    sql = "INSERT INTO orders (qty, ID) SELECT 2, id FROM customers"
    assert _round_trips(plan(sql)) == {
        "kind": "insert",
        "action": "insert",
        "needs_spark": True,
        "sql": "SELECT 2, id FROM `__tessera_r1` AS `customers`",
        "relations": [CUSTOMERS_PLAN],
        "functions": [],
        "target": ["c", "d", "orders"],
        "args": {
            "identifier": ["c", "d", "orders"],
            "overwrite": False,
            "columns": ["qty", "id"],
            "table": {
                "alias": "__tessera_t1",
                "identifier": ["c", "d", "orders"],
                "kind": "table",
                "format": "parquet",
                "path": f"{WAREHOUSE}/c/d/orders",
                "options": {},
                "physical_schema": ORDERS_SCHEMA,
                "columns": ORDERS_COLUMNS,
            },
            "location": f"{WAREHOUSE}/c/d/orders",
            "managed": True,
        },
    }


@pytest.mark.parametrize(
    ("sql", "overwrite"),
    [
        ("INSERT INTO customers SELECT id, name FROM customers", False),
        ("INSERT INTO TABLE customers SELECT id, name FROM customers", False),
        ("INSERT OVERWRITE customers SELECT id, name FROM customers", True),
        ("INSERT OVERWRITE TABLE customers SELECT id, name FROM customers", True),
        ("insert overwrite table c.d.CUSTOMERS select id, name from customers", True),
    ],
)
def test_insert_forms(sql: str, overwrite: bool) -> None:
    result = plan(sql)
    assert (result.kind, result.action, result.needs_spark) == ("insert", "insert", True)
    assert result.args["overwrite"] is overwrite
    assert result.args["columns"] is None
    assert result.target == ("c", "d", "customers")
    assert result.args["identifier"] == ["c", "d", "customers"]


def test_insert_reading_its_own_target() -> None:
    result = plan("INSERT OVERWRITE orders SELECT id, price, qty, customer_id FROM orders")
    assert [r.alias for r in result.relations] == ["__tessera_r1"]
    assert result.relations[0].identifier == ("c", "d", "orders")
    assert result.args["table"]["alias"] == "__tessera_t1"
    assert result.sql == "SELECT id, price, qty, customer_id FROM `__tessera_r1` AS `orders`"


def test_insert_into_an_external_table() -> None:
    result = plan("INSERT INTO archive SELECT id, name FROM customers", _catalog())
    assert result.args["managed"] is False
    assert result.args["location"] == f"{STORAGE_ROOT}/archive"
    assert result.args["table"] == {
        "alias": "__tessera_t1",
        "identifier": ["c", "d", "archive"],
        "kind": "table",
        "format": "json",
        "path": f"{STORAGE_ROOT}/archive",
        "options": {"multiLine": "true"},
        "physical_schema": "`id` BIGINT, `name` STRING",
        "columns": [{"name": "id", "kind": "physical"}, {"name": "name", "kind": "physical"}],
    }


def test_insert_with_quoted_names() -> None:
    catalog = _catalog()
    result = plan("INSERT INTO `my cat`.`d b`.`t``x` (`C`, `a b`) VALUES (1, 2)", catalog)
    assert result.target == ("my cat", "d b", "t`x")
    assert result.args["columns"] == ["c", "a b"]
    assert result.sql == "VALUES (1, 2)"


def test_insert_query_is_spliced_byte_identical() -> None:
    query = (
        "SELECT  o.id , Slugify( c.name ) -- the slug\n"
        "FROM orders o\n"
        "   JOIN customers AS c ON c.id = o.customer_id /* done */"
    )
    result = plan(f"INSERT INTO customers\n{query}\n")
    assert result.sql == (
        query.replace("Slugify(", "`__tessera_f1`(")
        .replace("orders o", "`__tessera_r1` o")
        .replace("customers AS c", "`__tessera_r2` AS c")
    )


@pytest.mark.parametrize(
    "query",
    [
        "SELECT * FROM customers",
        "SELECT c.* FROM customers c",
        "SELECT id, c.* FROM customers c",
        "SELECT explode(array(1, 2)) FROM customers",
        "SELECT inline(array(struct(1, 'a')))",
        "TABLE customers",
        "SELECT * FROM customers UNION ALL SELECT * FROM customers",
    ],
)
def test_insert_column_count_is_left_to_the_worker_when_unknown(query: str) -> None:
    assert plan(f"INSERT INTO orders {query}").action == "insert"


@pytest.mark.parametrize(
    "query",
    [
        "SELECT 1, 'a'",
        "SELECT id, name FROM customers",
        "SELECT count(*), max(name) FROM customers",
        "VALUES (1, 'a'), (2, 'b')",
        "(SELECT 1, 'a')",
        "SELECT 1, 'a' UNION ALL SELECT * FROM customers",
        "WITH a AS (SELECT 1 AS x) SELECT x, 'a' FROM a",
        "FROM customers SELECT id, name",
        "SELECT posexplode(array('a')) AS (id, name)",
    ],
)
def test_insert_column_count_matches(query: str) -> None:
    assert plan(f"INSERT INTO customers {query}").args["columns"] is None


def test_insert_column_count_mismatch_names_the_counts_and_the_columns() -> None:
    with pytest.raises(CoreError) as caught:
        plan("INSERT INTO orders SELECT id, 1.5, 2 FROM customers")
    assert caught.value.code == "VALIDATION_ERROR"
    assert caught.value.message == (
        "Cannot insert into `c`.`d`.`orders`: the query produces 3 columns but the table has 4 "
        "(`id`, `price`, `qty`, `customer_id`)."
    )
    assert caught.value.details == {
        "identifier": ["c", "d", "orders"],
        "query_columns": 3,
        "target_columns": ["id", "price", "qty", "customer_id"],
    }


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        (
            "INSERT INTO customers VALUES (1)",
            "the query produces 1 column but the table has 2 (`id`, `name`).",
        ),
        (
            "INSERT INTO orders (id, qty) SELECT 1",
            "the query produces 1 column but the column list names 2 (`id`, `qty`).",
        ),
        (
            "INSERT INTO orders (id) SELECT 1, 2, 3",
            "the query produces 3 columns but the column list names 1 (`id`).",
        ),
        (
            "INSERT OVERWRITE customers (SELECT 1, 2, 3) UNION (SELECT 1, 2, 3)",
            "the query produces 3 columns but the table has 2 (`id`, `name`).",
        ),
    ],
)
def test_insert_column_count_mismatches(sql: str, message: str) -> None:
    with pytest.raises(CoreError) as caught:
        plan(sql)
    assert caught.value.message.endswith(message)


def test_insert_count_ignores_computed_and_metadata_columns() -> None:
    catalog = sample_catalog()
    catalog.add_table("c.d.calc", ["a INT", ComputedColumn("b", "a + 1"), "c INT"])
    result = plan("INSERT INTO calc SELECT 1, 2", catalog)
    assert result.args["table"]["physical_schema"] == "`a` INT, `c` INT"
    with pytest.raises(CoreError, match="produces 3 columns but the table has 2"):
        plan("INSERT INTO calc SELECT 1, 2, 3", catalog)


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        (
            "INSERT INTO orders (id, nope) SELECT 1, 2",
            "Column `nope` does not exist in `c`.`d`.`orders`; its columns are: `id`, `price`, "
            "`qty`, `customer_id`.",
        ),
        (
            "INSERT INTO orders (total) SELECT 1",
            "Column `total` of `c`.`d`.`orders` is a computed column and cannot be written; "
            "INSERT writes the physical columns: `id`, `price`, `qty`, `customer_id`.",
        ),
        (
            "INSERT INTO orders (file) SELECT 'x'",
            "Column `file` of `c`.`d`.`orders` is a metadata column and cannot be written; "
            "INSERT writes the physical columns: `id`, `price`, `qty`, `customer_id`.",
        ),
        ("INSERT INTO orders (id, ID) SELECT 1, 2", "Column `ID` is listed twice."),
    ],
)
def test_insert_column_list_errors(sql: str, message: str) -> None:
    with pytest.raises(CoreError) as caught:
        plan(sql)
    assert caught.value.code == "VALIDATION_ERROR"
    assert caught.value.message == message


def test_insert_column_list_or_parenthesised_query() -> None:
    assert plan("INSERT INTO customers (SELECT 1, 'a')").sql == "(SELECT 1, 'a')"
    listed = plan("INSERT INTO customers (name) (SELECT 'a')")
    assert (listed.args["columns"], listed.sql) == (["name"], "(SELECT 'a')")
    assert plan("INSERT INTO customers ((SELECT 1, 'a'))").args["columns"] is None


def test_insert_by_name_leaves_the_columns_to_the_querys_names() -> None:
    # The worker matches the query's column names to the table's (insert_frame); by name, a
    # query may leave columns out, so the planner does not count them.
    named = plan("INSERT INTO customers BY NAME SELECT 'x' AS name")
    assert (named.args["by_name"], named.args["columns"]) == (True, None)
    assert named.sql == "SELECT 'x' AS name"
    assert "by_name" not in plan("INSERT INTO customers SELECT 1, 'x'").args


@pytest.mark.parametrize(
    ("sql", "error", "code", "message"),
    [
        (
            "INSERT INTO big_orders SELECT 1",
            CoreError,
            "VALIDATION_ERROR",
            "`c`.`d`.`big_orders` is a view; INSERT writes only into tables.",
        ),
        (
            "INSERT INTO tmp_view SELECT 1",
            CoreError,
            "VALIDATION_ERROR",
            "`c`.`d`.`tmp_view` is a view; INSERT writes only into tables.",
        ),
        (
            "INSERT INTO staged SELECT 1",
            CoreError,
            "VALIDATION_ERROR",
            "Table `c`.`d`.`staged` is being created by job job-7 and cannot be read yet.",
        ),
        (
            "INSERT INTO staged_old SELECT 1",
            CoreError,
            "VALIDATION_ERROR",
            "Table `c`.`d`.`staged_old` is being created and cannot be read yet.",
        ),
        (
            "INSERT INTO tmp SELECT 1, 'a'",
            UnsupportedStatement,
            "UNSUPPORTED_STATEMENT",
            "INSERT into temporary tables is not supported: Tessera does not own a temporary "
            "table's data (`c`.`d`.`tmp` is temporary).",
        ),
        (
            "INSERT INTO missing SELECT 1",
            NotFound,
            "NOT_FOUND",
            "Table `c`.`d`.`missing` not found",
        ),
        (
            "INSERT INTO other.missing SELECT 1",
            NotFound,
            "NOT_FOUND",
            "Table `c`.`other`.`missing` not found",
        ),
    ],
)
def test_insert_targets(sql: str, error: type[CoreError], code: str, message: str) -> None:
    with pytest.raises(error) as caught:
        plan(sql, _catalog())
    assert caught.value.code == code
    assert caught.value.message == message


def test_insert_target_errors_come_after_the_guard_and_before_the_query() -> None:
    with pytest.raises(ForbiddenSql):
        plan("INSERT INTO missing SELECT * FROM parquet.`/x`")
    with pytest.raises(NotFound, match=r"Table `c`\.`d`\.`missing` not found"):
        plan("INSERT INTO missing SELECT * FROM missing_too")


@pytest.mark.parametrize(
    ("sql", "error", "fragment"),
    [
        ("INSERT INTO orders PARTITION (id = 1) SELECT 1", UnsupportedStatement, "PARTITION (…)"),
        ("INSERT OVERWRITE orders PARTITION (id) SELECT 1", UnsupportedStatement, "PARTITION"),
        ("INSERT INTO orders (id) PARTITION (qty = 1) SELECT 1", UnsupportedStatement, "PARTITION"),
        ("INSERT OVERWRITE DIRECTORY '/tmp/x' SELECT 1", ForbiddenSql, "DIRECTORY"),
        ("INSERT OVERWRITE LOCAL DIRECTORY '/tmp/x' SELECT 1", ForbiddenSql, "DIRECTORY"),
        ("INSERT INTO parquet.`/x` SELECT 1", ForbiddenSql, "Writing files by path"),
        ("INSERT INTO customers", ParseError, "Expected a query"),
        ("INSERT customers SELECT 1", ParseError, "Expected INTO or OVERWRITE"),
        ("INSERT INTO customers (id,) SELECT 1", ParseError, "Expected a column name"),
        ("INSERT INTO customers DELETE FROM x", ParseError, "Expected a query"),
        ("INSERT INTO a.b.c.d SELECT 1", ParseError, "at most 3 parts"),
    ],
)
def test_insert_errors(sql: str, error: type[CoreError], fragment: str) -> None:
    with pytest.raises(error) as caught:
        plan(sql)
    assert fragment in caught.value.message


# -- statement sets -------------------------------------------------------------------------

STATEMENT_SET = """EXECUTE STATEMENT SET
BEGIN
  INSERT INTO customers SELECT id, slugify(name) FROM customers;
  INSERT OVERWRITE archive (name, id)
    SELECT upper(c.name), o.id FROM orders o JOIN customers c ON c.id = o.customer_id;
END"""


def test_statement_set_plan_exactly() -> None:
    result = plan(STATEMENT_SET, _catalog())
    data = _round_trips(result)
    orders = {
        "alias": "__tessera_r2",
        "identifier": ["c", "d", "orders"],
        "kind": "table",
        "format": "parquet",
        "path": f"{WAREHOUSE}/c/d/orders",
        "options": {},
        "physical_schema": ORDERS_SCHEMA,
        "columns": ORDERS_COLUMNS,
    }
    assert data == {
        "kind": "statement_set",
        "action": "statement_set",
        "needs_spark": True,
        "sql": "",
        "relations": [CUSTOMERS_PLAN, orders],
        "functions": [SLUGIFY_PLAN],
        "target": None,
        "args": {
            "inserts": [
                {
                    "identifier": ["c", "d", "customers"],
                    "overwrite": False,
                    "columns": None,
                    "table": {**CUSTOMERS_PLAN, "alias": "__tessera_t1"},
                    "location": f"{WAREHOUSE}/c/d/customers",
                    "managed": True,
                    "sql": "SELECT id, `__tessera_f1`(name) FROM `__tessera_r1` AS `customers`",
                },
                {
                    "identifier": ["c", "d", "archive"],
                    "overwrite": True,
                    "columns": ["name", "id"],
                    "table": {
                        "alias": "__tessera_t2",
                        "identifier": ["c", "d", "archive"],
                        "kind": "table",
                        "format": "json",
                        "path": f"{STORAGE_ROOT}/archive",
                        "options": {"multiLine": "true"},
                        "physical_schema": "`id` BIGINT, `name` STRING",
                        "columns": [
                            {"name": "id", "kind": "physical"},
                            {"name": "name", "kind": "physical"},
                        ],
                    },
                    "location": f"{STORAGE_ROOT}/archive",
                    "managed": False,
                    "sql": "SELECT upper(c.name), o.id FROM `__tessera_r2` o "
                    "JOIN `__tessera_r1` c ON c.id = o.customer_id",
                },
            ],
            "targets": [["c", "d", "customers"], ["c", "d", "archive"]],
        },
    }


def test_statement_set_shares_one_alias_per_object() -> None:
    result = plan(
        "EXECUTE STATEMENT SET BEGIN "
        "INSERT INTO customers SELECT id, slugify(name) FROM big_orders JOIN customers USING (id);"
        "INSERT INTO archive SELECT id, slugify(name) FROM customers c WHERE plus1(id) > 1;"
        "INSERT INTO orders SELECT id, price, qty, customer_id FROM big_orders;"
        " END",
        _catalog(),
    )
    assert [(r.alias, r.identifier[2]) for r in result.relations] == [
        ("__tessera_r1", "orders"),
        ("__tessera_r2", "big_orders"),
        ("__tessera_r3", "customers"),
    ]
    assert [(f.alias, f.identifier[2]) for f in result.functions] == [
        ("__tessera_f1", "slugify"),
        ("__tessera_f2", "plus1"),
    ]
    sqls = [insert["sql"] for insert in result.args["inserts"]]
    assert sqls == [
        "SELECT id, `__tessera_f1`(name) FROM `__tessera_r2` AS `big_orders` "
        "JOIN `__tessera_r3` AS `customers` USING (id)",
        "SELECT id, `__tessera_f1`(name) FROM `__tessera_r3` c WHERE `__tessera_f2`(id) > 1",
        "SELECT id, price, qty, customer_id FROM `__tessera_r2` AS `big_orders`",
    ]
    assert [insert["table"]["alias"] for insert in result.args["inserts"]] == [
        "__tessera_t1",
        "__tessera_t2",
        "__tessera_t3",
    ]
    assert result.args["targets"] == [
        ["c", "d", "customers"],
        ["c", "d", "archive"],
        ["c", "d", "orders"],
    ]


@pytest.mark.parametrize(
    "sql",
    [
        "EXECUTE STATEMENT SET BEGIN INSERT INTO customers SELECT 1, 'a'; END",
        "EXECUTE STATEMENT SET BEGIN INSERT INTO customers SELECT 1, 'a' END",
        "execute statement set begin insert into customers select 1, 'a'; end;",
        "EXECUTE\n  STATEMENT\tSET\nBEGIN\n\n INSERT INTO customers\n SELECT 1, 'a'\n;;\nEND\n",
        "EXECUTE STATEMENT SET BEGIN INSERT INTO customers SELECT 1, 'a' -- c; d\n; END",
    ],
)
def test_statement_set_layouts(sql: str) -> None:
    result = plan(sql)
    assert (result.kind, result.action) == ("statement_set", "statement_set")
    assert [i["sql"].upper() for i in result.args["inserts"]] == ["SELECT 1, 'A'"]
    assert result.args["targets"] == [["c", "d", "customers"]]


def test_statement_set_with_case_end_inside() -> None:
    sql = (
        "EXECUTE STATEMENT SET BEGIN\n"
        "INSERT INTO customers SELECT CASE WHEN id > 1 THEN id END, name FROM customers;\n"
        "INSERT INTO archive SELECT 1, CASE WHEN true THEN 'a' ELSE 'b' END\n"
        "END"
    )
    result = plan(sql, _catalog())
    assert result.args["inserts"][1]["sql"] == "SELECT 1, CASE WHEN true THEN 'a' ELSE 'b' END"
    script = split_script(f"{sql};\nSELECT 1")
    assert script == [sql, "SELECT 1"]


@pytest.mark.parametrize(
    ("sql", "error", "message"),
    [
        (
            "EXECUTE STATEMENT SET BEGIN END",
            CoreError,
            "A statement set needs at least one INSERT statement.",
        ),
        (
            "EXECUTE STATEMENT SET BEGIN ; ; END",
            CoreError,
            "A statement set needs at least one INSERT statement.",
        ),
        (
            "EXECUTE STATEMENT SET BEGIN INSERT INTO customers SELECT 1, 'a'; SELECT 1; END",
            CoreError,
            "A statement set can contain only INSERT statements, but statement 2 starts with "
            "SELECT.",
        ),
        (
            "EXECUTE STATEMENT SET BEGIN CREATE TABLE t AS SELECT 1; END",
            CoreError,
            "A statement set can contain only INSERT statements, but statement 1 starts with "
            "CREATE.",
        ),
        (
            "EXECUTE STATEMENT SET BEGIN INSERT INTO customers SELECT 1, 'a'; "
            "INSERT OVERWRITE CUSTOMERS SELECT 2, 'b'; END",
            CoreError,
            "The statement set writes `c`.`d`.`customers` more than once: each table can be the "
            "target of one INSERT of the set.",
        ),
        (
            "EXECUTE STATEMENT SET BEGIN INSERT INTO customers SELECT 1, 'a'; "
            "INSERT INTO big_orders SELECT 1; END",
            CoreError,
            "`c`.`d`.`big_orders` is a view; INSERT writes only into tables.",
        ),
        (
            "EXECUTE STATEMENT SET BEGIN INSERT INTO missing SELECT 1; END",
            NotFound,
            "Table `c`.`d`.`missing` not found",
        ),
        (
            "EXECUTE STATEMENT SET BEGIN INSERT INTO tmp SELECT 1, 'a'; END",
            UnsupportedStatement,
            "INSERT into temporary tables is not supported: Tessera does not own a temporary "
            "table's data (`c`.`d`.`tmp` is temporary).",
        ),
    ],
)
def test_statement_set_errors(sql: str, error: type[CoreError], message: str) -> None:
    with pytest.raises(error) as caught:
        plan(sql, _catalog())
    assert caught.value.message == message


@pytest.mark.parametrize(
    ("sql", "fragment"),
    [
        ("EXECUTE STATEMENT SET INSERT INTO customers SELECT 1, 'a'", "Expected BEGIN"),
        (
            "EXECUTE STATEMENT SET BEGIN INSERT INTO customers "
            "SELECT CASE WHEN true THEN 1 END, 'a'",
            "Expected END closing the statement set",
        ),
        (
            "EXECUTE STATEMENT SET BEGIN INSERT INTO customers SELECT 1, 'a'; END extra",
            "Expected the end of the statement but found 'extra'",
        ),
    ],
)
def test_statement_set_parse_errors(sql: str, fragment: str) -> None:
    with pytest.raises(ParseError) as caught:
        plan(sql)
    assert fragment in caught.value.message


def test_other_execute_statements_stay_forbidden() -> None:
    with pytest.raises(ForbiddenSql, match="EXECUTE STATEMENT is not supported"):
        plan("EXECUTE STATEMENT BEGIN INSERT INTO customers SELECT 1, 'a'; END")
    with pytest.raises(ForbiddenSql, match="EXECUTE IMMEDIATE"):
        plan("EXECUTE IMMEDIATE 'INSERT INTO customers SELECT 1, 2'")


def test_statement_set_guards_every_insert_before_resolving() -> None:
    catalog = _catalog()
    catalog.lookups.clear()
    with pytest.raises(ForbiddenSql, match="Writing files by path"):
        plan(
            "EXECUTE STATEMENT SET BEGIN INSERT INTO missing SELECT 1; "
            "INSERT INTO json.`/x` SELECT 1; END",
            catalog,
        )
    assert catalog.lookups == []
