"""A constant number of SQL queries per page whatever the number of grants a user holds
(issue 18, ADR 0011 §2.2): with 1, 10 or 1,500 object grants, lists, search, completion
and lookups cost the same count — what the user holds is loaded in one query, and the
filters send the granted ids as one parameter.

Counts, as the benchmark counts them: one query authenticates the token, one loads what the
user holds, (one finds the parent,) then one per page (search: one per kind asked).
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection

from catalog import services
from catalog.models import Catalog, Column, ColumnName, Database, Grant, Table
from tests.conftest import API, client_for

pytestmark = pytest.mark.django_db

TABLES = 1600


@pytest.fixture
def big(alice: User) -> Database:
    """Alice's catalog ``big``: database ``d`` with TABLES tables of one column each."""
    catalog = services.catalog_create(user=alice, name="big", default_database="d")
    database = catalog.databases.get()
    services.database_create(user=alice, catalog=catalog, name="e")
    tables = Table.objects.bulk_create(
        Table(
            database=database,
            name=f"tbl{i:05d}",
            name_key=f"tbl{i:05d}",
            kind=Table.KIND_TABLE,
            options={"format": "parquet"},
            created_by=alice,
            owner=alice,
        )
        for i in range(TABLES)
    )
    Column.objects.bulk_create(
        Column(table=t, position=0, name=f"col_{t.name}", name_key=f"col_{t.name}", kind="p")
        for t in tables
    )
    ColumnName.objects.bulk_create(ColumnName(name_key=f"col_{t.name}") for t in tables)
    analyze()
    return database


def analyze() -> None:
    """Statistics of the rows just made, as a live catalog has them: without, PostgreSQL
    plans the column search on defaults, and one such plan ran for minutes."""
    with connection.cursor() as cursor:
        for table in ("catalog_table", "catalog_column", "catalog_columnname", "catalog_grant"):
            cursor.execute(f"ANALYZE {table}")


def grant(database: Database, user: User, count: int) -> None:
    """SELECT on the first ``count`` tables of ``database`` to ``user``, and one more table
    (the last) through a team of theirs."""
    team = Group.objects.create(name="analysts")
    user.groups.add(team)
    rows = list(Table.objects.filter(database=database).order_by("name_key")[:count])
    last = Table.objects.filter(database=database).order_by("-name_key").first()
    assert last is not None
    common = {
        "privilege": "SELECT",
        "securable_kind": "table",
        "catalog_id": database.catalog_id,
        "database_id": database.pk,
    }
    Grant.objects.bulk_create(
        [
            Grant(
                table=t,
                securable_key=f"relation:{t.pk}",
                user=user,
                principal_key=f"user:{user.pk}",
                **common,
            )
            for t in rows
        ]
        + [
            Grant(
                table=last,
                securable_key=f"relation:{last.pk}",
                team=team,
                principal_key=f"team:{team.pk}",
                **common,
            )
        ]
    )
    analyze()


REQUESTS = {
    # name: (url, queries)
    "catalogs": (f"{API}/catalogs", 3),
    "databases": (f"{API}/catalogs/big/databases", 4),
    "tables": (f"{API}/catalogs/big/databases/d/tables?page_size=50", 4),
    "tables, deep": (f"{API}/catalogs/big/databases/d/tables?page_size=5&page_token=", 4),
    "get table": (f"{API}/catalogs/big/databases/d/tables/tbl00000", 3),
    "search tables": (f"{API}/search?q=tbl&kind=table&page_size=50", 3),
    "search columns": (f"{API}/search?q=col_&kind=column&page_size=50", 3),
    # Every kind is asked (no table name contains the text), whatever the page holds.
    "search all": (f"{API}/search?q=col_tbl000&page_size=1000", 2 + 4),
    # Completion finds the database (or catalog) first, then one query per group.
    "complete": (f"{API}/complete?path=big.d.tb&limit=2", 4),  # tables fill the page
    "complete, few": (f"{API}/complete?path=big.d.tbl0159&limit=50", 5),
    "complete databases": (f"{API}/complete?path=big.&limit=50", 4),
}


@pytest.mark.parametrize("count", [1, 10, 1500])
@pytest.mark.parametrize("request_name", list(REQUESTS))
def test_one_count_whatever_the_grants(
    big: Database, bob: User, django_assert_num_queries: Any, count: int, request_name: str
) -> None:
    grant(big, bob, count)
    client = client_for(bob)
    url, expected = REQUESTS[request_name]
    if url.endswith("page_token="):
        from webapp.pagination import encode_page_token

        url += encode_page_token("tbl00000")
    with django_assert_num_queries(expected):
        response = client.get(url)
    assert response.status_code == 200, response.content
    body = response.json()
    visible = count + 1  # and the one through the team
    if request_name == "tables":
        assert len(body["items"]) == min(50, visible)
        assert body["items"][0]["name"] == "tbl00000"
    if request_name == "tables, deep":
        assert len(body["items"]) == min(5, visible - 1)
    if request_name == "search tables":
        assert len(body["items"]) == min(50, visible)
    if request_name == "search columns":
        assert len(body["items"]) == min(50, visible)
        assert body["items"][0]["column"] == "col_tbl00000"
    if request_name == "search all":
        assert len(body["items"]) == min(100, count)  # the columns of tbl00000..tbl00099
    if request_name == "complete":
        assert [item["label"] for item in body["items"]][:1] == ["tbl00000"]
        assert len(body["items"]) == 2
    if request_name == "complete, few":
        assert [item["label"] for item in body["items"]] == ["tbl01599"]
    if request_name == "complete databases":
        assert [item["label"] for item in body["items"]] == ["d"]
    if request_name == "databases":
        assert [item["name"] for item in body["items"]] == ["d"]
    if request_name == "catalogs":
        assert [item["name"] for item in body["items"]] == ["big"]


def test_the_owner_and_an_admin_pay_the_same_count(
    big: Database, alice: User, admin: User, django_assert_num_queries: Any
) -> None:
    """The owner of the whole catalog reads today's SQL (no filter on a database they see
    whole) plus the one query of what they hold; an admin too."""
    for user in (alice, admin):
        client = client_for(user)
        with django_assert_num_queries(4):
            response = client.get(f"{API}/catalogs/big/databases/d/tables?page_size=50")
        assert len(response.json()["items"]) == 50
    assert Catalog.objects.filter(name="big").exists()
