"""core.schema_diff: what changed between two declared schemas (a table's History tab)."""

from __future__ import annotations

from typing import Any

import pytest

from core.schema_diff import schema_diff


def col(name: str, data_type: str = "BIGINT", **extra: Any) -> dict[str, Any]:
    return {"name": name, "kind": "physical", "data_type": data_type, **extra}


def schema(*columns: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"columns": list(columns), "watermarks": [], "primary_key": None, **extra}


def test_added_dropped_and_retyped_columns_in_column_order() -> None:
    before = schema(col("id"), col("qty", "INT"), col("old", "STRING"))
    after = schema(col("id"), col("qty", "BIGINT"), col("note", "STRING"))
    assert schema_diff(before, after) == [
        {"change": "type", "column": "qty", "before": "INT", "after": "BIGINT"},
        {"change": "added", "column": "note", "before": None, "after": "STRING"},
        {"change": "dropped", "column": "old", "before": "STRING", "after": None},
    ]


def test_the_same_schema_is_no_change_and_names_compare_without_case() -> None:
    same = schema(col("id"), col("Qty", "INT"))
    assert schema_diff(same, same) == []
    assert schema_diff(same, schema(col("ID"), col("qty", "INT"))) == []


def test_comments_order_key_and_watermarks() -> None:
    before = schema(col("a"), col("b"), col("ts", "TIMESTAMP"))
    after = schema(
        col("b"),
        col("a", comment="the key"),
        col("ts", "TIMESTAMP"),
        primary_key={"name": "pk", "columns": ["a"]},
        watermarks=[{"column": "ts", "expression": "ts - INTERVAL '5' SECOND"}],
    )
    changes = {c["change"]: c for c in schema_diff(before, after)}
    assert changes["comment"] == {
        "change": "comment",
        "column": "a",
        "before": None,
        "after": "the key",
    }
    assert changes["moved"]["before"] == ["a", "b", "ts"]
    assert changes["moved"]["after"] == ["b", "a", "ts"]
    assert changes["primary_key"]["before"] is None
    assert changes["primary_key"]["after"] == ["a"]
    assert changes["watermarks"]["after"] == ["ts AS ts - INTERVAL '5' SECOND"]


def test_computed_and_metadata_columns_are_told_by_their_definition() -> None:
    before = schema(col("a"), {"name": "b", "kind": "computed", "expression": "a + 1"})
    after = schema(
        col("a"),
        {"name": "b", "kind": "computed", "expression": "a + 2"},
        {"name": "k", "kind": "metadata", "data_type": "STRING", "metadata_key": "key"},
    )
    assert schema_diff(before, after) == [
        {"change": "type", "column": "b", "before": "AS (a + 1)", "after": "AS (a + 2)"},
        {
            "change": "added",
            "column": "k",
            "before": None,
            "after": "STRING METADATA FROM 'key'",
        },
    ]


@pytest.mark.parametrize(
    "junk", [None, "schema", 42, [], {"columns": "id"}, {"columns": [None, {"name": 3}]}]
)
def test_a_malformed_side_counts_as_empty(junk: Any) -> None:
    after = schema(col("id"))
    assert schema_diff(junk, after) == [
        {"change": "added", "column": "id", "before": None, "after": "BIGINT"}
    ]
    assert schema_diff(after, junk) == [
        {"change": "dropped", "column": "id", "before": "BIGINT", "after": None}
    ]
    assert schema_diff(junk, junk) == []
