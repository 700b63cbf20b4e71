"""List pages of tables and views pass the stored schema JSON through as text
(catalog/render.py): the items must equal what the serializers give for the same rows."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from rest_framework.renderers import JSONRenderer
from rest_framework.test import APIClient

from catalog import serializers as s
from catalog.models import Table
from tests.conftest import API, CatalogFactory, simple_schema
from tests.schemas import RICH_SCHEMA

pytestmark = pytest.mark.django_db


def _serialized(kind: str, serializer: Any, user: Any) -> list[dict[str, Any]]:
    rows = Table.objects.filter(kind=kind).select_related(
        "created_by", "database", "database__catalog"
    )
    data = serializer(rows.order_by("name_key"), many=True, context={"user": user}).data
    return [dict(item) for item in data]


def _normalised(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # The serializers give OrderedDicts and UUID strings; compare as plain JSON values.
    import json

    return list(json.loads(json.dumps(items, default=str)))


def test_table_page_equals_the_serializer_output(
    make: CatalogFactory, alice: Any, alice_api: APIClient, storage: Any, analyzer: Any
) -> None:
    make.catalog("c")
    make.database("c", "d")
    make.table("c", "d", "rich", RICH_SCHEMA, comment='quotes " and \\ and ünïcode ✓')
    make.table(
        "c",
        "d",
        "ext",
        simple_schema("id BIGINT", "name STRING"),
        options={"connector": "parquet", "path": str(storage.external / "ext")},
    )
    make.table("c", "d", "parted", simple_schema("id BIGINT", "day DATE"), partition_by=["day"])
    staged = make.table("c", "d", "staged")
    Table.objects.filter(name="staged").update(status="staged", staged_by_job=uuid.uuid4())
    Table.objects.filter(name="parted").update(resolved_schema=None)
    del staged

    response = alice_api.get(f"{API}/catalogs/c/databases/d/tables")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert body["next_page_token"] is None
    assert [item["name"] for item in body["items"]] == ["ext", "parted", "rich", "staged"]
    assert body["items"] == _normalised(_serialized("table", s.TableOut, alice))
    rich = body["items"][2]
    assert rich["schema"] == RICH_SCHEMA | {"columns": rich["schema"]["columns"]}
    assert rich["resolved_schema"]["primary_key"]["columns"] == ["id"]
    assert body["items"][1]["resolved_schema"] is None
    assert body["items"][3]["status"] == "staged" and body["items"][3]["staged_by_job"]


def test_view_page_equals_the_serializer_output(
    make: CatalogFactory, alice: Any, alice_api: APIClient, analyzer: Any
) -> None:
    make.catalog("c")
    make.database("c", "d")
    make.view("c", "d", "v1", comment="<b>not html</b>")
    make.view("c", "d", "v2", query="SELECT 2 AS two, 'x' AS s")

    body = alice_api.get(f"{API}/catalogs/c/databases/d/views").json()
    assert [item["name"] for item in body["items"]] == ["v1", "v2"]
    assert body["items"] == _normalised(_serialized("view", s.ViewOut, alice))


def test_pages_chain_with_tokens(make: CatalogFactory, alice_api: APIClient) -> None:
    make.catalog("c")
    make.database("c", "d")
    for n in range(5):
        make.table("c", "d", f"t{n}")
    first = alice_api.get(f"{API}/catalogs/c/databases/d/tables?page_size=2").json()
    assert [i["name"] for i in first["items"]] == ["t0", "t1"]
    second = alice_api.get(
        f"{API}/catalogs/c/databases/d/tables?page_size=2&page_token={first['next_page_token']}"
    ).json()
    assert [i["name"] for i in second["items"]] == ["t2", "t3"]
    empty = alice_api.get(f"{API}/catalogs/d/databases/nope/tables")
    assert empty.status_code == 404


def _rendered_page(serializer: Any, kind: str, user: Any) -> bytes:
    rows = Table.objects.filter(kind=kind).select_related(
        "created_by", "database", "database__catalog"
    )
    items = serializer(rows.order_by("name_key"), many=True, context={"user": user}).data
    return bytes(JSONRenderer().render({"items": items, "next_page_token": None}))


def test_list_pages_are_byte_equal_to_the_serializers_rendered(
    make: CatalogFactory, alice: Any, alice_api: APIClient, storage: Any, analyzer: Any
) -> None:
    """The fast path's bytes are the bytes DRF's JSONRenderer gives for TableOut/ViewOut:
    compact separators also inside the stored schemas, text that needs it escaped alike."""
    make.catalog("c")
    make.database("c", "d")
    tricky = 'a, b: "c" \\ ünïcode ✓ \u2028 line'
    schema = {
        "columns": [
            {"name": "id", "kind": "physical", "data_type": "BIGINT", "comment": tricky},
            {"name": "s", "kind": "physical", "data_type": "STRUCT<a: INT, b: STRING>"},
        ]
    }
    make.table("c", "d", "rich", RICH_SCHEMA, comment=tricky)
    make.table("c", "d", "commented", schema)
    make.table(
        "c",
        "d",
        "ext",
        simple_schema("id BIGINT", "name STRING"),
        options={"connector": "parquet", "path": str(storage.external / "ext")},
    )
    Table.objects.filter(name="ext").update(resolved_schema=None)
    make.view("c", "d", "v1", comment=tricky)
    make.view("c", "d", "v2", query="SELECT 2 AS two, 'x, y: z' AS s")

    tables = alice_api.get(f"{API}/catalogs/c/databases/d/tables")
    assert tables.status_code == 200
    assert tables.content == _rendered_page(s.TableOut, "table", alice)
    views = alice_api.get(f"{API}/catalogs/c/databases/d/views")
    assert views.status_code == 200
    assert views.content == _rendered_page(s.ViewOut, "view", alice)
