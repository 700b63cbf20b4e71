"""How the worker reads a table (``table_plan``: format, path, options, schema and every
column), the rule for a column's expression, and the error for a table still being created.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.datatypes import read_schema_type
from core.errors import CoreError
from core.identifiers import quote_part, quote_path
from core.planner.errors import ForbiddenSql
from core.planner.functions import is_builtin
from core.planner.model import Relation, UploadLookup
from core.planner.plan import ColumnPlan, RelationPlan
from core.planner.references import analyze_expression
from core.planner.sources import is_managed_delta, stored_source
from core.planner.streaming import declared_watermark


def staged_error(relation: Relation) -> CoreError:
    """A ``staged`` table (a CTAS job is creating it) cannot be used yet."""
    ident = relation.identifier
    details: dict[str, Any] = {"identifier": list(ident.parts)}
    if relation.staged_by_job is None:
        return CoreError(
            f"Table {ident.quoted()} is being created and cannot be read yet.", details=details
        )
    details["job"] = relation.staged_by_job
    return CoreError(
        f"Table {ident.quoted()} is being created by job {relation.staged_by_job} and cannot "
        "be read yet.",
        details=details,
    )


def check_column_expression(expression: str, column: str, origin: str, offset: int) -> None:
    """A computed column or watermark expression may call built-in functions only and
    read no table: at query time it runs inside the table's own projection."""
    _, refs = analyze_expression(expression, origin, offset)
    if refs.tables:
        shown = quote_path(refs.tables[0].parts)
        raise ForbiddenSql(
            f"The expression of column `{column}` reads {shown}: column expressions cannot "
            "read tables."
        )
    for call in refs.functions:
        if len(call.parts) > 1 or not is_builtin(call.parts[0]):
            raise CoreError(
                f"The expression of column `{column}` calls {quote_path(call.parts)}, but column "
                "expressions can only call Spark's built-in functions."
            )


def table_plan(
    alias: str,
    table: Relation,
    roots: Sequence[str],
    uploads: UploadLookup | None = None,
    pipeline_job: str | None = None,
) -> RelationPlan:
    """How the worker reads (or writes) a table: format, path, options, the physical
    schema and every column in declared order (computed and metadata columns included).
    ``uploads`` and ``pipeline_job`` (``PlanContext``): what a temporary table over an
    upload or a pipeline's DataFrame may read."""
    source = stored_source(
        table.options, table.location, roots, table.identifier.quoted(), uploads, pipeline_job
    )
    physical: list[str] = []
    columns: list[ColumnPlan] = []
    schema = table.resolved_schema
    for column in schema.columns if schema is not None else ():
        if column.kind == "physical" and column.data_type is not None:
            read_type = read_schema_type(column.data_type)
            physical.append(f"{quote_part(column.name)} {read_type.sql()}")
            not_null = not column.data_type.nullable
            columns.append(ColumnPlan(column.name, "physical", not_null=not_null))
        elif column.kind == "computed":
            expression = column.expression or ""
            check_column_expression(expression, column.name, expression, 0)
            columns.append(ColumnPlan(column.name, "computed", expression=expression))
        elif column.kind == "metadata":
            key = column.metadata_key or column.name.lower()
            columns.append(ColumnPlan(column.name, "metadata", metadata_key=key))
    return RelationPlan(
        alias,
        table.identifier.parts,
        "table",
        format=source.format,
        path=source.path,
        options=dict(source.options),
        physical_schema=", ".join(physical),
        columns=tuple(columns),
        temporary=table.temporary,
        watermark=declared_watermark(schema),
        time_travel=managed_delta_version(table),
    )


# A managed Delta table no job has written yet: read as no rows (its log may already exist).
UNWRITTEN = {"unwritten": "true"}


def managed_delta_version(table: Relation) -> dict[str, str] | None:
    """A managed Delta table is read at the version Tessera's database records, never the
    log's latest (a commit in flight is not visible until its job is FINISHED)."""
    if not is_managed_delta(table):
        return None
    if table.delta_version is None:
        return dict(UNWRITTEN)
    return {"versionAsOf": str(table.delta_version)}
