"""On the shared live worker: its heartbeat ticks the scheduler, the due slot's job runs in
Spark as the owner, and the alert is judged on the real result (in the worker's process)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from schedules.models import Alert, Notification, Schedule, ScheduleRun
from tests.conftest import API
from tests.waiting import wait_until

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker"),
]


def test_the_workers_tick_runs_a_due_schedule_and_judges_its_alert(alice, alice_api):
    saved = alice_api.post(f"{API}/saved-queries", {"name": "answer", "sql": "SELECT 42 AS n"})
    assert saved.status_code == 201, saved.content
    body = {"saved_query": saved.json()["id"], "cron": "0 0 1 1 *", "timezone": "UTC"}
    made = alice_api.post(f"{API}/schedules", body).json()
    alert = alice_api.post(
        f"{API}/alerts",
        {"schedule": made["id"], "name": "big", "column": "N", "operator": ">=", "value": 42},
    ).json()
    Schedule.objects.filter(pk=made["id"]).update(next_run_at=timezone.now() - timedelta(seconds=1))

    def ended() -> ScheduleRun | None:
        run = ScheduleRun.objects.select_related("job").filter(schedule_id=made["id"]).first()
        return run if run is not None and run.status != "SUBMITTED" else None

    run = wait_until(ended, timeout=120, message="the scheduled run to end")
    assert run.status == "FINISHED", run.error
    assert run.job is not None and run.job.origin == "schedule" and run.job.user == alice
    assert wait_until(lambda: Alert.objects.get(pk=alert["id"]).state == "triggered", timeout=30)
    [note] = Notification.objects.filter(user=alice)
    assert note.kind == "triggered" and "N = 42" in note.message, note.message
    assert ScheduleRun.objects.filter(schedule_id=made["id"]).count() == 1
    following = Schedule.objects.get(pk=made["id"]).next_run_at
    assert following is not None and following > timezone.now()
