"""Upserts without a worker: the ``write.mode`` table option over REST (managed tables with
a primary key only, never passed to Spark), the plan an upsert makes, and the commit's
conflict rule (a base that moved is CONFLICT and nothing changes)."""

from __future__ import annotations

import pytest
from django.db import transaction

from catalog.models import Table
from core.errors import Conflict
from core.planner.sources import stored_source
from jobs.models import Job
from tabledata import commit
from tabledata import staging as write_staging
from tests.conftest import API, assert_error
from tests.worker_helpers import planned, session_for

pytestmark = pytest.mark.django_db

TABLES = f"{API}/catalogs/demo/databases/sales/tables"
KEYED = {
    "columns": [
        {"name": "id", "data_type": "BIGINT"},
        {"name": "name", "data_type": "STRING"},
    ],
    "primary_key": {"columns": ["id"]},
}
UPSERT = {"write.mode": "upsert"}


@pytest.fixture
def sales(make):
    make.catalog("demo")
    make.database("demo", "sales")


def test_write_mode_needs_a_managed_table_with_a_key(alice_api, sales, storage):
    created = alice_api.post(TABLES, {"name": "k", "schema": KEYED, "options": UPSERT})
    assert created.status_code == 201, created.content
    assert created.json()["options"] == {"format": "parquet", "write.mode": "upsert"}
    # Never a reader option: what the worker reads the table with has no write.mode.
    table = Table.objects.get(name="k")
    assert stored_source(table.options, table.location, ()).options == {}
    keyless = {"columns": KEYED["columns"]}
    refused = alice_api.post(TABLES, {"name": "n", "schema": keyless, "options": UPSERT})
    assert_error(refused, 400, "VALIDATION_ERROR", "primary key")
    bad = alice_api.post(TABLES, {"name": "b", "schema": KEYED, "options": {"write.mode": "merge"}})
    assert_error(bad, 400, "VALIDATION_ERROR", "append, upsert")
    external = {"connector": "parquet", "path": str(storage.external / "x"), **UPSERT}
    outside = alice_api.post(TABLES, {"name": "x", "schema": KEYED, "options": external})
    assert_error(outside, 400, "VALIDATION_ERROR", "managed tables only")
    # Dropping the key of a table in upsert mode is refused too.
    patched = alice_api.patch(f"{TABLES}/k", {"schema": keyless}, format="json")
    assert_error(patched, 400, "VALIDATION_ERROR", "primary key")


def _upsert_job(alice, sql: str) -> Job:
    session = session_for(alice)
    plan = planned(session, sql)
    return Job.objects.create(
        session=session, user=alice, sql=sql, kind="insert", plan=plan, status="RUNNING"
    )


def test_the_plan_of_an_upsert(alice, alice_api, sales):
    assert alice_api.post(TABLES, {"name": "k", "schema": KEYED}).status_code == 201
    hinted = planned(
        session_for(alice),
        "INSERT INTO demo.sales.k /*+ OPTIONS('write.mode' = 'upsert') */ "
        "SELECT 1 AS id, 'a' AS name, '+I' AS op",
    )
    assert hinted["args"]["write_mode"] == "upsert" and hinted["args"]["key"] == ["id"]
    assert "OPTIONS" not in hinted["sql"] and "/*" not in hinted["sql"]  # never reaches Spark
    plain = planned(session_for(alice), "INSERT INTO demo.sales.k SELECT 1, 'a'")
    assert "write_mode" not in plain["args"]


def test_a_commit_whose_base_moved_is_a_conflict(alice, alice_api, sales):
    created = alice_api.post(TABLES, {"name": "k", "schema": KEYED, "options": UPSERT})
    assert created.status_code == 201, created.content
    table = Table.objects.get(name="k")
    job = _upsert_job(alice, "INSERT INTO demo.sales.k SELECT 1, 'a'")
    staged = write_staging.prepare(job)
    (item,) = staged.values()
    assert item["mode"] == "upsert" and item["operation"] == "UPSERT"
    identifier = ["demo", "sales", "k"]
    write_staging.record(job, identifier, base_location=table.location + "-old")
    with pytest.raises(Conflict) as raised, transaction.atomic():
        commit.commit(job)
    assert raised.value.code == "CONFLICT" and "changed while the upsert ran" in str(raised.value)
    assert Table.objects.get(pk=table.pk).location == table.location
    # Without a recorded base (a plan that never merged) the commit refuses as well.
    job.staging = {}
    Job.objects.filter(pk=job.pk).update(staging={})
    (item,) = write_staging.prepare(job).values()
    with pytest.raises(Conflict), transaction.atomic():
        commit.commit(job)
    # The base it read is still the table's: the commit swaps in the new version.
    write_staging.record(job, identifier, base_location=table.location)
    with transaction.atomic():
        commit.commit(job)
    assert Table.objects.get(pk=table.pk).location == item["location"]
