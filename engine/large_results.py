"""Results above ``TESSERA_RESULT_MAX_ROWS`` (a statement's ``row_limit``), written without
collecting them in the driver JVM, and readable while the job still runs.

``frame.toArrow()`` gathers the whole result in the driver JVM first (as task results, held
to ``spark.driver.maxResultSize``), then in this process: fine for the first 100,000 rows,
not for 100 million. Here Spark's Python workers receive the rows as Arrow record batches
(``mapInArrow``: the conversion ``toArrow`` uses) and write each batch as its own small
Arrow IPC file, ``p<partition>-<attempt>/b<n>.arrow`` (temp name + rename), then a
``p<partition>-<attempt>.done`` file with their count, in a scratch folder of the warehouse
(which the executors share with this worker on every runtime: ``engine.storage_check``).
While Spark runs (its ``collect`` in a thread of its own), this worker follows those files in
partition order and appends each batch, cast to the types ``toArrow`` gives, to the job's
result (``results.partial.write_batches``), where readers see it at once; a batch file is
removed once copied. At most one batch is in memory at a time, in each process.

Partition order is the rows' order: an ``ORDER BY`` result is range-partitioned after its
sort, so its first batches come once the sort stage has ended (not before: the order only
exists then). A task stops after ``limit + 1`` rows, and every task stops once this worker
has ``limit + 1`` rows (a ``stop`` file): one more than kept tells that the result was
truncated. A task attempt whose batches were partly copied and that Spark then retried
fails the job (its rows cannot be taken back); one that had copied nothing is replaced by
the attempt that succeeded. Spark keeps the rows of ``ORDER BY … LIMIT n`` in memory up to
``spark.sql.execution.topKSortFallbackThreshold`` (by default any n): above the
small-result limit the job's session sorts on disk instead, so the order holds and memory
stays bounded. The scratch folder is removed when the job ends; one a dead worker left
behind is removed by the next large result once it is older than any job may run.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.ipc as ipc  # type: ignore[import-untyped]
from django.conf import settings

from engine.arrow_fields import conform
from results.partial import write_batches

# The warehouse's hidden scratch folder (Spark's file index skips names starting with '.').
SCRATCH = ".tessera-results"
TOP_K_THRESHOLD = "spark.sql.execution.topKSortFallbackThreshold"
LARGE_VAR_TYPES = "spark.sql.execution.arrow.useLargeVarTypes"


def is_large(limit: int) -> bool:
    """Whether a result of up to ``limit`` rows takes this path (not ``toArrow``)."""
    return limit > int(settings.TESSERA_RESULT_MAX_ROWS)


# A result asked whole (a ``row_limit``) that Spark estimates below this is first collected
# as a small one: most such results are small, and this path's fixed cost (Python workers,
# scratch files: ≈ 90 ms for ``SELECT 1``) is then saved.
SMALL_ESTIMATE_BYTES = 32 * 1024 * 1024


def probably_small(frame: Any) -> bool:
    """Whether Spark's optimizer estimates ``frame``'s result below ``SMALL_ESTIMATE_BYTES``.
    Only an estimate: the caller collects at most the small limit + 1 rows, and past it
    writes the result this way after all."""
    try:
        # Spark Connect's DataFrame has no _jdf (AttributeError): no estimate from this side.
        size = int(frame._jdf.queryExecution().optimizedPlan().stats().sizeInBytes())
    except Exception:  # no estimate: the large path, as before
        return False
    return size <= SMALL_ESTIMATE_BYTES


def arrow_schema(spark: Any, frame: Any) -> pa.Schema:
    """The Arrow schema ``frame.toArrow()`` answers with (TIMESTAMP in UTC, TIMESTAMP_NTZ
    without a zone, DECIMAL as decimal128, …)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    large = str(spark.conf.get(LARGE_VAR_TYPES, "false")).lower() == "true"
    schema: pa.Schema = to_arrow_schema(
        frame.schema,
        error_on_duplicated_field_names_in_struct=True,
        timezone="UTC",
        prefers_large_types=large,
    )
    return schema


# How often the worker looks for the batch files the executors wrote (they may be on other
# hosts: no notification reaches it from them).
FOLLOW_SECONDS = 0.05
STOP = "stop"


def _spill(frame: Any, folder: Path, budget: int) -> list[Any]:
    """Write ``frame``'s rows as one Arrow IPC file per batch in ``folder``, from Spark's
    Python workers, each task at most ``budget`` rows; one row per partition: ``part``,
    ``attempt`` (the task attempt that succeeded), ``batches``."""
    target = str(folder)

    # Runs in Spark's Python workers: pickled by value, it may use only what it imports.
    def spill(batches: Iterator[Any]) -> Iterator[Any]:
        import json
        import os

        import pyarrow as pa
        import pyarrow.ipc as ipc
        from pyspark import TaskContext

        context = TaskContext.get()
        part = context.partitionId() if context is not None else 0
        attempt = context.attemptNumber() if context is not None else 0
        own = os.path.join(target, f"p{part:06d}-{attempt}")
        os.makedirs(own, exist_ok=True)
        stop = os.path.join(target, "stop")
        rows = count = 0
        for batch in batches:
            if rows >= budget or os.path.exists(stop):  # enough rows, here or overall
                break
            if rows + batch.num_rows > budget:
                batch = batch.slice(0, budget - rows)
            if not batch.num_rows:
                continue
            tmp = os.path.join(own, f".b{count:06d}.tmp")
            with open(tmp, "wb") as sink, ipc.new_file(sink, batch.schema) as writer:
                writer.write_batch(batch)
            os.replace(tmp, os.path.join(own, f"b{count:06d}.arrow"))
            count += 1
            rows += batch.num_rows
        done = own + ".tmp"
        with open(done, "w") as out:
            json.dump({"batches": count}, out)
        os.replace(done, own + ".done")
        yield pa.RecordBatch.from_pydict(
            {"part": [part], "attempt": [attempt], "batches": [count]},
            schema=pa.schema(
                [("part", pa.int32()), ("attempt", pa.int32()), ("batches", pa.int64())]
            ),
        )

    rows: list[Any] = frame.mapInArrow(spill, "part INT, attempt INT, batches BIGINT").collect()
    return rows


class _Collect:
    """Spark's ``collect`` of the spill in a thread of its own (with the job's tag and
    group: canceling the job stops it); ``winners`` once it ended: the attempt that
    succeeded of each partition."""

    def __init__(self, spark: Any, frame: Any, folder: Path, budget: int) -> None:
        from pyspark.util import InheritableThread

        from engine.runtimes import is_remote_session

        self.ended = threading.Event()
        self.failure: BaseException | None = None
        self.winners: dict[int, tuple[int, int]] | None = None
        session = spark if is_remote_session(spark) else None
        self._thread = InheritableThread(
            lambda: self._run(frame, folder, budget), session=session, daemon=True
        )
        self._thread.start()

    def _run(self, frame: Any, folder: Path, budget: int) -> None:
        try:
            rows = _spill(frame, folder, budget)
            self.winners = {int(r["part"]): (int(r["attempt"]), int(r["batches"])) for r in rows}
        except BaseException as exc:  # handed to the worker's thread
            self.failure = exc
        finally:
            self.ended.set()

    def join(self) -> None:
        self._thread.join()


def _done_batches(folder: Path, name: str) -> int | None:
    try:
        return int(json.loads((folder / f"{name}.done").read_text())["batches"])
    except (FileNotFoundError, ValueError, KeyError):
        return None


def _attempts(folder: Path, part: int) -> list[int]:
    prefix = f"p{part:06d}-"
    found = {
        int(entry.name[len(prefix) :].split(".")[0])
        for entry in folder.iterdir()
        if entry.name.startswith(prefix) and entry.name[len(prefix) :].split(".")[0].isdigit()
    }
    return sorted(found)


def _follow(folder: Path, schema: pa.Schema, collect: _Collect) -> Iterator[pa.RecordBatch]:
    """The spilled batches in partition order as the executors write them, each cast to
    ``schema`` (names and types, nested NOT NULL included); each file removed once read."""
    part, attempt, sent = 0, None, 0
    while True:
        progressed = False
        ended = collect.ended.is_set()
        if ended and collect.failure is not None:
            raise collect.failure
        winners = collect.winners if ended else None
        if winners is not None and part not in winners:
            return  # every partition was read
        if winners is not None and attempt != winners[part][0]:
            if sent:  # rows of a lost attempt were written already: they cannot be taken back
                raise RuntimeError(
                    "Spark ran a task of the result again after its first rows had been "
                    "stored; run the statement again."
                )
            attempt = winners[part][0]
        if attempt is None:
            tried = _attempts(folder, part)
            attempt = tried[0] if tried else None
        if attempt is not None:
            name = f"p{part:06d}-{attempt}"
            path = folder / name / f"b{sent:06d}.arrow"
            if path.exists():
                with pa.memory_map(str(path)) as source:
                    batch = ipc.open_file(source).get_batch(0)
                    arrays = [
                        conform(column, field.type)
                        for column, field in zip(batch.columns, schema, strict=True)
                    ]
                    yield pa.RecordBatch.from_arrays(arrays, schema=schema)
                path.unlink()
                sent += 1
                progressed = True
            elif _done_batches(folder, name) == sent:
                part, attempt, sent = part + 1, None, 0
                progressed = True
        if not progressed and ended:  # Spark said the files were written, yet one is not
            raise RuntimeError(f"Batch {sent} of partition {part} of the result is missing.")
        if not progressed:
            collect.ended.wait(FOLLOW_SECONDS)


def clear_leftovers(scratch: Path) -> None:
    """Remove scratch folders of jobs whose worker died before it removed them: older than
    the longest a job may run, they belong to no running job."""
    oldest = time.time() - int(settings.TESSERA_JOB_TIMEOUT_MAX_SECONDS) - 3600
    for folder in scratch.glob("*") if scratch.is_dir() else ():
        with contextlib.suppress(OSError):
            if folder.stat().st_mtime < oldest:
                shutil.rmtree(folder, ignore_errors=True)


def write_large_result(
    spark: Any, frame: Any, job_id: Any, limit: int, columns: list[dict[str, Any]]
) -> dict[str, Any]:
    """Store the first ``limit`` rows of ``frame`` as the job's result without collecting
    them in the driver, each batch readable as soon as it is stored; returns the
    ``Job.result`` dict (``truncated`` when the frame has more rows)."""
    schema = arrow_schema(spark, frame)
    # Positional names: the files need no care for duplicate or odd column names; the
    # result file gets the real ones from ``schema``.
    plain = frame.toDF(*[f"_c{index}" for index in range(len(frame.columns))])
    scratch = Path(settings.WAREHOUSE_DIR) / SCRATCH
    clear_leftovers(scratch)
    folder = scratch / f"{job_id}-{uuid.uuid4().hex[:8]}"
    folder.mkdir(parents=True)
    collect: _Collect | None = None
    try:
        spark.conf.set(TOP_K_THRESHOLD, str(int(settings.TESSERA_RESULT_MAX_ROWS)))
        collect = _Collect(spark, plain, folder, limit + 1)
        return write_batches(
            job_id, schema, _follow(folder, schema, collect), columns=columns, limit=limit
        )
    finally:
        (folder / STOP).touch()  # tasks still running stop at their next batch
        if collect is not None:
            collect.join()
        shutil.rmtree(folder, ignore_errors=True)
