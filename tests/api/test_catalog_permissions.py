"""``can`` on every catalog object: what the requesting user may do with it, by the same
ownership rule the services enforce (an admin, the object's creator, its catalog's owner),
computed without a query per row on list pages."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from tests.conftest import API, CatalogFactory, assert_error, simple_schema

pytestmark = pytest.mark.django_db

OWNER = {"modify": True, "drop": True, "create": False}
NOBODY = {"modify": False, "drop": False, "create": False}
D = f"{API}/catalogs/c/databases/d"


@pytest.fixture
def objects(make: CatalogFactory, storage: Any, analyzer: Any) -> None:
    """Alice's catalog ``c`` with database ``d``: a table, a view (its schema derived by a
    worker's analyzer) and a function of hers."""
    make.catalog("c")
    make.database("c", "d")
    make.table("c", "d", "t")
    make.view("c", "d", "v")
    make.function("c", "d", "f")


@pytest.mark.parametrize(
    "path",
    [f"{D}/tables/t", f"{D}/views/v", f"{D}/functions/f"],
)
def test_an_object_says_who_may_change_and_drop_it(
    objects: None, path: str, alice_api: APIClient, bob_api: APIClient, admin_api: APIClient
) -> None:
    assert alice_api.get(path).json()["can"] == OWNER
    assert admin_api.get(path).json()["can"] == OWNER
    assert bob_api.get(path).json()["can"] == NOBODY
    # ... and the flags tell the truth: what bob is told he may not do, he may not do.
    assert_error(bob_api.delete(path), 403, "PERMISSION_DENIED")
    assert_error(bob_api.patch(path, {"comment": "mine now"}), 403, "PERMISSION_DENIED")
    assert alice_api.get(path).status_code == 200


def test_catalogs_and_databases_may_be_created_in_by_anyone_changed_by_their_owners(
    objects: None, alice_api: APIClient, bob_api: APIClient
) -> None:
    assert alice_api.get(f"{API}/catalogs/c").json()["can"] == {
        "modify": True,
        "drop": True,
        "create": True,
    }
    mine_not = {"modify": False, "drop": False, "create": True}
    assert bob_api.get(f"{API}/catalogs/c").json()["can"] == mine_not
    assert bob_api.get(D).json()["can"] == mine_not
    # Bob may create a database in alice's catalog (create: true) and owns what he creates,
    # but the catalog's owner may still change it.
    created = bob_api.post(f"{API}/catalogs/c/databases", {"name": "bobs"})
    assert created.status_code == 201
    assert created.json()["can"] == {"modify": True, "drop": True, "create": True}
    assert alice_api.get(f"{API}/catalogs/c/databases/bobs").json()["can"]["drop"] is True
    assert_error(bob_api.delete(f"{API}/catalogs/c"), 403, "PERMISSION_DENIED")


def test_a_table_bob_created_in_alices_catalog_is_his_and_hers(
    objects: None, alice_api: APIClient, bob_api: APIClient
) -> None:
    made = bob_api.post(f"{D}/tables", {"name": "bobs", "schema": simple_schema()})
    assert made.status_code == 201 and made.json()["can"] == OWNER
    assert alice_api.get(f"{D}/tables/bobs").json()["can"] == OWNER  # the catalog's owner
    assert bob_api.get(f"{D}/tables/t").json()["can"] == NOBODY


def test_signed_out_callers_learn_nothing(objects: None, anon_api: APIClient) -> None:
    assert_error(anon_api.get(f"{D}/tables/t"), 401, "NOT_AUTHENTICATED")


def _queries(client: APIClient, path: str) -> tuple[int, list[Any]]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(path)
    assert response.status_code == 200, response.content
    return len(queries), response.json()["items"]


@pytest.mark.parametrize("kind", ["tables", "views", "functions"])
def test_list_pages_compute_can_without_a_query_per_row(
    make: CatalogFactory, bob_api: APIClient, storage: Any, analyzer: Any, kind: str
) -> None:
    make.catalog("c")
    make.database("c", "d")

    def create(factory: CatalogFactory, name: str) -> None:
        getattr(factory, kind[:-1])("c", "d", name)

    create(make, "a0")
    few, items = _queries(bob_api, f"{D}/{kind}")
    assert [item["can"] for item in items] == [NOBODY]
    for n in range(1, 8):
        create(make, f"a{n}")
    create(CatalogFactory(bob_api), "b")
    many, items = _queries(bob_api, f"{D}/{kind}")
    assert many == few
    assert [item["can"]["drop"] for item in items] == [False] * 8 + [True]


def test_catalog_and_database_lists_compute_can_without_a_query_per_row(
    make: CatalogFactory, alice_api: APIClient, bob_api: APIClient
) -> None:
    make.catalog("c0")
    few, _ = _queries(bob_api, f"{API}/catalogs")
    few_dbs, _ = _queries(bob_api, f"{API}/catalogs/c0/databases")
    for n in range(1, 6):
        make.catalog(f"c{n}")
        make.database("c0", f"d{n}")
    CatalogFactory(bob_api).catalog("zbob")
    many, items = _queries(bob_api, f"{API}/catalogs")
    assert many == few
    assert [item["can"]["drop"] for item in items] == [False] * 6 + [True]
    many_dbs, dbs = _queries(bob_api, f"{API}/catalogs/c0/databases")
    assert many_dbs == few_dbs and not any(item["can"]["drop"] for item in dbs)
    assert all(item["can"]["create"] for item in dbs)
