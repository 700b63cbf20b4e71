"""Housekeeping rules (jobs.maintenance) on the real database, without a worker."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from core.jobstate import NoOpHook
from jobs import lifecycle, maintenance
from jobs.models import Job, Session, Worker

pytestmark = pytest.mark.django_db


@pytest.fixture
def now() -> Any:
    # Taken when the test starts: a module-level timestamp would be stale by the time a
    # long suite reaches these tests.
    return timezone.now()


def _user() -> User:
    return User.objects.create_user("hank")


def _job(user: User, status: str = "RUNNING", **fields: Any) -> Job:
    plan = {"action": "query", "needs_spark": True, "sql": "SELECT 1"}
    job = Job(user=user, sql="SELECT 1", kind="query", plan=plan, status=status, **fields)
    job.save()
    return job


class FailedHook(NoOpHook):
    def __init__(self) -> None:
        self.failed: list[str] = []

    def on_failed(self, job: Any, record: Any) -> None:
        self.failed.append(job.id)
        record("cleaned_up", {"by": "hook"})


def test_reaper_fails_only_jobs_whose_worker_is_gone(settings, now):
    settings.TESSERA_WORKER_TIMEOUT_SECONDS = 10
    old = now - timedelta(seconds=60)
    Worker.objects.create(hostname="live@h", pid=1, started_at=old, last_heartbeat=now)
    Worker.objects.create(hostname="dead@h", pid=2, started_at=old, last_heartbeat=old)
    user = _user()
    on_live = _job(user, worker="live@h", heartbeat_at=old)
    lost = _job(user, worker="dead@h", heartbeat_at=old)
    fresh = _job(user, worker="dead@h", heartbeat_at=now)
    vanished = _job(user, worker="never-registered@h", heartbeat_at=old)
    done = _job(user, status="FINISHED", worker="dead@h", heartbeat_at=old)
    hook = FailedHook()
    lifecycle.register_hook(hook)
    try:
        reaped = maintenance.reap_lost_jobs()
        assert maintenance.reap_lost_jobs() == []  # a second reaper finds nothing left
    finally:
        lifecycle.unregister_hook(hook)
    assert sorted(reaped) == sorted([str(lost.id), str(vanished.id)])
    assert sorted(hook.failed) == sorted(reaped)
    for job in (lost, vanished):
        job.refresh_from_db()
        assert job.status == "FAILED"
        assert (job.error or {})["code"] == "WORKER_LOST"
        assert job.finished_at is not None
    assert lost.events.filter(type="cleaned_up").exists()
    for job, status in ((on_live, "RUNNING"), (fresh, "RUNNING"), (done, "FINISHED")):
        job.refresh_from_db()
        assert job.status == status
    assert maintenance.reap_lost_jobs(job_id=on_live.id) == []


def test_sweeper_resends_lost_messages_with_backoff(settings, monkeypatch, now):
    settings.TESSERA_SWEEP_AFTER_SECONDS = 10
    sent: list[str] = []
    monkeypatch.setattr(maintenance, "enqueue", lambda job_id: sent.append(str(job_id)))
    user = _user()
    never_sent = _job(user, status="CREATED")
    Job.objects.filter(pk=never_sent.pk).update(created_at=now - timedelta(seconds=30))
    once = _job(user, status="CREATED", enqueued_at=now - timedelta(seconds=15), enqueue_count=1)
    # Sent 3 times: next due after 4 x 10 s, only 30 s have passed.
    thrice = _job(user, status="CREATED", enqueued_at=now - timedelta(seconds=30), enqueue_count=3)
    young = _job(user, status="CREATED", enqueued_at=now, enqueue_count=1)
    script = Job.objects.create(user=user, sql="x", kind="query", status="RUNNING")
    waiting = _job(user, status="CREATED", enqueued_at=now - timedelta(seconds=60))
    Job.objects.filter(pk__in=[script.pk, waiting.pk]).update(script_id=script.pk)
    Job.objects.filter(pk=waiting.pk).update(script_index=1)
    no_spark = Job.objects.create(user=user, sql="SHOW CATALOGS", kind="show", plan={})
    Job.objects.filter(pk=no_spark.pk).update(created_at=now - timedelta(seconds=60))

    assert sorted(maintenance.sweep_unclaimed_jobs()) == sorted([str(never_sent.id), str(once.id)])
    assert sorted(sent) == sorted([str(never_sent.id), str(once.id)])
    assert maintenance.sweep_unclaimed_jobs() == []  # just re-sent: not due again yet
    assert never_sent.events.filter(type="requeued").count() == 1
    for job in (thrice, young, waiting):
        assert not job.events.filter(type="requeued").exists()
    later = timezone.now() + timedelta(seconds=45)
    assert str(thrice.id) in maintenance.sweep_unclaimed_jobs(now=later)


def test_idle_sessions_expire_unless_something_runs_in_them(now):
    user = _user()
    old = now - timedelta(hours=2)
    idle = Session.objects.create(user=user, last_used_at=old, idle_timeout_seconds=3600)
    busy = Session.objects.create(user=user, last_used_at=old, idle_timeout_seconds=3600)
    patient = Session.objects.create(user=user, last_used_at=old, idle_timeout_seconds=86400)
    _job(user, session=busy)
    assert maintenance.expire_sessions() == 1
    assert set(Session.objects.values_list("pk", flat=True)) == {busy.pk, patient.pk}
    assert not Session.objects.filter(pk=idle.pk).exists()
