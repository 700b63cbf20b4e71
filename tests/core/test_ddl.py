"""CREATE TABLE: the hand-written DDL parser, its schema and options."""

from __future__ import annotations

from typing import Any

import pytest

from core.errors import CoreError, NotFound, SchemaError
from core.planner import ForbiddenSql, ParseError
from core.schema import Schema, SchemaResolver
from tests.core.test_planner_support import STORAGE_ROOT, plan

FULL = f"""CREATE TABLE IF NOT EXISTS c.d.t (
    id BIGINT NOT NULL COMMENT 'the id',
    price DECIMAL(10, 2),
    qty INT,
    total AS price * qty,
    file STRING METADATA FROM 'file_path' VIRTUAL,
    ts TIMESTAMP,
    `order date` DATE,
    WATERMARK FOR ts AS ts - INTERVAL 5 SECONDS,
    CONSTRAINT pk_t PRIMARY KEY (id) NOT ENFORCED
)
PARTITIONED BY (qty)
COMMENT 'orders'
WITH ('connector' = 'csv', 'path' = '{STORAGE_ROOT}/t', 'header' = 'true')"""


def test_full_example() -> None:
    result = plan(FULL)
    assert (result.kind, result.action, result.needs_spark) == ("ddl", "create_table", True)
    assert result.target == ("c", "d", "t")
    assert result.sql == ""
    assert result.args == {
        "identifier": ["c", "d", "t"],
        "if_not_exists": True,
        "schema": {
            "columns": [
                {
                    "name": "id",
                    "kind": "physical",
                    "data_type": "BIGINT NOT NULL",
                    "comment": "the id",
                },
                {"name": "price", "kind": "physical", "data_type": "DECIMAL(10, 2)"},
                {"name": "qty", "kind": "physical", "data_type": "INT"},
                {"name": "total", "kind": "computed", "expression": "price * qty"},
                {
                    "name": "file",
                    "kind": "metadata",
                    "data_type": "STRING",
                    "metadata_key": "file_path",
                    "virtual": True,
                },
                {"name": "ts", "kind": "physical", "data_type": "TIMESTAMP"},
                {"name": "order date", "kind": "physical", "data_type": "DATE"},
            ],
            "watermarks": [{"column": "ts", "expression": "ts - INTERVAL 5 SECONDS"}],
            "primary_key": {"name": "pk_t", "columns": ["id"]},
        },
        "options": {"connector": "csv", "path": f"{STORAGE_ROOT}/t", "header": "true"},
        "partition_by": ["qty"],
        "comment": "orders",
    }
    # The schema is a real core Schema that the resolver accepts.
    resolved = SchemaResolver().resolve(Schema.from_dict(result.args["schema"]))
    assert resolved.primary_key is not None and resolved.primary_key.name == "pk_t"


def _args(sql: str) -> dict[str, Any]:
    return dict(plan(sql).args)


def _columns(sql: str) -> list[dict[str, Any]]:
    columns: list[dict[str, Any]] = _args(sql)["schema"]["columns"]
    return columns


def test_nested_types_keep_their_whole_span() -> None:
    columns = _columns(
        "CREATE TABLE t (a ARRAY<STRUCT<x: INT, `y z`: MAP<STRING, DECIMAL(5,1)>>>, "
        "b MAP<STRING,ARRAY<INT>> NOT NULL, c STRUCT<>, d INTEGER)"
    )
    assert [c["data_type"] for c in columns] == [
        "ARRAY<STRUCT<x: INT, `y z`: MAP<STRING, DECIMAL(5, 1)>>>",
        "MAP<STRING, ARRAY<INT>> NOT NULL",
        "STRUCT<>",
        "INT",
    ]


def test_computed_expression_keeps_the_source_text() -> None:
    columns = _columns(
        "CREATE TABLE t (a INT, b STRING, "
        "c AS concat(b, ',', CAST(a AS STRING)) COMMENT 'joined', d AS (a + 1) * 2)"
    )
    assert columns[2] == {
        "name": "c",
        "kind": "computed",
        "expression": "concat(b, ',', CAST(a AS STRING))",
        "comment": "joined",
    }
    assert columns[3]["expression"] == "(a + 1) * 2"


def test_metadata_column_forms() -> None:
    columns = _columns(
        "CREATE TABLE t (a INT, file_name STRING METADATA, "
        "size BIGINT METADATA FROM 'file_size', f STRING METADATA FROM 'file_path' VIRTUAL "
        "COMMENT 'where')"
    )
    assert columns[1:] == [
        {
            "name": "file_name",
            "kind": "metadata",
            "data_type": "STRING",
            "metadata_key": None,
            "virtual": False,
        },
        {
            "name": "size",
            "kind": "metadata",
            "data_type": "BIGINT",
            "metadata_key": "file_size",
            "virtual": False,
        },
        {
            "name": "f",
            "kind": "metadata",
            "data_type": "STRING",
            "metadata_key": "file_path",
            "virtual": True,
            "comment": "where",
        },
    ]


def test_inline_and_unnamed_primary_keys() -> None:
    assert _args("CREATE TABLE t (id INT PRIMARY KEY NOT ENFORCED, x INT)")["schema"][
        "primary_key"
    ] == {"name": None, "columns": ["id"]}
    assert _args("CREATE TABLE t (a INT, b INT, PRIMARY KEY (a, b) NOT ENFORCED)")["schema"][
        "primary_key"
    ] == {
        "name": None,
        "columns": ["a", "b"],
    }
    assert _args("CREATE TABLE t (a INT CONSTRAINT k PRIMARY KEY NOT ENFORCED COMMENT 'x')")[
        "schema"
    ]["primary_key"] == {"name": "k", "columns": ["a"]}


def test_trailing_clauses_in_any_order() -> None:
    first = _args(
        f"CREATE TABLE t (a INT, b INT) LOCATION '{STORAGE_ROOT}/x' COMMENT 'c' "
        "PARTITIONED BY (b) OPTIONS (header 'true', 'sep' = ';') USING CSV"
    )
    second = _args(
        f"CREATE TABLE t (a INT, b INT) USING csv OPTIONS (header = true, sep ';') "
        f"PARTITIONED BY (B) COMMENT 'c' LOCATION '{STORAGE_ROOT}/x'"
    )
    assert first == second
    assert first["options"] == {
        "connector": "csv",
        "path": f"{STORAGE_ROOT}/x",
        "header": "true",
        "sep": ";",
    }
    assert first["partition_by"] == ["b"]


@pytest.mark.parametrize(
    ("clauses", "options"),
    [
        ("", {}),
        ("USING parquet", {"format": "parquet"}),
        ("USING ORC OPTIONS ('compression' = 'zstd')", {"format": "orc", "compression": "zstd"}),
        ("WITH ('format' = 'json')", {"format": "json"}),
        (
            f"USING text OPTIONS (path '{STORAGE_ROOT}/logs')",
            {"connector": "text", "path": f"{STORAGE_ROOT}/logs"},
        ),
        (
            f"WITH ('connector' = 'parquet', 'path' = '{STORAGE_ROOT}/p')",
            {"connector": "parquet", "path": f"{STORAGE_ROOT}/p"},
        ),
    ],
)
def test_using_and_options(clauses: str, options: dict[str, str]) -> None:
    assert _args(f"CREATE TABLE t (a INT) {clauses}")["options"] == options


def test_backticked_column_names() -> None:
    columns = _columns("CREATE TABLE t (`a``b` INT, `with space` STRING, `select` INT)")
    assert [c["name"] for c in columns] == ["a`b", "with space", "select"]


def test_needs_spark_only_with_expressions() -> None:
    assert not plan("CREATE TABLE t (a INT)").needs_spark
    assert plan("CREATE TABLE t (a INT, b AS a + 1)").needs_spark
    assert plan("CREATE TABLE t (ts TIMESTAMP, WATERMARK FOR ts AS ts)").needs_spark


def test_bad_type_is_a_parse_error_at_its_position() -> None:
    with pytest.raises(ParseError) as caught:
        plan("CREATE TABLE t (\n  a INT,\n  b INTEGR\n)")
    assert caught.value.details == {"line": 3, "column": 5}
    assert "column `b`" in caught.value.message and "INTEGR" in caught.value.message


@pytest.mark.parametrize(
    ("sql", "line", "column"),
    [
        ("CREATE TABLE t", 1, 15),  # just after the end
        ("CREATE TABLE t (a INT", 1, 22),
        ("CREATE TABLE t (a INT,)", 1, 23),
        ("CREATE TABLE t (a INT) TBLPROPERTIES ('a' = 'b')", 1, 24),
        ("CREATE TABLE t (a INT) COMMENT 'x' COMMENT 'y'", 1, 36),
        ("CREATE TABLE t (a INT) OPTIONS ('a' = 'b') WITH ('c' = 'd')", 1, 44),
        ("CREATE TABLE t (a INT, b AS )", 1, 29),
        ("CREATE TABLE t (a INT, b AS a +)", 1, 31),
    ],
)
def test_syntax_errors(sql: str, line: int, column: int) -> None:
    with pytest.raises(ParseError) as caught:
        plan(sql)
    assert caught.value.details == {"line": line, "column": column}


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("CREATE TABLE t (a INT, A STRING)", "Column `a` is declared twice (as `a` and `A`)."),
        (
            "CREATE TABLE t (a INT, PRIMARY KEY (b) NOT ENFORCED)",
            "Primary key column `b` does not exist. Available columns: a.",
        ),
        (
            "CREATE TABLE t (a STRING, WATERMARK FOR a AS a)",
            "Watermark column `a` must be of type TIMESTAMP, but is STRING.",
        ),
        (
            "CREATE TABLE t (f INT METADATA FROM 'file_size')",
            "Metadata column `f` is declared as INT but metadata key 'file_size' provides BIGINT.",
        ),
        (
            "CREATE TABLE t (a INT PRIMARY KEY NOT ENFORCED, PRIMARY KEY (a) NOT ENFORCED)",
            "only one primary key",
        ),
    ],
)
def test_schema_errors_propagate(sql: str, message: str) -> None:
    with pytest.raises(SchemaError) as caught:
        plan(sql)
    assert caught.value.code == "VALIDATION_ERROR"
    assert message in caught.value.message


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("CREATE TABLE t (a INT) PARTITIONED BY (b)", "Partition column `b`"),
        ("CREATE TABLE t (a INT, b AS a) PARTITIONED BY (b)", "Partition column `b`"),
        ("CREATE TABLE t (a INT, b AS slugify(a))", "built-in functions"),
        ("CREATE TABLE t (a INT) WITH ('connector' = 'csv')", "needs a path"),
        (f"CREATE TABLE t (a INT) LOCATION '{STORAGE_ROOT}/x'", "needs a format"),
        (
            f"CREATE TABLE t (a INT) USING csv OPTIONS (path '{STORAGE_ROOT}/a') "
            f"LOCATION '{STORAGE_ROOT}/b'",
            "once",
        ),
        ("CREATE TABLE t (a INT) USING csv WITH ('connector' = 'json')", "contradicts"),
        ("CREATE TABLE t (a INT) OPTIONS ('Header' = 'a', 'header' = 'b')", "twice"),
    ],
)
def test_validation_errors(sql: str, message: str) -> None:
    with pytest.raises(CoreError) as caught:
        plan(sql)
    assert caught.value.code in ("VALIDATION_ERROR", "PARSE_ERROR")
    assert message in caught.value.message


def test_computed_column_cannot_read_tables() -> None:
    with pytest.raises(ForbiddenSql, match="cannot read tables"):
        plan("CREATE TABLE t (a INT, b AS (SELECT max(id) FROM orders))")


def test_ctas_is_planned_as_a_write() -> None:
    result = plan("CREATE TABLE t USING parquet AS SELECT * FROM orders")
    assert (result.kind, result.action) == ("ctas", "ctas")  # tests/core/test_writes.py


def test_ctas_takes_no_column_list() -> None:
    with pytest.raises(CoreError, match="takes no column list"):
        plan("CREATE TABLE t (a INT) USING parquet AS SELECT 1")


def test_database_must_exist() -> None:
    with pytest.raises(NotFound, match=r"Database `c`.`nope` does not exist."):
        plan("CREATE TABLE nope.t (a INT)")


def test_expanded_with_the_current_catalog_and_database() -> None:
    assert plan("CREATE TABLE other.t (a INT)").target == ("c", "other", "t")
    assert plan("CREATE TABLE x.y.t (a INT)").target == ("x", "y", "t")


@pytest.mark.parametrize(
    "sql",
    ["CREATE TABLE t (a INT PRIMARY KEY, b INT)", "CREATE TABLE t (a INT, PRIMARY KEY (a))"],
)
def test_a_primary_key_without_not_enforced_is_refused(sql: str) -> None:
    from core.planner import UnsupportedStatement

    with pytest.raises(UnsupportedStatement, match="must be declared NOT ENFORCED"):
        _args(sql)
