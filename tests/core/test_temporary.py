"""Temporary objects (FLIP-64): classification, plans, shadowing, function resolution order,
TEMPORARY_OBJECT_EXISTS and views whose dependencies are gone."""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.errors import CoreError, IdentifierError, NotFound
from core.planner import (
    ForbiddenSql,
    ParseError,
    Plan,
    TemporaryObjectExists,
    UnsupportedStatement,
    plan_statement,
)
from tests.core.test_planner_support import (
    STORAGE_ROOT,
    MemoryCatalog,
    context,
    plan,
    sample_catalog,
)

LOCATION = f"USING csv LOCATION '{STORAGE_ROOT}/tmp'"
SOURCE = {"connector": "csv", "path": f"{STORAGE_ROOT}/tmp"}


def _round_trips(result: Plan) -> None:
    data = json.loads(json.dumps(result.to_dict()))
    assert Plan.from_dict(data) == result
    assert Plan.from_dict(data).to_dict() == data


# -- classification --------------------------------------------------------------------------

# (statement, action, needs_spark, args that must be in the plan's args)
CLASSIFIED: list[tuple[str, str, bool, dict[str, Any]]] = [
    (f"CREATE TEMPORARY TABLE t (id INT) {LOCATION}", "create_table", False, {}),
    (
        f"CREATE TEMPORARY TABLE IF NOT EXISTS t (id INT, x AS id + 1) {LOCATION}",
        "create_table",
        True,
        {"if_not_exists": True},
    ),
    (
        "CREATE TEMPORARY TABLE t (ts TIMESTAMP, WATERMARK FOR ts AS ts) "
        f"WITH ('connector' = 'json', 'path' = '{STORAGE_ROOT}/j')",
        "create_table",
        True,
        {},
    ),
    ("CREATE TEMPORARY VIEW v AS SELECT 1", "create_view", True, {"or_replace": False}),
    (
        "CREATE OR REPLACE TEMPORARY VIEW v AS SELECT * FROM orders",
        "create_view",
        True,
        {"or_replace": True},
    ),
    (
        "CREATE TEMPORARY VIEW IF NOT EXISTS v COMMENT 'x' AS VALUES (1)",
        "create_view",
        True,
        {"if_not_exists": True},
    ),
    (
        "CREATE TEMPORARY FUNCTION f AS 'tessera_udfs.a.b'",
        "create_function",
        True,
        {"system": False, "language": "python"},
    ),
    (
        "CREATE TEMPORARY FUNCTION IF NOT EXISTS f(x INT) RETURNS INT RETURN x + 1",
        "create_function",
        True,
        {"system": False, "language": "sql", "if_not_exists": True},
    ),
    (
        "CREATE TEMPORARY SYSTEM FUNCTION f AS 'tessera_udfs.a.b' LANGUAGE PYTHON",
        "create_function",
        True,
        {"system": True, "identifier": ["f"]},
    ),
    (
        "CREATE TEMPORARY SYSTEM FUNCTION f(x INT) RETURNS INT RETURN x + 1",
        "create_function",
        True,
        {"system": True, "identifier": ["f"], "language": "sql"},
    ),
    ("DROP TEMPORARY TABLE t", "drop_table", False, {"if_exists": False}),
    ("DROP TEMPORARY VIEW IF EXISTS v", "drop_view", False, {"if_exists": True}),
    ("DROP TEMPORARY FUNCTION f", "drop_function", False, {"system": False}),
    (
        "DROP TEMPORARY SYSTEM FUNCTION IF EXISTS f",
        "drop_function",
        False,
        {"system": True, "identifier": ["f"], "if_exists": True},
    ),
    ("SHOW TEMPORARY TABLES", "show_tables", False, {"like": None}),
    ("SHOW TEMPORARY VIEWS", "show_views", False, {"like": None}),
    ("SHOW TEMPORARY FUNCTIONS LIKE 'f*'", "show_functions", False, {"like": "f*"}),
    ("show temporary functions 'f*'", "show_functions", False, {"like": "f*"}),
]


@pytest.mark.parametrize(("sql", "action", "needs_spark", "args"), CLASSIFIED)
def test_temporary_statement_is_classified(
    sql: str, action: str, needs_spark: bool, args: dict[str, Any]
) -> None:
    result = plan(sql)
    assert (result.action, result.needs_spark) == (action, needs_spark)
    assert result.args["temporary"] is True
    assert {key: result.args[key] for key in args} == args
    _round_trips(result)


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE TABLE t (id INT)",
        "CREATE VIEW v AS SELECT 1",
        "CREATE FUNCTION f AS 'tessera_udfs.a.b'",
        "DROP TABLE orders",
        "DROP FUNCTION slugify",
        "SHOW TABLES",
    ],
)
def test_permanent_plans_carry_no_temporary_flag(sql: str) -> None:
    assert "temporary" not in plan(sql).args


def test_create_temporary_table_plan() -> None:
    result = plan(
        f"CREATE TEMPORARY TABLE x.y.t (id BIGINT NOT NULL, s STRING) PARTITIONED BY (s) "
        f"COMMENT 'tmp' USING csv OPTIONS (header 'true') LOCATION '{STORAGE_ROOT}/tmp/'"
    )
    assert (result.kind, result.target, result.sql) == ("ddl", ("x", "y", "t"), "")
    assert result.args == {
        "identifier": ["x", "y", "t"],
        "if_not_exists": False,
        "schema": {
            "columns": [
                {"name": "id", "kind": "physical", "data_type": "BIGINT NOT NULL"},
                {"name": "s", "kind": "physical", "data_type": "STRING"},
            ],
            "watermarks": [],
            "primary_key": None,
        },
        "options": {**SOURCE, "header": "true"},
        "partition_by": ["s"],
        "comment": "tmp",
        "temporary": True,
    }


def test_create_temporary_view_plan_resolves_temporary_objects() -> None:
    catalog = sample_catalog()
    catalog.add_table("c.d.tmp", ["id BIGINT", "n STRING"], temporary=True)
    catalog.add_system_function("shout", "tessera_udfs.text.shout")
    result = plan(
        "CREATE TEMPORARY VIEW v AS SELECT shout(n), slugify(n) FROM tmp JOIN orders USING (id)",
        catalog,
    )
    assert result.target == ("c", "d", "v")
    assert result.sql == (
        "SELECT `__tessera_f1`(n), `__tessera_f2`(n) FROM `__tessera_r1` AS `tmp` "
        "JOIN `__tessera_r2` AS `orders` USING (id)"
    )
    assert [(r.identifier, r.temporary) for r in result.relations] == [
        (("c", "d", "tmp"), True),
        (("c", "d", "orders"), False),
    ]
    assert [(f.identifier, f.system) for f in result.functions] == [
        (("", "", "shout"), True),
        (("c", "d", "slugify"), False),
    ]
    assert result.args == {
        "identifier": ["c", "d", "v"],
        "if_not_exists": False,
        "or_replace": False,
        "query": "SELECT shout(n), slugify(n) FROM tmp JOIN orders USING (id)",
        "comment": None,
        # A system function stays a one-part name: it is found first at every use.
        "expanded_query": (
            "SELECT shout(n), `c`.`d`.`slugify`(n) FROM `c`.`d`.`tmp` "
            "JOIN `c`.`d`.`orders` USING (id)"
        ),
        "temporary": True,
    }


def test_permanent_view_cannot_read_a_temporary_system_function() -> None:
    catalog = sample_catalog()
    catalog.add_system_function("upper", "tessera_udfs.text.shout")
    with pytest.raises(CoreError, match=r"cannot read temporary objects \(`upper`\)"):
        plan("CREATE VIEW v AS SELECT upper(name) FROM customers", catalog)


def test_permanent_function_cannot_call_temporary_functions() -> None:
    catalog = sample_catalog()
    catalog.add_system_function("shout", "tessera_udfs.text.shout")
    catalog.add_python_function("c.d.tmp_f", "tessera_udfs.text.tmp", temporary=True)
    for body, shown in (("shout(s)", "`shout`"), ("tmp_f(s)", "`c`.`d`.`tmp_f`")):
        sql = f"CREATE FUNCTION f(s STRING) RETURNS STRING RETURN {body}"
        with pytest.raises(CoreError) as caught:
            plan(sql, catalog)
        assert caught.value.message == (
            f"The function `c`.`d`.`f` cannot call temporary functions ({shown}): "
            "a permanent function must only call permanent ones."
        )
        assert plan(sql.replace("CREATE", "CREATE TEMPORARY"), catalog).functions[0].temporary


def test_temporary_view_reading_itself_is_recursive() -> None:
    # The temporary view would shadow the permanent one it reads, and so read itself.
    with pytest.raises(CoreError, match="Recursive view"):
        plan("CREATE OR REPLACE TEMPORARY VIEW big_orders AS SELECT * FROM big_orders")
    with pytest.raises(CoreError, match="IF NOT EXISTS"):
        plan("CREATE OR REPLACE TEMPORARY VIEW IF NOT EXISTS v AS SELECT 1")


def test_create_temporary_function_plans() -> None:
    python = plan("CREATE TEMPORARY FUNCTION other.slug AS 'tessera_udfs.text.slugify'")
    assert python.target == ("c", "other", "slug")
    assert python.args == {
        "identifier": ["c", "other", "slug"],
        "if_not_exists": False,
        "language": "python",
        "implementation": "tessera_udfs.text.slugify",
        "parameters": [],
        "return_type": "",
        "comment": None,
        "temporary": True,
        "system": False,
    }
    system = plan("CREATE TEMPORARY SYSTEM FUNCTION add1(x INT) RETURNS INT RETURN plus1(x)")
    assert system.target == ("add1",)
    assert system.sql == "`__tessera_f1`(x)"
    assert system.args == {
        "identifier": ["add1"],
        "if_not_exists": False,
        "language": "sql",
        "implementation": "plus1(x)",
        "parameters": [["x", "INT"]],
        "return_type": "INT",
        "comment": None,
        "temporary": True,
        "system": True,
    }


@pytest.mark.parametrize(
    ("sql", "identifier"),
    [
        (
            f"CREATE TEMPORARY TABLE `my cat`.`a.b`.`we``ird t` (id INT) {LOCATION}",
            ["my cat", "a.b", "we`ird t"],
        ),
        ("CREATE TEMPORARY VIEW `a.b`.`x y` AS SELECT 1", ["c", "a.b", "x y"]),
        ("CREATE TEMPORARY FUNCTION `f.g` AS 'tessera_udfs.a.b'", ["c", "d", "f.g"]),
        ("CREATE TEMPORARY SYSTEM FUNCTION `a.b c` AS 'tessera_udfs.a.b'", ["a.b c"]),
        ("CREATE TEMPORARY SYSTEM FUNCTION `we``ird` AS 'tessera_udfs.a.b'", ["we`ird"]),
        ("DROP TEMPORARY TABLE `my cat`.`a.b`.`we``ird t`", ["my cat", "a.b", "we`ird t"]),
        ("DROP TEMPORARY VIEW `x y`", ["c", "d", "x y"]),
        ("DROP TEMPORARY SYSTEM FUNCTION `a.b`", ["a.b"]),
    ],
)
def test_quoted_parts(sql: str, identifier: list[str]) -> None:
    result = plan(sql)
    assert result.args["identifier"] == identifier
    assert result.target == tuple(identifier)


def test_query_reads_a_temporary_table_with_quoted_parts() -> None:
    catalog = sample_catalog()
    catalog.add_table("c.d.x", temporary=True)
    relation = catalog.temporary_relations.pop(("c", "d", "x"))
    from dataclasses import replace

    from core.identifiers import ObjectIdentifier

    ident = ObjectIdentifier("my cat", "a.b", "we`ird t")
    catalog.temporary_relations[ident.key] = replace(relation, identifier=ident)
    result = plan("SELECT * FROM `my cat`.`a.b`.`we``ird t`", catalog)
    assert result.relations[0].identifier == ("my cat", "a.b", "we`ird t")
    assert result.relations[0].temporary
    assert result.sql == "SELECT * FROM `__tessera_r1` AS `we``ird t`"


# -- CREATE TEMPORARY TABLE: no existence check, a path, no CTAS -----------------------------


def test_temporary_objects_under_a_missing_catalog_or_database_plan_fine() -> None:
    catalog = sample_catalog()
    table = plan(f"CREATE TEMPORARY TABLE nocat.nodb.t (id INT) {LOCATION}", catalog)
    assert table.target == ("nocat", "nodb", "t")
    assert plan(f"CREATE TEMPORARY TABLE nodb.t (id INT) {LOCATION}", catalog).target == (
        "c",
        "nodb",
        "t",
    )
    assert plan("CREATE TEMPORARY VIEW nocat.nodb.v AS SELECT 1", catalog).target == (
        "nocat",
        "nodb",
        "v",
    )
    assert plan("CREATE TEMPORARY FUNCTION nodb.f AS 'tessera_udfs.a.b'", catalog).target == (
        "c",
        "nodb",
        "f",
    )
    assert not any(lookup.startswith("relation") for lookup in catalog.lookups)
    # The permanent statements still check.
    with pytest.raises(NotFound, match=r"A catalog with name \[nocat\] does not exist."):
        plan(f"CREATE TABLE nocat.nodb.t (id INT) {LOCATION}", catalog)
    with pytest.raises(NotFound, match=r"Database `c`.`nodb` does not exist."):
        plan("CREATE VIEW nodb.v AS SELECT 1", catalog)
    # And reading such a temporary table needs no catalog either.
    catalog.add_table("nocat.nodb.t", temporary=True)
    assert plan("SELECT * FROM nocat.nodb.t", catalog).relations[0].temporary


@pytest.mark.parametrize(
    "clauses",
    [
        "",
        "USING parquet",
        "WITH ('format' = 'csv')",
        "WITH ('connector' = 'csv')",
        "OPTIONS ('header' = 'true')",
    ],
)
def test_temporary_table_needs_a_path(clauses: str) -> None:
    with pytest.raises(CoreError) as caught:
        plan(f"CREATE TEMPORARY TABLE t (id INT) {clauses}")
    assert caught.value.code == "VALIDATION_ERROR"
    assert caught.value.message.startswith("A temporary table needs a path: Tessera does not own")


@pytest.mark.parametrize(
    ("clauses", "fragment"),
    [
        ("USING jdbc", "'jdbc' is not allowed"),
        ("USING csv LOCATION '/etc'", "outside the storage roots"),
        (f"USING csv OPTIONS (path '{STORAGE_ROOT}/*')", "glob characters"),
    ],
)
def test_temporary_table_source_is_guarded(clauses: str, fragment: str) -> None:
    with pytest.raises(ForbiddenSql, match=fragment):
        plan(f"CREATE TEMPORARY TABLE t (id INT) {clauses}")


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE TEMPORARY TABLE t AS SELECT * FROM orders",
        "CREATE TEMPORARY TABLE IF NOT EXISTS t USING csv AS SELECT 1",
        f"CREATE TEMPORARY TABLE t {LOCATION} AS SELECT 1",
    ],
)
def test_temporary_ctas_is_refused(sql: str) -> None:
    with pytest.raises(UnsupportedStatement) as caught:
        plan(sql)
    assert caught.value.code == "UNSUPPORTED_STATEMENT"
    assert caught.value.message == (
        "CREATE TEMPORARY TABLE … AS SELECT is not supported: Tessera does not own a temporary "
        "table's data. Use CREATE TEMPORARY VIEW … AS SELECT instead."
    )


@pytest.mark.parametrize(
    ("sql", "error", "fragment"),
    [
        ("CREATE GLOBAL TEMPORARY VIEW v AS SELECT 1", ForbiddenSql, "global_temp"),
        ("CREATE OR REPLACE GLOBAL TEMPORARY VIEW v AS SELECT 1", ForbiddenSql, "global_temp"),
        ("CREATE TEMPORARY VIEW global_temp.v AS SELECT 1", ForbiddenSql, "global_temp"),
        ("CREATE OR REPLACE TEMPORARY TABLE t (id INT)", ForbiddenSql, "OR REPLACE TEMPORARY"),
        ("CREATE OR REPLACE TEMPORARY FUNCTION f AS 'tessera_udfs.a.b'", ForbiddenSql, "drop"),
        ("CREATE TEMPORARY DATABASE n", ForbiddenSql, "CREATE TEMPORARY DATABASE"),
        ("CREATE TEMPORARY", ParseError, "TABLE, VIEW or FUNCTION"),
        ("CREATE TEMPORARY SYSTEM TABLE t (id INT)", ParseError, "Expected FUNCTION"),
        ("CREATE TEMPORARY SYSTEM FUNCTION reflect AS 'tessera_udfs.a.b'", ForbiddenSql, "reflect"),
        ("CREATE TEMPORARY FUNCTION f AS 'os.system'", ForbiddenSql, "allowlisted"),
        ("DROP TEMPORARY DATABASE n", ForbiddenSql, "DROP TEMPORARY DATABASE"),
        ("DROP TEMPORARY SYSTEM TABLE t", ParseError, "Expected FUNCTION"),
        ("DROP TEMPORARY TABLE t CASCADE", ParseError, "the end of the statement"),
        ("SHOW TEMPORARY TABLES IN c.d", ParseError, "the end of the statement"),
        ("SHOW TEMPORARY DATABASES", ParseError, "TABLES, VIEWS or FUNCTIONS"),
    ],
)
def test_malformed_and_refused_temporary_statements(
    sql: str, error: type[CoreError], fragment: str
) -> None:
    with pytest.raises(error, match=fragment):
        plan(sql)


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE TEMPORARY SYSTEM FUNCTION d.f AS 'tessera_udfs.a.b'",
        "CREATE TEMPORARY SYSTEM FUNCTION c.d.f(x INT) RETURNS INT RETURN x",
        "DROP TEMPORARY SYSTEM FUNCTION d.f",
    ],
)
def test_system_functions_have_one_part_names(sql: str) -> None:
    with pytest.raises(CoreError) as caught:
        plan(sql)
    assert caught.value.code == "VALIDATION_ERROR"
    assert "takes a one-part name" in caught.value.message


# -- DROP TEMPORARY -------------------------------------------------------------------------------


def test_drop_temporary_plans_without_looking_anything_up() -> None:
    catalog = sample_catalog()  # orders and slugify exist only permanently
    table = plan("DROP TEMPORARY TABLE orders", catalog)
    assert (table.kind, table.action, table.needs_spark) == ("ddl", "drop_table", False)
    assert table.target == ("c", "d", "orders")
    assert table.args == {
        "identifier": ["c", "d", "orders"],
        "if_exists": False,
        "cascade": False,
        "temporary": True,
    }
    function = plan("DROP TEMPORARY FUNCTION IF EXISTS x.y.slugify", catalog)
    assert function.args == {
        "identifier": ["x", "y", "slugify"],
        "if_exists": True,
        "cascade": False,
        "temporary": True,
        "system": False,
    }
    system = plan("DROP TEMPORARY SYSTEM FUNCTION Upper", catalog)
    assert system.target == ("Upper",)
    assert system.args == {
        "identifier": ["Upper"],
        "if_exists": False,
        "cascade": False,
        "temporary": True,
        "system": True,
    }
    assert catalog.lookups == []


# -- shadowing --------------------------------------------------------------------------------


def test_temporary_table_shadows_the_permanent_one() -> None:
    catalog = sample_catalog()
    catalog.add_table(
        "c.d.customers",
        ["id BIGINT", "nick STRING"],
        options={"connector": "json", "path": f"{STORAGE_ROOT}/tmp/customers"},
        temporary=True,
    )
    result = plan("SELECT * FROM customers JOIN c.d.orders USING (id)", catalog)
    customers, orders = result.relations
    assert customers.identifier == ("c", "d", "customers")
    assert customers.temporary and not orders.temporary
    assert (customers.format, customers.path) == ("json", f"{STORAGE_ROOT}/tmp/customers")
    assert customers.physical_schema == "`id` BIGINT, `nick` STRING"
    data = result.to_dict()
    assert data["relations"][0]["temporary"] is True
    assert "temporary" not in data["relations"][1]
    _round_trips(result)


def test_temporary_view_shadows_and_is_expanded_at_use() -> None:
    catalog = sample_catalog()
    catalog.add_table("c.d.tmp", temporary=True)
    catalog.add_view("c.d.big_orders", "SELECT id FROM c.d.tmp", temporary=True)
    result = plan("SELECT * FROM big_orders", catalog)
    assert [(r.identifier[2], r.kind, r.temporary) for r in result.relations] == [
        ("tmp", "table", True),
        ("big_orders", "view", True),
    ]
    assert result.relations[1].sql == "SELECT id FROM `__tessera_r1` AS `tmp`"
    assert result.to_dict()["relations"][1]["temporary"] is True


def test_describe_and_show_create_table_see_the_temporary_object() -> None:
    catalog = sample_catalog()
    catalog.add_view("c.d.orders", "SELECT 1 AS id", temporary=True)
    assert plan("DESCRIBE orders", catalog).args["object_kind"] == "view"
    catalog.add_table("nocat.nodb.t", temporary=True)
    assert plan("SHOW CREATE TABLE nocat.nodb.t", catalog).args == {
        "identifier": ["nocat", "nodb", "t"],
        "object_kind": "table",
    }


# -- functions: the four-step order ------------------------------------------------------------


def test_temporary_system_function_shadows_a_builtin() -> None:
    catalog = sample_catalog()
    catalog.add_system_function("upper", "tessera_udfs.text.shout")
    result = plan("SELECT upper(name), UPPER(name), lower(name) FROM customers", catalog)
    assert result.sql == (
        "SELECT `__tessera_f1`(name), `__tessera_f1`(name), lower(name) "
        "FROM `__tessera_r1` AS `customers`"
    )
    (function,) = result.functions
    assert (function.identifier, function.system, function.temporary) == (
        ("", "", "upper"),
        True,
        True,
    )
    assert function.to_dict() == {
        "alias": "__tessera_f1",
        "identifier": ["", "", "upper"],
        "language": "python",
        "implementation": "tessera_udfs.text.shout",
        "return_type": "STRING",
        "temporary": True,
        "system": True,
    }
    # The built-in came second, the catalog function c.d.upper was never asked for.
    assert "function `c`.`d`.`upper`" not in catalog.lookups
    _round_trips(result)


@pytest.mark.parametrize(
    ("call", "rewritten"),
    [
        ("floor(qty)", "`__tessera_f1`(qty)"),
        ("trim(name)", "`__tessera_f1`(name)"),
        ("substr(name, 1, 2)", "`__tessera_f1`(name, 1, 2)"),
    ],
)
def test_system_function_shadows_builtins_that_sqlglot_parses_as_syntax(
    call: str, rewritten: str
) -> None:
    catalog = sample_catalog()
    name = call.split("(")[0]
    catalog.add_system_function(name, "tessera_udfs.text.shout")
    result = plan(f"SELECT {call}, CAST(qty AS DECIMAL(10, 2)) FROM orders o", catalog)
    assert result.sql == f"SELECT {rewritten}, CAST(qty AS DECIMAL(10, 2)) FROM `__tessera_r1` o"
    assert [f.identifier for f in result.functions] == [("", "", name)]


def test_builtins_parsed_as_syntax_stay_without_a_system_function() -> None:
    result = plan("SELECT floor(qty), trim(CAST(id AS STRING)) FROM orders o")
    assert result.functions == ()
    assert result.sql == "SELECT floor(qty), trim(CAST(id AS STRING)) FROM `__tessera_r1` o"


def test_temporary_system_function_shadows_a_catalog_function() -> None:
    catalog = sample_catalog()
    catalog.add_system_function(
        "slugify", "x || '!'", language="sql", parameters=(("x", "STRING"),)
    )
    result = plan("SELECT slugify(name) FROM customers", catalog)
    (function,) = result.functions
    assert (function.identifier, function.language, function.body) == (
        ("", "", "slugify"),
        "sql",
        "x || '!'",
    )
    assert "function `c`.`d`.`slugify`" not in catalog.lookups


def test_temporary_catalog_function_shadows_the_catalog_function() -> None:
    catalog = sample_catalog()
    catalog.add_python_function("c.d.slugify", "tessera_udfs.text.other", temporary=True)
    result = plan("SELECT slugify(name), d.slugify(name) FROM customers", catalog)
    (function,) = result.functions
    assert (function.identifier, function.implementation) == (
        ("c", "d", "slugify"),
        "tessera_udfs.text.other",
    )
    assert function.temporary and not function.system
    assert function.to_dict()["temporary"] is True
    assert "system" not in function.to_dict()
    assert result.sql == (
        "SELECT `__tessera_f1`(name), `__tessera_f1`(name) FROM `__tessera_r1` AS `customers`"
    )


def test_the_four_steps_in_order() -> None:
    catalog = sample_catalog()
    plan("SELECT slugify('a')", catalog)
    assert catalog.lookups == ["system function `slugify`", "function `c`.`d`.`slugify`"]
    catalog.lookups.clear()
    plan("SELECT lower('a')", catalog)
    assert catalog.lookups == ["system function `lower`"]
    catalog.lookups.clear()
    with pytest.raises(NotFound, match=r"Function `c`\.`d`\.`nope` not found"):
        plan("SELECT nope(1)", catalog)
    assert catalog.lookups == ["system function `nope`", "function `c`.`d`.`nope`"]


def test_qualified_names_skip_system_functions_and_builtins() -> None:
    catalog = sample_catalog()
    catalog.add_system_function("upper", "tessera_udfs.text.shout")
    catalog.add_python_function("x.y.upper", "tessera_udfs.text.tmp_upper", temporary=True)
    result = plan("SELECT d.upper('a'), c.d.upper('b'), x.y.upper('c'), upper('d')", catalog)
    assert [(f.alias, f.identifier, f.temporary, f.system) for f in result.functions] == [
        ("__tessera_f1", ("c", "d", "upper"), False, False),
        ("__tessera_f2", ("x", "y", "upper"), True, False),
        ("__tessera_f3", ("", "", "upper"), True, True),
    ]
    assert result.sql == (
        "SELECT `__tessera_f1`('a'), `__tessera_f1`('b'), `__tessera_f2`('c'), `__tessera_f3`('d')"
    )
    with pytest.raises(NotFound, match=r"Function `c`\.`other`\.`upper` not found"):
        plan("SELECT other.upper('a')", catalog)


def test_system_function_body_resolves_in_the_session_context() -> None:
    catalog = sample_catalog()
    catalog.add_system_function(
        "twice", "plus1(v) * 2", language="sql", parameters=(("v", "INT"),), return_type="INT"
    )
    result = plan("SELECT twice(1)", catalog)
    assert [f.identifier for f in result.functions] == [("c", "d", "plus1"), ("", "", "twice")]
    assert result.functions[1].body == "`__tessera_f1`(v) * 2"
    with pytest.raises(NotFound, match=r"Function `x`\.`y`\.`plus1` not found"):
        plan_statement("SELECT twice(1)", catalog, context("x", "y"))


@pytest.mark.parametrize(
    ("sql", "fragment"),
    [
        (
            "CREATE TEMPORARY SYSTEM FUNCTION upper(s STRING) RETURNS STRING RETURN upper(s)",
            "Recursive function `upper` detected: `upper` → `upper`.",
        ),
        (
            "CREATE TEMPORARY FUNCTION plus1(x INT) RETURNS INT RETURN plus1(x) + 1",
            "Recursive function `c`.`d`.`plus1` detected",
        ),
        (
            "CREATE FUNCTION f(x INT) RETURNS INT RETURN c.d.f(x)",
            "Recursive function `c`.`d`.`f` detected",
        ),
    ],
)
def test_a_function_body_calling_the_function_itself_is_recursive(sql: str, fragment: str) -> None:
    with pytest.raises(CoreError) as caught:
        plan(sql)
    assert fragment in caught.value.message


def test_recursive_system_functions_are_detected_at_use() -> None:
    catalog = sample_catalog()
    catalog.add_system_function("f", "g(x)", language="sql", parameters=(("x", "INT"),))
    catalog.add_system_function("g", "f(x)", language="sql", parameters=(("x", "INT"),))
    with pytest.raises(CoreError) as caught:
        plan("SELECT f(1)", catalog)
    assert caught.value.message == "Recursive function `f` detected: `f` → `g` → `f`."


# -- TEMPORARY_OBJECT_EXISTS -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("setup", "sql", "message"),
    [
        (
            "table c.d.orders",
            "DROP TABLE orders",
            "Temporary table with identifier '`c`.`d`.`orders`' exists. "
            "Drop it first before removing the permanent table.",
        ),
        (
            "table c.d.big_orders",
            "DROP VIEW IF EXISTS big_orders",
            "Temporary table with identifier '`c`.`d`.`big_orders`' exists. "
            "Drop it first before removing the permanent view.",
        ),
        (
            "view c.other.orders",
            "DROP TABLE other.orders",
            "Temporary view with identifier '`c`.`other`.`orders`' exists. "
            "Drop it first before removing the permanent table.",
        ),
        (
            "view c.d.big_orders",
            "DROP VIEW c.d.big_orders",
            "Temporary view with identifier '`c`.`d`.`big_orders`' exists. "
            "Drop it first before removing the permanent view.",
        ),
        (
            "function c.d.slugify",
            "DROP FUNCTION IF EXISTS slugify",
            "Temporary function with identifier '`c`.`d`.`slugify`' exists. "
            "Drop it first before removing the permanent function.",
        ),
        (
            "function c.d.slugify",
            "CREATE FUNCTION slugify AS 'tessera_udfs.text.slugify'",
            "Temporary function with identifier '`c`.`d`.`slugify`' exists. "
            "Drop it first before creating the permanent function.",
        ),
        (
            "function c.d.brand_new",
            "CREATE FUNCTION IF NOT EXISTS brand_new(x INT) RETURNS INT RETURN x",
            "Temporary function with identifier '`c`.`d`.`brand_new`' exists. "
            "Drop it first before creating the permanent function.",
        ),
    ],
)
def test_temporary_object_exists(setup: str, sql: str, message: str) -> None:
    catalog = sample_catalog()
    kind, path = setup.split(" ")
    if kind == "table":
        catalog.add_table(path, temporary=True)
    elif kind == "view":
        catalog.add_view(path, "SELECT 1", temporary=True)
    else:
        catalog.add_python_function(path, "tessera_udfs.text.tmp", temporary=True)
    with pytest.raises(TemporaryObjectExists) as caught:
        plan(sql, catalog)
    assert caught.value.code == "TEMPORARY_OBJECT_EXISTS"
    assert caught.value.message == message
    assert caught.value.details["identifier"] == path.split(".")
    assert caught.value.details["temporary_kind"] == kind


def test_no_conflict_without_a_temporary_object_at_that_identifier() -> None:
    catalog = sample_catalog()
    catalog.add_table("c.other.orders2", temporary=True)
    catalog.add_system_function("slugify", "tessera_udfs.text.shout")
    catalog.add_python_function("x.y.slugify", "tessera_udfs.text.tmp", temporary=True)
    assert plan("DROP TABLE orders", catalog).action == "drop_table"
    # A system function is not the catalog function c.d.slugify.
    assert plan("DROP FUNCTION slugify", catalog).action == "drop_function"
    assert plan("CREATE FUNCTION other.slugify AS 'tessera_udfs.a.b'", catalog).target == (
        "c",
        "other",
        "slugify",
    )
    # The temporary statements are never refused for it.
    assert plan("DROP TEMPORARY TABLE c.other.orders2", catalog).action == "drop_table"


# -- views whose dependencies are gone --------------------------------------------------------


def test_view_reading_a_dropped_temporary_table_names_the_view() -> None:
    catalog = sample_catalog()
    catalog.add_table("c.d.tmp", temporary=True)
    catalog.add_view("c.d.v", "SELECT * FROM `c`.`d`.`tmp`", temporary=True)
    assert plan("SELECT * FROM v", catalog).relations[1].identifier == ("c", "d", "v")
    del catalog.temporary_relations[("c", "d", "tmp")]  # DROP TEMPORARY TABLE tmp
    with pytest.raises(NotFound) as caught:
        plan("SELECT * FROM v", catalog)
    assert (
        caught.value.message == "Table or view `c`.`d`.`tmp` not found (read by view `c`.`d`.`v`)."
    )
    assert caught.value.details == {
        "identifier": ["c", "d", "tmp"],
        "view": ["c", "d", "v"],
        "condition": "TABLE_OR_VIEW_NOT_FOUND",
        "sqlstate": "42P01",
    }


def test_permanent_view_with_a_missing_dependency_names_the_innermost_view() -> None:
    catalog = sample_catalog()
    catalog.add_view("c.other.inner", "SELECT * FROM `c`.`other`.`gone`")
    catalog.add_view("c.d.top", "SELECT * FROM `c`.`other`.`inner`")
    with pytest.raises(NotFound) as caught:
        plan("SELECT * FROM top", catalog)
    assert caught.value.message == (
        "Table or view `c`.`other`.`gone` not found (read by view `c`.`other`.`inner`)."
    )
    assert caught.value.details["view"] == ["c", "other", "inner"]
    # Creating a view over it fails the same way; a direct read names no view.
    with pytest.raises(NotFound, match=r"\(read by view `c`\.`other`\.`inner`\)\.$"):
        plan("CREATE TEMPORARY VIEW w AS SELECT * FROM top", catalog)
    with pytest.raises(NotFound) as direct:
        plan("SELECT * FROM other.gone", catalog)
    assert direct.value.message == "Table or view `c`.`other`.`gone` not found"
    assert direct.value.details == {
        "identifier": ["c", "other", "gone"],
        "condition": "TABLE_OR_VIEW_NOT_FOUND",
        "sqlstate": "42P01",
    }


def test_view_calling_a_dropped_function_names_the_view() -> None:
    catalog = sample_catalog()
    catalog.add_view("c.d.v", "SELECT `c`.`d`.`tmp_f`(1) AS x", temporary=True)
    with pytest.raises(NotFound) as caught:
        plan("SELECT * FROM v", catalog)
    assert caught.value.message == "Function `c`.`d`.`tmp_f` not found (read by view `c`.`d`.`v`)."


# -- paths after USE ---------------------------------------------------------------------------


def _in(catalog: MemoryCatalog, sql: str, current: tuple[str | None, str | None]) -> Plan:
    return plan_statement(sql, catalog, context(*current))


def test_paths_expand_with_the_current_catalog_and_database() -> None:
    catalog = sample_catalog()
    create = f"CREATE TEMPORARY TABLE {{}} (id INT) {LOCATION}"
    # USE CATALOG x (the web side fills in its default database y), then USE other-style moves.
    assert _in(catalog, create.format("t"), ("x", "y")).target == ("x", "y", "t")
    assert _in(catalog, create.format("n.t"), ("x", "y")).target == ("x", "n", "t")
    assert _in(catalog, create.format("k.n.t"), ("x", "y")).target == ("k", "n", "t")
    assert _in(catalog, create.format("d.t"), ("c", None)).target == ("c", "d", "t")
    with pytest.raises(IdentifierError, match="no current database"):
        _in(catalog, create.format("t"), ("c", None))
    # No current catalog: only a three-part path.
    assert _in(catalog, create.format("k.n.t"), (None, None)).target == ("k", "n", "t")
    for path in ("t", "n.t"):
        with pytest.raises(IdentifierError) as caught:
            _in(catalog, create.format(path), (None, None))
        assert "no current catalog is set" in caught.value.message
    with pytest.raises(IdentifierError, match="no current catalog"):
        _in(catalog, "CREATE TEMPORARY VIEW v AS SELECT 1", (None, None))
    with pytest.raises(IdentifierError, match="no current catalog"):
        _in(catalog, "DROP TEMPORARY FUNCTION f", (None, None))
    # A system function lives in no catalog: it needs none.
    system = _in(catalog, "CREATE TEMPORARY SYSTEM FUNCTION f AS 'tessera_udfs.a.b'", (None, None))
    assert system.target == ("f",)
    assert _in(catalog, "DROP TEMPORARY SYSTEM FUNCTION f", (None, None)).target == ("f",)


def test_lookups_follow_the_current_catalog_and_database() -> None:
    catalog = sample_catalog()
    catalog.add_table("x.y.t", temporary=True)
    catalog.add_table("c.other.t", temporary=True)
    catalog.add_python_function("x.y.f", "tessera_udfs.a.f", temporary=True)

    def reads(sql: str, current: tuple[str | None, str | None]) -> list[tuple[str, str, str]]:
        result = _in(catalog, sql, current)
        return [r.identifier for r in result.relations] + [f.identifier for f in result.functions]

    assert reads("SELECT f(id) FROM t", ("x", "y")) == [("x", "y", "t"), ("x", "y", "f")]
    assert reads("SELECT * FROM t", ("c", "other")) == [("c", "other", "t")]
    assert reads("SELECT * FROM other.t", ("c", "d")) == [("c", "other", "t")]
    assert reads("SELECT y.f(id) FROM y.t", ("x", None)) == [("x", "y", "t"), ("x", "y", "f")]
    assert reads("SELECT x.y.f(id) FROM x.y.t", (None, None)) == [
        ("x", "y", "t"),
        ("x", "y", "f"),
    ]
    with pytest.raises(NotFound, match=r"`c`\.`d`\.`t` not found"):
        _in(catalog, "SELECT * FROM t", ("c", "d"))
    with pytest.raises(IdentifierError, match="no current catalog"):
        _in(catalog, "SELECT * FROM y.t", (None, None))


def test_plan_json_of_temporary_plans_round_trips() -> None:
    catalog = sample_catalog()
    catalog.add_system_function("upper", "tessera_udfs.text.shout")
    catalog.add_table("c.d.tmp", temporary=True)
    for sql in (
        "SELECT upper(name), slugify(name) FROM customers, tmp",
        "CREATE TEMPORARY VIEW v AS SELECT upper(name) FROM tmp",
        "CREATE TEMPORARY SYSTEM FUNCTION g(x INT) RETURNS INT RETURN plus1(x)",
        "DROP TEMPORARY SYSTEM FUNCTION g",
        "SHOW TEMPORARY VIEWS",
    ):
        _round_trips(plan(sql, catalog))
