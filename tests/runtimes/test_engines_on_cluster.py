"""Engines per user on a standalone cluster (the ``cluster`` runtime; engine/pool.py,
jobs/engines.py): each engine is a Spark application of its own, with executors of its own,
on the cluster the runtime matrix shares (``standalone_cluster``).

Told by the master itself (its JSON state, ``StandaloneCluster.state``): alice's and bob's
engines are two applications, each granted ``TESSERA_ENGINE_CORES`` (1) core. While bob's
long query holds his application's executor, alice's statements run on hers; a kill -9 of
bob's driver JVM (``Engine.pid``) fails only bob's job and ends only his application, alice's
long query finishes with the right answer, and bob's next statement gets a fresh application
on the core his old one gave back.

The matrix's cluster has one Spark worker of 2 cores and 1 GiB (``start_standalone_cluster``'s
defaults); executors here are 1 core and 512 MiB (``cluster_defaults``; the engines' own
``spark.cores.max`` = ``TESSERA_ENGINE_CORES`` = 1 overrides its ``spark.cores.max 2``). So
exactly two engines' applications fit on it at once: the worker keeps no spare engine (a
third application would wait for cores, and its start, which runs the storage check on the
executors, with it) and at most two engines.
"""

from __future__ import annotations

import os
import signal
import uuid
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from jobs.models import Engine, Job, JobEvent
from tests.runtimes.standalone import StandaloneCluster, cluster_defaults
from tests.waiting import wait_until
from tests.worker_helpers import (
    create_user,
    engine_of,
    finished_rows,
    run_to_end,
    runs_tasks,
    submit_sql,
    wait_for_status,
)
from tests.workers import WorkerProcess, purge_queue

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("own_workers_only"),
]

ENGINE_CORES = 1
EXECUTOR_MEMORY_MB = 512
WORKER_ENV = {
    "TESSERA_ENGINE_SHARE_LEVEL": "user",
    "TESSERA_ENGINE_CORES": str(ENGINE_CORES),
    # Two applications fill the cluster (see the module's docstring).
    "TESSERA_ENGINE_SPARES": "0",
    "TESSERA_ENGINES_MAX": "2",
    "TESSERA_ENGINE_IDLE_SECONDS": "600",
    "TESSERA_SPARK_DRIVER_MEMORY": "512m",
}
# Only counts, on the application's one executor core: n * 60,000 rows; alice's n = 120,000
# takes half a minute there, bob's (n = 10⁷) runs until his driver is killed.
LONG = "SELECT count(*) AS n FROM range(0, {n}) AS a CROSS JOIN range(0, 60000) AS b"
ALICE_N = 120_000
ENDED = {"FINISHED", "FAILED", "CANCELED"}


@pytest.fixture
def engines_worker(
    standalone_cluster: StandaloneCluster, django_db_blocker: Any, tmp_path: Path
) -> Iterator[WorkerProcess]:
    # The matrix's cluster worker (stopped by ``own_workers_only``) has left the cluster.
    wait_until(
        lambda: not standalone_cluster.state()["activeapps"],
        60,
        0.5,
        "no application on the cluster",
    )
    conf = cluster_defaults(tmp_path / "conf", executor_memory=f"{EXECUTOR_MEMORY_MB}m")
    worker = WorkerProcess(
        "rt-cluster-engines",
        tmp_path / "worker.log",
        django_db_blocker,
        {**WORKER_ENV, "SPARK_MASTER": standalone_cluster.url, "SPARK_CONF_DIR": str(conf)},
    )
    purge_queue()
    worker.start()
    try:
        yield worker
    finally:
        worker.stop()
        purge_queue()


@pytest.fixture(autouse=True)
def web_settings(settings: Any) -> None:
    settings.TESSERA_ENGINE_SHARE_LEVEL = "user"


def active_apps(cluster: StandaloneCluster) -> dict[str, dict[str, Any]]:
    return {app["id"]: app for app in cluster.state()["activeapps"]}


def new_app(cluster: StandaloneCluster, known: set[str]) -> dict[str, Any]:
    """The one application registered since ``known``, once its executor is granted."""

    def granted() -> dict[str, Any] | None:
        apps = [a for i, a in active_apps(cluster).items() if i not in known]
        assert len(apps) <= 1, apps
        return apps[0] if apps and apps[0]["cores"] > 0 else None

    found: dict[str, Any] = wait_until(granted, 60, 0.5, "the engine's application")
    return found


def status(job: Job) -> str:
    return str(Job.objects.values_list("status", flat=True).get(pk=job.pk))


def is_java(pid: int) -> bool:
    return Path(f"/proc/{pid}/comm").read_text().strip() == "java"


@pytest.mark.timeout(900)
def test_each_user_s_engine_is_a_spark_application_of_its_own(
    standalone_cluster: StandaloneCluster, engines_worker: WorkerProcess
) -> None:
    alice = create_user(f"alice{uuid.uuid4().hex[:6]}")
    bob = create_user(f"bob{uuid.uuid4().hex[:6]}")
    before = set(active_apps(standalone_cluster))

    # Both users' statements finish with the right answers, each on an engine that is an
    # application of its own on the master, granted one core and a 512 MiB executor.
    a1 = run_to_end(alice, "SELECT 1 AS one")
    assert finished_rows(a1) == [[1]]
    alice_app = new_app(standalone_cluster, before)
    b1 = run_to_end(bob, "SELECT sum(id) AS s FROM range(0, 100000, 1, 2)")
    assert finished_rows(b1) == [[4999950000]]
    bob_app = new_app(standalone_cluster, {*before, alice_app["id"]})
    alice_engine, bob_engine = engine_of(a1), engine_of(b1)
    assert alice_engine.pk != bob_engine.pk
    assert (alice_engine.share_key, bob_engine.share_key) == (f"user:{alice.pk}", f"user:{bob.pk}")
    assert alice_engine.runtime == bob_engine.runtime == "cluster"
    assert alice_engine.pid and bob_engine.pid and alice_engine.pid != bob_engine.pid
    assert is_java(alice_engine.pid) and is_java(bob_engine.pid)  # two driver JVMs
    for app, engine in ((alice_app, alice_engine), (bob_app, bob_engine)):
        # Named after its engine, so that an operator can tell the applications apart.
        assert app["name"] == f"tessera-engine-{engine.pk}" and app["state"] == "RUNNING", app
        assert app["cores"] == ENGINE_CORES, app  # spark.cores.max, not the whole cluster
        assert app["memoryperexecutor"] == EXECUTOR_MEMORY_MB, app
    (node,) = standalone_cluster.state()["workers"]
    assert (node["cores"], node["coresused"]) == (2, 2), node  # the two fill the cluster

    # Bob's long query holds his application's executor; alice's statements run meanwhile
    # on hers (a Spark job with tasks, not only the driver) and finish.
    b2 = submit_sql(bob, LONG.format(n=10_000_000))
    wait_until(partial(runs_tasks, b2), 120, 0.25, "bob's long query's tasks")
    a2 = run_to_end(alice, "SELECT sum(id) AS s FROM range(0, 1000, 1, 2)", timeout=120)
    assert finished_rows(a2) == [[499500]]
    assert a2.progress["tasks_total"] >= 2, a2.progress
    assert engine_of(a2).pk == alice_engine.pk
    assert finished_rows(run_to_end(alice, "SELECT 1 AS one", timeout=120)) == [[1]]
    assert status(b2) == "RUNNING"

    # A kill -9 of bob's driver JVM: his job fails, his application ends (the master takes
    # its executor back); alice's long query, running meanwhile, finishes with its answer.
    a3 = submit_sql(alice, LONG.format(n=ALICE_N))
    wait_until(partial(runs_tasks, a3), 120, 0.25, "alice's long query's tasks")
    os.kill(bob_engine.pid, signal.SIGKILL)
    lost = wait_for_status(b2.pk, ENDED, 120)
    assert lost.status == "FAILED", lost.status
    assert lost.error is not None and lost.error["code"] == "ENGINE_LOST", lost.error
    wait_until(
        lambda: bob_app["id"] not in active_apps(standalone_cluster),
        60,
        0.5,
        "bob's application to end",
    )
    assert alice_app["id"] in active_apps(standalone_cluster)
    assert status(a3) == "RUNNING"  # outlived bob's driver and application
    done = wait_for_status(a3.pk, ENDED, 600)
    assert finished_rows(done) == [[ALICE_N * 60_000]]
    events = list(JobEvent.objects.filter(job=done).values_list("type", flat=True))
    assert "engine_lost" not in events, events
    assert engine_of(done).pk == alice_engine.pk
    assert Engine.objects.get(pk=alice_engine.pk).state == Engine.READY
    assert Engine.objects.get(pk=bob_engine.pk).state == Engine.LOST
    assert active_apps(standalone_cluster)[alice_app["id"]]["cores"] == ENGINE_CORES

    # Bob's next statement gets a fresh engine: a new application, on the freed core.
    again = run_to_end(bob, "SELECT 40 + 2 AS answer")
    assert finished_rows(again) == [[42]]
    assert engine_of(again).pk != bob_engine.pk
    fresh = new_app(standalone_cluster, {*before, alice_app["id"], bob_app["id"]})
    assert fresh["cores"] == ENGINE_CORES, fresh
    assert set(active_apps(standalone_cluster)) - before == {alice_app["id"], fresh["id"]}
