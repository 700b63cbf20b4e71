"""Errors are JSON in the contract's shape, never an HTML page or a stack trace."""

from __future__ import annotations

import uuid

import pytest

from catalog.models import Catalog, Table
from tests.conftest import API, assert_error

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "url",
    [
        f"{API}/nothing-here",
        f"{API}/catalogs/demo/nothing",
        f"{API}/catalogs/demo/databases/default/tables/t/columns",
        f"{API}",
        "/api/v2/catalogs",
        "/static/no/such/file.js",
        # Other paths are the browser UI's client-side routes (tests/webapp/api/test_ui_index.py).
    ],
)
def test_unknown_urls_are_json_404(alice_api, url):
    response = alice_api.get(url)
    error = assert_error(response, 404, "NOT_FOUND")
    assert "<html" not in response.content.decode().lower()
    assert "There is nothing at" in error["message"]


def test_unknown_url_without_credentials_is_still_json(anon_api):
    assert_error(anon_api.post(f"{API}/nothing", {"a": 1}), 404, "NOT_FOUND")


def test_trailing_slash_is_optional(alice_api, make):
    make.catalog("demo")
    assert alice_api.get(f"{API}/catalogs/").json()["items"][0]["name"] == "demo"
    assert alice_api.get(f"{API}/catalogs/demo/").json()["name"] == "demo"


@pytest.mark.parametrize(
    "body", ['{"name": "demo"', "{'name': 'demo'}", "", "nul\x00", '{"name": NaN'], ids=repr
)
def test_malformed_json_is_a_json_400(alice_api, body):
    response = alice_api.generic(
        "POST", f"{API}/catalogs", body.encode(), content_type="application/json"
    )
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] in {"MALFORMED_REQUEST", "VALIDATION_ERROR"}
    assert_error(response, 400, error["code"])
    assert not Catalog.objects.exists()


def test_malformed_json_message_says_what_is_wrong(alice_api):
    response = alice_api.generic(
        "POST", f"{API}/catalogs", b'{"name": "demo"', content_type="application/json"
    )
    assert_error(response, 400, "MALFORMED_REQUEST", "could not be read", "JSON parse error")


@pytest.mark.parametrize("body", ["[1, 2]", '"demo"', "42", "null", "true"])
def test_non_object_json_body_is_a_400(alice_api, make, body):
    make.catalog("demo")
    for url in (
        f"{API}/catalogs",
        f"{API}/catalogs/demo/databases",
        f"{API}/catalogs/demo/databases/default/tables",
        f"{API}/catalogs/demo/databases/default/views",
        f"{API}/catalogs/demo/databases/default/functions",
    ):
        response = alice_api.generic("POST", url, body, content_type="application/json")
        assert_error(response, 400, "VALIDATION_ERROR", "JSON object")
    patch = alice_api.generic(
        "PATCH", f"{API}/catalogs/demo", body, content_type="application/json"
    )
    assert_error(patch, 400, "VALIDATION_ERROR", "JSON object")
    assert Catalog.objects.count() == 1
    assert not Table.objects.exists()


def test_non_object_body_for_users_and_tokens_is_a_400(admin_api, anon_api):
    assert_error(admin_api.post(f"{API}/users", [1]), 400, "VALIDATION_ERROR", "dictionary")
    assert_error(anon_api.post(f"{API}/auth/token", "x"), 400, "VALIDATION_ERROR")


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("put", f"{API}/catalogs/demo"),
        ("delete", f"{API}/catalogs"),
        ("patch", f"{API}/catalogs"),
        ("post", f"{API}/catalogs/demo"),
        ("post", f"{API}/search"),
        ("delete", f"{API}/catalogs/demo/databases/default/tables/t/properties"),
        ("get", f"{API}/auth/token"),
        ("get", f"{API}/users"),
    ],
)
def test_wrong_method_is_a_json_405(admin_api, make, method, url):
    make.catalog("demo")
    response = getattr(admin_api, method)(url, {})
    error = assert_error(response, 405, "METHOD_NOT_ALLOWED")
    assert method.upper() in error["message"]
    assert Catalog.objects.filter(name="demo").exists()


def test_unsupported_media_type_is_a_json_415(alice_api):
    response = alice_api.post(f"{API}/catalogs", "name=demo", content_type="text/plain")
    assert_error(response, 415, "UNSUPPORTED_MEDIA_TYPE", "text/plain")
    form = alice_api.post(f"{API}/catalogs", {"name": "demo"}, format="multipart")
    assert_error(form, 415, "UNSUPPORTED_MEDIA_TYPE")
    assert not Catalog.objects.exists()


def test_html_is_never_returned_even_when_asked_for(alice_api, make):
    make.catalog("demo")
    for url in (f"{API}/catalogs/demo", f"{API}/catalogs/nope"):
        response = alice_api.get(url, HTTP_ACCEPT="text/html")
        assert_error(response, 406, "NOT_ACCEPTABLE", "Accept")
    # What browsers send (with */*) gets JSON.
    browser = alice_api.get(
        f"{API}/catalogs/demo", HTTP_ACCEPT="text/html,application/xhtml+xml,*/*;q=0.8"
    )
    assert browser.status_code == 200
    assert browser.json()["name"] == "demo"


def test_names_that_cannot_exist_are_404_not_500(alice_api, make):
    make.catalog("demo")
    for url in (
        f"{API}/catalogs/de%00mo",
        f"{API}/catalogs/demo/databases/a%00",
        f"{API}/catalogs/demo/databases/default/tables/%00",
        f"{API}/catalogs/demo/databases/default/views/x%00y",
        f"{API}/catalogs/demo/databases/default/functions/%00",
        f"{API}/catalogs/demo/databases/default/tables/%00/properties",
    ):
        assert_error(alice_api.get(url), 404, "NOT_FOUND")
    assert_error(alice_api.delete(f"{API}/catalogs/de%00mo"), 404, "NOT_FOUND")


def test_errors_carry_details_when_there_are_some(alice_api, make):
    make.catalog("demo")
    response = alice_api.post(
        f"{API}/catalogs/demo/databases/default/tables",
        {"name": "t", "schema": {"columns": [{"name": "a", "data_type": "INT("}]}},
    )
    error = assert_error(response, 400, "VALIDATION_ERROR", "'INT('")
    assert error["details"]["field"] == "schema.columns[0].data_type"
    assert error["details"]["column"] == "a"
    # Errors without details leave the key out rather than sending an empty object.
    missing = assert_error(alice_api.get(f"{API}/jobs/{uuid.uuid4()}"), 404, "NOT_FOUND")
    assert "details" not in missing
    # A missing catalog carries Spark's condition and SQLSTATE (CATALOG_NOT_FOUND).
    catalog = assert_error(alice_api.get(f"{API}/catalogs/nope"), 404, "NOT_FOUND")
    assert catalog["details"] == {"condition": "CATALOG_NOT_FOUND", "sqlstate": "42P08"}


def test_serializer_errors_name_the_field(alice_api, make):
    make.catalog("demo")
    response = alice_api.post(
        f"{API}/catalogs/demo/databases/default/tables",
        {"name": "t", "schema": {"columns": []}, "partition_by": "day"},
    )
    error = assert_error(response, 400, "VALIDATION_ERROR", "'partition_by'")
    assert "partition_by" in error["details"]["fields"]
