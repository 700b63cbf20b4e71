"""Worker identity (docs/security.md §5): every start of a worker process is a new identity,
and the reaper judges a job by the identity that claimed it.

The attack it closes: worker names were fixed (``worker1@%h``), the reaper skipped jobs of
a name with a fresh heartbeat, so after ``kill -9`` and a restart under the same name the
dead worker's CTAS stayed RUNNING and its stage table ``staged``.
"""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import User
from django.utils import timezone

from catalog import services as catalog_services
from catalog.models import Table
from jobs import dispatch, maintenance, worker
from jobs.models import Job, Worker
from tests.conftest import API
from tests.waiting import wait_until
from tests.worker_helpers import api_for, create_user, events, open_session, statement, wait_job
from tests.workers import WorkerProcess, start_worker

# --- identities and the reaper's rule (database only) -----------------------------------------


def _row(identity: str, heartbeat: Any, **fields: Any) -> Worker:
    node = identity.split("/", 1)[0]
    return Worker.objects.create(
        hostname=identity,
        node=node,
        pid=1,
        started_at=heartbeat,
        last_heartbeat=heartbeat,
        **fields,
    )


def _running_job(user: User, identity: str, heartbeat: Any) -> Job:
    plan = {"action": "query", "needs_spark": True, "sql": "SELECT 1"}
    job = Job(user=user, sql="SELECT 1", kind="query", plan=plan, status="RUNNING")
    job.worker = identity
    job.heartbeat_at = heartbeat
    job.started_at = heartbeat
    job.save()
    return job


def test_each_start_of_a_worker_has_its_own_identity() -> None:
    first, second = worker.make_identity("worker1@host"), worker.make_identity("worker1@host")
    assert first != second
    for identity in (first, second):
        node, pid, start = identity.split("/")
        assert node == "worker1@host" and int(pid) > 0 and len(start) == 8


@pytest.mark.django_db
def test_a_restarted_worker_does_not_shield_the_jobs_of_the_process_before_it(settings):
    settings.TESSERA_WORKER_TIMEOUT_SECONDS = 10
    now = timezone.now()
    old = now - timedelta(seconds=60)
    # Same node name, two process starts: the first went silent, the second beats.
    _row("worker1@host/100/aaaaaaaa", old)
    _row("worker1@host/200/bbbbbbbb", now)
    user = User.objects.create_user("ivy")
    predecessors = _running_job(user, "worker1@host/100/aaaaaaaa", old)
    successors = _running_job(user, "worker1@host/200/bbbbbbbb", old)  # only its monitor is late
    assert maintenance.reap_lost_jobs() == [str(predecessors.id)]
    predecessors.refresh_from_db()
    successors.refresh_from_db()
    assert predecessors.status == "FAILED"
    assert (predecessors.error or {})["code"] == "WORKER_LOST"
    assert (predecessors.error or {})["details"] == {"worker": "worker1@host/100/aaaaaaaa"}
    assert successors.status == "RUNNING"


@pytest.mark.django_db
def test_a_stopped_worker_s_jobs_are_reaped_at_once_and_it_is_not_counted(settings, anon_api):
    settings.TESSERA_WORKER_TIMEOUT_SECONDS = 3600  # the heartbeat rule alone would wait an hour
    now = timezone.now()
    _row("w@h/1/00000001", now, stopped_at=now)
    _row("w@h/2/00000002", now)
    user = User.objects.create_user("jim")
    job = _running_job(user, "w@h/1/00000001", now)  # its heartbeat is fresh
    assert maintenance.reap_lost_jobs() == [str(job.id)]
    job.refresh_from_db()
    assert job.status == "FAILED" and (job.error or {})["code"] == "WORKER_LOST"
    assert dispatch.live_worker_count() == 1
    assert anon_api.get(f"{API}/health").json()["workers"] == 1


@pytest.mark.django_db
def test_processes_that_ended_on_this_machine_are_retired(settings):
    now = timezone.now()
    sleeper = subprocess.Popen(["sleep", "60"])
    ended = worker.process_token(sleeper.pid)
    sleeper.kill()
    sleeper.wait()
    own = worker.process_token()
    assert ended and own
    machine, pid, ticks = own.split("/")
    _row("w@h/1/00000001", now, process=ended)  # killed
    _row("w@h/2/00000002", now, process=own)  # this very process: alive
    _row("w@h/3/00000003", now, process=f"{machine}/{pid}/{int(ticks) - 1}")  # pid reused
    _row(
        "w@h/4/00000004", now, process=f"other-machine:pid:[1]/{sleeper.pid}/1"
    )  # not ours to judge
    _row("w@h/5/00000005", now, process="")  # no /proc where it ran
    retired = worker.retire_gone_workers(own="w@h/9/00000009")
    assert sorted(retired) == ["w@h/1/00000001", "w@h/3/00000003"]
    stopped = set(
        Worker.objects.filter(stopped_at__isnull=False).values_list("hostname", flat=True)
    )
    assert stopped == {"w@h/1/00000001", "w@h/3/00000003"}
    assert worker.retire_gone_workers() == []  # already marked


@pytest.mark.django_db
def test_rows_of_long_gone_processes_are_forgotten() -> None:
    now = timezone.now()
    _row("w@h/1/00000001", now - timedelta(days=2))
    _row("w@h/2/00000002", now)
    assert worker.forget_old_workers() == 1
    assert list(Worker.objects.values_list("hostname", flat=True)) == ["w@h/2/00000002"]


# --- kill -9 and restart under the same name, on real workers ---------------------------------

# Long enough that only the identity rule can explain a quick reap.
LONG_TIMEOUT = "120"
SLOW_QUERY = (
    "SELECT id, id * 7 AS seven, sha2(CAST(id AS STRING), 256) AS digest "
    "FROM range(0, 3000000000, 1, 4)"
)
STAGING_PREFIX = "_tessera_staging_"


@pytest.fixture(scope="module")
def phoenix(
    django_db_setup: None,
    django_db_blocker: Any,
    tmp_path_factory: pytest.TempPathFactory,
    own_workers_only: None,
) -> Iterator[WorkerProcess]:
    env = {"TESSERA_WORKER_TIMEOUT_SECONDS": LONG_TIMEOUT}
    yield from start_worker("phoenix", tmp_path_factory, django_db_blocker, env)


def _staging_dirs(root: Path) -> list[Path]:
    return [p for p in root.rglob(f"{STAGING_PREFIX}*") if p.is_dir()] if root.exists() else []


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_kill_9_and_restart_under_the_same_name_fails_the_dead_worker_s_ctas(
    phoenix: WorkerProcess, settings: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    settings.TESSERA_WORKER_TIMEOUT_SECONDS = int(LONG_TIMEOUT)  # as the workers were told
    user = create_user(f"kai{uuid.uuid4().hex[:6]}")
    api = api_for(user)
    catalog = f"w{uuid.uuid4().hex[:10]}"
    catalog_services.catalog_create(user=user, name=catalog, default_database="d")
    session = open_session(api)
    job_id = statement(api, session, f"CREATE TABLE {catalog}.d.lost AS {SLOW_QUERY}")["id"]

    def writing() -> Job | None:
        job = Job.objects.get(pk=job_id)
        assert job.status in {"CREATED", "RUNNING"}, (job.status, job.error)
        staged = [Path(entry["location"]) for entry in (job.staging or {}).values()]
        return (
            job if job.status == "RUNNING" and staged and all(p.exists() for p in staged) else None
        )

    job = wait_until(writing, 90, 0.1, "the CTAS to write its staging directory")
    dead_identity = phoenix.hostname
    assert job.worker == dead_identity
    assert Table.objects.get(database__catalog__name=catalog, name_key="lost").status == "staged"

    phoenix.kill()
    killed = time.monotonic()
    # The same node name again (as `make run` or a container restart would do).
    successor = WorkerProcess(
        "phoenix",
        tmp_path_factory.mktemp("phoenix-again") / "worker.log",
        phoenix.blocker,
        {"TESSERA_WORKER_TIMEOUT_SECONDS": LONG_TIMEOUT},
    )
    successor.start()
    try:
        beating = time.monotonic()
        assert successor.hostname != dead_identity
        assert successor.hostname.split("/")[0] == dead_identity.split("/")[0]  # same node

        def failed() -> Job | None:
            job = Job.objects.get(pk=job_id)
            return job if job.status != "RUNNING" else None

        job = wait_until(failed, 30, 0.1, "the dead worker's CTAS to be reaped")
        reaped = time.monotonic()
        print(
            f"\nreaped {reaped - killed:.1f} s after kill -9, "
            f"{reaped - beating:.1f} s after the new worker's first heartbeat"
        )
        assert job.status == "FAILED" and job.error is not None, job.error
        assert job.error["code"] == "WORKER_LOST", job.error
        assert dead_identity in job.error["message"]
        # Its hooks ran: the stage table is dropped and its files are gone.
        wait_until(
            lambda: not Table.objects.filter(database__catalog__name=catalog).exists(),
            15,
            0.1,
            "the stage table to be dropped",
        )
        wait_until(lambda: "data_cleaned" in events(job_id), 15, 0.1, "the staging clean-up")
        warehouse = Path(django_settings.WAREHOUSE_DIR) / catalog
        assert _staging_dirs(warehouse) == []
        # The dead process is stopped, not counted; the new one is.
        dead = Worker.objects.get(hostname=dead_identity)
        assert dead.stopped_at is not None
        live = set(dispatch.live_workers().values_list("hostname", flat=True))
        assert dead_identity not in live and successor.hostname in live

        # The new process runs the next statement, under its own identity.
        done = wait_job(api, statement(api, session, "SELECT 42 AS answer")["id"], timeout=120)
        assert done["status"] == "FINISHED", done
        assert Job.objects.get(pk=done["id"]).worker == successor.hostname
    except BaseException:
        print(successor.log_tail())
        raise
    finally:
        successor.stop()
