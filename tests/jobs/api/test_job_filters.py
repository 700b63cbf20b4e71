"""GET /jobs filters for the UI's history: status and kind lists, creation time, SQL text."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import pytest
from django.contrib.auth.models import User

from core import jobstate
from jobs.models import Job, Session
from tests.conftest import API, assert_error

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def job(
    user: User,
    sql: str,
    *,
    kind: str = "query",
    status: str = jobstate.FINISHED,
    minutes: int = 0,
    session: Session | None = None,
) -> Job:
    row = Job.objects.create(user=user, sql=sql, kind=kind, status=status, session=session)
    Job.objects.filter(pk=row.pk).update(created_at=T0 + timedelta(minutes=minutes))
    return row


@pytest.fixture
def history(alice: User, bob: User) -> dict[str, Job]:
    return {
        "select": job(alice, "SELECT * FROM Orders", minutes=0),
        "failed": job(alice, "SELEC oops", status=jobstate.FAILED, minutes=10),
        "ddl": job(alice, "CREATE TABLE t (id INT)", kind="ddl", minutes=20),
        "running": job(alice, "select count(*) from orders", status=jobstate.RUNNING, minutes=30),
        "show": job(alice, "SHOW TABLES", kind="show", status=jobstate.CANCELED, minutes=40),
        "bobs": job(bob, "SELECT * FROM orders", minutes=5),
    }


def listed(client, query: str = "") -> list[str]:
    response = client.get(f"{API}/jobs{query}")
    assert response.status_code == 200, response.content
    return [item["sql"] for item in response.json()["items"]]


def test_newest_first_and_only_mine(alice_api, history):
    assert listed(alice_api) == [
        "SHOW TABLES",
        "select count(*) from orders",
        "CREATE TABLE t (id INT)",
        "SELEC oops",
        "SELECT * FROM Orders",
    ]


def test_status_takes_a_comma_list_in_any_case(alice_api, history):
    assert listed(alice_api, "?status=FAILED") == ["SELEC oops"]
    assert listed(alice_api, "?status=failed,Canceled") == ["SHOW TABLES", "SELEC oops"]
    assert listed(alice_api, "?status=RUNNING,%20CREATED") == ["select count(*) from orders"]
    error = assert_error(alice_api.get(f"{API}/jobs?status=DONE"), 400, "VALIDATION_ERROR", "DONE")
    assert error["details"]["field"] == "status"


def test_kind_takes_a_comma_list(alice_api, history):
    assert listed(alice_api, "?kind=ddl") == ["CREATE TABLE t (id INT)"]
    assert listed(alice_api, "?kind=ddl,show") == ["SHOW TABLES", "CREATE TABLE t (id INT)"]
    assert listed(alice_api, "?kind=DDL") == ["CREATE TABLE t (id INT)"]
    assert listed(alice_api, "?kind=nothing") == []


def test_created_after_is_inclusive_and_created_before_exclusive(alice_api, history):
    after = quote((T0 + timedelta(minutes=20)).isoformat())
    before = quote((T0 + timedelta(minutes=40)).isoformat())
    assert listed(alice_api, f"?created_after={after}") == [
        "SHOW TABLES",
        "select count(*) from orders",
        "CREATE TABLE t (id INT)",
    ]
    assert listed(alice_api, f"?created_before={before}") == [
        "select count(*) from orders",
        "CREATE TABLE t (id INT)",
        "SELEC oops",
        "SELECT * FROM Orders",
    ]
    assert listed(alice_api, f"?created_after={after}&created_before={before}") == [
        "select count(*) from orders",
        "CREATE TABLE t (id INT)",
    ]


@pytest.mark.parametrize(
    "value",
    [
        "2026-03-01T12:30:00Z",
        "2026-03-01T12:30:00+00:00",
        "2026-03-01T12:30:00 00:00",  # an unencoded '+' arrives as a space
        "2026-03-01T13:30:00%2B01:00",
        "2026-03-01T12:30:00",  # naive: UTC
        "2026-03-01T12:30",
    ],
)
def test_iso_8601_forms(alice_api, history, value):
    assert listed(alice_api, f"?created_after={value}") == [
        "SHOW TABLES",
        "select count(*) from orders",
    ]


def test_a_date_alone_is_midnight_utc(alice_api, history):
    assert len(listed(alice_api, "?created_after=2026-03-01")) == 5
    assert listed(alice_api, "?created_after=2026-03-02") == []
    assert len(listed(alice_api, "?created_before=2026-03-02")) == 5


@pytest.mark.parametrize("field", ["created_after", "created_before"])
@pytest.mark.parametrize("value", ["yesterday", "2026-13-01", "2026-03-01T25:00", "1700000000"])
def test_malformed_times_are_400_naming_the_parameter(alice_api, field, value):
    error = assert_error(
        alice_api.get(f"{API}/jobs?{field}={value}"), 400, "VALIDATION_ERROR", field, value
    )
    assert error["details"] == {"field": field}


@pytest.mark.parametrize(
    ("value", "fragment"),
    [("2026-03-01%00", "NUL character"), ("2" * 100_000, "too long (100,000 characters)")],
)
def test_hostile_times_are_refused_briefly(alice_api, value, fragment):
    response = alice_api.get(f"{API}/jobs?created_after={value}")
    error = assert_error(response, 400, "VALIDATION_ERROR", "created_after", fragment)
    assert error["details"] == {"field": "created_after"}
    assert len(response.content) < 1_000  # what was sent is not echoed back


def test_q_is_a_case_insensitive_part_of_the_sql(alice_api, history):
    assert listed(alice_api, "?q=orders") == [
        "select count(*) from orders",
        "SELECT * FROM Orders",
    ]
    assert listed(alice_api, "?q=FROM%20ORDERS") == [
        "select count(*) from orders",
        "SELECT * FROM Orders",
    ]
    assert listed(alice_api, "?q=%25") == []  # LIKE wildcards are literal
    assert listed(alice_api, "?q=_") == []
    assert listed(alice_api, "?q=count(*)") == ["select count(*) from orders"]


def test_filters_combine_with_each_other_and_with_pages(alice_api, alice, history):
    session = Session.objects.create(user=alice, last_used_at=T0, idle_timeout_seconds=86400)
    for minute in range(50, 55):
        job(alice, f"SELECT {minute} FROM orders", minutes=minute, session=session)
    assert listed(alice_api, f"?session={session.pk}&q=orders&status=FINISHED") == [
        f"SELECT {m} FROM orders" for m in range(54, 49, -1)
    ]
    query = "?q=orders&status=FINISHED,RUNNING&kind=query&created_after=2026-03-01T12:00:00Z"
    seen: list[str] = []
    token = None
    while True:
        url = f"{API}/jobs{query}&page_size=2" + (f"&page_token={token}" if token else "")
        body: dict[str, Any] = alice_api.get(url).json()
        seen.extend(item["sql"] for item in body["items"])
        token = body["next_page_token"]
        if token is None:
            break
    assert seen == [
        *(f"SELECT {m} FROM orders" for m in range(54, 49, -1)),
        "select count(*) from orders",
        "SELECT * FROM Orders",
    ]


def test_the_new_parameters_are_in_the_openapi_document(anon_api):
    document = anon_api.get(f"{API}/schema?format=json").json()
    params = {p["name"] for p in document["paths"]["/api/v1/jobs"]["get"]["parameters"]}
    assert {"session", "status", "kind", "created_after", "created_before", "q"} <= params


def test_an_admin_reads_anyones_history_and_everyones(admin_api, history):
    assert listed(admin_api, "?user=bob") == ["SELECT * FROM orders"]
    everyone = admin_api.get(f"{API}/jobs?user=*&q=orders").json()["items"]
    assert [(item["user"], item["sql"]) for item in everyone] == [
        ("alice", "select count(*) from orders"),
        ("bob", "SELECT * FROM orders"),
        ("alice", "SELECT * FROM Orders"),
    ]
    assert listed(admin_api, "?user=*&status=FAILED") == ["SELEC oops"]  # filters still apply
    assert listed(admin_api, "?user=nobody") == []
    assert listed(admin_api) == []  # by default an admin's own, as anyone's


def test_nobody_else_reads_another_users_history(alice_api, bob_api, history):
    for query in ("?user=bob", "?user=*", "?user=admin", "?user=" + "x" * 5000):
        assert_error(alice_api.get(f"{API}/jobs{query}"), 403, "PERMISSION_DENIED", "admins")
    assert listed(alice_api, "?user=alice") == listed(alice_api)  # naming oneself is fine
    assert listed(bob_api, "?user=bob") == ["SELECT * FROM orders"]
