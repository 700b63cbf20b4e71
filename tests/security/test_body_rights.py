"""Bodies and ownership (ADR 0012): a view's query and a SQL function's body run with their
owner's rights, so they are judged with the rights of whoever makes them run.

Alice owns catalog ``acat`` with a SQL function ``salt()`` and tables ``t`` (Bob may read it)
and ``secret``; Bob may use ``acat`` and read ``t``, nothing else, and owns catalog ``bcat``.
The reproduced escalation: Bob stores a body calling ``salt()`` in his own catalog and hands
the function to Alice, or hands a harmless function over and changes its body afterwards;
either way ``SELECT bcat.default.f1()`` ran ``salt()`` with Alice's rights. Each path is
replayed over REST and SQL and must end refused with nothing stored or changed, the owner
unchanged and a ``denied`` audit event; a body both sides may reach is handed over and runs;
a body its owner can no longer reach fails at planning naming the object.

The web side only (no worker: an accepted statement stays CREATED, a refused one FAILS
before any Spark), except the last test, which runs the handed-over function on Spark.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.contrib.auth.models import User

from audit.models import AuditEvent
from catalog import grants as catalog_grants
from catalog import services
from catalog.access import function_securable, relation_securable
from catalog.models import Catalog, Function, Table
from jobs.models import Job
from tests.conftest import API, PASSWORD, assert_error, client_for
from tests.grants_support import share
from tests.schemas import ID_SCHEMA as SCHEMA

BCAT = f"{API}/catalogs/bcat/databases/default"
ACAT = f"{API}/catalogs/acat/databases/default"
SALTED = "acat.default.salt()"


@pytest.fixture
def _no_worker(monkeypatch: Any, settings: Any, tmp_path: Any) -> None:
    """Accepted statements stay CREATED: nothing reaches the broker."""
    from webapp.celery import app

    settings.RESULTS_DIR = tmp_path / "results"
    monkeypatch.setattr(app, "send_task", lambda *args, **kwargs: None)


def _scene() -> dict[str, User]:
    users = {
        name: User.objects.create_user(name, password=PASSWORD)
        for name in ("alice", "bob", "carol", "olga")
    }
    users["admin"] = User.objects.create_superuser("root", password=PASSWORD)
    alice, bob = users["alice"], users["bob"]
    acat = services.catalog_create(user=alice, name="acat")
    a = acat.databases.get()
    services.function_create(
        user=alice,
        database=a,
        name="salt",
        language="sql",
        implementation="'pepper'",
        return_type="STRING",
    )
    t = services.table_create(user=alice, database=a, name="t", schema=SCHEMA)
    services.table_create(user=alice, database=a, name="secret", schema=SCHEMA)
    share(acat, ["USE"], user=bob)
    share(t, ["SELECT"], user=bob)
    services.catalog_create(user=bob, name="bcat")
    return users


@pytest.fixture
def world(db: None, _no_worker: None) -> dict[str, User]:
    return _scene()


class Asker:
    """A user's REST client and SQL session."""

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

    def refused(self, text: str, code: str) -> dict[str, Any]:
        job = self.sql(text)
        assert job["status"] == "FAILED", (text, job)
        assert job["error"]["code"] == code, (text, job["error"])
        return dict(job["error"])

    def accepted(self, text: str) -> dict[str, Any]:
        job = self.sql(text)
        assert job["status"] in ("CREATED", "FINISHED"), (text, job)
        return job


def _function(name: str) -> Function:
    return Function.objects.select_related("database__catalog", "owner").get(name=name)


def _view(name: str) -> Table:
    return Table.objects.select_related("database__catalog", "owner").get(name=name)


def _create(api: Any, url: str, name: str, body: str) -> Any:
    return api.post(
        f"{url}/functions",
        {"name": name, "language": "sql", "implementation": body, "return_type": "STRING"},
    )


def _stored_before_this_rule(name: str, body: str) -> None:
    """A body written before bodies were planned with the changer's rights."""
    Function.objects.filter(name=name).update(implementation=body)


def _denied_events(**where: Any) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(action="denied", **where).order_by("id"))


# --- the reproduced escalation, refused -------------------------------------------------------


def test_bob_may_not_call_salt_himself(world: dict[str, User]) -> None:
    error = Asker(world["bob"]).refused(f"SELECT {SALTED}", "PERMISSION_DENIED")
    assert "EXECUTE" in error["message"] and "salt" in error["message"]


def test_rest_a_body_calling_what_its_creator_may_not_call_is_not_stored(
    world: dict[str, User],
) -> None:
    bob = client_for(world["bob"])
    error = assert_error(
        _create(bob, BCAT, "f1", SALTED), 403, "PERMISSION_DENIED", "EXECUTE", "`salt`"
    )
    assert error["details"]["refused"] == "body"
    f1 = {"kind": "function", "identifier": ["bcat", "default", "f1"]}
    assert error["details"]["object"] == f1
    assert not Function.objects.filter(name="f1").exists()
    (event,) = _denied_events(actor=world["bob"])
    assert event.object == ["bcat", "default", "f1"] and event.object_kind == "function"
    assert event.detail["refused"] == "body" and event.privileges == ["EXECUTE"]


def test_rest_handing_a_stored_escalation_to_its_victim_is_refused(
    world: dict[str, User],
) -> None:
    """Path 1: a body that calls ``salt()`` (stored before this rule) given to Alice."""
    bob = client_for(world["bob"])
    assert _create(bob, BCAT, "f1", "'harmless'").status_code == 201
    _stored_before_this_rule("f1", SALTED)
    error = assert_error(
        bob.patch(f"{BCAT}/functions/f1", {"owner": "alice"}),
        403,
        "PERMISSION_DENIED",
        "Function `bcat`.`default`.`f1` cannot be given to alice",
        "function `acat`.`default`.`salt`",
        "you do not hold EXECUTE",
    )
    assert error["details"]["refused"] == "owner" and error["details"]["principal"] == "bob"
    assert error["details"]["reaches"] == {
        "kind": "function",
        "identifier": ["acat", "default", "salt"],
        "privilege": "EXECUTE",
    }
    assert _function("f1").owner == world["bob"]
    assert not AuditEvent.objects.filter(action="owner").exists()
    (event,) = _denied_events(actor=world["bob"])
    f1 = function_securable(_function("f1"))
    assert (event.securable_key, event.object) == (f1.key, ["bcat", "default", "f1"])
    assert event.detail["refused"] == "owner" and event.detail["new_owner"] == "alice"
    # And the function, still Bob's, does not run salt() for anyone.
    error = Asker(world["bob"]).refused("SELECT bcat.default.f1()", "PERMISSION_DENIED")
    assert "`f1`" in error["message"] and "bob needs EXECUTE" in error["message"]


def test_rest_changing_the_body_after_handing_it_over_is_refused(world: dict[str, User]) -> None:
    """Path 2: a harmless body handed to Alice, then changed by Bob (still MANAGE on it as the
    owner of its catalog)."""
    bob = client_for(world["bob"])
    assert _create(bob, BCAT, "f1", "'harmless'").status_code == 201
    response = bob.patch(f"{BCAT}/functions/f1", {"owner": "alice"})
    assert response.status_code == 200, response.content
    error = assert_error(
        bob.patch(f"{BCAT}/functions/f1", {"implementation": SALTED}),
        403,
        "PERMISSION_DENIED",
        "EXECUTE",
        "`salt`",
    )
    assert error["details"]["refused"] == "body"
    f1 = _function("f1")
    assert (f1.implementation, f1.owner) == ("'harmless'", world["alice"])
    (event,) = _denied_events(actor=world["bob"])
    assert event.securable_key == function_securable(f1).key
    assert event.detail["refused"] == "body"
    # One PATCH changing both the body and the owner is judged on the new body: refused too.
    assert _create(bob, BCAT, "f2", "'harmless'").status_code == 201
    both = bob.patch(f"{BCAT}/functions/f2", {"implementation": SALTED, "owner": "alice"})
    assert_error(both, 403, "PERMISSION_DENIED", "`salt`")
    f2 = _function("f2")
    assert (f2.implementation, f2.owner) == ("'harmless'", world["bob"])


def test_sql_create_function_calling_what_its_creator_may_not_call_is_refused(
    world: dict[str, User],
) -> None:
    bob = Asker(world["bob"])
    error = bob.refused(
        f"CREATE FUNCTION bcat.default.f1() RETURNS STRING RETURN {SALTED}", "PERMISSION_DENIED"
    )
    assert "EXECUTE" in error["message"] and "`salt`" in error["message"]
    assert not Function.objects.filter(name="f1").exists()
    job = Job.objects.filter(user=world["bob"]).latest("created_at")
    assert AuditEvent.objects.filter(action="denied", job_id=job.pk).exists()


@pytest.mark.parametrize("kind", ["FUNCTION", "TABLE"])
def test_sql_alter_owner_of_a_stored_escalation_is_refused(
    world: dict[str, User], kind: str
) -> None:
    """``ALTER FUNCTION … OWNER TO`` (and the same for a view, below) runs the same check as
    REST; ``TABLE`` naming the function is refused as any wrong kind is."""
    bob = Asker(world["bob"])
    assert _create(client_for(world["bob"]), BCAT, "f1", "'harmless'").status_code == 201
    _stored_before_this_rule("f1", SALTED)
    if kind == "TABLE":
        bob.refused("ALTER TABLE bcat.default.f1 OWNER TO USER alice", "NOT_FOUND")
        assert _function("f1").owner == world["bob"]
        return
    error = bob.refused("ALTER FUNCTION bcat.default.f1 OWNER TO USER alice", "PERMISSION_DENIED")
    assert "cannot be given to alice" in error["message"] and "`salt`" in error["message"]
    assert _function("f1").owner == world["bob"]
    job = Job.objects.filter(user=world["bob"]).latest("created_at")
    (event,) = _denied_events(job_id=job.pk)
    assert event.object == ["bcat", "default", "f1"] and event.detail["refused"] == "owner"
    assert not AuditEvent.objects.filter(action="owner").exists()


def test_a_hidden_object_in_a_body_answers_as_missing(world: dict[str, User]) -> None:
    """Olga may not see ``acat``: her body calling ``salt()`` is refused exactly as one
    calling a function that does not exist."""
    olga = world["olga"]
    services.catalog_create(user=olga, name="ocat")
    api = client_for(olga)
    url = f"{API}/catalogs/ocat/databases/default"
    hidden = assert_error(_create(api, url, "f", SALTED), 404, "NOT_FOUND")
    missing = assert_error(_create(api, url, "f", "acat.default.nosuch()"), 404, "NOT_FOUND")
    assert hidden["message"] == missing["message"].replace("nosuch", "salt")
    assert not Function.objects.filter(name="f").exists()


# --- the new owner must reach the body too ----------------------------------------------------


def _alice_view(name: str, query: str) -> Table:
    alice = world_user("alice")
    database = Catalog.objects.get(name="acat").databases.get()
    return services.view_create(
        user=alice, database=database, name=name, query=query, derived=SCHEMA
    )


def world_user(name: str) -> User:
    return User.objects.get(username=name)


@pytest.mark.parametrize("actor", ["alice", "admin"])
def test_rest_a_view_is_not_given_to_whom_may_not_read_its_tables(
    world: dict[str, User], actor: str
) -> None:
    """Alice (or an admin) giving Bob a view over ``secret``: Bob would read it through the
    view he owns. The giver's own rights do not save it."""
    _alice_view("sv", "SELECT id FROM acat.default.secret")
    api = client_for(world[actor])
    error = assert_error(
        api.patch(f"{ACAT}/views/sv", {"owner": "bob"}),
        403,
        "PERMISSION_DENIED",
        "View `acat`.`default`.`sv` cannot be given to bob",
        "table `acat`.`default`.`secret`, and bob does not hold SELECT on it",
    )
    assert error["details"]["principal"] == "bob" and error["details"]["new_owner"] == "bob"
    assert _view("sv").owner == world["alice"]
    (event,) = _denied_events(actor=world[actor])
    assert event.securable_key == relation_securable(_view("sv")).key
    assert (event.detail["refused"], event.detail["principal"]) == ("owner", "bob")


def test_sql_a_view_or_function_is_not_given_to_whom_may_not_reach_its_body(
    world: dict[str, User],
) -> None:
    alice = Asker(world["alice"])
    _alice_view("sv", "SELECT id FROM acat.default.secret")
    error = alice.refused("ALTER VIEW acat.default.sv OWNER TO USER bob", "PERMISSION_DENIED")
    assert "bob does not hold SELECT" in error["message"] and "`secret`" in error["message"]
    assert _view("sv").owner == world["alice"]
    services.function_create(
        user=world["alice"],
        database=Catalog.objects.get(name="acat").databases.get(),
        name="salty",
        language="sql",
        implementation="upper(salt())",
        return_type="STRING",
    )
    error = alice.refused(
        "ALTER FUNCTION acat.default.salty OWNER TO USER bob", "PERMISSION_DENIED"
    )
    assert "bob does not hold EXECUTE" in error["message"] and "`salt`" in error["message"]
    assert _function("salty").owner == world["alice"]
    assert len(_denied_events(actor=world["alice"])) == 2
    assert not AuditEvent.objects.filter(action="owner").exists()


def test_rest_a_view_over_what_its_creator_may_not_read_is_refused_before_any_worker(
    world: dict[str, User],
) -> None:
    bob = client_for(world["bob"])
    response = bob.post(
        f"{BCAT}/views", {"name": "peek", "query": "SELECT id FROM acat.default.secret"}
    )
    error = assert_error(response, 403, "PERMISSION_DENIED", "SELECT", "`secret`")
    assert error["details"]["refused"] == "body"
    assert not Table.objects.filter(name="peek").exists()
    (event,) = _denied_events(actor=world["bob"])
    assert event.object == ["bcat", "default", "peek"] and event.detail["refused"] == "body"


# --- the happy path ---------------------------------------------------------------------------


def test_a_body_both_sides_may_reach_is_handed_over_and_runs(world: dict[str, User]) -> None:
    alice, bob = world["alice"], world["bob"]
    _alice_view("tv", "SELECT id FROM acat.default.t")
    response = client_for(alice).patch(f"{ACAT}/views/tv", {"owner": "bob"})
    assert response.status_code == 200, response.content
    assert _view("tv").owner == bob
    share(_function("salt"), ["EXECUTE"], user=bob)
    api = client_for(bob)
    assert _create(api, BCAT, "f1", SALTED).status_code == 201
    assert api.patch(f"{BCAT}/functions/f1", {"owner": "alice"}).status_code == 200
    assert _function("f1").owner == alice
    events = AuditEvent.objects.filter(action="owner").values_list("object", "principal_name")
    assert sorted(events) == [
        (["acat", "default", "tv"], "bob"),
        (["bcat", "default", "f1"], "alice"),
    ]
    assert not _denied_events()
    asker = Asker(bob)
    job = asker.accepted("SELECT bcat.default.f1() AS s, id FROM acat.default.tv")
    checked = {(a["identifier"][-1], a["privilege"]) for a in Job.objects.get(pk=job["id"]).access}
    assert {("f1", "EXECUTE"), ("salt", "EXECUTE"), ("tv", "SELECT"), ("t", "SELECT")} <= checked


# --- a body its owner can no longer reach -----------------------------------------------------


def _revoke(owner: User, securable: Any, privilege: str, user: User) -> None:
    catalog_grants.revoke(
        user=owner,
        securable=securable,
        privileges=[privilege],
        principal=catalog_grants.find_principal("user", user.get_username()),
    )


def test_a_revoked_grant_fails_a_stored_body_at_planning_naming_the_object(
    world: dict[str, User],
) -> None:
    alice, bob, carol = world["alice"], world["bob"], world["carol"]
    salt = _function("salt")
    share(salt, ["EXECUTE"], user=bob)
    api = client_for(bob)
    assert _create(api, BCAT, "f1", SALTED).status_code == 201
    bv = services.view_create(
        user=bob,
        database=Catalog.objects.get(name="bcat").databases.get(),
        name="bv",
        query="SELECT id FROM acat.default.t",
        derived=SCHEMA,
    )
    share(bv, ["SELECT"], user=carol)
    share(_function("f1"), ["EXECUTE"], user=carol)
    share(Catalog.objects.get(name="bcat"), ["USE"], user=carol)
    for who in (bob, carol):
        Asker(who).accepted("SELECT bcat.default.f1(), id FROM bcat.default.bv")

    _revoke(alice, function_securable(salt), "EXECUTE", bob)
    _revoke(alice, relation_securable(_view("t")), "SELECT", bob)
    for who in (bob, carol):
        asker = Asker(who)
        error = asker.refused("SELECT bcat.default.f1()", "PERMISSION_DENIED")
        assert error["message"].startswith("Function `bcat`.`default`.`f1` cannot be called")
        assert "its owner bob needs EXECUTE on function `acat`.`default`.`salt`" in error["message"]
        assert error["details"]["via"]["identifier"] == ["bcat", "default", "f1"]
        error = asker.refused("SELECT * FROM bcat.default.bv", "PERMISSION_DENIED")
        assert error["message"].startswith("View `bcat`.`default`.`bv` cannot be read")
        assert "its owner bob needs SELECT on table `acat`.`default`.`t`" in error["message"]
        assert error["details"]["via"]["identifier"] == ["bcat", "default", "bv"]


# --- on a real worker -------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("security_worker")
def test_a_function_handed_over_with_a_body_both_may_reach_runs_on_spark() -> None:
    from tests.worker_helpers import Pipeline

    alice, bob = Pipeline("alice"), Pipeline("bob")
    mine, theirs = f"a{uuid.uuid4().hex[:8]}", f"b{uuid.uuid4().hex[:8]}"
    a = services.catalog_create(user=alice.user, name=mine).databases.get()
    salt = services.function_create(
        user=alice.user,
        database=a,
        name="salt",
        language="sql",
        implementation="'pepper'",
        return_type="STRING",
    )
    share(a.catalog, ["USE"], user=bob.user)
    share(salt, ["EXECUTE"], user=bob.user)
    services.catalog_create(user=bob.user, name=theirs)
    url = f"{API}/catalogs/{theirs}/databases/default"
    assert _create(bob.api, url, "f1", f"{mine}.default.salt()").status_code == 201
    handed = bob.api.patch(f"{url}/functions/f1", {"owner": alice.user.username})
    assert handed.status_code == 200, handed.content
    assert bob.rows(f"SELECT {theirs}.default.f1() AS s") == [["pepper"]]
