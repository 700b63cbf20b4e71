"""USE shows that a table exists and its schema, nothing computed from its data.

Reproduced (a hostile probe): bob, with USE on alice's catalog and on her table ``secret``
and SELECT on ``open`` only, was refused ``GET …/secret/statistics`` (403) and ``SELECT
count(*)`` (PERMISSION_DENIED), yet ``GET …/secret/versions`` answered each version's
``rows`` and ``metrics``, and ``DESCRIBE HISTORY`` showed the same columns: the row count
through the back door. Now those figures need SELECT, in REST and SQL alike: a USE-only
reader sees the versions (who, when, which operation) with ``rows`` and ``metrics`` null.
The owner and a SELECT holder (granted on the table or inherited from the catalog) see them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import transaction
from rest_framework.test import APIClient

from catalog import services as catalog_services
from catalog import versions
from catalog.models import Catalog, Table
from tests.conftest import API, assert_error, client_for, simple_schema
from tests.grants_support import share
from tests.worker_helpers import create_user, open_session, statement

pytestmark = [pytest.mark.django_db(transaction=True)]

ROWS, METRICS = 1234, {"num_files": 3, "bytes_written": 98765}


def committed(table: Table) -> None:
    """A second version of ``table`` with a row count and metrics, as a commit records it."""
    newer = Path(table.location).parent / (Path(table.location).name + "-v1")
    newer.mkdir(parents=True, exist_ok=True)
    with transaction.atomic():
        table.location = str(newer)
        table.save(update_fields=["location"])
        versions.record(
            table,
            location=str(newer),
            operation=versions.OP_INSERT,
            user_id=table.owner_id,
            rows=ROWS,
            metrics=METRICS,
        )


class World:
    """alice's catalog ``acat`` with managed tables ``secret`` and ``open``, each committed
    once; bob: USE on the catalog and on ``secret``, SELECT on ``open``; carol: SELECT on
    the whole catalog (inherited by both tables)."""

    def __init__(self) -> None:
        self.alice, self.bob, self.carol = (create_user(n) for n in ("alice", "bob", "carol"))
        catalog = catalog_services.catalog_create(
            user=self.alice, name="acat", default_database="d"
        )
        database = catalog.databases.get(name="d")
        self.tables = {}
        for name in ("secret", "open"):
            table = catalog_services.table_create(
                user=self.alice, database=database, name=name, schema=schema()
            )
            committed(table)
            self.tables[name] = table
        share(Catalog.objects.get(pk=catalog.pk), ["USE"], user=self.bob)
        share(self.tables["secret"], ["USE"], user=self.bob)
        share(self.tables["open"], ["SELECT"], user=self.bob)
        share(Catalog.objects.get(pk=catalog.pk), ["USE", "SELECT"], user=self.carol)

    def api(self, user: User) -> APIClient:
        return client_for(user)


def schema() -> Any:
    from core.schema import Schema

    return Schema.from_dict(simple_schema("id BIGINT"))


@pytest.fixture
def world() -> World:
    return World()


def url(name: str, tail: str = "") -> str:
    return f"{API}/catalogs/acat/databases/d/tables/{name}{tail}"


def rest_versions(api: APIClient, name: str) -> list[dict[str, Any]]:
    response = api.get(url(name, "/versions"))
    assert response.status_code == 200, response.content
    return list(response.json()["items"])


def history(api: APIClient, name: str) -> list[dict[str, Any]]:
    """``DESCRIBE HISTORY``'s rows as dicts by column name."""
    session_id = open_session(api)
    job = statement(api, session_id, f"DESCRIBE HISTORY acat.d.{name}", wait=30)
    assert job["status"] == "FINISHED", job
    page = api.get(f"{API}/jobs/{job['id']}/result").json()
    names = [c["name"] for c in page["columns"]]
    return [dict(zip(names, row, strict=True)) for row in page["rows"]]


def test_a_use_only_reader_sees_the_versions_without_their_figures(world: World) -> None:
    bob = world.api(world.bob)
    newest, first = rest_versions(bob, "secret")
    assert (newest["version"], newest["operation"], newest["user"]) == (1, "INSERT", "alice")
    assert newest["rows"] is None and newest["metrics"] is None, newest
    assert first["rows"] is None and first["metrics"] is None, first
    assert set(newest) == set(rest_versions(world.api(world.alice), "secret")[0])  # same shape
    rows = history(bob, "secret")
    assert [r["version"] for r in rows] == [1, 0]
    assert all(r["rows"] is None and r["metrics"] is None for r in rows), rows
    assert rows[0]["operation"] == "INSERT"


def test_a_use_only_reader_is_refused_the_rest_as_before(world: World) -> None:
    bob = world.api(world.bob)
    assert bob.get(url("secret")).status_code == 200  # it exists, with its schema
    assert_error(bob.get(url("secret", "/statistics")), 403, "PERMISSION_DENIED", "SELECT")
    job = statement(bob, open_session(bob), "SELECT count(*) FROM acat.d.secret", wait=30)
    assert job["status"] == "FAILED" and job["error"]["code"] == "PERMISSION_DENIED", job


def test_the_table_detail_and_list_carry_no_figures(world: World) -> None:
    bob = world.api(world.bob)
    detail = bob.get(url("secret")).json()
    listed = bob.get(f"{API}/catalogs/acat/databases/d/tables").json()["items"]
    text = json.dumps([detail, listed])
    for word in ("row_count", "size_bytes", "num_files", "column_statistics", str(ROWS)):
        assert word not in text, word


@pytest.mark.parametrize("who", ["alice", "carol"])
def test_the_owner_and_a_select_holder_see_the_figures(world: World, who: str) -> None:
    api = world.api(getattr(world, who))
    for name in ("secret", "open"):
        newest = rest_versions(api, name)[0]
        assert (newest["rows"], newest["metrics"]) == (ROWS, METRICS), newest
        row = history(api, name)[0]
        assert (row["rows"], json.loads(row["metrics"])) == (ROWS, METRICS), row


def test_select_on_one_table_shows_its_figures_only(world: World) -> None:
    bob = world.api(world.bob)
    newest = rest_versions(bob, "open")[0]
    assert (newest["rows"], newest["metrics"]) == (ROWS, METRICS), newest
    assert history(bob, "open")[0]["rows"] == ROWS
    assert rest_versions(bob, "secret")[0]["rows"] is None
