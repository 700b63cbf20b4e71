from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given, settings

from core.datatypes import AtomicType, DataType, parse_data_type
from core.errors import DataTypeError, SchemaError
from core.schema import (
    METADATA_KEYS,
    ComputedColumn,
    MetadataColumn,
    PhysicalColumn,
    PrimaryKey,
    ResolvedColumn,
    ResolvedPrimaryKey,
    ResolvedSchema,
    ResolvedWatermark,
    Schema,
    SchemaResolver,
    WatermarkSpec,
)

from .strategies import schemas

INT = AtomicType("INT")
BIGINT = AtomicType("BIGINT")
STRING = AtomicType("STRING")
TIMESTAMP = AtomicType("TIMESTAMP")


def t(text: str) -> DataType:
    return parse_data_type(text)


class FakeTyper:
    """Types expressions by looking their text up in a table; records every call."""

    def __init__(self, types: Mapping[str, DataType]) -> None:
        self.types = dict(types)
        self.calls: list[tuple[list[str], dict[str, str]]] = []

    def type_expressions(
        self, columns: Sequence[ResolvedColumn], expressions: Mapping[str, str]
    ) -> Mapping[str, DataType]:
        self.calls.append(([c.name for c in columns], dict(expressions)))
        return {name: self.types[e] for name, e in expressions.items() if e in self.types}


def resolve_error(schema: Schema, typer: FakeTyper | None = None) -> SchemaError:
    with pytest.raises(SchemaError) as info:
        SchemaResolver(typer).resolve(schema)
    return info.value


def from_dict_error(data: Any) -> SchemaError:
    with pytest.raises(SchemaError) as info:
        Schema.from_dict(data)
    return info.value


# --- JSON form ---------------------------------------------------------------------------

FULL_SCHEMA = Schema(
    columns=(
        PhysicalColumn("id", t("BIGINT NOT NULL"), "the key"),
        PhysicalColumn("ts", TIMESTAMP),
        ComputedColumn("day", "CAST(ts AS DATE)"),
        MetadataColumn("path", STRING, "file_path", virtual=True),
        MetadataColumn("file_size", BIGINT),
    ),
    watermarks=(WatermarkSpec("ts", "ts - INTERVAL '5' SECOND"),),
    primary_key=PrimaryKey(None, ("id",)),
)

FULL_JSON = {
    "columns": [
        {"name": "id", "kind": "physical", "data_type": "BIGINT NOT NULL", "comment": "the key"},
        {"name": "ts", "kind": "physical", "data_type": "TIMESTAMP"},
        {"name": "day", "kind": "computed", "expression": "CAST(ts AS DATE)"},
        {
            "name": "path",
            "kind": "metadata",
            "data_type": "STRING",
            "metadata_key": "file_path",
            "virtual": True,
        },
        {
            "name": "file_size",
            "kind": "metadata",
            "data_type": "BIGINT",
            "metadata_key": None,
            "virtual": False,
        },
    ],
    "watermarks": [{"column": "ts", "expression": "ts - INTERVAL '5' SECOND"}],
    "primary_key": {"name": None, "columns": ["id"]},
}


def test_schema_to_dict() -> None:
    assert FULL_SCHEMA.to_dict() == FULL_JSON
    assert Schema().to_dict() == {"columns": [], "watermarks": [], "primary_key": None}


def test_schema_from_dict() -> None:
    assert Schema.from_dict(FULL_JSON) == FULL_SCHEMA
    assert Schema.from_dict(json.loads(json.dumps(FULL_JSON))) == FULL_SCHEMA


def test_schema_from_dict_defaults() -> None:
    schema = Schema.from_dict(
        {
            "columns": [
                {"name": "a", "data_type": "int"},
                {"name": "file_name", "kind": "metadata", "data_type": "string"},
                {"name": "c", "kind": "computed", "expression": "a + 1", "comment": None},
            ]
        }
    )
    assert schema == Schema(
        (
            PhysicalColumn("a", INT),
            MetadataColumn("file_name", STRING, None, False),
            ComputedColumn("c", "a + 1"),
        )
    )
    assert schema.watermarks == () and schema.primary_key is None
    assert Schema.from_dict({"columns": [], "watermarks": None, "primary_key": None}) == Schema()
    named = Schema.from_dict({"columns": [], "primary_key": {"name": "pk", "columns": ["a"]}})
    assert named.primary_key == PrimaryKey("pk", ("a",))
    assert Schema.from_dict({"columns": [], "primary_key": {"columns": []}}).primary_key == (
        PrimaryKey(None, ())
    )


@pytest.mark.parametrize(
    ("data", "message", "field"),
    [
        ([], "A schema must be a JSON object.", None),
        ({}, "Field 'columns' is required.", "columns"),
        ({"columns": {}}, "Field 'columns' must be a list.", "columns"),
        ({"columns": ["a"]}, "Field 'columns[0]' must be a JSON object.", "columns[0]"),
        (
            {"columns": [{"data_type": "INT"}]},
            "Field 'columns[0].name' is required.",
            "columns[0].name",
        ),
        (
            {"columns": [{"name": 1, "data_type": "INT"}]},
            "Field 'columns[0].name' must be a string.",
            "columns[0].name",
        ),
        (
            {"columns": [{"name": "a", "data_type": "INT"}, {"name": "c", "kind": "computed"}]},
            "Field 'columns[1].expression' is required.",
            "columns[1].expression",
        ),
        (
            {"columns": [{"name": "c", "kind": "computed", "expression": 3}]},
            "Field 'columns[0].expression' must be a string.",
            "columns[0].expression",
        ),
        (
            {"columns": [{"name": "a"}]},
            "Field 'columns[0].data_type' is required.",
            "columns[0].data_type",
        ),
        (
            {"columns": [{"name": "a", "kind": "metadata"}]},
            "Field 'columns[0].data_type' is required.",
            "columns[0].data_type",
        ),
        (
            {"columns": [{"name": "a", "data_type": ["INT"]}]},
            "Field 'columns[0].data_type' must be a string.",
            "columns[0].data_type",
        ),
        (
            {"columns": [{"name": "a", "kind": "virtual", "data_type": "INT"}]},
            "Unknown column kind 'virtual' for column `a`, "
            "expected physical, computed or metadata.",
            "columns[0].kind",
        ),
        (
            {"columns": [{"name": "a", "kind": 1, "data_type": "INT"}]},
            "Unknown column kind 1 for column `a`, expected physical, computed or metadata.",
            "columns[0].kind",
        ),
        (
            {"columns": [{"name": "a", "data_type": "INT", "comment": 5}]},
            "Field 'columns[0].comment' must be a string or null.",
            "columns[0].comment",
        ),
        (
            {"columns": [{"name": "a", "kind": "metadata", "data_type": "INT", "virtual": "yes"}]},
            "Field 'columns[0].virtual' must be true or false.",
            "columns[0].virtual",
        ),
        (
            {"columns": [{"name": "a", "kind": "metadata", "data_type": "INT", "metadata_key": 1}]},
            "Field 'columns[0].metadata_key' must be a string or null.",
            "columns[0].metadata_key",
        ),
        ({"columns": [], "watermarks": {}}, "Field 'watermarks' must be a list.", "watermarks"),
        (
            {"columns": [], "watermarks": [1]},
            "Field 'watermarks[0]' must be a JSON object.",
            "watermarks[0]",
        ),
        (
            {"columns": [], "watermarks": [{"column": "ts"}]},
            "Field 'watermarks[0].expression' is required.",
            "watermarks[0].expression",
        ),
        (
            {"columns": [], "watermarks": [{"expression": "ts"}]},
            "Field 'watermarks[0].column' is required.",
            "watermarks[0].column",
        ),
        (
            {"columns": [], "primary_key": []},
            "Field 'primary_key' must be a JSON object.",
            "primary_key",
        ),
        (
            {"columns": [], "primary_key": {"name": "pk"}},
            "Field 'primary_key.columns' is required.",
            "primary_key.columns",
        ),
        (
            {"columns": [], "primary_key": {"columns": "a"}},
            "Field 'primary_key.columns' must be a list.",
            "primary_key.columns",
        ),
        (
            {"columns": [], "primary_key": {"columns": ["a", 2]}},
            "Field 'primary_key.columns[1]' must be a string.",
            "primary_key.columns[1]",
        ),
        (
            {"columns": [], "primary_key": {"name": 2, "columns": ["a"]}},
            "Field 'primary_key.name' must be a string or null.",
            "primary_key.name",
        ),
    ],
)
def test_schema_from_dict_shape_errors(data: Any, message: str, field: str | None) -> None:
    error = from_dict_error(data)
    assert error.message == message
    assert error.details.get("field") == field
    assert error.code == "VALIDATION_ERROR"


def test_schema_from_dict_names_the_column_in_details() -> None:
    error = from_dict_error({"columns": [{"name": "x", "kind": "computed"}]})
    assert error.details == {"field": "columns[0].expression", "column": "x"}


def test_schema_from_dict_bad_data_type() -> None:
    with pytest.raises(DataTypeError) as info:
        Schema.from_dict(
            {"columns": [{"name": "a", "data_type": "INT"}, {"name": "x", "data_type": "INTEGR"}]}
        )
    assert info.value.message == "Unknown data type 'INTEGR' at position 0 in 'INTEGR'."
    assert info.value.details == {
        "text": "INTEGR",
        "position": 0,
        "field": "columns[1].data_type",
        "column": "x",
    }


@settings(max_examples=200, deadline=None)
@given(schemas())
def test_schema_json_round_trip(schema: Schema) -> None:
    assert Schema.from_dict(json.loads(json.dumps(schema.to_dict()))) == schema


# --- resolution --------------------------------------------------------------------------


def test_resolve_physical_and_metadata_columns() -> None:
    resolved = SchemaResolver().resolve(
        Schema(
            (
                PhysicalColumn("Id", INT, "key"),
                MetadataColumn("size", t("BIGINT NOT NULL"), "FILE_SIZE", virtual=True),
                MetadataColumn("file_path", STRING),
            ),
            primary_key=PrimaryKey(None, ("id",)),
        )
    )
    assert resolved == ResolvedSchema(
        (
            ResolvedColumn("Id", "physical", t("INT NOT NULL"), comment="key"),
            ResolvedColumn(
                "size", "metadata", t("BIGINT NOT NULL"), metadata_key="file_size", virtual=True
            ),
            ResolvedColumn(
                "file_path", "metadata", STRING, metadata_key="file_path", virtual=False
            ),
        ),
        primary_key=ResolvedPrimaryKey("PK_Id", ("Id",)),
        expressions_resolved=True,
    )
    assert resolved.column("ID") is resolved.columns[0]
    assert resolved.column("SIZE") is resolved.columns[1]
    assert resolved.column("nope") is None
    assert resolved.columns[0].nullable is False
    assert resolved.columns[2].nullable is True


def test_resolve_empty_schema() -> None:
    assert SchemaResolver().resolve(Schema()) == ResolvedSchema(())


def test_primary_key_name_and_not_null() -> None:
    schema = Schema(
        (PhysicalColumn("a", INT), PhysicalColumn("B", STRING), PhysicalColumn("c", INT)),
        primary_key=PrimaryKey(None, ("b", "a")),
    )
    resolved = SchemaResolver().resolve(schema)
    assert resolved.primary_key == ResolvedPrimaryKey("PK_B_a", ("B", "a"))
    assert [c.nullable for c in resolved.columns] == [False, False, True]
    named = SchemaResolver().resolve(
        Schema(schema.columns, primary_key=PrimaryKey("my_pk", ("a",)))
    )
    assert named.primary_key == ResolvedPrimaryKey("my_pk", ("a",))


def test_metadata_columns_for_every_key() -> None:
    columns = tuple(MetadataColumn(key, data_type) for key, data_type in METADATA_KEYS.items())
    resolved = SchemaResolver().resolve(Schema(columns))
    assert [c.metadata_key for c in resolved.columns] == list(METADATA_KEYS)
    assert METADATA_KEYS["file_modification_time"] == TIMESTAMP
    assert METADATA_KEYS["row_index"] == BIGINT


@pytest.mark.parametrize(
    ("schema", "message", "field", "column"),
    [
        (
            Schema((PhysicalColumn("", INT),)),
            "A column name must not be empty.",
            "columns[0].name",
            "",
        ),
        (
            Schema((PhysicalColumn("a", INT), PhysicalColumn("  ", INT))),
            "A column name must not be only whitespace.",
            "columns[1].name",
            "  ",
        ),
        (
            Schema((PhysicalColumn("a\tb", INT),)),
            "A column name must not contain control characters (found U+0009 at position 1).",
            "columns[0].name",
            "a\tb",
        ),
        (
            Schema((PhysicalColumn("a", INT), PhysicalColumn("A", STRING))),
            "Column `a` is declared twice (as `a` and `A`).",
            "columns[1].name",
            "A",
        ),
        (
            Schema((PhysicalColumn("a", INT), ComputedColumn("A", "1"))),
            "Column `a` is declared twice (as `a` and `A`).",
            "columns[1].name",
            "A",
        ),
        (
            Schema((ComputedColumn("c", "  "),)),
            "Computed column `c` needs a non-empty expression.",
            "columns[0].expression",
            "c",
        ),
        (
            Schema((MetadataColumn("f", STRING, "file_pth"),)),
            "Unknown metadata key 'file_pth' for column `f`. Available keys: file_block_length, "
            "file_block_start, file_modification_time, file_name, file_path, file_size, row_index.",
            "columns[0].metadata_key",
            "f",
        ),
        (
            Schema((MetadataColumn("f", STRING),)),
            "Unknown metadata key 'f' for column `f`. Available keys: file_block_length, "
            "file_block_start, file_modification_time, file_name, file_path, file_size, row_index.",
            "columns[0].name",
            "f",
        ),
        (
            Schema((MetadataColumn("f", INT, "file_size"),)),
            "Metadata column `f` is declared as INT but metadata key 'file_size' provides BIGINT.",
            "columns[0].data_type",
            "f",
        ),
        (
            Schema((MetadataColumn("f", t("INT NOT NULL"), "file_size"),)),
            "Metadata column `f` is declared as INT but metadata key 'file_size' provides BIGINT.",
            "columns[0].data_type",
            "f",
        ),
    ],
)
def test_column_errors(schema: Schema, message: str, field: str, column: str) -> None:
    error = resolve_error(schema)
    assert error.message == message
    assert error.details == {"field": field, "column": column}


COLUMNS = (
    PhysicalColumn("a", INT),
    PhysicalColumn("b", STRING),
    ComputedColumn("c", "a + 1"),
    MetadataColumn("file_path", STRING),
    PhysicalColumn("ts", TIMESTAMP),
    PhysicalColumn("ntz", t("TIMESTAMP_NTZ")),
)


@pytest.mark.parametrize(
    ("primary_key", "message", "field"),
    [
        (PrimaryKey(None, ()), "A primary key needs at least one column.", "primary_key.columns"),
        (
            PrimaryKey(None, ("a", "x")),
            "Primary key column `x` does not exist. "
            "Available columns: a, b, c, file_path, ts, ntz.",
            "primary_key.columns[1]",
        ),
        (
            PrimaryKey(None, ("c",)),
            "Primary key column `c` is a computed column, but only physical columns can be part of "
            "a primary key.",
            "primary_key.columns[0]",
        ),
        (
            PrimaryKey(None, ("file_path",)),
            "Primary key column `file_path` is a metadata column, but only physical columns can be "
            "part of a primary key.",
            "primary_key.columns[0]",
        ),
        (
            PrimaryKey(None, ("a", "b", "A")),
            "Primary key column `A` is listed twice.",
            "primary_key.columns[2]",
        ),
        (
            PrimaryKey(" ", ("a",)),
            "A primary key name must not be only whitespace.",
            "primary_key.name",
        ),
    ],
)
def test_primary_key_errors(primary_key: PrimaryKey, message: str, field: str) -> None:
    error = resolve_error(Schema(COLUMNS, primary_key=primary_key))
    assert error.message == message
    assert error.details["field"] == field


def test_primary_key_error_on_empty_schema_lists_no_columns() -> None:
    error = resolve_error(Schema(primary_key=PrimaryKey(None, ("a",))))
    assert error.message == "Primary key column `a` does not exist. Available columns: (none)."


@pytest.mark.parametrize(
    ("watermarks", "message", "field"),
    [
        (
            (WatermarkSpec("ts", "ts"), WatermarkSpec("ntz", "ntz")),
            "A schema can have at most one watermark, but 2 are declared.",
            "watermarks",
        ),
        (
            (WatermarkSpec("nope", "ts"),),
            "Watermark column `nope` does not exist. "
            "Available columns: a, b, c, file_path, ts, ntz.",
            "watermarks[0].column",
        ),
        (
            (WatermarkSpec("b", "b"),),
            "Watermark column `b` must be of type TIMESTAMP, but is STRING.",
            "watermarks[0].column",
        ),
        (
            (WatermarkSpec("file_path", "ts"),),
            "Watermark column `file_path` must be of type TIMESTAMP, but is STRING.",
            "watermarks[0].column",
        ),
        (
            (WatermarkSpec("TS", " "),),
            "The watermark expression for column `ts` must not be empty.",
            "watermarks[0].expression",
        ),
    ],
)
def test_watermark_errors(watermarks: tuple[WatermarkSpec, ...], message: str, field: str) -> None:
    error = resolve_error(Schema(COLUMNS, watermarks=watermarks))
    assert error.message == message
    assert error.details["field"] == field


def test_watermark_column_type_ignores_nullability() -> None:
    schema = Schema(
        (PhysicalColumn("ts", t("TIMESTAMP NOT NULL")),),
        watermarks=(WatermarkSpec("TS", "ts - INTERVAL '1' SECOND"),),
    )
    resolved = SchemaResolver().resolve(schema)
    assert resolved.watermarks == (ResolvedWatermark("ts", "ts - INTERVAL '1' SECOND", None),)
    assert resolved.expressions_resolved is False


def test_without_typer_expressions_stay_untyped() -> None:
    schema = Schema(
        (PhysicalColumn("a", INT), ComputedColumn("c", "a + 1", "plus one")),
        watermarks=(WatermarkSpec("c", "c"),),  # computed column: type unknown, accepted
    )
    resolved = SchemaResolver().resolve(schema)
    assert resolved.columns[1] == ResolvedColumn(
        "c", "computed", None, expression="a + 1", comment="plus one"
    )
    assert resolved.columns[1].nullable is None
    assert resolved.watermarks == (ResolvedWatermark("c", "c", None),)
    assert resolved.expressions_resolved is False


def test_no_expressions_means_resolved() -> None:
    resolved = SchemaResolver().resolve(Schema((PhysicalColumn("a", INT),)))
    assert resolved.expressions_resolved is True


def test_with_typer() -> None:
    typer = FakeTyper(
        {"a + 1": t("BIGINT NOT NULL"), "CAST(a AS TIMESTAMP)": TIMESTAMP, "ts2": TIMESTAMP}
    )
    schema = Schema(
        (
            PhysicalColumn("a", INT),
            ComputedColumn("c", "a + 1"),
            ComputedColumn("ts2", "CAST(a AS TIMESTAMP)"),
            MetadataColumn("row_index", BIGINT),
        ),
        watermarks=(WatermarkSpec("ts2", "ts2"),),
        primary_key=PrimaryKey(None, ("a",)),
    )
    resolved = SchemaResolver(typer).resolve(schema)
    assert typer.calls == [
        (["a", "row_index"], {"c": "a + 1", "ts2": "CAST(a AS TIMESTAMP)"}),
        (["a", "c", "ts2", "row_index"], {"ts2": "ts2"}),
    ]
    assert resolved.columns[1].data_type == t("BIGINT NOT NULL")
    assert resolved.columns[2].data_type == TIMESTAMP
    assert resolved.watermarks == (ResolvedWatermark("ts2", "ts2", TIMESTAMP),)
    assert resolved.expressions_resolved is True


def test_typer_is_not_called_without_expressions() -> None:
    typer = FakeTyper({})
    SchemaResolver(typer).resolve(Schema((PhysicalColumn("a", INT),)))
    assert typer.calls == []


def test_typer_missing_type_is_never_invented() -> None:
    typer = FakeTyper({})
    resolved = SchemaResolver(typer).resolve(Schema((ComputedColumn("c", "mystery()"),)))
    assert resolved.columns[0].data_type is None
    assert resolved.expressions_resolved is False


def test_watermark_on_typed_computed_column_must_be_timestamp() -> None:
    typer = FakeTyper({"a + 1": BIGINT})
    schema = Schema(
        (PhysicalColumn("a", INT), ComputedColumn("c", "a + 1")),
        watermarks=(WatermarkSpec("c", "c"),),
    )
    error = resolve_error(schema, typer)
    assert error.message == ("Watermark column `c` must be of type TIMESTAMP, but is BIGINT.")
    assert error.details == {"field": "watermarks[0].column", "column": "c"}


def test_watermark_expression_must_be_timestamp() -> None:
    typer = FakeTyper({"ts + 1": BIGINT})
    schema = Schema((PhysicalColumn("ts", TIMESTAMP),), watermarks=(WatermarkSpec("ts", "ts + 1"),))
    error = resolve_error(schema, typer)
    assert error.message == (
        "The watermark expression for column `ts` must be of type TIMESTAMP, but is BIGINT."
    )
    assert error.details == {"field": "watermarks[0].expression", "column": "ts"}


NTZ_FIX = (
    "Watermark column `{c}` is TIMESTAMP_NTZ, but event time must be a TIMESTAMP (Spark's "
    "streaming refuses TIMESTAMP_NTZ event time). Declare a computed column "
    "`{c}_ltz AS CAST({c} AS TIMESTAMP)` (the value read in the session's time zone) and put "
    "the watermark on `{c}_ltz`."
)


def test_a_watermark_on_timestamp_ntz_is_refused_naming_the_fix() -> None:
    """Flink's TIMESTAMP(3) rowtime is Spark's TIMESTAMP_NTZ, which withWatermark refuses."""
    error = resolve_error(Schema(COLUMNS, watermarks=(WatermarkSpec("ntz", "ntz"),)))
    assert error.message == NTZ_FIX.format(c="ntz")
    assert error.details == {"field": "watermarks[0].column", "column": "ntz"}
    # A computed column typed TIMESTAMP_NTZ: refused once its type is known.
    typer = FakeTyper({"CAST(ts AS TIMESTAMP_NTZ)": t("TIMESTAMP_NTZ")})
    schema = Schema(
        (PhysicalColumn("ts", TIMESTAMP), ComputedColumn("local", "CAST(ts AS TIMESTAMP_NTZ)")),
        watermarks=(WatermarkSpec("local", "local"),),
    )
    assert resolve_error(schema, typer).message == NTZ_FIX.format(c="local")
    # An NTZ expression over a TIMESTAMP column is not event time either.
    typer = FakeTyper({"CAST(ts AS TIMESTAMP_NTZ)": t("TIMESTAMP_NTZ")})
    schema = Schema(
        (PhysicalColumn("ts", TIMESTAMP),),
        watermarks=(WatermarkSpec("ts", "CAST(ts AS TIMESTAMP_NTZ)"),),
    )
    assert resolve_error(schema, typer).message == (
        "The watermark expression for column `ts` must be of type TIMESTAMP, but is TIMESTAMP_NTZ."
    )


def test_the_fix_for_timestamp_ntz_resolves() -> None:
    typer = FakeTyper(
        {"CAST(ntz AS TIMESTAMP)": TIMESTAMP, "ntz_ltz - INTERVAL '5' SECOND": TIMESTAMP}
    )
    schema = Schema(
        (
            PhysicalColumn("ntz", t("TIMESTAMP_NTZ")),
            ComputedColumn("ntz_ltz", "CAST(ntz AS TIMESTAMP)"),
        ),
        watermarks=(WatermarkSpec("ntz_ltz", "ntz_ltz - INTERVAL '5' SECOND"),),
    )
    resolved = SchemaResolver(typer).resolve(schema)
    assert resolved.watermarks[0].data_type == TIMESTAMP
    assert resolved.expressions_resolved


def test_typer_errors_propagate() -> None:
    class FailingTyper:
        def type_expressions(
            self, columns: Sequence[ResolvedColumn], expressions: Mapping[str, str]
        ) -> Mapping[str, DataType]:
            raise SchemaError(
                "Cannot resolve column `x`.", details={"field": "columns[0].expression"}
            )

    with pytest.raises(SchemaError, match=r"^Cannot resolve column `x`\.$"):
        SchemaResolver(FailingTyper()).resolve(Schema((ComputedColumn("c", "x"),)))


# --- resolved JSON -------------------------------------------------------------------------


def test_resolved_schema_json() -> None:
    typer = FakeTyper({"CAST(ts AS DATE)": t("DATE"), "ts - INTERVAL '5' SECOND": TIMESTAMP})
    resolved = SchemaResolver(typer).resolve(FULL_SCHEMA)
    data = resolved.to_dict()
    assert data == {
        "columns": [
            {
                "name": "id",
                "kind": "physical",
                "data_type": "BIGINT NOT NULL",
                "nullable": False,
                "comment": "the key",
            },
            {"name": "ts", "kind": "physical", "data_type": "TIMESTAMP", "nullable": True},
            {
                "name": "day",
                "kind": "computed",
                "data_type": "DATE",
                "nullable": True,
                "expression": "CAST(ts AS DATE)",
            },
            {
                "name": "path",
                "kind": "metadata",
                "data_type": "STRING",
                "nullable": True,
                "metadata_key": "file_path",
                "virtual": True,
            },
            {
                "name": "file_size",
                "kind": "metadata",
                "data_type": "BIGINT",
                "nullable": True,
                "metadata_key": "file_size",
                "virtual": False,
            },
        ],
        "watermarks": [
            {"column": "ts", "expression": "ts - INTERVAL '5' SECOND", "data_type": "TIMESTAMP"}
        ],
        "primary_key": {"name": "PK_id", "columns": ["id"]},
        "expressions_resolved": True,
    }
    assert ResolvedSchema.from_dict(json.loads(json.dumps(data))) == resolved


def test_unresolved_schema_json_round_trip() -> None:
    resolved = SchemaResolver().resolve(FULL_SCHEMA)
    data = resolved.to_dict()
    assert data["columns"][2] == {
        "name": "day",
        "kind": "computed",
        "data_type": None,
        "nullable": None,
        "expression": "CAST(ts AS DATE)",
    }
    assert data["watermarks"][0]["data_type"] is None
    assert data["expressions_resolved"] is False
    assert ResolvedSchema.from_dict(data) == resolved
    del data["expressions_resolved"]
    assert ResolvedSchema.from_dict(data).expressions_resolved is False


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("x", "A resolved schema must be a JSON object."),
        ({"columns": [{"name": "a", "data_type": "INT"}]}, "Field 'columns[0].kind' is required."),
        (
            {"columns": [], "primary_key": {"columns": ["a"]}},
            "Field 'primary_key.name' is required.",
        ),
        (
            {"columns": [], "expressions_resolved": "yes"},
            "Field 'expressions_resolved' must be true or false.",
        ),
    ],
)
def test_resolved_schema_from_dict_errors(data: Any, message: str) -> None:
    with pytest.raises(SchemaError) as info:
        ResolvedSchema.from_dict(data)
    assert info.value.message == message
