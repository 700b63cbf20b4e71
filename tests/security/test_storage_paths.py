"""The storage boundary, paths: what Hadoop reads must be what was checked, under a root.

Reproduced attacks (by an ordinary signed-in user): a ``path`` with backslash-escaped dots
(``<root>/\\.\\./x``) passed the string and realpath checks and Hadoop's globbing turned it
back into ``..`` (the server's secret key was read); a symbolic link swapped in after
table creation was followed at read time.

Every hostile path is tried where paths enter — SQL ``CREATE [TEMPORARY] TABLE …
LOCATION``, CTAS ``WITH ('path' = …)``, REST ``POST``/``PATCH`` tables and the properties
encoding — and where they are used on a worker: rows stored before the check existed,
hand-made plans that bypass the planner, links swapped in after creation (read and write).
Each test asserts the refusal AND that nothing happened: no row, no file read back, no file
written outside the roots.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from django.db import transaction

from catalog import services as catalog_services
from catalog.models import Database, Table
from core.schema import Schema
from jobs.models import Job, Session
from sessions import statements as job_services
from tests.conftest import API, assert_error, simple_schema
from tests.security.boundary import (
    SECRET,
    Actor,
    error_of,
    files_under,
    no_table,
    no_temporary_objects,
    outside_dir,
    refused,
    sql_string,
    storage_root,
    table_dir,
    uid,
)
from tests.worker_helpers import hand_plan, submit_plan, wait_for_status

pytestmark = [pytest.mark.django_db(transaction=True)]


def hostile_paths(root: Path, outside: Path) -> dict[str, str]:
    """Path tricks, each meant to reach ``outside`` (a sibling of the storage root) or
    another file system. Every one must be refused."""
    r, o = str(root), outside.name
    return {
        "backslash dots": f"{r}/\\.\\./{o}",
        "backslash dots twice": f"{r}/x/\\.\\./\\.\\./{o}",
        "backslash one dot": f"{r}/\\./x",
        "backslash slash": f"{r}/x\\/..\\/{o}",
        "percent dots": f"{r}/%2e%2e/{o}",
        "percent dots upper": f"{r}/%2E%2E/{o}",
        "percent slash": f"{r}/..%2f{o}",
        "dot dot": f"{r}/../{o}",
        "dot dot at the end": f"{r}/x/..",
        "dot": f"{r}/./x",
        "double slash": f"{r}//x",
        "leading double slash (authority)": f"/{r}",
        "file: dot dot": f"file:{r}/../{o}",
        "file:// host": f"file://localhost{r}/x",
        "file:// other host": f"file://evil{outside}",
        "file://// authority": f"file:////{r}/x",
        "FILE: upper case": f"FILE:{r}/x",
        "hdfs": "hdfs://namenode:8020/etc",
        "viewfs": "viewfs://cluster/etc",
        "s3a": "s3a://bucket/x",
        "jar": f"jar:file:{r}/x.jar!/",
        "glob star": f"{r}/*",
        "glob question": f"{r}/?",
        "glob brackets": f"{r}/[.][.]/{o}",
        "glob braces": f"{r}/{{x,..}}/{o}",
        "colon": f"{r}/a:b",
        "fragment": f"{r}/x#y",
        "newline": f"{r}/x\n",
        "tab": f"{r}/x\ty",
        "zero-width space": f"{r}/x\u200b",
        "right-to-left override": f"{r}/\u202ex",
        "relative": "external/x",
        "relative root": f"{r.lstrip('/')}/x",
        "outside": str(outside),
        "etc": "/etc",
        "sibling with the root as prefix": f"{r}-evil/x",
        "the storage root itself": r,
        "the storage root, slash": f"{r}/",
        "the storage root as a URI": f"file://{r}",
        "longer than 1024 bytes": f"{r}/" + "x" * 200 + "/" + "y" * 900,
        "empty": "",
        "blank": "   ",
    }


ROOT = storage_root()
OUTSIDE_NAME = "outside-x"
VARIANTS = list(hostile_paths(ROOT, ROOT.parent / OUTSIDE_NAME))
SQL_VARIANTS = [v for v in VARIANTS if v not in ("empty", "blank")]


@pytest.fixture
def outside() -> Any:
    path = outside_dir()
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def catalog(alice_sql: Actor) -> str:
    name = f"s{uid()}"
    catalog_services.catalog_create(user=alice_sql.user, name=name, default_database="d")
    return name


def _path(variant: str, outside: Path) -> str:
    return hostile_paths(storage_root(), outside)[variant]


def _nothing_written(outside: Path, before_root: set[str]) -> None:
    assert files_under(outside) == {"secret.csv", "secret.txt"}
    assert files_under(storage_root()) == before_root


# --- where paths enter: refused, nothing stored -------------------------------------------


@pytest.mark.parametrize("variant", SQL_VARIANTS)
def test_sql_create_table_refuses_the_path(alice_sql, catalog, outside, variant) -> None:
    path = _path(variant, outside)
    before = files_under(storage_root())
    job = alice_sql.run(
        f"CREATE TABLE {catalog}.d.t (id INT, name STRING) USING csv LOCATION {sql_string(path)}"
    )
    refused(alice_sql, job, "FORBIDDEN_SQL")
    no_table(catalog, "t")
    _nothing_written(outside, before)


@pytest.mark.parametrize("variant", SQL_VARIANTS)
def test_sql_temporary_table_refuses_the_path(alice_sql, outside, variant) -> None:
    path = _path(variant, outside)
    job = alice_sql.run(
        f"CREATE TEMPORARY TABLE x.y.tmp (id INT, name STRING) USING csv OPTIONS "
        f"('path' = {sql_string(path)})"
    )
    refused(alice_sql, job, "FORBIDDEN_SQL")
    no_temporary_objects(alice_sql)


@pytest.mark.parametrize("variant", SQL_VARIANTS)
def test_ctas_refuses_the_path(alice_sql, catalog, outside, variant) -> None:
    path = _path(variant, outside)
    before = files_under(storage_root())
    job = alice_sql.run(
        f"CREATE TABLE {catalog}.d.c WITH ('connector' = 'csv', 'path' = {sql_string(path)}) "
        "AS SELECT 1 AS id"
    )
    refused(alice_sql, job, "FORBIDDEN_SQL")
    no_table(catalog, "c")
    _nothing_written(outside, before)


def test_backslash_escapes_written_raw_in_sql_are_refused_too(alice_sql, catalog, outside) -> None:
    # Unescaped in the SQL literal, '\.' is read as '.': the path then holds '..'.
    root = storage_root()
    job = alice_sql.run(
        f"CREATE TABLE {catalog}.d.t (id INT) USING text LOCATION '{root}/\\.\\./{outside.name}'"
    )
    refused(alice_sql, job, "FORBIDDEN_SQL", "'..'")
    no_table(catalog, "t")


def _tables_url(catalog: str) -> str:
    return f"{API}/catalogs/{catalog}/databases/d/tables"


@pytest.mark.parametrize("variant", VARIANTS)
def test_rest_create_refuses_the_path(alice_sql, catalog, outside, variant) -> None:
    path = _path(variant, outside)
    before = files_under(storage_root())
    response = alice_sql.api.post(
        _tables_url(catalog),
        {
            "name": "t",
            "schema": simple_schema("id INT"),
            "options": {"connector": "csv", "path": path},
        },
    )
    error = assert_error(response, 400, "VALIDATION_ERROR")
    assert error["details"]["field"] == "options.path", error
    no_table(catalog, "t")
    _nothing_written(outside, before)


@pytest.mark.parametrize("variant", VARIANTS)
def test_rest_properties_refuse_the_path(alice_sql, catalog, outside, variant) -> None:
    path = _path(variant, outside)
    properties = {
        "schema.0.name": "id",
        "schema.0.data-type": "INT",
        "connector": "csv",
        "path": path,
    }
    response = alice_sql.api.post(_tables_url(catalog), {"name": "t", "properties": properties})
    error = assert_error(response, 400, "VALIDATION_ERROR")
    assert error["details"]["field"] == "properties.path", error
    no_table(catalog, "t")


@pytest.mark.parametrize("variant", VARIANTS)
def test_rest_patch_refuses_the_path(alice_sql, catalog, outside, variant) -> None:
    folder = table_dir()
    options = {"connector": "csv", "path": str(folder)}
    created = alice_sql.api.post(
        _tables_url(catalog), {"name": "t", "schema": simple_schema("id INT"), "options": options}
    )
    assert created.status_code == 201, created.content
    response = alice_sql.api.patch(
        f"{_tables_url(catalog)}/t",
        {"options": {"connector": "csv", "path": _path(variant, outside)}},
    )
    error = assert_error(response, 400, "VALIDATION_ERROR")
    assert error["details"]["field"] == "options.path", error
    assert Table.objects.get(database__catalog__name=catalog, name="t").options == options


# --- symbolic links at creation ---------------------------------------------------------------


def _links(outside: Path) -> dict[str, Path]:
    """Directories under the root that lead outside through a symbolic link."""
    root = storage_root()
    linked_dir = root / f"linked-{uid()}"
    os.symlink(outside, linked_dir)
    with_file = table_dir("with-file-link")
    os.symlink(outside / "secret.csv", with_file / "part-00001.csv")
    nested = table_dir("nested")
    inner = root / f"inner-{uid()}"
    inner.mkdir()
    os.symlink(outside, inner / "deeper")
    os.symlink(inner, nested / "sub")  # inside the roots, but leads to a link out of them
    return {
        "symlinked directory": linked_dir,
        "file below a symlinked directory": linked_dir / "secret.csv",
        "symlinked file inside": with_file,
        "link to a directory holding a link out": nested,
    }


LINK_VARIANTS = [
    "symlinked directory",
    "file below a symlinked directory",
    "symlinked file inside",
    "link to a directory holding a link out",
]


@pytest.mark.parametrize("variant", LINK_VARIANTS)
def test_links_leading_out_are_refused_at_creation(alice_sql, catalog, outside, variant) -> None:
    path = str(_links(outside)[variant])
    job = alice_sql.run(
        f"CREATE TABLE {catalog}.d.t (id STRING, n INT) USING csv LOCATION '{path}'"
    )
    # The planner is pure (no file system): the command, which checks the files, refuses.
    assert job["status"] == "FAILED", job
    assert job["error"]["code"] in ("FORBIDDEN_SQL", "VALIDATION_ERROR"), job
    assert "outside the storage roots" in job["error"]["message"]
    no_table(catalog, "t")
    response = alice_sql.api.post(
        _tables_url(catalog),
        {
            "name": "t",
            "schema": simple_schema("id STRING", "n INT"),
            "options": {"connector": "csv", "path": path},
        },
    )
    assert_error(response, 400, "VALIDATION_ERROR", "outside the storage roots")
    no_table(catalog, "t")
    temporary = alice_sql.run(
        f"CREATE TEMPORARY TABLE x.y.tmp (id STRING) USING csv LOCATION '{path}'"
    )
    assert temporary["status"] == "FAILED", temporary
    assert "outside the storage roots" in temporary["error"]["message"]
    no_temporary_objects(alice_sql)
    ctas = alice_sql.run(
        f"CREATE TABLE {catalog}.d.c WITH ('connector' = 'csv', 'path' = '{path}') AS SELECT 1"
    )
    assert ctas["status"] == "FAILED", ctas
    # A directory holding files (the link is one) is refused before its tree is listed.
    message = ctas["error"]["message"]
    assert "outside the storage roots" in message or "already holds files" in message, message
    no_table(catalog, "c")
    assert files_under(outside) == {"secret.csv", "secret.txt"}


@pytest.mark.parametrize("atomic", ["false", "true"])
def test_ctas_into_a_directory_whose_only_entry_is_a_link_out_is_refused(
    alice_sql, catalog, outside, atomic
) -> None:
    """A hidden link is no data (the directory counts as empty), but Spark's writer and
    the commit would go through it: the CTAS path's tree is checked before anything runs."""
    folder = storage_root() / f"ctas-{uid()}"
    folder.mkdir()
    os.symlink(outside, folder / "_staging_alias")
    job = alice_sql.run(
        f"CREATE TABLE {catalog}.d.c WITH ('connector' = 'csv', 'path' = '{folder}', "
        f"'table.ctas.atomic' = '{atomic}') AS SELECT 1"
    )
    refused(alice_sql, job, "VALIDATION_ERROR", "outside the storage roots")
    no_table(catalog, "c")
    assert files_under(outside) == {"secret.csv", "secret.txt"}
    assert files_under(folder) == {"_staging_alias"}


def test_link_that_stays_inside_the_roots_is_accepted(alice_sql, catalog) -> None:
    folder = table_dir()
    link = storage_root() / f"alias-{uid()}"
    os.symlink(folder, link)
    alice_sql.ok(f"CREATE TABLE {catalog}.d.t (id INT, name STRING) USING csv LOCATION '{link}'")
    assert Table.objects.get(database__catalog__name=catalog, name="t").options["path"] == str(link)


# --- at use, on the worker ---------------------------------------------------------------------


def _stored_table(catalog: str, alice_sql: Actor, name: str, options: dict[str, str]) -> Table:
    """A table row as an older Tessera may have stored it (no checks: straight to the DB)."""
    database = Database.objects.get(catalog__name=catalog, name="d")
    schema = simple_schema("line STRING")
    resolved = catalog_services.resolve_schema(Schema.from_dict(schema))
    return Table.objects.create(
        database=database,
        name=name,
        name_key=name.lower(),
        kind=Table.KIND_TABLE,
        options=options,
        schema=schema,
        resolved_schema=resolved.to_dict(),
        created_by=alice_sql.user,
    )


STORED_VARIANTS = [
    "backslash dots",
    "dot dot",
    "glob braces",
    "viewfs",
    "outside",
    "colon",
    "the storage root itself",
]


@pytest.mark.parametrize("variant", STORED_VARIANTS)
def test_stored_row_with_a_bad_path_is_refused_when_read(
    security_worker, alice_sql, catalog, outside, variant
) -> None:
    path = _path(variant, outside).replace(f"{outside.name}", f"{outside.name}/secret.txt")
    _stored_table(catalog, alice_sql, "old", {"connector": "text", "path": path})
    job = alice_sql.run(f"SELECT * FROM {catalog}.d.old")
    refused(alice_sql, job, "FORBIDDEN_SQL", f"Table `{catalog}`.`d`.`old` cannot be used")


def _relation(
    path: str, fmt: str = "text", options: dict[str, str] | None = None
) -> dict[str, Any]:
    return {
        "alias": "__tessera_r1",
        "identifier": ["c", "d", "t"],
        "kind": "table",
        "format": fmt,
        "path": path,
        "options": options or {},
        "physical_schema": "`line` STRING",
        "columns": [{"name": "line", "kind": "physical"}],
    }


HAND_VARIANTS = [
    "the storage root itself",
    "backslash dots",
    "backslash dots twice",
    "glob braces",
    "glob star",
    "percent dots",
    "dot dot",
    "file:// host",
    "leading double slash (authority)",
    "outside",
    "etc",
    "sibling with the root as prefix",
]


def _hand_read(alice_sql: Actor, relation: dict[str, Any]) -> Job:
    session = Session.objects.get(pk=alice_sql.session_id)
    plan = hand_plan("SELECT * FROM `__tessera_r1`", relations=[relation])
    job = submit_plan(alice_sql.user, plan, session)
    return wait_for_status(job.id, {"FINISHED", "FAILED", "CANCELED"}, 120)


@pytest.mark.parametrize("variant", HAND_VARIANTS)
def test_hand_made_plan_reading_a_bad_path_is_refused_by_the_worker(
    security_worker, alice_sql, outside, variant
) -> None:
    # The plan bypasses the planner: the worker's own check is the one that counts.
    path = _path(variant, outside)
    if outside.name in path:
        path = path.replace(outside.name, f"{outside.name}/secret.txt")
    job = _hand_read(alice_sql, _relation(path))
    assert job.status == "FAILED", job.error
    assert error_of(job)["code"] == "FORBIDDEN_SQL", job.error
    assert "cannot be read" in error_of(job)["message"]
    assert SECRET not in str(job.error)
    assert_error(alice_sql.api.get(f"{API}/jobs/{job.id}/result"), 404, "NOT_FOUND")


def test_hand_made_plan_reading_through_a_link_out_is_refused(
    security_worker, alice_sql, outside
) -> None:
    for variant, path in _links(outside).items():
        job = _hand_read(alice_sql, _relation(str(path), "csv"))
        assert job.status == "FAILED", (variant, job.error)
        assert error_of(job)["code"] == "FORBIDDEN_SQL", (variant, job.error)
        assert SECRET not in str(job.error)


def test_hand_made_plan_with_a_non_file_format_is_refused(security_worker, alice_sql) -> None:
    folder = table_dir()
    job = _hand_read(alice_sql, _relation(str(folder), "jdbc", {"url": "jdbc:derby:memory:x"}))
    assert job.status == "FAILED" and error_of(job)["code"] == "FORBIDDEN_SQL", job.error
    assert "jdbc" in error_of(job)["message"]


def test_directory_swapped_for_a_link_after_creation_is_refused_when_read(
    security_worker, alice_sql, catalog, outside
) -> None:
    folder = table_dir()
    alice_sql.ok(f"CREATE TABLE {catalog}.d.t (id STRING, n INT) USING csv LOCATION '{folder}'")
    assert alice_sql.rows(f"SELECT count(*) FROM {catalog}.d.t") == [[2]]
    shutil.rmtree(folder)
    os.symlink(outside, folder)  # the swap: same path, now a link out of the roots
    job = alice_sql.run(f"SELECT * FROM {catalog}.d.t")
    refused(alice_sql, job, "FORBIDDEN_SQL", f"Table `{catalog}`.`d`.`t` cannot be read")
    assert "outside the storage roots" in job["error"]["message"]


def test_file_link_added_inside_after_creation_is_refused_when_read(
    security_worker, alice_sql, catalog, outside
) -> None:
    folder = table_dir()
    alice_sql.ok(f"CREATE TABLE {catalog}.d.t (id STRING, n INT) USING csv LOCATION '{folder}'")
    os.symlink(outside / "secret.csv", folder / "part-00001.csv")
    job = alice_sql.run(f"SELECT * FROM {catalog}.d.t")
    refused(alice_sql, job, "FORBIDDEN_SQL", "symbolic link")
    nested = table_dir("nested")
    alice_sql.ok(f"CREATE TABLE {catalog}.d.n (id STRING, n INT) USING csv LOCATION '{nested}'")
    inner = storage_root() / f"inner-{uid()}"
    inner.mkdir()
    os.symlink(outside, inner / "deeper")
    os.symlink(inner, nested / "sub")
    refused(
        alice_sql, alice_sql.run(f"SELECT * FROM {catalog}.d.n"), "FORBIDDEN_SQL", "symbolic link"
    )


def test_external_table_reads_normally(security_worker, alice_sql, catalog) -> None:
    """The positive control: the worker's checks (JVM included) pass a plain table."""
    folder = table_dir()
    link = storage_root() / f"alias-{uid()}"
    os.symlink(folder, link)  # a link inside the roots is fine
    alice_sql.ok(
        f"CREATE TABLE {catalog}.d.t (id INT, name STRING) USING csv LOCATION 'file://{link}/'"
    )
    assert alice_sql.rows(f"SELECT id, name FROM {catalog}.d.t ORDER BY id") == [
        [1, "alpha"],
        [2, "beta"],
    ]


def test_directory_swapped_for_a_link_before_the_write_is_refused(
    security_worker, alice_sql, catalog, outside
) -> None:
    folder = table_dir()
    alice_sql.ok(f"CREATE TABLE {catalog}.d.t (id INT, name STRING) USING csv LOCATION '{folder}'")
    session = Session.objects.get(pk=alice_sql.session_id)
    sql = f"INSERT INTO {catalog}.d.t SELECT 3, 'gamma'"
    with transaction.atomic():
        # Planned and created (its staging decided) while the directory is real; the link
        # is swapped in before the worker sees the job.
        job = job_services.submit_plan(
            session=session, sql=sql, plan=job_services.plan_sql(session, sql)
        )
        shutil.rmtree(folder)
        os.symlink(outside, folder)
    ended = wait_for_status(job.id, {"FINISHED", "FAILED", "CANCELED"}, 120)
    assert ended.status == "FAILED", ended.error
    assert error_of(ended)["code"] == "FORBIDDEN_SQL", ended.error
    assert "outside the storage roots" in error_of(ended)["message"]
    # Nothing was written through the link: the outside directory holds what it held.
    assert files_under(outside) == {"secret.csv", "secret.txt"}
