"""A SQLAlchemy 2 dialect for Tessera: ``tessera://user:password@host:port/catalog/database``.

Statements go through :mod:`tessera.dbapi` (the REST API); reflection reads Tessera's catalog
endpoints, never SQL on Spark: schemas are the databases of the URL's catalog, with their
tables, views, columns (types, comments, computed expressions) and primary keys, filtered by
the user's grants like every REST list; temporary objects are not reflected. Registered as
the entry point ``sqlalchemy.dialects: tessera`` by the client's ``[sqlalchemy]`` extra.
See docs/python.md ("SQLAlchemy").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from types import ModuleType
from typing import Any

from sqlalchemy import exc as sa_exc
from sqlalchemy import types as sqltypes
from sqlalchemy.engine import URL, Connection, default, reflection
from sqlalchemy.sql import compiler, elements

from tessera import dbapi
from tessera._http import segment

# --- Spark SQL types → SQLAlchemy types ----------------------------------------------------

_SIMPLE: dict[str, Callable[[], sqltypes.TypeEngine[Any]]] = {
    "BOOLEAN": sqltypes.Boolean,
    "BOOL": sqltypes.Boolean,
    "TINYINT": sqltypes.SmallInteger,
    "BYTE": sqltypes.SmallInteger,
    "SMALLINT": sqltypes.SmallInteger,
    "SHORT": sqltypes.SmallInteger,
    "INT": sqltypes.Integer,
    "INTEGER": sqltypes.Integer,
    "BIGINT": sqltypes.BigInteger,
    "LONG": sqltypes.BigInteger,
    "FLOAT": sqltypes.Float,
    "REAL": sqltypes.Float,
    "DOUBLE": sqltypes.Double,
    "STRING": sqltypes.String,
    "BINARY": sqltypes.LargeBinary,
    "DATE": sqltypes.Date,
    # TIMESTAMP is an instant (read back in UTC); TIMESTAMP_NTZ a wall-clock date and time.
    "TIMESTAMP": lambda: sqltypes.DateTime(timezone=True),
    "TIMESTAMP_LTZ": lambda: sqltypes.DateTime(timezone=True),
    "TIMESTAMP_NTZ": sqltypes.DateTime,
    "INTERVAL": sqltypes.Interval,
}

_TYPE = re.compile(r"^\s*([A-Za-z_]+)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?")


def spark_type(data_type: str) -> sqltypes.TypeEngine[Any]:
    """The SQLAlchemy type of a Spark SQL type (``DECIMAL(10, 2)`` → ``Numeric(10, 2)``).
    ARRAY, MAP, STRUCT and VARIANT have no generic SQLAlchemy type: NullType (values come
    back as Python lists and dicts, untouched)."""
    match = _TYPE.match(data_type)
    if not match:
        return sqltypes.NullType()
    name = match.group(1).upper()
    if name in ("DECIMAL", "DEC", "NUMERIC"):
        return sqltypes.Numeric(int(match.group(2) or 10), int(match.group(3) or 0))
    if name in ("VARCHAR", "CHAR"):
        length = int(match.group(2)) if match.group(2) else None
        return sqltypes.CHAR(length) if name == "CHAR" else sqltypes.VARCHAR(length)
    factory = _SIMPLE.get(name)
    return factory() if factory is not None else sqltypes.NullType()


def _not_null(data_type: str) -> bool:
    return data_type.rstrip().upper().endswith("NOT NULL")


# --- SQLAlchemy → Spark SQL: compilers -----------------------------------------------------


class TesseraTypeCompiler(compiler.GenericTypeCompiler):
    """SQLAlchemy's types as Spark SQL types in DDL (``CREATE TABLE`` of ``to_sql``)."""

    def visit_BOOLEAN(self, type_: Any, **kw: Any) -> str:
        return "BOOLEAN"

    def visit_SMALLINT(self, type_: Any, **kw: Any) -> str:
        return "SMALLINT"

    def visit_INTEGER(self, type_: Any, **kw: Any) -> str:
        return "INT"

    def visit_BIGINT(self, type_: Any, **kw: Any) -> str:
        return "BIGINT"

    def visit_FLOAT(self, type_: Any, **kw: Any) -> str:
        # A binary precision up to 24 fits a 4-byte float (SQL's rule); else DOUBLE.
        precision = getattr(type_, "precision", None)
        return "FLOAT" if precision is not None and precision <= 24 else "DOUBLE"

    def visit_REAL(self, type_: Any, **kw: Any) -> str:
        return "FLOAT"

    def visit_DOUBLE(self, type_: Any, **kw: Any) -> str:
        return "DOUBLE"

    def visit_DOUBLE_PRECISION(self, type_: Any, **kw: Any) -> str:
        return "DOUBLE"

    def visit_NUMERIC(self, type_: Any, **kw: Any) -> str:
        if type_.precision is None:
            return "DECIMAL"
        return f"DECIMAL({type_.precision}, {type_.scale or 0})"

    def visit_DECIMAL(self, type_: Any, **kw: Any) -> str:
        return self.visit_NUMERIC(type_, **kw)

    def _string(self, type_: Any, **kw: Any) -> str:
        return "STRING"

    visit_VARCHAR = visit_NVARCHAR = visit_CHAR = visit_NCHAR = _string
    visit_TEXT = visit_CLOB = visit_string = visit_unicode = visit_uuid = _string
    visit_UUID = visit_JSON = _string

    def visit_DATE(self, type_: Any, **kw: Any) -> str:
        return "DATE"

    def visit_DATETIME(self, type_: Any, **kw: Any) -> str:
        return "TIMESTAMP" if getattr(type_, "timezone", False) else "TIMESTAMP_NTZ"

    def visit_TIMESTAMP(self, type_: Any, **kw: Any) -> str:
        return self.visit_DATETIME(type_, **kw)

    def visit_TIME(self, type_: Any, **kw: Any) -> str:
        raise sa_exc.CompileError("Spark SQL has no TIME type; use STRING or TIMESTAMP.")

    def visit_BLOB(self, type_: Any, **kw: Any) -> str:
        return "BINARY"

    visit_BINARY = visit_VARBINARY = visit_BLOB


class TesseraIdentifierPreparer(compiler.IdentifierPreparer):
    """Backtick-quoted names (an inner backtick doubled), as Spark SQL writes them."""

    def __init__(
        self,
        dialect: Any,
        initial_quote: str = "`",
        final_quote: str | None = None,
        escape_quote: str = "`",
        quote_case_sensitive_collations: bool = True,
        omit_schema: bool = False,
    ) -> None:
        super().__init__(
            dialect,
            initial_quote,
            final_quote,
            escape_quote,
            quote_case_sensitive_collations,
            omit_schema,
        )

    def _requires_quotes(self, value: str) -> bool:
        # Always quoted: Spark's reserved words depend on its ANSI mode, and quoting never
        # changes which object a name means (names match case-insensitively).
        return True


class TesseraCompiler(compiler.SQLCompiler):
    """Spark SQL: columns qualified by their table's name only, LIMIT and OFFSET as integer
    literals (not parameters)."""

    def visit_column(
        self,
        column: Any,
        add_to_result_map: Any = None,
        include_table: bool = True,
        result_map_targets: tuple[Any, ...] = (),
        ambiguous_table_name_map: Any = None,
        **kwargs: Any,
    ) -> str:
        name: str = super().visit_column(
            column,
            add_to_result_map=add_to_result_map,
            include_table=False,
            result_map_targets=result_map_targets,
            **kwargs,
        )
        table = column.table
        if table is None or not include_table or not table.named_with_column:
            return name
        # `db`.`t`.`c` does not resolve in Spark once the planner has bound `db`.`t` (it
        # names relations by alias); `t`.`c` does, FROM naming `db`.`t` as before.
        tablename = table.name
        if isinstance(tablename, elements._truncated_label):
            tablename = self._truncated_identifier("alias", tablename)
        return f"{self.preparer.quote(tablename)}.{name}"

    def limit_clause(self, select: Any, **kw: Any) -> str:
        text = ""
        limit, offset = select._limit, select._offset
        if limit is not None:
            text += f"\n LIMIT {int(limit)}"
        if offset is not None:
            text += f"\n OFFSET {int(offset)}"
        return text


class TesseraDDLCompiler(compiler.DDLCompiler):
    """``CREATE TABLE`` in Tessera's SQL: no defaults, no foreign keys, no indexes."""

    def get_column_specification(self, column: Any, **kw: Any) -> str:
        text = (
            f"{self.preparer.format_column(column)} "
            f"{self.dialect.type_compiler_instance.process(column.type, type_expression=column)}"
        )
        if not column.nullable:
            text += " NOT NULL"
        if column.comment is not None:
            text += f" COMMENT {self._literal(column.comment)}"
        return text

    def _literal(self, text: str) -> str:
        return str(self.sql_compiler.render_literal_value(text, sqltypes.String()))

    def visit_primary_key_constraint(self, constraint: Any, **kw: Any) -> str:
        if len(constraint) == 0:
            return ""
        columns = ", ".join(self.preparer.quote(c.name) for c in constraint)
        return f"PRIMARY KEY ({columns}) NOT ENFORCED"  # Tessera keeps it, Spark cannot enforce

    def visit_foreign_key_constraint(self, constraint: Any, **kw: Any) -> str:
        return ""  # Spark has none; the table is made without it

    def visit_unique_constraint(self, constraint: Any, **kw: Any) -> str:
        return ""

    def visit_create_index(
        self,
        create: Any,
        include_schema: Any = False,
        include_table_schema: Any = True,
        **kw: Any,
    ) -> str:
        return ""  # Spark has no indexes: TesseraDialect.do_execute skips the empty statement

    def visit_drop_index(self, drop: Any, **kw: Any) -> str:
        return ""

    def post_create_table(self, table: Any) -> str:
        if table.comment is None:
            return ""
        return f"\nCOMMENT {self._literal(table.comment)}"


# --- the dialect ---------------------------------------------------------------------------


class TesseraDialect(default.DefaultDialect):
    """Tessera over its REST API (``tessera.dbapi``)."""

    name = "tessera"
    driver = "rest"
    supports_statement_cache = True
    default_paramstyle = "named"
    statement_compiler = TesseraCompiler
    ddl_compiler = TesseraDDLCompiler
    type_compiler_cls = TesseraTypeCompiler
    preparer = TesseraIdentifierPreparer
    supports_native_boolean = True
    supports_native_decimal = True
    supports_alter = False
    supports_comments = True
    inline_comments = True
    supports_sequences = False
    supports_default_values = False
    supports_empty_insert = False
    # One row per VALUES: tessera.dbapi sends many rows as one upload (executemany).
    supports_multivalues_insert = False
    use_insertmanyvalues = False
    insert_returning = False
    update_returning = False
    delete_returning = False
    postfetch_lastrowid = False
    supports_server_side_cursors = False
    supports_is_distinct_from = True
    requires_name_normalize = False
    max_identifier_length = 255

    @classmethod
    def import_dbapi(cls) -> ModuleType:
        return dbapi

    def create_connect_args(self, url: URL) -> tuple[list[Any], dict[str, Any]]:
        """``tessera://user:password@host:port/catalog/database`` (``token`` as the user name
        and an API token as the password, or ``?token=``; ``?protocol=https`` for TLS)."""
        query = dict(url.query)
        protocol = str(query.pop("protocol", "http"))
        port = f":{url.port}" if url.port else ""
        kwargs: dict[str, Any] = {"url": f"{protocol}://{url.host or 'localhost'}{port}"}
        token = query.pop("token", None)
        if url.username == "token" and url.password:
            token = url.password
        if token:
            kwargs["token"] = str(token)
        elif url.username:
            kwargs["username"] = url.username
            kwargs["password"] = url.password or ""
        parts = [p for p in (url.database or "").split("/") if p]
        if len(parts) > 2:
            raise sa_exc.ArgumentError("The URL's path is /catalog or /catalog/database.")
        if parts:
            kwargs["catalog"] = parts[0]
        if len(parts) == 2:
            kwargs["database"] = parts[1]
        if query:
            raise sa_exc.ArgumentError(f"Unknown URL options: {', '.join(sorted(query))}.")
        return [], kwargs

    # --- the connection ------------------------------------------------------------------

    def do_execute(self, cursor: Any, statement: str, parameters: Any, context: Any = None) -> None:
        if not statement.strip():
            return  # an index or foreign key the DDL compiler left out
        cursor.execute(statement, parameters)

    def do_execute_no_params(self, cursor: Any, statement: str, context: Any = None) -> None:
        self.do_execute(cursor, statement, None, context)

    def do_rollback(self, dbapi_connection: Any) -> None:
        """Nothing to undo: every statement committed on its own."""

    def do_commit(self, dbapi_connection: Any) -> None:
        """Nothing to commit: every statement committed on its own."""

    def do_ping(self, dbapi_connection: Any) -> bool:
        dbapi_connection.ping()  # a REST call, not a Spark job
        return True

    def is_disconnect(self, e: Any, connection: Any, cursor: Any) -> bool:
        return isinstance(e, dbapi.OperationalError) and e.code in (
            "CONNECTION_FAILED",
            "NOT_AUTHENTICATED",
            "TOKEN_EXPIRED",
        )

    def get_isolation_level(self, dbapi_connection: Any) -> Any:
        return "AUTOCOMMIT"

    def get_default_isolation_level(self, dbapi_conn: Any) -> Any:
        return "AUTOCOMMIT"

    def get_isolation_level_values(self, dbapi_conn: Any) -> list[Any]:
        return ["AUTOCOMMIT"]

    def set_isolation_level(self, dbapi_connection: Any, level: Any) -> None:
        if level != "AUTOCOMMIT":
            raise sa_exc.ArgumentError("Tessera runs every statement in AUTOCOMMIT.")

    def _get_server_version_info(self, connection: Connection) -> tuple[int, ...]:
        return ()

    def _get_default_schema_name(self, connection: Connection) -> str:
        return _dbapi_connection(connection).current_database() or ""

    # --- reflection (Tessera's catalog endpoints) ----------------------------------------

    def _schema(self, connection: Connection, schema: str | None) -> str:
        name = schema or self.default_schema_name or self._get_default_schema_name(connection)
        if not name:
            raise sa_exc.InvalidRequestError(
                "No schema given and the connection has no current database "
                "(tessera://…/catalog/database)."
            )
        return str(name)

    def _relation(
        self, connection: Connection, table_name: str, schema: str | None
    ) -> dict[str, Any]:
        """The table's or view's JSON; NoSuchTableError when the user sees neither."""
        conn = _dbapi_connection(connection)
        base = f"/databases/{segment(self._schema(connection, schema))}"
        for kind in ("tables", "views"):
            try:
                found = conn.catalog_object(f"{base}/{kind}/{segment(table_name)}")
            except dbapi.ProgrammingError as exc:
                if exc.code != "NOT_FOUND":
                    raise
                continue
            if found.get("status", "active") == "active":
                return found
        raise sa_exc.NoSuchTableError(table_name)

    def _names(self, connection: Connection, schema: str | None, kind: str) -> list[str]:
        conn = _dbapi_connection(connection)
        path = f"/databases/{segment(self._schema(connection, schema))}/{kind}"
        return [
            str(item["name"])
            for item in conn.catalog_items(path)
            if item.get("status", "active") == "active"  # a CTAS's staged table is not yet
        ]

    @reflection.cache
    def get_schema_names(self, connection: Connection, **kw: Any) -> list[str]:
        return [
            str(item["name"]) for item in _dbapi_connection(connection).catalog_items("/databases")
        ]

    @reflection.cache
    def get_table_names(
        self, connection: Connection, schema: str | None = None, **kw: Any
    ) -> list[str]:
        return self._names(connection, schema, "tables")

    @reflection.cache
    def get_view_names(
        self, connection: Connection, schema: str | None = None, **kw: Any
    ) -> list[str]:
        return self._names(connection, schema, "views")

    def get_temp_table_names(
        self, connection: Connection, schema: str | None = None, **kw: Any
    ) -> list[str]:
        return []  # temporary objects are the session's, never reflected

    def get_temp_view_names(
        self, connection: Connection, schema: str | None = None, **kw: Any
    ) -> list[str]:
        return []

    def has_table(
        self, connection: Connection, table_name: str, schema: str | None = None, **kw: Any
    ) -> bool:
        try:
            self._relation(connection, table_name, schema)
        except sa_exc.NoSuchTableError:
            return False
        except dbapi.ProgrammingError as exc:
            if exc.code != "PERMISSION_DENIED":
                raise
            # The server says it exists but is not the user's to use: the name is taken.
        return True

    def has_schema(self, connection: Connection, schema_name: str, **kw: Any) -> bool:
        return schema_name.lower() in {s.lower() for s in self.get_schema_names(connection)}

    @reflection.cache
    def get_columns(
        self, connection: Connection, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[Any]:
        found = self._relation(connection, table_name, schema)
        resolved = found.get("resolved_schema") or found.get("schema") or {}
        columns: list[Any] = []
        for column in resolved.get("columns") or []:
            data_type = str(column.get("data_type") or "")
            entry: dict[str, Any] = {
                "name": column["name"],
                "type": spark_type(data_type) if data_type else sqltypes.NullType(),
                "nullable": bool(column.get("nullable", not _not_null(data_type))),
                "default": None,
                "autoincrement": False,
                "comment": column.get("comment"),
            }
            if column.get("kind") == "computed" and column.get("expression"):
                entry["computed"] = {"sqltext": column["expression"], "persisted": False}
            columns.append(entry)
        return columns

    @reflection.cache
    def get_pk_constraint(
        self, connection: Connection, table_name: str, schema: str | None = None, **kw: Any
    ) -> Any:
        found = self._relation(connection, table_name, schema)
        resolved = found.get("resolved_schema") or found.get("schema") or {}
        key = resolved.get("primary_key") or {}
        return {"constrained_columns": list(key.get("columns") or []), "name": key.get("name")}

    def get_foreign_keys(
        self, connection: Connection, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[Any]:
        return []

    def get_indexes(
        self, connection: Connection, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[Any]:
        return []

    def get_unique_constraints(
        self, connection: Connection, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[Any]:
        return []

    @reflection.cache
    def get_table_comment(
        self, connection: Connection, table_name: str, schema: str | None = None, **kw: Any
    ) -> Any:
        comment = self._relation(connection, table_name, schema).get("comment")
        return {"text": comment or None}

    @reflection.cache
    def get_view_definition(
        self, connection: Connection, view_name: str, schema: str | None = None, **kw: Any
    ) -> str:
        found = self._relation(connection, view_name, schema)
        if found.get("kind") != "view":
            raise sa_exc.NoSuchTableError(view_name)
        return str(found.get("query") or "")


def _dbapi_connection(connection: Connection) -> dbapi.Connection:
    raw = connection.connection.dbapi_connection
    assert isinstance(raw, dbapi.Connection)
    return raw


dialect = TesseraDialect
