"""A stream survives its worker, for real (docs/streaming.md): a streaming CTAS over
an external parquet directory runs on a worker that is killed (SIGKILL, its JVM with it)
after it committed a micro-batch; a new worker process resumes the same job from its
checkpoint (event ``resumed``), files added later arrive, and the target ends with exactly
the rows of all the files — none twice, none lost. Its stream slot: a worker with two slots
runs one stream and still answers a batch query beside it, and a second stream is refused
with ``429 TOO_MANY_STREAMS``.

The module runs workers of its own (``own_workers_only``): two slots each (one stream
slot), so the limit is a real one. The stream is resumed by another worker, and by the
same worker (its node name) restarted.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest
from django.conf import settings
from django.utils import timezone

from catalog import services as catalog_services
from jobs.models import Job, JobEvent, Session, Worker
from tabledata import stream_commit
from tests.conftest import API, assert_error
from tests.waiting import wait_until
from tests.worker_helpers import (
    Pipeline,
    get_job,
    open_session,
    result_rows,
    statement,
    wait_job,
)
from tests.workers import WorkerProcess, start_worker

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SLOTS = 2  # one stream slot: min(TESSERA_WORKER_MAX_STREAMS=2, 2 - 1)
WORKER_ENV = {"SPARK_MASTER": "local[2]", "TESSERA_WORKER_MAX_STREAMS": "2"}
STREAMING = {"execution.runtime-mode": "streaming", "execution.checkpointing.interval": "300 ms"}


@pytest.fixture
def first_worker(
    django_db_setup: None,
    django_db_blocker: Any,
    tmp_path_factory: pytest.TempPathFactory,
    own_workers_only: None,
) -> Iterator[WorkerProcess]:
    workers = start_worker("stream-a", tmp_path_factory, django_db_blocker, WORKER_ENV, SLOTS)
    worker = next(workers)
    yield worker
    next(workers, None)


@pytest.fixture
def successor(django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Starts a worker process named ``name`` when called (after the first one was killed):
    another worker, or — named as the first — the same worker restarted (a new identity)."""
    started: list[Iterator[WorkerProcess]] = []

    def start(name: str) -> WorkerProcess:
        workers = start_worker(name, tmp_path_factory, django_db_blocker, WORKER_ENV, SLOTS)
        started.append(workers)
        return next(workers)

    yield start
    for workers in started:
        next(workers, None)


@pytest.fixture(autouse=True)
def web_limits(settings: Any) -> None:
    settings.TESSERA_WORKER_TIMEOUT_SECONDS = 4  # as the workers were told (tests/workers.py)


def write_ids(directory: Path, ids: range) -> None:
    """One parquet file, written aside and renamed in (a stream never sees half a file)."""
    name = f"part-{uuid.uuid4().hex}.parquet"
    aside = directory.parent / f".{name}"
    pq.write_table(pa.table({"id": pa.array(list(ids), pa.int64())}), aside)
    aside.rename(directory / name)


def batches(job_id: str) -> list[dict[str, Any]]:
    return [
        dict(detail)
        for detail in JobEvent.objects.filter(job_id=job_id, type="batch_committed")
        .order_by("id")
        .values_list("detail", flat=True)
    ]


def types(job_id: str) -> list[str]:
    return list(
        JobEvent.objects.filter(job_id=job_id).order_by("id").values_list("type", flat=True)
    )


@pytest.mark.parametrize(
    "successor_name", ["stream-b", "stream-a"], ids=["another-worker", "same-worker-restarted"]
)
def test_a_killed_worker_s_stream_resumes_from_its_checkpoint_without_duplicates(
    first_worker: WorkerProcess, successor: Any, successor_name: str
) -> None:
    owner = Pipeline("streamer")
    catalog = f"s{uuid.uuid4().hex[:10]}"
    catalog_services.catalog_create(user=owner.user, name=catalog, default_database="d")
    source = Path(settings.TESSERA_STORAGE_ROOTS[0]) / f"src-{uuid.uuid4().hex[:10]}"
    source.mkdir(parents=True)
    write_ids(source, range(0, 100))
    owner.ok(
        f"CREATE TABLE {catalog}.d.src (id BIGINT) "
        f"WITH ('connector' = 'parquet', 'path' = '{source}')"
    )
    streaming = Session.objects.get(pk=open_session(owner.api, STREAMING))
    ctas = f"CREATE TABLE {catalog}.d.t AS SELECT id FROM {catalog}.d.src"
    job_id = str(statement(owner.api, str(streaming.pk), ctas)["id"])
    wait_until(lambda: batches(job_id), 180, 0.2, "the stream to commit a first batch")
    running = Job.objects.get(pk=job_id)
    assert running.status == "RUNNING" and running.worker == first_worker.hostname

    # Its one stream slot is taken: a second stream is refused, a batch query still runs.
    other = owner.api.post(
        f"{API}/sessions/{streaming.pk}/statements",
        {"sql": f"CREATE TABLE {catalog}.d.t2 AS SELECT id FROM {catalog}.d.src"},
        format="json",
    )
    assert_error(other, 429, "TOO_MANY_STREAMS", "1 stream for 1 slot on 1 worker")
    assert owner.rows(f"SELECT count(*) AS n FROM {catalog}.d.src") == [[100]]

    write_ids(source, range(100, 250))  # maybe mid-batch when the worker dies
    first_worker.kill()
    second = successor(successor_name)

    def resumed() -> dict[str, Any] | None:
        body = get_job(owner.api, job_id)  # GET reaps lazily too
        return body if "resumed" in types(job_id) and body["status"] == "RUNNING" else None

    wait_until(resumed, 120, 0.25, "the stream to be resumed")
    assert Job.objects.get(pk=job_id).worker == second.hostname != first_worker.hostname
    kinds = types(job_id)
    assert kinds.index("worker_lost") < kinds.index("resumed")
    lost = JobEvent.objects.get(job_id=job_id, type="worker_lost").detail
    assert lost["worker"] == first_worker.hostname and lost["restart"] == 1
    assert kinds.count("created") == 1  # the CREATED hooks ran once
    assert kinds.count("stage_table_created") <= 1

    write_ids(source, range(250, 400))

    def all_rows() -> list[list[Any]] | None:
        rows = owner.rows(f"SELECT id FROM {catalog}.d.t ORDER BY id")
        return rows if len(rows) >= 400 else None

    rows = wait_until(all_rows, 180, 1.0, "every file's rows in the target")
    assert [row[0] for row in rows] == list(range(400))  # none twice, none lost

    cancel = owner.api.post(f"{API}/jobs/{job_id}/cancel")
    assert cancel.status_code == 200, cancel.content
    ended = wait_job(owner.api, job_id, {"CANCELED"}, timeout=60)
    assert ended["status"] == "CANCELED"
    kept = result_rows(owner.api, owner.ok(f"SELECT count(*) AS n FROM {catalog}.d.t")["id"])[1]
    assert kept == [[400]]


# --- a paused worker's stale runner --------------------------------------------------------------


@pytest.fixture
def two_workers(
    django_db_setup: None,
    django_db_blocker: Any,
    tmp_path_factory: pytest.TempPathFactory,
    own_workers_only: None,
) -> Iterator[list[WorkerProcess]]:
    started = [
        start_worker(name, tmp_path_factory, django_db_blocker, WORKER_ENV, SLOTS)
        for name in ("pause-a", "pause-b")
    ]
    workers = [next(w) for w in started]
    try:
        yield workers
    finally:
        for worker in workers:
            if worker.alive():
                os.kill(worker.pid, signal.SIGCONT)
        for w in started:
            next(w, None)


def test_a_paused_worker_neither_ends_nor_cleans_the_stream_another_worker_resumed(
    two_workers: list[WorkerProcess],
) -> None:
    """A worker paused right after it claimed a stream (SIGSTOP: taken for lost, its copy
    not stopped) is reaped; the stream is requeued and resumed by the other worker. When the
    paused one runs again, its runner finds the job held by the other worker: it neither
    fails the job (its end transition is held by its own identity) nor removes the
    checkpoint the other worker now runs from (docs/streaming.md)."""
    owner = Pipeline("pauser")
    catalog = f"s{uuid.uuid4().hex[:10]}"
    catalog_services.catalog_create(user=owner.user, name=catalog, default_database="d")
    source = Path(settings.TESSERA_STORAGE_ROOTS[0]) / f"src-{uuid.uuid4().hex[:10]}"
    source.mkdir(parents=True)
    write_ids(source, range(0, 50))
    owner.ok(
        f"CREATE TABLE {catalog}.d.src (id BIGINT) "
        f"WITH ('connector' = 'parquet', 'path' = '{source}')"
    )
    streaming = open_session(owner.api, STREAMING)
    ctas = f"CREATE TABLE {catalog}.d.t AS SELECT id FROM {catalog}.d.src"
    job_id = str(statement(owner.api, streaming, ctas)["id"])
    by_name = {w.hostname: w for w in two_workers}

    def claimed() -> str | None:
        row = Job.objects.filter(pk=job_id).values("status", "worker").first()
        return row["worker"] if row and row["status"] == "RUNNING" else None

    holder = wait_until(claimed, 60, 0.01, "a worker to claim the stream")
    paused = by_name[holder]
    os.kill(paused.pid, signal.SIGSTOP)  # within its first second: before its first look
    other = next(w for w in two_workers if w is not paused)
    try:

        def resumed() -> bool:
            row = Job.objects.get(pk=job_id)
            return (
                row.status == "RUNNING"
                and row.worker == other.hostname
                and bool([b for b in batches(job_id) if b["rows"]])
            )

        wait_until(resumed, 180, 0.25, "the other worker to resume the stream and commit")
    finally:
        os.kill(paused.pid, signal.SIGCONT)
    checkpoint = stream_commit.checkpoint_dir(job_id)
    assert checkpoint.is_dir()

    def paused_runs_again() -> bool:
        row = Worker.objects.get(hostname=paused.hostname)
        return (timezone.now() - row.last_heartbeat).total_seconds() < 1.5

    wait_until(paused_runs_again, 60, 0.25, "the paused worker to beat again")
    time.sleep(8)  # its runner's end (a failure, or its monitor's look) has come by now
    row = Job.objects.get(pk=job_id)
    assert row.status == "RUNNING", (row.status, row.error)
    assert row.worker == other.hostname
    assert "failed" not in types(job_id)
    assert checkpoint.is_dir()  # the resumed stream's checkpoint is still there

    write_ids(source, range(50, 120))  # and the resumed stream goes on

    def all_rows() -> list[list[Any]] | None:
        rows = owner.rows(f"SELECT id FROM {catalog}.d.t ORDER BY id")
        return rows if len(rows) >= 120 else None

    rows = wait_until(all_rows, 180, 1.0, "the new file's rows in the target")
    assert [r[0] for r in rows] == list(range(120))
    cancel = owner.api.post(f"{API}/jobs/{job_id}/cancel")
    assert cancel.status_code == 200, cancel.content
    assert wait_job(owner.api, job_id, {"CANCELED"}, timeout=60)["status"] == "CANCELED"
    wait_until(lambda: not checkpoint.exists(), 30, 0.25, "the holder to remove the checkpoint")


# --- a stream the reaper ended: its checkpoint is swept ------------------------------------


def test_the_checkpoint_of_a_preview_the_reaper_failed_is_swept_by_a_live_worker(
    first_worker: WorkerProcess, successor: Any, settings: Any
) -> None:
    """A streaming SELECT (no target, no write hook) whose worker is killed, and that the
    reaper fails (no restarts left), leaves its checkpoint behind: nothing runs it any more.
    A live worker's maintenance removes it (``maintenance.sweep_ended_streams``), and leaves
    the checkpoint of a running stream alone."""
    owner = Pipeline("previewer")
    catalog = f"s{uuid.uuid4().hex[:10]}"
    catalog_services.catalog_create(user=owner.user, name=catalog, default_database="d")
    source = Path(settings.TESSERA_STORAGE_ROOTS[0]) / f"src-{uuid.uuid4().hex[:10]}"
    source.mkdir(parents=True)
    write_ids(source, range(0, 30))
    owner.ok(
        f"CREATE TABLE {catalog}.d.src (id BIGINT) "
        f"WITH ('connector' = 'parquet', 'path' = '{source}')"
    )
    streaming = open_session(owner.api, STREAMING)
    select = f"SELECT id FROM {catalog}.d.src"
    job_id = str(statement(owner.api, streaming, select)["id"])
    checkpoint = stream_commit.checkpoint_dir(job_id)

    def previewed() -> bool:  # Spark recorded a first batch as done in the checkpoint
        commits = checkpoint / "commits"
        return commits.is_dir() and any(p.name.isdigit() for p in commits.iterdir())

    wait_until(previewed, 180, 0.25, "the preview's first batch")
    first_worker.kill()
    settings.TESSERA_STREAM_MAX_RESTARTS = 0  # the reaper here (GET) fails it, not requeues
    failed = wait_job(owner.api, job_id, {"FAILED"}, timeout=60)  # GET reaps lazily
    assert failed["error"]["code"] == "WORKER_LOST"
    assert checkpoint.is_dir()  # nobody ran its end: the sweep's work

    successor("stream-b")  # its maintenance sweeps at its first beat, then every 12
    wait_until(lambda: not checkpoint.exists(), 60, 0.25, "the ended stream's checkpoint to go")

    running_id = str(statement(owner.api, streaming, select)["id"])
    kept = stream_commit.checkpoint_dir(running_id)
    wait_until(kept.is_dir, 180, 0.25, "the running preview's checkpoint")
    time.sleep(14)  # at least one more sweep while it runs
    assert kept.is_dir() and Job.objects.get(pk=running_id).status == "RUNNING"
    cancel = owner.api.post(f"{API}/jobs/{running_id}/cancel")
    assert cancel.status_code == 200, cancel.content
    wait_job(owner.api, running_id, {"CANCELED"}, timeout=60)
    wait_until(lambda: not kept.exists(), 30, 0.25, "the canceled preview's checkpoint to go")
