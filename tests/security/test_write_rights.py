"""Writes need the right: INSERT INTO|OVERWRITE and statement sets need ``MODIFY`` on every
target (issue 18: the table's owner, its database's or catalog's owner, an admin, or a grant
of MODIFY on the table, its database or its catalog, to the user or a team of theirs) — at
planning, and again on the worker right before the commit, inside the FINISHED transition,
with what the user holds loaded afresh.

Reproduced attack: an ordinary user inserted into and overwrote tables they neither owned
nor could change (DROP and PATCH were refused). Every refusal here is checked to leave the
table exactly as it was (same data directory, same files, same rows) and the job's staging
cleaned; the commit-time check is exercised with plans that bypass the planner (made for
the owner, submitted by someone else).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from audit.models import AuditEvent
from catalog import services as catalog_services
from catalog.models import Catalog, Database, Grant, Table
from jobs.models import Job, Session
from sessions import statements as job_services
from tests.grants_support import share
from tests.security.boundary import Actor, error_of, files_under, refused, storage_root, uid
from tests.waiting import wait_until
from tests.worker_helpers import events, submit_plan, wait_for_status

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("security_worker"),
]


class Tables:
    """alice's catalog with a managed table ``m`` and an external table ``e`` (2 rows each),
    and bob's own managed table ``mine`` in it: alice gave him CREATE on the database (so he
    sees it, and the names in it)."""

    def __init__(self, alice_sql: Actor, bob: Actor) -> None:
        self.catalog = f"w{uid()}"
        catalog = catalog_services.catalog_create(
            user=alice_sql.user, name=self.catalog, default_database="d"
        )
        share(catalog.databases.get(), ["CREATE"], user=bob.user)
        self.external = storage_root() / f"e-{uid()}"
        c = self.catalog
        alice_sql.ok(
            f"CREATE TABLE {c}.d.m USING parquet AS SELECT * FROM VALUES (1), (2) AS v(id)"
        )
        alice_sql.ok(
            f"CREATE TABLE {c}.d.e WITH ('connector' = 'parquet', 'path' = '{self.external}') "
            "AS SELECT * FROM VALUES (1), (2) AS v(id)"
        )
        bob.ok(f"CREATE TABLE {c}.d.mine USING parquet AS SELECT * FROM VALUES (7) AS v(id)")

    def name(self, table: str) -> str:
        return f"{self.catalog}.d.{table}"

    def shown(self, table: str) -> str:
        return f"`{self.catalog}`.`d`.`{table}`"

    def row(self, table: str) -> Table:
        return Table.objects.get(database__catalog__name=self.catalog, name=table)

    def state(self) -> dict[str, Any]:
        """What must not change: each table's data directory and the files in it."""
        result: dict[str, Any] = {}
        for table in ("m", "e", "mine"):
            row = self.row(table)
            where = Path(row.location) if row.managed else Path(row.options["path"])
            result[table] = (row.location, row.options, sorted(files_under(where)))
        return result

    def warehouse_dirs(self) -> set[str]:
        from django.conf import settings

        root = Path(settings.WAREHOUSE_DIR) / self.catalog / "d"
        return {p.name for p in root.iterdir()} if root.is_dir() else set()


@pytest.fixture
def bob() -> Actor:
    return Actor("bob")


@pytest.fixture
def tables(alice_sql: Actor, bob: Actor) -> Tables:
    return Tables(alice_sql, bob)


def _ids(actor: Actor, tables: Tables, table: str) -> list[int]:
    return sorted(row[0] for row in actor.rows(f"SELECT id FROM {tables.name(table)}"))


# --- at planning -------------------------------------------------------------------------------


def _forbidden_statements(t: Tables) -> dict[str, tuple[str, str]]:
    """statement -> the table its refusal must name."""
    c = t.catalog
    return {
        "insert into managed": (f"INSERT INTO {c}.d.m SELECT 9", "m"),
        "overwrite managed": (f"INSERT OVERWRITE {c}.d.m SELECT 9", "m"),
        "insert into external": (f"INSERT INTO {c}.d.e SELECT 9", "e"),
        "overwrite external with TABLE": (f"INSERT OVERWRITE TABLE {c}.d.e SELECT 9", "e"),
        "column list": (f"INSERT INTO {c}.d.m (id) SELECT 9", "m"),
        "upper-case name": (f"INSERT INTO {c.upper()}.D.M SELECT 9", "m"),
        "backticks": (f"INSERT INTO `{c}`.`d`.`m` VALUES (9)", "m"),
        "statement set, one forbidden": (
            f"EXECUTE STATEMENT SET BEGIN INSERT INTO {c}.d.mine SELECT 8; "
            f"INSERT OVERWRITE {c}.d.m SELECT 9; END",
            "m",
        ),
        "statement set, forbidden first": (
            f"EXECUTE STATEMENT SET BEGIN INSERT INTO {c}.d.e SELECT 8; "
            f"INSERT INTO {c}.d.mine SELECT 9; END",
            "e",
        ),
    }


def test_writes_into_other_users_tables_are_refused_at_planning(alice_sql, bob, tables) -> None:
    before = tables.state()
    dirs = tables.warehouse_dirs()
    for what, (sql, table) in _forbidden_statements(tables).items():
        job = bob.run(sql)
        error = refused(bob, job, "PERMISSION_DENIED", tables.shown(table))
        assert f"You need MODIFY on table {tables.shown(table)}" in error["message"], (what, error)
        assert error["details"]["privilege"] == "MODIFY", error
        assert Job.objects.get(pk=job["id"]).staging in ({}, None), what
    assert tables.state() == before
    assert tables.warehouse_dirs() == dirs  # no staging directory was ever made
    assert _ids(alice_sql, tables, "m") == [1, 2]
    assert _ids(alice_sql, tables, "e") == [1, 2]
    assert _ids(bob, tables, "mine") == [7]  # the allowed half of a set did not run either


def test_use_then_insert_is_refused_too(bob, tables) -> None:
    before = tables.state()
    bob.ok(f"USE {tables.catalog}.d")
    refused(bob, bob.run("INSERT INTO m SELECT 9"), "PERMISSION_DENIED", tables.shown("m"))
    assert tables.state() == before


def test_owners_admins_and_modify_grantees_may_write(alice_sql, bob, tables) -> None:
    alice_sql.ok(f"INSERT INTO {tables.name('m')} SELECT 3")
    assert _ids(alice_sql, tables, "m") == [1, 2, 3]
    # carol owns another catalog in which alice made a table: carol may write it, and so
    # may the owner of its database.
    carol, dora = Actor("carol"), Actor("dora")
    theirs = f"w{uid()}"
    catalog = catalog_services.catalog_create(user=carol.user, name=theirs, default_database="d")
    share(catalog, ["CREATE"], user=alice_sql.user)
    alice_sql.ok(f"CREATE TABLE {theirs}.d.t USING parquet AS SELECT 1 AS id")
    carol.ok(f"INSERT OVERWRITE {theirs}.d.t SELECT 5")
    assert carol.rows(f"SELECT id FROM {theirs}.d.t") == [[5]]
    Database.objects.filter(catalog=catalog, name="d").update(owner=dora.user)
    dora.ok(f"INSERT INTO {theirs}.d.t SELECT 6")
    assert sorted(r[0] for r in carol.rows(f"SELECT id FROM {theirs}.d.t")) == [5, 6]
    assert error_of_run(bob, f"INSERT INTO {theirs}.d.t SELECT 6")["code"] == "NOT_FOUND"
    admin = Actor("root", admin=True)
    admin.ok(f"INSERT INTO {tables.name('e')} SELECT 4")
    assert _ids(alice_sql, tables, "e") == [1, 2, 4]
    # A table bob created is his: he may write it.
    bob.ok(f"INSERT INTO {tables.name('mine')} SELECT 8")
    assert _ids(bob, tables, "mine") == [7, 8]


def test_modify_granted_to_a_team_or_inherited_lets_a_user_write(alice_sql, bob, tables) -> None:
    from django.contrib.auth.models import Group

    writers = Group.objects.create(name=f"writers{uid()}")
    bob.user.groups.add(writers)
    m = tables.row("m")
    share(m, ["SELECT"], team=writers.name)  # reading is not writing
    refused(bob, bob.run(f"INSERT INTO {tables.name('m')} SELECT 9"), "PERMISSION_DENIED")
    share(m, ["MODIFY"], team=writers.name)
    bob.ok(f"INSERT INTO {tables.name('m')} SELECT 9")
    assert _ids(alice_sql, tables, "m") == [1, 2, 9]
    # MODIFY on the database passes down to every table in it.
    refused(bob, bob.run(f"INSERT INTO {tables.name('e')} SELECT 9"), "PERMISSION_DENIED")
    share(m.database, ["MODIFY"], user=bob.user)
    bob.ok(f"INSERT INTO {tables.name('e')} SELECT 9")
    assert _ids(alice_sql, tables, "e") == [1, 2, 9]


def error_of_run(actor: Actor, sql: str) -> dict[str, Any]:
    job = actor.run(sql)
    assert job["status"] == "FAILED", job
    return dict(job["error"])


# --- on the worker, at the commit ---------------------------------------------------------------


def _hand_made(owner: Actor, intruder: Actor, sql: str) -> Job:
    """The owner's plan of ``sql``, submitted in the intruder's session: the planner never
    judged it for the intruder, so only the commit-time check stands in the way."""
    owner_session = Session.objects.get(pk=owner.session_id)
    plan = job_services.plan_sql(owner_session, sql)
    job = submit_plan(intruder.user, plan, Session.objects.get(pk=intruder.session_id), sql)
    return wait_for_status(job.id, {"FINISHED", "FAILED", "CANCELED"}, 120)


def _staging_gone(job: Job) -> None:
    # The clean-up hook runs right after the FAILED transition: wait for its event.
    wait_until(lambda: "data_cleaned" in events(job.pk), 30, message="the clean-up")
    staging = Job.objects.get(pk=job.pk).staging or {}
    assert staging, "the job staged its targets"
    for entry in staging.values():
        assert not Path(entry["location"]).exists(), entry


@pytest.mark.parametrize(
    ("what", "template", "table"),
    [
        ("insert into managed", "INSERT INTO {c}.d.m SELECT 9", "m"),
        ("overwrite managed", "INSERT OVERWRITE {c}.d.m SELECT 9", "m"),
        ("insert into external", "INSERT INTO {c}.d.e SELECT 9", "e"),
        ("overwrite external", "INSERT OVERWRITE {c}.d.e SELECT 9", "e"),
    ],
)
def test_hand_made_write_is_refused_at_commit(
    alice_sql, bob, tables, what, template, table
) -> None:
    before = tables.state()
    job = _hand_made(alice_sql, bob, template.format(c=tables.catalog))
    assert job.status == "FAILED", (what, job.error)
    assert error_of(job)["code"] == "PERMISSION_DENIED", job.error
    assert tables.shown(table) in error_of(job)["message"]
    assert "data_written" in events(job.pk)  # the worker wrote its staging: the commit refused
    assert "data_committed" not in events(job.pk)
    _staging_gone(job)
    assert tables.state() == before
    assert _ids(alice_sql, tables, table) == [1, 2]


def test_hand_made_statement_set_with_one_forbidden_target_commits_nothing(
    alice_sql, bob, tables
) -> None:
    before = tables.state()
    c = tables.catalog
    # Planned for an admin (who may write both), submitted by bob who owns only `mine`.
    admin = Actor("root", admin=True)
    sql = (
        f"EXECUTE STATEMENT SET BEGIN INSERT INTO {c}.d.mine SELECT 8; "
        f"INSERT OVERWRITE {c}.d.e SELECT 9; INSERT INTO {c}.d.m SELECT 9; END"
    )
    job = _hand_made(admin, bob, sql)
    assert job.status == "FAILED", job.error
    assert error_of(job)["code"] == "PERMISSION_DENIED", job.error
    assert "data_committed" not in events(job.pk)
    _staging_gone(job)
    assert tables.state() == before
    assert _ids(bob, tables, "mine") == [7]
    assert _ids(alice_sql, tables, "e") == [1, 2]


def test_rights_lost_while_the_job_ran_are_checked_at_commit(alice_sql, bob, tables) -> None:
    """bob owned the catalog when he submitted; by the commit he no longer does."""

    Catalog.objects.filter(name=tables.catalog).update(owner=bob.user)
    session = Session.objects.get(pk=bob.session_id)
    sql = f"INSERT INTO {tables.name('m')} SELECT 9"
    plan = job_services.plan_sql(session, sql)  # allowed now: bob owns the catalog
    Catalog.objects.filter(name=tables.catalog).update(owner=alice_sql.user)
    before = tables.state()
    job = wait_for_status(
        submit_plan(bob.user, plan, session, sql).id, {"FINISHED", "FAILED", "CANCELED"}, 120
    )
    assert job.status == "FAILED" and error_of(job)["code"] == "PERMISSION_DENIED", job.error
    _staging_gone(job)
    assert tables.state() == before


def test_a_revoke_of_modify_while_the_job_ran_is_checked_at_commit(alice_sql, bob, tables) -> None:
    """bob held MODIFY (a grant) when he submitted; alice revoked it before the commit."""
    m = tables.row("m")
    share(m, ["MODIFY"], user=bob.user)
    session = Session.objects.get(pk=bob.session_id)
    sql = f"INSERT INTO {tables.name('m')} SELECT 9"
    plan = job_services.plan_sql(session, sql)  # allowed now: bob holds MODIFY
    Grant.objects.filter(securable_key=f"relation:{m.pk}", privilege="MODIFY").delete()
    before = tables.state()
    job = wait_for_status(
        submit_plan(bob.user, plan, session, sql).id, {"FINISHED", "FAILED", "CANCELED"}, 120
    )
    assert job.status == "FAILED", job.error
    assert error_of(job)["code"] == "PERMISSION_DENIED", job.error
    assert f"You need MODIFY on table {tables.shown('m')}" in error_of(job)["message"]
    assert "data_committed" not in events(job.pk)
    _staging_gone(job)
    assert tables.state() == before
    assert not AuditEvent.objects.filter(action="write", job_id=job.pk).exists()


def test_a_commit_records_who_wrote_which_table(alice_sql, tables) -> None:
    job = alice_sql.ok(f"INSERT INTO {tables.name('m')} SELECT 3")
    written = AuditEvent.objects.get(action="write", job_id=job["id"])
    assert written.object == [tables.catalog, "d", "m"] and written.actor_id == alice_sql.user.pk
    assert written.securable_key == f"relation:{tables.row('m').pk}"
    assert written.detail == {"mode": "insert"}
