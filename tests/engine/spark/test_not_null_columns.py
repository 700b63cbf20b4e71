"""A NOT NULL column of an upload, as Spark reads it from parquet (always nullable), made NOT
NULL again by ``engine.registration.not_null_expression``: for every type Spark knows the
result is never NULL, the type is unchanged, the values are, and a NULL raises."""

from __future__ import annotations

import pytest

from engine.registration import not_null_expression

pytestmark = pytest.mark.spark

TYPES = [
    ("BOOLEAN", "true"),
    ("TINYINT", "CAST(7 AS TINYINT)"),
    ("SMALLINT", "CAST(7 AS SMALLINT)"),
    ("INT", "7"),
    ("BIGINT", "7L"),
    ("FLOAT", "CAST(1.5 AS FLOAT)"),
    ("DOUBLE", "1.5D"),
    ("DECIMAL(10, 2)", "CAST(12.34 AS DECIMAL(10, 2))"),
    ("DECIMAL(2, 2)", "CAST(0.5 AS DECIMAL(2, 2))"),
    ("DECIMAL(38, 0)", "CAST(5 AS DECIMAL(38, 0))"),
    ("STRING", "'x'"),
    ("BINARY", "X'00FF'"),
    ("DATE", "DATE'1899-12-31'"),
    ("TIMESTAMP", "TIMESTAMP'2040-01-01 00:00:00Z'"),
    ("TIMESTAMP_NTZ", "TIMESTAMP_NTZ'2040-01-01 10:00:00'"),
    ("ARRAY<STRING>", "array('a', NULL)"),
    ("MAP<STRING, INT>", "map('a', 1)"),
]


@pytest.mark.parametrize(("type_text", "value"), TYPES, ids=[t for t, _ in TYPES])
def test_a_not_null_column_of_any_type_is_never_null_to_spark(plain_spark, type_text, value):
    frame = plain_spark.sql(
        f"SELECT CAST(v AS {type_text}) AS `c c` FROM VALUES ({value}), (NULL) AS t(v)"
    )
    field = frame.schema.fields[0]
    assert field.nullable
    expression = not_null_expression("c c", field.dataType)
    assert expression is not None
    kept = frame.where("`c c` IS NOT NULL").selectExpr(expression)
    assert kept.schema.fields[0].nullable is False
    assert kept.schema.fields[0].dataType == field.dataType
    assert kept.collect() == frame.where("`c c` IS NOT NULL").collect()
    with pytest.raises(Exception, match="NULL in column c c, declared NOT NULL"):
        frame.selectExpr(expression).collect()


def test_a_struct_stays_nullable(plain_spark):
    frame = plain_spark.sql("SELECT named_struct('x', 1) AS s")
    assert not_null_expression("s", frame.schema.fields[0].dataType) is None
