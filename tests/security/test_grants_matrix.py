"""Every privilege by object kind by route, for the owner, a grantee user, a member of a grantee
team, an outsider and an admin (issue 18, point 6).

Each test builds Alice's catalog ``mx`` (database ``d`` with a table, a view and a function,
and its default database ``e``), gives one grant — a privilege on the object itself, on its
database or on its catalog — to Bob (``grantee``) or to team ``analysts`` (Carl is a
``member``), and asks every route as one principal. The expected outcome comes from the
oracle below, written out literally from Unity Catalog's model as docs/security.md states it
(not imported from ``core.privileges``):

- ``ok``: allowed; ``denied``: ``PERMISSION_DENIED`` (403); ``hidden``: answered exactly as
  a name that does not exist (404 / ``NOT_FOUND``, the same message), or absent from a list.
- A grant on a catalog or database passes ``SELECT``, ``MODIFY``, ``EXECUTE`` and ``MANAGE``
  down to the objects inside; ``USE`` stays on the container (see and enter it).
- Holding anything on an object makes it and its parents' names visible. An object the user
  holds nothing on is refused (``denied``) when they may see its parent, else ``hidden``.

SQL statements are planned for real; none reaches Spark (no worker runs here): an accepted
one stays CREATED, a refused one is FAILED before any Spark.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from django.contrib.auth.models import Group, User

from catalog import services
from core.datatypes import AtomicType
from core.schema import PhysicalColumn, Schema
from tests.conftest import API, PASSWORD, client_for
from tests.grants_support import share

pytestmark = pytest.mark.django_db

ALL = {"USE", "SELECT", "MODIFY", "CREATE", "EXECUTE", "MANAGE"}
OBJECT_KINDS = ("table", "view", "function")
KINDS = ("catalog", "database", *OBJECT_KINDS)
# What each kind holds, and what a catalog or database grant passes down to it.
HOLDS = {
    "catalog": {"USE", "CREATE", "MANAGE"},
    "database": {"USE", "CREATE", "MANAGE"},
    "table": {"USE", "SELECT", "MODIFY", "MANAGE"},
    "view": {"USE", "SELECT", "MANAGE"},
    "function": {"USE", "EXECUTE", "MANAGE"},
}
PASSED_DOWN = {kind: held - {"USE"} for kind, held in HOLDS.items() if kind in OBJECT_KINDS}
NAMES = {"table": "mx_tbl", "view": "mx_vw", "function": "mx_fn"}
TWIN = {"table": "mx_tbz", "view": "mx_vz", "function": "mx_fz"}  # never created


def grants_for(kind: str) -> list[tuple[str, str] | None]:
    """The configurations tried for a target of ``kind``: no grant, then each privilege on
    the object itself (objects), on its database and on its catalog."""
    levels = ["catalog"] if kind == "catalog" else ["catalog", "database"]
    if kind in OBJECT_KINDS:
        levels.append("object")
    out: list[tuple[str, str] | None] = [None]
    for level in levels:
        on = kind if level == "object" else level
        grantable = HOLDS[on] if level == "object" else ALL
        out += [(level, p) for p in sorted(grantable) if p in grantable]
    return out


CASES = [
    (kind, principal, grant)
    for kind in KINDS
    for grant in grants_for(kind)
    for principal in (
        ("owner", "admin", "outsider", "grantee", "member")
        if grant is None
        else ("outsider", "grantee", "member")
    )
]


# --- the oracle ---------------------------------------------------------------------------


def held(kind: str, principal: str, grant: tuple[str, str] | None) -> set[str]:
    if principal in ("owner", "admin"):
        return HOLDS[kind]
    if principal == "outsider" or grant is None:
        return set()
    level, privilege = grant
    if level == "object" or level == kind:
        return {privilege} & HOLDS[kind]
    if kind in OBJECT_KINDS:
        return {privilege} & PASSED_DOWN[kind]
    if kind == "database" and level == "catalog":
        return {privilege} & HOLDS["database"]
    return set()  # a database grant gives nothing on the catalog itself


def visible(kind: str, principal: str, grant: tuple[str, str] | None) -> bool:
    if held(kind, principal, grant):
        return True
    if principal in ("outsider",) or grant is None:
        return False
    level, _ = grant
    # Something granted inside a catalog or database shows its name; any catalog grant
    # shows the catalog's databases.
    return (kind == "catalog") or (
        kind == "database" and level in ("database", "object", "catalog")
    )


def parent_visible(kind: str, principal: str, grant: tuple[str, str] | None) -> bool:
    if kind == "catalog":
        return False
    return visible("database" if kind in OBJECT_KINDS else "catalog", principal, grant)


def expected(kind: str, principal: str, grant: tuple[str, str] | None, route: str) -> str:
    have = held(kind, principal, grant)
    seen = visible(kind, principal, grant)
    if route in ("list", "search", "complete"):
        return "ok" if seen else "hidden"
    needed = {
        "rest_read": None,
        "sql_read": "EXECUTE" if kind == "function" else "SELECT",
        "sql_write": "MODIFY",
        "ctas": "CREATE",
        "ddl": "CREATE" if kind in ("catalog", "database") else "MANAGE",
        "drop": "MANAGE",
    }[route]
    if (needed is None and seen) or needed in have:
        return "ok"
    return "denied" if seen or parent_visible(kind, principal, grant) else "hidden"


ROUTES = {
    "catalog": ("rest_read", "list", "complete", "ddl", "drop"),
    "database": ("rest_read", "list", "complete", "ctas", "ddl", "drop"),
    "table": ("rest_read", "list", "search", "complete", "sql_read", "sql_write", "ddl", "drop"),
    "view": ("rest_read", "list", "search", "complete", "sql_read", "ddl", "drop"),
    "function": ("rest_read", "list", "search", "complete", "sql_read", "ddl", "drop"),
}


# --- the world ----------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _no_worker(monkeypatch: Any, settings: Any, tmp_path: Any) -> None:
    """Accepted statements stay CREATED: nothing reaches the broker."""
    from webapp.celery import app

    settings.RESULTS_DIR = tmp_path / "results"
    monkeypatch.setattr(app, "send_task", lambda *args, **kwargs: None)
    Path(settings.STATIC_ROOT).mkdir(parents=True, exist_ok=True)  # WhiteNoise warns without


@pytest.fixture
def world(db: None) -> dict[str, User]:
    users = {
        "owner": User.objects.create_user("alice", password=PASSWORD),
        "grantee": User.objects.create_user("bob", password=PASSWORD),
        "member": User.objects.create_user("carl", password=PASSWORD),
        "outsider": User.objects.create_user("olga", password=PASSWORD),
        "admin": User.objects.create_user("adam", password=PASSWORD, is_staff=True),
    }
    users["member"].groups.add(Group.objects.create(name="analysts"))
    alice = users["owner"]
    # ``e`` is the default database (which cannot be dropped); the objects are in ``d``.
    catalog = services.catalog_create(user=alice, name="mx", default_database="e")
    d = services.database_create(user=alice, catalog=catalog, name="d")
    schema = Schema(columns=(PhysicalColumn("id", AtomicType("BIGINT")),))
    services.table_create(user=alice, database=d, name=NAMES["table"], schema=schema)
    services.view_create(
        user=alice,
        database=d,
        name=NAMES["view"],
        query=f"SELECT id FROM mx.d.{NAMES['table']}",
        expanded_query=f"SELECT id FROM `mx`.`d`.`{NAMES['table']}`",
        derived=schema,
    )
    services.function_create(
        user=alice,
        database=d,
        name=NAMES["function"],
        language="sql",
        implementation="x + 1",
        parameters=[{"name": "x", "data_type": "BIGINT"}],
        return_type="BIGINT",
    )
    return users


def give(users: dict[str, User], kind: str, grant: tuple[str, str] | None, who: str) -> None:
    if grant is None:
        return
    level, privilege = grant
    from catalog.models import Catalog, Database, Function, Table

    target: Any
    if level == "catalog" or (level == "object" and kind == "catalog"):
        target = Catalog.objects.get(name="mx")
    elif level == "database" or (level == "object" and kind == "database"):
        target = Database.objects.select_related("catalog").get(name="d")
    elif kind == "function":
        target = Function.objects.select_related("database__catalog").get(name=NAMES[kind])
    else:
        target = Table.objects.select_related("database__catalog").get(name=NAMES[kind])
    if who == "member":
        share(target, [privilege], team="analysts")
    else:
        share(target, [privilege], user=users["grantee"])


# --- the routes ---------------------------------------------------------------------------


def rest_url(kind: str, name: str | None = None) -> str:
    if kind == "catalog":
        return f"{API}/catalogs/{name or 'mx'}"
    if kind == "database":
        return f"{API}/catalogs/mx/databases/{name or 'd'}"
    return f"{API}/catalogs/mx/databases/d/{kind}s/{name or NAMES[kind]}"


def from_status(response: Any) -> tuple[str, str]:
    if response.status_code in (200, 201, 204):
        return "ok", ""
    code = response.json()["error"]["code"]
    outcome = {"PERMISSION_DENIED": "denied", "NOT_FOUND": "hidden"}.get(code, f"error:{code}")
    return outcome, response.json()["error"]["message"]


def from_job(job: dict[str, Any]) -> tuple[str, str]:
    if job["status"] != "FAILED":
        return "ok", ""
    error = job["error"]
    code = error["code"]
    outcome = {"PERMISSION_DENIED": "denied", "NOT_FOUND": "hidden"}.get(code, f"error:{code}")
    return outcome, error["message"]


class Asker:
    def __init__(self, user: User) -> None:
        self.api = client_for(user)
        response = self.api.post(f"{API}/sessions", {})
        assert response.status_code == 201, response.content
        self.session = response.json()["id"]

    def sql(self, text: str) -> tuple[str, str]:
        response = self.api.post(f"{API}/sessions/{self.session}/statements", {"sql": text})
        assert response.status_code == 201, response.content
        return from_job(response.json())

    def listed(self, kind: str) -> bool:
        if kind == "catalog":
            url, name = f"{API}/catalogs?page_size=1000", "mx"
        elif kind == "database":
            url, name = f"{API}/catalogs/mx/databases", "d"
        else:
            url, name = f"{API}/catalogs/mx/databases/d/{kind}s", NAMES[kind]
        response = self.api.get(url)
        if response.status_code == 404:
            return False
        assert response.status_code == 200, response.content
        return name in {item["name"] for item in response.json()["items"]}

    def searched(self, kind: str) -> bool:
        response = self.api.get(f"{API}/search?q={NAMES[kind]}&kind={kind}")
        assert response.status_code == 200, response.content
        return any(item["name"] == NAMES[kind] for item in response.json()["items"])

    def completed(self, kind: str) -> bool:
        path = {"catalog": "", "database": "mx."}.get(kind, "mx.d.")
        name = {"catalog": "mx", "database": "d"}.get(kind) or NAMES[kind]
        response = self.api.get(f"{API}/complete?path={quote(path)}&limit=100")
        assert response.status_code == 200, response.content
        return name in {item["label"] for item in response.json()["items"]}

    def point(self, kind: str, route: str, name: str | None = None) -> tuple[str, str]:
        """A route that names one object; ``name`` replaces its last part (the twin)."""
        obj = name or (NAMES.get(kind) if kind in OBJECT_KINDS else None)
        path = f"mx.d.{obj}" if kind in OBJECT_KINDS else ("mx" if kind == "catalog" else "mx.d")
        if kind == "database" and name:
            path = f"mx.{name}"
        if kind == "catalog" and name:
            path = name
        if route == "rest_read":
            return from_status(self.api.get(rest_url(kind, name)))
        if route == "sql_read":
            if kind == "function":
                return self.sql(f"SELECT {path}(1)")
            return self.sql(f"SELECT * FROM {path}")
        if route == "sql_write":
            return self.sql(f"INSERT INTO {path} VALUES (1)")
        if route == "ctas":
            return self.sql(f"CREATE TABLE {path}.mx_new AS SELECT CAST(1 AS BIGINT) AS id")
        if route == "ddl":
            if kind == "catalog":
                return self.sql(f"CREATE DATABASE {path}.mx_newdb")
            if kind == "database":
                return self.sql(f"CREATE TABLE {path}.mx_new2 (id BIGINT)")
            return from_status(self.api.patch(rest_url(kind, name), {"comment": "x"}))
        if route == "drop":
            suffix = "?cascade=true" if kind in ("catalog", "database") else ""
            return from_status(self.api.delete(rest_url(kind, name) + suffix))
        raise AssertionError(route)

    def outcome(self, kind: str, route: str) -> str:
        if route == "list":
            return "ok" if self.listed(kind) else "hidden"
        if route == "search":
            return "ok" if self.searched(kind) else "hidden"
        if route == "complete":
            return "ok" if self.completed(kind) else "hidden"
        got, message = self.point(kind, route)
        if got == "hidden":
            # The outsider learns nothing: the answer is the twin's, the name aside.
            twin = {"catalog": "mz", "database": "ez"}.get(kind) or TWIN[kind]
            real = {"catalog": "mx", "database": "d"}.get(kind) or NAMES[kind]
            twin_got, twin_message = self.point(kind, route, twin)
            if (twin_got, twin_message.replace(twin, real)) != (got, message):
                return f"leaks: {message!r} vs {twin_message!r}"
        return got


@pytest.mark.parametrize(
    ("kind", "principal", "grant"), CASES, ids=[f"{k}-{p}-{g}" for k, p, g in CASES]
)
def test_matrix(
    world: dict[str, User], kind: str, principal: str, grant: tuple[str, str] | None
) -> None:
    give(world, kind, grant, "member" if principal == "member" else "grantee")
    asker = Asker(world[principal])
    mismatches = [
        (route, want, got)
        for route in ROUTES[kind]
        for want in [expected(kind, principal, grant, route)]
        for got in [asker.outcome(kind, route)]
        if want != got
    ]
    assert not mismatches, mismatches
