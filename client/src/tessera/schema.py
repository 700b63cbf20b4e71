"""FLIP-164 schemas and table descriptors, mapped exactly onto the catalog's JSON.

A :class:`Schema` is what a user declares (``schema`` of ``GET …/tables/{name}``); a
:class:`ResolvedSchema` is what the server derived (``resolved_schema``: every column typed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError as SqlglotParseError

from tessera.errors import ParseError, ValidationError
from tessera.sql import DIALECT, parse_expression, quote_identifier, string_literal

ColumnKind = Literal["physical", "computed", "metadata"]


def _check_type(data_type: str, column: str) -> str:
    if not isinstance(data_type, str) or not data_type.strip():
        raise ValidationError(
            "VALIDATION_ERROR", f"Column {column!r} needs a data type.", {"column": column}
        )
    try:
        exp.DataType.build(data_type, dialect=DIALECT)
    except (SqlglotParseError, ValueError) as exc:
        raise ParseError(
            "PARSE_ERROR",
            f"{data_type!r} is not a Spark SQL data type (column {column!r}).",
            {"column": column, "text": data_type},
        ) from exc
    return data_type


@dataclass(frozen=True)
class Column:
    """One declared column: physical, computed (``expression``) or metadata."""

    name: str
    kind: ColumnKind = "physical"
    data_type: str | None = None
    expression: str | None = None
    metadata_key: str | None = None
    virtual: bool = False
    comment: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The catalog's JSON form of the column."""
        body: dict[str, Any] = {"name": self.name, "kind": self.kind}
        if self.kind == "computed":
            body["expression"] = self.expression
        else:
            body["data_type"] = self.data_type
        if self.kind == "metadata":
            body["metadata_key"] = self.metadata_key
            body["virtual"] = self.virtual
        if self.comment is not None:
            body["comment"] = self.comment
        return body

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> Column:
        """A column from the catalog's JSON."""
        kind = body.get("kind", "physical")
        return cls(
            name=body["name"],
            kind=kind,
            data_type=body.get("data_type") if kind != "computed" else None,
            expression=body.get("expression") if kind == "computed" else None,
            metadata_key=body.get("metadata_key") if kind == "metadata" else None,
            virtual=bool(body.get("virtual", False)) if kind == "metadata" else False,
            comment=body.get("comment"),
        )

    def ddl(self) -> str:
        """The column as a DDL element."""
        name = quote_identifier(self.name)
        if self.kind == "computed":
            text = f"{name} AS {self.expression}"
        elif self.kind == "metadata":
            text = f"{name} {self.data_type} METADATA"
            if self.metadata_key is not None:
                text += f" FROM {string_literal(self.metadata_key)}"
            if self.virtual:
                text += " VIRTUAL"
        else:
            text = f"{name} {self.data_type}"
        if self.comment is not None:
            text += f" COMMENT {string_literal(self.comment)}"
        return text


@dataclass(frozen=True)
class Watermark:
    """A watermark: the rowtime column and its SQL expression."""

    column: str
    expression: str


@dataclass(frozen=True)
class PrimaryKey:
    """A declared primary key (``name`` None: the server names it)."""

    name: str | None
    columns: tuple[str, ...]


@dataclass(frozen=True)
class Schema:
    """A declared table schema (FLIP-164); build one with :meth:`Schema.new_builder`."""

    columns: tuple[Column, ...] = ()
    watermarks: tuple[Watermark, ...] = ()
    primary_key: PrimaryKey | None = None

    @staticmethod
    def new_builder() -> SchemaBuilder:
        """A builder for a new schema."""
        return SchemaBuilder()

    @property
    def column_names(self) -> list[str]:
        """The names of the declared columns, in order."""
        return [column.name for column in self.columns]

    def to_json(self) -> dict[str, Any]:
        """The catalog's JSON form (``schema`` of a table)."""
        primary_key = None
        if self.primary_key is not None:
            primary_key = {"name": self.primary_key.name, "columns": list(self.primary_key.columns)}
        return {
            "columns": [column.to_json() for column in self.columns],
            "watermarks": [
                {"column": w.column, "expression": w.expression} for w in self.watermarks
            ],
            "primary_key": primary_key,
        }

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> Schema:
        """A schema from the catalog's JSON (``GET …/tables/{name}`` → ``schema``)."""
        key = body.get("primary_key")
        return cls(
            columns=tuple(Column.from_json(c) for c in body.get("columns", [])),
            watermarks=tuple(
                Watermark(w["column"], w["expression"]) for w in body.get("watermarks") or []
            ),
            primary_key=PrimaryKey(key.get("name"), tuple(key["columns"])) if key else None,
        )

    def ddl_elements(self) -> list[str]:
        """The column list of a ``CREATE TABLE`` (columns, watermarks, primary key)."""
        elements = [column.ddl() for column in self.columns]
        for watermark in self.watermarks:
            elements.append(
                f"WATERMARK FOR {quote_identifier(watermark.column)} AS {watermark.expression}"
            )
        if self.primary_key is not None:
            key = self.primary_key
            text = f"CONSTRAINT {quote_identifier(key.name)} " if key.name else ""
            columns = ", ".join(quote_identifier(c) for c in key.columns)
            elements.append(f"{text}PRIMARY KEY ({columns}) NOT ENFORCED")
        return elements


class SchemaBuilder:
    """Builds a :class:`Schema` column by column (PyFlink's ``Schema.new_builder()``)."""

    def __init__(self) -> None:
        self._columns: list[Column] = []
        self._watermarks: list[Watermark] = []
        self._primary_key: PrimaryKey | None = None

    def column(self, name: str, data_type: str) -> SchemaBuilder:
        """A physical column of a Spark SQL type (``"DECIMAL(10, 2)"``)."""
        self._columns.append(Column(name, "physical", data_type=_check_type(data_type, name)))
        return self

    def column_by_expression(self, name: str, sql_expr: str) -> SchemaBuilder:
        """A computed column: ``name AS sql_expr``."""
        parse_expression(sql_expr)
        self._columns.append(Column(name, "computed", expression=sql_expr))
        return self

    def column_by_metadata(
        self,
        name: str,
        data_type: str,
        metadata_key: str | None = None,
        is_virtual: bool = False,
    ) -> SchemaBuilder:
        """A metadata column (``file_path``, ``file_size``…; the key defaults to the name)."""
        self._columns.append(
            Column(
                name,
                "metadata",
                data_type=_check_type(data_type, name),
                metadata_key=metadata_key,
                virtual=is_virtual,
            )
        )
        return self

    def watermark(self, column: str, sql_expr: str) -> SchemaBuilder:
        """A watermark on a timestamp column."""
        parse_expression(sql_expr)
        self._watermarks.append(Watermark(column, sql_expr))
        return self

    def primary_key(self, *columns: str) -> SchemaBuilder:
        """A primary key (NOT ENFORCED) named by the server."""
        return self.primary_key_named(None, *columns)

    def primary_key_named(self, name: str | None, *columns: str) -> SchemaBuilder:
        """A named primary key."""
        if not columns:
            raise ValidationError("VALIDATION_ERROR", "A primary key needs at least one column.")
        self._primary_key = PrimaryKey(name, tuple(columns))
        return self

    def from_schema(self, schema: Schema) -> SchemaBuilder:
        """Start from the columns, watermarks and key of another schema."""
        self._columns.extend(schema.columns)
        self._watermarks.extend(schema.watermarks)
        self._primary_key = schema.primary_key
        return self

    def build(self) -> Schema:
        """The schema."""
        return Schema(tuple(self._columns), tuple(self._watermarks), self._primary_key)


@dataclass(frozen=True)
class ResolvedColumn:
    """A column of a resolved schema: every column has a type."""

    name: str
    data_type: str
    kind: ColumnKind = "physical"
    nullable: bool | None = None
    expression: str | None = None
    metadata_key: str | None = None
    virtual: bool = False


@dataclass(frozen=True)
class ResolvedSchema:
    """The columns a table, view or query has (``resolved_schema``, or a result's columns)."""

    columns: tuple[ResolvedColumn, ...]
    watermarks: tuple[dict[str, Any], ...] = ()
    primary_key: dict[str, Any] | None = None

    @property
    def column_names(self) -> list[str]:
        """Names of the columns, in order."""
        return [column.name for column in self.columns]

    @property
    def data_types(self) -> list[str]:
        """Spark SQL types of the columns, in order."""
        return [column.data_type for column in self.columns]

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> ResolvedSchema:
        """From a ``resolved_schema`` or a result's ``{"columns": [{"name", "data_type",
        "nullable"}]}`` (a result's ``data_type`` has no top-level NOT NULL: see ``nullable``)."""
        return cls(
            columns=tuple(
                ResolvedColumn(
                    name=c["name"],
                    data_type=c.get("data_type") or "",
                    kind=c.get("kind", "physical"),
                    nullable=c.get("nullable"),
                    expression=c.get("expression"),
                    metadata_key=c.get("metadata_key"),
                    virtual=bool(c.get("virtual", False)),
                )
                for c in body.get("columns", [])
            ),
            watermarks=tuple(body.get("watermarks") or ()),
            primary_key=body.get("primary_key"),
        )

    def __str__(self) -> str:
        return "(\n" + ",\n".join(f"  `{c.name}` {_ddl(c)}" for c in self.columns) + "\n)"


def _ddl(column: ResolvedColumn) -> str:
    """The column's type with its NOT NULL (a result's ``data_type`` carries it apart)."""
    text = column.data_type
    if column.nullable is False and not text.upper().endswith(" NOT NULL"):
        return text + " NOT NULL"
    return text


@dataclass(frozen=True)
class TableDescriptor:
    """How a table is made: schema, options (connector or managed format), partitions, comment.

    ``options`` are exactly the catalog table's ``options``: ``{"connector": fmt, "path": …}``
    for an external table, ``{"format": fmt}`` for a managed one.
    """

    schema: Schema | None = None
    options: dict[str, str] = field(default_factory=dict)
    partition_by: tuple[str, ...] = ()
    comment: str = ""

    @staticmethod
    def for_connector(fmt: str) -> TableDescriptorBuilder:
        """An external table read/written by a connector (``parquet``, ``csv``…) at a ``path``."""
        return TableDescriptorBuilder({"connector": fmt})

    @staticmethod
    def for_managed(fmt: str = "parquet") -> TableDescriptorBuilder:
        """A managed table (its data lives in the warehouse) stored in ``fmt``."""
        return TableDescriptorBuilder({"format": fmt})

    @property
    def managed(self) -> bool:
        """Whether the table is managed (no ``connector``/``path``)."""
        return "connector" not in self.options and "path" not in self.options

    def to_json(self) -> dict[str, Any]:
        """The body of ``POST …/tables`` (without the name)."""
        body: dict[str, Any] = {
            "options": dict(self.options),
            "partition_by": list(self.partition_by),
            "comment": self.comment,
        }
        if self.schema is not None:
            body["schema"] = self.schema.to_json()
        return body

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> TableDescriptor:
        """A descriptor from a catalog table (``GET …/tables/{name}``)."""
        schema = body.get("schema")
        return cls(
            schema=Schema.from_json(schema) if schema else None,
            options=dict(body.get("options") or {}),
            partition_by=tuple(body.get("partition_by") or ()),
            comment=body.get("comment") or "",
        )

    def ddl_clauses(self) -> str:
        """``USING … OPTIONS (…) COMMENT … PARTITIONED BY (…)`` of a ``CREATE TABLE``."""
        options = dict(self.options)
        fmt = options.pop("connector", None) or options.pop("format", None)
        text = ""
        if fmt is not None:
            try:
                sqlglot.parse_one(fmt, dialect=DIALECT, into=exp.Identifier)
                ok = fmt.replace("_", "").isalnum()
            except SqlglotParseError:
                ok = False
            if not ok:
                raise ValidationError("VALIDATION_ERROR", f"{fmt!r} is not a format name.")
            text += f" USING {fmt}"
        if options:
            pairs = ", ".join(
                f"{string_literal(k)} = {string_literal(v)}" for k, v in options.items()
            )
            text += f" OPTIONS ({pairs})"
        if self.comment:
            text += f" COMMENT {string_literal(self.comment)}"
        if self.partition_by:
            text += f" PARTITIONED BY ({', '.join(quote_identifier(c) for c in self.partition_by)})"
        return text


class TableDescriptorBuilder:
    """Builds a :class:`TableDescriptor`."""

    def __init__(self, options: dict[str, str]) -> None:
        self._options = dict(options)
        self._schema: Schema | None = None
        self._partition_by: tuple[str, ...] = ()
        self._comment = ""

    def schema(self, schema: Schema) -> TableDescriptorBuilder:
        """The table's declared schema."""
        self._schema = schema
        return self

    def option(self, key: str, value: str) -> TableDescriptorBuilder:
        """One table option (values are strings; ``path`` for an external table)."""
        self._options[key] = str(value)
        return self

    def format(self, fmt: str) -> TableDescriptorBuilder:
        """The storage format (for a connector table it is the connector)."""
        key = "connector" if "connector" in self._options else "format"
        self._options[key] = fmt
        return self

    def partitioned_by(self, *columns: str) -> TableDescriptorBuilder:
        """Partition columns."""
        self._partition_by = tuple(columns)
        return self

    def comment(self, text: str) -> TableDescriptorBuilder:
        """The table's comment."""
        self._comment = text
        return self

    def build(self) -> TableDescriptor:
        """The descriptor."""
        return TableDescriptor(self._schema, dict(self._options), self._partition_by, self._comment)
