"""Typing the computed columns and watermarks of a table created through the REST API.

The web process has no Spark, so ``POST …/tables`` stores a schema with
``expressions_resolved: false`` (computed columns without ``data_type``). The web side then
sends the Celery task ``tessera.type_table_expressions`` with the table's id (e.g.
``current_app.send_task("tessera.type_table_expressions", args=[table.id])`` after commit);
a worker runs ``retype_table`` below: it resolves the declared schema again with Spark's
analyzer and saves ``resolved_schema`` and the table's ``Column`` rows.

A schema edited meanwhile is left alone (its own task types it). An expression Spark
refuses leaves the table as it was (untyped) and is logged; REST callers see it stay
``expressions_resolved: false``.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction

from catalog import services as catalog_services
from catalog.models import Table
from core.errors import CoreError
from core.schema import ExpressionTyper, Schema

log = logging.getLogger(__name__)


def retype_table(table_id: Any, typer: ExpressionTyper) -> bool:
    """Resolve table ``table_id``'s schema with ``typer``; True when it was saved."""
    table = Table.objects.filter(pk=table_id, kind=Table.KIND_TABLE).first()
    if table is None:
        log.info("table %s is gone; nothing to type", table_id)
        return False
    declared = table.schema
    try:
        resolved = catalog_services.resolve_schema(Schema.from_dict(declared), typer)
    except CoreError as exc:
        log.warning("table %s: its expressions cannot be typed: %s", table_id, exc.message)
        return False
    with transaction.atomic():
        current = Table.objects.select_for_update().filter(pk=table_id).first()
        if current is None or current.schema != declared:
            log.info("table %s changed while it was typed; left for its own task", table_id)
            return False
        current.resolved_schema = resolved.to_dict()
        current.save(update_fields=["resolved_schema", "updated_at"])
        catalog_services._replace_columns(current, resolved)
    return True
