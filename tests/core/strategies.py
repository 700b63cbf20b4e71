"""Hypothesis strategies shared by the core tests."""

from __future__ import annotations

from hypothesis import strategies as st

from core.datatypes import (
    ArrayType,
    AtomicType,
    CharType,
    DataType,
    DayTimeIntervalType,
    DecimalType,
    MapType,
    StructField,
    StructType,
    VarcharType,
    YearMonthIntervalType,
)
from core.properties import RESERVED_PREFIXES
from core.schema import (
    ComputedColumn,
    MetadataColumn,
    PhysicalColumn,
    PrimaryKey,
    Schema,
    UnresolvedColumn,
    WatermarkSpec,
)

ATOMIC_NAMES = (
    "BOOLEAN",
    "TINYINT",
    "SMALLINT",
    "INT",
    "BIGINT",
    "FLOAT",
    "DOUBLE",
    "STRING",
    "BINARY",
    "DATE",
    "TIMESTAMP",
    "TIMESTAMP_NTZ",
)
DAY_TIME = ("DAY", "HOUR", "MINUTE", "SECOND")
YEAR_MONTH = ("YEAR", "MONTH")

# Any printable-ish Unicode text without control characters (or surrogates).
_no_controls = st.characters(exclude_categories=("Cc", "Cs"))

# Identifier parts as accepted by validate_name / parse_path.
identifier_parts = st.text(_no_controls, min_size=1, max_size=20).filter(lambda s: s.strip() != "")

# Column names with plenty of characters that need quoting somewhere.
column_names = st.text(
    st.one_of(st.sampled_from(",`. _aA1é"), _no_controls), min_size=1, max_size=12
).filter(lambda s: s.strip() != "")

_nullable = st.booleans()


def _interval_pairs(fields: tuple[str, ...]) -> st.SearchStrategy[tuple[str, str]]:
    return st.sampled_from([(a, b) for i, a in enumerate(fields) for b in fields[i:]])


_day_time = st.builds(
    lambda pair, nullable: DayTimeIntervalType(pair[0], pair[1], nullable=nullable),
    _interval_pairs(DAY_TIME),
    _nullable,
)
_year_month = st.builds(
    lambda pair, nullable: YearMonthIntervalType(pair[0], pair[1], nullable=nullable),
    _interval_pairs(YEAR_MONTH),
    _nullable,
)

_decimals = st.integers(1, 38).flatmap(
    lambda p: st.builds(DecimalType, st.just(p), st.integers(0, p), nullable=_nullable)
)

leaf_types: st.SearchStrategy[DataType] = st.one_of(
    st.builds(AtomicType, st.sampled_from(ATOMIC_NAMES), nullable=_nullable),
    _decimals,
    st.builds(VarcharType, st.integers(1, 70000), nullable=_nullable),
    st.builds(CharType, st.integers(1, 300), nullable=_nullable),
    _day_time,
    _year_month,
)

# Struct field names may be any non-empty text, comments any text (quotes, backslashes...).
_field_names = st.text(min_size=1, max_size=8)
_comments = st.none() | st.text(max_size=10)


def _containers(children: st.SearchStrategy[DataType]) -> st.SearchStrategy[DataType]:
    fields = st.lists(
        st.builds(StructField, _field_names, children, _comments),
        max_size=3,
        unique_by=lambda f: f.name.lower(),
    )
    return st.one_of(
        st.builds(ArrayType, children, nullable=_nullable),
        st.builds(MapType, children, children, nullable=_nullable),
        st.builds(StructType, fields.map(tuple), nullable=_nullable),
    )


data_types: st.SearchStrategy[DataType] = st.recursive(leaf_types, _containers, max_leaves=8)


@st.composite
def schemas(draw: st.DrawFn) -> Schema:
    """Schemas with a primary key on physical columns and at most one watermark."""
    names = draw(st.lists(column_names, max_size=5, unique_by=lambda s: s.lower()))
    columns: list[UnresolvedColumn] = []
    for name in names:
        kind = draw(st.sampled_from(("physical", "computed", "metadata")))
        comment = draw(_comments)
        if kind == "physical":
            columns.append(PhysicalColumn(name, draw(data_types), comment))
        elif kind == "computed":
            columns.append(ComputedColumn(name, draw(st.text(min_size=1, max_size=15)), comment))
        else:
            key = draw(st.none() | st.sampled_from(("file_path", "row_index", "x, y")))
            columns.append(
                MetadataColumn(name, draw(data_types), key, draw(st.booleans()), comment)
            )
    physical = [c.name for c in columns if isinstance(c, PhysicalColumn)]
    primary_key = None
    with_primary_key = draw(st.booleans())
    if physical and with_primary_key:
        key_columns = draw(st.lists(st.sampled_from(physical), min_size=1, unique=True))
        primary_key = PrimaryKey(draw(st.none() | column_names), tuple(key_columns))
    watermarks: tuple[WatermarkSpec, ...] = ()
    with_watermark = draw(st.booleans())
    if names and with_watermark:
        watermarks = (
            WatermarkSpec(draw(st.sampled_from(names)), draw(st.text(min_size=1, max_size=15))),
        )
    return Schema(tuple(columns), watermarks, primary_key)


option_maps = st.dictionaries(
    st.text(max_size=15).filter(lambda k: not k.startswith(RESERVED_PREFIXES)),
    st.text(max_size=15),
    max_size=4,
)
