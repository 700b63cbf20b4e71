"""Engines through the REST API (docs/api.md §6 and "Engines"): who sees which engine, the
list's order, pages and ``?state=``, restart and stop requests (recorded for the worker, which
is not here: ``stop_requested`` is what it reads), their audit events, and a job's ``engine``.

The ``Engine`` rows are made directly, as the worker's pool (``jobs.engines.record_*``) would
leave them: they are the data the API reads, not a stand-in for it.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.utils import timezone

from audit.models import AuditEvent
from jobs import engines
from jobs.models import Engine, Job, Session
from sessions import statements
from tests.conftest import API, assert_error

pytestmark = pytest.mark.django_db

ENGINE_KEYS = {
    "id",
    "share_level",
    "share_key",
    "owner",
    "runtime",
    "state",
    "pid",
    "driver_memory",
    "started_at",
    "ready_at",
    "last_used_at",
    "stopped_at",
    "stop_reason",
    "stop_message",
    "running_jobs",
    "uptime_seconds",
    "stop_requested",
    "stop_requested_by",
}
STOPPED_STATES = (Engine.STOPPED, Engine.LOST)


def make_engine(
    key: str,
    state: str = Engine.READY,
    *,
    age: float = 600,
    up: float | None = 300,
    level: str = "user",
    **fields: Any,
) -> Engine:
    """An engine of ``key`` started ``age`` seconds ago, ready ``up`` seconds ago (None:
    never), stopped now when ``state`` says so."""
    now = timezone.now()
    stopped = state in STOPPED_STATES
    engine = Engine.objects.create(
        share_level=level,
        share_key=key,
        runtime="local",
        state=state,
        worker="worker-1@host",
        pid=4242 if up is not None else None,
        driver_memory="2g",
        ready_at=now - timedelta(seconds=up) if up is not None else None,
        last_used_at=now - timedelta(seconds=30) if key else None,
        stopped_at=now if stopped else None,
        stop_reason="idle" if stopped else "",
        **fields,
    )
    Engine.objects.filter(pk=engine.pk).update(started_at=now - timedelta(seconds=age))
    engine.refresh_from_db()
    return engine


def user_key(user: User) -> str:
    return f"user:{user.pk}"


def ids(body: dict[str, Any]) -> list[str]:
    return [item["id"] for item in body["items"]]


def not_found_body(engine_id: Any) -> dict[str, Any]:
    return {"error": {"code": "NOT_FOUND", "message": f"There is no engine {engine_id}."}}


@pytest.fixture(autouse=True)
def _no_broker(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the shared Redis out: nothing here is sent to a worker."""
    from webapp.celery import app

    monkeypatch.setattr(app, "send_task", lambda *args, **kwargs: None)


# --- listing and reading ------------------------------------------------------------------


def test_users_list_their_own_engines_and_admins_every_one(
    alice, bob, admin, alice_api, bob_api, admin_api
) -> None:
    mine_old = make_engine(user_key(alice), Engine.STOPPED, age=3000)
    mine = make_engine(user_key(alice), age=100)
    bobs = make_engine(user_key(bob), Engine.STARTING, age=50, up=None)
    spare = make_engine("", age=20)
    server = make_engine("server", Engine.LOST, age=5000, level="server")

    listed = alice_api.get(f"{API}/engines").json()
    assert ids(listed) == [str(mine.pk), str(mine_old.pk)]  # live first
    assert listed["next_page_token"] is None
    item = listed["items"][0]
    assert set(item) == ENGINE_KEYS
    assert item["share_level"] == "user"
    assert item["share_key"] == user_key(alice)
    assert item["owner"] == "alice"
    assert (item["runtime"], item["state"], item["pid"]) == ("local", "READY", 4242)
    assert item["driver_memory"] == "2g"
    assert item["running_jobs"] == 0
    assert 299 <= item["uptime_seconds"] <= 330
    assert (item["stop_requested"], item["stop_requested_by"]) == ("", "")
    assert item["stopped_at"] is None and item["stop_reason"] == ""
    assert listed["items"][1]["stop_reason"] == "idle"

    assert ids(bob_api.get(f"{API}/engines").json()) == [str(bobs.pk)]

    every = admin_api.get(f"{API}/engines").json()
    newest_live, then_stopped = [spare, bobs, mine], [mine_old, server]
    assert ids(every) == [str(e.pk) for e in (*newest_live, *then_stopped)]
    owners = {item["id"]: item["owner"] for item in every["items"]}
    assert owners == {
        str(spare.pk): None,
        str(bobs.pk): "bob",
        str(mine.pk): "alice",
        str(mine_old.pk): "alice",
        str(server.pk): "everyone",
    }
    starting = next(item for item in every["items"] if item["id"] == str(bobs.pk))
    assert starting["uptime_seconds"] is None and starting["pid"] is None


def test_an_anonymous_caller_is_not_authenticated(anon_api, alice) -> None:
    engine = make_engine(user_key(alice))
    assert_error(anon_api.get(f"{API}/engines"), 401, "NOT_AUTHENTICATED")
    assert_error(anon_api.get(f"{API}/engines/{engine.pk}"), 401, "NOT_AUTHENTICATED")
    assert_error(anon_api.post(f"{API}/engines/{engine.pk}/restart"), 401, "NOT_AUTHENTICATED")
    assert Engine.objects.get(pk=engine.pk).stop_requested == ""


def test_running_jobs_count_the_engines_running_jobs(alice, alice_api) -> None:
    engine = make_engine(user_key(alice))
    session = alice_api.post(f"{API}/sessions", {}).json()["id"]
    jobs = [submit(session, f"SELECT {n}") for n in range(3)]
    for job in jobs:
        engines.record_used(engine.pk, job.pk)
    Job.objects.filter(pk__in=[jobs[0].pk, jobs[1].pk]).update(status="RUNNING")
    assert alice_api.get(f"{API}/engines/{engine.pk}").json()["running_jobs"] == 2
    assert alice_api.get(f"{API}/engines").json()["items"][0]["running_jobs"] == 2


def test_pages_follow_the_live_first_order(admin, admin_api, alice, bob) -> None:
    made = [
        make_engine(user_key(alice), Engine.STOPPED, age=10),
        make_engine(user_key(bob), age=400),
        make_engine(user_key(alice), Engine.LOST, age=20),
        make_engine(user_key(bob), Engine.STOPPING, age=300),
        make_engine("", age=500),
        make_engine(user_key(alice), Engine.STOPPED, age=30),
    ]
    newest_first = sorted(made, key=lambda e: e.started_at, reverse=True)
    live = [str(e.pk) for e in newest_first if e.state in engines.LIVE_STATES]
    ended = [str(e.pk) for e in newest_first if e.state not in engines.LIVE_STATES]
    expected = live + ended

    seen: list[str] = []
    token = None
    for _ in range(10):
        query = f"?page_size=2{f'&page_token={token}' if token else ''}"
        page = admin_api.get(f"{API}/engines{query}").json()
        seen += ids(page)
        token = page["next_page_token"]
        if token is None:
            break
    assert seen == expected
    assert_error(admin_api.get(f"{API}/engines?page_token=bm9wZQ"), 400, "VALIDATION_ERROR")
    assert_error(admin_api.get(f"{API}/engines?page_size=0"), 400, "VALIDATION_ERROR")


def test_state_live_keeps_the_engines_that_may_still_run_jobs(admin_api, alice, alice_api):
    by_state = {state: make_engine(user_key(alice), state) for state, _ in Engine.STATE_CHOICES}
    live = {str(by_state[state].pk) for state in ("STARTING", "READY", "STOPPING")}
    assert set(ids(alice_api.get(f"{API}/engines?state=live").json())) == live
    assert set(ids(admin_api.get(f"{API}/engines?state=LIVE").json())) == live
    lost = admin_api.get(f"{API}/engines?state=lost,stopped").json()
    assert set(ids(lost)) == {str(by_state["LOST"].pk), str(by_state["STOPPED"].pk)}
    assert len(ids(admin_api.get(f"{API}/engines?state=").json())) == 5
    error = assert_error(
        alice_api.get(f"{API}/engines?state=dead"), 400, "VALIDATION_ERROR", "'dead'", "live"
    )
    assert error["details"] == {"field": "state"}


def test_one_engine_is_read_by_who_may_see_it(alice, bob, alice_api, bob_api, admin_api):
    engine = make_engine(user_key(alice))
    body = alice_api.get(f"{API}/engines/{engine.pk}").json()
    assert set(body) == ENGINE_KEYS and body["id"] == str(engine.pk) and body["owner"] == "alice"
    assert admin_api.get(f"{API}/engines/{engine.pk}/").json()["id"] == str(engine.pk)

    # Another user's engine answers exactly as one that does not exist.
    hidden = bob_api.get(f"{API}/engines/{engine.pk}")
    assert_error(hidden, 404, "NOT_FOUND")
    assert hidden.json() == not_found_body(engine.pk)
    missing = uuid.uuid4()
    assert bob_api.get(f"{API}/engines/{missing}").json() == not_found_body(missing)
    assert bob_api.get(f"{API}/engines").json() == {"items": [], "next_page_token": None}


@pytest.mark.parametrize(
    "forged",
    [
        "not-a-uuid",
        "1",
        "' OR 1=1 --",
        "%00",
        "x" * 5000,
        "00000000-0000-0000-0000-00000000000g",
    ],
)
def test_forged_and_malformed_ids_are_not_found(forged, alice, alice_api, admin_api) -> None:
    make_engine(user_key(alice))
    for client in (alice_api, admin_api):
        for response in (
            client.get(f"{API}/engines/{forged}"),
            client.post(f"{API}/engines/{forged}/restart"),
        ):
            error = assert_error(response, 404, "NOT_FOUND", "There is no engine")
            assert len(error["message"]) < 100  # a hostile id is not echoed back whole
    assert_error(admin_api.post(f"{API}/engines/{forged}/stop"), 404, "NOT_FOUND")
    assert not Engine.objects.exclude(stop_requested="").exists()


def test_a_team_engine_is_its_members_own(settings, alice, bob, alice_api, bob_api) -> None:
    settings.TESSERA_ENGINE_SHARE_LEVEL = "team"
    alice.groups.add(Group.objects.create(name="analysts"))
    team = make_engine("team:analysts", level="team")
    own = make_engine(user_key(alice), Engine.STOPPED)  # from before the level changed

    listed = alice_api.get(f"{API}/engines").json()
    assert ids(listed) == [str(team.pk), str(own.pk)]
    assert listed["items"][0]["owner"] == "analysts"
    assert_error(bob_api.get(f"{API}/engines/{team.pk}"), 404, "NOT_FOUND")
    assert_error(bob_api.post(f"{API}/engines/{team.pk}/restart"), 404, "NOT_FOUND")
    assert alice_api.post(f"{API}/engines/{team.pk}/restart").status_code == 202
    event = AuditEvent.objects.get(action="engine_restart")
    assert (event.principal_type, event.principal_name) == ("team", "analysts")


def test_uptime_counts_until_the_engine_stopped(admin_api, alice) -> None:
    engine = make_engine(user_key(alice), Engine.STOPPED, up=None)
    now = timezone.now()
    Engine.objects.filter(pk=engine.pk).update(
        ready_at=now - timedelta(seconds=3700), stopped_at=now - timedelta(seconds=100)
    )
    assert admin_api.get(f"{API}/engines/{engine.pk}").json()["uptime_seconds"] == 3600


# --- restart and stop -------------------------------------------------------------------------


def test_restart_records_the_request_for_the_worker_and_audits_it(alice, alice_api) -> None:
    engine = make_engine(user_key(alice))
    response = alice_api.post(f"{API}/engines/{engine.pk}/restart")
    assert response.status_code == 202, response.content
    body = response.json()
    assert set(body) == ENGINE_KEYS
    assert (body["id"], body["state"]) == (str(engine.pk), "READY")
    assert (body["stop_requested"], body["stop_requested_by"]) == ("restart", "alice")
    engine.refresh_from_db()
    assert (engine.stop_requested, engine.stop_requested_by) == ("restart", "alice")
    assert engines.stop_requests("worker-1@host") == [(str(engine.pk), "restart", "alice")]

    event = AuditEvent.objects.get(object_kind="engine")
    assert (event.action, event.actor_name, event.object_kind) == (
        "engine_restart",
        "alice",
        "engine",
    )
    assert (event.principal_type, event.principal_name) == ("user", "alice")
    assert event.detail["engine"] == str(engine.pk)
    assert event.detail["share_key"] == user_key(alice)

    # Asked again before the worker acted: the same answer, no second event.
    again = alice_api.post(f"{API}/engines/{engine.pk}/restart/")
    assert again.status_code == 202 and again.json()["stop_requested"] == "restart"
    assert AuditEvent.objects.filter(object_kind="engine").count() == 1
    listed = alice_api.get(f"{API}/audit")
    assert_error(listed, 403, "PERMISSION_DENIED")  # the audit log stays the admins'


def test_another_users_engine_cannot_be_restarted(alice, bob, bob_api) -> None:
    engine = make_engine(user_key(alice))
    response = bob_api.post(f"{API}/engines/{engine.pk}/restart")
    assert response.json() == not_found_body(engine.pk)
    assert response.status_code == 404
    engine.refresh_from_db()
    assert (engine.stop_requested, engine.stop_requested_by) == ("", "")
    assert not AuditEvent.objects.filter(object_kind="engine").exists()


def test_admins_restart_and_stop_any_engine(admin, alice, admin_api) -> None:
    restarted = make_engine(user_key(alice))
    stopped = make_engine("")
    response = admin_api.post(f"{API}/engines/{restarted.pk}/restart")
    assert response.status_code == 202
    assert response.json()["stop_requested_by"] == "admin"
    response = admin_api.post(f"{API}/engines/{stopped.pk}/stop")
    assert response.status_code == 202, response.content
    assert (response.json()["stop_requested"], response.json()["owner"]) == ("stop", None)
    assert sorted(engines.stop_requests("worker-1@host")) == sorted(
        [(str(restarted.pk), "restart", "admin"), (str(stopped.pk), "stop", "admin")]
    )
    events = admin_api.get(f"{API}/audit?object_kind=engine").json()["items"]
    assert [(e["action"], e["actor"], e["principal"]) for e in events] == [
        ("engine_stop", "admin", None),
        ("engine_restart", "admin", {"type": "user", "name": "alice"}),
    ]
    # A stop after a restart request replaces it: the worker stops it either way.
    assert admin_api.post(f"{API}/engines/{restarted.pk}/stop").json()["stop_requested"] == "stop"
    found = admin_api.get(f"{API}/audit?action=engine_stop&principal=user:alice").json()
    assert len(found["items"]) == 1


def test_stop_is_for_admins_only(alice, alice_api) -> None:
    engine = make_engine(user_key(alice))
    for target in (engine.pk, uuid.uuid4(), "not-a-uuid"):
        assert_error(
            alice_api.post(f"{API}/engines/{target}/stop"), 403, "PERMISSION_DENIED", "admins"
        )
    engine.refresh_from_db()
    assert engine.stop_requested == ""
    assert not AuditEvent.objects.filter(object_kind="engine").exists()


@pytest.mark.parametrize("state", STOPPED_STATES)
def test_a_stopped_engine_cannot_be_restarted_or_stopped(state, alice, alice_api, admin_api):
    engine = make_engine(user_key(alice), state)
    for client, what in ((alice_api, "restart"), (admin_api, "restart"), (admin_api, "stop")):
        error = assert_error(
            client.post(f"{API}/engines/{engine.pk}/{what}"),
            409,
            "ENGINE_STOPPED",
            str(engine.pk),
            f"nothing to {what}",
        )
        assert error["details"] == {"state": state}
    engine.refresh_from_db()
    assert (engine.state, engine.stop_requested) == (state, "")
    assert not AuditEvent.objects.filter(object_kind="engine").exists()


def test_only_post_restarts(alice, alice_api) -> None:
    engine = make_engine(user_key(alice))
    assert_error(alice_api.get(f"{API}/engines/{engine.pk}/restart"), 405, "METHOD_NOT_ALLOWED")
    assert_error(alice_api.delete(f"{API}/engines/{engine.pk}"), 405, "METHOD_NOT_ALLOWED")
    assert Engine.objects.get(pk=engine.pk).stop_requested == ""


# --- a job names its engine ---------------------------------------------------------------


def submit(session_id: str, sql: str = "SELECT 1") -> Job:
    plan = {
        "kind": "query",
        "action": "query",
        "needs_spark": True,
        "sql": sql,
        "relations": [],
        "functions": [],
        "target": None,
        "args": {},
    }
    session = Session.objects.select_related("user").get(pk=session_id)
    return statements.submit_plan(session=session, sql=sql, plan=plan)


def test_a_jobs_json_names_its_engine(alice, alice_api) -> None:
    session = alice_api.post(f"{API}/sessions", {}).json()["id"]
    job = submit(session)
    first = alice_api.get(f"{API}/jobs/{job.pk}")
    assert first.json()["engine"] is None

    engine = make_engine(user_key(alice))
    engines.record_used(engine.pk, job.pk)
    response = alice_api.get(f"{API}/jobs/{job.pk}", HTTP_IF_NONE_MATCH=first["ETag"])
    assert response.status_code == 200  # the engine changes the job's version
    assert response.json()["engine"] == str(engine.pk)
    assert alice_api.get(f"{API}/jobs").json()["items"][0]["engine"] == str(engine.pk)
    assert alice_api.get(f"{API}/engines/{engine.pk}").json()["last_used_at"] is not None
