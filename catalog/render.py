"""List pages of tables and views as JSON text, with the stored schemas passed through.

A page of 50 tables carries about 190 KB of schema JSON. Decoding it from jsonb into Python
objects and encoding it again was most of a list request's time (docs/benchmarks.md), so list
pages read the two schema columns as text and splice that text into the response unchanged.
Every other field is rendered as the serializers render it; tests/catalog/api/test_render.py checks
that the result equals ``TableOut``/``ViewOut`` for the same rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from django.db.models import QuerySet, TextField
from django.db.models.functions import Cast
from django.http import HttpResponse
from rest_framework import serializers

from catalog import permissions
from catalog.models import Database, Table
from webapp.pagination import PageRequest, encode_page_token

_datetime = serializers.DateTimeField()

# What a list item reads: the schemas come as text, the creator is only a username. Rows
# are plain dicts (``values()``): model instances cost more than the rest of the request.
LIST_FIELDS = (
    "name",
    "name_key",
    "kind",
    "comment",
    "created_at",
    "updated_at",
    "options",
    "partition_by",
    "status",
    "staged_by_job",
    "location",
    "query",
    "expanded_query",
    "created_by__username",
    "created_by_id",
    "id",
    "owner_id",
    "owner__username",
)

Row = dict[str, Any]


def list_rows(rows: QuerySet[Table]) -> QuerySet[Table, Row]:
    """The fields a list item needs, as dicts, with ``schema``/``resolved_schema`` read as
    JSON text (``schema_json``/``resolved_json``) instead of decoded."""
    return rows.annotate(
        schema_json=Cast("schema", TextField()),
        resolved_json=Cast("resolved_schema", TextField()),
    ).values(*LIST_FIELDS, "schema_json", "resolved_json")


def by_name(row: Row) -> Any:
    """The page-token key of a list row."""
    return row["name_key"]


def _object_fields(database: Database, row: Row, user: Any) -> dict[str, Any]:
    return {
        "catalog": database.catalog.name,
        "database": database.name,
        "name": row["name"],
        "kind": row["kind"],
        "comment": row["comment"],
        "created_by": row["created_by__username"],
        "owner": row["owner__username"],
        "created_at": _datetime.to_representation(row["created_at"]),
        "updated_at": _datetime.to_representation(row["updated_at"]),
        "can": permissions.row_permissions(
            user, database, row["kind"], row["id"], row["owner_id"], row["name"]
        ),
    }


def _with_schemas(fields: dict[str, Any], row: Row) -> str:
    head = json.dumps(fields, ensure_ascii=False, separators=(",", ":"))
    resolved = row["resolved_json"] if row["resolved_json"] is not None else "null"
    return f'{head[:-1]},"schema":{row["schema_json"]},"resolved_schema":{resolved}}}'


def table_json(database: Database, user: Any = None) -> Callable[[Row], str]:
    """Renders one table of ``database`` as ``TableOut`` does (rows from ``list_rows``)."""

    def render(row: Row) -> str:
        fields = _object_fields(database, row, user)
        fields.update(
            managed=Table.is_managed(row["kind"], row["options"]),
            options=row["options"],
            partition_by=row["partition_by"],
            status=row["status"],
            location=row["location"],
            staged_by_job=str(row["staged_by_job"]) if row["staged_by_job"] else None,
        )
        return _with_schemas(fields, row)

    return render


def view_json(database: Database, user: Any = None) -> Callable[[Row], str]:
    """Renders one view of ``database`` as ``ViewOut`` does (rows from ``list_rows``)."""

    def render(row: Row) -> str:
        fields = _object_fields(database, row, user)
        fields.update(query=row["query"], expanded_query=row["expanded_query"])
        return _with_schemas(fields, row)

    return render


def page_response(
    rows: Sequence[Row], page: PageRequest, item_json: Callable[[Row], str]
) -> HttpResponse:
    """``{"items", "next_page_token"}`` from up to ``page.size + 1`` rows, as JSON text."""
    shown = rows[: page.size]
    token = encode_page_token(by_name(shown[-1])) if len(rows) > page.size and shown else None
    items = ",".join(item_json(row) for row in shown)
    body = f'{{"items":[{items}],"next_page_token":{json.dumps(token)}}}'
    return HttpResponse(body.encode(), content_type="application/json")
