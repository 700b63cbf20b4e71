"""The planner: classification, resolution, rewriting by splicing, plans and errors."""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.errors import CoreError, NotFound
from core.planner import (
    ForbiddenSql,
    ParseError,
    Plan,
    UnsupportedStatement,
    plan_statement,
    split_script,
    split_script_spans,
)
from tests.core.test_planner_support import context, plan, sample_catalog

# -- classification: every statement form of API.md §3 ----------------------------------

CLASSIFIED: list[tuple[str, str, str]] = [
    ("USE CATALOG x", "use", "use"),
    ("USE other", "use", "use"),
    ("USE DATABASE other", "use", "use"),
    ("USE SCHEMA other", "use", "use"),
    ("USE c.other", "use", "use"),
    ("SHOW CATALOGS", "show", "show_catalogs"),
    ("SHOW CATALOGS LIKE 'c*'", "show", "show_catalogs"),
    ("SHOW DATABASES", "show", "show_databases"),
    ("SHOW SCHEMAS IN x", "show", "show_databases"),
    ("SHOW TABLES", "show", "show_tables"),
    ("SHOW TABLES FROM c.other LIKE 'o*'", "show", "show_tables"),
    ("SHOW VIEWS IN other", "show", "show_views"),
    ("SHOW TABLE EXTENDED IN other LIKE '*'", "show", "show_tables"),
    ("SHOW FUNCTIONS", "show", "show_functions"),
    ("SHOW CREATE TABLE orders", "show", "show_create_table"),
    ("DESCRIBE orders", "describe", "describe"),
    ("DESC TABLE orders", "describe", "describe"),
    ("DESCRIBE EXTENDED big_orders", "describe", "describe"),
    ("EXPLAIN SELECT * FROM orders", "explain", "explain"),
    ("EXPLAIN FORMATTED SELECT 1", "explain", "explain"),
    ("CREATE CATALOG k", "ddl", "create_catalog"),
    ("CREATE CATALOG IF NOT EXISTS k COMMENT 'a catalog'", "ddl", "create_catalog"),
    ("CREATE DATABASE n", "ddl", "create_database"),
    ("CREATE SCHEMA IF NOT EXISTS x.n", "ddl", "create_database"),
    ("DROP CATALOG IF EXISTS k CASCADE", "ddl", "drop_catalog"),
    ("DROP DATABASE other", "ddl", "drop_database"),
    ("DROP SCHEMA IF EXISTS c.other CASCADE", "ddl", "drop_database"),
    ("CREATE TABLE t (id INT)", "ddl", "create_table"),
    (
        "CREATE TABLE IF NOT EXISTS t (id INT, WATERMARK FOR ts AS ts, ts TIMESTAMP)",
        "ddl",
        "create_table",
    ),
    ("CREATE VIEW v AS SELECT * FROM orders", "ddl", "create_view"),
    ("CREATE OR REPLACE VIEW v AS SELECT 1", "ddl", "create_view"),
    ("CREATE VIEW IF NOT EXISTS v COMMENT 'x' AS VALUES (1)", "ddl", "create_view"),
    ("CREATE FUNCTION f AS 'tessera_udfs.text.slugify'", "ddl", "create_function"),
    (
        "CREATE FUNCTION IF NOT EXISTS f AS 'tessera_udfs.a.b' LANGUAGE PYTHON",
        "ddl",
        "create_function",
    ),
    ("CREATE FUNCTION f(x INT) RETURNS INT RETURN x + 1", "ddl", "create_function"),
    ("DROP TABLE orders", "ddl", "drop_table"),
    ("DROP VIEW IF EXISTS big_orders", "ddl", "drop_view"),
    ("DROP FUNCTION slugify", "ddl", "drop_function"),
    ("SET spark.sql.shuffle.partitions = 4", "set", "set"),
    ("SET spark.sql.ansi.enabled=false", "set", "set"),
    ("SET", "set", "set"),
    ("RESET", "set", "reset"),
    ("RESET result.max_rows", "set", "reset"),
    ("SELECT 1", "query", "query"),
    ("select * from orders", "query", "query"),
    ("WITH a AS (SELECT 1 AS x) SELECT x FROM a", "query", "query"),
    ("VALUES (1, 'a'), (2, 'b')", "query", "query"),
    ("TABLE orders", "query", "query"),
    ("FROM orders SELECT id", "query", "query"),
    ("(SELECT id FROM orders) UNION ALL (SELECT id FROM customers)", "query", "query"),
    ("SELECT 1;", "query", "query"),
    ("CREATE TABLE t AS SELECT * FROM orders", "ctas", "ctas"),
    (
        "CREATE TABLE IF NOT EXISTS t USING parquet OPTIONS ('compression' = 'zstd') AS SELECT 1",
        "ctas",
        "ctas",
    ),
    ("CREATE TABLE t WITH ('format' = 'csv') AS SELECT 1", "ctas", "ctas"),
    ("INSERT INTO customers SELECT * FROM customers", "insert", "insert"),
    ("INSERT OVERWRITE TABLE customers SELECT id, name FROM customers", "insert", "insert"),
    ("INSERT INTO customers (name, id) VALUES ('a', 1)", "insert", "insert"),
    (
        "EXECUTE STATEMENT SET BEGIN INSERT INTO customers SELECT 1, 'a'; "
        "INSERT INTO orders SELECT * FROM orders; END",
        "statement_set",
        "statement_set",
    ),
]


@pytest.mark.parametrize(("sql", "kind", "action"), CLASSIFIED)
def test_statement_is_classified(sql: str, kind: str, action: str) -> None:
    result = plan(sql)
    assert (result.kind, result.action) == (kind, action)
    expressions = action == "create_table" and "WATERMARK" in sql
    assert result.needs_spark == (kind in ("query", "explain") or action in _SPARK or expressions)


_SPARK = ("create_view", "create_function", "ctas", "insert", "statement_set")


def test_explain_of_a_write_is_refused_after_its_own_rules() -> None:
    with pytest.raises(ForbiddenSql, match="EXPLAIN can only explain queries"):
        plan("EXPLAIN INSERT INTO customers SELECT 1, 'a'")
    with pytest.raises(ForbiddenSql, match="INSERT OVERWRITE DIRECTORY"):
        plan("EXPLAIN INSERT OVERWRITE DIRECTORY '/tmp/x' SELECT 1")


UNSUPPORTED: list[tuple[str, str]] = [
    ("CREATE TEMPORARY TABLE t AS SELECT 1", "Use CREATE TEMPORARY VIEW … AS SELECT instead."),
    ("FROM orders INSERT INTO customers SELECT id, 'x'", "INSERT"),
    ("WITH a AS (SELECT 1) INSERT INTO orders SELECT * FROM a", "INSERT"),
    ("INSERT INTO customers PARTITION (id = 1) SELECT 'x'", "PARTITION"),
    ("INSERT OVERWRITE TABLE customers PARTITION (id) SELECT 1, 'x'", "PARTITION"),
    ("INSERT INTO customers REPLACE WHERE id = 1 SELECT 1, 'x'", "REPLACE WHERE"),
    (
        "EXECUTE STATEMENT SET BEGIN INSERT INTO customers PARTITION (id = 1) SELECT 'x'; END",
        "PARTITION",
    ),
]


@pytest.mark.parametrize(("sql", "fragment"), UNSUPPORTED)
def test_recognised_but_unsupported(sql: str, fragment: str) -> None:
    with pytest.raises(UnsupportedStatement) as caught:
        plan(sql)
    assert caught.value.code == "UNSUPPORTED_STATEMENT"
    assert fragment in caught.value.message


def test_text_that_is_not_sql_is_a_parse_error() -> None:
    with pytest.raises(ParseError) as caught:
        plan("hello world")
    assert caught.value.code == "PARSE_ERROR"
    assert caught.value.details == {"line": 1, "column": 1}


@pytest.mark.parametrize("sql", ["", "   ", "-- only a comment", ";;"])
def test_empty_statement_is_a_parse_error(sql: str) -> None:
    with pytest.raises(ParseError):
        plan(sql)


def test_two_statements_are_refused_with_the_second_position() -> None:
    with pytest.raises(ParseError) as caught:
        plan("SELECT 1;\n  SELECT 2")
    assert caught.value.details == {"line": 2, "column": 3}


# -- parse errors ---------------------------------------------------------------------------


def test_parse_error_points_at_line_and_column_of_a_multi_line_query() -> None:
    sql = "SELECT id,\n       price\nFROM orders\nWHERE price IN 3)"
    with pytest.raises(ParseError) as caught:
        plan(sql)
    assert caught.value.details == {"line": 4, "column": 17}
    assert "line 4, column 17" in caught.value.message


def test_parse_error_inside_create_view_keeps_statement_positions() -> None:
    sql = "CREATE VIEW v AS\nSELECT a\nFROM orders o o2 o3"
    with pytest.raises(ParseError) as caught:
        plan(sql)
    assert caught.value.details == {"line": 3, "column": 15}  # at o2


def test_unterminated_string_is_a_parse_error_at_its_quote() -> None:
    with pytest.raises(ParseError) as caught:
        plan("SELECT 1,\n  'abc")
    assert caught.value.details == {"line": 2, "column": 3}
    assert "Unterminated string" in caught.value.message


def test_parse_error_in_a_statement_of_our_own_grammar() -> None:
    with pytest.raises(ParseError) as caught:
        plan("DROP TABLE orders\n  PURGE")
    assert caught.value.details == {"line": 2, "column": 3}
    assert "Expected the end of the statement but found 'PURGE'" in caught.value.message


# -- split_script ----------------------------------------------------------------------------


def test_split_script_respects_strings_comments_and_backticks() -> None:
    script = (
        "SELECT ';' AS a, \"x;y\" AS b;\n"
        "-- a comment; with a semicolon\n"
        "SELECT `we;ird` FROM t /* ; */;\n"
        ";  ;\n"
        "SELECT 'it\\'s; fine'"
    )
    assert split_script(script) == [
        "SELECT ';' AS a, \"x;y\" AS b",
        "-- a comment; with a semicolon\nSELECT `we;ird` FROM t /* ; */",
        "SELECT 'it\\'s; fine'",
    ]


def test_split_script_keeps_statement_sets_whole() -> None:
    script = (
        "EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT CASE WHEN x THEN 1 END FROM t; "
        "INSERT INTO b SELECT 2; END; SELECT 3"
    )
    parts = split_script(script)
    assert len(parts) == 2
    assert parts[0].endswith("END")
    assert parts[1] == "SELECT 3"


def test_split_script_of_nothing() -> None:
    assert split_script("  -- nothing\n ; ") == []


def test_split_script_spans_say_where_each_statement_starts() -> None:
    script = "\u3000 SELECT '\U0001f600;';\n/* ; */;\n\tSELECT 2 ;"
    spans = split_script_spans(script)
    assert (
        [text for _, text in spans] == split_script(script) == ["SELECT '\U0001f600;'", "SELECT 2"]
    )
    assert [script[offset : offset + len(text)] for offset, text in spans] == split_script(script)
    assert [offset for offset, _ in spans] == [2, script.index("SELECT 2")]


def test_split_script_reports_unterminated_comment() -> None:
    with pytest.raises(ParseError) as caught:
        split_script("SELECT 1; /* open")
    assert caught.value.details == {"line": 1, "column": 11}


# -- resolution and expansion -------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "identifier"),
    [
        ("SELECT * FROM orders", ["c", "d", "orders"]),
        ("SELECT * FROM other.orders", ["c", "other", "orders"]),
        ("SELECT * FROM c.other.orders", ["c", "other", "orders"]),
        ("SELECT * FROM C.Other.ORDERS", ["c", "other", "orders"]),
    ],
)
def test_one_two_and_three_part_names_expand(sql: str, identifier: list[str]) -> None:
    result = plan(sql)
    assert [r.identifier for r in result.relations] == [tuple(identifier)]


def test_expansion_follows_use() -> None:
    catalog = sample_catalog()
    use = plan("USE c.other", catalog)
    assert use.args == {"catalog": "c", "database": "other"}
    after = plan_statement(
        "SELECT * FROM orders", catalog, context(use.args["catalog"], use.args["database"])
    )
    assert after.relations[0].identifier == ("c", "other", "orders")
    with pytest.raises(CoreError, match="no current database"):
        plan_statement("SELECT * FROM orders", catalog, context("c", None))
    two_part = plan_statement("SELECT * FROM d.orders", catalog, context("c", None))
    assert two_part.relations[0].identifier == ("c", "d", "orders")


def test_quoted_parts_with_dots_spaces_and_backticks() -> None:
    catalog = sample_catalog()
    catalog.add_database("my cat", "a.b")
    catalog.relations.clear()
    weird = "we`ird t"
    relation = catalog.add_table("c.d.x")
    from dataclasses import replace

    from core.identifiers import ObjectIdentifier

    ident = ObjectIdentifier("my cat", "a.b", weird)
    catalog.relations[ident.key] = replace(relation, identifier=ident)
    result = plan("SELECT x.id FROM `my cat`.`a.b`.`we``ird t` AS x", catalog)
    assert result.relations[0].identifier == ("my cat", "a.b", weird)
    assert result.sql == "SELECT x.id FROM `__tessera_r1` AS x"
    unaliased = plan("SELECT * FROM `my cat`.`a.b`.`we``ird t`", catalog)
    assert unaliased.sql == "SELECT * FROM `__tessera_r1` AS `we``ird t`"


def test_cte_names_are_not_resolved() -> None:
    catalog = sample_catalog()
    result = plan(
        "WITH orders AS (SELECT 1 AS id), x AS (SELECT * FROM orders) "
        "SELECT * FROM x JOIN orders USING (id)",
        catalog,
    )
    assert result.relations == ()
    assert catalog.lookups == []


def test_cte_sees_only_earlier_ctes() -> None:
    # Inside the first CTE, `customers` is the table, not the later CTE of that name.
    result = plan(
        "WITH a AS (SELECT * FROM customers), customers AS (SELECT 1) SELECT * FROM a, customers"
    )
    assert [r.identifier[2] for r in result.relations] == ["customers"]
    assert result.sql == (
        "WITH a AS (SELECT * FROM `__tessera_r1` AS `customers`), customers AS (SELECT 1) "
        "SELECT * FROM a, customers"
    )


def test_nested_cte_scope() -> None:
    catalog = sample_catalog()
    # The inner WITH is not in scope outside its subquery: the outer `o` is a table.
    with pytest.raises(NotFound, match=r"`c`\.`d`\.`o` not found"):
        plan("SELECT * FROM (WITH o AS (SELECT 1) SELECT * FROM o) q, o", catalog)
    assert catalog.lookups == ["relation `c`.`d`.`o`"]


def test_alias_handling() -> None:
    result = plan(
        "SELECT orders.id, c.name, cu.id FROM orders "
        "JOIN customers c ON c.id = orders.customer_id JOIN customers AS cu ON true"
    )
    assert result.sql == (
        "SELECT orders.id, c.name, cu.id FROM `__tessera_r1` AS `orders` "
        "JOIN `__tessera_r2` c ON c.id = orders.customer_id JOIN `__tessera_r2` AS cu ON true"
    )


def test_self_join_registers_one_relation_referenced_twice() -> None:
    result = plan("SELECT a.id FROM orders a JOIN c.d.orders b ON a.id = b.id")
    assert len(result.relations) == 1
    assert result.sql == "SELECT a.id FROM `__tessera_r1` a JOIN `__tessera_r1` b ON a.id = b.id"


def test_alias_goes_after_tablesample() -> None:
    result = plan("SELECT orders.id FROM orders TABLESAMPLE (10 PERCENT)")
    assert result.sql == "SELECT orders.id FROM `__tessera_r1` TABLESAMPLE (10 PERCENT) AS `orders`"


def test_table_statement_is_rewritten() -> None:
    assert plan("TABLE c.d.orders").sql == "TABLE `__tessera_r1`"


def test_missing_table_names_the_full_path_tried() -> None:
    with pytest.raises(NotFound) as caught:
        plan("SELECT * FROM other.nope")
    assert caught.value.message == "Table or view `c`.`other`.`nope` not found"
    assert caught.value.code == "NOT_FOUND"


def test_staged_table_cannot_be_read() -> None:
    catalog = sample_catalog()
    catalog.add_table("c.d.new_t", status="staged")
    with pytest.raises(CoreError) as caught:
        plan("SELECT * FROM new_t", catalog)
    assert caught.value.code == "VALIDATION_ERROR"
    assert caught.value.message == "Table `c`.`d`.`new_t` is being created and cannot be read yet."


def test_staged_table_names_the_job_creating_it() -> None:
    catalog = sample_catalog()
    catalog.add_table("c.d.new_t", status="staged", staged_by_job="8c0e-42")
    catalog.add_view("c.d.reads_new", "SELECT * FROM new_t")
    for sql in ("SELECT * FROM new_t", "SELECT * FROM reads_new"):
        with pytest.raises(CoreError) as caught:
            plan(sql, catalog)
        assert caught.value.code == "VALIDATION_ERROR"
        assert caught.value.message == (
            "Table `c`.`d`.`new_t` is being created by job 8c0e-42 and cannot be read yet."
        )
        assert caught.value.details == {"identifier": ["c", "d", "new_t"], "job": "8c0e-42"}


def test_four_part_name_is_refused() -> None:
    with pytest.raises(CoreError, match="more than three parts"):
        plan("SELECT * FROM a.b.c.d")


# -- views ----------------------------------------------------------------------------------


def test_views_expand_recursively_in_dependency_order() -> None:
    catalog = sample_catalog()
    catalog.add_view("c.d.top", "SELECT b.id FROM big_orders b JOIN customers ON true")
    result = plan("SELECT * FROM top t, orders", catalog)
    assert [(r.alias, r.identifier[2], r.kind) for r in result.relations] == [
        ("__tessera_r1", "orders", "table"),
        ("__tessera_r2", "big_orders", "view"),
        ("__tessera_r3", "customers", "table"),
        ("__tessera_r4", "top", "view"),
    ]
    assert result.relations[1].sql == "SELECT * FROM `__tessera_r1` AS `orders` WHERE total > 100"
    assert result.relations[3].sql == (
        "SELECT b.id FROM `__tessera_r2` b JOIN `__tessera_r3` AS `customers` ON true"
    )
    assert result.sql == "SELECT * FROM `__tessera_r4` t, `__tessera_r1` AS `orders`"


def test_view_references_resolve_where_the_view_lives() -> None:
    catalog = sample_catalog()
    # c.other.orders exists too; the view in c.other must read it, not c.d.orders.
    catalog.add_view("c.other.v", "SELECT * FROM orders")
    result = plan("SELECT * FROM other.v", catalog)
    assert [r.identifier for r in result.relations] == [
        ("c", "other", "orders"),
        ("c", "other", "v"),
    ]


def test_view_functions_resolve_where_the_view_lives() -> None:
    catalog = sample_catalog()
    catalog.add_python_function("x.y.fmt", "tessera_udfs.fmt.fmt")
    catalog.add_view("x.y.v", "SELECT fmt(1) AS f")
    result = plan("SELECT * FROM x.y.v", catalog)
    assert [f.identifier for f in result.functions] == [("x", "y", "fmt")]
    assert result.relations[0].sql == "SELECT `__tessera_f1`(1) AS f"


def test_recursive_views_are_detected() -> None:
    catalog = sample_catalog()
    catalog.add_view("c.d.v1", "SELECT * FROM v2")
    catalog.add_view("c.d.v2", "SELECT * FROM c.d.v1")
    with pytest.raises(CoreError, match="Recursive view") as caught:
        plan("SELECT * FROM v1", catalog)
    assert "`c`.`d`.`v1` → `c`.`d`.`v2` → `c`.`d`.`v1`" in caught.value.message


def test_view_missing_dependency_is_not_found() -> None:
    catalog = sample_catalog()
    catalog.add_view("c.other.v", "SELECT * FROM gone")
    with pytest.raises(NotFound, match=r"Table or view `c`\.`other`\.`gone` not found"):
        plan("SELECT * FROM other.v", catalog)


# -- functions --------------------------------------------------------------------------------


def test_builtin_wins_over_a_catalog_function_of_the_same_name() -> None:
    catalog = sample_catalog()  # has c.d.upper
    result = plan("SELECT upper(name), UPPER(name) FROM customers", catalog)
    assert result.functions == ()
    assert "function `c`.`d`.`upper`" not in catalog.lookups
    assert result.sql == "SELECT upper(name), UPPER(name) FROM `__tessera_r1` AS `customers`"


def test_catalog_function_is_found_when_not_builtin() -> None:
    result = plan("SELECT Slugify(name) FROM customers")
    assert result.functions[0].identifier == ("c", "d", "slugify")
    assert result.sql == "SELECT `__tessera_f1`(name) FROM `__tessera_r1` AS `customers`"


def test_qualified_function_is_a_catalog_function_even_when_named_like_a_builtin() -> None:
    result = plan("SELECT d.upper(name), c.d.slugify(name), d.slugify('x') FROM customers")
    assert [(f.alias, f.identifier[2]) for f in result.functions] == [
        ("__tessera_f1", "upper"),
        ("__tessera_f2", "slugify"),
    ]
    assert result.sql == (
        "SELECT `__tessera_f1`(name), `__tessera_f2`(name), `__tessera_f2`('x') "
        "FROM `__tessera_r1` AS `customers`"
    )


def test_unknown_function_is_not_found() -> None:
    with pytest.raises(NotFound) as caught:
        plan("SELECT nope(1)")
    assert caught.value.message == "Function `c`.`d`.`nope` not found"
    with pytest.raises(NotFound, match=r"Function `x`\.`y`\.`f` not found"):
        plan("SELECT x.y.f(1)")


def test_sql_function_bodies_are_rewritten_in_dependency_order() -> None:
    catalog = sample_catalog()
    catalog.add_sql_function("x.y.twice", (("v", "INT"),), "INT", "plus1(v) + v")
    catalog.add_sql_function("x.y.plus1", (("v", "INT"),), "INT", "v + 1")
    result = plan("SELECT x.y.twice(id) FROM orders", catalog)
    assert [(f.alias, f.identifier) for f in result.functions] == [
        ("__tessera_f1", ("x", "y", "plus1")),
        ("__tessera_f2", ("x", "y", "twice")),
    ]
    assert result.functions[1].body == "`__tessera_f1`(v) + v"


def test_recursive_sql_function_is_detected() -> None:
    catalog = sample_catalog()
    catalog.add_sql_function("c.d.loop", (("v", "INT"),), "INT", "loop(v)")
    with pytest.raises(CoreError, match="Recursive function"):
        plan("SELECT loop(1)", catalog)


def test_builtin_table_valued_function_stays() -> None:
    result = plan("SELECT * FROM range(3) r JOIN orders ON r.id = orders.id")
    assert (
        result.sql == "SELECT * FROM range(3) r JOIN `__tessera_r1` AS `orders` ON r.id = orders.id"
    )


# -- splicing keeps the user's text ------------------------------------------------------------


def test_splice_keeps_comments_whitespace_and_casing() -> None:
    sql = (
        "/* report */\nSeLeCt  o.ID,\tMOD(o.id, 10) AS m -- keep me\n"
        "  FROM   orders   o   -- and me\n"
        "WHERE  o.id IN (SELECT id FROM   Customers)  /* end */"
    )
    result = plan(sql)
    assert result.sql == (
        "/* report */\nSeLeCt  o.ID,\tMOD(o.id, 10) AS m -- keep me\n"
        "  FROM   `__tessera_r1`   o   -- and me\n"
        "WHERE  o.id IN (SELECT id FROM   `__tessera_r2` AS `Customers`)  /* end */"
    )


def test_explain_keeps_its_prefix() -> None:
    result = plan("EXPLAIN  COST\nSELECT * FROM orders")
    assert result.sql == "EXPLAIN  COST\nSELECT * FROM `__tessera_r1` AS `orders`"
    assert result.args == {"mode": "cost"}


# -- other statements' plans -----------------------------------------------------------------


def test_create_view_plan_has_rewritten_and_expanded_query() -> None:
    result = plan(
        "CREATE VIEW v COMMENT 'nice' AS SELECT o.id, slugify(c.name) FROM orders o, customers c"
    )
    assert result.target == ("c", "d", "v")
    assert (
        result.sql == "SELECT o.id, `__tessera_f1`(c.name) FROM `__tessera_r1` o, `__tessera_r2` c"
    )
    assert result.args == {
        "identifier": ["c", "d", "v"],
        "if_not_exists": False,
        "or_replace": False,
        "query": "SELECT o.id, slugify(c.name) FROM orders o, customers c",
        "comment": "nice",
        "expanded_query": (
            "SELECT o.id, `c`.`d`.`slugify`(c.name) FROM `c`.`d`.`orders` o, `c`.`d`.`customers` c"
        ),
    }


def test_create_or_replace_view_reading_itself_is_refused() -> None:
    with pytest.raises(CoreError, match="Recursive view"):
        plan("CREATE OR REPLACE VIEW big_orders AS SELECT * FROM big_orders")


def test_permanent_view_cannot_read_temporary_objects() -> None:
    catalog = sample_catalog()
    catalog.add_table("c.d.tmp", temporary=True)
    with pytest.raises(CoreError, match="temporary objects"):
        plan("CREATE VIEW v AS SELECT * FROM tmp", catalog)


def test_create_in_a_missing_database_is_not_found() -> None:
    with pytest.raises(NotFound, match=r"Database `c`.`nope` does not exist."):
        plan("CREATE VIEW nope.v AS SELECT 1")
    with pytest.raises(NotFound, match=r"A catalog with name \[k\] does not exist."):
        plan("CREATE DATABASE k.n")


def test_create_sql_function_plan() -> None:
    result = plan(
        "CREATE FUNCTION IF NOT EXISTS add2(x INT, y DECIMAL(10,2)) RETURNS DECIMAL(12, 2) "
        "COMMENT 'adds' RETURN plus1(x) + y"
    )
    assert result.sql == "`__tessera_f1`(x) + y"
    assert result.args == {
        "identifier": ["c", "d", "add2"],
        "if_not_exists": True,
        "language": "sql",
        "implementation": "plus1(x) + y",
        "parameters": [["x", "INT"], ["y", "DECIMAL(10, 2)"]],
        "return_type": "DECIMAL(12, 2)",
        "comment": "adds",
    }


def test_sql_function_body_cannot_read_tables() -> None:
    with pytest.raises(CoreError, match="cannot read tables"):
        plan("CREATE FUNCTION f(x INT) RETURNS BIGINT RETURN (SELECT max(id) FROM orders)")


def test_create_python_function_plan() -> None:
    result = plan("CREATE FUNCTION slug AS 'tessera_udfs.text.slugify' LANGUAGE PYTHON")
    assert result.needs_spark
    assert result.args == {
        "identifier": ["c", "d", "slug"],
        "if_not_exists": False,
        "language": "python",
        "implementation": "tessera_udfs.text.slugify",
        "parameters": [],
        "return_type": "",
        "comment": None,
    }


@pytest.mark.parametrize(
    ("sql", "args"),
    [
        ("USE CATALOG x", {"catalog": "x", "database": None}),
        ("USE DATABASE other", {"catalog": "c", "database": "other"}),
        ("SHOW DATABASES IN x LIKE 'y*'", {"catalog": "x", "like": "y*"}),
        ("SHOW TABLES", {"catalog": "c", "database": "d", "like": None}),
        ("SHOW FUNCTIONS IN x.y 'f*'", {"catalog": "x", "database": "y", "like": "f*"}),
        (
            "DESCRIBE big_orders",
            {"identifier": ["c", "d", "big_orders"], "object_kind": "view", "extended": False},
        ),
        (
            "SHOW CREATE TABLE c.d.ORDERS",
            {"identifier": ["c", "d", "orders"], "object_kind": "table"},
        ),
        (
            "SET spark.sql.session.timeZone = 'Europe/Berlin'",
            {"key": "spark.sql.session.timeZone", "value": "Europe/Berlin"},
        ),
        ("SET result.max_rows=10", {"key": "result.max_rows", "value": "10"}),
        ("SET result.max_rows", {"key": "result.max_rows", "value": None}),
        ("SET -v", {"key": None, "value": None}),
        ("RESET job.timeout_seconds", {"key": "job.timeout_seconds"}),
        ("DROP VIEW x.y.v", {"identifier": ["x", "y", "v"], "if_exists": False, "cascade": False}),
        (
            "DROP DATABASE IF EXISTS y CASCADE",
            {"identifier": ["c", "y"], "if_exists": True, "cascade": True},
        ),
        (
            "CREATE DATABASE IF NOT EXISTS n COMMENT 'c' WITH DBPROPERTIES (owner = 'me', 'n' = 1)",
            {
                "identifier": ["c", "n"],
                "if_not_exists": True,
                "comment": "c",
                "properties": {"owner": "me", "n": "1"},
            },
        ),
    ],
)
def test_statement_args(sql: str, args: dict[str, Any]) -> None:
    assert dict(plan(sql).args) == args


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("USE CATALOG nope", "A catalog with name [nope] does not exist."),
        ("USE nope", "Database `c`.`nope` does not exist."),
        ("USE x.nope", "Database `x`.`nope` does not exist."),
        ("SHOW TABLES IN nope", "Database `c`.`nope` does not exist."),
        ("SHOW DATABASES IN nope", "A catalog with name [nope] does not exist."),
        ("DESCRIBE nope", "Table or view `c`.`d`.`nope` not found"),
        ("SHOW CREATE TABLE x.y.nope", "Table or view `x`.`y`.`nope` not found"),
    ],
)
def test_existence_is_validated(sql: str, message: str) -> None:
    with pytest.raises(NotFound) as caught:
        plan(sql)
    assert caught.value.message == message


# -- the plan's JSON ---------------------------------------------------------------------------


def test_plan_json_round_trips() -> None:
    catalog = sample_catalog()
    for sql in (
        "SELECT slugify(name), plus1(id) FROM customers JOIN big_orders USING (id)",
        "CREATE TABLE t (id INT, x AS id + 1, WATERMARK FOR ts AS ts, ts TIMESTAMP)",
        "SHOW TABLES",
        "DROP TABLE orders",
    ):
        result = plan(sql, catalog)
        data = json.loads(json.dumps(result.to_dict()))
        assert Plan.from_dict(data) == result
        assert Plan.from_dict(data).to_dict() == data


def test_plan_json_shape_of_a_query() -> None:
    data = plan("SELECT plus1(qty), slugify('x') FROM events, orders").to_dict()
    assert list(data) == [
        "kind",
        "action",
        "needs_spark",
        "sql",
        "relations",
        "functions",
        "target",
        "args",
    ]
    events, orders = data["relations"]
    assert events == {
        "alias": "__tessera_r1",
        "identifier": ["c", "d", "events"],
        "kind": "table",
        "format": "csv",
        "path": "/srv/tessera/external/events",
        "options": {"header": "true"},
        "physical_schema": "`ts` TIMESTAMP, `payload` STRING",
        "columns": [{"name": "ts", "kind": "physical"}, {"name": "payload", "kind": "physical"}],
    }
    assert orders["physical_schema"] == (
        "`id` BIGINT NOT NULL, `price` DECIMAL(10, 2), `qty` INT, `customer_id` BIGINT"
    )
    assert orders["columns"][3:5] == [
        {"name": "total", "kind": "computed", "expression": "price * qty"},
        {"name": "file", "kind": "metadata", "metadata_key": "file_path"},
    ]
    assert data["functions"] == [
        {
            "alias": "__tessera_f1",
            "identifier": ["c", "d", "plus1"],
            "language": "sql",
            "parameters": [["x", "INT"]],
            "return_type": "INT",
            "body": "x + 1",
        },
        {
            "alias": "__tessera_f2",
            "identifier": ["c", "d", "slugify"],
            "language": "python",
            "implementation": "tessera_udfs.text.slugify",
            "return_type": "STRING",
        },
    ]
    assert data["target"] is None and data["args"] == {}


@pytest.mark.parametrize(
    ("sql", "hint", "tables"),
    [
        (
            "SELECT /*+ BROADCAST(c) */ * FROM orders o JOIN customers c ON o.customer_id = c.id",
            "/*+ BROADCAST(c) */",
            ["orders", "customers"],
        ),
        (
            "WITH big AS (SELECT * FROM orders) "
            "SELECT /*+ MERGE(b, c) */ * FROM big b, customers c",
            "/*+ MERGE(b, c) */",
            ["orders", "customers"],
        ),
        ("SELECT /*+ REPARTITION(3, id) */ * FROM orders", "/*+ REPARTITION(3, id) */", ["orders"]),
    ],
)
def test_hint_arguments_are_aliases_not_catalog_tables(
    sql: str, hint: str, tables: list[str]
) -> None:
    """A hint is one token to the planner and names aliases; Spark's parse of it is checked
    on the worker (engine/sqlguard.py). It was once 'Cannot locate the table …'."""
    planned = plan(sql)
    assert [r.identifier[2] for r in planned.relations] == tables
    assert hint in planned.sql


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT TIMESTAMPDIFF(HOUR, ts, ts) FROM events",
        "SELECT TIMESTAMPADD(HOUR, 2, ts) FROM events",
    ],
)
def test_spark_syntax_calls_are_built_ins(sql: str) -> None:
    """TIMESTAMPADD/TIMESTAMPDIFF are syntax to Spark (not in SHOW SYSTEM FUNCTIONS): they were
    looked up as catalog functions and reported missing."""
    planned = plan(sql)
    assert planned.functions == ()
    assert planned.sql.startswith(sql.split(" FROM")[0])
