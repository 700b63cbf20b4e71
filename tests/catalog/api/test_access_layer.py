"""The access layer under the grants (issue 18): what a user holds loads in one query however
many grants there are, ``require`` allows, refuses or answers as missing, ``catalog.grants``
writes rows and audit events together (and neither when it refuses), ownership moves, and the
management commands share catalogs with everyone."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test.utils import CaptureQueriesContext

from audit.models import AuditEvent
from catalog import access, grants, services
from catalog.models import EVERYONE, Catalog, Database, Grant, Table
from core.errors import CoreError, NotFound, PermissionDenied
from core.privileges import Decision, Kind, Privilege
from tests.grants_support import share
from tests.schemas import ID_SCHEMA as SCHEMA

pytestmark = pytest.mark.django_db


@pytest.fixture
def carol(db: None) -> User:
    return User.objects.create_user("carol", password="pw-carol-long")


@pytest.fixture
def world(alice: User) -> dict[str, Any]:
    """Alice's private catalog ``c`` (database ``d``: table ``t``, view ``v``, function ``f``;
    database ``e``: table ``u``)."""
    c = services.catalog_create(user=alice, name="c", default_database="d")
    d = c.databases.get()
    e = services.database_create(user=alice, catalog=c, name="e")
    t = services.table_create(user=alice, database=d, name="t", schema=SCHEMA)
    v = services.view_create(
        user=alice, database=d, name="v", query="SELECT id FROM c.d.t", derived=SCHEMA
    )
    f = services.function_create(
        user=alice, database=d, name="f", language="python", implementation="udfs.text.upper"
    )
    u = services.table_create(user=alice, database=e, name="u", schema=SCHEMA)
    return {"c": c, "d": d, "e": e, "t": t, "v": v, "f": f, "u": u}


def fresh(user: User) -> User:
    """The user as a new request would load it (no cached access)."""
    return User.objects.get(pk=user.pk)


# --- load_access: one query ---------------------------------------------------------------


def _load_queries(user: User) -> tuple[int, Any]:
    with CaptureQueriesContext(connection) as queries:
        loaded = access.load_access(user)
    return len(queries), loaded


def test_what_a_user_holds_loads_in_one_query_however_many_grants(
    world: dict[str, Any], bob: User
) -> None:
    one, loaded = _load_queries(bob)
    assert one == 1 and loaded.grants == () and not loaded.admin
    analysts = Group.objects.create(name="analysts")
    bob.groups.add(analysts)
    share(world["c"], ["USE"], user=bob)
    share(world["d"], ["SELECT"], team="analysts")
    share(world["t"], ["MODIFY"], team=EVERYONE)
    for n in range(300):
        table = services.table_create(
            user=fresh(world["c"].owner), database=world["e"], name=f"x{n}", schema=SCHEMA
        )
        share(table, ["SELECT"], team="analysts" if n % 2 else EVERYONE)
    many, loaded = _load_queries(bob)
    assert many == one
    levels = {(g.level, g.privilege) for g in loaded.grants}
    assert (Kind.CATALOG, Privilege.USE) in levels
    assert (Kind.DATABASE, Privilege.SELECT) in levels  # through his team
    assert (Kind.TABLE, Privilege.MODIFY) in levels  # through everyone
    assert len(loaded.grants) == 3 + 300


def test_owners_and_admins_are_loaded_too(world: dict[str, Any], alice: User, admin: User) -> None:
    queries, loaded = _load_queries(alice)
    assert queries == 1
    assert loaded.owned_catalogs == {world["c"].pk}
    assert set(loaded.owned_databases) == {world["d"].pk, world["e"].pk}
    assert access.load_access(admin).admin
    assert access.load_access(User.objects.create_user("dan", is_staff=True)).admin


def test_access_is_cached_on_the_user_object_until_forgotten(
    world: dict[str, Any], bob: User
) -> None:
    first = access.access_for(bob)
    with CaptureQueriesContext(connection) as queries:
        assert access.access_for(bob) is first
    assert len(queries) == 0
    share(world["t"], ["SELECT"], user=bob)
    assert access.access_for(bob) is first  # a grant counts from the next request...
    access.forget(bob)
    assert access.access_for(bob) is not first  # ... or once forgotten
    assert any(g.object_id == world["t"].pk for g in access.access_for(bob).grants)


# --- require: allowed, denied, hidden --------------------------------------------------------


def test_require_allows_denies_and_hides(world: dict[str, Any], bob: User, carol: User) -> None:
    t = access.relation_securable(world["t"])
    share(world["t"], ["SELECT"], user=bob)
    missing = NotFound("no such thing")
    access.require(bob, t, Privilege.SELECT, missing=lambda: missing)
    with pytest.raises(PermissionDenied) as denied:
        access.require(bob, t, Privilege.MODIFY, missing=lambda: missing)
    assert denied.value.message == (
        "You need MODIFY on table `c`.`d`.`t` to write into it; you have SELECT."
    )
    assert denied.value.details == {
        "kind": "table",
        "privilege": "MODIFY",
        "identifier": ["c", "d", "t"],
    }
    with pytest.raises(NotFound) as hidden:
        access.require(carol, t, Privilege.SELECT, missing=lambda: missing)
    assert hidden.value is missing
    # Bob may see database d (he holds something inside): its other objects are refused.
    v = access.relation_securable(world["v"])
    assert access.decide(access.access_for(bob), v, Privilege.SELECT) is Decision.DENIED
    # ... but in database e he holds nothing, nor on it: u is hidden from him.
    u = access.relation_securable(world["u"])
    assert access.decide(access.access_for(bob), u, Privilege.SELECT) is Decision.HIDDEN


def test_hidden_answers_exactly_as_missing(world: dict[str, Any], carol: User) -> None:
    """``find_securable`` gives a hidden object the very error of a name never created."""
    for kind, real, twin in [
        ("catalog", ["c"], ["cz"]),
        ("database", ["c", "d"], ["cz", "d"]),
        ("table", ["c", "d", "t"], ["cz", "d", "t"]),
        ("view", ["c", "d", "v"], ["cz", "d", "v"]),
        ("function", ["c", "d", "f"], ["cz", "d", "f"]),
    ]:
        with pytest.raises(NotFound) as hidden:
            grants.find_securable(carol, kind, real)
        with pytest.raises(NotFound) as missing:
            grants.find_securable(carol, kind, twin)
        assert hidden.value.message == missing.value.message.replace("cz", "c"), kind
        assert hidden.value.message == "A catalog with name [c] does not exist."


def test_a_seen_database_names_what_is_missing_in_it(world: dict[str, Any], bob: User) -> None:
    share(world["t"], ["SELECT"], user=bob)
    row, s = grants.find_securable(bob, "view", ["C", "D", "V"])  # as typed: any case
    assert row == world["v"] and s.kind is Kind.VIEW
    with pytest.raises(NotFound, match=r"^Table `c`\.`d`\.`nope` does not exist\.$"):
        grants.find_securable(bob, "table", ["c", "d", "nope"])
    row, s = grants.find_securable(bob, "table", ["c", "d", "v"])  # TABLE naming a view
    assert s.kind is Kind.VIEW
    # Database e: visible (its catalog is), but he holds nothing on it or in it.
    with pytest.raises(PermissionDenied, match=r"You need USE on database `c`\.`e`"):
        grants.find_securable(bob, "table", ["c", "e", "nope"])


def test_storage_roots_are_for_admins(storage: Any, admin: User, bob: User) -> None:
    root = str(storage.external.resolve())
    row, s = grants.find_securable(admin, "storage", path=root + "/")
    assert row is None and s.kind is Kind.STORAGE and s.root == root
    with pytest.raises(PermissionDenied):
        grants.find_securable(bob, "storage", path=root)
    with pytest.raises(CoreError, match="is not a storage root") as error:
        grants.find_securable(admin, "storage", path=root + "/below")
    assert error.value.details["field"] == "path"


# --- grant, revoke, show grants --------------------------------------------------------------


def _events(**where: Any) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(**where).order_by("id"))


def test_grant_is_idempotent_and_audited_once(world: dict[str, Any], alice: User) -> None:
    s = access.relation_securable(world["t"])
    analysts = Group.objects.create(name="Analysts")
    team = grants.find_principal("team", "analysts")  # teams: any case
    assert team.id == analysts.pk and team.name == "Analysts"
    assert grants.grant(user=alice, securable=s, privileges=["select", "MODIFY"], principal=team)
    assert grants.grant(user=alice, securable=s, privileges=["SELECT"], principal=team) == []
    rows = Grant.objects.filter(securable_key=s.key, principal_key=f"team:{analysts.pk}")
    assert sorted(rows.values_list("privilege", flat=True)) == ["MODIFY", "SELECT"]
    row = rows.first()
    assert row is not None and row.table_id == world["t"].pk
    assert (row.catalog_id, row.database_id) == (world["c"].pk, world["d"].pk)
    assert row.granted_by_id == alice.pk
    (event,) = _events(action="grant")
    assert (event.actor_name, event.object, event.securable_key) == (
        "alice",
        ["c", "d", "t"],
        s.key,
    )
    assert (event.principal_type, event.principal_name) == ("team", "Analysts")
    assert event.privileges == ["SELECT", "MODIFY"]


def test_all_privileges_expand_to_what_the_kind_takes(world: dict[str, Any], alice: User) -> None:
    User.objects.create_user("bob")
    bob = grants.find_principal("user", "bob")
    f = access.function_securable(world["f"])
    assert grants.grant(user=alice, securable=f, privileges=["ALL PRIVILEGES"], principal=bob) == [
        Privilege.USE,
        Privilege.EXECUTE,
        Privilege.MANAGE,
    ]


@pytest.mark.parametrize(
    ("privilege", "kind", "allowed"),
    [
        ("SELECT", "f", "USE, EXECUTE, MANAGE"),
        ("MODIFY", "v", "USE, SELECT, MANAGE"),
        ("CREATE", "t", "USE, SELECT, MODIFY, MANAGE"),
        ("READ FILES", "c", "USE, SELECT, MODIFY, CREATE, EXECUTE, MANAGE"),
    ],
)
def test_a_privilege_the_kind_does_not_take_is_refused_naming_the_allowed(
    world: dict[str, Any], alice: User, bob: User, privilege: str, kind: str, allowed: str
) -> None:
    s = grants.securable_of(world[kind])
    with pytest.raises(CoreError) as error:
        grants.grant(
            user=alice,
            securable=s,
            privileges=[privilege],
            principal=grants.find_principal("user", "bob"),
        )
    assert error.value.code == "VALIDATION_ERROR"
    assert f"you may grant {allowed}." in error.value.message
    assert not Grant.objects.exists() and not _events(action="grant")


def test_unknown_principals_and_privileges(world: dict[str, Any], alice: User) -> None:
    with pytest.raises(NotFound, match=r"^There is no user named 'nobody'\.$"):
        grants.find_principal("user", "nobody")
    with pytest.raises(NotFound, match=r"^There is no team named 'nobody'\.$"):
        grants.find_principal("team", "nobody")
    with pytest.raises(CoreError, match="a user or a team"):
        grants.find_principal("role", "x")
    with pytest.raises(NotFound):
        grants.find_principal("user", "x" * 10_000)
    everyone = grants.find_principal("team", "EVERYONE")
    assert everyone.name == EVERYONE
    s = access.catalog_securable(world["c"])
    with pytest.raises(CoreError, match="Unknown privilege 'FLY'"):
        grants.grant(user=alice, securable=s, privileges=["FLY"], principal=everyone)
    with pytest.raises(CoreError, match="at least one privilege"):
        grants.grant(user=alice, securable=s, privileges=[], principal=everyone)


def test_only_managers_grant_and_outsiders_learn_nothing(
    world: dict[str, Any], alice: User, bob: User, carol: User
) -> None:
    s = access.relation_securable(world["t"])
    principal = grants.find_principal("user", "carol")
    with pytest.raises(NotFound, match=r"A catalog with name \[c\] does not exist"):
        grants.grant(user=carol, securable=s, privileges=["SELECT"], principal=principal)
    share(world["t"], ["SELECT"], user=bob)
    with pytest.raises(PermissionDenied, match=r"You need MANAGE on table `c`\.`d`\.`t`"):
        grants.grant(user=fresh(bob), securable=s, privileges=["SELECT"], principal=principal)
    assert not Grant.objects.filter(user=carol).exists()
    share(world["d"], ["MANAGE"], user=bob)  # MANAGE on the database passes down
    assert grants.grant(user=fresh(bob), securable=s, privileges=["SELECT"], principal=principal)
    assert [e.actor_name for e in _events(action="grant")] == ["bob"]


def test_storage_grants_are_for_admins_only(
    storage: Any, admin: User, alice: User, bob: User
) -> None:
    s = access.storage_securable(str(storage.external.resolve()))
    principal = grants.find_principal("user", "bob")
    with pytest.raises(PermissionDenied, match="Only admins may grant or revoke READ FILES"):
        grants.grant(user=alice, securable=s, privileges=["READ FILES"], principal=principal)
    with pytest.raises(CoreError, match="you may grant READ FILES"):
        grants.grant(user=admin, securable=s, privileges=["SELECT"], principal=principal)
    assert grants.grant(user=admin, securable=s, privileges=["READ_FILES"], principal=principal)
    row = Grant.objects.get()
    assert (row.securable_kind, row.storage_root, row.catalog_id) == ("storage", s.root, None)


def test_revoke_says_when_there_is_nothing_or_where_it_comes_from(
    world: dict[str, Any], alice: User, bob: User
) -> None:
    t = access.relation_securable(world["t"])
    c = access.catalog_securable(world["c"])
    principal = grants.find_principal("user", "bob")
    with pytest.raises(CoreError, match="Nothing to revoke: user bob holds no SELECT"):
        grants.revoke(user=alice, securable=t, privileges=["SELECT"], principal=principal)
    grants.grant(user=alice, securable=c, privileges=["SELECT"], principal=principal)
    with pytest.raises(CoreError) as inherited:
        grants.revoke(user=alice, securable=t, privileges=["SELECT"], principal=principal)
    assert inherited.value.message == (
        "SELECT on table `c`.`d`.`t` is granted to user bob on catalog `c`; revoke it there."
    )
    assert inherited.value.details["inherited_from"] == {"kind": "catalog", "identifier": ["c"]}
    assert not _events(action="revoke")
    assert grants.revoke(user=alice, securable=c, privileges=["ALL"], principal=principal) == [
        Privilege.SELECT
    ]
    (event,) = _events(action="revoke")
    assert event.privileges == ["SELECT"] and event.object == ["c"]
    assert not Grant.objects.exists()


def test_show_grants_lists_direct_and_inherited_and_only_ones_own_without_manage(
    world: dict[str, Any], alice: User, bob: User, carol: User
) -> None:
    analysts = Group.objects.create(name="analysts")
    bob.groups.add(analysts)
    share(world["c"], ["USE", "SELECT"], team="analysts")
    share(world["d"], ["MODIFY", "CREATE"], user=carol)
    share(world["t"], ["SELECT"], user=bob)
    share(world["t"], ["MANAGE"], user=carol)
    t = access.relation_securable(world["t"])
    lines = grants.show_grants(user=alice, securable=t)
    shown = [
        (
            line.principal_type,
            line.principal,
            line.privilege.value,
            line.inherited_from.key if line.inherited_from else None,
        )
        for line in lines
    ]
    # USE on the catalog and CREATE on the database do not pass down to a table.
    assert shown == [
        ("team", "analysts", "SELECT", f"catalog:{world['c'].pk}"),
        ("user", "bob", "SELECT", None),
        ("user", "carol", "MODIFY", f"database:{world['d'].pk}"),
        ("user", "carol", "MANAGE", None),
    ]
    assert {(line.object_type, line.object_name) for line in lines} == {("table", "`c`.`d`.`t`")}
    # Bob holds no MANAGE: he sees his own rows and his team's.
    mine = grants.show_grants(user=fresh(bob), securable=t)
    assert [(line.principal, line.privilege.value) for line in mine] == [
        ("analysts", "SELECT"),
        ("bob", "SELECT"),
    ]
    # Carol manages it: she sees everyone's; narrowed to one principal on request.
    narrowed = grants.show_grants(
        user=fresh(carol), securable=t, principal=grants.find_principal("team", "analysts")
    )
    assert [(line.principal, line.privilege.value) for line in narrowed] == [("analysts", "SELECT")]
    with pytest.raises(NotFound):
        grants.show_grants(user=User.objects.create_user("olga"), securable=t)


def test_a_failed_change_writes_neither_rows_nor_events(
    world: dict[str, Any], alice: User, bob: User
) -> None:
    s = access.relation_securable(world["t"])
    changes = [
        {"principal": "bob", "principal_type": "user", "add": ["SELECT"]},
        {"principal": "ghost", "principal_type": "user", "add": ["SELECT"]},
    ]
    with pytest.raises(NotFound) as error:
        grants.update_permissions(user=alice, securable=s, changes=changes)
    assert error.value.details["field"] == "changes[1].principal"
    assert (
        not Grant.objects.exists()
        and not AuditEvent.objects.exclude(object_kind="token")
        .exclude(action__in=("create", "alter"))
        .exists()
    )


# --- ownership ----------------------------------------------------------------------------


def test_transfer_owner_moves_every_right_and_is_audited(
    world: dict[str, Any], alice: User, bob: User, carol: User
) -> None:
    table = world["t"]
    with pytest.raises(NotFound):
        grants.transfer_owner(user=carol, row=table, new_owner="carol")
    share(world["t"], ["MANAGE"], user=carol)
    with pytest.raises(PermissionDenied, match=r"Only the owner of table `c`\.`d`\.`t`"):
        grants.transfer_owner(user=fresh(carol), row=table, new_owner="carol")
    with pytest.raises(NotFound, match="There is no user named 'ghost'"):
        grants.transfer_owner(user=alice, row=table, new_owner="ghost")
    assert not _events(action="owner")
    grants.transfer_owner(user=alice, row=table, new_owner="bob")
    table.refresh_from_db()
    assert table.owner_id == bob.pk and table.created_by_id == alice.pk
    (event,) = _events(action="owner")
    assert (event.principal_name, event.detail) == ("bob", {"previous": "alice"})
    # Bob may now do everything with it; alice still may, as the owner of its catalog.
    t = access.relation_securable(
        Table.objects.select_related("database__catalog").get(pk=table.pk)
    )
    assert access.decide(access.access_for(fresh(bob)), t, Privilege.MANAGE) is Decision.ALLOWED
    assert access.decide(access.access_for(fresh(alice)), t, Privilege.MANAGE) is Decision.ALLOWED
    services.table_delete(
        user=fresh(bob), table=Table.objects.select_related("database__catalog").get(pk=table.pk)
    )
    assert [e.actor_name for e in _events(action="drop")] == ["bob"]


def test_the_new_owner_of_a_database_manages_what_is_inside(
    world: dict[str, Any], alice: User, bob: User
) -> None:
    grants.transfer_owner(user=alice, row=world["e"], new_owner="bob")
    u = Table.objects.select_related("database__catalog").get(pk=world["u"].pk)
    services.table_update(user=fresh(bob), table=u, comment="bob's now")
    assert Table.objects.get(pk=u.pk).comment == "bob's now"
    # ... and may hand the table inside on, being its parent's owner.
    grants.transfer_owner(user=fresh(bob), row=u, new_owner="alice")
    d = Database.objects.select_related("catalog").get(pk=world["d"].pk)
    with pytest.raises(PermissionDenied):
        services.database_update(user=fresh(bob), database=d, comment="not his")


# --- management commands ---------------------------------------------------------------------


def test_share_catalogs_gives_everyone_read_access(world: dict[str, Any], alice: User) -> None:
    other = services.catalog_create(user=alice, name="other")
    out = StringIO()
    call_command("share_catalogs", "C", stdout=out)
    assert out.getvalue() == "c: USE, SELECT, EXECUTE\n"
    everyone = grants.find_principal("team", EVERYONE)
    rows = Grant.objects.filter(principal_key=everyone.key)
    assert sorted(rows.values_list("securable_key", "privilege")) == [
        (f"catalog:{world['c'].pk}", p) for p in ("EXECUTE", "SELECT", "USE")
    ]
    out = StringIO()
    call_command("share_catalogs", "--all", "--privileges", "USE,SELECT", stdout=out)
    assert out.getvalue() == "c: nothing new\nother: USE, SELECT\n"
    assert rows.filter(catalog=other).count() == 2
    events = _events(action="grant")
    assert [(e.actor_name, e.object, e.principal_name) for e in events] == [
        ("", ["c"], EVERYONE),
        ("", ["other"], EVERYONE),
    ]
    with pytest.raises(CommandError, match="does not exist"):
        call_command("share_catalogs", "nope")
    with pytest.raises(CommandError, match="not both"):
        call_command("share_catalogs", "c", "--all")
    with pytest.raises(CommandError, match="Unknown privilege"):
        call_command("share_catalogs", "c", "--privileges", "USE,FLY")
    with pytest.raises(CommandError, match="cannot be granted on a catalog"):
        call_command("share_catalogs", "c", "--privileges", "READ FILES")


def test_bootstrap_makes_demo_readable_by_everyone(settings: Any, storage: Any) -> None:
    call_command("bootstrap", stdout=StringIO())
    demo = Catalog.objects.get(name="demo")
    carol = User.objects.create_user("carol2")
    s = access.catalog_securable(demo)
    held = access.access_for(carol)
    assert access.decide(held, s, Privilege.USE) is Decision.ALLOWED
    orders = Table.objects.select_related("database__catalog").get(name="orders")
    assert (
        access.decide(held, access.relation_securable(orders), Privilege.SELECT) is Decision.ALLOWED
    )
    assert access.decide(held, access.relation_securable(orders), Privilege.MODIFY) is (
        Decision.DENIED
    )
    assert orders.owner == demo.owner and demo.owner is not None and demo.owner.is_superuser
    (event,) = _events(action="grant")
    assert event.object == ["demo"] and event.actor_name == demo.owner.username
    call_command("bootstrap", stdout=StringIO())  # again: nothing more
    assert _events(action="grant") == [event]
