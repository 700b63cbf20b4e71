"""Teams and principals over REST (issue 18, ADR 0011 §4.4): admins manage teams and their
members, everybody sees their own teams and ``everyone``, an outsider learns nothing about a
team they are not in, and every change is in the audit log."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User

from audit.models import AuditEvent
from catalog import access
from catalog.models import EVERYONE, Catalog, Grant
from tests.conftest import API, PASSWORD, assert_error, client_for
from tests.grants_support import share

pytestmark = pytest.mark.django_db


def make_team(name: str, *members: User) -> Group:
    group = Group.objects.create(name=name)
    for member in members:
        group.user_set.add(member)
    return group


def events(action: str) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(action=action).order_by("id"))


def team_events() -> list[AuditEvent]:
    """Every event but the API clients' sign-ins (their tokens' token_create)."""
    return list(AuditEvent.objects.exclude(object_kind="token"))


@pytest.fixture
def carol(db: None) -> User:
    return User.objects.create_user("carol", "carol@example.com", PASSWORD)


# --- creating and listing -------------------------------------------------------------------


def test_an_admin_creates_a_team_and_it_is_audited(admin, admin_api):
    response = admin_api.post(f"{API}/teams", {"name": "Analysts"})
    assert response.status_code == 201, response.content
    assert response.json() == {"name": "Analysts", "implicit": False, "members": 0}
    assert Group.objects.filter(name="Analysts").exists()
    (event,) = events("team_create")
    assert (event.actor_id, event.actor_name) == (admin.pk, "admin")
    assert (event.object_kind, event.object) == ("team", ["Analysts"])
    assert (event.principal_type, event.principal_name) == ("team", "Analysts")


def test_team_names_are_unique_whatever_their_case(admin_api):
    assert admin_api.post(f"{API}/teams", {"name": "ops"}).status_code == 201
    assert_error(admin_api.post(f"{API}/teams", {"name": "OPS"}), 409, "ALREADY_EXISTS", "'ops'")
    assert_error(
        admin_api.post(f"{API}/teams", {"name": "Everyone"}), 409, "ALREADY_EXISTS", EVERYONE
    )
    assert Group.objects.filter(name__iexact="ops").count() == 1
    assert len(events("team_create")) == 1


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("", "must not be empty"),
        ("   ", "only whitespace"),
        ("ops\x07", "control characters"),
        ("x" * 151, "at most 150 characters"),
    ],
)
def test_bad_team_names_are_refused(admin_api, name, fragment):
    error = assert_error(
        admin_api.post(f"{API}/teams", {"name": name}), 400, "VALIDATION_ERROR", fragment
    )
    assert error["details"]["field"] == "name"
    assert not Group.objects.exclude(name=EVERYONE).exists()
    assert not events("team_create")


def test_a_100_kb_team_name_is_refused_without_being_echoed(admin_api):
    response = admin_api.post(f"{API}/teams", {"name": "t" * 100_000})
    assert_error(response, 400, "VALIDATION_ERROR", "at most 150 characters", "100,000")
    assert len(response.content) < 1_000
    # In a path it is simply a team that does not exist, named briefly.
    missing = admin_api.get(f"{API}/teams/{'t' * 100_000}/members")
    assert_error(missing, 404, "NOT_FOUND", "There is no team named 'ttt")
    assert len(missing.content) < 1_000


def test_a_body_that_is_not_an_object_is_refused(admin_api):
    assert_error(admin_api.post(f"{API}/teams", ["ops"]), 400, "VALIDATION_ERROR", "JSON object")
    assert_error(admin_api.post(f"{API}/teams", {}), 400, "VALIDATION_ERROR")


def test_only_admins_create_teams(alice_api):
    assert_error(alice_api.post(f"{API}/teams", {"name": "mine"}), 403, "PERMISSION_DENIED")
    assert not Group.objects.filter(name="mine").exists()
    assert not events("team_create")


def test_anonymous_callers_get_nothing(anon_api):
    for url in (f"{API}/teams", f"{API}/teams/{EVERYONE}", f"{API}/principals?q=a"):
        assert_error(anon_api.get(url), 401, "NOT_AUTHENTICATED")


def test_admins_list_every_team_others_their_own_and_everyone(
    admin, alice, bob, admin_api, bob_api
):
    make_team("analysts", alice, bob)
    make_team("finance", alice)
    make_team("secret")
    users = User.objects.filter(is_active=True).count()
    everything = admin_api.get(f"{API}/teams").json()
    assert everything == {
        "items": [
            {"name": "analysts", "implicit": False, "members": 2},
            {"name": EVERYONE, "implicit": True, "members": users},
            {"name": "finance", "implicit": False, "members": 1},
            {"name": "secret", "implicit": False, "members": 0},
        ],
        "next_page_token": None,
    }
    mine = bob_api.get(f"{API}/teams").json()
    assert [t["name"] for t in mine["items"]] == ["analysts", EVERYONE]


def test_the_team_list_pages_by_name(admin_api):
    for name in ("b", "C", "a", "d"):
        make_team(name)
    seen: list[str] = []
    url = f"{API}/teams?page_size=2"
    while url:
        body = admin_api.get(url).json()
        assert len(body["items"]) <= 2
        seen += [t["name"] for t in body["items"]]
        token = body["next_page_token"]
        url = f"{API}/teams?page_size=2&page_token={token}" if token else ""
    assert seen == ["a", "b", "C", "d", EVERYONE]
    assert_error(admin_api.get(f"{API}/teams?page_token=nonsense"), 400, "VALIDATION_ERROR")


def test_everyone_is_listed_even_when_its_row_is_gone(alice_api):
    Group.objects.filter(name=EVERYONE).delete()  # a flushed test database
    body = alice_api.get(f"{API}/teams").json()
    assert [t["name"] for t in body["items"]] == [EVERYONE]
    assert body["items"][0]["implicit"] is True


# --- one team and its members -----------------------------------------------------------------


def test_members_see_their_team_and_its_members(alice, bob, bob_api):
    make_team("analysts", alice, bob)
    assert bob_api.get(f"{API}/teams/ANALYSTS").json() == {
        "name": "analysts",
        "implicit": False,
        "members": 2,
    }
    body = bob_api.get(f"{API}/teams/analysts/members").json()
    assert body == {
        "items": [
            {"username": "alice", "is_admin": False},
            {"username": "bob", "is_admin": False},
        ],
        "next_page_token": None,
    }


def test_members_are_paged_by_username(admin_api):
    team = make_team("big")
    for index in range(5):
        team.user_set.add(User.objects.create_user(f"m{index}", password=PASSWORD))
    names: list[str] = []
    url = f"{API}/teams/big/members?page_size=2"
    while url:
        body = admin_api.get(url).json()
        names += [m["username"] for m in body["items"]]
        token = body["next_page_token"]
        url = f"{API}/teams/big/members?page_size=2&page_token={token}" if token else ""
    assert names == ["m0", "m1", "m2", "m3", "m4"]


def test_an_outsider_learns_nothing_about_another_team(alice, carol):
    make_team("secret", alice)
    carol_api = client_for(carol)
    for method, suffix in (
        ("get", ""),
        ("get", "/members"),
        ("delete", ""),
        ("put", "/members/carol"),
        ("delete", "/members/alice"),
    ):
        real = getattr(carol_api, method)(f"{API}/teams/secret{suffix}")
        twin = getattr(carol_api, method)(f"{API}/teams/secrex{suffix}")
        assert_error(real, 404, "NOT_FOUND", "There is no team named 'secret'.")
        assert real.json() == _renamed(twin.json(), "secrex", "secret"), method + suffix
    assert list(Group.objects.get(name="secret").user_set.values_list("username", flat=True)) == [
        "alice"
    ]
    assert not team_events()


def _renamed(body: object, old: str, new: str) -> object:
    import json

    return json.loads(json.dumps(body).replace(old, new))


def test_a_member_who_is_not_an_admin_gets_403_on_admin_routes(alice, bob, bob_api):
    make_team("analysts", alice, bob)
    assert_error(bob_api.delete(f"{API}/teams/analysts"), 403, "PERMISSION_DENIED", "admins")
    assert_error(
        bob_api.put(f"{API}/teams/analysts/members/bob"), 403, "PERMISSION_DENIED", "admins"
    )
    assert_error(bob_api.delete(f"{API}/teams/analysts/members/alice"), 403, "PERMISSION_DENIED")
    assert Group.objects.get(name="analysts").user_set.count() == 2
    assert not team_events()


def test_admins_add_and_remove_members_idempotently_with_audit_events(admin, alice, admin_api):
    make_team("analysts")
    for _ in range(2):
        response = admin_api.put(f"{API}/teams/analysts/members/ALICE")
        assert response.status_code == 204, response.content
    assert list(alice.groups.values_list("name", flat=True)) == ["analysts"]
    (added,) = events("member_add")
    assert (added.actor_name, added.object_kind, added.object) == ("admin", "team", ["analysts"])
    assert (added.principal_type, added.principal_name) == ("user", "alice")
    assert added.detail == {"team": "analysts"}
    for _ in range(2):
        assert admin_api.delete(f"{API}/teams/analysts/members/alice").status_code == 204
    assert not alice.groups.exists()
    (removed,) = events("member_remove")
    assert (removed.principal_name, removed.detail) == ("alice", {"team": "analysts"})
    # The user's teams, as GET /users/me lists them, follow.
    assert client_for(alice).get(f"{API}/users/me").json()["teams"] == []


def test_a_member_change_names_the_missing_user(admin_api):
    make_team("analysts")
    assert_error(
        admin_api.put(f"{API}/teams/analysts/members/nobody"),
        404,
        "NOT_FOUND",
        "There is no user named 'nobody'.",
    )
    assert_error(admin_api.put(f"{API}/teams/analysts/members/{'u' * 100_000}"), 404, "NOT_FOUND")
    assert not team_events()


def test_everyone_is_implicit_its_members_and_its_deletion_are_refused(
    admin, alice, bob, admin_api, alice_api
):
    team = admin_api.get(f"{API}/teams/{EVERYONE}").json()
    assert team == {"name": EVERYONE, "implicit": True, "members": 3}
    members = alice_api.get(f"{API}/teams/{EVERYONE}/members").json()["items"]
    assert [m["username"] for m in members] == ["admin", "alice", "bob"]
    for response in (
        admin_api.put(f"{API}/teams/{EVERYONE}/members/alice"),
        admin_api.delete(f"{API}/teams/{EVERYONE}/members/alice"),
        admin_api.delete(f"{API}/teams/Everyone"),
    ):
        assert_error(response, 400, "VALIDATION_ERROR", "every signed-in user")
    # A non-admin is in everyone, so the admin routes are 403 for them.
    assert_error(alice_api.delete(f"{API}/teams/{EVERYONE}"), 403, "PERMISSION_DENIED")
    assert Group.objects.filter(name=EVERYONE).exists()
    assert not Group.objects.get(name=EVERYONE).user_set.exists()
    assert not team_events()


def test_deleting_a_team_removes_its_memberships_and_grants(admin, alice, bob, admin_api, make):
    make.catalog("shop", shared=False)
    team = make_team("analysts", bob)
    share("shop", ["USE", "SELECT"], team="analysts")
    share("shop", ["USE"], user=bob)
    assert {g.privilege for g in access.load_access(bob).grants} == {"USE", "SELECT"}

    response = admin_api.delete(f"{API}/teams/analysts")
    assert response.status_code == 204, response.content
    assert not Group.objects.filter(pk=team.pk).exists()
    assert not Grant.objects.filter(principal_key=f"team:{team.pk}").exists()
    assert Grant.objects.filter(principal_key=f"user:{bob.pk}").count() == 1  # bob's own stays
    assert not bob.groups.exists()
    assert {g.privilege for g in access.load_access(bob).grants} == {"USE"}
    (event,) = events("team_delete")
    catalog_key = f"catalog:{Catalog.objects.get(name='shop').pk}"
    assert event.detail == {
        "members": 1,
        "grants": 2,
        "grants_removed": [
            {"kind": "catalog", "securable_key": catalog_key, "privilege": "SELECT"},
            {"kind": "catalog", "securable_key": catalog_key, "privilege": "USE"},
        ],
    }
    assert_error(admin_api.get(f"{API}/teams/analysts"), 404, "NOT_FOUND")


def test_a_user_deleted_while_in_a_team_leaves_it_and_its_audit_stays(admin, alice, bob, admin_api):
    make_team("analysts")
    for name in ("alice", "bob"):
        assert admin_api.put(f"{API}/teams/analysts/members/{name}").status_code == 204
    bob_id = bob.pk
    bob.delete()
    assert admin_api.get(f"{API}/teams/analysts").json()["members"] == 1
    members = admin_api.get(f"{API}/teams/analysts/members").json()["items"]
    assert [m["username"] for m in members] == ["alice"]
    # The events about bob are kept, named as they were.
    about_bob = admin_api.get(f"{API}/audit?principal=user:bob").json()["items"]
    assert [(e["action"], e["principal"]) for e in about_bob] == [
        ("member_add", {"type": "user", "name": "bob"})
    ]
    assert not User.objects.filter(pk=bob_id).exists()


# --- principals -------------------------------------------------------------------------------


def test_principals_complete_users_and_teams_by_prefix(alice, bob, carol, bob_api):
    make_team("alerts")
    make_team("Alpha")
    make_team("analysts")
    User.objects.create_user("alfred", password=PASSWORD, is_active=False)
    body = bob_api.get(f"{API}/principals?q=AL").json()
    assert body == {
        "items": [
            {"type": "team", "name": "alerts"},
            {"type": "user", "name": "alice"},
            {"type": "team", "name": "Alpha"},
        ],
        "next_page_token": None,
    }
    users = bob_api.get(f"{API}/principals?q=a&kind=user").json()["items"]
    assert users == [{"type": "user", "name": "alice"}]
    teams = bob_api.get(f"{API}/principals?kind=team").json()["items"]
    assert [t["name"] for t in teams] == ["alerts", "Alpha", "analysts", EVERYONE]


def test_principals_are_at_most_twenty(alice_api):
    for index in range(25):
        User.objects.create_user(f"p{index:02d}a", password=PASSWORD)
        make_team(f"P{index:02d}b")
    items = alice_api.get(f"{API}/principals?q=p").json()["items"]
    assert len(items) == 20
    assert items[:3] == [
        {"type": "user", "name": "p00a"},
        {"type": "team", "name": "P00b"},
        {"type": "user", "name": "p01a"},
    ]
    assert items[-1] == {"type": "team", "name": "P09b"}


def test_hostile_principal_queries(alice_api):
    assert_error(
        alice_api.get(f"{API}/principals?kind=group"), 400, "VALIDATION_ERROR", "kind must be"
    )
    assert alice_api.get(f"{API}/principals?q={'a' * 100_000}").json()["items"] == []
    assert alice_api.get(f"{API}/principals?q=%00").json()["items"] == []
    # LIKE wildcards are literal characters.
    assert alice_api.get(f"{API}/principals?q=%25").json()["items"] == []
    assert alice_api.get(f"{API}/principals?q=_").json()["items"] == []


# --- users -------------------------------------------------------------------------------------


def test_users_me_says_whether_the_user_may_create_catalogs(settings, admin, alice):
    me = client_for(alice).get(f"{API}/users/me").json()
    me.pop("quotas")  # tests/security/test_quotas.py
    assert me == {
        "username": "alice",
        "is_admin": False,
        "teams": [],
        "can": {"create_catalog": True},
    }
    settings.TESSERA_CATALOG_CREATORS = "admins"
    assert client_for(alice).get(f"{API}/users/me").json()["can"] == {"create_catalog": False}
    assert client_for(admin).get(f"{API}/users/me").json()["can"] == {"create_catalog": True}


def test_creating_a_user_joins_existing_teams_case_insensitively(admin, admin_api):
    make_team("analysts")
    response = admin_api.post(
        f"{API}/users",
        {"username": "dora", "password": "long-enough-pass", "teams": ["Analysts", "new-team"]},
    )
    assert response.status_code == 201, response.content
    assert response.json()["teams"] == ["analysts", "new-team"]
    assert Group.objects.filter(name__iexact="analysts").count() == 1
    assert [(e.actor_name, e.principal_name) for e in events("team_create")] == [
        ("admin", "new-team")
    ]
    added = [(e.actor_name, e.principal_name, e.detail["team"]) for e in events("member_add")]
    assert added == [("admin", "dora", "analysts"), ("admin", "dora", "new-team")]


def test_creating_a_user_in_everyone_is_refused(admin_api):
    for teams in (["everyone"], ["ops", "Everyone"]):
        response = admin_api.post(
            f"{API}/users", {"username": "eve", "password": "long-enough-pass", "teams": teams}
        )
        error = assert_error(response, 400, "VALIDATION_ERROR", "team 'everyone' already")
        assert error["details"]["field"] == "teams"
    assert not User.objects.filter(username="eve").exists()
    assert not Group.objects.filter(name="ops").exists()
    assert not team_events()


def test_creating_a_user_with_a_huge_team_name_is_refused(admin_api):
    response = admin_api.post(
        f"{API}/users", {"username": "fay", "password": "long-enough-pass", "teams": ["t" * 200]}
    )
    assert_error(response, 400, "VALIDATION_ERROR", "at most 150 characters")
    assert not User.objects.filter(username="fay").exists()
