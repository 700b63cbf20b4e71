from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.datatypes import AtomicType, parse_data_type
from core.errors import DataTypeError, PropertiesError
from core.properties import RESERVED_PREFIXES, decode_table, encode_table
from core.schema import (
    ComputedColumn,
    MetadataColumn,
    PhysicalColumn,
    PrimaryKey,
    Schema,
    WatermarkSpec,
)

from .strategies import option_maps, schemas

INT = AtomicType("INT")
STRING = AtomicType("STRING")

SCHEMA = Schema(
    columns=(
        PhysicalColumn("id", parse_data_type("BIGINT NOT NULL"), "the key"),
        PhysicalColumn("ts", AtomicType("TIMESTAMP")),
        ComputedColumn("day", "CAST(ts AS DATE)"),
        MetadataColumn("path", STRING, "file_path", virtual=True),
        MetadataColumn("file_size", AtomicType("BIGINT")),
    ),
    watermarks=(WatermarkSpec("ts", "ts - INTERVAL '5' SECOND"),),
    primary_key=PrimaryKey("pk", ("id", "ts")),
)

PROPERTIES = {
    "schema.0.name": "id",
    "schema.0.data-type": "BIGINT NOT NULL",
    "schema.0.comment": "the key",
    "schema.1.name": "ts",
    "schema.1.data-type": "TIMESTAMP",
    "schema.2.name": "day",
    "schema.2.expr": "CAST(ts AS DATE)",
    "schema.3.name": "path",
    "schema.3.data-type": "STRING",
    "schema.3.metadata": "file_path",
    "schema.3.virtual": "true",
    "schema.4.name": "file_size",
    "schema.4.data-type": "BIGINT",
    "schema.4.virtual": "false",
    "schema.watermark.0.rowtime": "ts",
    "schema.watermark.0.strategy.expr": "ts - INTERVAL '5' SECOND",
    "schema.primary-key.name": "pk",
    "schema.primary-key.columns": "id,ts",
    "partition.keys.0.name": "day",
    "connector": "parquet",
    "path": "/data/x",
}


def test_encode_table() -> None:
    encoded = encode_table(SCHEMA, {"connector": "parquet", "path": "/data/x"}, ["day"])
    assert encoded == PROPERTIES


def test_encode_defaults() -> None:
    assert encode_table(Schema()) == {}
    assert encode_table(Schema((PhysicalColumn("a", INT),))) == {
        "schema.0.name": "a",
        "schema.0.data-type": "INT",
    }


def test_encode_primary_key_without_name() -> None:
    encoded = encode_table(
        Schema((PhysicalColumn("a", INT),), primary_key=PrimaryKey(None, ("a",)))
    )
    assert "schema.primary-key.name" not in encoded
    assert encoded["schema.primary-key.columns"] == "a"


def test_encode_quotes_awkward_primary_key_names() -> None:
    names = ("plain", "a,b", "tick`s", " lead", "trail ", "in side", "tab.1")
    schema = Schema(
        tuple(PhysicalColumn(n, INT) for n in names), primary_key=PrimaryKey(None, names)
    )
    encoded = encode_table(schema)
    assert encoded["schema.primary-key.columns"] == (
        "plain,`a,b`,`tick``s`,` lead`,`trail `,in side,tab.1"
    )
    assert decode_table(encoded)[0] == schema


def test_decode_table() -> None:
    assert decode_table(PROPERTIES) == (
        SCHEMA,
        {"connector": "parquet", "path": "/data/x"},
        ["day"],
    )


def test_decode_is_lenient_about_spacing_in_primary_key_list() -> None:
    properties = {
        "schema.0.name": "a",
        "schema.0.data-type": "int",
        "schema.1.name": "b c",
        "schema.1.data-type": "int",
        "schema.primary-key.columns": " a ,  `b c` ",
    }
    schema, options, partitions = decode_table(properties)
    assert schema.primary_key == PrimaryKey(None, ("a", "b c"))
    assert schema.columns[0] == PhysicalColumn("a", INT)
    assert options == {} and partitions == []


def test_decode_metadata_rule() -> None:
    base = {"schema.0.name": "m", "schema.0.data-type": "STRING"}
    only_key = decode_table({**base, "schema.0.metadata": "file_name"})[0].columns[0]
    assert only_key == MetadataColumn("m", STRING, "file_name", virtual=False)
    only_virtual = decode_table({**base, "schema.0.virtual": "true"})[0].columns[0]
    assert only_virtual == MetadataColumn("m", STRING, None, virtual=True)
    assert decode_table(base)[0].columns[0] == PhysicalColumn("m", STRING)


def test_encode_rejects_reserved_option_keys() -> None:
    for prefix in RESERVED_PREFIXES:
        key = prefix + "0.name"
        with pytest.raises(PropertiesError) as info:
            encode_table(Schema(), {key: "x"})
        assert info.value.message == f"Option key '{key}' uses the reserved prefix '{prefix}'."
        assert info.value.details == {"key": key}
        assert info.value.code == "VALIDATION_ERROR"


def test_encode_rejects_non_string_options() -> None:
    with pytest.raises(PropertiesError, match="string value"):
        encode_table(Schema(), {"a": 1})  # type: ignore[dict-item]


def test_options_that_only_look_reserved_are_kept() -> None:
    options = {"schema": "x", "schemas.a": "y", "partition.keys": "z", "partition.other": "w"}
    assert decode_table(encode_table(Schema(), options)) == (Schema(), options, [])


def decode_error(properties: dict[str, str]) -> PropertiesError:
    with pytest.raises(PropertiesError) as info:
        decode_table(properties)
    return info.value


@pytest.mark.parametrize(
    ("properties", "message", "key"),
    [
        (
            {"schema.x.name": "a"},
            "Property key 'schema.x.name' has an invalid index 'x'; indices are non-negative "
            "integers without leading zeros.",
            "schema.x.name",
        ),
        (
            {"schema.01.name": "a"},
            "Property key 'schema.01.name' has an invalid index '01'; indices are non-negative "
            "integers without leading zeros.",
            "schema.01.name",
        ),
        (
            {"schema.-1.name": "a"},
            "Property key 'schema.-1.name' has an invalid index '-1'; indices are non-negative "
            "integers without leading zeros.",
            "schema.-1.name",
        ),
        (
            {
                "schema.0.name": "a",
                "schema.0.data-type": "INT",
                "schema.2.name": "c",
                "schema.2.data-type": "INT",
            },
            "Property key 'schema.2.data-type' skips index 1; indices must be contiguous from 0.",
            "schema.2.data-type",
        ),
        (
            {"schema.1.name": "a", "schema.1.data-type": "INT"},
            "Property key 'schema.1.data-type' skips index 0; indices must be contiguous from 0.",
            "schema.1.data-type",
        ),
        (
            {"schema.watermark.1.rowtime": "ts", "schema.watermark.1.strategy.expr": "ts"},
            "Property key 'schema.watermark.1.rowtime' skips index 0; indices must be contiguous "
            "from 0.",
            "schema.watermark.1.rowtime",
        ),
        (
            {"partition.keys.1.name": "a"},
            "Property key 'partition.keys.1.name' skips index 0; "
            "indices must be contiguous from 0.",
            "partition.keys.1.name",
        ),
        ({"schema.0.data-type": "INT"}, "Property 'schema.0.name' is missing.", "schema.0.name"),
        (
            {"schema.0.name": "a"},
            "Column `a` needs 'schema.0.data-type' or 'schema.0.expr'.",
            "schema.0.data-type",
        ),
        (
            {"schema.0.name": "a", "schema.0.expr": "1", "schema.0.virtual": "true"},
            "Computed column `a` must not have 'schema.0.virtual'.",
            "schema.0.virtual",
        ),
        (
            {"schema.0.name": "a", "schema.0.expr": "1", "schema.0.metadata": "file_path"},
            "Computed column `a` must not have 'schema.0.metadata'.",
            "schema.0.metadata",
        ),
        (
            {"schema.0.name": "a", "schema.0.data-type": "INT", "schema.0.nullable": "true"},
            "Unknown property key 'schema.0.nullable'.",
            "schema.0.nullable",
        ),
        ({"schema.name": "a"}, "Unknown property key 'schema.name'.", "schema.name"),
        (
            {"schema.watermark.0.delay": "5"},
            "Unknown property key 'schema.watermark.0.delay'.",
            "schema.watermark.0.delay",
        ),
        (
            {"schema.primary-key.foo": "a"},
            "Unknown property key 'schema.primary-key.foo'.",
            "schema.primary-key.foo",
        ),
        (
            {"partition.keys.0.type": "a"},
            "Unknown property key 'partition.keys.0.type'.",
            "partition.keys.0.type",
        ),
        ({"partition.keys.0": "a"}, "Unknown property key 'partition.keys.0'.", "partition.keys.0"),
        (
            {"schema.0.name": "a", "schema.0.data-type": "INT", "schema.0.virtual": "yes"},
            "Property 'schema.0.virtual' must be 'true' or 'false', got 'yes'.",
            "schema.0.virtual",
        ),
        (
            {"schema.0.name": "a", "schema.0.data-type": "INT", "schema.0.virtual": "True"},
            "Property 'schema.0.virtual' must be 'true' or 'false', got 'True'.",
            "schema.0.virtual",
        ),
        (
            {"schema.watermark.0.rowtime": "ts"},
            "Property 'schema.watermark.0.strategy.expr' is missing.",
            "schema.watermark.0.strategy.expr",
        ),
        (
            {"schema.watermark.0.strategy.expr": "ts"},
            "Property 'schema.watermark.0.rowtime' is missing.",
            "schema.watermark.0.rowtime",
        ),
        (
            {"schema.primary-key.name": "pk"},
            "Property 'schema.primary-key.columns' is missing.",
            "schema.primary-key.columns",
        ),
    ],
)
def test_decode_errors(properties: dict[str, str], message: str, key: str) -> None:
    error = decode_error(properties)
    assert error.message == message
    assert error.details["key"] == key


@pytest.mark.parametrize(
    ("columns", "message", "position"),
    [
        ("a,,b", "Empty column name at position 2 in primary key column list 'a,,b'.", 2),
        ("a,", "Empty column name at position 2 in primary key column list 'a,'.", 2),
        (",a", "Empty column name at position 0 in primary key column list ',a'.", 0),
        ("`a", "Unclosed backtick at position 0 in primary key column list '`a'.", 0),
        ("a`b", "Unexpected backtick at position 1 in primary key column list 'a`b'.", 1),
        (
            "`a`x",
            "Expected ',' after a quoted column name at position 3 in primary key column "
            "list '`a`x'.",
            3,
        ),
    ],
)
def test_decode_malformed_primary_key_columns(columns: str, message: str, position: int) -> None:
    error = decode_error({"schema.primary-key.columns": columns})
    assert error.message == message
    assert error.details == {
        "key": "schema.primary-key.columns",
        "text": columns,
        "position": position,
    }


def test_decode_bad_data_type() -> None:
    with pytest.raises(DataTypeError) as info:
        decode_table({"schema.0.name": "a", "schema.0.data-type": "ARRAY<INT"})
    assert info.value.message == "Expected '>' at position 9 in 'ARRAY<INT'."
    assert info.value.details == {"text": "ARRAY<INT", "position": 9, "key": "schema.0.data-type"}


def test_decode_rejects_non_string_values() -> None:
    with pytest.raises(PropertiesError, match="string value"):
        decode_table({"connector": 1})  # type: ignore[dict-item]


@pytest.mark.parametrize(
    "names",
    [
        ["a,b", "c"],
        ["`", "``"],
        [" x ", "y"],
        ["tab.1", "with space", "a`b,c"],
        ["ünï", "表"],
    ],
)
def test_round_trip_examples(names: list[str]) -> None:
    schema = Schema(
        tuple(PhysicalColumn(n, INT, comment=n) for n in names),
        watermarks=(WatermarkSpec(names[0], "x"),),
        primary_key=PrimaryKey(names[-1], tuple(names)),
    )
    assert decode_table(encode_table(schema, {"k": "v"}, names)) == (schema, {"k": "v"}, names)


@settings(max_examples=200, deadline=None)
@given(
    schema=schemas(),
    options=option_maps,
    partition_by=st.lists(st.text(max_size=10), max_size=3),
)
def test_decode_inverts_encode(
    schema: Schema, options: dict[str, str], partition_by: list[str]
) -> None:
    assert decode_table(encode_table(schema, options, partition_by)) == (
        schema,
        options,
        partition_by,
    )


def test_flink_computed_column_with_its_resolved_type_decodes_to_the_expression() -> None:
    # Flink persists a computed column's type beside its expression; the type is dropped
    # because our resolver types expressions itself.
    schema, options, partitions = decode_table(
        {
            "schema.0.name": "price",
            "schema.0.data-type": "DECIMAL(10, 2)",
            "schema.1.name": "doubled",
            "schema.1.data-type": "DECIMAL(11, 2)",
            "schema.1.expr": "price * 2",
            "connector": "parquet",
        }
    )
    assert schema.columns[1] == ComputedColumn("doubled", "price * 2")
    assert options == {"connector": "parquet"}
    assert partitions == []


def test_a_computed_column_type_beside_the_expression_must_still_parse() -> None:
    with pytest.raises(DataTypeError) as caught:
        decode_table({"schema.0.name": "a", "schema.0.data-type": "INTEGR", "schema.0.expr": "1"})
    assert caught.value.message == "Unknown data type 'INTEGR' at position 0 in 'INTEGR'."
    assert caught.value.details["key"] == "schema.0.data-type"
