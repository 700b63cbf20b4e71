"""Where table data lives. Managed tables own a warehouse directory (created after commit,
deleted with the table); external tables point under a storage root and their files are
never deleted. Dropping non-empty databases and catalogs needs cascade.

These tests commit for real (transaction=True) so that the on-commit file-system work runs
exactly as in production.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog.models import Catalog, Column, Database, Function, Table
from tests.conftest import API, assert_error, simple_schema

pytestmark = pytest.mark.django_db(transaction=True)

DB = f"{API}/catalogs/demo/databases"


@pytest.fixture
def demo(make):
    make.catalog("demo")
    make.database("demo", "sales")


def external_dir(storage, name: str) -> Path:
    """A directory under the storage root holding one real data file."""
    folder: Path = storage.external / name
    folder.mkdir()
    (folder / "part-00000.csv").write_text("id,name\n1,alpha\n2,beta\n")
    return folder


def test_managed_table_directory_lives_and_dies_with_the_table(alice_api, make, demo, storage):
    table = make.table("demo", "sales", "Orders")
    assert table["managed"] is True
    assert table["options"] == {"format": "parquet"}
    location = Path(table["location"])
    assert location.is_dir()
    assert storage.warehouse in location.parents
    assert location.parent == storage.warehouse / "demo" / "sales"
    assert location.name.startswith("orders-")
    (location / "part-0.parquet").write_bytes(b"PAR1")  # as if Spark had written data

    assert alice_api.delete(f"{DB}/sales/tables/orders").status_code == 204
    assert not location.exists()
    assert not Table.objects.exists()
    assert not Column.objects.exists()
    assert_error(alice_api.get(f"{DB}/sales/tables/orders"), 404, "NOT_FOUND")


def test_recreated_managed_table_gets_a_fresh_directory(make, alice_api, demo):
    first = Path(make.table("demo", "sales", "t")["location"])
    alice_api.delete(f"{DB}/sales/tables/t")
    second = Path(make.table("demo", "sales", "t")["location"])
    assert first != second
    assert second.is_dir() and not first.exists()


def test_managed_table_with_another_format(make, demo):
    table = make.table("demo", "sales", "t", options={"format": "JSON", "compression": "gzip"})
    assert table["options"] == {"format": "json", "compression": "gzip"}
    assert table["managed"] is True
    assert Path(table["location"]).is_dir()


def test_external_table_keeps_its_files_when_dropped(alice_api, make, demo, storage):
    folder = external_dir(storage, "orders")
    table = make.table(
        "demo",
        "sales",
        "orders",
        schema=simple_schema("id BIGINT", "name STRING"),
        options={"connector": "CSV", "path": str(folder), "header": "true"},
    )
    assert table["managed"] is False
    assert table["options"] == {"connector": "csv", "path": str(folder), "header": "true"}
    assert table["location"] == ""
    assert not storage.warehouse.exists()  # nothing was created for it

    assert alice_api.delete(f"{DB}/sales/tables/orders").status_code == 204
    assert (folder / "part-00000.csv").read_text() == "id,name\n1,alpha\n2,beta\n"
    assert not Table.objects.exists()


def test_external_path_is_stored_normalised(make, demo, storage):
    folder = external_dir(storage, "data")
    table = make.table(
        "demo", "sales", "t", options={"connector": "parquet", "path": f"file://{folder}/"}
    )
    assert table["options"]["path"] == str(folder)


def test_external_path_hadoop_would_read_differently_is_refused(alice_api, demo, storage):
    # Hadoop drops '.' segments and reads '//' as a host: refused rather than normalised.
    folder = external_dir(storage, "data")
    for path in (f"file://{folder}//./", f"{folder}/.", f"{folder}//x"):
        response = alice_api.post(
            f"{DB}/sales/tables",
            {
                "name": "t",
                "schema": simple_schema("id BIGINT"),
                "options": {"connector": "parquet", "path": path},
            },
        )
        error = assert_error(response, 400, "VALIDATION_ERROR", f"The path '{path}'")
        assert error["details"]["field"] == "options.path"
    assert not Table.objects.exists()


def test_external_path_may_name_a_location_not_yet_written(make, demo, storage):
    target = storage.external / "later" / "out"
    table = make.table("demo", "sales", "t", options={"connector": "json", "path": str(target)})
    assert table["options"]["path"] == str(target)
    assert not target.exists()  # Tessera never creates or touches external locations


def test_external_table_cannot_be_made_managed(alice_api, make, demo, storage):
    folder = external_dir(storage, "x")
    make.table("demo", "sales", "t", options={"connector": "csv", "path": str(folder)})
    response = alice_api.patch(f"{DB}/sales/tables/t", {"options": {"format": "parquet"}})
    assert_error(response, 400, "VALIDATION_ERROR", "managed")
    assert Table.objects.get(name="t").options["connector"] == "csv"


def _fill_sales(make, storage) -> tuple[Path, Path]:
    managed = Path(make.table("demo", "sales", "managed_t")["location"])
    folder = external_dir(storage, "ext")
    make.table("demo", "sales", "external_t", options={"connector": "csv", "path": str(folder)})
    make.view("demo", "sales", "v")
    make.function("demo", "sales", "f")
    return managed, folder


def test_non_empty_database_needs_cascade(alice_api, make, demo, storage, analyzer):
    managed, folder = _fill_sales(make, storage)
    response = alice_api.delete(f"{DB}/sales")
    assert_error(response, 409, "NOT_EMPTY", "`demo`.`sales` is not empty", "cascade=true")
    assert alice_api.get(f"{DB}/sales").status_code == 200
    assert Table.objects.count() == 3 and Function.objects.count() == 1
    assert managed.is_dir()

    assert alice_api.delete(f"{DB}/sales?cascade=true").status_code == 204
    assert_error(alice_api.get(f"{DB}/sales"), 404, "NOT_FOUND")
    assert not Table.objects.exists()
    assert not Column.objects.exists()
    assert not Function.objects.exists()
    assert not managed.exists()
    assert (folder / "part-00000.csv").exists()
    # The catalog and its default database stay.
    assert [d["name"] for d in alice_api.get(DB).json()["items"]] == ["default"]


def test_database_holding_only_a_function_is_not_empty(alice_api, make, demo):
    make.function("demo", "sales", "f")
    assert_error(alice_api.delete(f"{DB}/sales"), 409, "NOT_EMPTY")
    assert Function.objects.count() == 1


def test_empty_database_drops_without_cascade(alice_api, demo):
    assert alice_api.delete(f"{DB}/SALES").status_code == 204
    assert list(Database.objects.values_list("name", flat=True)) == ["default"]


def test_default_database_cannot_be_dropped(alice_api, make, demo):
    for url in (f"{DB}/default", f"{DB}/DEFAULT?cascade=true"):
        error = assert_error(
            alice_api.delete(url), 400, "VALIDATION_ERROR", "is the default database"
        )
        assert "`demo`.`default`" in error["message"]
    assert Database.objects.filter(name="default").exists()


def test_non_empty_catalog_needs_cascade(alice_api, make, demo, storage, analyzer):
    managed, folder = _fill_sales(make, storage)
    default_table = Path(make.table("demo", "default", "t")["location"])
    response = alice_api.delete(f"{API}/catalogs/demo")
    assert_error(response, 409, "NOT_EMPTY", "[demo] is not empty", "cascade=true")
    assert Catalog.objects.count() == 1 and Database.objects.count() == 2
    assert Table.objects.count() == 4
    assert managed.is_dir() and default_table.is_dir()

    assert alice_api.delete(f"{API}/catalogs/demo?cascade=true").status_code == 204
    assert_error(alice_api.get(f"{API}/catalogs/demo"), 404, "NOT_FOUND")
    for model in (Catalog, Database, Table, Column, Function):
        assert not model.objects.exists(), model
    assert not managed.exists() and not default_table.exists()
    assert (folder / "part-00000.csv").exists()


def test_catalog_with_an_extra_empty_database_is_not_empty(alice_api, demo):
    assert_error(alice_api.delete(f"{API}/catalogs/demo"), 409, "NOT_EMPTY")
    assert Database.objects.count() == 2


def test_catalog_with_a_table_in_its_default_database_is_not_empty(alice_api, make):
    make.catalog("solo")
    location = Path(make.table("solo", "default", "t")["location"])
    assert_error(alice_api.delete(f"{API}/catalogs/solo"), 409, "NOT_EMPTY")
    assert location.is_dir()


def test_cascade_drop_leaves_other_catalogs_alone(alice_api, make, demo):
    make.catalog("other")
    kept = Path(make.table("other", "default", "t")["location"])
    dropped = Path(make.table("demo", "sales", "t")["location"])
    assert alice_api.delete(f"{API}/catalogs/demo?cascade=true").status_code == 204
    assert kept.is_dir() and not dropped.exists()
    assert alice_api.get(f"{API}/catalogs/other/databases/default/tables/t").status_code == 200
