"""/alerts and /notifications: an alert judged on the first row of each finished run; a
trigger and a clear notify the subscribers in the app and by e-mail (two e-mails in all);
a column the result lacks fails the run with a clear error."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Group

from core import jobstate
from jobs import lifecycle
from schedules import scheduler
from schedules.alerts import condition_met
from schedules.models import Alert, Notification, ScheduleRun
from tests.conftest import API, assert_error
from tests.schedules.api.conftest import create_schedule, due_at, finish_job, save_query

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 1, 1, tzinfo=UTC)
URL = f"{API}/alerts"


def create_alert(client, schedule: str, **extra: Any) -> dict[str, Any]:
    body = {"schedule": schedule, "name": "big", "column": "n", "operator": ">", "value": 10}
    response = client.post(URL, {**body, **extra})
    assert response.status_code == 201, response.content
    return dict(response.json())


def run_with(schedule_id: str, slot: int, n: Any, capture) -> ScheduleRun:
    """One tick at minute ``slot`` whose job finishes with one row ``n``."""
    due_at(schedule_id, T0 + timedelta(minutes=slot))
    [run_id] = scheduler.tick(T0 + timedelta(minutes=slot, seconds=1))
    run = ScheduleRun.objects.get(pk=run_id)
    with capture(execute=True):  # the e-mails go after the transition commits
        finish_job(run.job_id, {"n": [n]}, {"n": "STRING" if isinstance(n, str) else "INT"})
    run.refresh_from_db()
    return run


def test_an_alert_that_triggers_then_clears_sends_exactly_two_emails(
    alice_api, bob_api, mailoutbox, django_capture_on_commit_callbacks
):
    made = create_schedule(alice_api, save_query(alice_api))
    alert = create_alert(alice_api, made["id"])
    assert (alert["state"], alert["subscribers"], alert["value"]) == ("ok", ["alice"], "10")

    assert run_with(made["id"], 1, 3, django_capture_on_commit_callbacks).status == "FINISHED"
    assert len(mailoutbox) == 0  # ok stays ok
    run_with(made["id"], 2, 42, django_capture_on_commit_callbacks)
    assert alice_api.get(f"{URL}/{alert['id']}").json()["state"] == "triggered"
    run_with(made["id"], 3, 50, django_capture_on_commit_callbacks)  # still triggered
    run_with(made["id"], 4, 7, django_capture_on_commit_callbacks)
    cleared = alice_api.get(f"{URL}/{alert['id']}").json()
    assert (cleared["state"], cleared["last_value"]) == ("ok", 7)

    assert len(mailoutbox) == 2
    assert [m.to for m in mailoutbox] == [["alice@example.com"], ["alice@example.com"]]
    assert "triggered" in mailoutbox[0].subject and "cleared" in mailoutbox[1].subject
    assert "n = 42" in mailoutbox[0].body and "n = 7" in mailoutbox[1].body

    unread = alice_api.get(f"{API}/notifications/unread").json()
    assert unread == {"unread": 2}
    items = alice_api.get(f"{API}/notifications").json()["items"]
    assert [n["kind"] for n in items] == ["cleared", "triggered"]
    assert items[0]["alert"] == alert["id"] and "n = 7" in items[0]["message"]
    read = alice_api.post(f"{API}/notifications/{items[0]['id']}/read").json()
    assert read["read_at"] is not None
    assert alice_api.get(f"{API}/notifications/unread").json() == {"unread": 1}
    only_unread = alice_api.get(f"{API}/notifications?unread=true").json()["items"]
    assert [n["id"] for n in only_unread] == [items[1]["id"]]
    assert alice_api.post(f"{API}/notifications/read-all").json() == {"marked": 1}
    assert alice_api.get(f"{API}/notifications/unread").json() == {"unread": 0}

    # bob sees none of it and cannot mark alice's notification.
    assert bob_api.get(f"{API}/notifications").json()["items"] == []
    assert_error(bob_api.post(f"{API}/notifications/{items[1]['id']}/read"), 404, "NOT_FOUND")
    assert_error(bob_api.get(f"{URL}/{alert['id']}"), 404, "NOT_FOUND")
    assert_error(bob_api.delete(f"{URL}/{alert['id']}"), 404, "NOT_FOUND")


def test_a_teammate_subscriber_gets_the_notification_and_a_stranger_is_refused(
    alice, alice_api, bob, mailoutbox, django_capture_on_commit_callbacks
):
    made = create_schedule(alice_api, save_query(alice_api))
    body = {"schedule": made["id"], "name": "big", "column": "n", "operator": ">", "value": 10}
    stranger = alice_api.post(URL, {**body, "subscribers": ["alice", "bob"]})
    assert_error(stranger, 400, "VALIDATION_ERROR", "bob", "teammates")
    assert_error(alice_api.post(URL, {**body, "subscribers": ["nobody"]}), 400, "VALIDATION_ERROR")
    team, _ = Group.objects.get_or_create(name="ops")
    alice.groups.add(team)
    bob.groups.add(team)
    alert = create_alert(alice_api, made["id"], subscribers=["alice", "bob"])
    assert alert["subscribers"] == ["alice", "bob"]
    run_with(made["id"], 1, 11, django_capture_on_commit_callbacks)
    assert sorted(m.to[0] for m in mailoutbox) == ["alice@example.com", "bob@example.com"]
    assert Notification.objects.filter(user=bob, kind="triggered").count() == 1


def test_an_alert_on_a_column_the_result_lacks_fails_the_run_clearly(
    alice_api, mailoutbox, django_capture_on_commit_callbacks
):
    made = create_schedule(alice_api, save_query(alice_api))
    alert = create_alert(alice_api, made["id"], column="revenue", name="money")
    run = run_with(made["id"], 1, 42, django_capture_on_commit_callbacks)
    assert run.status == "FAILED"
    error = run.error or {}
    assert error["code"] == "ALERT_FAILED"
    assert "[money]" in error["message"] and "[revenue]" in error["message"]
    assert "its columns: n" in error["message"]
    assert Alert.objects.get(pk=alert["id"]).state == "ok"
    assert len(mailoutbox) == 0
    [shown] = alice_api.get(f"{API}/schedules/{made['id']}/runs").json()["items"]
    assert (shown["status"], shown["job_status"]) == ("FAILED", "FINISHED")


def test_an_empty_result_clears_and_a_failed_run_changes_nothing(
    alice_api, mailoutbox, django_capture_on_commit_callbacks
):
    made = create_schedule(alice_api, save_query(alice_api))
    alert = create_alert(alice_api, made["id"], operator="!=", value="x")
    run_with(made["id"], 1, "y", django_capture_on_commit_callbacks)
    assert Alert.objects.get(pk=alert["id"]).state == "triggered"
    due_at(made["id"], T0 + timedelta(minutes=2))
    [run_id] = scheduler.tick(T0 + timedelta(minutes=2, seconds=1))
    run = ScheduleRun.objects.get(pk=run_id)
    failed = {"code": "X", "message": "boom"}
    lifecycle.transition(run.job_id, jobstate.CREATED, jobstate.FAILED, error=failed)
    assert Alert.objects.get(pk=alert["id"]).state == "triggered"
    assert ScheduleRun.objects.get(pk=run_id).status == "FAILED"
    due_at(made["id"], T0 + timedelta(minutes=3))
    [run_id] = scheduler.tick(T0 + timedelta(minutes=3, seconds=1))
    run = ScheduleRun.objects.get(pk=run_id)
    with django_capture_on_commit_callbacks(execute=True):
        finish_job(run.job_id, {"n": []}, {"n": "STRING"})
    assert Alert.objects.get(pk=alert["id"]).state == "ok"
    assert len(mailoutbox) == 2


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"operator": "~"}, "operator"),
        ({"operator": "<>"}, "operator"),
        ({"value": [1]}, "value"),
        ({"value": True}, "value"),
        ({"value": None}, "value"),
        ({"value": "x" * 5000}, "value"),
        ({"column": ""}, "column"),
        ({"column": "n" * 5000}, "column"),
        ({"name": "a\x00b"}, "name"),
        ({"subscribers": ["alice"] * 500}, "subscribers"),
    ],
)
def test_a_bad_alert_is_a_validation_error(alice_api, body, field):
    made = create_schedule(alice_api, save_query(alice_api))
    base = {"schedule": made["id"], "name": "big", "column": "n", "operator": ">", "value": 10}
    error = assert_error(alice_api.post(URL, {**base, **body}), 400, "VALIDATION_ERROR")
    assert error["details"].get("field", field) == field
    assert not Alert.objects.exists()


def test_alert_crud_by_its_owner(alice_api):
    made = create_schedule(alice_api, save_query(alice_api))
    alert = create_alert(alice_api, made["id"])
    url = f"{URL}/{alert['id']}"
    assert alice_api.get(url).json() == alert
    changed = alice_api.patch(url, {"operator": "<=", "value": "2.50"}).json()
    assert (changed["operator"], changed["value"]) == ("<=", "2.50")
    listed = alice_api.get(f"{URL}?schedule={made['id']}").json()["items"]
    assert [a["id"] for a in listed] == [alert["id"]]
    assert alice_api.delete(url).status_code == 204
    assert_error(alice_api.get(url), 404, "NOT_FOUND")


@pytest.mark.parametrize(
    ("cell", "operator", "value", "met"),
    [
        (42, ">", "10", True),
        ("10.50", ">", "10.5", False),  # decimals compare exactly
        ("10.50", "=", "10.5", True),
        (9.5, "<", "10", True),
        (None, "!=", "1", False),  # NULL meets nothing
        ("abc", "=", "abc", True),
        ("abc", "!=", "abd", True),
        (True, "=", "true", True),
        ("NaN", ">", "1", False),  # a float column's NaN is a number that meets only !=
        ("Infinity", ">", "1e300", True),
        ("12", ">", "9", True),  # numbers in text compare as numbers
        ("b", ">", "a", True),
    ],
)
def test_conditions(cell, operator, value, met):
    assert condition_met(cell, operator, value) is met
