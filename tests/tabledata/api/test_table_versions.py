"""Table versions without a worker: a REST-made managed table is version 0, the migration's
fill, the retention setting, the versions list's errors and DROP of every version's
directory (the commits themselves: tests/tabledata/worker/test_versions.py)."""

from __future__ import annotations

import importlib
from datetime import timedelta
from pathlib import Path

import pytest
from django.apps import apps
from django.db import transaction
from django.utils import timezone

from catalog import versions
from catalog.models import Table, TableVersion
from core.durations import describe_seconds, parse_seconds
from tests.conftest import API, assert_error

TABLES = f"{API}/catalogs/demo/databases/sales/tables"
fill = importlib.import_module("catalog.migrations.0009_table_versions").fill


@pytest.fixture
def sales(make):
    make.catalog("demo")
    make.database("demo", "sales")


def test_a_managed_table_made_over_rest_is_version_zero(alice_api, sales, make, alice):
    make.table("demo", "sales", "t")
    body = alice_api.get(f"{TABLES}/t/versions").json()
    assert body["next_page_token"] is None
    [only] = body["items"]
    assert (only["version"], only["operation"], only["user"]) == (0, "CREATE TABLE", "alice")
    assert only["current"] and only["readable"] and only["rows"] is None
    assert only["job_id"] is None and only["metrics"] == {}


def test_the_versions_list_refuses_what_has_no_versions(alice_api, anon_api, sales, make):
    assert_error(alice_api.get(f"{TABLES}/nope/versions"), 404, "NOT_FOUND")
    make.table("demo", "sales", "t")
    assert anon_api.get(f"{TABLES}/t/versions").status_code in (401, 403)
    for token in ("x", "WyJhIl0", "LTE", "OTk5OTk5OTk5OTk5OTk5"):  # junk, ["a"], -1, huge
        assert_error(
            alice_api.get(f"{TABLES}/t/versions?page_token={token}"), 400, "VALIDATION_ERROR"
        )
    assert_error(alice_api.get(f"{TABLES}/t/versions?page_size=0"), 400, "VALIDATION_ERROR")


def test_the_migration_gives_existing_managed_tables_version_zero(sales, make):
    make.table("demo", "sales", "t")
    table = Table.objects.get(name="t")
    TableVersion.objects.filter(table=table).delete()  # as before the migration
    fill(apps, None)
    fill(apps, None)  # twice: nothing more
    [v0] = TableVersion.objects.filter(table=table)
    assert (v0.version, v0.location, v0.operation) == (0, table.location, "CREATE TABLE")
    assert v0.created_at == table.created_at and v0.user_id == table.created_by_id


def test_drop_removes_every_kept_version(
    alice_api, sales, make, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        make.table("demo", "sales", "t")
    table = Table.objects.get(name="t")
    old = Path(table.location)
    newer = old.parent / (old.name + "-v1")
    newer.mkdir(parents=True)
    (newer / "part-0.parquet").write_bytes(b"x")
    with transaction.atomic():
        table.location = str(newer)
        table.save(update_fields=["location"])
        versions.record(table, location=str(newer), operation=versions.OP_INSERT)
    assert old.is_dir() and newer.is_dir()
    with django_capture_on_commit_callbacks(execute=True):
        assert alice_api.delete(f"{TABLES}/t").status_code == 204
    assert not old.exists() and not newer.exists()
    assert not TableVersion.objects.exists()


def test_expiry_keeps_the_current_version_and_respects_the_retention(
    sales, make, settings, django_capture_on_commit_callbacks
):
    settings.TESSERA_VERSION_RETENTION_SECONDS = 3600
    with django_capture_on_commit_callbacks(execute=True):
        make.table("demo", "sales", "t")
    table = Table.objects.get(name="t")
    old = Path(table.location)
    newer = old.parent / (old.name + "-v1")
    newer.mkdir()
    with transaction.atomic():
        table.location = str(newer)
        table.save(update_fields=["location"])
        versions.record(table, location=str(newer), operation=versions.OP_OVERWRITE)
    now = timezone.now()
    assert versions.expire(now + timedelta(minutes=59)) == []
    with pytest.raises(Exception, match="has no version 5; its readable versions are 0 to 1"):
        versions.at_version(table, 5)
    with django_capture_on_commit_callbacks(execute=True):
        assert versions.expire(now + timedelta(minutes=61)) == [str(old)]
    assert not old.exists() and newer.is_dir()
    assert versions.expire(now + timedelta(days=3650)) == []  # never the current one
    with pytest.raises(Exception, match="has expired: its data was removed 1 hour after"):
        versions.at_version(table, 0)


def test_retention_setting() -> None:
    assert parse_seconds("7d", "X") == 7 * 86400
    assert parse_seconds(" 12h ", "X") == 43200
    assert parse_seconds("90", "X") == 90 and parse_seconds("2w", "X") == 14 * 86400
    for bad in ("", "-1", "1y", "7 days", "1e3", "9" * 13):
        with pytest.raises(ValueError, match="TESSERA_VERSION_RETENTION"):
            parse_seconds(bad, "TESSERA_VERSION_RETENTION")
    assert describe_seconds(604800) == "1 week" and describe_seconds(3600) == "1 hour"
    assert describe_seconds(90) == "90 seconds"
