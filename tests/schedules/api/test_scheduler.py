"""The scheduler's tick: a due slot runs once, as the owner, through the statements service
(origin "schedule"); two ticks at once make one run; a gap runs the latest missed slot once;
an owner who lost access fails the run with PERMISSION_DENIED."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.utils import timezone

from catalog.models import Grant, Table
from core import jobstate
from jobs.models import Job
from schedules import scheduler
from schedules.models import Schedule, ScheduleRun
from tests.conftest import API, assert_error
from tests.grants_support import share
from tests.schedules.api.conftest import create_schedule, due_at, finish_job, save_query

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.django_db
def test_a_due_slot_runs_once_as_its_owner_and_shows_in_jobs(alice_api):
    made = create_schedule(alice_api, save_query(alice_api, sql="SELECT 42 AS n"))
    assert scheduler.tick() == []  # its first slot is ahead
    now = timezone.now()
    due_at(made["id"], now - timedelta(seconds=5))
    [run_id] = scheduler.tick(now)
    run = ScheduleRun.objects.select_related("job").get(pk=run_id)
    assert run.job is not None and run.status == "SUBMITTED"
    assert (run.job.origin, run.job.user.username, run.job.sql) == (
        "schedule",
        "alice",
        "SELECT 42 AS n",
    )
    assert run.scheduled_for <= now
    assert scheduler.tick(now) == []  # the slot ran: nothing due until the next one
    following = Schedule.objects.get(pk=made["id"]).next_run_at
    assert following is not None and following > now

    job = alice_api.get(f"{API}/jobs/{run.job_id}").json()
    assert job["origin"] == "schedule"
    runs = alice_api.get(f"{API}/schedules/{made['id']}/runs").json()["items"]
    assert [(r["id"], r["job"], r["status"]) for r in runs] == [
        (str(run_id), str(run.job_id), "SUBMITTED")
    ]
    finish_job(run.job_id, {"n": [42]}, {"n": "INT"})
    [shown] = alice_api.get(f"{API}/schedules/{made['id']}/runs").json()["items"]
    assert (shown["status"], shown["job_status"], shown["error"]) == ("FINISHED", "FINISHED", None)


@pytest.mark.django_db
def test_a_users_own_statements_say_origin_user(alice_api):
    session = alice_api.post(f"{API}/sessions", {}).json()["id"]
    job = alice_api.post(f"{API}/sessions/{session}/statements", {"sql": "SELECT 1"}).json()
    assert job["origin"] == "user"


@pytest.mark.django_db
def test_after_a_gap_the_latest_missed_slot_runs_once(alice_api):
    made = create_schedule(alice_api, save_query(alice_api), cron="*/10 * * * *")
    due_at(made["id"], T0)  # then every worker stopped for an hour
    [first] = scheduler.tick(T0 + timedelta(hours=1, minutes=5))
    assert ScheduleRun.objects.get(pk=first).scheduled_for == T0 + timedelta(hours=1)
    assert Schedule.objects.get(pk=made["id"]).next_run_at == T0 + timedelta(hours=1, minutes=10)
    assert scheduler.tick(T0 + timedelta(hours=1, minutes=9)) == []
    [second] = scheduler.tick(T0 + timedelta(hours=1, minutes=10))
    assert ScheduleRun.objects.get(pk=second).scheduled_for == T0 + timedelta(hours=1, minutes=10)
    assert ScheduleRun.objects.count() == 2
    assert Job.objects.filter(origin="schedule").count() == 2


@pytest.mark.django_db
def test_a_disabled_schedule_does_not_run(alice_api):
    made = create_schedule(alice_api, save_query(alice_api), enabled=False)
    Schedule.objects.filter(pk=made["id"]).update(next_run_at=T0)
    assert scheduler.tick(T0 + timedelta(days=1)) == []
    assert not ScheduleRun.objects.exists()


@pytest.mark.django_db
def test_a_slot_whose_run_exists_is_not_run_again(alice_api):
    """A second runner that got past the lock (it cannot, but the constraint is the last
    word): the insert of the same slot fails and no job is made."""
    made = create_schedule(alice_api, save_query(alice_api), cron="0 * * * *")
    ScheduleRun.objects.create(schedule_id=made["id"], scheduled_for=T0 + timedelta(hours=1))
    due_at(made["id"], T0 + timedelta(hours=1))
    assert scheduler.tick(T0 + timedelta(hours=1, minutes=1)) == []
    assert ScheduleRun.objects.count() == 1 and not Job.objects.exists()
    assert Schedule.objects.get(pk=made["id"]).next_run_at == T0 + timedelta(hours=2)


@pytest.mark.django_db(transaction=True)
def test_two_ticks_at_once_make_exactly_one_run(alice_api):
    made = create_schedule(alice_api, save_query(alice_api))
    # Due a day from now: a live worker's own tick (real time) leaves it to the two below.
    later = timezone.now() + timedelta(days=1)
    due_at(made["id"], later)
    now = later + timedelta(seconds=30)
    barrier = threading.Barrier(2)
    made_runs: list[list[object]] = []
    failures: list[BaseException] = []

    def runner() -> None:
        try:
            barrier.wait(timeout=30)
            made_runs.append(scheduler.tick(now))
        except BaseException as exc:  # reported by the test, not lost in the thread
            failures.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=runner) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not failures, failures
    assert sorted(len(runs) for runs in made_runs) == [0, 1]
    assert ScheduleRun.objects.filter(schedule_id=made["id"]).count() == 1
    assert Job.objects.filter(origin="schedule").count() == 1


@pytest.mark.django_db
def test_an_owner_who_lost_select_fails_the_run_with_permission_denied(make, alice, bob, bob_api):
    make.catalog("demo", shared=False)
    make.database("demo", "d")
    make.table("demo", "d", "t")
    share("demo", user=bob)  # USE, SELECT, EXECUTE
    share(Table.objects.get(name="t"), ["USE"], user=bob)  # he still sees it without SELECT
    made = create_schedule(bob_api, save_query(bob_api, sql="SELECT * FROM demo.d.t"))
    due_at(made["id"], T0)
    [allowed] = scheduler.tick(T0 + timedelta(seconds=1))
    job = ScheduleRun.objects.get(pk=allowed).job
    assert job is not None and job.status == jobstate.CREATED and job.user == bob

    Grant.objects.filter(principal_key=f"user:{bob.pk}", privilege="SELECT").delete()
    due_at(made["id"], T0 + timedelta(minutes=1))
    [refused] = scheduler.tick(T0 + timedelta(minutes=1, seconds=1))
    run = ScheduleRun.objects.select_related("job").get(pk=refused)
    assert run.job is not None and run.job.status == jobstate.FAILED
    assert run.status == "FAILED" and (run.error or {})["code"] == "PERMISSION_DENIED", run.error
    [shown, _] = bob_api.get(f"{API}/schedules/{made['id']}/runs").json()["items"]
    assert (shown["status"], shown["error"]["code"]) == ("FAILED", "PERMISSION_DENIED")


@pytest.mark.django_db
def test_another_users_shared_query_cannot_be_scheduled(alice, alice_api, bob, bob_api):
    """A schedule runs with its owner's rights: a query shared with bob is alice's to
    change, so bob's schedule of it would run whatever alice writes next as bob."""
    team, _ = Group.objects.get_or_create(name="analysts")
    alice.groups.add(team)
    bob.groups.add(team)
    query = save_query(alice_api, shared=True)
    assert bob_api.get(f"{API}/saved-queries/{query}").status_code == 200  # bob may read it
    refused = bob_api.post(
        f"{API}/schedules", {"saved_query": query, "cron": "* * * * *", "timezone": "UTC"}
    )
    error = assert_error(refused, 400, "VALIDATION_ERROR", "alice's", "copy")
    assert error["details"]["field"] == "saved_query"
    mine = create_schedule(bob_api, save_query(bob_api, name="own"))
    changed = bob_api.patch(f"{API}/schedules/{mine['id']}", {"saved_query": query})
    assert assert_error(changed, 400, "VALIDATION_ERROR")["details"]["field"] == "saved_query"
    assert Schedule.objects.filter(owner=bob).count() == 1
    # A row of another's query (made before this rule) fails its run, with no job.
    made = Schedule.objects.get(pk=mine["id"])
    Schedule.objects.filter(pk=made.pk).update(saved_query_id=query)
    due_at(made.pk, T0)
    [run_id] = scheduler.tick(T0 + timedelta(seconds=1))
    run = ScheduleRun.objects.get(pk=run_id)
    assert run.job is None and run.status == "FAILED"
    error = run.error or {}
    assert error["code"] == "PERMISSION_DENIED" and "revenue" in error["message"]


@pytest.mark.django_db
def test_a_failed_job_fails_its_run_with_the_jobs_error(alice_api):
    made = create_schedule(alice_api, save_query(alice_api, sql="SELECT * FROM nowhere.d.t"))
    due_at(made["id"], T0)
    [run_id] = scheduler.tick(T0 + timedelta(seconds=1))
    run = ScheduleRun.objects.select_related("job").get(pk=run_id)
    assert run.job is not None and run.job.status == jobstate.FAILED
    assert run.status == "FAILED" and run.error == run.job.error


@pytest.mark.django_db
def test_ten_minutes_of_two_workers_ticking_with_a_restart_make_ten_runs(alice_api):
    """Every minute for ten minutes, two workers ticking every 7 s, both down from 4:50 to
    5:30 (a restart): each slot runs once, the 5:00 one late."""
    made = create_schedule(alice_api, save_query(alice_api))
    due_at(made["id"], T0)
    for second in range(0, 600, 7):
        if 290 <= second < 330:
            continue  # the restart
        for _worker in range(2):
            scheduler.tick(T0 + timedelta(seconds=second))
    slots = list(
        ScheduleRun.objects.filter(schedule_id=made["id"])
        .order_by("scheduled_for")
        .values_list("scheduled_for", flat=True)
    )
    assert slots == [T0 + timedelta(minutes=m) for m in range(10)]
    assert Job.objects.filter(origin="schedule").count() == 10
