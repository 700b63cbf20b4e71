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

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest
from django.conf import settings

from catalog import services as catalog_services
from jobs.models import Job, JobEvent, Session
from tests.conftest import API, assert_error
from tests.waiting import wait_until
from tests.worker.helpers import (
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
