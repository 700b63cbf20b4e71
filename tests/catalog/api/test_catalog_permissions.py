"""Who may create, change and drop catalog objects (issue 18): the services check privileges —
``CREATE`` on the parent to create, ``MANAGE`` to change or drop, ``MODIFY`` to write rows,
``READ FILES`` to declare a table over a path — and ``can`` on every object says what the
requesting user holds, computed without a query per row on list pages.

Rewritten for grants (the old rule was "anyone creates anywhere, owners change"): Bob no
longer creates in Alice's catalog without ``CREATE``, and a database's owner now manages what
is inside it."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from audit.models import AuditEvent
from catalog import services
from catalog.models import Catalog, Database, Table
from core.errors import NotFound, PermissionDenied
from tests.conftest import API, PASSWORD, CatalogFactory, assert_error, client_for, simple_schema
from tests.grants_support import share
from tests.schemas import ID_SCHEMA as SCHEMA

pytestmark = pytest.mark.django_db

KEYS = ("modify", "drop", "create", "manage", "select", "write", "execute", "transfer_owner")
C = f"{API}/catalogs/c"
D = f"{C}/databases/d"


def can(*held: str) -> dict[str, bool]:
    return {key: key in held for key in KEYS}


OWNS = {
    "catalog": can("modify", "drop", "create", "manage", "transfer_owner"),
    "database": can("modify", "drop", "create", "manage", "transfer_owner"),
    "table": can("modify", "drop", "manage", "select", "write", "transfer_owner"),
    "view": can("modify", "drop", "manage", "select", "transfer_owner"),
    "function": can("modify", "drop", "manage", "execute", "transfer_owner"),
}
URLS = {
    "catalog": C,
    "database": D,
    "table": f"{D}/tables/t",
    "view": f"{D}/views/v",
    "function": f"{D}/functions/f",
}


@pytest.fixture
def carol(db: None) -> User:
    return User.objects.create_user("carol", password=PASSWORD)


@pytest.fixture
def carol_api(carol: User) -> APIClient:
    return client_for(carol)


@pytest.fixture
def objects(alice: User) -> dict[str, Any]:
    """Alice's private catalog ``c`` with database ``d``: a table, a view and a function."""
    c = services.catalog_create(user=alice, name="c", default_database="d")
    d = c.databases.get()
    t = services.table_create(user=alice, database=d, name="t", schema=SCHEMA)
    v = services.view_create(
        user=alice, database=d, name="v", query="SELECT id FROM c.d.t", derived=SCHEMA
    )
    f = services.function_create(
        user=alice, database=d, name="f", language="python", implementation="udfs.text.upper"
    )
    return {"catalog": c, "database": d, "table": t, "view": v, "function": f}


def drops() -> list[tuple[str, list[str], str]]:
    return [
        (e.actor_name, e.object, e.object_kind) for e in AuditEvent.objects.filter(action="drop")
    ]


# --- can ------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(URLS))
def test_an_object_says_what_its_user_may_do(
    objects: dict[str, Any],
    kind: str,
    alice_api: APIClient,
    admin_api: APIClient,
    bob: User,
    bob_api: APIClient,
) -> None:
    assert alice_api.get(URLS[kind]).json()["can"] == OWNS[kind]
    assert admin_api.get(URLS[kind]).json()["can"] == OWNS[kind]
    share(objects["catalog"], ["USE", "SELECT", "EXECUTE"], user=bob)
    reads = {"table": can("select"), "view": can("select"), "function": can("execute")}
    assert bob_api.get(URLS[kind]).json()["can"] == reads.get(kind, can())
    # ... and the flags tell the truth: what bob is told he may not do, he may not do.
    assert_error(bob_api.delete(URLS[kind]), 403, "PERMISSION_DENIED", "MANAGE")
    assert_error(bob_api.patch(URLS[kind], {"comment": "mine now"}), 403, "PERMISSION_DENIED")
    assert not drops()


@pytest.mark.parametrize("kind", ["table", "view", "function"])
def test_objects_carry_their_owner_next_to_their_creator(
    objects: dict[str, Any], kind: str, alice_api: APIClient
) -> None:
    body = alice_api.get(URLS[kind]).json()
    assert (body["owner"], body["created_by"]) == ("alice", "alice")
    listed = alice_api.get(f"{D}/{kind}s").json()["items"]
    assert [(item["owner"], item["created_by"]) for item in listed] == [("alice", "alice")]


def test_signed_out_callers_learn_nothing(objects: dict[str, Any], anon_api: APIClient) -> None:
    assert_error(anon_api.get(URLS["table"]), 401, "NOT_AUTHENTICATED")


# --- create: CREATE on the parent -------------------------------------------------------------


def test_a_database_needs_create_on_its_catalog(
    objects: dict[str, Any],
    alice_api: APIClient,
    bob: User,
    bob_api: APIClient,
    carol_api: APIClient,
) -> None:
    body = {"name": "bobs"}
    # Carol sees nothing of catalog c: it answers as missing.
    assert_error(
        carol_api.post(f"{C}/databases", body),
        404,
        "NOT_FOUND",
        "A catalog with name [c] does not exist.",
    )
    share(objects["catalog"], ["USE"], user=bob)
    error = assert_error(bob_api.post(f"{C}/databases", body), 403, "PERMISSION_DENIED")
    assert (
        error["message"] == "You need CREATE on catalog `c` to create objects in it; you have USE."
    )
    assert error["details"] == {"kind": "catalog", "privilege": "CREATE", "identifier": ["c"]}
    share(objects["catalog"], ["CREATE"], user=bob)
    made = bob_api.post(f"{C}/databases", body)
    assert made.status_code == 201, made.content
    assert made.json()["owner"] == "bob" and made.json()["can"] == OWNS["database"]
    # The catalog's owner may still drop what bob made in it.
    assert alice_api.delete(f"{C}/databases/bobs").status_code == 204
    assert drops() == [("alice", ["c", "bobs"], "database")]


def test_a_table_or_function_needs_create_on_its_database(
    objects: dict[str, Any], alice_api: APIClient, bob: User, bob_api: APIClient
) -> None:
    share(objects["catalog"], ["USE", "SELECT"], user=bob)
    table = {"name": "bobs", "schema": simple_schema()}
    function = {"name": "bobf", "language": "python", "implementation": "udfs.text.upper"}
    error = assert_error(bob_api.post(f"{D}/tables", table), 403, "PERMISSION_DENIED")
    assert error["message"].startswith("You need CREATE on database `c`.`d` to create objects")
    assert_error(bob_api.post(f"{D}/functions", function), 403, "PERMISSION_DENIED", "CREATE")
    assert not Table.objects.filter(name="bobs").exists()
    share(objects["database"], ["CREATE"], user=bob)
    made = bob_api.post(f"{D}/tables", table)
    assert made.status_code == 201, made.content
    assert made.json()["owner"] == "bob" and made.json()["can"] == OWNS["table"]
    assert bob_api.post(f"{D}/functions", function).status_code == 201
    # The owner of the catalog (and so of the database) manages what bob made inside.
    assert alice_api.get(f"{D}/tables/bobs").json()["can"] == OWNS["table"]
    assert alice_api.delete(f"{D}/functions/bobf").status_code == 204


def test_create_on_the_catalog_passes_to_its_databases(
    objects: dict[str, Any], bob: User, bob_api: APIClient
) -> None:
    share(objects["catalog"], ["CREATE"], user=bob)
    made = bob_api.post(f"{D}/tables", {"name": "bobs", "schema": simple_schema()})
    assert made.status_code == 201, made.content


def test_catalog_creators_may_be_only_admins(
    settings: Any, bob_api: APIClient, admin_api: APIClient
) -> None:
    settings.TESSERA_CATALOG_CREATORS = "admins"
    error = assert_error(bob_api.post(f"{API}/catalogs", {"name": "x"}), 403, "PERMISSION_DENIED")
    assert "TESSERA_CATALOG_CREATORS" in error["message"]
    assert not Catalog.objects.exists()
    assert admin_api.post(f"{API}/catalogs", {"name": "x"}).status_code == 201
    settings.TESSERA_CATALOG_CREATORS = "everyone"
    made = bob_api.post(f"{API}/catalogs", {"name": "y"})
    assert made.status_code == 201 and made.json()["owner"] == "bob"


def test_a_table_over_a_path_needs_read_files_on_its_root(
    settings: Any, storage: Any, alice: User, alice_api: APIClient, admin_api: APIClient
) -> None:
    settings.TESSERA_READ_FILES_FOR = "admins"
    CatalogFactory(alice_api).catalog("c", shared=False)
    (storage.external / "a").mkdir()
    (storage.external / "b").mkdir()
    root = str(storage.external.resolve())
    body = {
        "name": "ext",
        "schema": simple_schema(),
        "options": {"connector": "csv", "path": str(storage.external / "a")},
    }
    url = f"{C}/databases/default/tables"
    error = assert_error(alice_api.post(url, body), 403, "PERMISSION_DENIED")
    assert error["message"] == (
        f"You need READ FILES on storage root '{root}' to read files under it; you have none."
    )
    assert error["details"] == {"kind": "storage", "privilege": "READ FILES", "path": root}
    grant = {"changes": [{"principal": "alice", "principal_type": "user", "add": ["READ FILES"]}]}
    assert admin_api.patch(f"{API}/storage-roots/permissions?path={root}", grant).status_code == 200
    assert alice_api.post(url, body).status_code == 201
    revoke = {
        "changes": [{"principal": "alice", "principal_type": "user", "remove": ["READ FILES"]}]
    }
    assert (
        admin_api.patch(f"{API}/storage-roots/permissions?path={root}", revoke).status_code == 200
    )
    moved = {"options": {"connector": "csv", "path": str(storage.external / "b")}}
    assert_error(alice_api.patch(f"{url}/ext", moved), 403, "PERMISSION_DENIED", "READ FILES")
    assert alice_api.patch(f"{url}/ext", {"comment": "a comment needs no files"}).status_code == 200
    settings.TESSERA_READ_FILES_FOR = "everyone"
    assert alice_api.patch(f"{url}/ext", moved).status_code == 200


# --- change and drop: MANAGE ------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["catalog", "database", "table", "function"])
def test_change_and_drop_need_manage_and_drops_are_audited(
    objects: dict[str, Any], kind: str, bob: User, bob_api: APIClient, carol_api: APIClient
) -> None:
    url = URLS[kind] + ("?cascade=true" if kind in ("catalog", "database") else "")
    assert_error(carol_api.delete(url), 404, "NOT_FOUND", "A catalog with name [c] does not exist.")
    assert_error(carol_api.patch(URLS[kind], {"comment": "x"}), 404, "NOT_FOUND")
    share(objects["catalog"], ["USE", "SELECT", "EXECUTE", "CREATE"], user=bob)
    assert_error(bob_api.patch(URLS[kind], {"comment": "x"}), 403, "PERMISSION_DENIED", "MANAGE")
    share(objects["catalog"], ["MANAGE"], user=bob)
    response = bob_api.patch(URLS[kind], {"comment": "bob was here"})
    assert response.status_code == 200 and response.json()["comment"] == "bob was here"
    if kind == "database":
        # The default database cannot go; make another one the default first.
        services.database_create(
            user=objects["catalog"].owner, catalog=objects["catalog"], name="z"
        )
        assert bob_api.patch(C, {"default_database": "z"}).status_code == 200
    assert bob_api.delete(url).status_code == 204
    path = {"catalog": ["c"], "database": ["c", "d"]}.get(kind, ["c", "d", kind[0]])
    assert drops() == [("bob", path, kind)]
    event = AuditEvent.objects.get(action="drop")
    assert event.securable_key.split(":")[0] == {"table": "relation"}.get(kind, kind)


def test_a_database_owner_manages_what_is_inside(
    objects: dict[str, Any], alice: User, bob: User, bob_api: APIClient
) -> None:
    """New with grants: the owner of a database (not only of its catalog) manages its tables."""
    e = services.database_create(user=alice, catalog=objects["catalog"], name="e")
    services.table_create(user=alice, database=e, name="u", schema=SCHEMA)
    Database.objects.filter(pk=e.pk).update(owner=bob)
    assert bob_api.patch(f"{C}/databases/e/tables/u", {"comment": "mine"}).status_code == 200
    assert bob_api.delete(f"{C}/databases/e/tables/u").status_code == 204


def test_a_failed_drop_changes_nothing_and_writes_no_event(
    objects: dict[str, Any], alice_api: APIClient
) -> None:
    assert_error(alice_api.delete(C), 409, "NOT_EMPTY")
    assert Catalog.objects.filter(name="c").exists() and not drops()


# --- rows: MODIFY -------------------------------------------------------------------------------


def test_writing_rows_needs_modify(objects: dict[str, Any], alice: User, bob: User) -> None:
    table = Table.objects.select_related("database__catalog").get(name="t")
    share(objects["catalog"], ["USE", "SELECT"], user=bob)
    assert services.may_write_table(alice, table)
    assert not services.may_write_table(bob, table)
    with pytest.raises(PermissionDenied) as error:
        services.ensure_can_write_table(bob, table)
    assert error.value.message == (
        "You need MODIFY on table `c`.`d`.`t` to write into it; you have SELECT."
    )
    figures = {"files": 0, "size_bytes": 0, "size_computed_at": "2026-01-01T00:00:00Z"}
    with pytest.raises(PermissionDenied, match="MODIFY"):
        services.table_store_statistics(user=bob, table=table, mode="noscan", figures=figures)
    share(objects["database"], ["MODIFY"], user=bob)
    bob = User.objects.get(pk=bob.pk)  # a new statement loads what he holds again
    assert services.may_write_table(bob, table)
    stored = services.table_store_statistics(user=bob, table=table, mode="noscan", figures=figures)
    assert stored["files"] == 0
    outsider = User.objects.create_user("olga")
    assert not services.may_write_table(outsider, table)
    with pytest.raises(NotFound, match=r"A catalog with name \[c\] does not exist"):
        services.ensure_can_write_table(outsider, table)


# --- lists: can without a query per row ----------------------------------------------------------


def _queries(client: APIClient, path: str) -> tuple[int, list[Any]]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(path)
    assert response.status_code == 200, response.content
    return len(queries), response.json()["items"]


@pytest.mark.parametrize("kind", ["tables", "views", "functions"])
def test_list_pages_compute_can_without_a_query_per_row(
    make: CatalogFactory, alice: User, bob: User, bob_api: APIClient, kind: str
) -> None:
    make.catalog("c")  # shared: everyone reads
    d = Database.objects.select_related("catalog").get(name="default")

    def create(user: User, name: str) -> None:
        if kind == "tables":
            services.table_create(user=user, database=d, name=name, schema=SCHEMA)
        elif kind == "views":
            services.view_create(
                user=user, database=d, name=name, query="SELECT 1 AS id", derived=SCHEMA
            )
        else:
            services.function_create(
                user=user, database=d, name=name, language="python", implementation="m.f.g"
            )

    create(alice, "a0")
    url = f"{C}/databases/default/{kind}"
    few, items = _queries(bob_api, url)
    read = "execute" if kind == "functions" else "select"
    assert [item["can"] for item in items] == [can(read)]
    for n in range(1, 8):
        create(alice, f"a{n}")
    share(d, ["CREATE"], user=bob)
    create(User.objects.get(pk=bob.pk), "b")
    many, items = _queries(bob_api, url)
    assert many == few
    assert [item["can"]["drop"] for item in items] == [False] * 8 + [True]
    assert [item["owner"] for item in items] == ["alice"] * 8 + ["bob"]


def test_catalog_and_database_lists_compute_can_without_a_query_per_row(
    make: CatalogFactory, alice: User, bob: User, bob_api: APIClient
) -> None:
    make.catalog("c0")
    few, _ = _queries(bob_api, f"{API}/catalogs")
    few_dbs, _ = _queries(bob_api, f"{API}/catalogs/c0/databases")
    for n in range(1, 6):
        make.catalog(f"c{n}")
        make.database("c0", f"d{n}")
    CatalogFactory(bob_api).catalog("zbob")
    share("c0", ["CREATE"], user=bob)
    many, items = _queries(bob_api, f"{API}/catalogs")
    assert many == few
    assert [item["can"]["drop"] for item in items] == [False] * 6 + [True]
    many_dbs, dbs = _queries(bob_api, f"{API}/catalogs/c0/databases")
    assert many_dbs == few_dbs and not any(item["can"]["drop"] for item in dbs)
    assert all(item["can"]["create"] for item in dbs)  # CREATE on c0 passes to its databases


def test_a_view_needs_create_before_any_worker_is_asked(objects: dict[str, Any], bob: User) -> None:
    """The refusal comes at once: without ``CREATE`` no analyzer is asked (none runs here)."""
    share(objects["catalog"], ["USE", "SELECT"], user=bob)
    d = Database.objects.select_related("catalog").get(pk=objects["database"].pk)
    with pytest.raises(PermissionDenied, match="You need CREATE on database"):
        services.view_create(user=bob, database=d, name="bv", query="SELECT id FROM c.d.t")
    outsider = User.objects.create_user("olga")
    with pytest.raises(NotFound, match=r"A catalog with name \[c\] does not exist"):
        services.view_create(user=outsider, database=d, name="ov", query="SELECT 1")
    assert not Table.objects.filter(name__in=["bv", "ov"]).exists()


@pytest.mark.parametrize("kind", ["catalog", "database", "view", "function"])
def test_patch_owner_hands_any_object_over(
    objects: dict[str, Any], kind: str, alice_api: APIClient, bob: User, bob_api: APIClient
) -> None:
    if kind == "view":
        # Its new owner must be able to read what it reads (ADR 0012).
        share(objects["table"], ["SELECT"], user=bob)
    response = alice_api.patch(URLS[kind], {"owner": "bob"})
    assert response.status_code == 200, response.content
    assert response.json()["owner"] == "bob"
    event = AuditEvent.objects.get(action="owner")
    assert (event.actor_name, event.principal_name, event.object_kind) == ("alice", "bob", kind)
    assert bob_api.get(URLS[kind]).json()["can"] == OWNS[kind]
    assert bob_api.patch(URLS[kind], {"comment": "bob's"}).status_code == 200
