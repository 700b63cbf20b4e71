"""The audit trail (issue 18, ADR 0011 §5): ``GET /audit`` for admins with its filters and
keyset pages, append-only in Python and in PostgreSQL itself (the trigger of migration
0002, judged with raw SQL), the expiry of access events, and the read-only admin."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import DatabaseError, connection, transaction
from django.utils import timezone
from rest_framework.test import APIClient

from audit import services
from audit.models import AppendOnly, AuditEvent
from jobs import maintenance
from tests.conftest import API, assert_error, json_client

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
JOB = uuid.UUID("7a1c54e4-63a4-4a4e-9f59-2b8b0b7e8f10")


def event(action: str, *, at: datetime = T0, actor: Any = None, **fields: Any) -> AuditEvent:
    """An event at a given time (``services.record`` stamps now; tests need the past)."""
    path = fields.pop("path", ())
    principal = fields.pop("principal", None)
    return AuditEvent.objects.create(
        at=at,
        actor=actor,
        actor_name=actor.get_username() if actor is not None else "",
        action=action,
        object=list(path),
        object_key=services.object_key(path),
        principal_type=principal[0] if principal else "",
        principal_name=principal[1] if principal else "",
        **fields,
    )


@pytest.fixture
def admin_api(admin: User) -> APIClient:
    """Signed in without a token: a sign-in is itself an event (token_create), and these
    tests count the trail exactly."""
    client = json_client()
    client.force_authenticate(user=admin)
    return client


@pytest.fixture
def alice_api(alice: User) -> APIClient:
    client = json_client()
    client.force_authenticate(user=alice)
    return client


def ids(response: Any) -> list[int]:
    assert response.status_code == 200, response.content[:1000]
    return [item["id"] for item in response.json()["items"]]


@pytest.fixture
def trail(alice, bob) -> dict[str, AuditEvent]:
    """A small history, oldest first: grants in catalog ``shop``, reads and writes by jobs,
    a drop in ``shopping`` (a name ``shop`` is a prefix of), team changes."""
    minute = timedelta(minutes=1)
    return {
        "grant": event(
            "grant",
            at=T0,
            actor=alice,
            object_kind="catalog",
            path=("shop",),
            securable_key="catalog:1",
            principal=("team", "analysts"),
            privileges=["USE", "SELECT"],
        ),
        "read": event(
            "read",
            at=T0 + minute,
            actor=bob,
            object_kind="table",
            path=("shop", "sales", "orders"),
            securable_key="relation:7",
            job_id=JOB,
            privileges=["SELECT"],
            detail={"via": None},
        ),
        "write": event(
            "write",
            at=T0 + 2 * minute,
            actor=bob,
            object_kind="table",
            path=("Shop", "Sales", "Orders_2"),
            securable_key="relation:8",
            job_id=uuid.uuid4(),
        ),
        "drop": event(
            "drop", at=T0 + 3 * minute, actor=alice, object_kind="database", path=("shopping", "x")
        ),
        "member": event(
            "member_add",
            at=T0 + 4 * minute,
            object_kind="team",
            path=("analysts",),
            principal=("user", "bob"),
            detail={"team": "analysts"},
        ),
        "denied": event(
            "denied",
            at=T0 + 5 * minute,
            actor=bob,
            object_kind="table",
            path=("shop", "sales", "secret"),
            securable_key="relation:9",
            privileges=["SELECT"],
        ),
    }


# --- reading it -------------------------------------------------------------------------------


def test_admins_read_the_trail_newest_first_in_the_documented_shape(admin_api, trail):
    body = admin_api.get(f"{API}/audit").json()
    assert [item["id"] for item in body["items"]] == [
        trail[name].pk for name in ("denied", "member", "drop", "write", "read", "grant")
    ]
    assert body["next_page_token"] is None
    read = next(item for item in body["items"] if item["action"] == "read")
    assert read == {
        "id": trail["read"].pk,
        "at": "2026-03-01T12:01:00Z",
        "actor": "bob",
        "action": "read",
        "object_kind": "table",
        "object": ["shop", "sales", "orders"],
        "principal": None,
        "privileges": ["SELECT"],
        "job": str(JOB),
        "detail": {"via": None},
    }
    member = next(item for item in body["items"] if item["action"] == "member_add")
    assert (member["actor"], member["principal"]) == (None, {"type": "user", "name": "bob"})


def test_others_may_not_read_it(alice_api, anon_api, trail):
    assert_error(alice_api.get(f"{API}/audit"), 403, "PERMISSION_DENIED", "Only admins")
    assert_error(anon_api.get(f"{API}/audit"), 401, "NOT_AUTHENTICATED")


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("action=read", ["read"]),
        ("action=READ,write", ["write", "read"]),
        ("action=grant,%20drop", ["drop", "grant"]),
        ("actor=bob", ["denied", "write", "read"]),
        ("actor=ALICE", ["drop", "grant"]),
        ("actor=nobody", []),
        ("principal=team:analysts", ["grant"]),
        ("principal=user:BOB", ["member"]),
        ("principal=team:bob", []),
        ("object=shop", ["denied", "write", "read", "grant"]),
        ("object=SHOP.sales", ["denied", "write", "read"]),
        ("object=shop.sales.orders", ["read"]),
        ("object=`shop`.`sales`.`orders_2`", ["write"]),
        ("object=shopping", ["drop"]),
        ("object=sho", []),
        ("object=shop.sa", []),
        ("object_kind=table", ["denied", "write", "read"]),
        ("object_kind=catalog,team", ["member", "grant"]),
        (f"job={JOB}", ["read"]),
        (f"job={uuid.uuid4()}", []),
        ("since=2026-03-01T12:03:00Z", ["denied", "member", "drop"]),
        ("until=2026-03-01T12:02:00Z", ["read", "grant"]),
        (
            "since=2026-03-01T13:02:00%2B01:00&until=2026-03-01T12:05:00",
            ["member", "drop", "write"],
        ),
        ("since=2026-03-01 13:02:00 01:00", ["denied", "member", "drop", "write"]),
        ("since=2026-03-02", []),
        ("action=read,write,denied&actor=bob&object=shop.sales&until=2026-03-01T12:05", None),
    ],
)
def test_each_filter(admin_api, trail, query, expected):
    got = ids(admin_api.get(f"{API}/audit?{query}"))
    if expected is None:  # the filters together
        expected = ["write", "read"]
    assert got == [trail[name].pk for name in expected], query


def test_the_object_filter_takes_like_wildcards_literally(admin_api, trail):
    event("read", object_kind="table", path=("s_op", "d", "t"))
    # "_" matches one character in LIKE: s_op would find shop's events too.
    assert len(ids(admin_api.get(f"{API}/audit?object=s_op"))) == 1
    assert ids(admin_api.get(f"{API}/audit?object=`sh%25`")) == []
    assert ids(admin_api.get(f"{API}/audit?object=s_o")) == []
    assert len(ids(admin_api.get(f"{API}/audit?object=`s_op`.d"))) == 1
    assert ids(admin_api.get(f"{API}/audit?object=`s%op`")) == []


@pytest.mark.parametrize(
    ("query", "field", "fragment"),
    [
        ("action=read,peek", "action", "Unknown action 'peek'"),
        ("principal=alice", "principal", "user:<username> or team:<team name>"),
        ("principal=group:x", "principal", "user:<username>"),
        ("principal=user:", "principal", "user:<username>"),
        ("object=a.b.c.d", "object", "SQL path of 1 to 3 parts"),
        ("object=`a", "object", "Unclosed backtick"),
        ("object_kind=schema", "object_kind", "Unknown object_kind 'schema'"),
        ("job=42", "job", "job must be a job id"),
        ("since=yesterday", "since", "ISO-8601"),
        ("until=2026-13-01", "until", "ISO-8601"),
        ("since=0001-01-01T00:00:00%2B14:00", "since", "out of range"),
        ("since=2026-01-01%00", "since", "NUL"),
        (f"until={'2' * 5000}", "until", "too long"),
        (f"actor={'a' * 5000}", "actor", "too long"),
        ("actor=%00", "actor", "NUL"),
        ("page_token=e30", "page_token", "page_token"),
        ("page_size=0", "page_size", "page_size"),
    ],
)
def test_bad_filter_values_name_their_parameter(admin_api, trail, query, field, fragment):
    error = assert_error(admin_api.get(f"{API}/audit?{query}"), 400, "VALIDATION_ERROR", fragment)
    assert error["details"]["field"] == field


def test_a_huge_object_path_is_refused_briefly(admin_api):
    response = admin_api.get(f"{API}/audit?object={'x' * 100_000}")
    error = assert_error(response, 400, "VALIDATION_ERROR", "too long")
    assert error["details"] == {"field": "object"}
    assert len(response.content) < 1_000


def test_pages_follow_at_then_id_without_gaps_or_repeats(admin_api, alice):
    # Seven events, three of them at the very same instant: the id breaks the tie.
    made = [event("grant", at=T0 + timedelta(seconds=i // 3), actor=alice) for i in range(7)]
    expected = [e.pk for e in sorted(made, key=lambda e: (e.at, e.pk), reverse=True)]
    seen: list[int] = []
    url = f"{API}/audit?page_size=3&action=grant"
    pages = 0
    while url:
        body = admin_api.get(url).json()
        pages += 1
        seen += [item["id"] for item in body["items"]]
        token = body["next_page_token"]
        url = f"{API}/audit?page_size=3&action=grant&page_token={token}" if token else ""
    assert (seen, pages) == (expected, 3)
    # A page started before newer events arrived goes on where it was.
    first = admin_api.get(f"{API}/audit?page_size=3").json()
    event("grant", at=T0 + timedelta(days=1), actor=alice)
    second = admin_api.get(f"{API}/audit?page_size=3&page_token={first['next_page_token']}")
    assert ids(second) == expected[3:6]


def test_events_written_through_the_product_are_listed(admin, admin_api):
    assert admin_api.post(f"{API}/teams", {"name": "ops"}).status_code == 201
    (item,) = admin_api.get(f"{API}/audit?action=team_create").json()["items"]
    assert (item["actor"], item["object_kind"], item["object"], item["principal"]) == (
        "admin",
        "team",
        ["ops"],
        {"type": "team", "name": "ops"},
    )
    assert ids(admin_api.get(f"{API}/audit?object_kind=team&object=ops")) == [item["id"]]


def test_the_events_of_a_deleted_actor_stay(admin_api, alice, trail):
    alice.delete()
    assert ids(admin_api.get(f"{API}/audit?actor=alice")) == [
        trail["drop"].pk,
        trail["grant"].pk,
    ]


# --- append-only ------------------------------------------------------------------------------


def test_python_refuses_to_change_or_delete_events(trail):
    row = trail["grant"]
    with pytest.raises(AppendOnly):
        AuditEvent.objects.filter(pk=row.pk).update(action="revoke")
    with pytest.raises(AppendOnly):
        AuditEvent.objects.all().delete()
    with pytest.raises(AppendOnly):
        row.delete()
    row.action = "revoke"
    with pytest.raises(AppendOnly):
        row.save()
    assert AuditEvent.objects.get(pk=row.pk).action == "grant"


def _raw(sql: str, params: list[Any] | None = None) -> int:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)
        return int(cursor.rowcount)


def test_postgresql_itself_refuses_updates_and_deletes(trail):
    assert connection.vendor == "postgresql"
    row = trail["read"]
    with pytest.raises(DatabaseError, match="append-only: UPDATE"):
        _raw("UPDATE audit_auditevent SET action = 'write' WHERE id = %s", [row.pk])
    with pytest.raises(DatabaseError, match="append-only: DELETE"):
        _raw("DELETE FROM audit_auditevent WHERE id = %s", [row.pk])
    with pytest.raises(DatabaseError, match="append-only: DELETE"):
        _raw("DELETE FROM audit_auditevent")
    # The expiry's switch lets deletions through, never updates, and only where it is set.
    with (
        pytest.raises(DatabaseError, match="append-only: UPDATE"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute("SET LOCAL tessera.audit_expiry = 'on'")
        cursor.execute("UPDATE audit_auditevent SET action = 'write' WHERE id = %s", [row.pk])
    with pytest.raises(DatabaseError, match="append-only: DELETE"):
        _raw("SET LOCAL tessera.audit_expiry = 'yes'; DELETE FROM audit_auditevent")
    assert AuditEvent.objects.count() == len(trail)
    assert AuditEvent.objects.get(pk=row.pk).action == "read"


def test_the_test_flush_still_empties_the_table(trail):
    # Transactional tests flush with TRUNCATE, which fires no row trigger.
    _raw("TRUNCATE audit_auditevent")
    assert not AuditEvent.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_transactional_test_commits_events(alice):
    event("grant", actor=alice)
    assert AuditEvent.objects.count() == 1  # committed: the flush after this test empties it


@pytest.mark.django_db(transaction=True)
def test_the_next_transactional_test_starts_empty():
    # Runs after the one above (file order): its committed event was flushed.
    assert not AuditEvent.objects.exists()


# --- expiry -------------------------------------------------------------------------------------


def test_expiry_removes_old_access_events_and_keeps_the_rest(settings, alice):
    settings.TESSERA_AUDIT_ACCESS_RETENTION_SECONDS = 90 * 24 * 3600
    now = timezone.now()
    old = now - timedelta(days=91)
    recent = now - timedelta(days=89)
    gone = [event(action, at=old, actor=alice) for action in ("read", "write", "denied")]
    kept = [event(action, at=old, actor=alice) for action in ("grant", "revoke", "owner", "drop")]
    kept += [event("team_create", at=old), event("member_add", at=old)]
    kept += [event(action, at=recent, actor=alice) for action in ("read", "write", "denied")]

    assert maintenance.expire_audit_events(now) == 3
    left = set(AuditEvent.objects.values_list("pk", flat=True))
    assert left == {e.pk for e in kept}
    assert not left & {e.pk for e in gone}
    assert maintenance.expire_audit_events(now) == 0
    # The switch was for the expiry's own statement: the same transaction deletes no more.
    with pytest.raises(DatabaseError, match="append-only: DELETE"):
        _raw("DELETE FROM audit_auditevent")


def test_expiry_works_in_batches(settings, monkeypatch, alice):
    monkeypatch.setattr(services, "EXPIRE_BATCH", 2)
    old = timezone.now() - timedelta(days=400)
    for _ in range(5):
        event("read", at=old, actor=alice)
    assert [services.expire() for _ in range(4)] == [2, 2, 1, 0]
    assert not AuditEvent.objects.exists()


def test_expiry_follows_the_retention_setting(settings, alice):
    settings.TESSERA_AUDIT_ACCESS_RETENTION_SECONDS = 3600
    now = timezone.now()
    two_hours = event("read", at=now - timedelta(hours=2), actor=alice)
    half_hour = event("read", at=now - timedelta(minutes=30), actor=alice)
    assert services.expire(now) == 1
    assert list(AuditEvent.objects.values_list("pk", flat=True)) == [half_hour.pk]
    assert two_hours.pk != half_hour.pk


def test_the_workers_housekeeping_runs_the_expiry(settings, alice):
    from jobs import worker

    gone = event("read", at=timezone.now() - timedelta(days=400), actor=alice)
    kept = event("grant", at=timezone.now() - timedelta(days=400), actor=alice)
    worker.run_maintenance(worker.EXPIRY_EVERY_BEATS + 1)  # not an expiry beat
    assert AuditEvent.objects.filter(pk=gone.pk).exists()
    worker.run_maintenance(worker.EXPIRY_EVERY_BEATS)
    assert list(AuditEvent.objects.values_list("pk", flat=True)) == [kept.pk]


# --- an object's recent events ------------------------------------------------------------------


def test_an_objects_recent_events_page_by_securable(alice, trail):
    from audit import selectors
    from audit.views import serialize_page

    event("write", at=T0 + timedelta(hours=1), actor=alice, securable_key="relation:7")
    event("read", at=T0 + timedelta(hours=2), actor=alice, securable_key="relation:77")
    rows = selectors.events_of("relation:7", limit=10)
    assert [e.action for e in rows] == ["write", "read"]
    assert [e.action for e in selectors.events_of("relation:7", actions=["read"], limit=10)] == [
        "read"
    ]
    first = selectors.events_of("relation:7", limit=1)
    rest = selectors.events_of("relation:7", after=selectors.page_key(first[0]), limit=10)
    assert [e.pk for e in first + rest] == [e.pk for e in rows]
    assert serialize_page(rows)[1]["object"] == ["shop", "sales", "orders"]


# --- the Django admin -----------------------------------------------------------------------


def test_the_admin_shows_events_read_only(client, admin, trail):
    client.force_login(admin)
    listing = client.get("/admin/audit/auditevent/")
    assert listing.status_code == 200
    html = listing.content.decode()
    assert "member_add" in html and "denied" in html
    assert "/admin/audit/auditevent/add/" not in html
    row = trail["grant"]
    page = client.get(f"/admin/audit/auditevent/{row.pk}/change/")
    assert page.status_code == 200
    assert 'name="_save"' not in page.content.decode()
    assert client.get("/admin/audit/auditevent/add/").status_code == 403
    assert client.get(f"/admin/audit/auditevent/{row.pk}/delete/").status_code == 403
    changed = client.post(f"/admin/audit/auditevent/{row.pk}/change/", {"action": "revoke"})
    assert changed.status_code == 403
    bulk = client.post(
        "/admin/audit/auditevent/",
        {"action": "delete_selected", "_selected_action": [row.pk], "post": "yes"},
    )
    assert bulk.status_code in (200, 302)
    assert AuditEvent.objects.get(pk=row.pk).action == "grant"
    assert AuditEvent.objects.count() == len(trail)
