"""Writes of saved queries: validate fully, then one statement (a savepoint for inserts)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import IntegrityError, transaction

from core.errors import AlreadyExists, CoreError, PermissionDenied
from workbench.models import MAX_NAME_LENGTH, SavedQuery
from workbench.selectors import require_user_id

AnyUser = AbstractBaseUser | AnonymousUser


def checked_label(value: Any, *, field: str, missing: str, named: str, max_length: int) -> str:
    """A name shown to people (a saved query's, an editor tab's title): text, not blank, at
    most ``max_length`` characters, no control characters; else ``CoreError`` on ``field``."""
    if not isinstance(value, str) or not value.strip():
        raise CoreError(missing, details={"field": field})
    if len(value) > max_length:
        raise CoreError(
            f"{named} must be at most {max_length} characters long, got {len(value):,}.",
            details={"field": field},
        )
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        raise CoreError(f"{named} must not contain control characters.", details={"field": field})
    return value


def _check_name(name: Any) -> str:
    return checked_label(
        name,
        field="name",
        missing="A saved query needs a name.",
        named="A saved query's name",
        max_length=MAX_NAME_LENGTH,
    )


def _check_sql(sql: Any) -> str:
    if not isinstance(sql, str) or not sql.strip():
        raise CoreError("A saved query needs some SQL.", details={"field": "sql"})
    if "\x00" in sql:
        raise CoreError("The SQL must not contain NUL characters.", details={"field": "sql"})
    return sql


def _check_description(description: Any) -> str:
    if not isinstance(description, str) or "\x00" in description:
        raise CoreError(
            "The description must be text without NUL characters.",
            details={"field": "description"},
        )
    return description


CHART_TYPES = ("bar", "line", "area", "scatter", "pie")
CHART_AGGREGATIONS = ("none", "sum", "avg", "count", "min", "max")
MAX_CHART_SERIES = 10
MAX_COLUMN_NAME = 1000


def check_chart(chart: Any) -> dict[str, Any] | None:
    """A chart config: ``{"type", "x", "y": [names], "aggregation"}``, or None."""
    if chart is None:
        return None

    def bad(message: str) -> CoreError:
        return CoreError(message, details={"field": "chart"})

    if not isinstance(chart, dict):
        raise bad("chart must be an object {type, x, y, aggregation}, or null.")
    unknown = sorted(set(chart) - {"type", "x", "y", "aggregation"})
    if unknown:
        raise bad(f"chart has unknown fields: {', '.join(unknown)[:200]}.")
    kind, x, y, aggregation = (chart.get(k) for k in ("type", "x", "y", "aggregation"))
    if kind not in CHART_TYPES:
        raise bad(f"chart.type must be one of {', '.join(CHART_TYPES)}.")
    if not isinstance(x, str) or not x or len(x) > MAX_COLUMN_NAME:
        raise bad("chart.x must name a column.")
    if (
        not isinstance(y, list)
        or len(y) > MAX_CHART_SERIES
        or not all(isinstance(n, str) and n and len(n) <= MAX_COLUMN_NAME for n in y)
    ):
        raise bad(f"chart.y must be a list of at most {MAX_CHART_SERIES} column names.")
    if aggregation not in CHART_AGGREGATIONS:
        raise bad(f"chart.aggregation must be one of {', '.join(CHART_AGGREGATIONS)}.")
    return {"type": kind, "x": x, "y": list(y), "aggregation": aggregation}


def _taken(name: str) -> str:
    return f"You already have a saved query named [{name}]."


def _ensure_name_free(owner_id: Any, name: str, but: Any = None) -> None:
    clash = SavedQuery.objects.filter(owner_id=owner_id, name_key=name.lower())
    if but is not None:
        clash = clash.exclude(pk=but)
    existing = clash.first()
    if existing is not None:
        raise AlreadyExists(_taken(existing.name))


def saved_query_create(
    *,
    user: AnyUser,
    name: Any,
    sql: Any,
    description: Any = "",
    shared: bool = False,
    chart: Any = None,
) -> SavedQuery:
    owner_id = require_user_id(user)
    row = SavedQuery(
        owner_id=owner_id,
        name=_check_name(name),
        sql=_check_sql(sql),
        description=_check_description(description),
        shared=bool(shared),
        chart=check_chart(chart),
    )
    _ensure_name_free(owner_id, row.name)
    try:
        with transaction.atomic():  # a concurrent create of the same name: the constraint
            row.save()
    except IntegrityError as exc:
        raise AlreadyExists(_taken(row.name)) from exc
    return SavedQuery.objects.select_related("owner").get(pk=row.pk)


def _ensure_owner(user: AnyUser, row: SavedQuery) -> None:
    if row.owner_id != require_user_id(user):
        raise PermissionDenied(
            f"Saved query [{row.name}] belongs to {row.owner.get_username()}; "
            "only its owner may change or delete it."
        )


def saved_query_update(*, user: AnyUser, row: SavedQuery, changes: dict[str, Any]) -> SavedQuery:
    """PATCH: any of ``name``, ``description``, ``sql``, ``shared``, ``chart``. Owner only."""
    _ensure_owner(user, row)
    if "name" in changes:
        row.name = _check_name(changes["name"])
        _ensure_name_free(row.owner_id, row.name, but=row.pk)
    if "sql" in changes:
        row.sql = _check_sql(changes["sql"])
    if "description" in changes:
        row.description = _check_description(changes["description"])
    if "shared" in changes:
        row.shared = bool(changes["shared"])
    if "chart" in changes:
        row.chart = check_chart(changes["chart"])
    try:
        with transaction.atomic():
            row.save()
    except IntegrityError as exc:
        raise AlreadyExists(_taken(row.name)) from exc
    return row


def saved_query_delete(*, user: AnyUser, row: SavedQuery) -> None:
    _ensure_owner(user, row)
    row.delete()
