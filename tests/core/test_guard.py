"""The SQL guard: hostile statements are refused with FORBIDDEN_SQL and a message naming
the offending part; benign look-alikes pass."""

from __future__ import annotations

import pytest

from core.errors import CoreError
from core.planner import ForbiddenSql, Plan
from tests.core.test_planner_support import STORAGE_ROOT, plan, sample_catalog

# (statement, a fragment the message must contain)
HOSTILE: list[tuple[str, str]] = [
    # direct file paths, every format
    ("SELECT * FROM parquet.`/etc/passwd`", "parquet.`/etc/passwd`"),
    ("SELECT * FROM text.`/etc/passwd`", "text.`/etc/passwd`"),
    ("SELECT * FROM csv.`file:///etc/hosts`", "csv.`file:///etc/hosts`"),
    ("SELECT * FROM json.`/data/*.json`", "json.`/data/*.json`"),
    ("SELECT * FROM orc.`relative/dir`", "orc.`relative/dir`"),
    ("SELECT * FROM avro.`/x`", "avro.`/x`"),
    ("SELECT * FROM binaryFile.`/x`", "binaryFile.`/x`"),
    ("SELECT * FROM delta.`/lake/t`", "delta.`/lake/t`"),
    ("SELECT * FROM JDBC.`jdbc:postgresql://h/db`", "JDBC.`jdbc:postgresql://h/db`"),
    ("SELECT * FROM orders o JOIN parquet.`/x` p ON o.id = p.id", "parquet.`/x`"),
    ("SELECT * FROM orders WHERE id IN (SELECT id FROM csv.`/x`)", "csv.`/x`"),
    ("WITH a AS (SELECT * FROM text.`/etc/shadow`) SELECT * FROM a", "text.`/etc/shadow`"),
    ("CREATE VIEW v AS SELECT * FROM parquet.`/x`", "parquet.`/x`"),
    ("EXPLAIN SELECT * FROM parquet.`/x`", "parquet.`/x`"),
    ("TABLE parquet.`/x`", "parquet.`/x`"),
    # reflection
    ("SELECT reflect('java.lang.Runtime', 'getRuntime')", "reflect()"),
    ("SELECT REFLECT('java.lang.System', 'getenv', 'HOME')", "reflect()"),
    ("SELECT java_method('java.lang.System', 'getenv', 'HOME')", "java_method()"),
    ("SELECT try_reflect('java.lang.System', 'getenv', 'HOME')", "try_reflect()"),
    ("SELECT upper(concat('a', try_reflect('java.lang.System', 'getenv', 'X')))", "try_reflect()"),
    ("SELECT * FROM orders WHERE id = length(reflect('a', 'b'))", "reflect()"),
    ("SELECT transform(array(1), x -> reflect('a', 'b'))", "reflect()"),
    ("SELECT c.d.reflect('a', 'b')", "reflect()"),
    ("SELECT `reflect`('a', 'b')", "reflect()"),
    ("SELECT * FROM python_worker_logs()", "python_worker_logs()"),
    ("SELECT from_protobuf(b, 'M', '/etc/desc.pb') FROM t", "from_protobuf()"),
    ("CREATE FUNCTION reflect AS 'tessera_udfs.a.b'", "reflect()"),
    ("CREATE TABLE t (id INT, x AS reflect('a', 'b'))", "reflect()"),
    ("CREATE FUNCTION f(x INT) RETURNS STRING RETURN java_method('a', 'b')", "java_method()"),
    # Spark's own catalog
    ("SELECT * FROM spark_catalog.default.t", "spark_catalog"),
    ("SELECT * FROM `spark_catalog`.`default`.`t`", "spark_catalog"),
    ("SELECT * FROM global_temp.v", "global_temp"),
    ("SELECT * FROM GLOBAL_TEMP.v", "global_temp"),
    ("SELECT spark_catalog.default.f(1)", "spark_catalog"),
    ("USE spark_catalog", "spark_catalog"),
    ("USE CATALOG spark_catalog", "spark_catalog"),
    ("USE global_temp", "global_temp"),
    ("SHOW TABLES IN global_temp", "global_temp"),
    ("SHOW DATABASES IN spark_catalog", "spark_catalog"),
    ("DESCRIBE spark_catalog.default.t", "spark_catalog"),
    ("DROP TABLE global_temp.v", "global_temp"),
    ("CREATE CATALOG spark_catalog", "spark_catalog"),
    ("CREATE DATABASE global_temp", "global_temp"),
    # names and code that cannot be known from the text
    ("EXECUTE IMMEDIATE 'SELECT * FROM secret'", "EXECUTE IMMEDIATE"),
    ("SELECT * FROM IDENTIFIER('orders')", "IDENTIFIER"),
    ("SELECT identifier('x') FROM orders", "IDENTIFIER"),
    ("CREATE TABLE IDENTIFIER('t') (a INT)", "IDENTIFIER"),
    ("ADD JAR '/tmp/evil.jar'", "ADD JAR"),
    ("ADD FILE '/tmp/x.py'", "ADD FILE"),
    ("ADD ARCHIVE '/tmp/x.zip'", "ADD ARCHIVE"),
    ("LIST JAR", "LIST JAR"),
    ("LIST FILE", "LIST FILE"),
    ("SELECT TRANSFORM(id) USING 'cat /etc/passwd' AS (x) FROM orders", "TRANSFORM"),
    ("SELECT TRANSFORM(id) USING '/bin/sh' FROM orders", "TRANSFORM"),
    ("CREATE FUNCTION f AS 'tessera_udfs.a.b' USING JAR '/tmp/x.jar'", "USING JAR"),
    ("LOAD DATA LOCAL INPATH '/etc/passwd' INTO TABLE orders", "LOAD DATA"),
    ("INSERT OVERWRITE DIRECTORY '/tmp/out' SELECT * FROM orders", "INSERT OVERWRITE DIRECTORY"),
    ("INSERT OVERWRITE LOCAL DIRECTORY '/tmp/o' SELECT 1", "INSERT OVERWRITE DIRECTORY"),
    # Spark's shared state
    ("CACHE TABLE orders", "CACHE TABLE"),
    ("CACHE LAZY TABLE x AS SELECT 1", "CACHE LAZY"),
    ("UNCACHE TABLE orders", "UNCACHE TABLE"),
    ("CLEAR CACHE", "CLEAR CACHE"),
    ("REFRESH TABLE orders", "REFRESH TABLE"),
    ("REFRESH '/data/x'", "REFRESH"),
    ("MSCK REPAIR TABLE orders", "MSCK REPAIR"),
    ("REPAIR TABLE orders", "REPAIR TABLE"),
    # SET allowlist
    ("SET spark.sql.warehouse.dir = /tmp", "spark.sql.warehouse.dir"),
    ("SET spark.hadoop.fs.s3a.secret.key = x", "spark.hadoop.fs.s3a.secret.key"),
    ("SET spark.sql.legacy.createHiveTableByDefault=true", "spark.sql.legacy"),
    ("SET spark.sql.shuffle.partitions.extra = 1", "spark.sql.shuffle.partitions.extra"),
    ("SET VAR x = 1", "VAR x"),
    ("RESET spark.sql.catalogImplementation", "spark.sql.catalogImplementation"),
    # storage roots
    ("CREATE TABLE t (a INT) USING csv LOCATION '/etc'", "/etc"),
    ("CREATE TABLE t (a INT) USING csv LOCATION '/srv/tessera/external/../../etc'", ".."),
    ("CREATE TABLE t (a INT) USING csv OPTIONS (path '/tmp/x')", "/tmp/x"),
    ("CREATE TABLE t (a INT) WITH ('connector' = 'csv', 'path' = '/root')", "/root"),
    ("CREATE TABLE t (a INT) USING csv LOCATION 's3a://bucket/x'", "s3a://bucket/x"),
    ("CREATE TABLE t (a INT) USING csv LOCATION 'relative/x'", "relative/x"),
    ("CREATE TABLE t (a INT) USING csv LOCATION '/srv/tessera/external*'", "glob"),
    ("CREATE TABLE t (a INT) USING csv OPTIONS (PATH '/srv/other')", "/srv/other"),
    (
        "CREATE TABLE t (a INT) USING csv OPTIONS (basePath '/etc') LOCATION "
        "'/srv/tessera/external/t'",
        "basePath",
    ),
    ("CREATE TABLE t (a INT) USING csv OPTIONS (paths '[\"/etc\"]')", "paths"),
    # non-file sources
    ("CREATE TABLE t (a INT) USING jdbc OPTIONS (url 'jdbc:x', dbtable 'y')", "jdbc"),
    ("CREATE TABLE t (a INT) USING hive", "hive"),
    ("CREATE TABLE t (a INT) USING org.apache.spark.sql.jdbc", "org.apache.spark.sql.jdbc"),
    ("CREATE TABLE t (a INT) WITH ('connector' = 'kafka')", "kafka"),
    ("CREATE TABLE t (a INT) USING iceberg", "iceberg"),  # delta: tests/core/test_delta_tables.py
    # statements outside the SQL reference
    ("ALTER TABLE orders SET LOCATION '/etc'", "ALTER TABLE"),
    # row-level changes (managed Delta tables, tests/core/test_row_changes.py)
    ("DELETE FROM parquet.`/x` WHERE true", "Writing files by path (parquet.`/x`)"),
    ("UPDATE orders SET id = (SELECT max(id) FROM json.`/x`)", "Reading files by path"),
    ("MERGE INTO orders USING csv.`/x` s ON true WHEN MATCHED THEN DELETE", "csv.`/x`"),
    ("DELETE FROM orders WHERE reflect('a', 'b') = 'x'", "reflect()"),
    ("TRUNCATE TABLE orders", "TRUNCATE TABLE"),
    ("CREATE EXTERNAL TABLE t (a INT) LOCATION '/etc'", "CREATE EXTERNAL"),
    ("CREATE OR REPLACE TABLE t (a INT)", "CREATE OR REPLACE TABLE"),
    ("SHOW PARTITIONS orders", "SHOW PARTITIONS"),
    ("DESCRIBE FUNCTION reflect", "DESCRIBE FUNCTION"),
    ("SELECT * FROM orders UNION TABLE secret", "TABLE … inside a query"),
    ("CREATE FUNCTION f AS 'os.system'", "os.system"),
    ("CREATE FUNCTION f AS 'com.evil.Udf' LANGUAGE JAVA", "LANGUAGE JAVA"),
    ("CREATE DATABASE db LOCATION '/etc'", "LOCATION"),
    # writes: targets and queries alike
    ("INSERT INTO parquet.`/x` SELECT 1", "Writing files by path (parquet.`/x`)"),
    ("INSERT OVERWRITE TABLE csv.`/srv/tessera/external/x` SELECT 1", "csv.`/srv/"),
    ("INSERT INTO customers SELECT * FROM json.`/x`", "Reading files by path (json.`/x`)"),
    ("INSERT INTO customers SELECT reflect('a', 'b'), 'x'", "reflect()"),
    ("INSERT INTO spark_catalog.default.t SELECT 1", "spark_catalog"),
    ("CREATE TABLE t AS SELECT * FROM parquet.`/x`", "parquet.`/x`"),
    ("CREATE TABLE IF NOT EXISTS orders AS SELECT * FROM parquet.`/x`", "parquet.`/x`"),
    ("CREATE TABLE parquet.`/x` AS SELECT 1", "Writing files by path"),
    ("CREATE TABLE t USING csv LOCATION '/etc' AS SELECT 1", "/etc"),
    ("CREATE TABLE t WITH ('connector' = 'csv', 'path' = '/tmp/x') AS SELECT 1", "/tmp/x"),
    ("CREATE TABLE t USING jdbc AS SELECT 1", "jdbc"),
    ("CREATE TABLE t WITH ('connector' = 'kafka') AS SELECT 1", "kafka"),
    (
        "EXECUTE STATEMENT SET BEGIN INSERT INTO customers SELECT 1, 'a'; "
        "INSERT OVERWRITE DIRECTORY '/tmp/out' SELECT 1; END",
        "INSERT OVERWRITE DIRECTORY",
    ),
    (
        "EXECUTE STATEMENT SET BEGIN INSERT INTO customers SELECT * FROM text.`/etc/x`; END",
        "text.`/etc/x`",
    ),
]


@pytest.mark.parametrize(("sql", "fragment"), HOSTILE)
def test_hostile_statement_is_forbidden(sql: str, fragment: str) -> None:
    catalog = sample_catalog()
    with pytest.raises(ForbiddenSql) as caught:
        plan(sql, catalog)
    assert caught.value.code == "FORBIDDEN_SQL"
    assert fragment.lower() in caught.value.message.lower()
    assert caught.value.message.endswith(".")


def test_the_corpus_is_large() -> None:
    assert len(HOSTILE) >= 40


def test_guard_runs_before_anything_is_resolved() -> None:
    catalog = sample_catalog()
    with pytest.raises(ForbiddenSql):
        plan("SELECT * FROM orders JOIN parquet.`/x` ON true, missing_table", catalog)
    assert catalog.lookups == []


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE TABLE t AS SELECT * FROM orders JOIN parquet.`/x` ON true, missing_table",
        "CREATE TABLE IF NOT EXISTS orders AS SELECT reflect('a', 'b') FROM missing_table",
        "INSERT INTO orders SELECT * FROM parquet.`/x`, missing_table",
        "EXECUTE STATEMENT SET BEGIN INSERT INTO orders SELECT * FROM orders; "
        "INSERT INTO customers SELECT * FROM csv.`/x`; END",
    ],
)
def test_guard_runs_before_writes_resolve(sql: str) -> None:
    catalog = sample_catalog()
    with pytest.raises(ForbiddenSql):
        plan(sql, catalog)
    assert catalog.lookups == []


def test_file_path_message_is_the_documented_sentence() -> None:
    with pytest.raises(ForbiddenSql) as caught:
        plan("SELECT * FROM parquet.`/x`")
    assert caught.value.message == (
        "Reading files by path (parquet.`/x`) is not allowed: every table must come from "
        "the catalog."
    )


BENIGN: list[str] = [
    "SELECT reflect FROM orders AS t(reflect, a, b, c, d, e)",
    "SELECT t.reflect FROM (SELECT 1 AS reflect) t",
    "SELECT id AS java_method FROM orders",
    "SELECT '/etc/passwd' AS p, 'parquet.`/x`' AS q, \"reflect('a')\" AS r FROM orders",
    "SELECT * FROM orders -- reflect('a', 'b') and parquet.`/x`",
    "SELECT /* spark_catalog.default.t */ 1",
    "SELECT * FROM global_temp_x",
    "SELECT * FROM spark_catalog_copy",
    "SELECT * FROM csv_files.data",
    "SELECT * FROM parquet",
    "SELECT 'EXECUTE IMMEDIATE' AS s",
    "SELECT id FROM orders WHERE id IN (SELECT id FROM customers)",
    "SELECT transform(array(1, 2), x -> x + 1)",
    "SELECT * FROM range(10)",
    "SELECT o.id FROM orders o JOIN customers c USING (id)",
    "SET spark.sql.shuffle.partitions = 8",
    "CREATE TABLE reflect (id INT)",
    "CREATE TABLE t (id INT) USING csv LOCATION '/srv/tessera/external/t'",
    "CREATE TABLE t (id INT) USING parquet LOCATION 'file:///srv/tessera/external/t'",
    "CREATE TABLE t (`table` INT, `select` STRING)",
    "SELECT spark_catalog FROM (SELECT 1 AS spark_catalog)",
]


@pytest.mark.parametrize("sql", BENIGN)
def test_benign_look_alike_passes(sql: str) -> None:
    catalog = sample_catalog()
    catalog.add_table("c.d.global_temp_x")
    catalog.add_table("c.d.spark_catalog_copy")
    catalog.add_table("c.d.parquet")
    catalog.add_table("c.csv_files.data")
    assert isinstance(plan(sql, catalog), Plan)


def test_external_path_is_normalised() -> None:
    result = plan("CREATE TABLE t (id INT) USING csv LOCATION 'file:///srv/tessera/external/a/b/'")
    assert result.args["options"]["path"] == f"{STORAGE_ROOT}/a/b"


def test_stored_table_outside_the_roots_is_refused_when_read() -> None:
    catalog = sample_catalog()
    catalog.add_table("c.d.sneaky", options={"connector": "text", "path": "/etc"})
    with pytest.raises(ForbiddenSql, match="outside the storage roots"):
        plan("SELECT * FROM sneaky", catalog)


def test_stored_computed_column_cannot_call_reflect() -> None:
    from core.schema import ComputedColumn

    catalog = sample_catalog()
    catalog.add_table(
        "c.d.sneaky", ["id INT", ComputedColumn("x", "reflect('java.lang.System', 'exit', 0)")]
    )
    with pytest.raises(ForbiddenSql, match=r"reflect\(\)"):
        plan("SELECT * FROM sneaky", catalog)


def test_stored_python_function_outside_the_allowlist_is_refused() -> None:
    catalog = sample_catalog()
    catalog.add_python_function("c.d.evil", "subprocess.run")
    with pytest.raises(ForbiddenSql, match="allowlisted packages"):
        plan("SELECT evil('ls')", catalog)


def test_view_query_is_guarded_too() -> None:
    catalog = sample_catalog()
    catalog.add_view("c.d.bad", "SELECT * FROM text.`/etc/passwd`")
    with pytest.raises(ForbiddenSql, match="Reading files by path"):
        plan("SELECT * FROM bad", catalog)


def test_forbidden_errors_are_core_errors() -> None:
    with pytest.raises(CoreError) as caught:
        plan("ADD JAR '/x.jar'")
    assert caught.value.code == "FORBIDDEN_SQL"
