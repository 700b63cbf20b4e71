"""Engines per user on the Spark Connect runtime (``SPARK_REMOTE``; engine/pool.py,
jobs/engines.py): what a share level gives there, and what it does not.

An engine process on Connect launches no Spark application: its JVM (``Engine.pid``) is the
small local parser of the SQL guard, and its jobs execute on the one Connect server, as a
client of its own. So with ``TESSERA_ENGINE_SHARE_LEVEL=user`` alice's and bob's statements
run and finish, each through their own engine process with its own connection to the
server; but the execution is shared: a server lost under their queries fails both users'
jobs alike (neither retried, the engines stay up), and once a server is back both users'
next statements run on the same engines, which connect again.

The server is this module's own (it is killed); the worker keeps no spare engine.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from jobs.models import Engine, JobEvent
from tests.runtimes.connect_server import ConnectServer, start_connect_server
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

WORKER_ENV = {
    "TESSERA_ENGINE_SHARE_LEVEL": "user",
    "TESSERA_ENGINE_SPARES": "0",
    "TESSERA_ENGINES_MAX": "2",
    "TESSERA_ENGINE_IDLE_SECONDS": "600",
}
SLOW_SQL = "SELECT count(*) AS n FROM range(0, 100000000) AS a CROSS JOIN range(0, 100000) AS b"
ENDED = {"FINISHED", "FAILED", "CANCELED"}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ConnectServer]:
    started = start_connect_server(tmp_path / "server")
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture
def engines_worker(
    server: ConnectServer, django_db_blocker: Any, tmp_path: Path
) -> Iterator[WorkerProcess]:
    worker = WorkerProcess(
        "connect-engines",
        tmp_path / "worker.log",
        django_db_blocker,
        {**WORKER_ENV, "SPARK_REMOTE": server.url},
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


def parent(pid: int) -> int:
    text = Path(f"/proc/{pid}/stat").read_text()
    return int(text.rpartition(")")[2].split()[1])


def connections_to(port: int) -> set[str]:
    """The socket inodes of this machine's established TCP connections to ``port`` (gRPC's
    sockets are IPv6 ones, with IPv4-mapped addresses)."""
    found = set()
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            remote_port = int(fields[2].rsplit(":", 1)[1], 16)
            if remote_port == port and fields[3] == "01":  # ESTABLISHED
                found.add(fields[9])
    return found


def sockets_of(pid: int) -> set[str]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    return inodes


@pytest.mark.timeout(900)
def test_engines_on_connect_are_clients_of_one_server(
    server: ConnectServer, engines_worker: WorkerProcess, tmp_path: Path
) -> None:
    alice = create_user(f"alice{uuid.uuid4().hex[:6]}")
    bob = create_user(f"bob{uuid.uuid4().hex[:6]}")

    # Jobs run: each user's statements finish with the right answers, on an engine of
    # their own.
    a1 = run_to_end(alice, "SELECT 1 AS one")
    assert finished_rows(a1) == [[1]]
    b1 = run_to_end(bob, "SELECT sum(id) AS s FROM range(0, 100000, 1, 2)")
    assert finished_rows(b1) == [[4999950000]]
    alice_engine, bob_engine = engine_of(a1), engine_of(b1)
    assert alice_engine.pk != bob_engine.pk
    assert (alice_engine.share_key, bob_engine.share_key) == (f"user:{alice.pk}", f"user:{bob.pk}")
    assert alice_engine.runtime == bob_engine.runtime == "connect"
    assert engine_of(run_to_end(alice, "SELECT 2 AS two")).pk == alice_engine.pk

    # Each engine is a process of its own (the parent of its JVM, the guard's parser) with
    # its own connection to the server: two Connect clients, not two Spark applications.
    assert alice_engine.pid and bob_engine.pid
    processes = [parent(alice_engine.pid), parent(bob_engine.pid)]
    assert processes[0] != processes[1]
    connected = connections_to(server.port)
    for process in processes:
        assert b"engine_host" in Path(f"/proc/{process}/cmdline").read_bytes()
        assert sockets_of(process) & connected, f"engine process {process} has no connection"
    assert not sockets_of(engines_worker.pid) & connected  # the worker itself runs no Spark

    # But the execution is shared: the server lost under both users' queries fails both,
    # whatever engine they ran on. Neither is retried; the engines themselves live on.
    long_jobs = [submit_sql(alice, SLOW_SQL), submit_sql(bob, SLOW_SQL)]
    for job in long_jobs:
        wait_until(partial(runs_tasks, job), 120, 0.25, "the long queries on the server")
    server.kill()
    for job in long_jobs:
        lost = wait_for_status(job.pk, ENDED, 120)
        assert lost.status == "FAILED", lost.status
        assert lost.error is not None and lost.error["code"] == "ENGINE_LOST", lost.error
        assert "broke while this job was running" in lost.error["message"], lost.error
        events = list(JobEvent.objects.filter(job=lost).values_list("type", flat=True))
        assert "engine_lost" not in events, events
    for engine in (alice_engine, bob_engine):
        row = Engine.objects.get(pk=engine.pk)
        assert (row.state, row.pid) == (Engine.READY, engine.pid), row

    # A server back at the same address: both users' next statements run on the same
    # engines, which connect again.
    replacement = start_connect_server(tmp_path / "again", port=server.port)
    try:
        a2 = run_to_end(alice, "SELECT 40 + 2 AS answer", timeout=120)
        b2 = run_to_end(bob, "SELECT 6 * 7 AS answer", timeout=120)
        assert finished_rows(a2) == finished_rows(b2) == [[42]]
        assert (engine_of(a2).pk, engine_of(b2).pk) == (alice_engine.pk, bob_engine.pk)
    finally:
        replacement.stop()
