"""Ways around grants (issue 18, ADR 0011 §3.4 to §3.6, §7 "Hostile"), tried end to end.

Alice owns catalog ``gx``: database ``d`` with tables ``t`` (secret rows) and ``u``, and a
view ``v`` over ``t`` (the rows with ``id >= 2``) shared with Bob. Bob may use the catalog and
read the view, nothing else. Olga is an outsider.

- The web side (no worker: an accepted statement stays CREATED, a refused one FAILS before
  any Spark): a view's internal alias ``__tessera_rN`` named in every quoting, EXPLAIN
  through the view, GRANT / REVOKE / ALTER OWNER / SHOW GRANTS by non-managers and on hidden
  objects (answered exactly as missing ones), plans made for someone else and submitted by
  Bob (the commands check again), scrubbed errors.
- On a real worker: a stream after a REVOKE of SELECT on its source or of MODIFY on its
  target fails at its next batch and commits nothing more; a streaming SELECT stops
  showing rows; a pipeline's child statement is refused.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from django.contrib.auth.models import User

from audit.models import AuditEvent
from catalog import grants as catalog_grants
from catalog import services
from catalog.access import relation_securable
from catalog.models import Grant, Table
from engine import errors
from jobs.models import Job, Session
from sessions import statements
from tests.conftest import API, PASSWORD, client_for
from tests.grants_support import share
from tests.schemas import ID_SCHEMA as SCHEMA

# --- the web side -----------------------------------------------------------------------------


@pytest.fixture
def _no_worker(monkeypatch: Any, settings: Any, tmp_path: Any) -> None:
    """Accepted statements stay CREATED: nothing reaches the broker."""
    from webapp.celery import app

    settings.RESULTS_DIR = tmp_path / "results"
    monkeypatch.setattr(app, "send_task", lambda *args, **kwargs: None)


@pytest.fixture
def world(db: None, _no_worker: None) -> dict[str, Any]:
    users = {
        name: User.objects.create_user(name, password=PASSWORD) for name in ("alice", "bob", "olga")
    }
    alice = users["alice"]
    catalog = services.catalog_create(user=alice, name="gx", default_database="d")
    d = catalog.databases.get()
    for name in ("t", "u"):
        services.table_create(user=alice, database=d, name=name, schema=SCHEMA)
    services.view_create(
        user=alice,
        database=d,
        name="v",
        query="SELECT id FROM gx.d.t WHERE id >= 2",
        expanded_query="SELECT id FROM `gx`.`d`.`t` WHERE id >= 2",
        derived=SCHEMA,
    )
    share(catalog, ["USE"], user=users["bob"])
    share(
        Table.objects.select_related("database__catalog").get(name="v"),
        ["SELECT"],
        user=users["bob"],
    )
    return users


class Asker:
    def __init__(self, user: User) -> None:
        self.user = user
        self.api = client_for(user)
        response = self.api.post(f"{API}/sessions", {})
        assert response.status_code == 201, response.content
        self.session = response.json()["id"]

    def sql(self, text: str) -> dict[str, Any]:
        response = self.api.post(f"{API}/sessions/{self.session}/statements", {"sql": text})
        assert response.status_code == 201, response.content
        return dict(response.json())

    def refused(self, text: str, code: str | None = None) -> dict[str, Any]:
        job = self.sql(text)
        assert job["status"] == "FAILED", (text, job)
        if code is not None:
            assert job["error"]["code"] == code, (text, job["error"])
        return dict(job["error"])

    def ok(self, text: str) -> dict[str, Any]:
        job = self.sql(text)
        assert job["status"] in ("CREATED", "FINISHED"), (text, job)
        return job

    def rows(self, text: str) -> list[list[Any]]:
        job = self.sql(text)
        assert job["status"] == "FINISHED", (text, job)
        response = self.api.get(f"{API}/jobs/{job['id']}/result")
        assert response.status_code == 200, response.content
        return list(response.json()["rows"])


def test_bob_reads_the_view_not_the_table(world: dict[str, Any]) -> None:
    bob = Asker(world["bob"])
    accepted = bob.ok("SELECT * FROM gx.d.v")
    plan_access = Job.objects.get(pk=accepted["id"]).access
    assert {(a["identifier"][-1], a["privilege"], bool(a["via"])) for a in plan_access} >= {
        ("v", "SELECT", False),
        ("t", "SELECT", True),
    }
    refused = bob.refused("SELECT * FROM gx.d.t", "PERMISSION_DENIED")
    assert "You need SELECT on table `gx`.`d`.`t`" in refused["message"]


@pytest.mark.parametrize(
    "reference",
    [
        "__tessera_r1",
        "`__tessera_r1`",
        "__TESSERA_R1",
        "`__Tessera_R1`",
        "__tessera_r2",
        "gx.d.__tessera_r1",
        "`gx`.`d`.`__tessera_r1`",
        "`__tessera_r1` AS x",
    ],
)
def test_the_alias_of_a_view_base_cannot_be_named(world: dict[str, Any], reference: str) -> None:
    """The worker registers the view's table under an internal alias; naming it beside the
    view must not read the table."""
    bob = Asker(world["bob"])
    error = bob.refused(f"SELECT * FROM gx.d.v, {reference}")
    assert error["code"] != "INTERNAL_ERROR", error
    assert "`gx`.`d`.`t`" not in error["message"], error
    joined = bob.refused(f"SELECT * FROM gx.d.v JOIN {reference} ON true")
    assert "`gx`.`d`.`t`" not in joined["message"], joined


def test_explain_through_a_view_names_only_the_view(world: dict[str, Any]) -> None:
    """EXPLAIN prints paths and columns: through another owner's view over a table the
    invoker may not read, it is refused, naming the view."""
    bob = Asker(world["bob"])
    error = bob.refused("EXPLAIN SELECT * FROM gx.d.v", "PERMISSION_DENIED")
    assert "gx" in error["message"] and "`v`" in error["message"], error
    assert "`t`" not in error["message"], error
    alice = Asker(world["alice"])
    alice.ok("EXPLAIN SELECT * FROM gx.d.v")  # her own view over her own table


def test_grants_by_a_non_manager_are_refused(world: dict[str, Any]) -> None:
    bob = Asker(world["bob"])
    for text in (
        "GRANT SELECT ON TABLE gx.d.t TO USER bob",
        "GRANT SELECT ON VIEW gx.d.v TO USER olga",
        "REVOKE SELECT ON VIEW gx.d.v FROM USER bob",
        "ALTER VIEW gx.d.v OWNER TO USER bob",
        "GRANT ALL PRIVILEGES ON CATALOG gx TO USER bob",
    ):
        error = bob.refused(text, "PERMISSION_DENIED")
        assert "MANAGE" in error["message"] or "owner" in error["message"], (text, error)
    assert not Grant.objects.filter(user=world["olga"]).exists()
    assert Table.objects.get(name="v").owner == world["alice"]
    assert not AuditEvent.objects.filter(action__in=("grant", "revoke", "owner")).exists()


@pytest.mark.parametrize(
    ("template", "real", "twin"),
    [
        ("GRANT SELECT ON TABLE {} TO USER olga", "gx.d.t", "gx.d.tz"),
        ("GRANT USE ON CATALOG {} TO USER olga", "gx", "gz"),
        ("GRANT USE ON DATABASE {} TO USER olga", "gx.d", "gx.dz"),
        ("REVOKE SELECT ON VIEW {} FROM USER bob", "gx.d.v", "gx.d.vz"),
        ("ALTER TABLE {} OWNER TO USER olga", "gx.d.u", "gx.d.uz"),
        ("SHOW GRANTS ON TABLE {}", "gx.d.t", "gx.d.tz"),
    ],
)
def test_grant_statements_on_hidden_objects_answer_as_missing(
    world: dict[str, Any], template: str, real: str, twin: str
) -> None:
    olga = Asker(world["olga"])
    hidden = olga.refused(template.format(real))
    missing = olga.refused(template.format(twin))
    assert hidden["code"] == missing["code"] == "NOT_FOUND", (hidden, missing)
    last_real, last_twin = real.split(".")[-1], twin.split(".")[-1]
    assert hidden["message"] == missing["message"].replace(last_twin, last_real)


def test_grant_statements_answer_as_commands_do(world: dict[str, Any]) -> None:
    from django.contrib.auth.models import Group

    Group.objects.create(name="analysts")
    alice = Asker(world["alice"])
    granted = alice.rows("GRANT SELECT, MODIFY ON TABLE gx.d.u TO TEAM analysts")
    assert granted == [["Granted SELECT, MODIFY on table `gx`.`d`.`u` to team analysts."]]
    again = alice.rows("GRANT MODIFY ON gx.d.u TO TEAM analysts")
    assert again == [["Team analysts already holds MODIFY on table `gx`.`d`.`u`; nothing changed."]]
    alice.rows("GRANT SELECT ON DATABASE gx.d TO USER olga")
    job = alice.sql("SHOW GRANTS ON TABLE gx.d.u")
    response = alice.api.get(f"{API}/jobs/{job['id']}/result")
    assert [c["name"] for c in response.json()["columns"]] == [
        "principal",
        "principal_type",
        "privilege",
        "object_type",
        "object_name",
        "inherited_from",
    ]
    rows = {tuple(row) for row in response.json()["rows"]}
    assert ("analysts", "team", "SELECT", "table", "`gx`.`d`.`u`", None) in rows
    assert ("analysts", "team", "MODIFY", "table", "`gx`.`d`.`u`", None) in rows
    inherited = [row for row in rows if row[0] == "olga"]
    assert inherited and inherited[0][2] == "SELECT" and inherited[0][5] == "database `gx`.`d`"
    assert alice.rows("REVOKE MODIFY ON TABLE gx.d.u FROM TEAM analysts") == [
        ["Revoked MODIFY on table `gx`.`d`.`u` from team analysts."]
    ]
    assert alice.rows("ALTER TABLE gx.d.u OWNER TO USER bob") == [
        ["Table `gx`.`d`.`u` is now owned by bob."]
    ]
    assert Table.objects.get(name="u").owner == world["bob"]
    actions = list(
        AuditEvent.objects.exclude(object_kind="token")
        .exclude(action__in=("create", "alter"))
        .order_by("id")
        .values_list("action", flat=True)
    )
    assert actions == ["grant", "grant", "revoke", "owner"], actions


def test_show_grants_without_manage_lists_only_ones_own(world: dict[str, Any]) -> None:
    share(Table.objects.get(name="v"), ["SELECT"], user=world["olga"])
    bob = Asker(world["bob"])
    rows = bob.rows("SHOW GRANTS ON VIEW gx.d.v")
    assert {(r[0], r[2]) for r in rows} == {("bob", "SELECT")}, rows
    everything = Asker(world["alice"]).rows("SHOW GRANTS ON VIEW gx.d.v")
    assert {(r[0], r[2]) for r in everything} >= {("bob", "SELECT"), ("olga", "SELECT")}


def test_a_grant_reaches_the_grantee_at_their_next_statement(world: dict[str, Any]) -> None:
    alice, olga = Asker(world["alice"]), Asker(world["olga"])
    assert olga.refused("SELECT * FROM gx.d.u", "NOT_FOUND")
    alice.rows("GRANT SELECT ON TABLE gx.d.u TO USER olga")
    olga.ok("SELECT * FROM gx.d.u")
    alice.rows("REVOKE SELECT ON TABLE gx.d.u FROM USER olga")
    assert olga.refused("SELECT * FROM gx.d.u", "NOT_FOUND")
    actions = list(
        AuditEvent.objects.exclude(object_kind="token")
        .exclude(action__in=("create", "alter"))
        .order_by("id")
        .values_list("action", flat=True)
    )
    assert actions.count("grant") == 1 and actions.count("revoke") == 1
    assert "denied" not in actions  # a hidden table is not a refusal


def test_a_refusal_is_audited_as_denied(world: dict[str, Any]) -> None:
    bob = Asker(world["bob"])
    job = bob.sql("SELECT * FROM gx.d.t")
    event = AuditEvent.objects.get(action="denied", job_id=job["id"])
    assert event.actor_id == world["bob"].pk and event.privileges == ["SELECT"]
    assert event.securable_key == f"relation:{Table.objects.get(name='t').pk}"


def hand_job(asker: Asker, owner: User, sql: str) -> Job:
    """``sql`` planned for ``owner`` (who may do it), submitted in ``asker``'s session: the
    planner never judged it for ``asker``, so only the commands' own checks stand."""
    session = Session.objects.create(user=owner, idle_timeout_seconds=3600, last_used_at=_now())
    plan = statements.plan_sql(session, sql)
    mine = Session.objects.get(pk=asker.session)
    return statements.submit_plan(session=mine, sql=sql, plan=plan)


def _now() -> Any:
    from django.utils import timezone

    return timezone.now()


@pytest.mark.parametrize(
    "sql",
    [
        "DESCRIBE gx.d.t",
        "SHOW CREATE TABLE gx.d.t",
        "DESCRIBE HISTORY gx.d.t",
        "SHOW TABLES IN gx.d",
        "USE gx.d",
        "DROP TABLE gx.d.t",
        "DROP VIEW gx.d.v",
        "GRANT SELECT ON TABLE gx.d.t TO USER olga",
        "ALTER TABLE gx.d.t OWNER TO USER olga",
    ],
)
def test_commands_check_again_what_the_planner_checked(world: dict[str, Any], sql: str) -> None:
    olga = Asker(world["olga"])
    job = hand_job(olga, world["alice"], sql)
    assert job.status == "FAILED", (sql, job.status)
    assert job.error is not None and job.error["code"] in ("NOT_FOUND", "PERMISSION_DENIED")
    assert job.result is None
    assert Table.objects.filter(name__in=("t", "v"), owner=world["alice"]).count() == 2
    assert not Grant.objects.filter(user=world["olga"]).exists()


def test_a_temporary_table_over_files_needs_read_files_again(
    world: dict[str, Any], settings: Any
) -> None:
    """A plan made for an admin declares a temporary table over a storage root; run as Bob,
    who holds no READ FILES there, the command refuses it."""
    settings.TESSERA_READ_FILES_FOR = "admins"
    root = Path(settings.TESSERA_STORAGE_ROOTS[0])
    (root / "gx-files").mkdir(parents=True, exist_ok=True)
    admin = User.objects.create_user("root", password=PASSWORD, is_superuser=True)
    bob = Asker(world["bob"])
    sql = (
        f"CREATE TEMPORARY TABLE gx.d.files (id BIGINT) "
        f"WITH ('connector' = 'parquet', 'path' = '{root / 'gx-files'}')"
    )
    refused = bob.refused(sql, "PERMISSION_DENIED")  # the planner
    assert "READ FILES" in refused["message"], refused
    job = hand_job(bob, admin, sql)  # the command, for a plan the planner made for an admin
    assert job.status == "FAILED" and job.error is not None, job.status
    assert job.error["code"] == "PERMISSION_DENIED" and "READ FILES" in job.error["message"]
    settings.TESSERA_READ_FILES_FOR = "everyone"
    assert hand_job(bob, admin, sql).status == "FINISHED"


def test_a_write_conflict_names_only_a_table_the_writer_may_see(
    world: dict[str, Any], settings: Any
) -> None:
    """A row stored before paths could not overlap: Bob's external table lies inside the
    path of Alice's, which he may not see. His INSERT is refused without naming hers."""
    root = Path(settings.TESSERA_STORAGE_ROOTS[0]) / f"wc-{uuid.uuid4().hex[:8]}"
    (root / "inner").mkdir(parents=True)
    bob = world["bob"]
    mine = services.catalog_create(user=bob, name="bx", default_database="d")
    external = {"connector": "parquet", "path": str(root / "inner")}
    services.table_create(
        user=bob, database=mine.databases.get(), name="ext", schema=SCHEMA, options=external
    )
    hers = Table.objects.get(database__catalog__name="gx", name="u")
    from core import locations

    Table.objects.filter(pk=hers.pk).update(
        location="",
        options={"connector": "parquet", "path": str(root)},
        data_path=locations.comparable(str(root)),
        data_real_path=locations.comparable(str(root.resolve())),
    )
    error = Asker(bob).refused("INSERT INTO bx.d.ext VALUES (1)", "FORBIDDEN_SQL")
    assert "another table" in error["message"], error
    assert "`u`" not in error["message"] and "`gx`" not in error["message"], error
    assert "table" not in (error.get("details") or {}).get("overlaps", {}), error
    share(hers, ["SELECT"], user=bob)  # once he may see it, it is named
    named = Asker(bob).refused("INSERT INTO bx.d.ext VALUES (1)", "FORBIDDEN_SQL")
    assert "`gx`.`d`.`u`" in named["message"], named


def test_show_lists_only_what_the_user_may_see(world: dict[str, Any]) -> None:
    bob, olga = Asker(world["bob"]), Asker(world["olga"])
    assert ["gx"] in bob.rows("SHOW CATALOGS")
    assert ["gx"] not in olga.rows("SHOW CATALOGS")
    assert [r[1] for r in bob.rows("SHOW VIEWS IN gx.d")] == ["v"]
    assert bob.rows("SHOW TABLES IN gx.d") == []
    # A plan made for alice, run as olga: the command answers as the planner answers olga
    # about a catalog that does not exist.
    hidden = hand_job(olga, world["alice"], "SHOW TABLES IN gx.d")
    missing = olga.refused("SHOW TABLES IN gz.d", "NOT_FOUND")
    assert hidden.error is not None and hidden.error["code"] == "NOT_FOUND"
    assert hidden.error["message"] == missing["message"].replace("gz", "gx")


def test_errors_name_a_table_read_through_a_view_by_the_view(world: dict[str, Any]) -> None:
    bob = Asker(world["bob"])
    job = Job.objects.get(pk=bob.ok("SELECT * FROM gx.d.v")["id"])
    plan = job.typed_plan
    assert plan is not None
    t = Table.objects.get(name="t")
    base = next(r for r in plan.relations if r.identifier[-1] == "t")
    location = base.path or t.location or "/srv/warehouse/gx/d/t"
    found = errors.plan_locations(plan, {}, list(job.access))
    message = errors.scrub_paths(f"Encountered error while reading file {location}/part-0.", found)
    assert "gx.d.t" not in message and location not in message
    assert "<location of a table read by view gx.d.v>" in message
    assert relation_securable(t).key in {a["securable_key"] for a in job.access}


# --- on a real worker ------------------------------------------------------------------------

F = TypeVar("F", bound=Callable[..., Any])


def on_worker(test: F) -> F:
    """A test that runs statements on the shared live worker (rows must be committed)."""
    for mark in (
        pytest.mark.usefixtures("security_worker"),
        pytest.mark.django_db(transaction=True),
        pytest.mark.slow,
        pytest.mark.spark,
    ):
        test = mark(test)
    return test


def _principal(user: User) -> catalog_grants.Principal:
    return catalog_grants.find_principal("user", user.get_username())


def _revoke(owner: User, row: Table, privilege: str, user: User) -> None:
    catalog_grants.revoke(
        user=owner,
        securable=relation_securable(row),
        privileges=[privilege],
        principal=_principal(user),
    )


class Streams:
    """Two users, alice's catalog with a source table over files and a target table, and the
    streams a test started (cancelled at its end)."""

    def __init__(self) -> None:
        from django.conf import settings

        from tests.worker_helpers import Pipeline

        self.alice, self.bob = Pipeline("alice"), Pipeline("bob")
        self.catalog = f"g{uuid.uuid4().hex[:10]}"
        services.catalog_create(user=self.alice.user, name=self.catalog, default_database="d")
        self.source = Path(settings.TESSERA_STORAGE_ROOTS[0]) / f"src-{uuid.uuid4().hex[:10]}"
        self.source.mkdir(parents=True)
        self.write(0, range(0, 10))
        self.alice.ok(
            f"CREATE TABLE {self.catalog}.d.src (id BIGINT, name STRING) "
            f"WITH ('connector' = 'parquet', 'path' = '{self.source}')"
        )
        self.alice.ok(f"CREATE TABLE {self.catalog}.d.m (id BIGINT, name STRING)")
        share(self.catalog, ["USE"], user=self.bob.user)
        self.started: list[str] = []

    def write(self, index: int, ids: range) -> None:
        import pyarrow as pa  # type: ignore[import-untyped]

        from tests.worker_helpers import write_file

        table = pa.table({"id": list(ids), "name": [f"n{i}" for i in ids]})
        write_file(self.source, f"f{index}", table)

    def row(self, name: str) -> Table:
        return Table.objects.select_related("database__catalog").get(
            database__catalog__name=self.catalog, name=name
        )

    def start(self, sql: str) -> str:
        from tests.worker_helpers import start_stream

        return start_stream(self.bob, self.started, sql)

    def stop(self) -> None:
        from tests.worker_helpers import TERMINAL, api_for

        for job_id in self.started:
            job = Job.objects.select_related("user").get(pk=job_id)
            if job.status not in TERMINAL:
                api_for(job.user).post(f"{API}/jobs/{job_id}/cancel")


@pytest.fixture
def streams(security_worker: Any) -> Iterator[Streams]:
    made = Streams()
    yield made
    made.stop()


def _failed_at_next_batch(s: Streams, job_id: str, index: int) -> dict[str, Any]:
    from tests.worker_helpers import wait_job

    s.write(index, range(index * 10, index * 10 + 10))
    job = wait_job(s.bob.api, job_id, {"FAILED"}, timeout=90)
    return dict(job["error"])


@pytest.mark.parametrize("revoked", ["source SELECT", "target MODIFY"])
@on_worker
def test_a_stream_fails_at_its_next_batch_after_a_revoke(streams: Streams, revoked: str) -> None:
    from tests.waiting import wait_until
    from tests.worker_helpers import count_of, state_of

    s, c = streams, streams.catalog
    share(s.row("src"), ["SELECT"], user=s.bob.user)
    share(s.row("m"), ["MODIFY"], user=s.bob.user)
    job_id = s.start(f"INSERT INTO {c}.d.m SELECT id, name FROM {c}.d.src")
    wait_until(lambda: count_of(c, "m") == 10, 90, 0.1, lambda: state_of(job_id))
    writes = AuditEvent.objects.filter(action="write", job_id=job_id)
    assert writes.count() == 1  # the stream's first committed batch only
    versions = s.row("m").versions.count()
    if revoked == "source SELECT":
        _revoke(s.alice.user, s.row("src"), "SELECT", s.bob.user)
    else:
        _revoke(s.alice.user, s.row("m"), "MODIFY", s.bob.user)
    error = _failed_at_next_batch(s, job_id, 1)
    assert error["code"] == "PERMISSION_DENIED", error
    name = "src" if revoked == "source SELECT" else "m"
    privilege = "SELECT" if revoked == "source SELECT" else "MODIFY"
    assert f"`{c}`.`d`.`{name}`" in error["message"] and privilege in error["message"], error
    assert count_of(c, "m") == 10
    assert s.row("m").versions.count() == versions  # no version after the revoke
    assert writes.count() == 1


@on_worker
def test_a_stream_through_a_view_stops_when_its_owner_loses_the_table(streams: Streams) -> None:
    """Definer rights, re-decided every batch: the view is Bob's to read; its table is read
    with its owner's rights, which end when the view's new owner loses the table."""
    from tests.waiting import wait_until
    from tests.worker_helpers import count_of, state_of

    s, c = streams, streams.catalog
    s.alice.ok(f"CREATE VIEW {c}.d.sv AS SELECT id, name FROM {c}.d.src")
    share(s.row("sv"), ["SELECT"], user=s.bob.user)
    share(s.row("m"), ["MODIFY"], user=s.bob.user)
    job_id = s.start(f"INSERT INTO {c}.d.m SELECT id, name FROM {c}.d.sv")
    wait_until(lambda: count_of(c, "m") == 10, 90, 0.1, lambda: state_of(job_id))
    carol = User.objects.create_user(f"carol{uuid.uuid4().hex[:6]}", password=PASSWORD)
    # A view is handed only to whom may read what it reads (ADR 0012): carol may, until the
    # revoke, which the next batch sees.
    share(s.row("src"), ["SELECT"], user=carol)
    catalog_grants.transfer_owner(user=s.alice.user, row=s.row("sv"), new_owner=carol)
    _revoke(s.alice.user, s.row("src"), "SELECT", carol)
    error = _failed_at_next_batch(s, job_id, 1)
    assert error["code"] == "PERMISSION_DENIED", error
    assert f"its owner {carol.username} needs SELECT" in error["message"], error
    assert count_of(c, "m") == 10


@on_worker
def test_a_streaming_select_stops_showing_rows_after_a_revoke(streams: Streams) -> None:
    from tests.waiting import wait_until
    from tests.worker_helpers import wait_job

    s, c = streams, streams.catalog
    share(s.row("src"), ["SELECT"], user=s.bob.user)
    job_id = s.start(f"SELECT id, name FROM {c}.d.src")

    def shown() -> int:
        response = s.bob.api.get(f"{API}/jobs/{job_id}/result")
        return len(response.json()["rows"]) if response.status_code == 200 else 0

    wait_until(lambda: shown() == 10, 90, 0.2, "the first batch's rows")
    _revoke(s.alice.user, s.row("src"), "SELECT", s.bob.user)
    s.write(1, range(10, 20))
    job = wait_job(s.bob.api, job_id, {"FAILED"}, timeout=90)
    assert job["error"]["code"] == "PERMISSION_DENIED", job["error"]
    response = s.bob.api.get(f"{API}/jobs/{job_id}/result")
    if response.status_code == 200:  # what was shown before the revoke, nothing after
        assert all(row[0] < 10 for row in response.json()["rows"]), response.json()


@on_worker
def test_a_pipeline_child_statement_is_refused(settings: Any) -> None:
    from tests.worker_helpers import Pipeline

    settings.TESSERA_PIPELINE_PACKAGES = ("tessera_pipelines", "tests.pipelines")
    alice, bob = Pipeline("alice"), Pipeline("bob")
    theirs, mine = f"g{uuid.uuid4().hex[:10]}", f"b{uuid.uuid4().hex[:10]}"
    services.catalog_create(user=alice.user, name=theirs, default_database="d")
    services.catalog_create(user=bob.user, name=mine, default_database="d")
    alice.ok(f"CREATE TABLE {theirs}.d.secret AS SELECT 1 AS id")
    share(theirs, ["USE"], user=bob.user)  # bob sees the database, not the table
    job = bob.run(
        f"EXECUTE PIPELINE 'tests.pipelines.cases:temporary' WITH "
        f"('view' = '{theirs}.d.secret', 'target' = '{mine}.d.copy')"
    )
    assert job["status"] == "FAILED", job
    children = Job.objects.filter(parent_id=uuid.UUID(job["id"]))
    assert [(child.kind, child.status) for child in children] == [("ctas", "FAILED")]
    child = children.get()
    assert child.error is not None and child.error["code"] == "PERMISSION_DENIED", child.error
    assert "secret" in child.error["message"] and "SELECT" in child.error["message"]
    assert not Table.objects.filter(database__catalog__name=mine, name="copy").exists()
