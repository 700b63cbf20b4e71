"""Results above ``TESSERA_RESULT_MAX_ROWS`` (a statement's ``row_limit``), written without
collecting them in the driver JVM.

``frame.toArrow()`` gathers the whole result in the driver JVM first (as task results, held
to ``spark.driver.maxResultSize``), then in this process: fine for the first 100,000 rows,
not for 100 million. Here Spark's Python workers receive the rows as Arrow record batches
(``mapInArrow``: the conversion ``toArrow`` uses) and append them to one Arrow IPC file per
partition in a scratch folder of the warehouse (which the executors share with this worker
on every runtime: ``engine.storage_check``). This worker then copies those files,
memory-mapped and batch by batch, into the job's result file (``results.store.write_batches``),
each batch cast to the types ``toArrow`` gives. At most one batch is in memory at a time, in
each process.

The rows are ``frame.limit(limit + 1)``: one more than kept tells that the result was
truncated. Spark keeps the rows of ``ORDER BY … LIMIT n`` in memory up to
``spark.sql.execution.topKSortFallbackThreshold`` (by default any n): above the small-result
limit the job's session sorts on disk instead, so the order holds and memory stays bounded.
The scratch folder is removed when the job ends; one a dead worker left behind is removed by
the next large result once it is older than any job may run.
"""

from __future__ import annotations

import contextlib
import shutil
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.ipc as ipc  # type: ignore[import-untyped]
from django.conf import settings

from engine.arrow_fields import conform
from results.store import write_batches

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


def _spill_partitions(frame: Any, folder: Path) -> list[str]:
    """Write ``frame``'s rows as Arrow IPC files in ``folder``, one per partition, from
    Spark's Python workers; the files' names in partition order (the rows' order)."""
    target = str(folder)

    # Runs in Spark's Python workers: pickled by value, it may use only what it imports.
    def spill(batches: Iterator[Any]) -> Iterator[Any]:
        import os

        import pyarrow as pa
        import pyarrow.ipc as ipc
        from pyspark import TaskContext

        context = TaskContext.get()
        part = context.partitionId() if context is not None else 0
        attempt = context.attemptNumber() if context is not None else 0
        name = f"part-{part:06d}-{attempt}.arrow"
        rows = 0
        writer = None
        sink = None
        try:
            for batch in batches:
                if writer is None:
                    sink = open(os.path.join(target, name), "wb")  # noqa: SIM115
                    writer = ipc.new_file(sink, batch.schema)
                writer.write_batch(batch)
                rows += batch.num_rows
        finally:
            if writer is not None:
                writer.close()
            if sink is not None:
                sink.close()
        yield pa.RecordBatch.from_pydict(
            {"part": [part], "file": [name if rows else ""], "rows": [rows]},
            schema=pa.schema([("part", pa.int32()), ("file", pa.string()), ("rows", pa.int64())]),
        )

    written = frame.mapInArrow(spill, "part INT, file STRING, rows BIGINT").collect()
    return [row["file"] for row in sorted(written, key=lambda row: row["part"]) if row["file"]]


def _read_back(folder: Path, files: list[str], schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """The spilled files' batches in order, each cast to ``schema`` (names and types, nested
    NOT NULL included)."""
    for name in files:
        with pa.memory_map(str(folder / name)) as source:
            reader = ipc.open_file(source)
            for index in range(reader.num_record_batches):
                batch = reader.get_batch(index)
                arrays = [
                    conform(column, field.type)
                    for column, field in zip(batch.columns, schema, strict=True)
                ]
                yield pa.RecordBatch.from_arrays(arrays, schema=schema)


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
    """Store the first ``limit`` rows of ``frame`` as the job's result file without
    collecting them in the driver; returns the ``Job.result`` dict (``truncated`` when the
    frame has more rows)."""
    schema = arrow_schema(spark, frame)
    # Positional names: the files need no care for duplicate or odd column names; the
    # result file gets the real ones from ``schema``.
    plain = frame.toDF(*[f"_c{index}" for index in range(len(frame.columns))])
    scratch = Path(settings.WAREHOUSE_DIR) / SCRATCH
    clear_leftovers(scratch)
    folder = scratch / f"{job_id}-{uuid.uuid4().hex[:8]}"
    folder.mkdir(parents=True)
    try:
        spark.conf.set(TOP_K_THRESHOLD, str(int(settings.TESSERA_RESULT_MAX_ROWS)))
        files = _spill_partitions(plain.limit(limit + 1), folder)
        return write_batches(
            job_id, schema, _read_back(folder, files, schema), columns=columns, limit=limit
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
