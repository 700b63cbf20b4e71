"""Engines per user (docs/api.md §6, engine/pool.py): a real worker whose jobs run in one
engine process (its own driver JVM) per user, against the real PostgreSQL and Redis.

Shown here: each user's jobs run on their own engine and a second statement reuses it; a
new user takes the warm spare; one user's memory bomb fails only that user's job while the
other user's long query finishes with the right answer; a JVM killed under two reads of a
user runs both again once on a fresh engine; a restart asked over REST stops the engine
and the next statement gets another; an idle engine stops; past ``TESSERA_ENGINES_MAX`` the
least recently used idle engine makes room.

The module stops the shared worker (``own_workers_only``) and runs after the other tests.
"""

from __future__ import annotations

import os
import signal
import uuid
from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest
from django.contrib.auth.models import User

from jobs.models import Engine, Job, JobEvent
from tests.conftest import API
from tests.waiting import wait_until
from tests.worker_helpers import api_for, create_user, engine_of, submit_sql, wait_for_status
from tests.workers import WorkerProcess, start_worker

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

ENGINES_MAX = 3
IDLE_SECONDS = 90  # longer than the other tests' pauses on a busy machine
WORKER_ENV = {
    "TESSERA_ENGINE_SHARE_LEVEL": "user",
    "TESSERA_ENGINE_SPARES": "1",
    "TESSERA_ENGINES_MAX": str(ENGINES_MAX),
    "TESSERA_ENGINE_IDLE_SECONDS": str(IDLE_SECONDS),
    "SPARK_MASTER": "local[1]",
    "TESSERA_SPARK_DRIVER_MEMORY": "512m",
}
# A query of several seconds on one core that only counts.
LONG = "SELECT count(*) AS n FROM range(0, {n}) AS a CROSS JOIN range(0, 60000) AS b"
# Half a billion integers in one array: far past a 512 MB heap.
BOMB = "SELECT count(*) AS n FROM (SELECT explode(sequence(1, 500000000)))"
FINISHED = {"FINISHED"}
ENDED = {"FINISHED", "FAILED", "CANCELED"}


@pytest.fixture(scope="module")
def engines_worker(
    django_db_setup: None,
    django_db_blocker: Any,
    tmp_path_factory: pytest.TempPathFactory,
    own_workers_only: None,
) -> Iterator[WorkerProcess]:
    workers = start_worker("engines", tmp_path_factory, django_db_blocker, WORKER_ENV, 4)
    worker = next(workers)
    yield worker
    next(workers, None)


@pytest.fixture(autouse=True)
def web_settings(settings: Any) -> None:
    settings.TESSERA_ENGINE_SHARE_LEVEL = "user"


def user(prefix: str) -> User:
    return create_user(f"{prefix}{uuid.uuid4().hex[:6]}")


def run(who: User, sql: str, timeout: float = 180) -> Job:
    job = submit_sql(who, sql)
    return wait_for_status(job.id, ENDED, timeout)


def event_types(job: Job) -> list[str]:
    return list(JobEvent.objects.filter(job=job).order_by("id").values_list("type", flat=True))


def assigned(job: Job) -> dict[str, Any]:
    event = JobEvent.objects.filter(job=job, type="engine_assigned").order_by("-id").first()
    assert event is not None, event_types(job)
    return dict(event.detail)


def running_on_engine(job: Job) -> bool:
    """The job runs Spark work on its engine (its monitor reported progress)."""
    row = Job.objects.get(pk=job.pk)
    return row.status == "RUNNING" and row.engine_id is not None and bool(row.progress)


def ready_spare() -> Engine:
    return wait_until(
        lambda: Engine.objects.filter(share_key="", state=Engine.READY).first(),
        180,
        0.25,
        "a ready spare engine",
    )


def test_each_user_runs_on_an_engine_of_their_own(engines_worker: WorkerProcess) -> None:
    alice, bob = user("alice"), user("bob")
    a1, b1 = run(alice, "SELECT 1 AS one"), run(bob, "SELECT 2 AS two")
    a2 = run(alice, "SELECT 3 AS three")
    assert {a1.status, b1.status, a2.status} == FINISHED
    ea, eb = engine_of(a1), engine_of(b1)
    assert ea.pk != eb.pk
    assert (ea.share_key, eb.share_key) == (f"user:{alice.pk}", f"user:{bob.pk}")
    assert ea.share_level == "user" and ea.state == Engine.READY and ea.pid
    assert engine_of(a2).pk == ea.pk  # a second statement reuses the warm engine
    assert ea.pid != eb.pid  # two driver JVMs
    assert assigned(a1)["share_key"] == f"user:{alice.pk}"
    # The job's JSON names its engine; the engine is listed for its user.
    client = api_for(alice)
    assert client.get(f"{API}/jobs/{a1.pk}").json()["engine"] == str(ea.pk)


def test_a_new_user_takes_the_warm_spare(engines_worker: WorkerProcess) -> None:
    spare = ready_spare()
    carol = user("carol")
    job = run(carol, "SELECT 1 AS one")
    assert job.status == "FINISHED", job.error
    detail = assigned(job)
    assert detail["spare"] is True and detail["engine"] == str(spare.pk)
    print(f"spare assigned in {detail['waited_ms']} ms")
    assert detail["waited_ms"] < 5000
    # Another spare is started for the next new user.
    assert ready_spare().pk != spare.pk


def test_a_memory_bomb_fails_only_its_user_s_job(engines_worker: WorkerProcess) -> None:
    alice, bob = user("alice"), user("bob")
    warm = run(alice, "SELECT 1 AS one")
    assert warm.status == "FINISHED"
    alice_engine = engine_of(warm)
    long_job = submit_sql(alice, LONG.format(n=30000))
    wait_for_status(long_job.id, {"RUNNING"}, 60)
    bomb = run(bob, BOMB, timeout=240)
    assert bomb.status == "FAILED"
    assert bomb.error is not None
    assert bomb.error["code"] in {"SPARK_OUT_OF_MEMORY", "ENGINE_LOST"}, bomb.error
    bob_engine = engine_of(bomb)
    wait_until(
        lambda: Engine.objects.get(pk=bob_engine.pk).state == Engine.LOST,
        60,
        0.25,
        "bob's engine to be gone",
    )
    # Alice's query, running meanwhile on her own engine, finishes with the right answer.
    done = wait_for_status(long_job.id, ENDED, 300)
    assert done.status == "FINISHED", done.error
    assert engine_of(done).pk == alice_engine.pk
    assert api_for(alice).get(f"{API}/jobs/{done.pk}/result").json()["rows"] == [[30000 * 60000]]
    assert "engine_lost" not in event_types(done)
    assert Engine.objects.get(pk=alice_engine.pk).state == Engine.READY
    # Bob's next statement gets a fresh engine.
    after = run(bob, "SELECT 40 + 2 AS answer")
    assert after.status == "FINISHED", after.error
    assert engine_of(after).pk != bob_engine.pk


def test_reads_that_shared_a_killed_engine_run_again_once(
    engines_worker: WorkerProcess,
) -> None:
    dave, erin = user("dave"), user("erin")
    warm = run(dave, "SELECT 1 AS one")
    engine = engine_of(warm)
    other = run(erin, "SELECT 1 AS one")
    jobs = [submit_sql(dave, LONG.format(n=20000 + i)) for i in range(2)]
    for job in jobs:  # both running in Spark on dave's engine, not only claimed
        wait_until(partial(running_on_engine, job), 120, 0.25, "the read to run")
    erin_long = submit_sql(erin, LONG.format(n=10000))
    assert engine.pid
    os.kill(engine.pid, signal.SIGKILL)  # dave's driver JVM
    for job in jobs:
        done = wait_for_status(job.id, ENDED, 300)
        assert done.status == "FINISHED", (done.error, event_types(done))
        types = event_types(done)
        assert types.count("engine_lost") == 1, types
        assert engine_of(done).pk != engine.pk
    erin_done = wait_for_status(erin_long.id, ENDED, 300)
    assert erin_done.status == "FINISHED", erin_done.error
    assert "engine_lost" not in event_types(erin_done)
    # Erin's job ran on her engine, which did not die (it may have made room since).
    assert engine_of(erin_done).pk == engine_of(other).pk
    assert engine_of(other).stop_reason != "lost"
    assert Engine.objects.get(pk=engine.pk).state == Engine.LOST


def test_a_restart_asked_over_rest_gives_the_next_statement_a_fresh_engine(
    engines_worker: WorkerProcess,
) -> None:
    frank = user("frank")
    first = run(frank, "SELECT 1 AS one")
    engine = engine_of(first)
    response = api_for(frank).post(f"{API}/engines/{engine.pk}/restart")
    assert response.status_code == 202, response.content
    wait_until(
        lambda: Engine.objects.get(pk=engine.pk).state == Engine.STOPPED,
        60,
        0.25,
        "the engine to stop",
    )
    assert Engine.objects.get(pk=engine.pk).stop_reason == "restart"
    again = run(frank, "SELECT 2 AS two")
    assert again.status == "FINISHED" and engine_of(again).pk != engine.pk


def test_past_the_most_engines_the_least_recently_used_idle_one_stops(
    engines_worker: WorkerProcess,
) -> None:
    crowd = [user(f"lru{i}") for i in range(ENGINES_MAX + 1)]
    first_engine = None
    for index, who in enumerate(crowd):
        job = run(who, "SELECT 1 AS one")
        assert job.status == "FINISHED", job.error
        if index == 0:
            first_engine = engine_of(job)
    assert first_engine is not None
    live = Engine.objects.filter(state__in=(Engine.STARTING, Engine.READY, Engine.STOPPING))
    wait_until(lambda: live.count() <= ENGINES_MAX, 60, 0.25, "at most the most engines")
    stopped = Engine.objects.get(pk=first_engine.pk)
    assert stopped.state == Engine.STOPPED and stopped.stop_reason == "evicted", stopped


def test_an_idle_engine_stops(engines_worker: WorkerProcess) -> None:
    gina = user("gina")
    engine = engine_of(run(gina, "SELECT 1 AS one"))
    stopped = wait_until(
        lambda: Engine.objects.filter(pk=engine.pk, state=Engine.STOPPED).first(),
        IDLE_SECONDS + 60,
        0.5,
        "the idle engine to stop",
    )
    assert stopped.stop_reason == "idle"


def test_a_schema_check_is_answered_by_an_engine(
    engines_worker: WorkerProcess, alice_api: Any, make: Any
) -> None:
    """The worker has no Spark of its own with engines per user: a catalog write that waits
    for Spark's analyzer (a computed column) is answered by one of its engines."""
    make.catalog("shop", default_database="sales")
    schema = {
        "columns": [
            {"name": "price", "data_type": "DECIMAL(10, 2)"},
            {"name": "qty", "data_type": "INT"},
            {"name": "total", "kind": "computed", "expression": "price * qty"},
        ]
    }
    response = alice_api.post(
        f"{API}/catalogs/shop/databases/sales/tables", {"name": "orders", "schema": schema}
    )
    assert response.status_code == 201, response.content
    total = response.json()["resolved_schema"]["columns"][2]
    assert total["data_type"] == "DECIMAL(21, 2)"
