"""The REST side of a session's FLIP-64 temporary objects: list them (with what they shadow)
and drop them by SQL path. SQL's CREATE/DROP/SHOW TEMPORARY … are ``sessions.commands.temporary``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db.models import Q, QuerySet

from catalog.models import Function, Table
from core.errors import CoreError, NotFound
from core.identifiers import ObjectIdentifier, expand_path, parse_path, quote_path
from core.planner.functions import is_builtin
from jobs.models import Session, TemporaryObject

TEMPORARY_KINDS = {"tables": "table", "views": "view", "functions": "function"}


def _temporary_kind(kinds: str) -> str:
    kind = TEMPORARY_KINDS.get(kinds)
    if kind is None:
        raise NotFound(f"There are no temporary {kinds}; choose tables, views or functions.")
    return kind


def session_path(session: Session, text: Any, field: str) -> ObjectIdentifier:
    """A SQL path (1-3 parts) expanded with the session's current catalog and database."""
    if not isinstance(text, str) or not text.strip():
        raise CoreError(f"'{field}' must be a SQL path such as c.d.t.", details={"field": field})
    try:
        return expand_path(parse_path(text), session.current_catalog, session.current_database)
    except CoreError as exc:
        exc.details = {**exc.details, "field": field}
        raise


def _temporary_after(qs: QuerySet[TemporaryObject], after: Any) -> QuerySet[TemporaryObject]:
    if after is None:
        return qs
    if not (isinstance(after, list) and len(after) == 3 and all(isinstance(v, str) for v in after)):
        raise CoreError(
            "The page_token is not one this server issued; start again without it.",
            details={"field": "page_token"},
        )
    c, d, n = after
    return qs.filter(
        Q(catalog_key__gt=c)
        | Q(catalog_key=c, database_key__gt=d)
        | Q(catalog_key=c, database_key=d, name_key__gt=n)
    )


def temporary_token(row: TemporaryObject) -> list[str]:
    """The page-token key of a temporary object (lists are ordered by identifier)."""
    return [row.catalog_key, row.database_key, row.name_key]


def temporary_list(
    *, session: Session, kinds: str, after: Any, limit: int
) -> list[tuple[TemporaryObject, bool]]:
    """The session's temporary objects of one kind, by identifier (system functions first),
    each with whether it shadows a permanent object (system functions: a built-in)."""
    kind = _temporary_kind(kinds)
    qs = TemporaryObject.objects.filter(session=session, kind=kind)
    rows = list(
        _temporary_after(qs, after).order_by("catalog_key", "database_key", "name_key")[:limit]
    )
    return list(zip(rows, shadows(rows), strict=True))


def temporary_delete(*, session: Session, kinds: str, path: str, system: bool = False) -> None:
    """Drop one of the session's temporary objects by its SQL path (DROP TEMPORARY …);
    NOT_FOUND when the session has none. ``system``: a temporary system function."""
    kind = _temporary_kind(kinds)
    qs = TemporaryObject.objects.filter(session=session, kind=kind)
    if system:
        if kind != TemporaryObject.KIND_FUNCTION:
            raise CoreError("Only functions can be system functions.", details={"field": "system"})
        parts = parse_path(path)
        if len(parts) != 1:
            raise CoreError(
                "A temporary system function has a one-part name.", details={"field": "path"}
            )
        found = qs.filter(system=True, name_key=parts[0].lower()).first()
        shown = f"Temporary system function {quote_path(parts)}"
    else:
        ident = session_path(session, path, "path")
        catalog, database, name = ident.key
        found = qs.filter(
            system=False, catalog_key=catalog, database_key=database, name_key=name
        ).first()
        shown = f"Temporary {kind} {ident.quoted()}"
    if found is None:
        raise NotFound(f"{shown} does not exist.")
    found.delete()


def _shadowed_keys(rows: Sequence[TemporaryObject]) -> set[tuple[str, str, str]]:
    """Keys of the rows' identifiers that a permanent object also has (one query)."""
    relations = [r for r in rows if r.kind != TemporaryObject.KIND_FUNCTION]
    functions = [r for r in rows if r.kind == TemporaryObject.KIND_FUNCTION and not r.system]
    found: set[tuple[str, str, str]] = set()
    for model, group in ((Table, relations), (Function, functions)):
        if not group:
            continue
        condition = Q(pk__in=[])
        for row in group:
            condition |= Q(
                database__catalog__name_key=row.catalog_key,
                database__name_key=row.database_key,
                name_key=row.name_key,
            )
        found.update(
            model.objects.filter(condition).values_list(
                "database__catalog__name_key", "database__name_key", "name_key"
            )
        )
    return found


def shadows(rows: Sequence[TemporaryObject]) -> list[bool]:
    """For each row, whether it shadows a permanent object with its identifier (a system
    function: a built-in). At most one query per kind of object, whatever the rows."""
    shadowed = _shadowed_keys(rows)
    return [
        is_builtin(row.name)
        if row.system
        else (row.catalog_key, row.database_key, row.name_key) in shadowed
        for row in rows
    ]
