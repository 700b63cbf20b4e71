"""The metadata calls (GetCatalogs, GetSchemas, GetTables, GetColumns …) answered from
Tessera's catalog through its selectors, filtered by the caller's grants exactly as the REST
lists are (``catalog.selectors`` with ``catalog.access.access_for``), without a Spark job.

Names are JDBC patterns (``%`` any run, ``_`` one character, ``\\`` escapes; None or ``%``:
all; so is ``.*``, what impyla sends for "all" as Hive's own servers read it), matched without
regard to case as Tessera's names are. Columns are JDBC's
(``DatabaseMetaData``) with their Spark SQL types. An answer holds at most ``MAX_ROWS`` rows.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from catalog import selectors
from catalog.models import Catalog, Database
from core.errors import NotFound
from core.planner.functions import spark_builtins
from core.privileges import Access
from hiveserver2 import rowsets
from jobs.models import Session, TemporaryObject

MAX_ROWS = 100_000
_PAGE = 1000
Columns = list[tuple[str, str]]
Rows = list[list[Any]]


def pattern(text: str | None) -> re.Pattern[str] | None:
    """A JDBC name pattern as a regular expression; None matches everything."""
    if text is None or text in ("", "%", "*", ".*"):
        return None
    out, escaped = [], False
    for char in text:
        if escaped:
            out.append(re.escape(char))
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "%":
            out.append(".*")
        elif char == "_":
            out.append(".")
        else:
            out.append(re.escape(char))
    return re.compile("".join(out), re.IGNORECASE | re.DOTALL)


def _matches(compiled: re.Pattern[str] | None, name: str) -> bool:
    return compiled is None or compiled.fullmatch(name) is not None


def _in_database(compiled: re.Pattern[str] | None) -> str | None:
    """The pattern as a regular expression the database matches whole (PostgreSQL's and
    SQLite's flavours both read what ``pattern`` writes: ``.``, ``.*`` and escapes)."""
    return None if compiled is None else f"^(?:{compiled.pattern})$"


def _pages(read: Callable[[Any], list[Any]], key: Callable[[Any], Any]) -> Iterator[Any]:
    after = None
    while True:
        page = read(after)
        yield from page
        if len(page) < _PAGE:
            return
        after = key(page[-1])


def catalogs(access: Access, name: str | None = None) -> Iterator[Catalog]:
    """The visible catalogs matching ``name`` (a pattern; a plain name is looked up)."""
    compiled = pattern(name)
    if name and compiled is not None and not any(c in name for c in "%_\\"):
        try:
            yield selectors.get_catalog(name, access=access)
        except NotFound:
            return
        return
    read = lambda after: selectors.list_catalogs(access=access, after=after, limit=_PAGE)  # noqa: E731
    for found in _pages(read, lambda c: c.name_key):
        if _matches(compiled, found.name):
            yield found


def databases(access: Access, catalog: str | None, schema: str | None) -> Iterator[Database]:
    compiled = pattern(schema)
    for found in catalogs(access, catalog):

        def read(after: Any, found: Catalog = found) -> list[Database]:
            return selectors.list_databases(
                found, access=access, after=after, limit=_PAGE, name_regex=_in_database(compiled)
            )

        for database in _pages(read, lambda d: d.name_key):
            if _matches(compiled, database.name):
                yield database


Found = tuple[str, str, dict[str, Any]]  # catalog, database, a list row of the table


def _temporary(
    session: Session | None, catalog: str | None, schema: str | None, kinds: list[str]
) -> list[Found]:
    """The session's temporary tables and views in the catalogs and databases asked for, as
    list rows (``resolved_json`` from their definition)."""
    if session is None:
        return []
    wanted_catalog, wanted_schema = pattern(catalog), pattern(schema)
    found: list[Found] = []
    for row in TemporaryObject.objects.filter(session=session, kind__in=kinds):
        if not (_matches(wanted_catalog, row.catalog) and _matches(wanted_schema, row.database)):
            continue
        definition = dict(row.definition or {})
        listed = {
            "name": row.name,
            "kind": row.kind,
            "comment": str(definition.get("comment") or ""),
            "resolved_json": json.dumps(definition.get("resolved_schema")),
            "schema_json": json.dumps(definition.get("schema")),
        }
        found.append((row.catalog, row.database, listed))
    return found


def tables(
    access: Access,
    catalog: str | None,
    schema: str | None,
    table: str | None,
    kinds: list[str],
    session: Session | None = None,
    *,
    with_schemas: bool = True,
) -> Iterator[Found]:
    """The visible tables and views matching the patterns, and the session's temporary ones,
    which shadow a permanent object of the same name as they do in its statements."""
    compiled = pattern(table)
    temporary = [
        t for t in _temporary(session, catalog, schema, kinds) if _matches(compiled, t[2]["name"])
    ]
    shadowed = {(c.lower(), d.lower(), r["name"].lower()) for c, d, r in temporary}
    yield from temporary
    for database in databases(access, catalog, schema):
        for kind in kinds:

            def read(after: Any, database: Database = database, kind: str = kind) -> list[Any]:
                return selectors.list_tables(
                    database,
                    kind,
                    access=access,
                    after=after,
                    limit=_PAGE,
                    name_regex=_in_database(compiled),
                    with_schemas=with_schemas,
                )

            for row in _pages(read, lambda r: r["name_key"]):
                key = (database.catalog.name.lower(), database.name.lower(), row["name_key"])
                if _matches(compiled, row["name"]) and key not in shadowed:
                    yield database.catalog.name, database.name, row


def _limited(rows: Iterator[list[Any]]) -> Rows:
    out: Rows = []
    for row in rows:
        out.append(row)
        if len(out) >= MAX_ROWS:
            break
    return out


# --- the calls ---------------------------------------------------------------------------------


def get_catalogs(access: Access) -> tuple[Columns, Rows]:
    return [("TABLE_CAT", "STRING")], _limited([c.name] for c in catalogs(access))


def get_schemas(access: Access, catalog: str | None, schema: str | None) -> tuple[Columns, Rows]:
    columns = [("TABLE_SCHEM", "STRING"), ("TABLE_CATALOG", "STRING")]
    return columns, _limited([d.name, d.catalog.name] for d in databases(access, catalog, schema))


TABLE_TYPES = {"TABLE": "table", "VIEW": "view"}


def get_table_types() -> tuple[Columns, Rows]:
    return [("TABLE_TYPE", "STRING")], [[name] for name in TABLE_TYPES]


def _kinds(types: list[str] | None) -> list[str]:
    if not types:
        return list(TABLE_TYPES.values())
    wanted = {t.upper() for t in types}
    return [kind for name, kind in TABLE_TYPES.items() if name in wanted]


def get_tables(
    access: Access,
    session: Session,
    catalog: str | None,
    schema: str | None,
    table: str | None,
    types: Any,
) -> tuple[Columns, Rows]:
    columns = [
        ("TABLE_CAT", "STRING"),
        ("TABLE_SCHEM", "STRING"),
        ("TABLE_NAME", "STRING"),
        ("TABLE_TYPE", "STRING"),
        ("REMARKS", "STRING"),
        ("TYPE_CAT", "STRING"),
        ("TYPE_SCHEM", "STRING"),
        ("TYPE_NAME", "STRING"),
        ("SELF_REFERENCING_COL_NAME", "STRING"),
        ("REF_GENERATION", "STRING"),
    ]
    found = tables(access, catalog, schema, table, _kinds(types), session, with_schemas=False)
    rows = (
        [c, d, r["name"], r["kind"].upper(), r["comment"] or ""] + [None] * 5 for c, d, r in found
    )
    return columns, _limited(rows)


def resolved(row: dict[str, Any]) -> dict[str, Any]:
    for key in ("resolved_json", "schema_json"):
        text = row.get(key)
        if text:
            try:
                value = json.loads(text)
            except ValueError:
                continue
            if isinstance(value, dict) and isinstance(value.get("columns"), list):
                return value
    return {"columns": []}


def _size(data_type: str) -> tuple[int | None, int | None]:
    """COLUMN_SIZE and DECIMAL_DIGITS of a type."""
    code = rowsets.type_id(data_type)
    fixed = {
        rowsets.T.TINYINT_TYPE: 3,
        rowsets.T.SMALLINT_TYPE: 5,
        rowsets.T.INT_TYPE: 10,
        rowsets.T.BIGINT_TYPE: 19,
        rowsets.T.FLOAT_TYPE: 7,
        rowsets.T.DOUBLE_TYPE: 15,
        rowsets.T.DATE_TYPE: 10,
        rowsets.T.TIMESTAMP_TYPE: 29,
    }
    if code == rowsets.T.DECIMAL_TYPE:
        match = re.search(r"\(\s*(\d+)\s*(?:,\s*(\d+))?", data_type)
        return (int(match.group(1)), int(match.group(2) or 0)) if match else (10, 0)
    return fixed.get(code), (0 if code in fixed and code < rowsets.T.FLOAT_TYPE else None)


COLUMN_COLUMNS: Columns = [
    ("TABLE_CAT", "STRING"),
    ("TABLE_SCHEM", "STRING"),
    ("TABLE_NAME", "STRING"),
    ("COLUMN_NAME", "STRING"),
    ("DATA_TYPE", "INT"),
    ("TYPE_NAME", "STRING"),
    ("COLUMN_SIZE", "INT"),
    ("BUFFER_LENGTH", "TINYINT"),
    ("DECIMAL_DIGITS", "INT"),
    ("NUM_PREC_RADIX", "INT"),
    ("NULLABLE", "INT"),
    ("REMARKS", "STRING"),
    ("COLUMN_DEF", "STRING"),
    ("SQL_DATA_TYPE", "INT"),
    ("SQL_DATETIME_SUB", "INT"),
    ("CHAR_OCTET_LENGTH", "INT"),
    ("ORDINAL_POSITION", "INT"),
    ("IS_NULLABLE", "STRING"),
    ("SCOPE_CATALOG", "STRING"),
    ("SCOPE_SCHEMA", "STRING"),
    ("SCOPE_TABLE", "STRING"),
    ("SOURCE_DATA_TYPE", "SMALLINT"),
    ("IS_AUTO_INCREMENT", "STRING"),
]


def get_columns(
    access: Access,
    session: Session,
    catalog: str | None,
    schema: str | None,
    table: str | None,
    name: str | None,
) -> tuple[Columns, Rows]:
    compiled = pattern(name)

    def rows() -> Iterator[list[Any]]:
        for cat, db, row in tables(access, catalog, schema, table, _kinds(None), session):
            for position, col in enumerate(resolved(row)["columns"], start=1):
                if not isinstance(col, dict) or not _matches(compiled, str(col.get("name"))):
                    continue
                data_type = str(col.get("data_type") or "STRING")
                size, digits = _size(data_type)
                nullable = col.get("nullable") is not False
                yield [
                    cat,
                    db,
                    row["name"],
                    col["name"],
                    rowsets.JDBC_TYPES.get(rowsets.type_id(data_type), 1111),
                    rowsets.type_name(data_type),
                    size,
                    None,
                    digits,
                    10 if size is not None else None,
                    1 if nullable else 0,
                    col.get("comment") or "",
                    None,
                    None,
                    None,
                    None,
                    position,
                    "YES" if nullable else "NO",
                    None,
                    None,
                    None,
                    None,
                    "NO",
                ]

    return COLUMN_COLUMNS, _limited(rows())


def get_primary_keys(
    access: Access, catalog: str | None, schema: str | None, table: str | None
) -> tuple[Columns, Rows]:
    columns = [
        ("TABLE_CAT", "STRING"),
        ("TABLE_SCHEM", "STRING"),
        ("TABLE_NAME", "STRING"),
        ("COLUMN_NAME", "STRING"),
        ("KEY_SEQ", "INT"),
        ("PK_NAME", "STRING"),
    ]

    def rows() -> Iterator[list[Any]]:
        for cat, db, row in tables(access, catalog, schema, table, ["table"]):
            key = resolved(row).get("primary_key")
            if not isinstance(key, dict):
                continue
            for seq, col in enumerate(key.get("columns") or [], start=1):
                yield [cat, db, row["name"], col, seq, key["name"]]

    return columns, _limited(rows())


def get_functions(
    access: Access, catalog: str | None, schema: str | None, name: str | None
) -> tuple[Columns, Rows]:
    columns = [
        ("FUNCTION_CAT", "STRING"),
        ("FUNCTION_SCHEM", "STRING"),
        ("FUNCTION_NAME", "STRING"),
        ("REMARKS", "STRING"),
        ("FUNCTION_TYPE", "INT"),
        ("SPECIFIC_NAME", "STRING"),
    ]
    compiled = pattern(name)

    def rows() -> Iterator[list[Any]]:
        if not catalog and pattern(schema) is None:  # Spark's built-ins, in no schema
            for builtin in sorted(spark_builtins()):
                if _matches(compiled, builtin):
                    yield [None, None, builtin, "", 1, builtin]
        for database in databases(access, catalog, schema):

            def read(after: Any, database: Database = database) -> list[Any]:
                return selectors.list_functions(database, access=access, after=after, limit=_PAGE)

            for function in _pages(read, lambda f: f.name_key):
                if _matches(compiled, function.name):
                    cat, db = database.catalog.name, database.name
                    yield [cat, db, function.name, function.comment or "", 1, function.name]

    return columns, _limited(rows())


def get_cross_reference() -> tuple[Columns, Rows]:
    names = "PKTABLE_CAT PKTABLE_SCHEM PKTABLE_NAME PKCOLUMN_NAME FKTABLE_CAT FKTABLE_SCHEM"
    names += " FKTABLE_NAME FKCOLUMN_NAME KEY_SEQ UPDATE_RULE DELETE_RULE FK_NAME PK_NAME"
    names += " DEFERRABILITY"
    ints = {"KEY_SEQ", "UPDATE_RULE", "DELETE_RULE", "DEFERRABILITY"}
    return [(n, "INT" if n in ints else "STRING") for n in names.split()], []


_TYPES = [
    "BOOLEAN",
    "TINYINT",
    "SMALLINT",
    "INT",
    "BIGINT",
    "FLOAT",
    "DOUBLE",
    "DECIMAL",
    "STRING",
    "VARCHAR",
    "CHAR",
    "BINARY",
    "DATE",
    "TIMESTAMP",
    "TIMESTAMP_NTZ",
    "ARRAY",
    "MAP",
    "STRUCT",
]


def get_type_info() -> tuple[Columns, Rows]:
    columns: Columns = [
        ("TYPE_NAME", "STRING"),
        ("DATA_TYPE", "INT"),
        ("PRECISION", "INT"),
        ("LITERAL_PREFIX", "STRING"),
        ("LITERAL_SUFFIX", "STRING"),
        ("CREATE_PARAMS", "STRING"),
        ("NULLABLE", "SMALLINT"),
        ("CASE_SENSITIVE", "BOOLEAN"),
        ("SEARCHABLE", "SMALLINT"),
        ("UNSIGNED_ATTRIBUTE", "BOOLEAN"),
        ("FIXED_PREC_SCALE", "BOOLEAN"),
        ("AUTO_INCREMENT", "BOOLEAN"),
        ("LOCAL_TYPE_NAME", "STRING"),
        ("MINIMUM_SCALE", "SMALLINT"),
        ("MAXIMUM_SCALE", "SMALLINT"),
        ("SQL_DATA_TYPE", "INT"),
        ("SQL_DATETIME_SUB", "INT"),
        ("NUM_PREC_RADIX", "INT"),
    ]
    rows: Rows = []
    for name in _TYPES:
        code = rowsets.type_id(name)
        size, _ = _size(name if name != "DECIMAL" else "DECIMAL(38,18)")
        text = code in (rowsets.T.STRING_TYPE, rowsets.T.VARCHAR_TYPE, rowsets.T.CHAR_TYPE)
        numeric = size is not None and code not in (rowsets.T.DATE_TYPE, rowsets.T.TIMESTAMP_TYPE)
        rows.append(
            [
                name,
                rowsets.JDBC_TYPES.get(code, 1111),
                size,
                "'" if text else None,
                "'" if text else None,
                "precision,scale" if name == "DECIMAL" else None,
                1,
                text,
                3 if code < rowsets.T.ARRAY_TYPE else 0,
                False if numeric else None,
                False,
                False,
                None,
                0,
                18 if name == "DECIMAL" else 0,
                None,
                None,
                10 if numeric else None,
            ]
        )
    return columns, rows
