"""No table's files are another table's: table paths may not overlap (Unity Catalog's rule).

Reproduced attack (by an ordinary signed-in user): bob created catalog ``bcat`` (anyone may)
and in it ``alias`` over the directory of alice's table and ``rootalias`` over the storage
root itself; both were accepted. ``INSERT OVERWRITE bcat.default.alias`` committed into
alice's directory, ``INSERT INTO`` appended to her data, and OVERWRITE of ``rootalias``
deleted every external table's directory under the root.

Now a storage root is never a table path, and an external table's path (permanent or
temporary) may not equal, hold or lie inside another table's path — its text and its
symbolic links resolved. Tried where paths enter (SQL CREATE [TEMPORARY] TABLE, CTAS,
REST POST, the properties encoding, PATCH) with every spelling and link of an overlapping
path, and where data is written: rows stored before the rule are refused at planning, on
the worker before Spark writes, and at the commit; a hand-made CTAS entry cannot commit
into someone else's table; OVERWRITE deletes only what Spark reads as the table's data.
Every refusal checks that nothing happened: no row, the other table's files unchanged,
nothing deleted, nothing committed. The positive controls check that paths apart (a
sibling sharing a prefix, another case, LIKE's wildcard characters) are accepted.

Also here: the storage roots are checked at start (a root holding the server's own files
stops every process), and the cost of the link check is bounded by directory listings
kept per directory (a link added later is still found).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest
from django.conf import settings
from django.db import transaction
from django.test.utils import CaptureQueriesContext

from catalog import services as catalog_services
from catalog import storage
from catalog.models import Database, Table
from core import jobstate, locations
from core.errors import CoreError
from core.schema import Schema
from jobs import lifecycle
from jobs.models import Job, Session, TemporaryObject
from sessions import statements as job_services
from tabledata import staging as write_staging
from tests.conftest import API, assert_error, simple_schema
from tests.schemas import ID_SCHEMA_JSON as ID_SCHEMA
from tests.security.boundary import (
    Actor,
    error_of,
    files_under,
    refused,
    sql_string,
    storage_root,
    uid,
)
from tests.worker_helpers import events, wait_for_status

pytestmark = [pytest.mark.django_db(transaction=True)]

REPO = Path(__file__).resolve().parents[2]


# --- the world: alice's tables, bob's catalog ---------------------------------------------


def snapshot(top: Path) -> dict[str, bytes | str]:
    """Every file under ``top`` with its content, every directory and link: what must not
    change when a refusal says nothing happened."""
    found: dict[str, bytes | str] = {}
    for relative in files_under(top):
        path = top / relative
        if path.is_symlink():
            found[relative] = "-> " + os.readlink(path)
        elif path.is_dir():
            found[relative] = "dir"
        else:
            found[relative] = path.read_bytes()
    return found


class World:
    """alice's catalog ``acat…`` with two external csv tables in a team directory:
    ``t`` over ``team/alice`` (two rows) and ``e`` over the empty ``team/empty``; links
    inside the roots to alice's directory and to the team directory; bob's own catalog."""

    def __init__(self, alice_sql: Actor, bob: Actor) -> None:
        root = storage_root()
        self.acat, self.bcat = f"acat{uid()}", f"bcat{uid()}"
        catalog_services.catalog_create(user=alice_sql.user, name=self.acat, default_database="d")
        catalog_services.catalog_create(user=bob.user, name=self.bcat, default_database="d")
        self.team = root / f"team-{uid()}"
        self.alice_dir = self.team / "alice"
        self.alice_dir.mkdir(parents=True)
        (self.alice_dir / "part-00000.csv").write_text("1,alpha\n2,beta\n")
        self.empty_dir = self.team / "empty"
        self.empty_dir.mkdir()
        self.link = root / f"link-{uid()}"
        os.symlink(self.alice_dir, self.link)
        self.team_link = root / f"teamlink-{uid()}"
        os.symlink(self.team, self.team_link)
        for name, folder in (("t", self.alice_dir), ("e", self.empty_dir)):
            response = alice_sql.api.post(
                tables_url(self.acat),
                {
                    "name": name,
                    "schema": simple_schema("id INT", "name STRING"),
                    "options": {"connector": "csv", "path": str(folder)},
                },
            )
            assert response.status_code == 201, response.content
        self.before = snapshot(self.team)

    def shown(self, name: str = "t") -> str:
        return f"`{self.acat}`.`d`.`{name}`"

    def hidden(self, error: dict[str, Any]) -> None:
        """Bob may not see alice's catalog (issue 18): the refusal says "another table" and
        names nothing of hers — not in the message, not in ``details.overlaps``."""
        assert "the path of another table" in error["message"], error
        assert self.acat not in error["message"], error
        overlaps = (error.get("details") or {}).get("overlaps")
        assert overlaps is None or "table" not in overlaps, error

    def unchanged(self) -> None:
        """alice's files, the empty directory and the team directory are as they were."""
        assert snapshot(self.team) == self.before


def tables_url(catalog: str) -> str:
    return f"{API}/catalogs/{catalog}/databases/d/tables"


@pytest.fixture
def bob() -> Actor:
    return Actor("bob")


@pytest.fixture
def world(alice_sql: Actor, bob: Actor) -> Iterator[World]:
    made = World(alice_sql, bob)
    yield made
    for link in (made.link, made.team_link):
        link.unlink(missing_ok=True)


def overlapping(w: World) -> dict[str, str]:
    """Paths that equal, hold or lie inside alice's ``t``, spelled every way the path
    check accepts, directly and through links inside the roots."""
    a = str(w.alice_dir)
    return {
        "the same path": a,
        "with a trailing slash": a + "/",
        "as a file: URI": "file:" + a,
        "as a file:/// URI": "file://" + a,
        "inside it": a + "/sub",
        "deep inside it": a + "/x/y/z",
        "inside a partition of it": a + "/day=1",
        "holding it": str(w.team),
        "a link to it": str(w.link),
        "inside a link to it": str(w.link) + "/sub",
        "a link to the directory holding it": str(w.team_link),
    }


OVERLAPS = [
    "the same path",
    "with a trailing slash",
    "as a file: URI",
    "as a file:/// URI",
    "inside it",
    "deep inside it",
    "inside a partition of it",
    "holding it",
    "a link to it",
    "inside a link to it",
    "a link to the directory holding it",
]


def roots(w: World) -> dict[str, str]:
    r = str(storage_root())
    return {"the storage root": r, "the root, slash": r + "/", "the root as a URI": f"file:{r}"}


ROOTS = ["the storage root", "the root, slash", "the root as a URI"]


def no_table(catalog: str, name: str = "x") -> None:
    assert not Table.objects.filter(database__catalog__name=catalog, name_key=name).exists()


# --- where paths enter: refused, nothing stored --------------------------------------------


@pytest.mark.parametrize("variant", OVERLAPS)
def test_sql_create_table_over_another_tables_path_is_refused(bob, world, variant) -> None:
    path = overlapping(world)[variant]
    job = bob.run(
        f"CREATE TABLE {world.bcat}.d.x (id INT, name STRING) USING csv LOCATION {sql_string(path)}"
    )
    error = refused(bob, job, "VALIDATION_ERROR", "may not equal, contain")
    world.hidden(error)
    assert error["details"]["overlaps"]["relation"] in ("equals", "contains", "inside"), error
    no_table(world.bcat)
    world.unchanged()


@pytest.mark.parametrize("variant", OVERLAPS)
def test_sql_temporary_table_over_another_tables_path_is_refused(bob, world, variant) -> None:
    path = overlapping(world)[variant]
    job = bob.run(
        f"CREATE TEMPORARY TABLE x.y.tmp (id INT, name STRING) USING csv "
        f"OPTIONS ('path' = {sql_string(path)})"
    )
    world.hidden(refused(bob, job, "VALIDATION_ERROR"))
    assert not TemporaryObject.objects.filter(session_id=bob.session_id).exists()
    world.unchanged()


@pytest.mark.parametrize("variant", OVERLAPS)
def test_rest_create_over_another_tables_path_is_refused(bob, world, variant) -> None:
    response = bob.api.post(
        tables_url(world.bcat),
        {
            "name": "x",
            "schema": simple_schema("id INT"),
            "options": {"connector": "csv", "path": overlapping(world)[variant]},
        },
    )
    error = assert_error(response, 400, "VALIDATION_ERROR")
    assert error["details"]["field"] == "options.path", error
    world.hidden(error)
    no_table(world.bcat)
    world.unchanged()


def test_the_other_table_is_named_to_whoever_may_see_it(bob, world) -> None:
    """Issue 18: the refusal names the other table (and ``details.overlaps.table``) only to
    a user who may see it — here once alice grants bob SELECT on it."""
    from tests.grants_support import share

    share(
        Table.objects.get(database__catalog__name=world.acat, name="t"), ["SELECT"], user=bob.user
    )
    response = bob.api.post(
        tables_url(world.bcat),
        {
            "name": "x",
            "schema": simple_schema("id INT"),
            "options": {"connector": "csv", "path": str(world.alice_dir)},
        },
    )
    error = assert_error(response, 400, "VALIDATION_ERROR", f"is the path of table {world.shown()}")
    assert error["details"]["overlaps"]["table"] == [world.acat, "d", "t"], error
    no_table(world.bcat)
    world.unchanged()


def test_check_table_apart_names_only_what_its_user_may_see(alice_sql, bob, world) -> None:
    own = storage_root() / f"bob-{uid()}"
    own.mkdir()
    stored(world.bcat, "mine", bob, str(own))
    stored(world.bcat, "alias", bob, str(own))  # an old row over the same files
    mine = Table.objects.select_related("database__catalog").get(
        database__catalog__name=world.bcat, name="mine"
    )
    for user, named in ((bob.user, True), (alice_sql.user, False), (None, False)):
        with pytest.raises(locations.PathOverlap) as refusal:
            storage.check_table_apart(mine, user=user)
        shown = f"`{world.bcat}`.`d`.`alias`"
        assert (shown in refusal.value.message) is named, (user, refusal.value.message)
        assert ("the path of another table" in refusal.value.message) is not named
        assert ("table" in refusal.value.details["overlaps"]) is named


@pytest.mark.parametrize("variant", OVERLAPS)
def test_rest_properties_over_another_tables_path_are_refused(bob, world, variant) -> None:
    properties = {
        "schema.0.name": "id",
        "schema.0.data-type": "INT",
        "connector": "csv",
        "path": overlapping(world)[variant],
    }
    response = bob.api.post(tables_url(world.bcat), {"name": "x", "properties": properties})
    error = assert_error(response, 400, "VALIDATION_ERROR")
    assert error["details"]["field"] == "properties.path", error
    world.hidden(error)
    no_table(world.bcat)
    world.unchanged()


@pytest.mark.parametrize("variant", OVERLAPS)
def test_rest_patch_onto_another_tables_path_is_refused(bob, world, variant) -> None:
    own = storage_root() / f"bob-{uid()}"
    own.mkdir()
    options = {"connector": "csv", "path": str(own)}
    created = bob.api.post(
        tables_url(world.bcat), {"name": "x", "schema": simple_schema("id INT"), "options": options}
    )
    assert created.status_code == 201, created.content
    response = bob.api.patch(
        f"{tables_url(world.bcat)}/x",
        {"options": {"connector": "csv", "path": overlapping(world)[variant]}},
    )
    world.hidden(assert_error(response, 400, "VALIDATION_ERROR"))
    row = Table.objects.get(database__catalog__name=world.bcat, name="x")
    assert row.options == options and row.data_path == str(own)
    world.unchanged()


@pytest.mark.parametrize("variant", ROOTS)
def test_a_storage_root_is_never_a_table_path(bob, world, variant) -> None:
    path = roots(world)[variant]
    before = snapshot(storage_root())
    job = bob.run(f"CREATE TABLE {world.bcat}.d.x (id INT) USING csv LOCATION {sql_string(path)}")
    refused(bob, job, "FORBIDDEN_SQL", "is a storage root")
    temporary = bob.run(f"CREATE TEMPORARY TABLE x.y.t (id INT) USING csv LOCATION '{path}'")
    refused(bob, temporary, "FORBIDDEN_SQL", "is a storage root")
    for body in (
        {
            "name": "x",
            "schema": simple_schema("id INT"),
            "options": {"connector": "csv", "path": path},
        },
        {
            "name": "x",
            "properties": {
                "schema.0.name": "id",
                "schema.0.data-type": "INT",
                "connector": "csv",
                "path": path,
            },
        },
    ):
        response = bob.api.post(tables_url(world.bcat), body)
        assert_error(response, 400, "VALIDATION_ERROR", "is a storage root")
    no_table(world.bcat)
    assert snapshot(storage_root()) == before


def test_a_link_to_a_storage_root_is_refused_as_the_root(bob, world) -> None:
    """The text names a directory below the root; resolved, it is the root itself."""
    link = storage_root() / f"rootlink-{uid()}"
    os.symlink(storage_root(), link)
    before = snapshot(world.team)
    job = bob.run(f"CREATE TABLE {world.bcat}.d.x (id INT) USING csv LOCATION '{link}'")
    refused(bob, job, "VALIDATION_ERROR", "is a storage root")
    temporary = bob.run(f"CREATE TEMPORARY TABLE x.y.t (id INT) USING csv LOCATION '{link}/'")
    refused(bob, temporary, "VALIDATION_ERROR", "is a storage root")
    response = bob.api.post(
        tables_url(world.bcat),
        {
            "name": "x",
            "schema": simple_schema("id INT"),
            "options": {"connector": "csv", "path": f"file://{link}"},
        },
    )
    assert_error(response, 400, "VALIDATION_ERROR", "is a storage root")
    no_table(world.bcat)
    assert not TemporaryObject.objects.filter(session_id=bob.session_id).exists()
    assert snapshot(world.team) == before
    link.unlink()


CTAS_VARIANTS = {
    "onto an empty table's path": lambda w: str(w.empty_dir),
    "inside an empty table's path": lambda w: f"{w.empty_dir}/sub",
    "inside a table's path": lambda w: f"{w.alice_dir}/new",
    "through a link, inside": lambda w: f"{w.link}/new",
}


@pytest.mark.parametrize("variant", list(CTAS_VARIANTS))
@pytest.mark.parametrize("atomic", [False, True])
def test_ctas_over_another_tables_path_is_refused(
    security_worker, bob, world, variant, atomic
) -> None:
    path = CTAS_VARIANTS[variant](world)
    job = bob.run(
        f"CREATE TABLE {world.bcat}.d.x WITH ('connector' = 'csv', 'path' = {sql_string(path)}, "
        f"'table.ctas.atomic' = '{str(atomic).lower()}') AS SELECT 1 AS id"
    )
    world.hidden(refused(bob, job, "VALIDATION_ERROR", "may not equal, contain"))
    row = Job.objects.get(pk=job["id"])
    assert "data_written" not in events(row.pk) and "data_committed" not in events(row.pk)
    no_table(world.bcat)
    world.unchanged()  # no staging directory was ever made in alice's directories


def test_paths_apart_are_accepted(bob, world) -> None:
    """Positive controls: what is not inside, not holding and not equal is accepted — a
    sibling sharing a prefix, another case (paths are case-sensitive), names with LIKE's
    wildcard characters next to paths they would match as a pattern."""
    marker = uid()
    wildcard_target = storage_root() / f"q{marker}abc" / "x"
    wildcard_target.mkdir(parents=True)
    response = bob.api.post(
        tables_url(world.bcat),
        {
            "name": "w0",
            "schema": simple_schema("id INT"),
            "options": {"connector": "csv", "path": str(wildcard_target)},
        },
    )
    assert response.status_code == 201, response.content
    apart = {
        "p1": f"{world.alice_dir}-2",
        "p2": f"{world.alice_dir}2/x",
        "p3": str(world.team / "ALICE"),
        "p4": str(storage_root() / f"q{marker}a_c"),  # 'a_c/%' would match 'abc/x'
        "p5": str(storage_root() / f"q{marker}"),  # a prefix, not a parent, of 'q…abc'
    }
    for name, path in apart.items():
        response = bob.api.post(
            tables_url(world.bcat),
            {
                "name": name,
                "schema": simple_schema("id INT"),
                "options": {"connector": "csv", "path": path},
            },
        )
        assert response.status_code == 201, (name, response.content)
    other_session = Actor("carol")
    for actor in (bob, other_session):  # temporary tables of two sessions may share a path
        actor.ok(f"CREATE TEMPORARY TABLE x.y.tmp (id INT) USING csv LOCATION '{world.team}2'")


def test_dropping_a_table_frees_its_path(alice_sql, bob, world) -> None:
    assert alice_sql.api.delete(f"{tables_url(world.acat)}/t").status_code == 204
    response = bob.api.post(
        tables_url(world.bcat),
        {
            "name": "x",
            "schema": simple_schema("id INT"),
            "options": {"connector": "csv", "path": str(world.alice_dir)},
        },
    )
    assert response.status_code == 201, response.content


def test_temporary_tables_of_one_session_may_not_overlap(bob, world) -> None:
    free = storage_root() / f"free-{uid()}"
    inner = free / "inner"
    (inner / "deeper").mkdir(parents=True)
    bob.ok(f"CREATE TEMPORARY TABLE x.y.t1 (id INT) USING csv LOCATION '{inner}'")
    for name, path in (("t2", inner), ("t3", inner / "deeper"), ("t4", free)):
        job = bob.run(f"CREATE TEMPORARY TABLE x.y.{name} (id INT) USING csv LOCATION '{path}'")
        refused(bob, job, "VALIDATION_ERROR", "the temporary table `x`.`y`.`t1`")
    rows = TemporaryObject.objects.filter(session_id=bob.session_id)
    assert set(rows.values_list("name", flat=True)) == {"t1"}
    # Temporary tables are private and cannot be written: they hold no path against the
    # catalog, so a permanent table may still be made there…
    response = bob.api.post(
        tables_url(world.bcat),
        {
            "name": "x",
            "schema": simple_schema("id INT"),
            "options": {"connector": "csv", "path": str(inner)},
        },
    )
    assert response.status_code == 201, response.content
    # …and from then on only a temporary table of a user who may read it may be made over
    # it (exactly over it: reading its files is reading it), and one session's two
    # temporary tables still may not share a path.
    job = bob.run(f"CREATE TEMPORARY TABLE x.y.t5 (id INT) USING csv LOCATION '{inner}'")
    refused(bob, job, "VALIDATION_ERROR", "the temporary table `x`.`y`.`t1`")
    carol = Actor("carol")
    job = carol.run(f"CREATE TEMPORARY TABLE x.y.t5 (id INT) USING csv LOCATION '{inner}'")
    world.hidden(refused(carol, job, "VALIDATION_ERROR"))
    assert not TemporaryObject.objects.filter(session_id=carol.session_id).exists()


# --- rows stored before the rule: refused where data is written ----------------------------


def stored(catalog: str, name: str, actor: Actor, path: str, fmt: str = "csv") -> Table:
    """A table row as an older Tessera may have stored it (straight into the database)."""
    database = Database.objects.get(catalog__name=catalog, name="d")
    schema = simple_schema("id INT", "name STRING")
    resolved = catalog_services.resolve_schema(Schema.from_dict(schema))
    return Table.objects.create(
        database=database,
        name=name,
        name_key=name.lower(),
        kind=Table.KIND_TABLE,
        options={"connector": fmt, "path": path},
        schema=schema,
        resolved_schema=resolved.to_dict(),
        created_by=actor.user,
    )


def test_the_reproduced_attack_is_refused_at_planning(alice_sql, bob, world) -> None:
    root = storage_root()
    stored(world.bcat, "alias", bob, str(world.alice_dir))
    stored(world.bcat, "parent", bob, str(world.team))
    own = root / f"bob-{uid()}"
    own.mkdir()
    (own / "part-0.csv").write_text("7,own\n")
    stored(world.bcat, "mine", bob, str(own))
    everything = snapshot(root)
    b = world.bcat
    attempts = [
        f"INSERT OVERWRITE {b}.d.alias SELECT 2, 'x'",
        f"INSERT INTO {b}.d.alias SELECT 2, 'x'",
        f"INSERT OVERWRITE TABLE {b}.d.parent SELECT 2, 'x'",
        (
            f"EXECUTE STATEMENT SET BEGIN INSERT INTO {b}.d.mine SELECT 8, 'y'; "
            f"INSERT OVERWRITE {b}.d.alias SELECT 9, 'z'; END"
        ),
    ]
    for sql in attempts:
        job = bob.run(sql)
        error = refused(bob, job, "FORBIDDEN_SQL", "cannot be written")
        world.hidden(error)  # alice's table, which bob may not see
        assert Job.objects.get(pk=job["id"]).staging in ({}, None), (sql, error)
    # alice's own table is held too while bob's old row overlaps it: nothing may write
    # files that are two tables' until one of them is dropped or moved. Bob's catalog is
    # private: she is not told which table it is.
    job = alice_sql.run(f"INSERT INTO {world.acat}.d.t SELECT 3, 'gamma'")
    error = refused(alice_sql, job, "FORBIDDEN_SQL", "the path of another table")
    assert b not in error["message"], error
    assert snapshot(root) == everything  # nothing written, nothing deleted anywhere
    # The root itself, stored as a table path: refused as a root, and it holds every
    # table below it, so none of them may be written while that row exists.
    stored(world.bcat, "rootalias", bob, str(root))
    for sql in (
        f"INSERT OVERWRITE {b}.d.rootalias SELECT 2, 'x'",
        f"INSERT INTO {b}.d.rootalias SELECT 2, 'x'",
    ):
        refused(bob, bob.run(sql), "FORBIDDEN_SQL", "cannot be written", "is a storage root")
    error = refused(bob, bob.run(f"INSERT INTO {b}.d.mine SELECT 8, 'y'"), "FORBIDDEN_SQL")
    # Bob's own rootalias: the planner names it to him (he may see it).
    assert f"`{b}`.`d`.`rootalias`" in error["message"], error
    assert snapshot(root) == everything


def test_an_overlap_that_appears_after_planning_is_refused_by_the_worker(
    security_worker, alice_sql, bob, world
) -> None:
    """The job was created while bob's table was apart; before the worker takes it an
    overlapping row appears (stored as an older Tessera would have): the worker refuses
    before Spark writes a file, so no staging lands in the other table's directory."""
    own = storage_root() / f"bob-{uid()}"
    (own / "inner").mkdir(parents=True)
    (own / "part-0.csv").write_text("7,own\n")
    (own / "inner" / "part-0.csv").write_text("8,theirs\n")
    response = bob.api.post(
        tables_url(world.bcat),
        {
            "name": "b",
            "schema": simple_schema("id INT", "name STRING"),
            "options": {"connector": "csv", "path": str(own)},
        },
    )
    assert response.status_code == 201, response.content
    before = snapshot(own)
    session = Session.objects.get(pk=bob.session_id)
    sql = f"INSERT OVERWRITE {world.bcat}.d.b SELECT 9, 'z'"
    with transaction.atomic():
        job = job_services.submit_plan(
            session=session, sql=sql, plan=job_services.plan_sql(session, sql)
        )
        stored(world.acat, "inner", alice_sql, str(own / "inner"))
    ended = wait_for_status(job.id, {"FINISHED", "FAILED", "CANCELED"}, 120)
    assert ended.status == "FAILED", ended.error
    assert error_of(ended)["code"] == "FORBIDDEN_SQL", ended.error
    world.hidden(error_of(ended))
    assert "data_written" not in events(job.pk)
    assert snapshot(own) == before


# --- the commit (no worker: the job is moved as a worker would, lifecycle and all) ---------


@pytest.fixture
def no_broker(monkeypatch: pytest.MonkeyPatch) -> None:
    """Jobs made here are run by the test, never by a worker."""
    from webapp.celery import app

    monkeypatch.setattr(app, "send_task", lambda *args, **kwargs: None)


def write_parquet(directory: Path, ids: list[int], name: str = "") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / (name or f"part-00000-{uuid.uuid4()}-c000.snappy.parquet")
    pq.write_table(pa.table({"id": pa.array(ids, pa.int64())}), path)
    return path


def external_parquet(actor: Actor, catalog: str, name: str, path: Path) -> Table:
    response = actor.api.post(
        tables_url(catalog),
        {
            "name": name,
            "schema": simple_schema("id BIGINT"),
            "options": {"connector": "parquet", "path": str(path)},
        },
    )
    assert response.status_code == 201, response.content
    return Table.objects.get(database__catalog__name=catalog, name=name)


def insert_plan(table: Table, *, overwrite: bool) -> dict[str, Any]:
    identifier = [table.database.catalog.name, "d", table.name]
    args = {
        "identifier": identifier,
        "overwrite": overwrite,
        "columns": None,
        "table": {"format": "parquet", "path": table.options["path"]},
        "location": table.options["path"],
        "managed": False,
        "sql": "SELECT 1 AS id",
    }
    return {
        "kind": "insert",
        "action": "insert",
        "needs_spark": True,
        "sql": "SELECT 1 AS id",
        "relations": [],
        "functions": [],
        "target": identifier,
        "args": args,
    }


def started(actor: Actor, plan: dict[str, Any]) -> Job:
    """Submitted (staging decided) and claimed, as a worker would."""
    session = Session.objects.select_related("user").get(pk=actor.session_id)
    job = job_services.submit_plan(session=session, sql="INSERT …", plan=plan)
    assert job.status == jobstate.CREATED, job.error
    return lifecycle.transition(job.id, jobstate.CREATED, jobstate.RUNNING, worker="test-worker")


def finish(job: Job) -> Job:
    """RUNNING → FINISHED as the worker does it: a refused commit fails the job instead."""
    try:
        return lifecycle.transition(job.id, jobstate.RUNNING, jobstate.FINISHED)
    except CoreError as exc:
        error = {"code": exc.code, "message": exc.message, "details": exc.details}
        return lifecycle.transition(job.id, jobstate.RUNNING, jobstate.FAILED, error=error)


def test_the_commit_refuses_an_overlap_that_appeared_after_the_write(
    no_broker, alice_sql, bob, world
) -> None:
    own = storage_root() / f"bob-{uid()}"
    table = external_parquet(bob, world.bcat, "b", own)
    write_parquet(own, [1, 2], "part-old.parquet")
    job = started(bob, insert_plan(table, overwrite=True))
    staging = Path(write_staging.staging_location(job, [world.bcat, "d", "b"]))
    write_parquet(staging, [9])  # the worker's write
    (own / "inner").mkdir()
    (own / "inner" / "part-0.csv").write_text("8,theirs\n")
    before = snapshot(own / "inner")
    stored(world.acat, "inner", alice_sql, str(own / "inner"))  # appears before the commit
    ended = finish(job)
    assert ended.status == jobstate.FAILED, ended.error
    assert error_of(ended)["code"] == "FORBIDDEN_SQL", ended.error
    world.hidden(error_of(ended))
    assert "data_committed" not in events(job.pk)
    assert (own / "part-old.parquet").exists()  # the OVERWRITE deleted nothing
    assert snapshot(own / "inner") == before
    assert not staging.exists()  # the clean-up removed this job's staging


@pytest.mark.parametrize("recursive", [False, True])
def test_overwrite_deletes_only_what_spark_reads_as_the_tables_data(
    no_broker, bob, world, recursive
) -> None:
    """Data files (and their checksums) and ``k=v`` directories go; hidden entries stay,
    and plain directories stay unless the table reads them (``recursiveFileLookup``:
    Spark 4 reads no file in a plain subdirectory otherwise)."""
    own = storage_root() / f"bob-{uid()}"
    options = {"connector": "parquet", "path": str(own)}
    if recursive:
        options["recursiveFileLookup"] = "true"
    response = bob.api.post(
        tables_url(world.bcat),
        {"name": "b", "schema": simple_schema("id BIGINT"), "options": options},
    )
    assert response.status_code == 201, response.content
    table = Table.objects.get(database__catalog__name=world.bcat, name="b")
    write_parquet(own, [1], "part-top.parquet")
    (own / ".part-top.parquet.crc").write_bytes(b"crc")
    write_parquet(own / "day=1", [2], "part-day.parquet")
    write_parquet(own / "keep", [3], "part-kept.parquet")
    (own / "_meta").mkdir()
    (own / "_meta" / "x").write_text("hidden")
    (own / ".dotfile").write_text("hidden")
    (own / "_SUCCESS").write_text("")
    job = started(bob, insert_plan(table, overwrite=True))
    staging = Path(write_staging.staging_location(job, [world.bcat, "d", "b"]))
    write_parquet(staging, [9], "part-new.parquet")
    ended = finish(job)
    assert ended.status == jobstate.FINISHED, ended.error
    left = files_under(own)
    assert f"tessera-{job.pk}-part-new.parquet" in left  # renamed in by the commit
    assert not {"part-top.parquet", ".part-top.parquet.crc", "day=1"} & left, left
    assert {"_meta", "_meta/x", ".dotfile", "_SUCCESS"} <= left, left
    kept = {"keep", "keep/part-kept.parquet"}
    assert (kept <= left) if not recursive else not (kept & left), left


def test_the_commit_does_not_move_files_through_a_link(no_broker, bob, world) -> None:
    """A partition directory of the table that is a link (here to the directory of
    alice's empty table, inside the roots, so no root check stops it): the commit refuses
    to move the job's files through it."""
    own = storage_root() / f"bob-{uid()}"
    table = external_parquet(bob, world.bcat, "b", own)
    own.mkdir(exist_ok=True)
    os.symlink(world.empty_dir, own / "day=1")
    job = started(bob, insert_plan(table, overwrite=False))
    staging = Path(write_staging.staging_location(job, [world.bcat, "d", "b"]))
    write_parquet(staging / "day=1", [9])
    ended = finish(job)
    assert ended.status == jobstate.FAILED, ended.error
    assert error_of(ended)["code"] == "FORBIDDEN_SQL", ended.error
    assert "symbolic link" in error_of(ended)["message"]
    world.unchanged()


def ctas_plan(catalog: str, name: str) -> dict[str, Any]:
    identifier = [catalog, "d", name]
    return {
        "kind": "ctas",
        "action": "ctas",
        "needs_spark": True,
        "sql": "SELECT 1 AS id",
        "relations": [],
        "functions": [],
        "target": identifier,
        "args": {
            "identifier": identifier,
            "if_not_exists": False,
            "options": {"format": "parquet"},
            "partition_by": [],
            "comment": "",
            "atomic": False,
        },
    }


@pytest.mark.parametrize("whose", ["alice's table", "bob's own other table"])
def test_a_ctas_entry_cannot_commit_into_a_table_the_job_did_not_create(
    no_broker, alice_sql, bob, world, whose
) -> None:
    """A hand-made staging entry names an existing managed table as a CTAS target, next to
    the job's own stage table. Before, the commit pointed that table at the job's data and
    deleted its directory; now the commit checks the target is this job's own."""
    owner = alice_sql if whose == "alice's table" else bob
    catalog = world.acat if owner is alice_sql else world.bcat
    response = owner.api.post(
        tables_url(catalog), {"name": "victim", "schema": simple_schema("id BIGINT")}
    )
    assert response.status_code == 201, response.content
    victim = Table.objects.get(database__catalog__name=catalog, name="victim")
    old = Path(victim.location)
    write_parquet(old, [1, 2], "part-0.parquet")
    before = snapshot(old)
    job = started(bob, ctas_plan(world.bcat, "mine"))
    write_staging.record(job, [world.bcat, "d", "mine"], schema=ID_SCHEMA)
    write_parquet(Path(write_staging.staging_location(job, [world.bcat, "d", "mine"])), [9])
    forged = storage.warehouse_location(catalog, "d", "victim")
    write_parquet(forged, [666])
    staging = dict(Job.objects.get(pk=job.pk).staging)
    staging[write_staging.staging_key([catalog, "d", "victim"])] = {
        "identifier": [catalog, "d", "victim"],
        "table": f"`{catalog}`.`d`.`victim`",
        "mode": "ctas",
        "managed": True,
        "format": "parquet",
        "location": str(forged),
        "final": str(forged),
        "schema": ID_SCHEMA,
    }
    Job.objects.filter(pk=job.pk).update(staging=staging)
    ended = finish(job)
    assert ended.status == jobstate.FAILED, ended.error
    assert error_of(ended)["code"] == "PERMISSION_DENIED", ended.error
    assert "did not create table" in error_of(ended)["message"]
    victim.refresh_from_db()
    assert victim.location == str(old) and snapshot(old) == before
    assert "data_committed" not in events(job.pk)
    no_table(world.bcat, "mine")  # its own stage table was dropped with the job


# --- the cost of the link check, and links added after a check -------------------------------


def test_listings_are_reused_until_a_directory_changes(monkeypatch, tmp_path) -> None:
    """The link check lists a directory again only when it changed: a second check of an
    unchanged tree lists nothing; a link added deep inside is still found."""
    root = storage_root()
    top = root / f"tree-{uid()}"
    for day in range(3):
        write_parquet(top / f"day={day}", [day], "part-0.parquet")
    # Kept at once: no need to wait here for the directories' times to settle.
    monkeypatch.setattr(storage, "_SETTLE_NS", -(10**18))
    listed: list[str] = []
    real_scandir = os.scandir

    def counting(path: Any) -> Any:
        listed.append(str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", counting)
    storage.resolved_external_path(str(top))
    assert len(listed) == 4  # the top and its three partitions
    listed.clear()
    storage.resolved_external_path(str(top))
    assert listed == []  # unchanged: one stat per directory, no listing
    outside = Path(settings.DATA_DIR) / f"outside-{uid()}"
    outside.mkdir()
    os.symlink(outside, top / "day=1" / "part-1.parquet")
    with pytest.raises(locations.LocationRefused, match="symbolic link"):
        storage.resolved_external_path(str(top))
    assert listed == [str(top / "day=1")]  # only the directory that changed


def test_a_link_added_after_a_remembered_check_is_refused_on_the_worker(
    security_worker, alice_sql, world
) -> None:
    """On the worker: the table is read (its listing kept, its times settled), then a
    link out is added inside a partition; the next read is refused."""
    folder = storage_root() / f"kept-{uid()}"
    (folder / "day=1").mkdir(parents=True)
    (folder / "day=1" / "part-0.csv").write_text("1\n")
    old = time.time() - 3600
    for path in (folder / "day=1", folder):
        os.utime(path, (old, old))
    alice_sql.ok(f"CREATE TABLE {world.acat}.d.k (id INT) USING csv LOCATION '{folder}'")
    time.sleep(2.5)  # the directories' ctimes settle: the worker keeps their listings
    assert alice_sql.rows(f"SELECT count(*) FROM {world.acat}.d.k") == [[1]]
    assert alice_sql.rows(f"SELECT count(*) FROM {world.acat}.d.k") == [[1]]
    outside = Path(settings.DATA_DIR) / f"outside-{uid()}"
    outside.mkdir()
    (outside / "secret.csv").write_text("999\n")
    os.symlink(outside / "secret.csv", folder / "day=1" / "part-1.csv")
    job = alice_sql.run(f"SELECT * FROM {world.acat}.d.k")
    refused(alice_sql, job, "FORBIDDEN_SQL", "symbolic link")
    shutil.rmtree(outside)


def test_the_staging_check_before_the_commit_finds_a_planted_link() -> None:
    """What a job wrote is listed afresh before the commit's transaction: a link planted
    in it (Spark writes none) is refused, for external and managed staging alike."""
    outside = Path(settings.DATA_DIR) / f"outside-{uid()}"
    outside.mkdir()
    external = storage_root() / f"t-{uid()}" / "_tessera_staging_x" / "day=1"
    managed = Path(settings.WAREHOUSE_DIR) / f"c-{uid()}" / "d" / "t-x" / "day=1"
    for directory, is_managed in ((external, False), (managed, True)):
        directory.mkdir(parents=True)
        write_parquet(directory, [1])
        storage.check_tree(str(directory.parent), managed=is_managed)  # clean: accepted
        os.symlink(outside, directory / "part-9.parquet")
        with pytest.raises(locations.LocationRefused, match="symbolic link"):
            storage.check_tree(str(directory.parent), managed=is_managed)


def test_the_overlap_lookup_is_one_query(bob, world) -> None:
    with CaptureQueriesContext(transaction.get_connection()) as queries:
        found = storage.find_overlap(str(world.alice_dir / "deep" / "er"))
    assert found is not None and found.table.name == "t" and found.how == "inside"
    assert len(queries.captured_queries) == 1, queries.captured_queries


# --- storage roots checked at start ----------------------------------------------------------


def start_with_roots(data_dir: Path, roots: str, *command: str) -> subprocess.CompletedProcess[str]:
    """A process loading the settings with these roots (the embedded default: SQLite)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DATABASE_URL", "CELERY_BROKER_URL")
    }
    env.update(TESSERA_DATA_DIR=str(data_dir), TESSERA_STORAGE_ROOTS=roots)
    return subprocess.run(
        list(command) or [sys.executable, "-c", "import webapp.settings"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


BAD_ROOTS: dict[str, tuple[str, str]] = {
    # name: (roots, relative to a fresh data dir "D"; what the message says)
    "the data dir": ("{D}", "is TESSERA_DATA_DIR"),
    "holding the data dir": ("{P}", "holds TESSERA_DATA_DIR"),
    "the file system root": ("/", "holds TESSERA_DATA_DIR"),
    "the warehouse": ("{D}/warehouse", "is the warehouse"),
    "inside the warehouse": ("{D}/warehouse/t", "lies inside the warehouse"),
    "the results": ("{D}/results", "is the results directory"),
    "the broker": ("{D}/broker/queue", "lies inside the broker directory"),
    "the static files": ("{D}/static", "is STATIC_ROOT"),
    "percent": ("{P}/a%2e", "'%' starts a percent-encoded character"),
    "glob star": ("{P}/a*", "glob characters"),
    "glob brackets": ("{P}/[ab]", "glob characters"),
    "glob braces": ("{P}/{{a,b}}", "glob characters"),
    "backslash": ("{P}/a\\b", "a backslash escapes"),
    "fragment": ("{P}/a#b", "URI fragment"),
    "one good, one bad": ("{P}/ok:{D}", "is TESSERA_DATA_DIR"),
}


@pytest.mark.parametrize("variant", list(BAD_ROOTS))
def test_storage_roots_that_reach_the_servers_files_stop_the_start(tmp_path, variant) -> None:
    data_dir = tmp_path / "data"
    roots, fragment = BAD_ROOTS[variant]
    result = start_with_roots(data_dir, roots.format(D=data_dir, P=tmp_path))
    assert result.returncode != 0, result.stdout
    assert "ImproperlyConfigured" in result.stderr and "TESSERA_STORAGE_ROOTS" in result.stderr
    assert fragment in result.stderr, result.stderr[-2000:]


def test_good_storage_roots_start_and_bad_ones_stop_the_worker_and_manage(tmp_path) -> None:
    data_dir = tmp_path / "data"
    for roots in (f"{data_dir}/external", f"{tmp_path}/elsewhere:{data_dir}/external"):
        assert start_with_roots(data_dir, roots).returncode == 0
    manage = start_with_roots(data_dir, str(data_dir), sys.executable, "manage.py", "check")
    assert manage.returncode != 0 and "is TESSERA_DATA_DIR" in manage.stderr, manage.stderr
    celery = str(REPO / ".venv" / "bin" / "celery")
    worker = start_with_roots(
        data_dir, str(data_dir), celery, "-A", "webapp", "worker", "--pool", "solo"
    )
    assert worker.returncode != 0 and "is TESSERA_DATA_DIR" in worker.stderr, worker.stderr[-2000:]


# --- temporary tables reading a table's files ----------------------------------------------
#
# A temporary table only reads (INSERT into one is refused at planning): over exactly the
# path of a permanent table whose user may SELECT from it, it reads that table's files, as
# SELECT would. Holding or lying inside such a path, without SELECT, or after SELECT was
# revoked, it is refused as before.


def tmp_over(path: str, name: str = "tmp") -> str:
    columns = "(id INT, name STRING) USING csv"
    return f"CREATE TEMPORARY TABLE x.y.{name} {columns} LOCATION {sql_string(path)}"


def plans_a_read(actor: Actor, name: str = "tmp") -> dict[str, Any]:
    """The plan of ``SELECT * FROM x.y.<name>`` in the actor's session (no worker needed)."""
    from tests.worker_helpers import planned

    return planned(Session.objects.get(pk=actor.session_id), f"SELECT * FROM x.y.{name}")


def grant_select(world: World, bob: Actor) -> None:
    from tests.grants_support import share

    share(
        Table.objects.get(database__catalog__name=world.acat, name="t"), ["SELECT"], user=bob.user
    )


SAME_FILES = ["the same path", "with a trailing slash", "as a file: URI", "a link to it"]


@pytest.mark.parametrize("variant", SAME_FILES)
@pytest.mark.parametrize("who", ["owner", "select holder"])
def test_a_temporary_table_may_read_the_files_of_a_table_its_user_may_read(
    alice_sql, bob, world, variant, who
) -> None:
    actor = alice_sql if who == "owner" else bob
    if who == "select holder":
        grant_select(world, bob)
    actor.ok(tmp_over(overlapping(world)[variant]))
    plan = plans_a_read(actor)
    [relation] = plan["relations"]
    assert relation["temporary"], relation
    assert os.path.realpath(relation["path"]) == os.path.realpath(world.alice_dir), relation
    world.unchanged()


@pytest.mark.parametrize(
    "variant", ["inside it", "inside a partition of it", "holding it", "inside a link to it"]
)
def test_select_lets_a_temporary_table_read_exactly_the_tables_path_only(
    bob, world, variant
) -> None:
    grant_select(world, bob)
    job = bob.run(tmp_over(overlapping(world)[variant]))
    refused(bob, job, "VALIDATION_ERROR", "may not equal, contain")
    assert not TemporaryObject.objects.filter(session_id=bob.session_id).exists()


@pytest.mark.parametrize(
    "path",
    ["{p}", "{p}/", "file:{p}", "file://{p}", "{p}/.", "{p}/../alice", "{p}//", "{link}"],
)
def test_without_select_every_spelling_is_refused_hiding_the_table(bob, world, path) -> None:
    """bob may not see alice's catalog: whatever the spelling, nothing is made, and the
    refusal names nothing of hers (``.``/``..``/``//`` are refused as paths first)."""
    text = path.format(p=world.alice_dir, link=world.link)
    job = bob.run(tmp_over(text))
    error = error_of(Job.objects.get(pk=job["id"]))
    assert job["status"] == "FAILED", job
    assert error["code"] in ("VALIDATION_ERROR", "FORBIDDEN_SQL"), error
    assert world.acat not in str(error), error
    if error["code"] == "VALIDATION_ERROR" and "details" in error:
        world.hidden(error)
    assert not TemporaryObject.objects.filter(session_id=bob.session_id).exists()
    world.unchanged()


def test_use_without_select_is_refused_and_named(bob, world) -> None:
    """Who may see the table (USE on it) is told which table; USE does not let them read."""
    from tests.grants_support import share

    share(world.acat, ["USE"], user=bob.user)
    share(Table.objects.get(database__catalog__name=world.acat, name="t"), ["USE"], user=bob.user)
    job = bob.run(tmp_over(str(world.alice_dir)))
    refused(bob, job, "VALIDATION_ERROR", f"is the path of table {world.shown()}")
    assert not TemporaryObject.objects.filter(session_id=bob.session_id).exists()


def test_writing_through_the_temporary_table_is_refused(alice_sql, world) -> None:
    alice_sql.ok(tmp_over(str(world.alice_dir)))
    for sql in (
        "INSERT INTO x.y.tmp VALUES (3, 'gamma')",
        "INSERT OVERWRITE x.y.tmp SELECT 4, 'delta'",
    ):
        job = alice_sql.run(sql)
        refused(alice_sql, job, "UNSUPPORTED_STATEMENT", "INSERT into temporary tables is not")
    world.unchanged()


def test_a_revoked_select_stops_the_next_read(bob, world) -> None:
    """SELECT is decided again at each statement that reads the temporary table."""
    from catalog.models import Grant

    grant_select(world, bob)
    bob.ok(tmp_over(str(world.alice_dir)))
    plans_a_read(bob)
    Grant.objects.filter(principal_key=f"user:{bob.user.pk}").delete()
    with pytest.raises(CoreError) as caught:
        plans_a_read(bob)
    assert caught.value.code == "FORBIDDEN_SQL", caught.value
    assert "`x`.`y`.`tmp` cannot be read" in caught.value.message, caught.value.message
    assert "the path of another table" in caught.value.message, caught.value.message
    assert world.acat not in caught.value.message
    job = bob.run("SELECT * FROM x.y.tmp")
    refused(bob, job, "FORBIDDEN_SQL", "the path of another table")


def test_a_table_made_later_over_a_temporary_tables_path_is_read_with_select_only(
    alice_sql, bob, world
) -> None:
    free = storage_root() / f"free-{uid()}"
    free.mkdir()
    bob.ok(tmp_over(str(free)))
    plans_a_read(bob)
    response = alice_sql.api.post(
        tables_url(world.acat),
        {
            "name": "later",
            "schema": simple_schema("id INT", "name STRING"),
            "options": {"connector": "csv", "path": str(free)},
        },
    )
    assert response.status_code == 201, response.content
    job = bob.run("SELECT * FROM x.y.tmp")
    refused(bob, job, "FORBIDDEN_SQL", "the path of another table")


def test_a_select_holder_reads_the_rows_through_the_temporary_table(
    security_worker, bob, world
) -> None:
    """On a live worker: the files of alice's table read through bob's temporary table."""
    grant_select(world, bob)
    bob.ok(tmp_over(str(world.alice_dir)))
    assert sorted(bob.rows("SELECT id, name FROM x.y.tmp")) == [[1, "alpha"], [2, "beta"]]
    world.unchanged()
