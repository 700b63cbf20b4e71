"""A result says what Spark's analysed plan says about NULL (issue 35, item 1): the columns
of ``Job.result`` and of the result pages (``nullable``, and the nested NOT NULL inside
``data_type``), and the Arrow schema of ``result.arrow`` at every depth, on both ways a
result is written (collected with ``toArrow``; spilled by ``engine.large_results``). Plain
PySpark in the same run is the oracle."""

from __future__ import annotations

from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pytest
from pyspark.sql import types as st
from pyspark.sql.pandas.types import to_arrow_schema

from core import datatypes as dt
from tests.conftest import API
from tests.results.worker.test_result_arrow import SMALL_LIMIT, arrow, run

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker"),
]

# PySpark's own toArrow() can convert this one.
NESTED_SQL = """
SELECT id,
       CAST(NULL AS BIGINT) AS maybe,
       named_struct('x', id, 'y', CAST(NULL AS STRING)) AS s,
       array(id, id + 1) AS a,
       array(id, NULL) AS an,
       map('k', id) AS m,
       map('k', CAST(NULL AS BIGINT)) AS mn,
       array(named_struct('z', id)) AS az
FROM range(0, 3) ORDER BY id
"""

# A NOT NULL field inside a nullable struct, NULL on some rows: PySpark's toArrow() raises.
NULL_STRUCT_SQL = """
SELECT id,
       IF(id % 2 = 0, NULL, named_struct('x', id, 'l', array(id), 'm', map('k', id))) AS ns,
       array(IF(id = 1, NULL, named_struct('z', id))) AS items
FROM range(0, 4) ORDER BY id
"""


def _same(ours: dt.DataType, theirs: st.DataType) -> bool:
    """Whether Tessera's type (parsed from ``data_type``) is Spark's, nested nullability
    included (the top level's is ``nullable``, compared apart)."""
    if isinstance(theirs, st.StructType):
        return (
            isinstance(ours, dt.StructType)
            and [f.name for f in ours.fields] == theirs.names
            and all(
                f.data_type.nullable == g.nullable and _same(f.data_type, g.dataType)
                for f, g in zip(ours.fields, theirs.fields, strict=True)
            )
        )
    if isinstance(theirs, st.ArrayType):
        return (
            isinstance(ours, dt.ArrayType)
            and ours.element.nullable == theirs.containsNull
            and _same(ours.element, theirs.elementType)
        )
    if isinstance(theirs, st.MapType):
        return (
            isinstance(ours, dt.MapType)
            and ours.value.nullable == theirs.valueContainsNull
            and _same(ours.key, theirs.keyType)
            and _same(ours.value, theirs.valueType)
        )
    return ours.type_sql().replace(" ", "").lower() == theirs.simpleString().lower()


def _assert_columns_as_spark(columns: list[dict[str, Any]], schema: st.StructType) -> None:
    assert [c["name"] for c in columns] == schema.names
    for column, field in zip(columns, schema.fields, strict=True):
        assert column["nullable"] is field.nullable, (column, field)
        assert _same(dt.parse_data_type(column["data_type"]), field.dataType), (column, field)


def _page_columns(alice_sql: Any, job: dict[str, Any]) -> list[dict[str, Any]]:
    response = alice_sql.api.get(f"{API}/jobs/{job['id']}/result?page_size=10")
    assert response.status_code == 200, response.content
    return list(response.json()["columns"])


@pytest.mark.parametrize("row_limit", [None, SMALL_LIMIT + 1], ids=["to_arrow", "large"])
def test_nested_nullability_is_what_pyspark_says(alice_sql, plain_spark, row_limit):
    job = run(alice_sql, NESTED_SQL, row_limit)
    frame = plain_spark.sql(NESTED_SQL)
    by_name = {c["name"]: c for c in job["result"]["columns"]}
    assert by_name["id"] == {"name": "id", "data_type": "BIGINT", "nullable": False}
    assert by_name["maybe"]["nullable"] is True
    assert by_name["s"]["data_type"] == "STRUCT<x: BIGINT NOT NULL, y: STRING>"
    assert by_name["a"]["data_type"] == "ARRAY<BIGINT NOT NULL>"
    assert by_name["an"]["data_type"] == "ARRAY<BIGINT>"
    assert by_name["m"]["data_type"] == "MAP<STRING NOT NULL, BIGINT NOT NULL>"
    assert by_name["mn"]["data_type"] == "MAP<STRING NOT NULL, BIGINT>"
    _assert_columns_as_spark(job["result"]["columns"], frame.schema)
    _assert_columns_as_spark(_page_columns(alice_sql, job), frame.schema)
    table, _, _ = arrow(alice_sql, job)
    expected = frame.toArrow()
    assert table.schema == expected.schema, (table.schema, expected.schema)
    assert not table.schema.field("id").nullable and not table.schema.field("s").nullable
    assert not table.schema.field("s").type.field("x").nullable
    assert not table.schema.field("a").type.value_field.nullable
    assert not table.schema.field("m").type.item_field.nullable
    assert table.equals(expected)


@pytest.mark.parametrize("row_limit", [None, SMALL_LIMIT + 1], ids=["to_arrow", "large"])
def test_a_not_null_field_in_a_nullable_struct_keeps_its_not_null(
    alice_sql, plain_spark, row_limit
):
    frame = plain_spark.sql(NULL_STRUCT_SQL)
    with pytest.raises(pa.ArrowInvalid):
        frame.toArrow()  # PySpark itself fails; its schema is still the oracle
    job = run(alice_sql, NULL_STRUCT_SQL, row_limit)
    by_name = {c["name"]: c for c in job["result"]["columns"]}
    assert by_name["ns"]["nullable"] is True
    assert by_name["ns"]["data_type"] == (
        "STRUCT<x: BIGINT NOT NULL, l: ARRAY<BIGINT NOT NULL> NOT NULL, "
        "m: MAP<STRING NOT NULL, BIGINT NOT NULL> NOT NULL>"
    )
    _assert_columns_as_spark(job["result"]["columns"], frame.schema)
    table, _, _ = arrow(alice_sql, job)
    assert table.schema == to_arrow_schema(frame.schema, timezone="UTC")
    table.validate(full=True)
    wanted = [r.asDict(recursive=True) for r in frame.collect()]
    got = table.to_pylist()
    for row in got:  # Arrow gives a map as pairs, PySpark as a dict
        if row["ns"] is not None:
            row["ns"]["m"] = dict(row["ns"]["m"])
    assert got == wanted
    page = alice_sql.api.get(f"{API}/jobs/{job['id']}/result?page_size=10").json()
    assert [row[1] for row in page["rows"]][:2] == [None, {"x": 1, "l": [1], "m": {"k": 1}}]
