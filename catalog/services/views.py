"""Views: their schema (derived by Spark's analyzer, or declared to match it), create,
change. A view is dropped as a table is (``tables.table_delete``)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction

from audit import models as audit_models
from catalog import analysis, bodies
from catalog.grants import ownership
from catalog.models import Database, Table
from catalog.services._common import (
    User,
    _check_owner,
    _ensure_name_free,
    _record_change,
    _replace_columns,
    _require,
    _user_or_none,
)
from catalog.services.checks import resolve_schema
from core.errors import CoreError
from core.identifiers import validate_name
from core.limits import StatementLimits, check_statement
from core.privileges import Privilege
from core.schema import PhysicalColumn, ResolvedSchema, Schema


def _check_declared_view_schema(schema: Schema) -> None:
    for index, column in enumerate(schema.columns):
        if not isinstance(column, PhysicalColumn):
            raise CoreError(
                f"View column `{column.name}` must be a plain column with a data type.",
                details={"field": f"schema.columns[{index}]", "column": column.name},
            )
    resolve_schema(schema)  # names, types, no duplicates


def view_schema(declared: Schema | None, derived: Schema) -> Schema:
    """A view's schema: the one Spark's analyzer ``derived`` from its query, or the one the
    caller ``declared`` when it matches it column for column (same count, same types; the
    declared names and comments win). Never a schema Spark did not see."""
    if declared is None or not declared.columns:
        return derived
    _check_declared_view_schema(declared)
    if len(declared.columns) != len(derived.columns):
        names = ", ".join(f"`{c.name}`" for c in derived.columns) or "none"
        raise CoreError(
            f"The view declares {len(declared.columns)} columns but its query gives "
            f"{len(derived.columns)} ({names}).",
            details={"field": "schema.columns"},
        )
    for index, (mine, spark) in enumerate(zip(declared.columns, derived.columns, strict=True)):
        assert isinstance(mine, PhysicalColumn) and isinstance(spark, PhysicalColumn)
        if mine.data_type.type_sql() != spark.data_type.type_sql():
            raise CoreError(
                f"View column `{mine.name}` is declared {mine.data_type.type_sql()}, but the "
                f"query gives {spark.data_type.type_sql()} (column `{spark.name}`).",
                details={"field": f"schema.columns[{index}].data_type", "column": mine.name},
            )
    return declared


def _check_query(query: str) -> str:
    if not query.strip():
        raise CoreError("A view needs a query.", details={"field": "query"})
    # The query is planned with every statement that reads the view: the statement limits
    # hold for it as for SQL's CREATE VIEW (docs/security.md §4).
    limits = StatementLimits.from_settings(settings)
    check_statement(query, limits, what="view query", field="query")
    return query


def _derive_view_schema(database: Database, name: str, query: str, user: User) -> Schema:
    """Spark's analyzer on a worker derives the query's schema (``catalog.analysis``); the
    query is read in the view's catalog and database, as it is whenever the view is read,
    and planned with ``user``'s rights (what they may not read, no view of theirs reads)."""
    try:
        return analysis.analyzer().derive_view_schema(
            database.catalog.name, database.name, query, user=user
        )
    except CoreError as exc:
        if exc.code == "VALIDATION_ERROR" and "field" not in exc.details:
            exc.details = {**exc.details, "field": "query"}
        bodies.tag(exc, bodies.BODY, "view", [database.catalog.name, database.name, name])
        raise


def view_schema_json(schema: Schema) -> tuple[dict[str, Any], dict[str, Any]]:
    """A view's schema as stored: declared (``schema``) and resolved (``resolved_schema``)."""
    return schema.to_dict(), resolve_schema(schema).to_dict()


def _store_view_schema(view: Table, schema: Schema) -> None:
    view.schema, view.resolved_schema = view_schema_json(schema)


@bodies.audits_refusals
def view_create(
    *,
    user: User,
    database: Database,
    name: str,
    query: str,
    schema: Schema | None = None,
    comment: str = "",
    expanded_query: str | None = None,
    derived: Schema | None = None,
) -> Table:
    """Create a view with a resolved schema. ``derived``: the schema Spark derived for the
    query (SQL's CREATE VIEW, on a worker); without it (REST) a worker's Spark derives it
    now, before anything is stored. ``schema``: one the caller declares, which must match
    the derived one (``view_schema``). ``expanded_query`` is the query with fully qualified
    names. Needs ``CREATE`` on the database; ``user`` owns the view, which reads with its
    owner's rights."""
    _require(user, database, Privilege.CREATE)
    validate_name(name, "view name")
    _check_query(query)
    if schema is not None and schema.columns:
        _check_declared_view_schema(schema)
    _ensure_name_free(database, name)
    if derived is None:
        derived = _derive_view_schema(database, name, query, user)
    final = view_schema(schema, derived)
    view = Table(
        database=database,
        name=name,
        kind=Table.KIND_VIEW,
        comment=comment,
        query=query,
        expanded_query=expanded_query,
        created_by=_user_or_none(user),
        owner=_user_or_none(user),
    )
    _store_view_schema(view, final)
    try:
        with transaction.atomic():
            view.save()
            _replace_columns(view, ResolvedSchema.from_dict(view.resolved_schema))
            _record_change(user, view, audit_models.CREATE)
    except IntegrityError:
        _ensure_name_free(database, name)
        raise
    return view


@bodies.audits_refusals
def view_update(
    *,
    user: User,
    view: Table,
    comment: str | None = None,
    query: str | None = None,
    schema: Schema | None = None,
    owner: str | None = None,
) -> Table:
    """Change a view (``MANAGE``). A new query or schema is checked by Spark's analyzer on a
    worker (the query derived again) before anything is stored; a comment alone needs no
    worker. ``owner`` hands it to another user: the view then reads with their rights."""
    if owner is None or any(v is not None for v in (comment, query, schema)):
        _require(user, view, Privilege.MANAGE)
    _check_owner(user, view, owner)
    if query is not None:
        _check_query(query)
    if schema is not None and schema.columns:
        _check_declared_view_schema(schema)
    final: Schema | None = None
    if query is not None or schema is not None:
        derived = _derive_view_schema(
            view.database, view.name, query if query is not None else view.query, user
        )
        final = view_schema(schema, derived)
    with transaction.atomic():
        if comment is not None:
            view.comment = comment
        if query is not None:
            view.query = query
            view.expanded_query = None
        if final is not None:
            _store_view_schema(view, final)
            _replace_columns(view, ResolvedSchema.from_dict(view.resolved_schema))
        view.save()
        if query is not None or final is not None:
            _record_change(
                user, view, audit_models.ALTER, changed=["query" if query is not None else "schema"]
            )
        if owner is not None:
            ownership.transfer_owner(user=user, row=view, new_owner=owner)
    return view
