"""The pure parts of hiveserver2/: type mapping, column-based row sets, JDBC name patterns,
the PLAIN message and the SASL server transport's limits (no server, no Spark)."""

from __future__ import annotations

import struct
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pytest
from TCLIService import ttypes  # type: ignore[import-untyped]

from hiveserver2 import rowsets, sasl
from hiveserver2.metadata import pattern

T = ttypes.TTypeId


@pytest.mark.parametrize(
    ("spark", "expected"),
    [
        ("INT", T.INT_TYPE),
        ("bigint", T.BIGINT_TYPE),
        ("DECIMAL(10, 2)", T.DECIMAL_TYPE),
        ("ARRAY<INT>", T.ARRAY_TYPE),
        ("MAP<STRING, INT>", T.MAP_TYPE),
        ("STRUCT<a: INT>", T.STRUCT_TYPE),
        ("TIMESTAMP_NTZ", T.TIMESTAMP_TYPE),
        ("INTERVAL DAY TO SECOND", T.INTERVAL_DAY_TIME_TYPE),
        ("INTERVAL YEAR TO MONTH", T.INTERVAL_YEAR_MONTH_TYPE),
        ("VARCHAR(5)", T.VARCHAR_TYPE),
        ("GEOGRAPHY", T.STRING_TYPE),
        (None, T.STRING_TYPE),
    ],
)
def test_spark_types_map_to_thrift_types(spark: str | None, expected: int) -> None:
    assert rowsets.type_id(spark) == expected


def test_a_decimal_carries_precision_and_scale() -> None:
    entry = rowsets.type_desc("DECIMAL(10, 2)").types[0].primitiveEntry
    qualifiers = entry.typeQualifiers.qualifiers
    assert (qualifiers["precision"].i32Value, qualifiers["scale"].i32Value) == (10, 2)
    assert rowsets.type_name("decimal(10, 2)") == "DECIMAL(10,2)"


def test_columns_carry_values_and_a_null_bitmap() -> None:
    values: list[Any] = [1, None, 3, None, None, None, None, None, 9]
    column = rowsets.column(T.INT_TYPE, values).i32Val
    assert column.values == [1, 0, 3, 0, 0, 0, 0, 0, 9]
    assert column.nulls == bytes([0b11111010, 0b0])
    text = rowsets.column(
        T.TIMESTAMP_TYPE, [datetime(2024, 1, 2, 3, 4, 5), date(2024, 1, 2), Decimal("1.50")]
    ).stringVal
    assert text.values == ["2024-01-02 03:04:05", "2024-01-02", "1.50"]


def test_an_arrow_page_becomes_a_column_based_row_set() -> None:
    table = pa.table(
        {
            "i": pa.array([1, None], pa.int64()),
            "d": pa.array([0.5, 1.5], pa.float32()),
            "l": pa.array([[1, 2], None], pa.list_(pa.int32())),
            "b": pa.array([b"\x00", b"x"], pa.binary()),
        }
    )
    types = [T.BIGINT_TYPE, T.FLOAT_TYPE, T.ARRAY_TYPE, T.BINARY_TYPE]
    rows = rowsets.arrow_row_set(table, types, 10)
    assert rows.startRowOffset == 10 and rows.rows == []
    assert rows.columns[0].i64Val.values == [1, 0] and rows.columns[0].i64Val.nulls == b"\x02"
    assert rows.columns[1].doubleVal.values == [0.5, 1.5]
    assert rows.columns[2].stringVal.values == ["[1,2]", ""]
    assert rows.columns[3].binaryVal.values == [b"\x00", b"x"]


def test_dates_beyond_python_and_values_served_as_text_reach_a_row_set() -> None:
    """Issue 36: a far date stored as Arrow's date32 (a result written without collecting),
    and a column the worker served as Spark's text, are rows, not a failed fetch."""
    far = pa.array([365_242_000, None], pa.int32()).cast(pa.date32())
    table = pa.table({"far": far, "ym": pa.array(["INTERVAL '1-2' YEAR TO MONTH", None])})
    rows = rowsets.arrow_row_set(table, [T.DATE_TYPE, T.INTERVAL_YEAR_MONTH_TYPE], 0)
    assert rows.columns[0].stringVal.values == ["+1001968-08-19", ""]
    assert rows.columns[1].stringVal.values == ["INTERVAL '1-2' YEAR TO MONTH", ""]


@pytest.mark.parametrize(
    ("jdbc", "name", "matches"),
    [
        (None, "anything", True),
        ("%", "anything", True),
        ("sal%", "Sales", True),
        ("s_les", "sales", True),
        ("s_les", "ssales", False),
        ("a\\_b", "a_b", True),
        ("a\\_b", "axb", False),
        ("a.b", "axb", False),
        (".*", "anything", True),  # impyla's "all"
        (".*x", "anything", False),
    ],
)
def test_jdbc_name_patterns(jdbc: str | None, name: str, matches: bool) -> None:
    compiled = pattern(jdbc)
    assert (compiled is None or compiled.fullmatch(name) is not None) is matches


@pytest.mark.parametrize(
    "payload", [b"alice\x00secret", b"\x00\x00secret", b"a\x00b\x00c\x00d", b"\x00\xff\x00x"]
)
def test_malformed_plain_messages_are_refused(payload: bytes) -> None:
    with pytest.raises(sasl.SaslRefused):
        sasl.parse_plain(payload)


def test_a_plain_message_names_user_and_password() -> None:
    assert sasl.parse_plain(b"\x00alice\x00p\xc3\xa4ss") == ("alice", "päss")
    assert sasl.parse_plain(b"admin\x00alice\x00") == ("alice", "")


class _Wire:
    """A socket-shaped stand-in: what the client sent, what the server wrote."""

    def __init__(self, incoming: bytes) -> None:
        self.incoming, self.sent = incoming, b""

    def readAll(self, size: int) -> bytes:  # Thrift's name
        chunk, self.incoming = self.incoming[:size], self.incoming[size:]
        if len(chunk) < size:
            raise EOFError
        return chunk

    def write(self, data: bytes) -> None:
        self.sent += data

    def flush(self) -> None:
        pass


def test_a_frame_over_the_limit_is_refused_before_it_is_read() -> None:
    transport = sasl.SaslServerTransport(_Wire(struct.pack(">I", 1025) + b"x" * 1025), 1024)
    with pytest.raises(Exception, match="over the limit"):
        transport.read(4)


def test_negotiation_answers_complete_or_bad() -> None:
    hello = struct.pack(">BI", 1, 5) + b"PLAIN"
    plain = b"\x00alice\x00pw"
    wire = _Wire(hello + struct.pack(">BI", 5, len(plain)) + plain)
    assert sasl.SaslServerTransport(wire, 1024).negotiate(lambda u, p: (u, p)) == ("alice", "pw")
    assert wire.sent == struct.pack(">BI", 5, 0)

    def refuse(user: str, password: str) -> Any:
        raise sasl.SaslRefused("no [INVALID_CREDENTIALS]")

    wire = _Wire(hello + struct.pack(">BI", 2, len(plain)) + plain)
    with pytest.raises(sasl.SaslRefused):
        sasl.SaslServerTransport(wire, 1024).negotiate(refuse)
    reason = b"no [INVALID_CREDENTIALS]"
    assert wire.sent == struct.pack(">BI", 3, len(reason)) + reason  # BAD, with the reason
