"""What the client builds before anything is sent: SQL text, quoting, DDL, schemas, rows.

Pure Python, no server (the live behaviour is in the other files of this folder).
"""

from __future__ import annotations

import re

import pytest
from tessera.errors import job_error
from tessera.result import Row
from tessera.table import Table

from tests.client.conftest import tessera


class NoServer:
    """A TableEnvironment stand-in: building SQL must not talk to anyone."""


def from_path(path: str) -> Table:
    return tessera.TableEnvironment.from_path(NoServer(), path)  # type: ignore[arg-type]


def test_quoting():
    assert tessera.quote_identifier("a`b") == "`a``b`"
    assert tessera.col("it's") == "`it's`"
    assert tessera.lit("x' OR 1=1 --") == "'x\\' OR 1=1 --'"
    assert tessera.lit("back\\slash") == "'back\\\\slash'"
    assert tessera.lit(None) == "NULL" and tessera.lit(True) == "TRUE" and tessera.lit(5) == "5"
    with pytest.raises(tessera.ValidationError):
        tessera.lit(object())


def test_sql_of_operations():
    orders = from_path("shop.sales.orders")
    assert orders.sql == "SELECT * FROM `shop`.`sales`.`orders`"
    assert (
        orders.where("qty > 1").where("price < 3").order_by("price DESC").limit(5).sql
        == "SELECT * FROM `shop`.`sales`.`orders` WHERE qty > 1 AND price < 3 "
        "ORDER BY price DESC LIMIT 5"
    )
    joined = (
        orders.alias("o")
        .join(from_path("customers").alias("c"), "o.customer = c.id", how="left")
        .select("o.id", "c.name")
    )
    assert joined.sql == (
        "SELECT o.id, c.name FROM `shop`.`sales`.`orders` AS `o` "
        "LEFT OUTER JOIN `customers` AS `c` ON o.customer = c.id"
    )
    grouped = orders.group_by("customer").select("customer", "sum(qty) AS n")
    assert grouped.sql == (
        "SELECT customer, SUM(qty) AS n FROM `shop`.`sales`.`orders` GROUP BY customer"
    )
    assert "UNION ALL" in orders.union_all(orders).sql
    assert orders.distinct().sql == "SELECT DISTINCT * FROM `shop`.`sales`.`orders`"
    assert orders.insert_sql("c.`d d`.t", overwrite=True).startswith(
        "INSERT OVERWRITE `c`.`d d`.`t` SELECT"
    )


def sql_query(text: str) -> Table:
    return tessera.TableEnvironment.sql_query(NoServer(), text)  # type: ignore[arg-type]


def test_a_query_runs_as_written_and_composes_through_sqlglot():
    # Sent as written: Spark's parser judges it, not sqlglot's rendering of it.
    written = "SELECT 'it''s' AS s, a <=> b AS same FROM t"
    assert sql_query(written).sql == written
    assert re.fullmatch(
        r"SELECT \* FROM \(SELECT CONCAT\('it', 's'\) AS s, a IS NOT DISTINCT FROM b AS same "
        r"FROM t\) AS `_t\d+` WHERE same",
        sql_query(written).where("same").sql,
    )
    # sqlglot cannot read Spark's window(): the query still runs as written; composing says why.
    windowed = (
        "SELECT window(ts, '1 minute') AS w, count(*) AS n FROM t GROUP BY window(ts, '1 minute')"
    )
    table = sql_query(windowed)
    assert table.sql == windowed
    with pytest.raises(tessera.ParseError, match="runs as written") as error:
        table.where("n > 1")
    assert error.value.code == "PARSE_ERROR"
    with pytest.raises(tessera.ParseError, match="runs as written"):
        table.alias("x")
    # Not a query: refused before anything is sent, readable by sqlglot or not.
    for statement in ("DROP TABLE t", "INSERT INTO t SELECT window(ts, '1 minute') FROM u"):
        with pytest.raises(tessera.ParseError):
            sql_query(statement)
    assert sql_query("-- a comment\n(SELECT window(ts, '1 minute') FROM t)").sql.startswith("--")


def test_expressions_cannot_carry_statements():
    orders = from_path("orders")
    for bad in ("1 = 1; DROP TABLE x", "a) FROM t --", "a FROM t"):
        with pytest.raises(tessera.ParseError):
            orders.where(bad)
    with pytest.raises(tessera.ParseError):
        orders.select("id FROM orders --")
    with pytest.raises(tessera.ParseError):
        from_path("orders; DROP TABLE orders")
    with pytest.raises(tessera.ValidationError):
        from_path("a.b.c.d")
    with pytest.raises(tessera.ValidationError):
        orders.limit(-1)
    with pytest.raises(tessera.ValidationError):
        orders.join(orders, None)
    with pytest.raises(tessera.ValidationError):
        orders.join(orders, "a = b", on_sql="a = b")
    assert orders.join(orders.alias("o"), on_sql="1 = 1").sql.endswith("ON 1 = 1")


def test_hostile_names_in_ddl():
    schema = (
        tessera.Schema.new_builder()
        .column("a`b", "STRING")
        .column_by_metadata("f", "STRING", "file_path')--", is_virtual=True)
        .primary_key_named("pk`x", "a`b")
        .build()
    )
    assert schema.ddl_elements() == [
        "`a``b` STRING",
        "`f` STRING METADATA FROM 'file_path\\')--' VIRTUAL",
        "CONSTRAINT `pk``x` PRIMARY KEY (`a``b`) NOT ENFORCED",
    ]
    descriptor = (
        tessera.TableDescriptor.for_connector("csv")
        .option("path", "/x') , ('k'='v")
        .comment("it's")
        .partitioned_by("a`b")
        .build()
    )
    assert descriptor.ddl_clauses() == (
        " USING csv OPTIONS ('path' = '/x\\') , (\\'k\\'=\\'v') COMMENT 'it\\'s'"
        " PARTITIONED BY (`a``b`)"
    )
    with pytest.raises(tessera.ValidationError):
        tessera.TableDescriptor.for_connector("csv OPTIONS").build().ddl_clauses()
    with pytest.raises(tessera.ParseError):
        tessera.Schema.new_builder().column("x", "NOT A TYPE (")


def test_schema_json_round_trip():
    schema = (
        tessera.Schema.new_builder()
        .column("id", "BIGINT NOT NULL")
        .column_by_expression("twice", "id * 2")
        .column_by_metadata("file", "STRING", "file_path", is_virtual=True)
        .column("ts", "TIMESTAMP")
        .watermark("ts", "ts - INTERVAL 5 SECONDS")
        .primary_key("id")
        .build()
    )
    assert schema.to_json() == {
        "columns": [
            {"name": "id", "kind": "physical", "data_type": "BIGINT NOT NULL"},
            {"name": "twice", "kind": "computed", "expression": "id * 2"},
            {
                "name": "file",
                "kind": "metadata",
                "data_type": "STRING",
                "metadata_key": "file_path",
                "virtual": True,
            },
            {"name": "ts", "kind": "physical", "data_type": "TIMESTAMP"},
        ],
        "watermarks": [{"column": "ts", "expression": "ts - INTERVAL 5 SECONDS"}],
        "primary_key": {"name": None, "columns": ["id"]},
    }
    assert tessera.Schema.from_json(schema.to_json()) == schema
    descriptor = tessera.TableDescriptor.for_managed().schema(schema).build()
    assert tessera.TableDescriptor.from_json(descriptor.to_json()) == descriptor


def test_rows():
    row = Row(("id", "name"), (1, "a"))
    assert row["name"] == "a" and row.name == "a" and row[0] == 1 and row[-1] == "a"
    assert len(row) == 2 and list(row) == [1, "a"] and row.asdict() == {"id": 1, "name": "a"}
    assert row == (1, "a") and row == Row(("id", "name"), (1, "a"))
    with pytest.raises(KeyError):
        row["missing"]
    with pytest.raises(AttributeError):
        row.missing  # noqa: B018
    with pytest.raises(AttributeError):
        row.id = 2
    assert repr(row) == "Row(id=1, name='a')"


def test_job_errors_are_both_kinds():
    error = job_error(
        {"id": "j1", "status": "FAILED", "error": {"code": "PARSE_ERROR", "message": "m"}}
    )
    assert isinstance(error, tessera.ParseError) and isinstance(error, tessera.JobFailedError)
    assert error.job_id == "j1" and error.details == {}
    other = job_error(
        {"id": "j2", "status": "FAILED", "error": {"code": "TIMEOUT", "message": "t"}}
    )
    assert type(other) is tessera.JobFailedError and other.code == "TIMEOUT"
    canceled = job_error({"id": "j3", "status": "CANCELED", "error": None})
    assert isinstance(canceled, tessera.CanceledError) and canceled.code == "CANCELED"
