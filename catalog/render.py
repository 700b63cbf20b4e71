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

from django.db import connection
from django.db.models import Func, QuerySet, TextField, Value
from django.db.models.functions import Cast
from django.http import HttpResponse
from rest_framework import serializers

from catalog import permissions
from catalog.models import Database, Table
from webapp.pagination import PageRequest, encode_page_token

_datetime = serializers.DateTimeField()

# What a list item reads: the schemas come as text, the creator is only a username. Rows
# are plain dicts (``values()``): model instances cost more than the rest of the request.
# What a list of names needs (HiveServer2's GetTables, Flight SQL's GetTables): no dates or
# JSON to decode.
NAME_FIELDS = ("name", "name_key", "kind", "comment")
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


# jsonb's text is ``{"a": 1, "b": [1, 2]}``; JSONRenderer writes ``{"a":1,"b":[1,2]}``. Each
# match is a whole string (kept: \1) or a separator outside strings (its space dropped).
_JSONB_SEPARATORS = r'("[^"\\]*(?:\\.[^"\\]*)*")|(,) |(:) '


def _json_text(field: str) -> Func | Cast:
    text = Cast(field, TextField())
    if connection.vendor != "postgresql":
        return text
    return Func(
        text,
        Value(_JSONB_SEPARATORS),
        Value(r"\1\2\3"),
        Value("g"),
        function="regexp_replace",
        output_field=TextField(),
    )


def list_rows(rows: QuerySet[Table], with_schemas: bool = True) -> QuerySet[Table, Row]:
    """The fields a list item needs, as dicts, with ``schema``/``resolved_schema`` read as
    JSON text (``schema_json``/``resolved_json``) instead of decoded: on PostgreSQL the text
    already has DRF's separators (a regular expression in the query: no Python work, but
    ≈ 1 ms a row of 20 columns). ``with_schemas`` False: only ``NAME_FIELDS``."""
    if not with_schemas:
        names: QuerySet[Table, Row] = rows.values(*NAME_FIELDS)
        return names
    return rows.annotate(
        schema_json=_json_text("schema"),
        resolved_json=_json_text("resolved_schema"),
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


def _compact(text: str) -> str:
    """A schema's JSON text with DRF's separators: PostgreSQL's comes so from ``list_rows``;
    other databases' (SQLite in development) is decoded and encoded again."""
    if connection.vendor == "postgresql":
        return text
    return json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"))


def _json(fields: dict[str, Any]) -> str:
    return json.dumps(fields, ensure_ascii=False, separators=(",", ":"))


def _with_schemas(before: dict[str, Any], row: Row, after: dict[str, Any]) -> str:
    """The item's fields in the serializer's order, the schemas between ``before`` and
    ``after``."""
    resolved = _compact(row["resolved_json"]) if row["resolved_json"] is not None else "null"
    schemas = f'"schema":{_compact(row["schema_json"])},"resolved_schema":{resolved}'
    tail = f",{_json(after)[1:]}" if after else "}"
    return f"{_json(before)[:-1]},{schemas}{tail}"


def table_json(database: Database, user: Any = None) -> Callable[[Row], str]:
    """Renders one table of ``database`` as ``TableOut`` does (rows from ``list_rows``)."""

    def render(row: Row) -> str:
        fields = _object_fields(database, row, user)
        fields.update(managed=Table.is_managed(row["kind"], row["options"]), options=row["options"])
        after = {
            "partition_by": row["partition_by"],
            "status": row["status"],
            "location": row["location"],
            "staged_by_job": str(row["staged_by_job"]) if row["staged_by_job"] else None,
        }
        return _with_schemas(fields, row, after)

    return render


def view_json(database: Database, user: Any = None) -> Callable[[Row], str]:
    """Renders one view of ``database`` as ``ViewOut`` does (rows from ``list_rows``)."""

    def render(row: Row) -> str:
        fields = _object_fields(database, row, user)
        fields.update(query=row["query"], expanded_query=row["expanded_query"])
        return _with_schemas(fields, row, {})

    return render


def page_response(
    rows: Sequence[Row], page: PageRequest, item_json: Callable[[Row], str]
) -> HttpResponse:
    """``{"items", "next_page_token"}`` from up to ``page.size + 1`` rows, as JSON text."""
    shown = rows[: page.size]
    token = encode_page_token(by_name(shown[-1])) if len(rows) > page.size and shown else None
    items = ",".join(item_json(row) for row in shown)
    body = f'{{"items":[{items}],"next_page_token":{json.dumps(token)}}}'
    # As JSONRenderer does: these two are valid in JSON but not in JavaScript source.
    body = body.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return HttpResponse(body.encode(), content_type="application/json")
