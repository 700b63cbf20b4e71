"""Spark's analyzer as Tessera's type checker: expression typing and view schemas.

Nothing here runs a Spark job: an empty DataFrame with the given columns, or the view's
query, is only analysed (``.schema``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pyspark.errors import PySparkException
from pyspark.sql import SparkSession
from pyspark.sql import types as st

from core import datatypes as dt
from core.errors import CoreError, DataTypeError, SchemaError
from core.schema import PhysicalColumn, ResolvedColumn, Schema
from engine import sqlguard
from engine.errors import spark_message


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def to_tessera_type(spark_type: st.DataType, nullable: bool = True) -> dt.DataType:
    """Map a Spark DataType to Tessera's; raises DataTypeError for types Tessera lacks
    (VOID, VARIANT, CALENDAR INTERVAL, …)."""
    if isinstance(spark_type, st.StructType):
        return dt.StructType(
            tuple(
                dt.StructField(
                    f.name,
                    to_tessera_type(f.dataType, f.nullable),
                    comment=(f.metadata or {}).get("comment"),
                )
                for f in spark_type.fields
            ),
            nullable=nullable,
        )
    if isinstance(spark_type, st.ArrayType):
        return dt.ArrayType(
            to_tessera_type(spark_type.elementType, spark_type.containsNull), nullable=nullable
        )
    if isinstance(spark_type, st.MapType):
        return dt.MapType(
            to_tessera_type(spark_type.keyType, False),
            to_tessera_type(spark_type.valueType, spark_type.valueContainsNull),
            nullable=nullable,
        )
    return dt.parse_data_type(spark_type.simpleString()).with_nullable(nullable)


def type_text(spark_type: st.DataType) -> str:
    """A result column's type: Tessera's canonical text where Tessera has the type, else
    Spark's own name in upper case (``VOID``, ``VARIANT``)."""
    try:
        return to_tessera_type(spark_type).sql()
    except CoreError:
        return spark_type.simpleString().upper()


def nullable_inside(data_type: st.DataType) -> st.DataType:
    """``data_type`` with every field, element and value inside it nullable."""
    if isinstance(data_type, st.StructType):
        return st.StructType(
            [
                st.StructField(f.name, nullable_inside(f.dataType), True, f.metadata)
                for f in data_type
            ]
        )
    if isinstance(data_type, st.ArrayType):
        return st.ArrayType(nullable_inside(data_type.elementType), True)
    if isinstance(data_type, st.MapType):
        return st.MapType(nullable_inside(data_type.keyType), nullable_inside(data_type.valueType))
    return data_type


def result_columns(schema: st.StructType) -> list[dict[str, Any]]:
    """A result's column descriptions as Spark analysed them: ``data_type`` holds the nested
    fields', elements' and values' NOT NULL, ``nullable`` the column's own."""
    return [
        {"name": f.name, "data_type": type_text(f.dataType), "nullable": f.nullable}
        for f in schema.fields
    ]


def _column_ddl(column: ResolvedColumn) -> str:
    assert column.data_type is not None
    return f"{_quote(column.name)} {column.data_type.sql()}"


class SparkExpressionTyper:
    """``core.schema.ExpressionTyper`` backed by Spark's analyzer (no job runs)."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark

    def type_expressions(
        self, columns: Sequence[ResolvedColumn], expressions: Mapping[str, str]
    ) -> Mapping[str, dt.DataType]:
        typed = [c for c in columns if c.data_type is not None]
        ddl = ", ".join(_column_ddl(c) for c in typed)
        frame: Any = self.spark.createDataFrame([], ddl) if ddl else self.spark.range(0)
        result: dict[str, dt.DataType] = {}
        guard = sqlguard.guard(self.spark)
        for name, expression in expressions.items():
            try:
                projected = guard.select_expr(frame, [f"{expression} AS {_quote(name)}"])
                field = projected.schema.fields[0]
            except PySparkException as exc:
                if str(exc.getCondition() or "").startswith("MISSING_GROUP_BY"):
                    _check_row_by_row(frame, name, expression)  # an aggregate among columns
                details: dict[str, Any] = {"column": name}
                unresolved = _unresolved_column(exc)
                if unresolved is not None:
                    details["unresolved"] = unresolved
                raise SchemaError(
                    f"The expression of column `{name}` is not valid: {spark_message(exc)}",
                    details=details,
                ) from None
            _check_row_by_row(frame, name, expression)
            try:
                result[name] = to_tessera_type(field.dataType, field.nullable)
            except DataTypeError:
                raise SchemaError(
                    f"The expression of column `{name}` has type "
                    f"{field.dataType.simpleString().upper()}, which a table column cannot have.",
                    details={"column": name},
                ) from None
        return result


def _unresolved_column(exc: PySparkException) -> str | None:
    """The column name of Spark's ``UNRESOLVED_COLUMN`` (unquoted), else None."""
    if not str(exc.getCondition() or "").startswith("UNRESOLVED_COLUMN"):
        return None
    shown = str((exc.getMessageParameters() or {}).get("objectName") or "")
    if len(shown) >= 2 and shown[0] == shown[-1] == "`":
        return shown[1:-1].replace("``", "`")
    return shown or None


# What Spark says when an expression is used where only one row's values may be read (a
# WHERE clause), by kind: the kinds a computed column cannot call.
_NOT_ROW_BY_ROW = (
    ("INVALID_WHERE_CONDITION", "an aggregate function"),
    ("WINDOW_FUNCTION_NOT_ALLOWED_IN_CLAUSE", "a window function"),
    ("UNSUPPORTED_GENERATOR", "a generator function"),
)


def _check_row_by_row(frame: Any, name: str, expression: str) -> None:
    """A computed column is computed from its own row alone. ``SELECT sum(a)`` alone is
    valid (a global aggregate), but a table's projection reads the other columns too, so
    every read would fail (``MISSING_GROUP_BY``); window functions and generators change
    the rows. Spark's analyzer refuses all three in a WHERE clause: the expression is
    analysed there (only analysed) and such a refusal becomes the schema's."""
    from pyspark.sql import functions

    try:
        _ = frame.where(functions.expr(expression).isNull() | functions.lit(True)).schema
    except PySparkException as exc:
        condition = str(exc.getCondition() or "")
        for prefix, kind in _NOT_ROW_BY_ROW:
            if condition.startswith(prefix):
                found = (exc.getMessageParameters() or {}).get("expressionList")
                what = f"{kind} ({found})" if found else kind
                raise SchemaError(
                    f"The expression of column `{name}` calls {what}: a computed column is "
                    "computed from the values of its own row, so it cannot aggregate rows, "
                    "use a window or generate rows. Compute it in a query or a view.",
                    details={"column": name},
                ) from None
        raise SchemaError(
            f"The expression of column `{name}` is not valid: {spark_message(exc)}",
            details={"column": name},
        ) from None


def schema_of_query(spark: SparkSession, sql: str) -> Schema:
    """The schema Spark derives for a query (analysis only), as physical columns."""
    try:
        struct = sqlguard.guard(spark).sql(sql).schema
    except PySparkException as exc:
        raise CoreError(f"The view's query is not valid: {spark_message(exc)}") from None
    columns: list[PhysicalColumn] = []
    for field in struct.fields:
        try:
            data_type = to_tessera_type(field.dataType, field.nullable)
        except DataTypeError:
            raise CoreError(
                f"View column `{field.name}` has type {field.dataType.simpleString().upper()}; "
                "cast it to a concrete type (e.g. CAST(NULL AS STRING)).",
                details={"column": field.name},
            ) from None
        columns.append(PhysicalColumn(field.name, data_type))
    return Schema(tuple(columns))


class ViewSchemaDeriver:
    """Callable handed to ``sessions.commands.run_command``: derives a view's schema in the job's
    Spark session, where the plan's relations are registered. Called with the query (the
    plan's rewritten ``sql``) or with no argument for the plan's own query."""

    def __init__(self, spark: SparkSession, default_sql: str = "") -> None:
        self.spark = spark
        self.default_sql = default_sql

    def __call__(self, sql: str | None = None) -> Schema:
        return schema_of_query(self.spark, sql or self.default_sql)


DeriveViewSchema = Callable[..., Schema]
