"""Catalogs: create with a default database, read, patch, names case-preserving and
matched case-insensitively, percent-encoded names."""

from __future__ import annotations

import pytest

from catalog.models import Catalog, Database
from tests.conftest import API, assert_error

pytestmark = pytest.mark.django_db


def test_create_catalog_with_its_default_database(alice_api):
    response = alice_api.post(
        f"{API}/catalogs", {"name": "demo", "comment": "Demo data", "properties": {"team": "bi"}}
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["name"] == "demo"
    assert body["comment"] == "Demo data"
    assert body["owner"] == "alice"
    assert body["properties"] == {"team": "bi"}
    assert body["default_database"] == "default"
    assert body["created_at"] and body["updated_at"]

    databases = alice_api.get(f"{API}/catalogs/demo/databases").json()
    assert [d["name"] for d in databases["items"]] == ["default"]
    default = alice_api.get(f"{API}/catalogs/demo/databases/default")
    assert default.status_code == 200
    assert default.json()["catalog"] == "demo"
    assert default.json()["owner"] == "alice"


def test_create_catalog_with_a_named_default_database(alice_api):
    response = alice_api.post(f"{API}/catalogs", {"name": "Sales", "default_database": "Main"})
    assert response.status_code == 201
    assert response.json()["default_database"] == "Main"
    assert list(Database.objects.filter(catalog__name="Sales").values_list("name", flat=True)) == [
        "Main"
    ]


def test_names_are_case_preserving_and_matched_case_insensitively(alice_api, make):
    make.catalog("demo")
    found = alice_api.get(f"{API}/catalogs/DEMO")
    assert found.status_code == 200
    assert found.json()["name"] == "demo"

    clash = alice_api.post(f"{API}/catalogs", {"name": "Demo"})
    assert_error(clash, 409, "ALREADY_EXISTS", "[Demo]")
    assert list(Catalog.objects.values_list("name", flat=True)) == ["demo"]

    make.database("demo", "Sales")
    assert alice_api.get(f"{API}/catalogs/Demo/databases/SALES").json()["name"] == "Sales"
    clash = alice_api.post(f"{API}/catalogs/demo/databases", {"name": "sales"})
    assert_error(clash, 409, "ALREADY_EXISTS", "`demo`.`sales`")
    # The default database counts too.
    assert_error(
        alice_api.post(f"{API}/catalogs/demo/databases", {"name": "DEFAULT"}),
        409,
        "ALREADY_EXISTS",
    )

    make.table("demo", "Sales", "Orders")
    table = alice_api.get(f"{API}/catalogs/DEMO/databases/sales/tables/orders").json()
    assert (table["catalog"], table["database"], table["name"]) == ("demo", "Sales", "Orders")
    clash = alice_api.post(
        f"{API}/catalogs/demo/databases/sales/tables",
        {"name": "ORDERS", "schema": {"columns": [{"name": "a", "data_type": "INT"}]}},
    )
    assert_error(clash, 409, "ALREADY_EXISTS", "Table `demo`.`Sales`.`Orders` already exists.")


def test_percent_encoded_names(alice_api, make):
    make.catalog("my cat")
    make.database("my cat", "Ünïcode.db")
    assert alice_api.get(f"{API}/catalogs/my%20cat").json()["name"] == "my cat"
    response = alice_api.get(f"{API}/catalogs/my%20cat/databases/%C3%BCn%C3%AFcode.DB")
    assert response.status_code == 200, response.content
    assert response.json()["name"] == "Ünïcode.db"
    make.table("my cat", "Ünïcode.db", "t`x 100%")
    table = alice_api.get(
        f"{API}/catalogs/MY%20CAT/databases/%C3%9Cn%C3%AFcode.db/tables/T%60X%20100%25"
    ).json()
    assert table["name"] == "t`x 100%"


@pytest.mark.xfail(
    strict=True,
    reason="WSGI decodes %2F in PATH_INFO before routing, so a name containing '/' can be "
    "created but not addressed in a path (known gap, reported).",
)
def test_a_name_with_a_slash_can_be_addressed(alice_api, make):
    make.catalog("demo")
    make.database("demo", "a/b")
    response = alice_api.get(f"{API}/catalogs/demo/databases/a%2Fb")
    assert response.status_code == 200


def test_missing_objects_are_404_naming_what_is_missing(alice_api, make):
    assert_error(
        alice_api.get(f"{API}/catalogs/nope"),
        404,
        "NOT_FOUND",
        "A catalog with name [nope] does not exist.",
    )
    make.catalog("demo")
    assert_error(
        alice_api.get(f"{API}/catalogs/demo/databases/nope"),
        404,
        "NOT_FOUND",
        "Database `demo`.`nope` does not exist.",
    )
    assert_error(
        alice_api.get(f"{API}/catalogs/nope/databases/default/tables/t"),
        404,
        "NOT_FOUND",
        "[nope]",
    )
    assert_error(
        alice_api.get(f"{API}/catalogs/demo/databases/default/tables/t"),
        404,
        "NOT_FOUND",
        "Table `demo`.`default`.`t` does not exist.",
    )


def test_patch_catalog(alice_api, make):
    make.catalog("demo", comment="old", properties={"a": "1"})
    make.database("demo", "Sales")
    response = alice_api.patch(
        f"{API}/catalogs/demo",
        {"comment": "new", "properties": {"b": "2"}, "default_database": "sales"},
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["comment"] == "new"
    assert body["properties"] == {"b": "2"}
    assert body["default_database"] == "Sales"  # the database's own spelling
    assert alice_api.get(f"{API}/catalogs/demo").json() == body


def test_patch_catalog_default_database_must_exist(alice_api, make):
    make.catalog("demo")
    response = alice_api.patch(f"{API}/catalogs/demo", {"default_database": "nope"})
    error = assert_error(response, 400, "VALIDATION_ERROR", "`demo`.`nope` does not exist")
    assert error["details"] == {"field": "default_database"}
    assert Catalog.objects.get(name="demo").default_database == "default"


def test_patch_database(alice_api, make):
    make.catalog("demo")
    make.database("demo", "sales", comment="old")
    response = alice_api.patch(
        f"{API}/catalogs/demo/databases/sales", {"comment": "new", "properties": {"k": "v"}}
    )
    assert response.status_code == 200
    assert response.json()["comment"] == "new"
    assert response.json()["properties"] == {"k": "v"}


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"name": ""}, "A catalog name must not be empty."),
        ({"name": "   "}, "A catalog name must not be only whitespace."),
        ({"name": "a\nb"}, "must not contain control characters"),
        ({"name": "x" * 256}, "255 characters"),
        ({"name": "ok", "default_database": " "}, "A database name must not be only whitespace."),
        ({"name": "ok", "properties": {"k": True}}, "properties.k"),
        ({"name": "ok", "properties": ["k"]}, "properties"),
        ({}, "name"),
    ],
)
def test_invalid_catalogs_are_refused_and_nothing_is_written(alice_api, body, fragment):
    response = alice_api.post(f"{API}/catalogs", body)
    assert_error(response, 400, "VALIDATION_ERROR", fragment)
    assert not Catalog.objects.exists()
    assert not Database.objects.exists()


@pytest.mark.parametrize(
    ("name", "fragment"),
    [("", "A database name must not be empty."), ("\t ", "must not be only whitespace")],
)
def test_invalid_database_names_are_refused(alice_api, make, name, fragment):
    make.catalog("demo")
    response = alice_api.post(f"{API}/catalogs/demo/databases", {"name": name})
    assert_error(response, 400, "VALIDATION_ERROR", fragment)
    assert list(Database.objects.values_list("name", flat=True)) == ["default"]


def test_an_empty_catalog_can_be_dropped(alice_api, make):
    make.catalog("demo")
    assert alice_api.delete(f"{API}/catalogs/DEMO").status_code == 204
    assert not Catalog.objects.exists()
    assert not Database.objects.exists()
    assert_error(alice_api.delete(f"{API}/catalogs/demo"), 404, "NOT_FOUND")


@pytest.mark.parametrize("value", [1, True, None, ["a"], {"k": "v"}])
def test_property_values_must_be_strings_and_are_not_coerced(alice_api, value):
    response = alice_api.post(f"{API}/catalogs", {"name": "c", "properties": {"team": value}})
    error = assert_error(response, 400, "VALIDATION_ERROR", "properties.team", "string")
    assert error["details"]["field"] == "properties.team"
    assert not Catalog.objects.filter(name_key="c").exists()
    alice_api.post(f"{API}/catalogs", {"name": "c"})
    response = alice_api.post(f"{API}/catalogs/c/databases", {"name": "d", "properties": {"n": 2}})
    assert_error(response, 400, "VALIDATION_ERROR", "properties.n")
    assert not Database.objects.filter(name_key="d").exists()
