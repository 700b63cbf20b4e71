"""REST permissions (issue 18, ADR 0011 §4.2; docs/api.md "Permissions"): ``GET|PATCH
…/{object}/permissions`` on the five kinds, ``…/{object}/access``, the storage roots, and the
hostile side — other users, hidden objects answering as missing ones, unknown principals,
inapplicable privileges, huge bodies."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from rest_framework.test import APIClient

from audit.models import AuditEvent
from catalog import services
from catalog.models import EVERYONE, Grant
from tests.conftest import API, PASSWORD, assert_error, client_for
from tests.grants_support import share
from tests.schemas import ID_SCHEMA as SCHEMA

pytestmark = pytest.mark.django_db

C = f"{API}/catalogs/c"
D = f"{C}/databases/d"
URLS = {
    "catalog": C,
    "database": D,
    "table": f"{D}/tables/t",
    "view": f"{D}/views/v",
    "function": f"{D}/functions/f",
}
TWINS = {
    "catalog": f"{API}/catalogs/cz",
    "database": f"{C}/databases/dz",
    "table": f"{D}/tables/tz",
    "view": f"{D}/views/vz",
    "function": f"{D}/functions/fz",
}


@pytest.fixture
def carol(db: None) -> User:
    return User.objects.create_user("carol", password=PASSWORD)


@pytest.fixture
def carol_api(carol: User) -> APIClient:
    return client_for(carol)


@pytest.fixture
def world(alice: User, bob: User) -> dict[str, Any]:
    """Alice's private catalog ``c`` (database ``d`` with table ``t``, view ``v``, function
    ``f``); team ``analysts`` with Bob in it."""
    c = services.catalog_create(user=alice, name="c", default_database="d")
    d = c.databases.get()
    t = services.table_create(user=alice, database=d, name="t", schema=SCHEMA)
    v = services.view_create(
        user=alice, database=d, name="v", query="SELECT id FROM c.d.t", derived=SCHEMA
    )
    f = services.function_create(
        user=alice, database=d, name="f", language="python", implementation="udfs.text.upper"
    )
    bob.groups.add(Group.objects.create(name="analysts"))
    return {"c": c, "d": d, "t": t, "v": v, "f": f}


def patch(client: APIClient, url: str, *changes: dict[str, Any]) -> Any:
    return client.patch(f"{url}/permissions", {"changes": list(changes)})


def change(principal: str, kind: str = "user", add: Any = (), remove: Any = ()) -> dict[str, Any]:
    return {
        "principal": principal,
        "principal_type": kind,
        "add": list(add),
        "remove": list(remove),
    }


# --- happy ------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(URLS))
def test_the_owner_grants_to_a_user_and_a_team_and_sees_them(
    world: dict[str, Any], alice_api: APIClient, kind: str
) -> None:
    privilege = {"catalog": "CREATE", "database": "CREATE", "function": "EXECUTE"}.get(
        kind, "SELECT"
    )
    response = patch(
        alice_api,
        URLS[kind],
        change("bob", add=["USE", privilege]),
        change("analysts", "team", add=[privilege]),
    )
    assert response.status_code == 200, response.content
    body = response.json()
    identifier = {"catalog": ["c"], "database": ["c", "d"]}.get(kind, ["c", "d", kind[0]])
    assert body["object"] == {"kind": kind, "identifier": identifier}
    assert body["owner"] == "alice"
    assert body["privilege_assignments"] == [
        {
            "principal": "analysts",
            "principal_type": "team",
            "privileges": [privilege],
            "inherited_from": None,
        },
        {
            "principal": "bob",
            "principal_type": "user",
            "privileges": ["USE", privilege],
            "inherited_from": None,
        },
    ]
    assert body["can"]["manage"] is True and body["can"]["transfer_owner"] is True
    assert alice_api.get(f"{URLS[kind]}/permissions").json() == body
    events = AuditEvent.objects.filter(action="grant").order_by("id")
    assert [(e.principal_name, e.privileges, e.object) for e in events] == [
        ("bob", ["USE", privilege], identifier),
        ("analysts", [privilege], identifier),
    ]


def test_get_shows_inherited_rows_with_where_they_come_from(
    world: dict[str, Any], alice_api: APIClient
) -> None:
    patch(alice_api, C, change(EVERYONE, "team", add=["USE", "SELECT"]))
    patch(alice_api, D, change("bob", add=["MODIFY", "CREATE"]))
    patch(alice_api, URLS["table"], change("bob", add=["SELECT"]))
    body = alice_api.get(f"{URLS['table']}/permissions").json()
    # USE on the catalog stays on it; CREATE on the database is for what is made in it.
    assert body["privilege_assignments"] == [
        {
            "principal": EVERYONE,
            "principal_type": "team",
            "privileges": ["SELECT"],
            "inherited_from": {"kind": "catalog", "identifier": ["c"]},
        },
        {
            "principal": "bob",
            "principal_type": "user",
            "privileges": ["SELECT"],
            "inherited_from": None,
        },
        {
            "principal": "bob",
            "principal_type": "user",
            "privileges": ["MODIFY"],
            "inherited_from": {"kind": "database", "identifier": ["c", "d"]},
        },
    ]
    assert body["effective"] == ["USE", "SELECT", "MODIFY", "MANAGE"]  # alice owns it
    only = alice_api.get(f"{URLS['table']}/permissions?principal=everyone&principal_type=team")
    assert [a["principal"] for a in only.json()["privilege_assignments"]] == [EVERYONE]


def test_without_manage_one_sees_only_ones_own_rows(
    world: dict[str, Any], alice_api: APIClient, bob_api: APIClient
) -> None:
    User.objects.create_user("dave")
    patch(
        alice_api,
        URLS["table"],
        change("bob", add=["SELECT"]),
        change("analysts", "team", add=["MODIFY"]),
        change("dave", add=["SELECT"]),
    )
    body = bob_api.get(f"{URLS['table']}/permissions").json()
    assert [(a["principal"], a["privileges"]) for a in body["privilege_assignments"]] == [
        ("analysts", ["MODIFY"]),
        ("bob", ["SELECT"]),
    ]
    assert body["effective"] == ["SELECT", "MODIFY"]
    assert body["can"] == {
        "modify": False,
        "drop": False,
        "create": False,
        "manage": False,
        "select": True,
        "write": True,
        "execute": False,
        "transfer_owner": False,
    }


def test_a_grant_to_everyone_reaches_a_user_in_no_team(
    world: dict[str, Any], alice_api: APIClient, carol_api: APIClient
) -> None:
    assert_error(carol_api.get(f"{URLS['table']}/permissions"), 404, "NOT_FOUND")
    response = patch(alice_api, URLS["table"], change("Everyone", "team", add=["SELECT"]))
    assert response.status_code == 200, response.content
    body = carol_api.get(f"{URLS['table']}/permissions").json()
    assert body["effective"] == ["SELECT"]
    assert body["privilege_assignments"][0]["principal"] == EVERYONE
    # Removed again, carol sees nothing of it.
    patch(alice_api, URLS["table"], change(EVERYONE, "team", remove=["SELECT"]))
    assert_error(carol_api.get(f"{URLS['table']}/permissions"), 404, "NOT_FOUND")


def test_patch_is_idempotent_and_audits_only_changes(
    world: dict[str, Any], alice_api: APIClient
) -> None:
    for _ in range(2):
        response = patch(alice_api, URLS["table"], change("bob", add=["SELECT"]))
        assert response.status_code == 200
    response = patch(alice_api, URLS["table"], change("bob", remove=["MODIFY", "SELECT"]))
    assert response.status_code == 200 and response.json()["privilege_assignments"] == []
    response = patch(alice_api, URLS["table"], change("bob", remove=["SELECT"]))
    assert response.status_code == 200
    events = (
        AuditEvent.objects.exclude(object_kind="token")
        .exclude(action__in=("create", "alter"))
        .order_by("id")
    )
    assert [(e.action, e.privileges) for e in events] == [
        ("grant", ["SELECT"]),
        ("revoke", ["SELECT"]),
    ]


def test_a_manager_grants_and_the_grantee_then_may(
    world: dict[str, Any], alice_api: APIClient, bob_api: APIClient, carol_api: APIClient
) -> None:
    """MANAGE on the database (to Bob's team) lets Bob grant on the table inside."""
    patch(alice_api, D, change("analysts", "team", add=["MANAGE"]))
    response = patch(bob_api, URLS["table"], change("carol", add=["SELECT"]))
    assert response.status_code == 200, response.content
    assert carol_api.get(f"{URLS['table']}/permissions").json()["effective"] == ["SELECT"]
    event = AuditEvent.objects.filter(action="grant").latest("id")
    assert (event.actor_name, event.principal_name) == ("bob", "carol")


# --- hostile ----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(URLS))
def test_a_hidden_object_answers_as_a_missing_one(
    world: dict[str, Any], carol_api: APIClient, kind: str
) -> None:
    for method in ("get", "patch"):
        for suffix in ("permissions", "access"):
            if method == "patch" and suffix == "access":
                continue
            call = getattr(carol_api, method)
            body = {"changes": [change("carol", add=["MANAGE"])]} if method == "patch" else None
            hidden = call(f"{URLS[kind]}/{suffix}", body)
            missing = call(f"{TWINS[kind]}/{suffix}", body)
            assert_error(hidden, 404, "NOT_FOUND")
            twin = {"catalog": "cz"}.get(kind)
            expected = missing.json()
            if twin:
                expected["error"]["message"] = expected["error"]["message"].replace("cz", "c")
            assert hidden.json() == expected
    assert (
        not Grant.objects.exists()
        and not AuditEvent.objects.exclude(object_kind="token")
        .exclude(action__in=("create", "alter"))
        .exists()
    )


@pytest.mark.parametrize("kind", ["table", "view", "function"])
def test_a_name_in_a_database_one_may_see_answers_denied_or_missing_alike(
    world: dict[str, Any], bob_api: APIClient, kind: str
) -> None:
    """Bob holds USE on database d: the twin is missing, the real object he holds nothing on
    is refused (Unity Catalog: who may use a schema learns its names)."""
    share(world["d"], ["USE"], user=User.objects.get(username="bob"))
    assert_error(bob_api.get(f"{TWINS[kind]}/permissions"), 404, "NOT_FOUND", "does not exist")
    error = assert_error(bob_api.get(f"{URLS[kind]}/permissions"), 403, "PERMISSION_DENIED")
    assert error["message"].startswith(f"You need USE on {kind} `c`.`d`.`{kind[0]}`")


@pytest.mark.parametrize("kind", list(URLS))
def test_a_non_manager_patch_is_refused_and_changes_nothing(
    world: dict[str, Any], bob_api: APIClient, kind: str
) -> None:
    target = {"catalog": world["c"], "database": world["d"]}.get(kind) or world[kind[0]]
    share(target, ["USE"], user=User.objects.get(username="bob"))
    response = patch(bob_api, URLS[kind], change("bob", add=["MANAGE"]))
    error = assert_error(response, 403, "PERMISSION_DENIED", "MANAGE", "you have USE")
    assert error["details"]["privilege"] == "MANAGE"
    assert Grant.objects.filter(privilege="MANAGE").count() == 0
    assert (
        not AuditEvent.objects.exclude(object_kind="token")
        .exclude(action__in=("create", "alter"))
        .exists()
    )
    assert_error(bob_api.get(f"{URLS[kind]}/access"), 403, "PERMISSION_DENIED", "MANAGE")


def test_unknown_principal_is_404_naming_the_field(
    world: dict[str, Any], alice_api: APIClient
) -> None:
    response = patch(
        alice_api,
        URLS["table"],
        change("bob", add=["SELECT"]),
        change("ghost", "team", add=["SELECT"]),
    )
    error = assert_error(response, 404, "NOT_FOUND", "There is no team named 'ghost'.")
    assert error["details"]["field"] == "changes[1].principal"
    assert not Grant.objects.exists()  # bob's valid change was not applied either
    response = alice_api.get(f"{URLS['table']}/permissions?principal=ghost")
    assert assert_error(response, 404, "NOT_FOUND")["details"]["field"] == "principal"


@pytest.mark.parametrize(
    ("kind", "add", "field", "fragment"),
    [
        (
            "table",
            ["SELECT", "EXECUTE"],
            "changes[0].add[1]",
            "EXECUTE cannot be granted on a table",
        ),
        ("view", ["MODIFY"], "changes[0].add[0]", "on a view you may grant USE, SELECT, MANAGE"),
        ("function", ["USE", "SELECT"], "changes[0].add[1]", "SELECT cannot be granted"),
        ("catalog", ["READ FILES"], "changes[0].add[0]", "READ FILES cannot be granted"),
        ("table", ["FLY"], "changes[0].add[0]", "Unknown privilege 'FLY'"),
        ("table", [7], "changes[0].add[0]", "must be a privilege name"),
    ],
)
def test_an_inapplicable_privilege_is_400_naming_the_field(
    world: dict[str, Any],
    alice_api: APIClient,
    kind: str,
    add: list[Any],
    field: str,
    fragment: str,
) -> None:
    response = patch(alice_api, URLS[kind], {"principal": "bob", "add": add})
    error = assert_error(response, 400, "VALIDATION_ERROR", fragment)
    assert error["details"]["field"] == field
    assert not Grant.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "changes"),
        ({"changes": "SELECT"}, "changes"),
        ({"changes": ["bob"]}, "changes[0]"),
        ({"changes": [{"principal_type": "user"}]}, "changes[0].principal"),
        (
            {"changes": [{"principal": "bob", "principal_type": "role"}]},
            "changes[0].principal_type",
        ),
        ({"changes": [{"principal": "bob", "add": "SELECT"}]}, "changes[0].add"),
        ({"changes": [{"principal": "bob", "grant": ["SELECT"]}]}, "changes[0].grant"),
        ({"changes": [{"principal": "bob", "add": ["SELECT"] * 17}]}, "changes[0].add"),
    ],
)
def test_malformed_bodies_are_400_naming_the_field(
    world: dict[str, Any], alice_api: APIClient, body: dict[str, Any], field: str
) -> None:
    response = alice_api.patch(f"{URLS['table']}/permissions", body)
    assert assert_error(response, 400, "VALIDATION_ERROR")["details"]["field"] == field


def test_a_ten_thousand_entry_changes_list_is_refused_cleanly(
    world: dict[str, Any], alice_api: APIClient
) -> None:
    changes = [change("bob", add=["SELECT"]) for _ in range(10_000)]
    started = time.monotonic()
    response = alice_api.patch(f"{URLS['table']}/permissions", {"changes": changes})
    assert time.monotonic() - started < 5
    error = assert_error(response, 400, "VALIDATION_ERROR", "at most 100 per request")
    assert error["details"] == {"field": "changes"}
    assert (
        not Grant.objects.exists()
        and not AuditEvent.objects.exclude(object_kind="token")
        .exclude(action__in=("create", "alter"))
        .exists()
    )


def test_removing_an_inherited_grant_says_where_to_revoke_it(
    world: dict[str, Any], alice_api: APIClient
) -> None:
    patch(alice_api, C, change("bob", add=["SELECT"]))
    response = patch(alice_api, URLS["view"], change("bob", remove=["USE", "SELECT"]))
    error = assert_error(
        response,
        400,
        "VALIDATION_ERROR",
        "SELECT on view `c`.`d`.`v` is granted to user bob on catalog `c`; revoke it there.",
    )
    assert error["details"]["field"] == "changes[0].remove[1]"


def test_odd_names_are_missing_not_errors(world: dict[str, Any], alice_api: APIClient) -> None:
    for url in (
        f"{API}/catalogs/{'x' * 5000}/permissions",
        f"{API}/catalogs/c%00/permissions",
        f"{D}/tables/..%2F..%2Fetc/permissions",
    ):
        response = alice_api.get(url)
        assert response.status_code == 404, (url, response.content[:300])
        assert response.json()["error"]["code"] == "NOT_FOUND"
    # A NUL is refused where the body enters (core.storable), naming the field.
    response = patch(alice_api, URLS["table"], change("bob\x00", add=["SELECT"]))
    error = assert_error(response, 400, "VALIDATION_ERROR")
    assert error["details"]["field"] == "changes[0].principal"


def test_a_route_names_its_kind_exactly(world: dict[str, Any], alice_api: APIClient) -> None:
    assert_error(
        alice_api.get(f"{D}/tables/v/permissions"),
        404,
        "NOT_FOUND",
        "Table `c`.`d`.`v` does not exist; `c`.`d`.`v` is a view.",
    )
    assert_error(
        alice_api.get(f"{D}/views/t/permissions"),
        404,
        "NOT_FOUND",
        "View `c`.`d`.`t` does not exist; `c`.`d`.`t` is a table.",
    )


def test_signed_out_callers_are_401(world: dict[str, Any], anon_api: APIClient) -> None:
    assert_error(anon_api.get(f"{URLS['table']}/permissions"), 401, "NOT_AUTHENTICATED")
    assert_error(anon_api.get(f"{API}/storage-roots"), 401, "NOT_AUTHENTICATED")


# --- recent access ------------------------------------------------------------------------------


def test_access_lists_the_objects_events_newest_first_in_pages(
    world: dict[str, Any], alice_api: APIClient
) -> None:
    for name in ("bob", "bob", "bob"):
        patch(alice_api, URLS["table"], change(name, add=["SELECT"]))
        patch(alice_api, URLS["table"], change(name, remove=["SELECT"]))
    patch(alice_api, URLS["view"], change("bob", add=["SELECT"]))  # another object's
    first = alice_api.get(f"{URLS['table']}/access?page_size=4").json()
    assert [e["action"] for e in first["items"]] == ["revoke", "grant", "revoke", "grant"]
    item = first["items"][0]
    assert item["actor"] == "alice" and item["object"] == ["c", "d", "t"]
    assert item["principal"] == {"type": "user", "name": "bob"}
    assert item["privileges"] == ["SELECT"] and item["job"] is None
    second = alice_api.get(
        f"{URLS['table']}/access?page_size=4&page_token={first['next_page_token']}"
    ).json()
    # The oldest: the table's creation (audited since create events exist).
    assert [e["action"] for e in second["items"]] == ["revoke", "grant", "create"]
    assert second["next_page_token"] is None
    ids = [e["id"] for e in first["items"] + second["items"]]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == 7
    response = alice_api.get(f"{URLS['table']}/access?page_token=bm9wZQ")
    assert_error(response, 400, "VALIDATION_ERROR")


# --- ownership through PATCH ------------------------------------------------------------------


def test_patch_owner_hands_a_table_over(
    world: dict[str, Any], alice_api: APIClient, bob_api: APIClient, carol_api: APIClient
) -> None:
    response = alice_api.patch(URLS["table"], {"owner": "bob"})
    assert response.status_code == 200, response.content
    assert response.json()["owner"] == "bob" and response.json()["created_by"] == "alice"
    event = AuditEvent.objects.get(action="owner")
    assert (event.actor_name, event.principal_name, event.object) == (
        "alice",
        "bob",
        ["c", "d", "t"],
    )
    assert bob_api.get(f"{URLS['table']}/permissions").json()["owner"] == "bob"
    # Bob, the new owner, may grant on it and hand it on; carol, given MANAGE, may not.
    assert patch(bob_api, URLS["table"], change("carol", add=["MANAGE"])).status_code == 200
    error = assert_error(
        carol_api.patch(URLS["table"], {"owner": "carol"}), 403, "PERMISSION_DENIED"
    )
    assert "Only the owner of table `c`.`d`.`t`" in error["message"]
    assert_error(
        alice_api.patch(URLS["table"], {"owner": "ghost"}),
        404,
        "NOT_FOUND",
        "no user named 'ghost'",
    )
    assert AuditEvent.objects.filter(action="owner").count() == 1


# --- storage roots ----------------------------------------------------------------------------


def test_storage_root_grants_are_for_admins(
    settings: Any, storage: Any, admin_api: APIClient, bob_api: APIClient
) -> None:
    settings.TESSERA_READ_FILES_FOR = "admins"
    root = str(storage.external.resolve())
    assert bob_api.get(f"{API}/storage-roots").json() == {"items": [], "next_page_token": None}
    listed = admin_api.get(f"{API}/storage-roots").json()["items"]
    assert listed == [{"path": root, "read_files": True, "privilege_assignments": []}]
    url = f"{API}/storage-roots/permissions?path={root}"
    assert_error(
        bob_api.patch(url, {"changes": [change("bob", add=["READ FILES"])]}),
        403,
        "PERMISSION_DENIED",
    )
    assert_error(bob_api.get(url), 403, "PERMISSION_DENIED")
    response = admin_api.patch(url, {"changes": [change("bob", add=["READ FILES"])]})
    assert response.status_code == 200, response.content
    assert response.json()["object"] == {"kind": "storage", "path": root}
    assert response.json()["privilege_assignments"][0]["privileges"] == ["READ FILES"]
    assert bob_api.get(f"{API}/storage-roots").json()["items"] == [
        {"path": root, "read_files": True}
    ]
    assert_error(
        admin_api.get(f"{API}/storage-roots/permissions?path={root}/inner"),
        400,
        "VALIDATION_ERROR",
        "is not a storage root",
    )
    assert_error(admin_api.get(f"{API}/storage-roots/permissions"), 400, "VALIDATION_ERROR")
    assert AuditEvent.objects.get(action="grant").object == [root]
