"""Writes (FLIP-218) without a worker: stage tables, commit, clean-up, skip and races.

Jobs are made with ``sessions.statements.submit_plan`` and hand-built plans (the dicts the
planner makes for CTAS, INSERT and statement sets, docs/statements.md), then moved through
``jobs.lifecycle`` here, as a worker would: claim, write a small parquet file into the
staging location (``tabledata.staging.staging_location``), store the analysed schema, FINISHED
(or FAILED / CANCELED). The steps of ``tabledata.write_steps`` and the commit protocol of
``tabledata.staging`` and ``tabledata.commit`` do the rest, as in production.
"""

from __future__ import annotations

import json
import threading
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest
from django.db import connection, transaction
from django.utils import timezone

from catalog.models import Column, Table, TableVersion
from core import jobstate
from core.errors import CoreError
from core.identifiers import ObjectIdentifier
from core.jobstate import JobView, NoOpHook, Record
from jobs import lifecycle, maintenance
from jobs import services as job_services
from jobs.models import Job, JobEvent, Session
from sessions import statements
from sessions.catalog_reader import DjangoCatalogReader
from tabledata import commit, commit_files, external_commit, manifest
from tabledata import staging as write_staging
from tests.conftest import API
from tests.races import LockWait
from tests.schemas import ID_SCHEMA_JSON as ID_SCHEMA

pytestmark = pytest.mark.django_db

TABLES = f"{API}/catalogs/demo/databases/sales/tables"


# --- fixtures and helpers --------------------------------------------------------------------


@pytest.fixture(autouse=True)
def sent_tasks(monkeypatch) -> list[Any]:
    """Keep the broker out: nothing here runs on a worker."""
    from webapp.celery import app

    sent: list[Any] = []
    monkeypatch.setattr(app, "send_task", lambda name, args=None, **kw: sent.append(args))
    return sent


@pytest.fixture(autouse=True)
def results_dir(settings, tmp_path):
    settings.RESULTS_DIR = tmp_path / "results"


def ident(name: str) -> list[str]:
    return ["demo", "sales", name]


def ctas_plan(
    name: str,
    *,
    options: dict[str, str] | None = None,
    if_not_exists: bool = False,
    atomic: bool | None = None,
    skip: bool = False,
    partition_by: tuple[str, ...] = (),
) -> dict[str, Any]:
    args: dict[str, Any] = {
        "identifier": ident(name),
        "if_not_exists": if_not_exists,
        "options": options or {"format": "parquet"},
        "partition_by": list(partition_by),
        "comment": "made by CTAS",
        "atomic": atomic,
    }
    if skip:
        args["skip"] = True
    return {
        "kind": "ctas",
        "action": "ctas",
        "needs_spark": not skip,
        "sql": "SELECT 1 AS id",
        "relations": [],
        "functions": [],
        "target": ident(name),
        "args": args,
    }


def insert_args(name: str, overwrite: bool = False) -> dict[str, Any]:
    table = Table.objects.get(name=name)
    return {
        "identifier": ident(name),
        "overwrite": overwrite,
        "columns": None,
        "table": {"format": "parquet", "path": table.location},
        "location": table.location,
        "managed": table.managed,
        "sql": "SELECT 1 AS id",
    }


def insert_plan(name: str, overwrite: bool = False) -> dict[str, Any]:
    return {
        "kind": "insert",
        "action": "insert",
        "needs_spark": True,
        "sql": "SELECT 1 AS id",
        "relations": [],
        "functions": [],
        "target": ident(name),
        "args": insert_args(name, overwrite),
    }


def set_plan(*inserts: tuple[str, bool]) -> dict[str, Any]:
    items = [insert_args(name, overwrite) for name, overwrite in inserts]
    return {
        "kind": "statement_set",
        "action": "statement_set",
        "needs_spark": True,
        "sql": "",
        "relations": [],
        "functions": [],
        "target": None,
        "args": {"inserts": items, "targets": [item["identifier"] for item in items]},
    }


def submit(session: Session, plan: dict[str, Any], sql: str = "CREATE TABLE … AS …") -> Job:
    session = Session.objects.select_related("user").get(pk=session.pk)
    return statements.submit_plan(session=session, sql=sql, plan=plan)


def write_parquet(directory: str | Path, ids: list[int]) -> Path:
    """One part file as Spark writes it (plus _SUCCESS), into ``directory``."""
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    path = target / f"part-00000-{uuid.uuid4()}-c000.snappy.parquet"
    pq.write_table(pa.table({"id": pa.array(ids, pa.int64())}), path)
    (target / "_SUCCESS").touch()
    return path


def data_dir(table: Table) -> Path:
    return Path(table.location) if table.managed else Path(table.options["path"])


def read_ids(directory: str | Path) -> list[int]:
    """The ids Tessera reads: the entries of the manifest when there is one, else every
    data file (``outside_ids``)."""
    root = Path(directory)
    found = manifest.read(root)
    if found is None:
        return outside_ids(root)
    ids: list[int] = []
    for entry in found.entries:
        ids.extend(outside_ids(root / entry) if (root / entry).is_dir() else file_ids(root / entry))
    return sorted(ids)


def outside_ids(directory: str | Path) -> list[int]:
    """The ids of every data file under ``directory`` (hidden ones skipped)."""
    root = Path(directory)
    ids: list[int] = []
    for relative in commit_files.data_files(root):
        ids.extend(file_ids(root / relative))
    return sorted(ids)


def file_ids(path: Path) -> list[int]:
    return list(pq.read_table(path).column("id").to_pylist())


def files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def claim(job: Job) -> Job:
    return lifecycle.transition(job.id, jobstate.CREATED, jobstate.RUNNING, worker="test-worker")


def write_targets(job: Job, ids: list[int]) -> None:
    """The worker's write: every target into its staging location; CTAS stores its schema."""
    for target in write_staging.write_targets(job.plan):
        location = write_staging.staging_location(job, target["identifier"])
        write_parquet(location, ids)
        if target["mode"] == "ctas":
            write_staging.record(job, target["identifier"], schema=ID_SCHEMA, rows=len(ids))


def finish(job: Job) -> Job:
    """RUNNING → FINISHED as the worker does it: a refused commit fails the job instead."""
    try:
        return lifecycle.transition(job.id, jobstate.RUNNING, jobstate.FINISHED)
    except CoreError as exc:
        error = {"code": exc.code, "message": exc.message, "details": exc.details}
        return lifecycle.transition(job.id, jobstate.RUNNING, jobstate.FAILED, error=error)


def run(job: Job, ids: list[int]) -> Job:
    claim(job)
    write_targets(job, ids)
    return finish(job)


def fail(job: Job, code: str = "SPARK_ERROR") -> Job:
    error = {"code": code, "message": "Spark said no.", "details": {}}
    return lifecycle.transition(job.id, jobstate.RUNNING, jobstate.FAILED, error=error)


def events(job: Job) -> list[str]:
    return list(
        JobEvent.objects.filter(job_id=job.id).order_by("id").values_list("type", flat=True)
    )


def event(job: Job, type_: str) -> dict[str, Any]:
    found = JobEvent.objects.filter(job_id=job.id, type=type_).order_by("id").first()
    assert found is not None, (type_, events(job))
    return dict(found.detail)


def reload(job: Job) -> Job:
    return Job.objects.get(pk=job.pk)


def staging_dir(job: Job, name: str) -> Path:
    return Path(write_staging.entry(job, ident(name))["location"])


# --- CTAS: success -----------------------------------------------------------------------


def test_ctas_creates_a_stage_table_then_commits_it_active(session, alice_api, storage):
    job = submit(session, ctas_plan("t"))
    assert job.status == "CREATED"
    assert events(job) == ["created", "stage_table_created"]
    assert event(job, "stage_table_created") == {"table": "`demo`.`sales`.`t`"}

    body = alice_api.get(f"{TABLES}/t").json()
    assert body["status"] == "staged"
    assert body["staged_by_job"] == str(job.id)
    assert body["resolved_schema"] is None
    assert body["schema"]["columns"] == []
    assert body["comment"] == "made by CTAS"
    entry = write_staging.entry(job, ident("t"))
    assert entry["managed"] is True and entry["mode"] == "ctas" and entry["atomic"] is False
    assert body["location"] == entry["location"] == entry["final"]
    assert Path(entry["location"]).parent == storage.warehouse / "demo" / "sales"
    assert not Column.objects.filter(table__name="t").exists()

    # The planner's reader sees who is creating it (queries on it are refused).
    relation = DjangoCatalogReader(session).get_relation(ObjectIdentifier(*ident("t")))
    assert relation is not None and relation.status == "staged"
    assert relation.staged_by_job == str(job.id)

    done = run(job, [1, 2, 3])
    assert done.status == "FINISHED"
    assert events(job) == [
        "created",
        "stage_table_created",
        "running",
        "data_committed",
        "finished",
    ]
    assert event(job, "data_committed") == {"table": "`demo`.`sales`.`t`", "rows": 3}
    body = alice_api.get(f"{TABLES}/t").json()
    assert body["status"] == "active"
    assert body["staged_by_job"] is None
    assert [c["name"] for c in body["resolved_schema"]["columns"]] == ["id"]
    assert body["schema"]["columns"] == [{"name": "id", "kind": "physical", "data_type": "BIGINT"}]
    assert list(Column.objects.filter(table__name="t").values_list("name", "data_type")) == [
        ("id", "BIGINT")
    ]
    # The data is in the final location and nowhere else.
    table = Table.objects.get(name="t")
    assert read_ids(table.location) == [1, 2, 3]
    assert {p.parent for p in files_under(storage.warehouse)} == {Path(table.location)}


def test_ctas_onto_an_external_path_moves_the_files_into_it(session, storage):
    path = storage.external / "out"
    job = submit(session, ctas_plan("ext", options={"connector": "parquet", "path": str(path)}))
    entry = write_staging.entry(job, ident("ext"))
    assert entry["managed"] is False
    assert entry["location"] == f"{path}/_tessera_staging_{job.id}"
    staged = Table.objects.get(name="ext")
    assert staged.status == "staged" and staged.location == ""

    assert run(job, [7, 8]).status == "FINISHED"
    table = Table.objects.get(name="ext")
    assert table.status == "active" and table.options["path"] == str(path)
    assert read_ids(path) == [7, 8]
    assert not any("_tessera_staging_" in str(p) for p in path.rglob("*"))
    assert [p.name for p in path.iterdir() if p.suffix == ".parquet"]


def test_ctas_onto_an_external_path_that_holds_files_fails_at_once(session, storage):
    path = storage.external / "full"
    write_parquet(path, [1])
    job = submit(session, ctas_plan("ext", options={"connector": "parquet", "path": str(path)}))
    assert job.status == "FAILED"
    assert (job.error or {})["code"] == "VALIDATION_ERROR"
    assert "already holds files" in (job.error or {})["message"]
    assert not Table.objects.filter(name="ext").exists()
    assert read_ids(path) == [1]


def test_a_partitioned_ctas_keeps_its_partition_directories(session, storage):
    job = submit(session, ctas_plan("p", partition_by=("id",)))
    claim(job)
    location = write_staging.staging_location(job, ident("p"))
    write_parquet(Path(location) / "id=1", [])
    write_staging.record(job, ident("p"), schema=ID_SCHEMA)
    assert finish(job).status == "FINISHED"
    table = Table.objects.get(name="p")
    assert table.partition_by == ["id"]
    assert (Path(table.location) / "id=1").is_dir()


# --- CTAS: failure, cancel, reaper -----------------------------------------------------------


@pytest.mark.parametrize("external", [False, True])
def test_a_failed_ctas_drops_its_stage_table_and_its_files(session, alice_api, storage, external):
    options = {"connector": "parquet", "path": str(storage.external / "gone")} if external else None
    job = submit(session, ctas_plan("t", options=options))
    claim(job)
    write_targets(job, [1, 2])
    staged = staging_dir(job, "t")
    assert files_under(staged)

    failed = fail(job)
    assert failed.status == "FAILED"
    assert events(job)[-3:] == ["failed", "stage_table_dropped", "data_cleaned"]
    assert event(job, "stage_table_dropped") == {"table": "`demo`.`sales`.`t`"}
    assert event(job, "data_cleaned") == {"deleted": True}
    assert alice_api.get(f"{TABLES}/t").status_code == 404
    assert not staged.exists()
    assert files_under(storage.warehouse) == []
    assert not (storage.external / "gone").exists()  # the directory the CTAS made is gone too
    assert commit.clean_up(job) is False  # idempotent


def test_canceling_a_ctas_before_it_starts_drops_its_stage_table(session, alice, alice_api):
    job = submit(session, ctas_plan("t"))
    canceled = job_services.job_cancel(user=alice, job=job)
    assert canceled.status == "CANCELED"
    assert events(job) == [
        "created",
        "stage_table_created",
        "canceled",
        "stage_table_dropped",
        "data_cleaned",
    ]
    assert event(job, "data_cleaned") == {"deleted": False}  # nothing was written yet
    assert alice_api.get(f"{TABLES}/t").status_code == 404


def test_canceling_a_running_ctas_cleans_up(session, storage):
    job = submit(session, ctas_plan("t"))
    claim(job)
    write_targets(job, [1])
    lifecycle.transition(job.id, jobstate.RUNNING, jobstate.CANCELED)
    assert "stage_table_dropped" in events(job)
    assert event(job, "data_cleaned") == {"deleted": True}
    assert not Table.objects.filter(name="t").exists()
    assert files_under(storage.warehouse) == []


def test_the_reaper_cleans_up_after_a_lost_worker(session, settings, storage):
    job = submit(session, ctas_plan("t"))
    claim(job)
    write_targets(job, [1])
    long_ago = timezone.now() - timedelta(seconds=settings.TESSERA_WORKER_TIMEOUT_SECONDS * 3)
    Job.objects.filter(pk=job.pk).update(heartbeat_at=long_ago, worker="gone-worker")

    assert maintenance.reap_lost_jobs(job.id) == [str(job.id)]
    reaped = reload(job)
    assert reaped.status == "FAILED" and (reaped.error or {})["code"] == "WORKER_LOST"
    assert events(job)[-3:] == ["failed", "stage_table_dropped", "data_cleaned"]
    assert not Table.objects.filter(name="t").exists()
    assert files_under(storage.warehouse) == []


def test_clean_up_leaves_other_jobs_staging_alone(session, storage):
    first = submit(session, ctas_plan("a"))
    second = submit(session, ctas_plan("b"))
    for job in (first, second):
        claim(job)
        write_targets(job, [1])
    fail(first)
    assert not staging_dir(first, "a").exists()
    assert read_ids(staging_dir(second, "b")) == [1]
    assert Table.objects.get(name="b").status == "staged"
    assert finish(second).status == "FINISHED"


def test_failure_hooks_never_drop_a_table_the_job_did_not_create(session, make):
    make.table("demo", "sales", "t")
    job = submit(session, ctas_plan("other"))
    Table.objects.filter(name="other").delete()  # the user dropped the stage table
    claim(job)
    fail(job)
    assert "stage_table_dropped" not in events(job)
    assert Table.objects.get(name="t").status == "active"


def test_a_stage_table_dropped_while_the_job_ran_fails_the_commit(session, storage):
    job = submit(session, ctas_plan("t"))
    claim(job)
    write_targets(job, [1])
    Table.objects.filter(name="t").delete()
    ended = finish(job)
    assert ended.status == "FAILED" and (ended.error or {})["code"] == "NOT_FOUND"
    assert "finished" not in events(job)
    assert files_under(storage.warehouse) == []


# --- CTAS: names taken, IF NOT EXISTS, races -------------------------------------------------


def test_if_not_exists_onto_a_taken_name_is_skipped_at_once(session, make, alice_api, storage):
    existing = make.table("demo", "sales", "t")
    job = submit(session, ctas_plan("t", if_not_exists=True, skip=True))
    assert job.status == "FINISHED"
    assert events(job) == ["created", "running", "skipped_exists", "finished"]
    assert event(job, "skipped_exists") == {"table": "`demo`.`sales`.`t`"}
    page = alice_api.get(f"{API}/jobs/{job.id}/result").json()
    assert page["rows"] == [
        ["Table `demo`.`sales`.`t` already exists; nothing was created or written."]
    ]
    assert reload(job).staging == {}
    assert alice_api.get(f"{TABLES}/t").json() == existing
    assert files_under(storage.warehouse) == []


def test_a_name_taken_after_planning_fails_already_exists(session, make, alice_api, storage):
    existing = make.table("demo", "sales", "t")
    job = submit(session, ctas_plan("t"))  # planned before the table existed
    assert job.status == "FAILED"
    assert job.kind == "ctas" and job.target == ident("t")
    assert (job.error or {})["code"] == "ALREADY_EXISTS"
    assert (job.error or {})["message"] == "Table `demo`.`sales`.`t` already exists."
    assert events(job) == ["created", "failed"]
    assert alice_api.get(f"{API}/jobs/{job.id}").json()["status"] == "FAILED"
    assert alice_api.get(f"{TABLES}/t").json() == existing
    assert files_under(storage.warehouse) == []


def test_if_not_exists_with_a_name_taken_after_planning_is_skipped(session, make):
    make.table("demo", "sales", "t")
    job = submit(session, ctas_plan("t", if_not_exists=True))
    assert job.status == "FINISHED"
    assert "skipped_exists" in events(job)
    assert "stage_table_created" not in events(job)
    assert job.plan["args"]["skip"] is True


class _HoldTheName(NoOpHook):
    """Keeps the first CTAS's creation transaction open after its stage table row is written
    until the second CTAS is seen waiting for the row lock of the unique index
    (``tests.races.LockWait``)."""

    in_transaction = True

    def __init__(self) -> None:
        self.inserted = threading.Event()
        self.race = LockWait()

    def on_created(self, job: JobView, record: Record) -> None:
        if not self.inserted.is_set():
            self.inserted.set()
            self.race.hold_until_the_second_waits()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("if_not_exists", [False, True])
def test_two_concurrent_ctas_onto_one_name_one_wins(session, storage, if_not_exists):
    hold = _HoldTheName()
    lifecycle.register_hook(hold, "ctas")
    jobs: dict[str, Job] = {}
    errors: list[BaseException] = []

    def submit_in_thread(label: str) -> None:
        try:
            if label == "second":
                assert hold.inserted.wait(10)
                hold.race.second_starts()
            jobs[label] = submit(session, ctas_plan("t", if_not_exists=if_not_exists))
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            if label == "second":
                hold.race.second_ended()
            connection.close()

    try:
        threads = [
            threading.Thread(target=submit_in_thread, args=(n,)) for n in ("first", "second")
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    finally:
        lifecycle.unregister_hook(hold, "ctas")
    assert not errors, errors
    winner, loser = reload(jobs["first"]), reload(jobs["second"])
    assert winner.status == "CREATED"
    assert list(Table.objects.values_list("name", "status", "staged_by_job")) == [
        ("t", "staged", winner.id)
    ]
    if if_not_exists:
        assert loser.status == "FINISHED" and "skipped_exists" in events(loser)
    else:
        assert loser.status == "FAILED" and (loser.error or {})["code"] == "ALREADY_EXISTS"
    assert loser.staging == {}
    assert "stage_table_created" not in events(loser)
    # The second CTAS waited for the first's uncommitted row: the race was run.
    assert hold.race.waited, "the second never waited for the first's lock: no race was run"
    assert run(winner, [1]).status == "FINISHED"
    assert Table.objects.get(name="t").status == "active"


# --- CTAS: atomic mode -----------------------------------------------------------------------


def test_atomic_ctas_creates_the_table_only_when_it_finishes(session, alice_api, storage):
    job = submit(session, ctas_plan("t", atomic=True))
    assert events(job) == ["created"]
    assert alice_api.get(f"{TABLES}/t").status_code == 404
    assert write_staging.entry(job, ident("t"))["atomic"] is True
    claim(job)
    write_targets(job, [4, 5])
    assert alice_api.get(f"{TABLES}/t").status_code == 404
    assert finish(job).status == "FINISHED"
    assert events(job) == ["created", "running", "data_committed", "finished"]
    body = alice_api.get(f"{TABLES}/t").json()
    assert body["status"] == "active" and body["staged_by_job"] is None
    assert read_ids(body["location"]) == [4, 5]


def test_the_session_property_makes_ctas_atomic(session):
    Session.objects.filter(pk=session.pk).update(properties={"table.ctas.atomic": "true"})
    job = submit(session, ctas_plan("t"))
    assert write_staging.entry(job, ident("t"))["atomic"] is True
    assert not Table.objects.filter(name="t").exists()
    statement_wins = submit(session, ctas_plan("u", atomic=False))
    assert Table.objects.get(name="u").status == "staged"
    assert statement_wins.status == "CREATED"


def test_atomic_ctas_whose_name_is_taken_at_commit_fails_and_cleans_up(session, make, storage):
    job = submit(session, ctas_plan("t", atomic=True))
    claim(job)
    write_targets(job, [1])
    staged = staging_dir(job, "t")
    other = make.table("demo", "sales", "t")  # somebody took the name meanwhile

    ended = finish(job)
    assert ended.status == "FAILED"
    assert (ended.error or {})["code"] == "ALREADY_EXISTS"
    assert "finished" not in events(job)
    assert events(job)[-2:] == ["failed", "data_cleaned"]
    assert "stage_table_dropped" not in events(job)
    assert not staged.exists()
    table = Table.objects.get(name="t")
    assert table.location == other["location"] and table.status == "active"


# --- INSERT ----------------------------------------------------------------------------------


@pytest.fixture
def managed_table(session, make) -> Table:
    """A managed table holding [1, 2] (written by an INSERT job)."""
    make.table("demo", "sales", "t")
    job = submit(session, insert_plan("t"), sql="INSERT INTO t VALUES (1), (2)")
    assert run(job, [1, 2]).status == "FINISHED"
    return Table.objects.get(name="t")


def test_insert_into_keeps_the_old_files_and_adds_new_ones_in_one_swap(
    session, managed_table, django_capture_on_commit_callbacks
):
    old = Path(managed_table.location)
    old_file = commit_files.data_files(old)[0]
    job = submit(session, insert_plan("t"), sql="INSERT INTO t VALUES (3)")
    assert events(job) == ["created"]
    claim(job)
    write_targets(job, [3])
    new = staging_dir(job, "t")
    assert new != old and new.parent == old.parent
    with django_capture_on_commit_callbacks(execute=True):
        assert finish(job).status == "FINISHED"
    assert event(job, "data_committed") == {"table": "`demo`.`sales`.`t`"}
    table = Table.objects.get(name="t")
    assert Path(table.location) == new
    assert read_ids(new) == [1, 2, 3]
    assert (new / old_file).exists()  # hard-linked, not rewritten
    assert read_ids(old) == [1, 2]  # the previous version stays (docs/writes.md)
    assert [v.location for v in TableVersion.objects.filter(table=table).order_by("version")][
        -2:
    ] == [str(old), str(new)]


def test_insert_overwrite_replaces_the_data(
    session, managed_table, django_capture_on_commit_callbacks
):
    old = Path(managed_table.location)
    job = submit(session, insert_plan("t", overwrite=True), sql="INSERT OVERWRITE t …")
    with django_capture_on_commit_callbacks(execute=True):
        assert run(job, [9]).status == "FINISHED"
    table = Table.objects.get(name="t")
    assert read_ids(table.location) == [9]
    assert read_ids(old) == [1, 2]  # the previous version, kept for the retention
    top = TableVersion.objects.filter(table=table).order_by("-version").first()
    assert top is not None and (top.operation, top.location) == ("OVERWRITE", table.location)


def test_a_failed_insert_overwrite_leaves_the_old_data_readable(session, managed_table):
    old = Path(managed_table.location)
    before = files_under(old)
    job = submit(session, insert_plan("t", overwrite=True), sql="INSERT OVERWRITE t …")
    claim(job)
    write_targets(job, [9])
    staged = staging_dir(job, "t")
    fail(job)
    assert events(job)[-2:] == ["failed", "data_cleaned"]
    assert event(job, "data_cleaned") == {"deleted": True}
    assert Table.objects.get(name="t").location == str(old)
    assert files_under(old) == before
    assert read_ids(old) == [1, 2]
    assert not staged.exists()


def test_two_inserts_into_one_table_keep_each_others_rows(session, managed_table):
    first = submit(session, insert_plan("t"), sql="INSERT INTO t VALUES (3)")
    second = submit(session, insert_plan("t"), sql="INSERT INTO t VALUES (4)")
    for job, ids in ((first, [3]), (second, [4])):
        claim(job)
        write_targets(job, ids)
    finish(first)
    finish(second)
    assert read_ids(Table.objects.get(name="t").location) == [1, 2, 3, 4]


@pytest.mark.parametrize("overwrite", [False, True])
def test_insert_into_an_external_table_moves_the_files(
    session, make, storage, overwrite, django_capture_on_commit_callbacks
):
    path = storage.external / "events"
    make.table("demo", "sales", "ext", options={"connector": "parquet", "path": str(path)})
    old = write_parquet(path, [1])
    job = submit(session, insert_plan("ext", overwrite=overwrite), sql="INSERT …")
    assert write_staging.entry(job, ident("ext"))["location"] == f"{path}/_tessera_staging_{job.id}"
    with django_capture_on_commit_callbacks(execute=True):
        assert run(job, [2]).status == "FINISHED"
    assert read_ids(path) == ([2] if overwrite else [1, 2])
    assert outside_ids(path) == ([2] if overwrite else [1, 2])  # the replaced file is gone
    assert not any(p.name.startswith("_tessera_staging_") for p in path.iterdir())
    # The manifest lists the table's files: the one there before (INSERT) and the job's.
    listed = manifest.read(path)
    assert listed is not None and listed.job == str(job.id)
    new = [p.name for p in path.iterdir() if p.name.startswith(f"tessera-{job.id}-")]
    assert len(new) == 1
    assert list(listed.entries) == sorted(new if overwrite else [old.name, *new])


def test_a_failed_external_insert_deletes_only_its_staging(session, make, storage):
    path = storage.external / "events"
    make.table("demo", "sales", "ext", options={"connector": "parquet", "path": str(path)})
    write_parquet(path, [1])
    job = submit(session, insert_plan("ext", overwrite=True), sql="INSERT OVERWRITE …")
    claim(job)
    write_targets(job, [2])
    fail(job)
    assert read_ids(path) == [1]
    assert not any(p.name.startswith("_tessera_staging_") for p in path.iterdir())


class RolledBack(Exception):
    """Stands for the database failing (or the process dying) right after these steps."""


def _external_table(make, storage, name: str = "ext", ids: tuple[int, ...] = (1,)) -> Path:
    path: Path = storage.external / name
    make.table("demo", "sales", name, options={"connector": "parquet", "path": str(path)})
    write_parquet(path, list(ids))
    return path


def _started(session, name: str, overwrite: bool, ids: list[int]) -> Job:
    job = submit(session, insert_plan(name, overwrite=overwrite), sql="INSERT …")
    claim(job)
    write_targets(job, ids)
    return job


@pytest.mark.parametrize("overwrite", [False, True])
def test_a_commit_stopped_after_renaming_data_in_is_cleaned_up(session, make, storage, overwrite):
    """The data renamed into the path, the manifest not swapped yet, then the transaction
    is gone: Tessera still reads the old rows; the clean-up deletes what was renamed in."""
    path = _external_table(make, storage)
    before = files_under(path)
    job = _started(session, "ext", overwrite, [2, 3])
    with pytest.raises(RolledBack), transaction.atomic():
        table = write_staging.table_row(ident("ext"), lock=True)
        target = external_commit.prepare_external(
            table, write_staging.entry(job, ident("ext")), str(job.id)
        )
        target.current, target.initial = external_commit._settled(
            path, str(job.id), every_directory=False
        )
        external_commit._move_in(target, str(job.id))
        raise RolledBack
    # The first commit wrote down what the path held before renaming anything into it.
    assert manifest.read(path) == manifest.Manifest(tuple(p.name for p in before if p.suffix))
    assert read_ids(path) == [1]
    assert outside_ids(path) == [1, 2, 3]  # plain Spark sees the renamed files already
    fail(job)
    assert event(job, "data_cleaned") == {"deleted": True}
    assert [p for p in files_under(path) if p.name != manifest.MANIFEST] == before
    assert read_ids(path) == outside_ids(path) == [1]


@pytest.mark.parametrize("overwrite", [False, True])
def test_a_commit_whose_transaction_fails_after_the_swap_is_undone(
    session, make, storage, overwrite, django_capture_on_commit_callbacks
):
    """The manifest swapped, then the database transaction rolls back (the job is not
    FINISHED): readers see the new rows until the clean-up puts the old manifest back."""
    path = _external_table(make, storage)
    first = _started(session, "ext", False, [2])
    with django_capture_on_commit_callbacks(execute=True):
        assert finish(first).status == "FINISHED"
    committed = manifest.read(path)
    before = files_under(path)
    job = _started(session, "ext", overwrite, [5, 6])
    with pytest.raises(RolledBack), transaction.atomic():
        commit.commit(job)
        raise RolledBack
    assert read_ids(path) == ([5, 6] if overwrite else [1, 2, 5, 6])
    assert manifest.read(path).job == str(job.id)  # type: ignore[union-attr]
    fail(job)
    assert manifest.read(path) == manifest.Manifest(committed.entries)  # type: ignore[union-attr]
    assert read_ids(path) == [1, 2] and files_under(path) == before


def test_the_next_commit_undoes_a_commit_that_did_not_finish(session, make, storage):
    path = _external_table(make, storage)
    lost = _started(session, "ext", True, [9])
    with pytest.raises(RolledBack), transaction.atomic():
        commit.commit(lost)
        raise RolledBack
    assert read_ids(path) == [9]
    # The lost job is still RUNNING (its worker is gone): the next commit undoes it first.
    nxt = _started(session, "ext", False, [4])
    assert finish(nxt).status == "FINISHED"
    assert read_ids(path) == [1, 4]
    listed = manifest.read(path)
    assert listed is not None and listed.job == str(nxt.id) and listed.initial
    assert not [p for p in path.rglob(f"tessera-{lost.id}*")]


def test_a_first_commit_undone_removes_the_manifest_and_the_ctas_directory(session, storage):
    path = storage.external / "fresh"
    job = submit(session, ctas_plan("ext", options={"connector": "parquet", "path": str(path)}))
    claim(job)
    write_targets(job, [1])
    with pytest.raises(RolledBack), transaction.atomic():
        commit.commit(job)
        raise RolledBack
    assert manifest.read(path) is not None
    fail(job)
    assert not path.exists()


def test_a_manifest_that_is_a_link_or_lists_a_way_out_is_refused(session, make, storage, tmp_path):
    path = _external_table(make, storage)
    outside = tmp_path / "elsewhere.json"
    outside.write_text('{"format": 1, "entries": []}')
    (path / manifest.MANIFEST).symlink_to(outside)
    with pytest.raises(manifest.ManifestError, match="symbolic link"):
        manifest.read(path)
    (path / manifest.MANIFEST).unlink()
    for entry in ("../x", "/etc/passwd", "k=1/../../x", "_hidden", "a/.b", "a*", "a\\b", ""):
        (path / manifest.MANIFEST).write_text(json.dumps({"format": 1, "entries": [entry]}))
        with pytest.raises(manifest.ManifestError):
            manifest.read(path)
    (path / manifest.MANIFEST).write_text('{"format": 1, "entries": ["k=a%3Ab/tessera-x"]}')
    assert manifest.read(path).entries == ("k=a%3Ab/tessera-x",)  # type: ignore[union-attr]


# --- statement sets --------------------------------------------------------------------------


@pytest.fixture
def two_tables(session, make) -> tuple[Table, Table]:
    make.table("demo", "sales", "a")
    make.table("demo", "sales", "b")
    return Table.objects.get(name="a"), Table.objects.get(name="b")


def test_a_statement_set_commits_every_target_in_one_transaction(session, two_tables):
    job = submit(session, set_plan(("a", False), ("b", True)), sql="EXECUTE STATEMENT SET …")
    assert sorted(reload(job).staging) == ["demo.sales.a", "demo.sales.b"]
    assert run(job, [5]).status == "FINISHED"
    committed = [e for e in events(job) if e == "data_committed"]
    assert len(committed) == 2
    for name in ("a", "b"):
        assert read_ids(Table.objects.get(name=name).location) == [5]


def test_a_statement_set_with_one_failing_target_commits_nothing(session, two_tables, storage):
    a, b = two_tables
    job = submit(session, set_plan(("a", False), ("b", False)), sql="EXECUTE STATEMENT SET …")
    claim(job)
    write_targets(job, [5])
    Table.objects.filter(pk=b.pk).delete()  # the second target is gone at commit
    ended = finish(job)
    assert ended.status == "FAILED" and (ended.error or {})["code"] == "NOT_FOUND"
    assert "data_committed" not in events(job)
    assert Table.objects.get(pk=a.pk).location == a.location
    assert read_ids(a.location) == []
    assert not staging_dir(job, "a").exists() and not staging_dir(job, "b").exists()


def test_a_statement_set_whose_worker_fails_cleans_every_target(session, two_tables):
    job = submit(session, set_plan(("a", False), ("b", False)), sql="EXECUTE STATEMENT SET …")
    claim(job)
    write_targets(job, [5])
    fail(job)
    assert event(job, "data_cleaned") == {"deleted": True}
    assert not staging_dir(job, "a").exists() and not staging_dir(job, "b").exists()
    for table in two_tables:
        assert Table.objects.get(pk=table.pk).location == table.location


# --- the guards ------------------------------------------------------------------------------


def test_clean_up_refuses_paths_outside_the_warehouse(session, tmp_path):
    outside = tmp_path / "precious"
    write_parquet(outside, [1])
    job = submit(session, ctas_plan("t"))
    key = "demo.sales.t"
    staging = reload(job).staging
    Job.objects.filter(pk=job.pk).update(staging={key: {**staging[key], "location": str(outside)}})
    Table.objects.filter(name="t").delete()
    assert commit.clean_up(job) is False
    assert read_ids(outside) == [1]


# --- through SQL: POST /sessions/{id}/statements → planner → hooks ---------------------------


def post_sql(alice_api, session: Session, sql: str, **extra: Any) -> dict[str, Any]:
    response = alice_api.post(f"{API}/sessions/{session.pk}/statements", {"sql": sql, **extra})
    assert response.status_code == 201, response.content
    return dict(response.json())


def test_ctas_in_sql_stages_a_table_that_queries_cannot_read_yet(session, alice_api):
    body = post_sql(alice_api, session, "CREATE TABLE t AS SELECT 1 AS id")
    assert body["kind"] == "ctas" and body["status"] == "CREATED"
    assert body["target"] == ident("t")
    table = alice_api.get(f"{TABLES}/t").json()
    assert table["status"] == "staged" and table["staged_by_job"] == body["id"]

    query = post_sql(alice_api, session, "SELECT * FROM t")
    assert query["status"] == "FAILED"
    assert query["error"]["code"] == "VALIDATION_ERROR"
    assert f"is being created by job {body['id']}" in query["error"]["message"]

    again = post_sql(alice_api, session, "CREATE TABLE IF NOT EXISTS t AS SELECT 2 AS id")
    assert again["status"] == "FINISHED"
    assert "skipped_exists" in events(reload_id(again["id"]))
    taken = post_sql(alice_api, session, "CREATE TABLE t AS SELECT 2 AS id")
    assert taken["status"] == "FAILED" and taken["error"]["code"] == "ALREADY_EXISTS"

    job = reload_id(body["id"])
    assert run(job, [1]).status == "FINISHED"
    assert alice_api.get(f"{TABLES}/t").json()["status"] == "active"


def test_insert_and_statement_set_in_sql_stage_every_target(session, alice_api, make):
    make.table("demo", "sales", "a")
    make.table("demo", "sales", "b")
    insert = post_sql(alice_api, session, "INSERT INTO a SELECT 1")
    assert insert["kind"] == "insert" and insert["status"] == "CREATED"
    assert list(reload_id(insert["id"]).staging) == ["demo.sales.a"]
    statement_set = post_sql(
        alice_api,
        session,
        "EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1; INSERT OVERWRITE b SELECT 2; END",
    )
    assert statement_set["kind"] == "statement_set" and statement_set["status"] == "CREATED"
    staging = reload_id(statement_set["id"]).staging
    assert {key: item["mode"] for key, item in staging.items()} == {
        "demo.sales.a": "insert",
        "demo.sales.b": "overwrite",
    }
    job = reload_id(statement_set["id"])
    assert run(job, [3]).status == "FINISHED"
    assert read_ids(Table.objects.get(name="b").location) == [3]


def reload_id(job_id: Any) -> Job:
    return Job.objects.select_related("user").get(pk=job_id)


def test_a_name_hidden_by_a_temporary_table_is_decided_by_the_catalog(
    session, alice_api, make, storage
):
    """The planner sees the session's temporary table, not the permanent one behind it: the
    stage table's creation finds the name taken (alone and in scripts)."""
    make.table("demo", "sales", "t")
    path = storage.external / "tmp"
    temporary = post_sql(
        alice_api,
        session,
        f"CREATE TEMPORARY TABLE t (id BIGINT) USING parquet OPTIONS ('path' = '{path}')",
    )
    assert temporary["status"] == "FINISHED", temporary["error"]

    plain = post_sql(alice_api, session, "CREATE TABLE t AS SELECT 1 AS id")
    assert plain["status"] == "FAILED" and plain["error"]["code"] == "ALREADY_EXISTS"
    assert plain["kind"] == "ctas" and plain["target"] == ident("t")
    skipped = post_sql(alice_api, session, "CREATE TABLE IF NOT EXISTS t AS SELECT 1 AS id")
    assert skipped["status"] == "FINISHED"
    assert events(reload_id(skipped["id"])) == ["created", "running", "skipped_exists", "finished"]

    script = post_sql(
        alice_api,
        session,
        "CREATE TABLE IF NOT EXISTS t AS SELECT 1 AS id; CREATE TABLE t AS SELECT 1 AS id; "
        "SHOW TABLES",
        script=True,
    )
    assert [job["status"] for job in script["jobs"]] == ["FINISHED", "FAILED", "CANCELED"]
    assert script["jobs"][1]["error"]["code"] == "ALREADY_EXISTS"
    assert list(Table.objects.values_list("name", "status")) == [("t", "active")]
    assert Table.objects.get(name="t").staged_by_job is None
