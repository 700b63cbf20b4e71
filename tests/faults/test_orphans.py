"""The rule behind the PostgreSQL-restart fix (database only): a worker fails the RUNNING
jobs it claimed that none of its threads runs, and only those."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from jobs import maintenance
from jobs.models import Job

pytestmark = pytest.mark.django_db

ME = "w@h/1/00000001"


def _running(user: User, identity: str, claimed_seconds_ago: float) -> Job:
    plan = {"action": "query", "needs_spark": True, "sql": "SELECT 1"}
    job = Job(user=user, sql="SELECT 1", kind="query", plan=plan, status="RUNNING")
    job.worker = identity
    job.started_at = job.heartbeat_at = timezone.now() - timedelta(seconds=claimed_seconds_ago)
    job.save()
    return job


def test_only_this_worker_s_jobs_that_no_thread_runs_are_failed(settings: Any) -> None:
    user = User.objects.create_user("orphan")
    orphan = _running(user, ME, 60)
    running_here = _running(user, ME, 60)
    just_claimed = _running(user, ME, 0)  # its thread registers a moment after the claim
    someone_elses = _running(user, "w@h/2/00000002", 60)
    failed = maintenance.fail_orphaned_jobs(ME, {str(running_here.id)})
    assert failed == [str(orphan.id)]
    statuses = dict(Job.objects.values_list("id", "status"))
    assert statuses[orphan.id] == "FAILED"
    assert {statuses[j.id] for j in (running_here, just_claimed, someone_elses)} == {"RUNNING"}
    orphan.refresh_from_db()
    assert (orphan.error or {})["code"] == "WORKER_LOST"
    assert ME in (orphan.error or {})["message"]
    assert maintenance.fail_orphaned_jobs(ME, {str(running_here.id)}) == []  # once
