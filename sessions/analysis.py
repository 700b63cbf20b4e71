"""The catalog's ``Analyzer`` (``catalog.analysis``) in the web process: ask a worker's Spark
and wait for its answer, bounded, before the catalog stores a schema.

One question is one ``SchemaCheck`` row: written and committed here, sent to the workers
(``jobs.dispatch.send_schema_check``, the message expiring with the wait), answered by a
worker (``engine.schema_check``) in the row and announced (``jobs.notify``). The
request waits for the answer at most ``TESSERA_SCHEMA_CHECK_SECONDS``, woken by the
announcement and re-reading the row at least every fallback delay; then the row is
deleted, answered or not. No answer in time, no broker, or no free held-request slot:
``UNAVAILABLE`` — nothing is stored by the caller.

A view's query is planned here first, as a statement would be (``core.planner``), in the
view's catalog and database: the worker registers exactly the relations the planner saw
and derives the schema of the planner's rewritten query (``engine.typing``, the
same code as SQL's CREATE VIEW).
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from catalog.analysis import Unavailable, as_error, install
from core.errors import CoreError
from core.planner import Action, PlanContext, plan_statement
from core.schema import ResolvedSchema, Schema
from jobs import dispatch, notify
from jobs.models import SchemaCheck
from jobs.selectors import held
from sessions import planning
from sessions.catalog_reader import DjangoCatalogReader

log = logging.getLogger(__name__)

# Every question is deleted by the request that asked it; one older than this was left by a
# process that died while it waited.
STALE_AFTER = timedelta(hours=1)


def wait_seconds() -> float:
    return max(0.1, float(settings.TESSERA_SCHEMA_CHECK_SECONDS))


def _no_answer(seconds: float) -> Unavailable:
    return Unavailable(
        f"No worker answered within {seconds:g} s, so Spark's analyzer could not check the "
        "schema; nothing was stored. Try again when a worker is running.",
        details={"timeout_seconds": seconds},
    )


def ask(kind: str, request: dict[str, Any]) -> dict[str, Any]:
    """Ask a worker's Spark analyzer; its answer (``{"error": …}`` raised as the error)."""
    if transaction.get_connection().in_atomic_block:
        # The worker could not see the question before the transaction commits.
        raise RuntimeError("A schema check cannot be asked inside a transaction.")
    seconds = wait_seconds()
    # A question left behind by a web process that died while it waited goes now.
    SchemaCheck.objects.filter(created_at__lt=timezone.now() - STALE_AFTER).delete()
    check = SchemaCheck.objects.create(kind=kind, request=request)
    try:
        with held(seconds) as allowed:
            if allowed <= 0:
                raise Unavailable(
                    "The server is holding as many waiting requests as it can; nothing was "
                    "stored. Try again in a moment."
                )
            with notify.watch([check.pk]) as watch:
                try:
                    dispatch.send_schema_check(check.pk, allowed)
                except Exception:
                    log.exception("schema check %s: could not reach the broker", check.pk)
                    raise _no_answer(seconds) from None
                deadline = time.monotonic() + allowed
                while True:
                    answer = (
                        SchemaCheck.objects.filter(pk=check.pk)
                        .values_list("answer", flat=True)
                        .first()
                    )
                    if answer is not None:
                        break
                    left = deadline - time.monotonic()
                    if left <= 0:
                        log.warning(
                            "schema check %s: no worker answered in %s s", check.pk, seconds
                        )
                        raise _no_answer(seconds)
                    watch.wait(left)
    finally:
        SchemaCheck.objects.filter(pk=check.pk).delete()
    if not isinstance(answer, dict):
        raise _no_answer(seconds)
    if "error" in answer:
        raise as_error(answer["error"])
    return answer


class WorkerAnalyzer:
    """``catalog.analysis.Analyzer`` backed by a worker's Spark (one ``SchemaCheck`` each)."""

    def resolve_table_schema(self, schema: Schema) -> ResolvedSchema:
        answer = ask(SchemaCheck.KIND_TABLE, {"schema": schema.to_dict()})
        return ResolvedSchema.from_dict(answer.get("resolved"))

    def derive_view_schema(self, catalog: str, database: str, query: str, *, user: Any) -> Schema:
        """The view's query planned as a statement of ``user`` (their rights decide what it
        may read: ``PermissionDenied``, or ``NotFound`` for what they may not see), then
        typed by a worker's Spark."""
        reader = DjangoCatalogReader(user=user)
        plan = plan_statement(query, reader, view_context(catalog, database))
        if plan.action != Action.QUERY:
            raise CoreError(
                "A view's query must be a query (SELECT, WITH, VALUES or TABLE).",
                details={"field": "query"},
            )
        answer = ask(SchemaCheck.KIND_VIEW, {"plan": plan.to_dict()})
        return Schema.from_dict(answer.get("schema"))


def view_context(catalog: str, database: str) -> PlanContext:
    """A view's query is read in its own catalog and database, with no session: it may
    read permanent objects only (a reader without a session has no temporary ones)."""
    registry = planning.session_properties()
    return PlanContext(
        current_catalog=catalog,
        current_database=database,
        storage_roots=tuple(str(root) for root in settings.TESSERA_STORAGE_ROOTS),
        settable_keys=registry.keys,
        udf_packages=tuple(settings.TESSERA_UDF_PACKAGES),
        session_properties=registry,
        limits=planning.statement_limits(),
        budget_seconds=planning.budget_seconds(),
    )


def install_analyzer() -> None:
    """Called by ``JobsConfig.ready``: the catalog asks the workers from now on."""
    install(WorkerAnalyzer())
