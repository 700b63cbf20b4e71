"""The storage boundary, options: only the documented options of the table's file format.

Reproduced attacks (by an ordinary signed-in user): table options such as ``fs.defaultFS``
and ``fs.viewfs.mounttable.*`` reached Spark's Hadoop configuration — ``/etc/passwd`` was
read through a viewfs mount, and an INSERT wrote outside every storage root (leaving its
staging directory there).

Every option trick is tried where options enter (SQL CREATE [TEMPORARY] TABLE
OPTIONS/WITH, CTAS WITH, REST POST/PATCH, the properties encoding) and where they are
used on a worker (rows stored before the allow-list existed, hand-made plans for reading
and for writing). Each test asserts the refusal, that the error names the key, and that
nothing happened: no row stored or changed, nothing read, nothing written outside the roots.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

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
from tests.worker_helpers import events, hand_plan, submit_plan, wait_for_status

pytestmark = [pytest.mark.django_db(transaction=True)]

# Keys no table may carry, whatever their value: Hadoop and Spark configuration, more than
# one path, unknown keys. (key, value)
KEY_TRICKS: dict[str, tuple[str, str]] = {
    "fs.defaultFS": ("fs.defaultFS", "viewfs://cluster/"),
    "FS.defaultFS (case)": ("FS.defaultFS", "file:///"),
    "Fs.DefaultFs (case)": ("Fs.DefaultFs", "file:///"),
    "viewfs mount table": ("fs.viewfs.mounttable.cluster.link./data", "file:///etc"),
    "fs.file.impl": ("fs.file.impl", "org.apache.hadoop.fs.RawLocalFileSystem"),
    "fs.AbstractFileSystem": ("fs.AbstractFileSystem.file.impl", "org.evil.Fs"),
    "hadoop.*": ("hadoop.security.authentication", "simple"),
    "HADOOP.* (case)": ("HADOOP.tmp.dir", "/tmp"),
    "spark.*": ("spark.sql.warehouse.dir", "/tmp"),
    "spark.hadoop.*": ("spark.hadoop.fs.defaultFS", "viewfs://cluster/"),
    "SPARK.* (case)": ("SPARK.sql.caseSensitive", "true"),
    "parquet.* (class names)": ("parquet.crypto.factory.class", "org.evil.Factory"),
    "orc.*": ("orc.key.provider", "hadoop"),
    "io.* (codec classes)": ("io.compression.codecs", "org.evil.Codec"),
    "mapreduce.*": ("mapreduce.input.fileinputformat.input.dir.recursive", "true"),
    "paths": ("paths", '["/etc"]'),
    "PATHS (case)": ("PATHS", "/etc"),
    "basePath": ("basePath", "/"),
    "BASEPATH (case)": ("BASEPATH", "/etc"),
    "unknown key": ("foo", "bar"),
    "unknown dotted key": ("a.b.c", "d"),
    "key with a leading space": (" header", "true"),
    "undocumented reader option": ("maxMalformedLogPerPartition", "10"),
    # Structured Streaming's file source would delete or move the table's files after a batch.
    "cleanSource (deletes the source's files)": ("cleanSource", "delete"),
    "sourceArchiveDir (moves the source's files)": ("sourceArchiveDir", "/tmp/archive"),
}

# Documented keys with values that could hurt (class names, sizes) or are not what the key
# takes, and keys of another format: VALIDATION_ERROR. (key, value)
VALUE_TRICKS: dict[str, tuple[str, str]] = {
    "compression as a class name": ("compression", "org.apache.hadoop.io.compress.GzipCodec"),
    "codec as a class name": ("codec", "com.evil.Codec"),
    "maxColumns huge": ("maxColumns", "2147483647"),
    "maxCharsPerColumn huge": ("maxCharsPerColumn", "2147483647"),
    "maxColumns negative": ("maxColumns", "-5"),
    "samplingRatio above 1": ("samplingRatio", "5"),
    "mode unknown": ("mode", "EVIL"),
    "header not a boolean": ("header", "yes"),
    "encoding like a path": ("encoding", "../../etc/passwd"),
    "timeZone too long": ("timeZone", "x" * 100),
    "pathGlobFilter with a slash": ("pathGlobFilter", "../*"),
    "quote of two characters": ("quote", "ab"),
    "another format's option": ("wholetext", "true"),
    "maxFilesPerTrigger zero": ("maxFilesPerTrigger", "0"),
    "maxFilesPerTrigger huge": ("maxFilesPerTrigger", "2147483647"),
}


@pytest.fixture
def catalog(alice_sql: Actor) -> str:
    name = f"o{uid()}"
    catalog_services.catalog_create(user=alice_sql.user, name=name, default_database="d")
    return name


@pytest.fixture
def outside() -> Any:
    path = outside_dir()
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _tables_url(catalog: str) -> str:
    return f"{API}/catalogs/{catalog}/databases/d/tables"


def _options_sql(key: str, value: str) -> str:
    return f"({sql_string(key)} = {sql_string(value)})"


# --- where options enter ---------------------------------------------------------------------


@pytest.mark.parametrize("trick", list(KEY_TRICKS))
def test_sql_refuses_the_key_everywhere_options_enter(alice_sql, catalog, trick) -> None:
    key, value = KEY_TRICKS[trick]
    folder = table_dir()
    before = files_under(storage_root())
    statements = {
        "create table": f"CREATE TABLE {catalog}.d.t (id INT) USING csv OPTIONS "
        f"{_options_sql(key, value)} LOCATION '{folder}'",
        "create table WITH": f"CREATE TABLE {catalog}.d.t (id INT) WITH ('connector' = 'csv', "
        f"'path' = '{folder}', {sql_string(key)} = {sql_string(value)})",
        "managed table": f"CREATE TABLE {catalog}.d.t (id INT) USING parquet OPTIONS "
        f"{_options_sql(key, value)}",
        "temporary table": f"CREATE TEMPORARY TABLE x.y.tmp (id INT) USING csv OPTIONS "
        f"{_options_sql(key, value)} LOCATION '{folder}'",
        "ctas": f"CREATE TABLE {catalog}.d.t USING parquet OPTIONS {_options_sql(key, value)} "
        "AS SELECT 1 AS id",
        "ctas WITH": f"CREATE TABLE {catalog}.d.t WITH ('connector' = 'csv', 'path' = "
        f"'{storage_root()}/new-{uid()}', {sql_string(key)} = {sql_string(value)}) "
        "AS SELECT 1 AS id",
    }
    for where, sql in statements.items():
        job = alice_sql.run(sql)
        error = refused(alice_sql, job, "FORBIDDEN_SQL", f"'{key}'")
        assert error["details"]["key"] == key, (where, error)
        no_table(catalog, "t")
        no_temporary_objects(alice_sql)
    assert files_under(storage_root()) == before


@pytest.mark.parametrize("trick", list(VALUE_TRICKS))
def test_sql_refuses_the_value(alice_sql, catalog, trick) -> None:
    key, value = VALUE_TRICKS[trick]
    folder = table_dir()
    for sql in (
        f"CREATE TABLE {catalog}.d.t (id INT) USING csv OPTIONS {_options_sql(key, value)} "
        f"LOCATION '{folder}'",
        f"CREATE TEMPORARY TABLE x.y.tmp (id INT) USING csv OPTIONS {_options_sql(key, value)} "
        f"LOCATION '{folder}'",
        f"CREATE TABLE {catalog}.d.t USING csv OPTIONS {_options_sql(key, value)} "
        f"LOCATION '{storage_root()}/new-{uid()}' AS SELECT 1 AS id",
    ):
        job = alice_sql.run(sql)
        error = refused(alice_sql, job, "VALIDATION_ERROR", f"'{key}'")
        assert error["details"]["field"] == f"options.{key}", error
        no_table(catalog, "t")
        no_temporary_objects(alice_sql)


def _post(alice_sql: Actor, catalog: str, options: dict[str, str]) -> Any:
    return alice_sql.api.post(
        _tables_url(catalog), {"name": "t", "schema": simple_schema("id INT"), "options": options}
    )


@pytest.mark.parametrize("trick", [*KEY_TRICKS, *VALUE_TRICKS])
def test_rest_refuses_the_option(alice_sql, catalog, trick) -> None:
    key, value = {**KEY_TRICKS, **VALUE_TRICKS}[trick]
    folder = table_dir()
    external = {"connector": "csv", "path": str(folder), key: value}
    managed = {"format": "csv", key: value}
    for options in (external, managed):
        error = assert_error(
            _post(alice_sql, catalog, options), 400, "VALIDATION_ERROR", f"'{key}'"
        )
        assert error["details"]["field"] == f"options.{key}", error
        no_table(catalog, "t")
    # The properties encoding names its own field.
    properties = {"schema.0.name": "id", "schema.0.data-type": "INT", **external}
    response = alice_sql.api.post(_tables_url(catalog), {"name": "t", "properties": properties})
    error = assert_error(response, 400, "VALIDATION_ERROR", f"'{key}'")
    assert error["details"]["field"] == f"properties.{key}", error
    no_table(catalog, "t")
    # PATCH of an existing table: refused, the stored options unchanged.
    good = {"connector": "csv", "path": str(folder), "header": "false"}
    assert _post(alice_sql, catalog, good).status_code == 201
    response = alice_sql.api.patch(f"{_tables_url(catalog)}/t", {"options": {**good, key: value}})
    error = assert_error(response, 400, "VALIDATION_ERROR", f"'{key}'")
    assert error["details"]["field"] == f"options.{key}", error
    assert Table.objects.get(database__catalog__name=catalog, name="t").options == good


def test_rest_refuses_two_spellings_of_one_key(alice_sql, catalog) -> None:
    folder = table_dir()
    for options in (
        {"connector": "csv", "path": str(folder), "header": "true", "HEADER": "false"},
        {"connector": "csv", "path": str(folder), "PATH": "/etc"},
        {"connector": "csv", "Path": str(folder)},  # one spelling: read as 'path'
    ):
        response = _post(alice_sql, catalog, options)
        if "Path" in options:
            assert response.status_code == 201, response.content
            row = Table.objects.get(database__catalog__name=catalog, name="t")
            assert row.options == {"connector": "csv", "path": str(folder)}
            continue
        assert_error(response, 400, "VALIDATION_ERROR", "given twice")
        no_table(catalog, "t")


@pytest.mark.parametrize("temporary", [False, True])
def test_hand_made_create_table_plan_is_checked_by_the_command(
    alice_sql, catalog, temporary
) -> None:
    # A plan that bypasses the planner: the command that stores the table checks again.
    folder = table_dir()
    name = "x.y.tmp" if temporary else f"{catalog}.d.t"
    kind = "TEMPORARY TABLE" if temporary else "TABLE"
    sql = f"CREATE {kind} {name} (id INT) USING csv LOCATION '{folder}'"
    session = Session.objects.get(pk=alice_sql.session_id)
    for key, value in (KEY_TRICKS["viewfs mount table"], VALUE_TRICKS["codec as a class name"]):
        plan = job_services.plan_sql(session, sql)
        plan["args"]["options"] = {**plan["args"]["options"], key: value}
        job = job_services.submit_plan(session=session, sql=sql, plan=plan)
        job = wait_for_status(job.id, {"FINISHED", "FAILED", "CANCELED"}, 60)
        assert job.status == "FAILED", job.error
        assert error_of(job)["code"] == "VALIDATION_ERROR", job.error
        assert f"'{key}'" in error_of(job)["message"]
        no_table(catalog, "t")
        no_temporary_objects(alice_sql)


def test_allowed_options_are_kept_and_case_insensitive(alice_sql, catalog) -> None:
    folder = table_dir()
    alice_sql.ok(
        f"CREATE TABLE {catalog}.d.t (id INT, name STRING) USING csv OPTIONS ('HEADER' = "
        f"'false', 'Sep' = ',', 'mode' = 'failfast', 'maxColumns' = '100') LOCATION '{folder}'"
    )
    row = Table.objects.get(database__catalog__name=catalog, name="t")
    assert row.options == {
        "connector": "csv",
        "path": str(folder),
        "HEADER": "false",
        "Sep": ",",
        "mode": "failfast",
        "maxColumns": "100",
    }


def test_streaming_files_per_trigger_is_kept(alice_sql, catalog) -> None:
    """Structured Streaming's ``maxFilesPerTrigger`` is a table option like the readers'."""
    folder = table_dir()
    alice_sql.ok(
        f"CREATE TABLE {catalog}.d.t (id INT) WITH ('connector' = 'parquet', 'path' = "
        f"'{folder}', 'maxFilesPerTrigger' = '4')"
    )
    row = Table.objects.get(database__catalog__name=catalog, name="t")
    assert row.options == {"connector": "parquet", "path": str(folder), "maxFilesPerTrigger": "4"}


# --- at use, on the worker ---------------------------------------------------------------------


def _stored_table(catalog: str, owner: Actor, name: str, options: dict[str, str]) -> Table:
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
        created_by=owner.user,
    )


def _viewfs(outside: Path, mounted: str) -> dict[str, str]:
    """The attack's options: the path under the root is a viewfs mount of ``outside``."""
    return {
        "fs.defaultFS": "viewfs://cluster/",
        f"fs.viewfs.mounttable.cluster.link.{mounted}": f"file://{outside}",
    }


STORED_TRICKS = ["viewfs mount table", "fs.defaultFS", "spark.*", "paths", "unknown key"]


@pytest.mark.parametrize("trick", STORED_TRICKS)
def test_stored_row_with_a_bad_option_is_refused_at_use(
    security_worker, alice_sql, catalog, outside, trick
) -> None:
    key, value = KEY_TRICKS[trick]
    folder = table_dir()
    _stored_table(catalog, alice_sql, "old", {"connector": "text", "path": str(folder), key: value})
    before = files_under(folder)
    shown = f"`{catalog}`.`d`.`old`"
    read = alice_sql.run(f"SELECT * FROM {catalog}.d.old")
    refused(alice_sql, read, "FORBIDDEN_SQL", f"Table {shown} cannot be used", f"'{key}'")
    write = alice_sql.run(f"INSERT INTO {catalog}.d.old SELECT 'x'")
    refused(alice_sql, write, "FORBIDDEN_SQL", f"Table {shown} cannot be used", f"'{key}'")
    assert files_under(folder) == before
    assert files_under(outside) == {"secret.csv", "secret.txt"}


def _text_relation(path: str, options: dict[str, str]) -> dict[str, Any]:
    return {
        "alias": "__tessera_r1",
        "identifier": ["c", "d", "t"],
        "kind": "table",
        "format": "text",
        "path": path,
        "options": options,
        "physical_schema": "`value` STRING",
        "columns": [{"name": "value", "kind": "physical"}],
    }


def test_hand_made_plan_reading_through_a_viewfs_mount_is_refused(
    security_worker, alice_sql, outside
) -> None:
    """The reproduced attack: a path under the root, mounted (viewfs) onto a directory
    outside it. The worker refuses the options; nothing is read."""
    mounted = storage_root() / f"mnt-{uid()}"
    session = Session.objects.get(pk=alice_sql.session_id)
    for options in (
        _viewfs(outside, str(mounted)),
        {"FS.defaultFS": f"file://{outside}"},
        {"spark.hadoop.fs.defaultFS": "viewfs://cluster/"},
        {"path": str(outside)},
        {"paths": str(outside)},
        {"basePath": "/"},
    ):
        plan = hand_plan(
            "SELECT * FROM `__tessera_r1`", relations=[_text_relation(str(mounted), options)]
        )
        job = wait_for_status(
            submit_plan(alice_sql.user, plan, session).id, {"FINISHED", "FAILED", "CANCELED"}, 120
        )
        assert job.status == "FAILED", (options, job.error)
        assert error_of(job)["code"] == "FORBIDDEN_SQL", job.error
        assert "cannot be read" in error_of(job)["message"], job.error
        assert SECRET not in str(job.error)
        assert_error(alice_sql.api.get(f"{API}/jobs/{job.id}/result"), 404, "NOT_FOUND")


def test_hand_made_insert_with_hadoop_writer_options_writes_nothing(
    security_worker, alice_sql, catalog, outside
) -> None:
    """The reproduced attack, write side: the target's writer options mount the table's
    path onto a directory outside the roots. Refused before Spark writes anything."""
    folder = storage_root() / f"w-{uid()}"
    alice_sql.ok(
        f"CREATE TABLE {catalog}.d.t WITH ('connector' = 'parquet', 'path' = '{folder}') "
        "AS SELECT 1 AS id"
    )
    before = files_under(folder)
    session = Session.objects.get(pk=alice_sql.session_id)
    sql = f"INSERT INTO {catalog}.d.t SELECT 2"
    for extra in (
        _viewfs(outside, str(folder)),
        {"spark.sql.sources.outputCommitterClass": "org.evil.Committer"},
        {"compression": "org.evil.Codec"},
    ):
        plan = job_services.plan_sql(session, sql)
        plan["args"]["table"]["options"] = {**plan["args"]["table"]["options"], **extra}
        job = wait_for_status(
            submit_plan(alice_sql.user, plan, session, sql).id,
            {"FINISHED", "FAILED", "CANCELED"},
            120,
        )
        assert job.status == "FAILED", (extra, job.error)
        assert error_of(job)["code"] in ("FORBIDDEN_SQL", "VALIDATION_ERROR"), job.error
        assert "cannot be written" in error_of(job)["message"], job.error
        assert "data_written" not in events(job.pk)
        assert files_under(folder) == before  # no staging directory left behind
        assert files_under(outside) == {"secret.csv", "secret.txt"}
    assert alice_sql.rows(f"SELECT id FROM {catalog}.d.t") == [[1]]


def test_hand_made_ctas_with_hadoop_options_is_refused_at_creation(
    security_worker, alice_sql, catalog, outside
) -> None:
    session = Session.objects.get(pk=alice_sql.session_id)
    sql = f"CREATE TABLE {catalog}.d.c USING parquet AS SELECT 1 AS id"
    plan = job_services.plan_sql(session, sql)
    plan["args"]["options"] = {**plan["args"]["options"], **_viewfs(outside, "/x")}
    job = submit_plan(alice_sql.user, plan, session, sql)
    job = wait_for_status(job.id, {"FINISHED", "FAILED", "CANCELED"}, 60)
    assert job.status == "FAILED", job.error
    assert "fs.defaultFS" in error_of(job)["message"]
    no_table(catalog, "c")
    assert Job.objects.get(pk=job.pk).staging in ({}, None)


def test_allowed_options_reach_spark(security_worker, alice_sql, catalog) -> None:
    """The positive control: allow-listed options (any case) work on read and write."""
    folder = storage_root() / f"csv-{uid()}"
    folder.mkdir()
    (folder / "part-0.csv").write_text("id;name\n1;alpha\n2;beta\n")
    alice_sql.ok(
        f"CREATE TABLE {catalog}.d.t (id INT, name STRING) USING csv OPTIONS ('HEADER' = "
        f"'true', 'sep' = ';', 'Mode' = 'FAILFAST') LOCATION '{folder}'"
    )
    assert alice_sql.rows(f"SELECT id, name FROM {catalog}.d.t ORDER BY id") == [
        [1, "alpha"],
        [2, "beta"],
    ]
    alice_sql.ok(f"INSERT INTO {catalog}.d.t SELECT 3, 'gamma'")
    assert alice_sql.rows(f"SELECT count(*) FROM {catalog}.d.t") == [[3]]
    alice_sql.ok(
        f"CREATE TABLE {catalog}.d.z USING json OPTIONS ('compression' = 'gzip') AS SELECT 1 AS id"
    )
    location = Path(Table.objects.get(database__catalog__name=catalog, name="z").location)
    assert any(p.name.endswith(".json.gz") for p in location.iterdir())
    assert alice_sql.rows(f"SELECT id FROM {catalog}.d.z") == [[1]]
