"""The jobs side of grants without Spark (issue 18, ADR 0011 §3.3 to §3.5, §5): what the planner's
reader answers, the re-check of a running job's reads (``catalog.access.recheck_reads``), the
commit's MODIFY check, the audit's access events (``jobs/access_log.py``), and the names
scrubbed Spark errors give to tables read through a view.

Alice owns catalog ``ja`` (database ``d``: tables ``t`` and ``u``, view ``v`` over ``t``);
Bob is given what each test says, and nothing else.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from audit.models import AuditEvent
from catalog import access as catalog_access
from catalog import services
from catalog.models import Grant, Table
from core.errors import NotFound, PermissionDenied
from core.identifiers import ObjectIdentifier
from core.planner.plan import AccessPlan
from core.privileges import Kind, Privilege
from engine import errors
from jobs import access_log
from jobs.models import Job
from sessions.catalog_reader import DjangoCatalogReader
from tabledata import commit
from tests.grants_support import share
from tests.schemas import ID_SCHEMA as SCHEMA

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(alice: User, bob: User) -> dict[str, Any]:
    catalog = services.catalog_create(user=alice, name="ja", default_database="d")
    d = catalog.databases.get()
    t = services.table_create(user=alice, database=d, name="t", schema=SCHEMA)
    u = services.table_create(user=alice, database=d, name="u", schema=SCHEMA)
    v = services.view_create(
        user=alice,
        database=d,
        name="v",
        query="SELECT id FROM ja.d.t",
        expanded_query="SELECT id FROM `ja`.`d`.`t`",
        derived=SCHEMA,
    )
    Table.objects.filter(pk__in=[t.pk, u.pk, v.pk]).update(owner=alice)
    rows = {r.name: r for r in Table.objects.select_related("database__catalog", "owner")}
    return {"catalog": catalog, "database": d, **rows}


def read(row: Table, via: Table | None = None, privilege: str = "SELECT") -> dict[str, Any]:
    s = catalog_access.relation_securable(row)
    via_path = None if via is None else catalog_access.relation_securable(via).path
    return AccessPlan(s.kind.value, s.path, privilege, s.key, via_path).to_dict()


def through_view(world: dict[str, Any]) -> list[dict[str, Any]]:
    """What the planner records for ``SELECT * FROM ja.d.v``: the view for the invoker, its
    table for the view's owner."""
    return [read(world["v"]), read(world["t"], via=world["v"])]


def fresh(user: User) -> User:
    return User.objects.get(pk=user.pk)


# --- the reader ----------------------------------------------------------------------------


def test_the_reader_gives_permanent_objects_their_securable_and_owner(world, bob) -> None:
    reader = DjangoCatalogReader(user=bob)
    relation = reader.get_relation(ObjectIdentifier("JA", "D", "V"))
    assert relation is not None and relation.securable is not None
    assert relation.securable == catalog_access.relation_securable(world["v"])
    assert relation.securable.kind is Kind.VIEW
    assert relation.owner == "alice"
    catalog = reader.catalog_securable("Ja")
    assert catalog is not None and catalog.owner_ids[0] == world["catalog"].owner_id
    database = reader.database_securable("ja", "D")
    assert database is not None and database.database_id == world["database"].pk
    assert reader.catalog_securable("nope") is None
    assert reader.database_securable("ja", "nope") is None
    assert reader.database_securable("ja\x00", "d") is None


def test_the_reader_loads_each_principal_once_per_statement(
    world, alice, bob, django_assert_num_queries
) -> None:
    reader = DjangoCatalogReader(user=fresh(bob))
    with django_assert_num_queries(2):  # bob's rows, then alice's (a view's owner)
        mine = reader.access()
        assert reader.access() is mine
        assert reader.access(principal=bob.pk) is mine
        owner = reader.access(principal=alice.pk)
        assert reader.access(principal=alice.pk) is owner
    assert mine.user_id == bob.pk and owner.user_id == alice.pk
    assert world["catalog"].pk in owner.owned_catalogs
    assert not mine.owned_catalogs


def test_a_reader_of_nobody_sees_nothing(world) -> None:
    access = DjangoCatalogReader().access()
    assert access.user_id is None and not access.admin
    s = catalog_access.relation_securable(world["t"])
    assert catalog_access.decide(access, s, Privilege.USE).value == "hidden"


def test_owns_inside_is_the_users_own(world, alice, bob) -> None:
    s = catalog_access.database_securable(world["database"])
    assert DjangoCatalogReader(user=alice).owns_inside(s)
    assert not DjangoCatalogReader(user=bob).owns_inside(s)


# --- re-checking a running job's reads -----------------------------------------------------


def test_reads_stand_while_the_grants_do(world, bob) -> None:
    share(world["v"], ["SELECT"], user=bob)
    catalog_access.recheck_reads(fresh(bob), through_view(world))


def test_a_revoke_of_the_view_refuses_the_next_check(world, bob) -> None:
    share(world["catalog"], ["USE"], user=bob)
    share(world["v"], ["SELECT"], user=bob)
    catalog_access.recheck_reads(fresh(bob), through_view(world))
    Grant.objects.filter(securable_key=f"relation:{world['v'].pk}").delete()
    with pytest.raises(PermissionDenied) as refused:
        catalog_access.recheck_reads(fresh(bob), through_view(world))
    assert "SELECT" in refused.value.message and "`v`" in refused.value.message
    assert refused.value.details["identifier"] == ["ja", "d", "v"]


def test_a_read_the_user_may_no_longer_see_answers_as_missing(world, bob) -> None:
    share(world["t"], ["SELECT"], user=bob)
    catalog_access.recheck_reads(fresh(bob), [read(world["t"])])
    Grant.objects.all().delete()
    with pytest.raises(NotFound) as hidden:
        catalog_access.recheck_reads(fresh(bob), [read(world["t"])])
    dropped = read(world["t"])
    dropped["securable_key"] = "relation:999999"
    with pytest.raises(NotFound) as missing:
        catalog_access.recheck_reads(fresh(bob), [dropped])
    assert hidden.value.message == missing.value.message == "Table `ja`.`d`.`t` does not exist."


def test_a_view_reads_with_its_owner_rights_as_they_are_now(world, alice, bob) -> None:
    share(world["v"], ["SELECT"], user=bob)
    records = through_view(world)
    Table.objects.filter(pk=world["v"].pk).update(owner=bob)  # ALTER VIEW … OWNER TO bob
    with pytest.raises(PermissionDenied) as refused:
        catalog_access.recheck_reads(fresh(bob), records)
    message = refused.value.message
    assert message.startswith("View `ja`.`d`.`v` cannot be read: its owner bob needs SELECT")
    via = refused.value.details["via"]
    assert (via["kind"], via["identifier"]) == ("view", ["ja", "d", "v"])
    share(world["t"], ["SELECT"], user=bob)  # the new owner may read the table now
    catalog_access.recheck_reads(fresh(bob), records)


def test_an_ownerless_view_says_an_admin_must_give_it_one(world, bob) -> None:
    share(world["v"], ["SELECT"], user=bob)
    Table.objects.filter(pk=world["v"].pk).update(owner=None)
    with pytest.raises(PermissionDenied) as refused:
        catalog_access.recheck_reads(fresh(bob), through_view(world))
    assert "it has no owner" in refused.value.message
    assert "ALTER VIEW `ja`.`d`.`v` OWNER TO USER" in refused.value.message


def test_a_dropped_base_table_is_named_by_its_view(world, bob) -> None:
    share(world["v"], ["SELECT"], user=bob)
    Table.objects.filter(pk=world["t"].pk).delete()
    with pytest.raises(NotFound) as gone:
        catalog_access.recheck_reads(fresh(bob), through_view(world))
    assert "View `ja`.`d`.`v` cannot be read" in gone.value.message


def test_a_revoke_of_read_files_refuses_a_read_of_files(world, bob, settings) -> None:
    settings.TESSERA_READ_FILES_FOR = "admins"
    record = AccessPlan("storage", ("/data/x",), "READ FILES", "storage:/data/x").to_dict()
    with pytest.raises(PermissionDenied) as refused:
        catalog_access.recheck_reads(fresh(bob), [record])
    assert "READ FILES" in refused.value.message
    settings.TESSERA_READ_FILES_FOR = "everyone"
    catalog_access.recheck_reads(fresh(bob), [record])


def test_rechecks_cost_a_query_per_kind_and_principal(
    world, alice, bob, django_assert_num_queries
) -> None:
    share(world["v"], ["SELECT"], user=bob)
    share(world["u"], ["SELECT"], user=bob)
    records = [*through_view(world), read(world["u"])]
    user = fresh(bob)
    with django_assert_num_queries(3):  # the relations, bob's rows, alice's rows
        catalog_access.recheck_reads(user, records)


def test_only_reads_are_rechecked(world, bob) -> None:
    catalog_access.recheck_reads(fresh(bob), [read(world["t"], privilege="USE")])
    catalog_access.recheck_reads(fresh(bob), [])


# --- the commit's MODIFY -------------------------------------------------------------------


def test_a_commit_needs_modify_loaded_afresh(world, bob) -> None:
    table = world["t"]
    with pytest.raises(NotFound) as hidden:
        commit.require_modify(fresh(bob), table)
    assert hidden.value.message == "Table `ja`.`d`.`t` no longer exists; nothing was written to it."
    share(world["catalog"], ["USE"], user=bob)
    share(table, ["SELECT"], user=bob)
    with pytest.raises(PermissionDenied) as denied:
        commit.require_modify(fresh(bob), table)
    assert "You need MODIFY on table `ja`.`d`.`t`" in denied.value.message
    assert "you have SELECT." in denied.value.message  # USE stays on the catalog
    share(world["database"], ["MODIFY"], user=bob)  # inherited from the database
    commit.require_modify(bob, table)  # the same user object: nothing cached in the way
    Grant.objects.filter(privilege="MODIFY").delete()
    with pytest.raises(PermissionDenied):
        commit.require_modify(bob, table)


# --- the audit's access events -------------------------------------------------------------


def job_of(user: User) -> Job:
    return Job.objects.create(user=user, sql="SELECT 1", kind="query")


def test_reads_are_one_event_per_securable_with_the_view_they_came_through(world, bob) -> None:
    job = job_of(bob)
    records = [*through_view(world), read(world["t"], via=world["v"]), read(world["u"])]
    records.append(read(world["u"], privilege="USE"))  # not a read
    assert access_log.record_reads(job, records) == 3
    events = {e.object[-1]: e for e in AuditEvent.objects.filter(action="read", job_id=job.pk)}
    assert set(events) == {"v", "t", "u"}
    assert events["t"].detail == {"via": ["ja", "d", "v"]}
    assert events["v"].detail == {} and events["u"].detail == {}
    assert events["t"].securable_key == f"relation:{world['t'].pk}"
    assert events["t"].actor_id == bob.pk and events["t"].privileges == ["SELECT"]
    assert events["v"].object_kind == "view"


def test_a_table_read_directly_and_through_a_view_is_a_direct_read(world, bob) -> None:
    job = job_of(bob)
    access_log.record_reads(job, [*through_view(world), read(world["t"])])
    event = AuditEvent.objects.get(action="read", job_id=job.pk, object=["ja", "d", "t"])
    assert event.detail == {}


def test_a_refusal_is_a_denied_event_naming_the_object(world, bob) -> None:
    job = job_of(bob)
    error = {
        "code": "PERMISSION_DENIED",
        "message": "You need SELECT on table `ja`.`d`.`t` to read it; you have USE.",
        "details": {"identifier": ["ja", "d", "t"], "kind": "table", "privilege": "SELECT"},
    }
    assert access_log.record_denied(job, error)
    event = AuditEvent.objects.get(action="denied", job_id=job.pk)
    assert event.securable_key == f"relation:{world['t'].pk}"
    assert event.privileges == ["SELECT"] and event.object == ["ja", "d", "t"]
    assert not access_log.record_denied(job, {"code": "NOT_FOUND", "message": "x"})
    assert AuditEvent.objects.filter(action="denied").count() == 1


def test_a_refusal_of_an_unknown_shape_is_still_recorded(bob) -> None:
    job = job_of(bob)
    huge = {"code": "PERMISSION_DENIED", "message": "x" * 10_000, "details": {"kind": "x" * 50}}
    assert access_log.record_denied(job, huge)
    event = AuditEvent.objects.get(action="denied", job_id=job.pk)
    assert event.securable_key == "" and len(event.detail["message"]) == 500


def test_writes_are_one_event_per_target(world, bob) -> None:
    job = job_of(bob)
    access_log.record_writes(job, [world["t"], world["u"]], ["insert", "overwrite"])
    events = AuditEvent.objects.filter(action="write", job_id=job.pk).order_by("id")
    assert [(e.object[-1], e.detail["mode"]) for e in events] == [
        ("t", "insert"),
        ("u", "overwrite"),
    ]


# --- scrubbed errors ----------------------------------------------------------------------


def test_a_table_read_only_through_a_view_is_not_named_in_errors(world) -> None:
    from core.planner.plan import Plan, RelationPlan

    plan = Plan.of(
        "query",
        relations=(
            RelationPlan("__tessera_r1", ("ja", "d", "t"), "table", path="/srv/w/ja/d/t"),
            RelationPlan("__tessera_r2", ("ja", "d", "u"), "table", path="/srv/w/ja/d/u"),
        ),
    )
    access = [*through_view(world), read(world["u"])]
    found = errors.plan_locations(plan, {}, access)
    assert found["/srv/w/ja/d/t"] == "<location of a table read by view ja.d.v>"
    assert found["/srv/w/ja/d/u"] == "ja.d.u"
    message = errors.scrub_paths("Path does not exist: file:/srv/w/ja/d/t/part-0.", found)
    assert message == "Path does not exist: <location of a table read by view ja.d.v>/part-0."
    assert "ja.d.t" not in message
    # Without records (a job planned before grants) every table is named, as before.
    assert errors.plan_locations(plan, {})["/srv/w/ja/d/t"] == "ja.d.t"
