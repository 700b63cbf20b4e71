"""The OpenAPI document, the browsable docs (local assets only) and the Django admin."""

from __future__ import annotations

import re

import pytest
from django.contrib.staticfiles import finders

from tests.conftest import API

pytestmark = pytest.mark.django_db

CONTRACT_PATHS = [
    "/api/v1/catalogs",
    "/api/v1/catalogs/{catalog}",
    "/api/v1/catalogs/{catalog}/databases",
    "/api/v1/catalogs/{catalog}/databases/{database}",
    "/api/v1/catalogs/{catalog}/databases/{database}/tables",
    "/api/v1/catalogs/{catalog}/databases/{database}/tables/{name}",
    "/api/v1/catalogs/{catalog}/databases/{database}/tables/{name}/properties",
    "/api/v1/catalogs/{catalog}/databases/{database}/views",
    "/api/v1/catalogs/{catalog}/databases/{database}/views/{name}",
    "/api/v1/catalogs/{catalog}/databases/{database}/functions",
    "/api/v1/catalogs/{catalog}/databases/{database}/functions/{name}",
    "/api/v1/search",
    "/api/v1/auth/token",
    "/api/v1/users",
    "/api/v1/health",
]


@pytest.mark.parametrize(
    ("query", "accept"),
    [("?format=json", None), ("", "application/vnd.oai.openapi+json"), ("", "application/json")],
)
def test_openapi_document_as_json(anon_api, query, accept):
    headers = {"HTTP_ACCEPT": accept} if accept else {}
    response = anon_api.get(f"{API}/schema{query}", **headers)
    assert response.status_code == 200, response.content[:500]
    assert "json" in response["Content-Type"]
    document = response.json()
    assert document["openapi"].startswith("3.")
    assert document["info"]["title"] == "Tessera API"
    for path in CONTRACT_PATHS:
        assert path in document["paths"], (path, sorted(document["paths"]))


def test_openapi_document_describes_the_operations(alice_api):
    document = alice_api.get(f"{API}/schema?format=json").json()
    catalogs = document["paths"]["/api/v1/catalogs"]
    assert {"get", "post"} <= set(catalogs)
    params = {p["name"] for p in catalogs["get"]["parameters"]}
    assert {"page_size", "page_token"} <= params
    table = document["paths"]["/api/v1/catalogs/{catalog}/databases/{database}/tables/{name}"]
    assert {"get", "patch", "delete"} <= set(table)
    search = document["paths"]["/api/v1/search"]["get"]
    assert {p["name"] for p in search["parameters"]} >= {"q", "kind"}
    operation_ids = [
        operation["operationId"]
        for item in document["paths"].values()
        for operation in item.values()
        if isinstance(operation, dict) and "operationId" in operation
    ]
    assert len(operation_ids) == len(set(operation_ids))


def test_openapi_document_as_yaml_by_default(anon_api):
    response = anon_api.get(f"{API}/schema")
    assert response.status_code == 200
    assert response.content.startswith(b"openapi: 3.")


def test_docs_page_uses_only_local_assets(anon_api):
    response = anon_api.get(f"{API}/docs")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    assert "swagger-ui" in html
    references = re.findall(r'(?:src|href)\s*=\s*["\']([^"\']+)["\']', html)
    assert references, html
    for reference in references:
        assert reference.startswith("/"), reference
        assert not reference.startswith("//"), reference
    assets = [r for r in references if r.startswith("/static/")]
    assert any(a.endswith("swagger-ui-bundle.js") for a in assets)
    for asset in assets:  # each is really shipped (by the sidecar package)
        assert finders.find(asset.removeprefix("/static/")), asset
    for cdn in ("cdn.jsdelivr", "unpkg.com", "cdnjs", "http://", "https://"):
        assert cdn not in html, cdn
    # Swagger UI's start-up script is served by the docs view itself (?script), not inline
    # (the page's Content-Security-Policy allows no inline script: tests/security).
    scripts = [r for r in references if "script" in r and not r.startswith("/static/")]
    assert len(scripts) == 1, references
    start_up = anon_api.get(scripts[0])
    assert start_up.status_code == 200
    assert "/api/v1/schema" in start_up.content.decode()


def test_home_is_the_browser_ui_not_a_redirect(anon_api):
    # The UI's page (tests/webapp/api/test_ui_index.py): 200 when built, 503 saying how otherwise.
    response = anon_api.get("/")
    assert response.status_code in (200, 503)
    assert response["Content-Type"].startswith("text/html")


# --- Django admin ---------------------------------------------------------------------------


@pytest.fixture
def filled(make, analyzer):
    make.catalog("admin_demo")
    make.database("admin_demo", "admin_sales")
    make.table("admin_demo", "admin_sales", "admin_orders")
    make.view("admin_demo", "admin_sales", "admin_recent")
    make.function("admin_demo", "admin_sales", "admin_upper")


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("catalog", ["admin_demo"]),
        ("database", ["admin_sales", "default"]),
        ("table", ["admin_orders", "admin_recent"]),
        ("function", ["admin_upper"]),
    ],
)
def test_admin_changelists_list_the_objects(client, admin, filled, model, expected):
    client.force_login(admin)
    response = client.get(f"/admin/catalog/{model}/")
    assert response.status_code == 200
    html = response.content.decode()
    for name in expected:
        assert name in html, name
    count = len(expected)
    assert re.search(rf"{count}\s+{model}{'s' if count > 1 else ''}\b", html), html


def test_admin_change_page_renders(client, admin, filled):
    from catalog.models import Table

    client.force_login(admin)
    table = Table.objects.get(name="admin_orders")
    response = client.get(f"/admin/catalog/table/{table.pk}/change/")
    assert response.status_code == 200
    assert "admin_orders" in response.content.decode()


def test_admin_is_closed_to_non_staff(client, alice):
    client.force_login(alice)
    response = client.get("/admin/catalog/catalog/")
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")
