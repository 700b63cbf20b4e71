"""Spark's error messages never show the server's paths (docs/security.md §6).

Spark names files in its errors (``Path does not exist: file:/srv/…/external/x``): the
data dir, the warehouse, the storage roots, Spark's local dirs, the Python environment,
home directories. A job's error names the table instead (``<location of table c.d.t>``),
or a placeholder (``<warehouse>``, ``<storage>``, ``<path>``…).

The first tests feed the scrubber the server's real directories; the others provoke real
Spark errors with paths in them on a real worker.
"""

from __future__ import annotations

import shutil
import site
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from catalog import services as catalog_services
from catalog.models import Database, Table
from core.schema import Schema
from engine.errors import error_from_exception, known_locations, scrub_paths
from tests.worker_helpers import api_for, create_user, open_session, statement, wait_job


def server_dirs() -> list[str]:
    """Every server directory a message must not show."""
    data = Path(settings.DATA_DIR)
    return [
        str(data),
        str(settings.WAREHOUSE_DIR),
        str(data / "spark" / "tmp"),
        *(str(root) for root in settings.TESSERA_STORAGE_ROOTS),
        sys.prefix,
        *site.getsitepackages(),
        str(settings.BASE_DIR),
        str(Path.home()),
        tempfile.gettempdir(),
    ]


def assert_no_server_path(message: str) -> None:
    for directory in server_dirs():
        assert directory not in message, (directory, message)
    assert "file:/" not in message, message


# --- the scrubber --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("Path does not exist: file:{storage}/sales.", "Path does not exist: <storage>/sales."),
        (
            "reading file file://{storage}/s/part-0.parquet.",
            "reading file <storage>/s/part-0.parquet.",
        ),
        (
            "File file:{warehouse}/c/d/t/p.parquet is gone",
            "File <warehouse>/c/d/t/p.parquet is gone",
        ),
        ("no space in {data}/spark/tmp/blockmgr-1/0a", "no space in <spark-local>/blockmgr-1/0a"),
        ("in {data}/results/x.arrow", "in <data>/results/x.arrow"),
        ("{site}/pyspark/sql/x.py line 3", "<python>/pyspark/sql/x.py line 3"),
        ("key {home}/.ssh/id_rsa", "key <home>/.ssh/id_rsa"),
        ("read '/etc/passwd' or hdfs://nn:8020/u/x now", "read '<path>' or <path> now"),
        ("(192.0.2.2 executor driver): boom", "(executor driver): boom"),
    ],
)
def test_server_directories_become_placeholders(template: str, expected: str) -> None:
    text = template.format(
        storage=settings.TESSERA_STORAGE_ROOTS[0],
        warehouse=settings.WAREHOUSE_DIR,
        data=settings.DATA_DIR,
        site=site.getsitepackages()[0],
        home=Path.home(),
    )
    assert scrub_paths(text) == expected


def test_the_placeholders_follow_the_settings(settings: Any, tmp_path: Path) -> None:
    """Settings that move a storage root (as tests and a reloaded deployment do) are what
    the next message is scrubbed with, not the first ones ever seen."""
    before = f"Path does not exist: file:{settings.TESSERA_STORAGE_ROOTS[0]}/x."
    assert scrub_paths(before) == "Path does not exist: <storage>/x."
    moved = tmp_path / "elsewhere"
    settings.TESSERA_STORAGE_ROOTS = [moved]
    assert scrub_paths(f"Path does not exist: file:{moved}/x.") == (
        "Path does not exist: <storage>/x."
    )


@pytest.mark.parametrize(
    "text",
    [
        "See https://spark.apache.org/docs/latest/sql-ref-ansi-compliance.html for details.",
        "[DIVIDE_BY_ZERO] Division by zero in a / b, x/y or 1/2 /* hint */",
        "split(s, '/') and regexp_replace(s, '/+', '/')",
        "[UNRESOLVED_COLUMN] A column `nope` cannot be resolved.",
    ],
)
def test_text_that_is_not_a_path_is_left_alone(text: str) -> None:
    assert scrub_paths(text) == text


def test_a_table_s_location_is_named_by_the_table() -> None:
    location = Path(settings.TESSERA_STORAGE_ROOTS[0]) / "sales-1"
    text = f"Encountered error while reading file file://{location}/part-0.parquet."
    with known_locations({str(location): "c.d.sales"}):
        scrubbed = scrub_paths(text)
    assert (
        scrubbed
        == "Encountered error while reading file <location of table c.d.sales>/part-0.parquet."
    )
    assert (
        scrub_paths(text)
        == "Encountered error while reading file <storage>/sales-1/part-0.parquet."
    )


def test_unexpected_errors_lose_their_paths_too() -> None:
    error = error_from_exception(FileNotFoundError(f"No such file: '{settings.DATA_DIR}/x/y'"))
    assert error == {
        "code": "INTERNAL_ERROR",
        "message": "FileNotFoundError: No such file: '<data>/x/y'",
    }


# --- real Spark errors on a real worker ----------------------------------------------------------

PHYSICAL_SCHEMA = {"columns": [{"name": "id", "kind": "physical", "data_type": "BIGINT"}]}


@pytest.fixture
def owner(security_worker: Any, transactional_db: None) -> Any:
    user = create_user(f"pat{uuid.uuid4().hex[:6]}")
    catalog = f"e{uuid.uuid4().hex[:10]}"
    catalog_services.catalog_create(user=user, name=catalog, default_database="d")
    api = api_for(user)
    return {"user": user, "api": api, "catalog": catalog, "session": open_session(api)}


def external_table(owner: dict[str, Any], name: str, files: dict[str, bytes]) -> Path:
    """An external parquet table over a directory of a storage root holding ``files``."""
    path = Path(settings.TESSERA_STORAGE_ROOTS[0]) / f"{name}-{uuid.uuid4().hex[:8]}"
    path.mkdir(parents=True)
    for file_name, content in files.items():
        (path / file_name).write_bytes(content)
    database = Database.objects.get(catalog__name=owner["catalog"], name="d")
    catalog_services.table_create(
        user=owner["user"],
        database=database,
        name=name,
        schema=Schema.from_dict(PHYSICAL_SCHEMA),
        options={"connector": "parquet", "path": str(path)},
    )
    return path


def failed_message(owner: dict[str, Any], sql: str) -> str:
    job = wait_job(owner["api"], statement(owner["api"], owner["session"], sql)["id"], timeout=120)
    assert job["status"] == "FAILED", job
    assert job["error"]["code"] == "SPARK_ERROR", job["error"]
    message = str(job["error"]["message"])
    print(f"\n{sql}\n  → {message}")
    assert_no_server_path(message)
    return message


@pytest.mark.spark
@pytest.mark.slow
def test_a_corrupt_file_is_named_inside_its_table(owner: dict[str, Any]) -> None:
    external_table(owner, "broken", {"part-0.parquet": b"this is not parquet at all"})
    message = failed_message(owner, f"SELECT * FROM {owner['catalog']}.d.broken")
    table = f"{owner['catalog']}.d.broken"
    assert f"<location of table {table}>/part-0.parquet" in message, message


@pytest.mark.spark
@pytest.mark.slow
def test_a_missing_location_is_named_by_its_table(owner: dict[str, Any]) -> None:
    path = external_table(owner, "vanished", {"part-0.parquet": b"x"})
    shutil.rmtree(path)
    message = failed_message(owner, f"SELECT count(*) FROM {owner['catalog']}.d.vanished")
    assert f"<location of table {owner['catalog']}.d.vanished>" in message, message


@pytest.mark.spark
@pytest.mark.slow
def test_a_damaged_managed_table_does_not_show_the_warehouse(owner: dict[str, Any]) -> None:
    api, session, catalog = owner["api"], owner["session"], owner["catalog"]
    created = wait_job(
        api,
        statement(api, session, f"CREATE TABLE {catalog}.d.m AS SELECT id FROM range(0, 10)")["id"],
        timeout=120,
    )
    assert created["status"] == "FINISHED", created
    location = Path(Table.objects.get(database__catalog__name=catalog, name_key="m").location)
    assert str(settings.WAREHOUSE_DIR) in str(location)  # what must not be shown
    data = [p for p in location.rglob("*.parquet") if not p.name.startswith(("_", "."))]
    assert data
    data[0].write_bytes(b"damaged")
    message = failed_message(owner, f"SELECT sum(id) FROM {catalog}.d.m")
    assert f"<location of table {catalog}.d.m>/" in message, message
