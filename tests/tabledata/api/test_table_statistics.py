"""``GET …/tables/{t}/statistics``: files, size, row count from Parquet footers and the last
commit, read in the web process (no Spark), in a constant number of queries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog.models import Database, Table
from tabledata import manifest
from tests.conftest import assert_error, client_for, simple_schema
from tests.tabledata.api.test_writes_lifecycle import (
    TABLES,
    ctas_plan,
    insert_plan,
    run,
    submit,
    write_parquet,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_broker(monkeypatch: Any) -> None:
    """Jobs are driven through their transitions here, as in test_writes_lifecycle."""
    from webapp.celery import app

    monkeypatch.setattr(app, "send_task", lambda name, args=None, **kw: None)


@pytest.fixture(autouse=True)
def _results(settings: Any, tmp_path: Path) -> None:
    settings.RESULTS_DIR = tmp_path / "results"


def stats(api: Any, name: str) -> dict[str, Any]:
    response = api.get(f"{TABLES}/{name}/statistics")
    assert response.status_code == 200, response.content
    body: dict[str, Any] = response.json()
    return body


def test_a_ctas_then_an_insert_are_counted_and_the_last_commit_named(
    session: Any, alice_api: Any, bob: Any, storage: Any
) -> None:
    ctas = run(submit(session, ctas_plan("t")), [1, 2, 3])
    assert ctas.status == "FINISHED"
    body = stats(alice_api, "t")
    assert body["files"] == 1 and body["row_count"] == 3
    assert body["row_count_source"] == "parquet footers" and body["complete"] is True
    location = Path(Table.objects.get(name="t").location)
    assert body["size_bytes"] == sum(p.stat().st_size for p in location.rglob("*.parquet"))
    assert body["last_commit"]["kind"] == "ctas" and body["last_commit"]["job"] == str(ctas.id)
    assert body["last_commit"]["user"] == "alice"

    insert = run(submit(session, insert_plan("t"), sql="INSERT INTO t …"), [4, 5])
    assert insert.status == "FINISHED"
    body = stats(alice_api, "t")
    assert body["files"] == 2 and body["row_count"] == 5  # _SUCCESS is hidden
    assert body["last_commit"]["job"] == str(insert.id)
    assert body["last_commit"]["kind"] == "insert"

    # Another user sees the numbers and who committed, but not alice's job id.
    theirs = stats(client_for(bob), "t")
    assert theirs["row_count"] == 5 and theirs["last_commit"]["user"] == "alice"
    assert theirs["last_commit"]["job"] is None


def test_an_external_table_counts_what_its_manifest_names(
    make: Any, alice_api: Any, storage: Any
) -> None:
    make.catalog("demo")
    make.database("demo", "sales")
    path = storage.external / "ext"
    live = write_parquet(path / "live", [1, 2])
    write_parquet(path / "dropped", [7, 8, 9])  # on disk, not committed
    manifest.write(path, manifest.Manifest(entries=(f"live/{live.name}",)))
    make.table(
        "demo",
        "sales",
        "ext",
        simple_schema("id BIGINT"),
        options={"connector": "parquet", "path": str(path)},
    )
    body = stats(alice_api, "ext")
    assert body["files"] == 1 and body["row_count"] == 2 and body["last_commit"] is None


def test_a_table_with_no_data_and_a_staged_table(
    session: Any, make: Any, alice_api: Any, storage: Any
) -> None:
    make.table("demo", "sales", "empty", simple_schema("id BIGINT"))
    body = stats(alice_api, "empty")
    assert (body["files"], body["size_bytes"], body["row_count"]) == (0, 0, 0)
    assert body["last_modified"] is None and body["last_commit"] is None
    assert body["column_statistics"] is None  # until ANALYZE TABLE stores some
    submit(session, ctas_plan("staged"))
    assert stats(alice_api, "staged") == {
        "files": 0,
        "size_bytes": 0,
        "row_count": None,
        "row_count_source": None,
        "complete": True,
        "last_modified": None,
        "last_commit": None,
        "column_statistics": None,
    }


def test_a_file_that_is_not_parquet_gives_no_row_count(
    make: Any, alice_api: Any, storage: Any
) -> None:
    make.catalog("demo")
    make.database("demo", "sales")
    make.table("demo", "sales", "t", simple_schema("id BIGINT"))
    location = Path(Table.objects.get(name="t").location)
    write_parquet(location, [1])
    (location / "part-00001.parquet").write_bytes(b"not parquet at all")
    body = stats(alice_api, "t")
    assert body["files"] == 2 and body["row_count"] is None


def test_symbolic_links_are_not_followed(
    make: Any, alice_api: Any, storage: Any, tmp_path: Path
) -> None:
    make.catalog("demo")
    make.database("demo", "sales")
    make.table("demo", "sales", "t", simple_schema("id BIGINT"))
    location = Path(Table.objects.get(name="t").location)
    outside = write_parquet(tmp_path / "secret", list(range(100)))
    location.mkdir(parents=True, exist_ok=True)
    (location / "part-link.parquet").symlink_to(outside)
    (location / "dir-link").symlink_to(outside.parent, target_is_directory=True)
    body = stats(alice_api, "t")
    assert body["files"] == 0 and body["row_count"] == 0


def test_statistics_cost_a_constant_number_of_queries(
    session: Any, alice_api: Any, storage: Any
) -> None:
    run(submit(session, ctas_plan("t")), [1])
    with CaptureQueriesContext(connection) as first:
        stats(alice_api, "t")
    for n in range(5):
        run(submit(session, insert_plan("t"), sql="INSERT INTO t …"), [n])
    with CaptureQueriesContext(connection) as later:
        assert stats(alice_api, "t")["row_count"] == 6
    assert len(later) == len(first)


def test_unknown_tables_views_and_hostile_names(session: Any, alice_api: Any) -> None:
    assert_error(alice_api.get(f"{TABLES}/nope/statistics"), 404, "NOT_FOUND", "nope")
    # A view's row, as the view services store it (here without a worker's analyzer: the
    # statistics endpoint only reads its kind).
    Table.objects.create(
        database=Database.objects.get(catalog__name="demo", name="sales"),
        name="v",
        kind=Table.KIND_VIEW,
        schema={"columns": [{"name": "x", "type": "INT"}]},
    )
    assert_error(alice_api.get(f"{TABLES}/v/statistics"), 404, "NOT_FOUND", "is a view")
    assert_error(alice_api.get(f"{TABLES}/..%2F..%2Fetc/statistics"), 404, "NOT_FOUND")
    assert_error(alice_api.get(f"{TABLES}/x'%3B%20DROP%20TABLE%20t--/statistics"), 404, "NOT_FOUND")


def test_signed_out_callers_get_401(session: Any, anon_api: Any) -> None:
    assert_error(anon_api.get(f"{TABLES}/t/statistics"), 401, "NOT_AUTHENTICATED")


def test_stored_column_statistics_are_answered_and_only_the_owner_stores_them(
    session: Any, make: Any, alice: Any, bob: Any, alice_api: Any
) -> None:
    """``catalog.services.table_store_statistics`` (what ANALYZE TABLE's FINISHED hook calls):
    the owner's figures are answered as ``column_statistics``; NOSCAN keeps the scan's;
    another user is refused and nothing changes."""
    from catalog import services
    from core.errors import PermissionDenied

    make.table("demo", "sales", "analyzed", simple_schema("id BIGINT"))
    table = Table.objects.get(name="analyzed")
    updated_at = table.updated_at
    column = {
        "name": "id",
        "data_type": "BIGINT",
        "null_count": 1,
        "distinct_count": 9,
        "min": "0",
        "max": "9",
        "avg": 4.5,
        "avg_length": None,
        "max_length": None,
    }
    scan = {
        "row_count": 11,
        "columns": [column],
        "computed_at": "2026-01-02T03:04:05Z",
        "files": 2,
        "size_bytes": 300,
        "size_computed_at": "2026-01-02T03:04:06Z",
    }
    services.table_store_statistics(user=alice, table=table, mode="columns", figures=scan)
    assert stats(alice_api, "analyzed")["column_statistics"] == scan
    noscan = {"files": 3, "size_bytes": 400, "size_computed_at": "2026-02-01T00:00:00Z"}
    services.table_store_statistics(user=alice, table=table, mode="noscan", figures=noscan)
    body = stats(alice_api, "analyzed")["column_statistics"]
    assert body == {**scan, **noscan}

    with pytest.raises(PermissionDenied):
        services.table_store_statistics(
            user=bob, table=table, mode="noscan", figures=noscan | {"files": 99}
        )
    table.refresh_from_db()
    assert table.column_statistics == {**scan, **noscan}
    assert table.updated_at == updated_at  # the commits' window is not moved
