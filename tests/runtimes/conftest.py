"""The runtime matrix: the worker suites that matter, run against each Spark runtime a
worker can use (``engine``'s seam): ``local`` (``SPARK_MASTER=local[2]``),
``cluster`` (a real standalone master + worker started from the pinned PySpark,
``SPARK_MASTER=spark://…``) and ``connect`` (a real Spark Connect server,
``SPARK_REMOTE=sc://…``).

One cluster and one Connect server serve the whole run (started the first time a test
needs them). The ``runtime_worker`` fixture is session-scoped and parametrised, so pytest
runs every test of one runtime before starting the next runtime's worker: three worker
starts in all. In this folder ``worker`` is that runtime's worker, so the tests imported
from ``tests/<room>/worker`` run unchanged on each runtime. The matrix's worker stops the shared
local worker (it would take their jobs), and is stopped in turn when a later test needs the
shared worker or workers of its own; the matrix runs after the shared-worker tests
(``tests.workers.order_worker_tests``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.runtimes.standalone import (
    StandaloneCluster,
    cluster_defaults,
    start_standalone_cluster,
)
from tests.workers import (
    WorkerProcess,
    _session_workers,
    _shared,
    purge_queue,
    start_worker,
)

RUNTIMES = ["local", "cluster", "connect"]


@pytest.fixture(scope="session")
def standalone_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    cluster = start_standalone_cluster(tmp_path_factory.mktemp("standalone"))
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def connect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from tests.runtimes.connect_server import start_connect_server

    server = start_connect_server(tmp_path_factory.mktemp("connect"))
    try:
        yield server
    finally:
        server.stop()


def runtime_env(
    runtime: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, str]:
    """What a worker's environment says to use ``runtime``."""
    if runtime == "local":
        return {"SPARK_MASTER": "local[2]"}
    if runtime == "cluster":
        cluster: StandaloneCluster = request.getfixturevalue("standalone_cluster")
        conf = cluster_defaults(tmp_path_factory.mktemp("spark-conf"))
        return {"SPARK_MASTER": cluster.url, "SPARK_CONF_DIR": str(conf)}
    if runtime == "connect":
        server = request.getfixturevalue("connect_server")
        return {"SPARK_REMOTE": server.url}
    raise ValueError(runtime)


@pytest.fixture(scope="session", params=RUNTIMES)
def runtime_worker(
    request: pytest.FixtureRequest,
    django_db_setup: None,
    django_db_blocker: Any,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[WorkerProcess]:
    """A live worker on one runtime (the parameter), for every test of that runtime."""
    for shared in _shared:
        shared.stop()
    runtime = str(request.param)
    env = runtime_env(runtime, request, tmp_path_factory)
    workers = start_worker(f"rt-{runtime}", tmp_path_factory, django_db_blocker, env)
    worker = next(workers)
    worker.runtime = runtime  # type: ignore[attr-defined]
    _session_workers.append(worker)
    try:
        yield worker
    finally:
        _session_workers.remove(worker)
        next(workers, None)


@pytest.fixture
def runtime(runtime_worker: WorkerProcess) -> str:
    """The name of the runtime the test runs on."""
    return str(runtime_worker.runtime)  # type: ignore[attr-defined]


@pytest.fixture
def worker(runtime_worker: WorkerProcess, django_db_blocker: Any) -> WorkerProcess:
    """In this folder: the current runtime's worker (started again if a test killed it)."""
    from tests.workers import _warm_up

    if not runtime_worker.alive():
        for shared in _shared:
            shared.stop()
        purge_queue()
        runtime_worker.start()
        _warm_up(django_db_blocker)
    return runtime_worker
