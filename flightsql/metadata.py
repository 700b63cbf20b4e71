"""The Flight SQL metadata commands as Arrow tables, in the schemas ``FlightSql.proto`` gives
them, answered from Tessera's catalog filtered by the caller's grants through the same
selectors as HiveServer2's metadata calls (``hiveserver2.metadata``), temporary objects of the
caller's session included."""

from __future__ import annotations

import re
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]

from core.privileges import Access
from flightsql.proto import FlightSql_pb2 as sql
from hiveserver2 import metadata
from jobs.models import Session

CATALOGS = pa.schema([pa.field("catalog_name", pa.utf8(), nullable=False)])
DB_SCHEMAS = pa.schema(
    [pa.field("catalog_name", pa.utf8()), pa.field("db_schema_name", pa.utf8(), nullable=False)]
)
TABLES = pa.schema(
    [
        pa.field("catalog_name", pa.utf8()),
        pa.field("db_schema_name", pa.utf8()),
        pa.field("table_name", pa.utf8(), nullable=False),
        pa.field("table_type", pa.utf8(), nullable=False),
    ]
)
TABLES_WITH_SCHEMA = TABLES.append(pa.field("table_schema", pa.binary(), nullable=False))
TABLE_TYPES = pa.schema([pa.field("table_type", pa.utf8(), nullable=False)])
PRIMARY_KEYS = pa.schema(
    [
        pa.field("catalog_name", pa.utf8()),
        pa.field("db_schema_name", pa.utf8()),
        pa.field("table_name", pa.utf8(), nullable=False),
        pa.field("column_name", pa.utf8(), nullable=False),
        pa.field("key_name", pa.utf8()),
        pa.field("key_sequence", pa.int32(), nullable=False),
    ]
)
_VALUE = pa.dense_union(
    [
        pa.field("string_value", pa.utf8()),
        pa.field("bool_value", pa.bool_()),
        pa.field("bigint_value", pa.int64()),
        pa.field("int32_bitmask", pa.int32()),
        pa.field("string_list", pa.list_(pa.utf8())),
        pa.field("int32_to_int32_list_map", pa.map_(pa.int32(), pa.list_(pa.int32()))),
    ]
)
SQL_INFO = pa.schema(
    [pa.field("info_name", pa.uint32(), nullable=False), pa.field("value", _VALUE, nullable=False)]
)

_SIMPLE: dict[str, pa.DataType] = {
    "STRING": pa.utf8(),
    "BOOLEAN": pa.bool_(),
    "TINYINT": pa.int8(),
    "SMALLINT": pa.int16(),
    "INT": pa.int32(),
    "INTEGER": pa.int32(),
    "BIGINT": pa.int64(),
    "FLOAT": pa.float32(),
    "DOUBLE": pa.float64(),
    "DATE": pa.date32(),
    "TIMESTAMP": pa.timestamp("us", tz="UTC"),
    "TIMESTAMP_NTZ": pa.timestamp("us"),
    "BINARY": pa.binary(),
}


def arrow_type(data_type: str) -> pa.DataType:
    """The Arrow type Tessera's results carry for a Spark SQL type (nested and unusual types:
    their text, as a string column)."""
    text = re.sub(r"\s+NOT\s+NULL$", "", data_type.strip().upper())
    found = _SIMPLE.get(text)
    if found is not None:
        return found
    decimal = re.fullmatch(r"DECIMAL\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)", text)
    if decimal:
        return pa.decimal128(int(decimal.group(1)), int(decimal.group(2) or 0))
    if text.startswith(("VARCHAR", "CHAR")):
        return pa.utf8()
    return pa.utf8()


def _table(schema: pa.Schema, rows: list[list[Any]]) -> pa.Table:
    columns: list[Any] = list(zip(*rows, strict=True)) if rows else [[] for _ in schema]
    arrays = [pa.array(list(c), type=f.type) for c, f in zip(columns, schema, strict=True)]
    return pa.table(arrays, schema=schema)


def catalogs(access: Access) -> pa.Table:
    return _table(CATALOGS, [[c.name] for c in metadata.catalogs(access)])


def db_schemas(access: Access, command: Any) -> pa.Table:
    catalog = command.catalog if command.HasField("catalog") else None
    if catalog == "":
        return _table(DB_SCHEMAS, [])  # schemas outside any catalog: Tessera has none
    wanted = (
        command.db_schema_filter_pattern if command.HasField("db_schema_filter_pattern") else None
    )
    rows = [[d.catalog.name, d.name] for d in metadata.databases(access, catalog, wanted)]
    return _table(DB_SCHEMAS, rows[: metadata.MAX_ROWS])


def _kinds(types: list[str]) -> list[str]:
    if not types:
        return list(metadata.TABLE_TYPES.values())
    wanted = {t.upper() for t in types}
    return [kind for name, kind in metadata.TABLE_TYPES.items() if name in wanted]


def table_schema(row: dict[str, Any]) -> bytes:
    fields = []
    for col in metadata.resolved(row)["columns"]:
        if isinstance(col, dict):
            data_type = str(col.get("data_type") or "STRING")
            nullable = col.get("nullable") is not False
            fields.append(pa.field(str(col.get("name")), arrow_type(data_type), nullable=nullable))
    return bytes(pa.schema(fields).serialize())


def tables(access: Access, session: Session, command: Any) -> pa.Table:
    catalog = command.catalog if command.HasField("catalog") else None
    schema = (
        command.db_schema_filter_pattern if command.HasField("db_schema_filter_pattern") else None
    )
    name = (
        command.table_name_filter_pattern if command.HasField("table_name_filter_pattern") else None
    )
    if catalog == "":
        found: list[Any] = []
    else:
        kinds = _kinds(list(command.table_types))
        found = list(
            metadata.tables(
                access, catalog, schema, name, kinds, session, with_schemas=command.include_schema
            )
        )
    rows = []
    for cat, db, row in found[: metadata.MAX_ROWS]:
        out = [cat, db, row["name"], str(row["kind"]).upper()]
        if command.include_schema:
            out.append(table_schema(row))
        rows.append(out)
    return _table(TABLES_WITH_SCHEMA if command.include_schema else TABLES, rows)


def table_types() -> pa.Table:
    return _table(TABLE_TYPES, [[name] for name in metadata.TABLE_TYPES])


def primary_keys(access: Access, command: Any) -> pa.Table:
    catalog = command.catalog if command.HasField("catalog") else None
    schema = command.db_schema if command.HasField("db_schema") else None
    if catalog == "" or not command.table:
        return _table(PRIMARY_KEYS, [])
    _, found = metadata.get_primary_keys(
        access, _literal(catalog), _literal(schema), _literal(command.table)
    )
    rows = [[cat, db, table, col, key, int(seq)] for cat, db, table, col, seq, key in found]
    return _table(PRIMARY_KEYS, rows)


def _literal(name: str | None) -> str | None:
    """A name as a JDBC pattern that matches only itself (Flight SQL's names here are not
    patterns)."""
    if name is None:
        return None
    return re.sub(r"([%_\\])", r"\\\1", name)


S = sql.SqlInfo
SERVER_INFO: dict[int, tuple[int, Any]] = {
    # info: (union type code, value) — 0 string, 1 bool, 2 bigint, 3 int32
    S.FLIGHT_SQL_SERVER_NAME: (0, "Tessera"),
    S.FLIGHT_SQL_SERVER_VERSION: (0, "wave 3"),
    S.FLIGHT_SQL_SERVER_ARROW_VERSION: (0, pa.__version__),
    S.FLIGHT_SQL_SERVER_READ_ONLY: (1, False),
    S.FLIGHT_SQL_SERVER_SQL: (1, True),
    S.FLIGHT_SQL_SERVER_SUBSTRAIT: (1, False),
    S.FLIGHT_SQL_SERVER_TRANSACTION: (3, sql.SQL_SUPPORTED_TRANSACTION_NONE),
    S.FLIGHT_SQL_SERVER_CANCEL: (1, True),
    S.FLIGHT_SQL_SERVER_BULK_INGESTION: (1, False),
    S.FLIGHT_SQL_SERVER_STATEMENT_TIMEOUT: (3, 0),
    S.SQL_DDL_CATALOG: (1, True),
    S.SQL_DDL_SCHEMA: (1, True),
    S.SQL_DDL_TABLE: (1, True),
    S.SQL_IDENTIFIER_CASE: (3, sql.SQL_CASE_SENSITIVITY_CASE_INSENSITIVE),
    S.SQL_IDENTIFIER_QUOTE_CHAR: (0, "`"),
    S.SQL_QUOTED_IDENTIFIER_CASE: (3, sql.SQL_CASE_SENSITIVITY_CASE_INSENSITIVE),
    S.SQL_SEARCH_STRING_ESCAPE: (0, "\\"),
    S.SQL_SCHEMA_TERM: (0, "database"),
    S.SQL_CATALOG_TERM: (0, "catalog"),
    S.SQL_TRANSACTIONS_SUPPORTED: (1, False),
}


def sql_info(wanted: list[int]) -> pa.Table:
    """The server's answers for the ``info`` codes asked for (all when none), as Flight SQL's
    dense union; codes it has no answer for are left out, as the spec allows."""
    codes = [c for c in (wanted or list(SERVER_INFO)) if c in SERVER_INFO]
    children: list[list[Any]] = [[], [], [], []]
    type_ids, offsets = [], []
    for code in codes:
        kind, value = SERVER_INFO[code]
        type_ids.append(kind)
        offsets.append(len(children[kind]))
        children[kind].append(value)
    arrays = [pa.array(children[i], type=_VALUE.field(i).type) for i in range(4)] + [
        pa.array([], type=_VALUE.field(i).type) for i in (4, 5)
    ]
    value = pa.UnionArray.from_dense(
        pa.array(type_ids, type=pa.int8()),
        pa.array(offsets, type=pa.int32()),
        arrays,
        [_VALUE.field(i).name for i in range(6)],
    )
    names = pa.array(codes, type=pa.uint32())
    return pa.Table.from_arrays([names, value], schema=SQL_INFO)
