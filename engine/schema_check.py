"""A worker answers a ``SchemaCheck`` (``sessions.analysis`` waits for it): Spark's analyzer
types a table's computed columns and watermarks, or derives a view's schema, with the very
code SQL's CREATE TABLE and CREATE VIEW use (``SparkExpressionTyper``,
``ViewSchemaDeriver``, ``SchemaResolver`` through ``catalog.services.resolve_schema``).

Nothing runs a Spark job: the expressions and the query are only analysed. The answer is
written in the row and announced; a question nobody waits for any more (its row deleted)
is dropped.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from catalog import services as catalog_services
from core import datatypes as dt
from core.errors import CoreError, SchemaError
from core.planner import Plan
from core.schema import ComputedColumn, ExpressionTyper, ResolvedColumn, Schema
from engine import errors, registration, spark_session
from engine.typing import SparkExpressionTyper, ViewSchemaDeriver
from jobs import notify
from jobs.models import SchemaCheck

log = logging.getLogger(__name__)


class FieldNamingTyper:
    """An ``ExpressionTyper`` that adds the schema field to Spark's refusal of an
    expression (``columns[i].expression`` or ``watermarks[k].expression``), so a form can
    show it at that field; the message is the typer's own."""

    def __init__(self, typer: ExpressionTyper, schema: Schema) -> None:
        self.typer = typer
        self.schema = schema

    def _field(self, column: str, expressions: Mapping[str, str]) -> str | None:
        key = column.lower()
        for index, declared in enumerate(self.schema.columns):
            if (
                isinstance(declared, ComputedColumn)
                and declared.name.lower() == key
                and expressions.get(column) == declared.expression
            ):
                return f"columns[{index}].expression"
        for index, watermark in enumerate(self.schema.watermarks):
            if watermark.column.lower() == key:
                return f"watermarks[{index}].expression"
        return None

    def type_expressions(
        self, columns: Sequence[ResolvedColumn], expressions: Mapping[str, str]
    ) -> Mapping[str, dt.DataType]:
        try:
            return self.typer.type_expressions(columns, expressions)
        except SchemaError as exc:
            column = exc.details.get("column")
            field = self._field(str(column), expressions) if column is not None else None
            if field is not None and "field" not in exc.details:
                exc.details = {**exc.details, "field": field}
            raise


def _resolve_table(spark: Any, request: Mapping[str, Any]) -> dict[str, Any]:
    schema = Schema.from_dict(request.get("schema"))
    typer = FieldNamingTyper(SparkExpressionTyper(spark), schema)
    resolved = catalog_services.resolve_schema(schema, typer)
    return {"resolved": resolved.to_dict()}


def _derive_view(spark: Any, request: Mapping[str, Any]) -> dict[str, Any]:
    plan = Plan.from_dict(request.get("plan") or {})
    aliases = registration.alias_names(plan)
    try:
        with errors.known_locations(errors.plan_locations(plan)):
            registration.register_plan(spark, plan, {}, settings.TESSERA_UDF_PACKAGES)
            schema = ViewSchemaDeriver(spark, plan.sql)()
    except CoreError as exc:
        # Spark speaks of the plan's aliases; the user wrote the tables' names.
        for alias, name in sorted(aliases.items(), key=lambda item: -len(item[0])):
            exc.message = exc.message.replace(f"`{alias}`", name).replace(alias, name)
        raise
    return {"schema": schema.to_dict()}


def answer_check(check_id: Any) -> bool:
    """Answer the ``SchemaCheck`` ``check_id``; False when nobody waits for it any more."""
    check = SchemaCheck.objects.filter(pk=check_id, answer__isnull=True).first()
    if check is None:
        log.info("schema check %s: nobody waits for it any more; dropped", check_id)
        return False
    answer: dict[str, Any]
    spark = spark_session.new_job_session()
    try:
        if check.kind == SchemaCheck.KIND_TABLE:
            answer = _resolve_table(spark, check.request)
        elif check.kind == SchemaCheck.KIND_VIEW:
            answer = _derive_view(spark, check.request)
        else:
            raise CoreError(f"Unknown schema check '{check.kind}'.")
    except Exception as exc:
        failure = exc if isinstance(exc, CoreError) else spark_session.failure_of(spark, exc)
        answer = {"error": errors.error_from_exception(failure)}
        if not isinstance(exc, CoreError):
            log.warning("schema check %s failed: %s", check_id, answer["error"]["message"])
    with transaction.atomic():
        saved = SchemaCheck.objects.filter(pk=check_id).update(
            answer=answer, answered_at=timezone.now()
        )
        notify.announce(check_id, notify.STATUS)
    return bool(saved)
