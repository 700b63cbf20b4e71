"""Sustained rows/s of a streaming INSERT through Tessera vs plain PySpark Structured
Streaming: ``python bench/streaming.py`` (``--files 8 --rows-per-file 50000 --runs 1`` for a
quick run).

In one run: generates ``--files`` parquet files of ``--rows-per-file`` rows each (a
timestamp and four more columns) in a directory under the storage root, starts a real
worker (``celery -A webapp worker --pool threads``, its own warm Spark) on PostgreSQL
(database ``tessera_bench_streaming`` on the server of ``DATABASE_URL``, created and
migrated when missing) and Redis (``BENCH_BROKER_URL``, default
``redis://127.0.0.1:6379/15``), and declares the directory as the external table ``events``
(``'maxFilesPerTrigger'`` = ``--files-per-trigger``). Then, alternately, ``--runs`` times
each, over the same files:

1. plain PySpark in this process: ``spark.readStream.format("parquet")`` of the directory
   (same schema, same ``maxFilesPerTrigger``) → ``writeStream.format("parquet")`` into a
   directory of its own with a checkpoint, trigger ``processingTime`` = ``--trigger-ms``;
   stopped once every row went through;
2. Tessera: ``INSERT INTO t<i> /*+ OPTIONS('execution.runtime-mode' = 'streaming') */
   SELECT … FROM events`` into a new managed table (the session's
   ``execution.checkpointing.interval`` = the same trigger) over REST; cancelled once the
   job's progress counts every row committed.

Throughput is each side's own account, not wall-clock including JVM or job start: rows
processed / (last batch's commit - first batch's start), from
``StreamingQuery.recentProgress`` (plain: a batch starts at its progress ``timestamp`` and
ends ``durationMs.triggerExecution`` later) and from the job's ``batch_committed`` events
(Tessera: a batch ends when its event is recorded, after its commit, its rows readable;
the first one starts at its trigger's start, ``batch_started_at``). A "steady" figure
leaves the first batch out on both sides (rows after it / time from its end to the last
end). Before the timed runs each side streams ``--warm-files`` untimed and reads the input
once (its JIT warms up); after each run each side's own Spark checks its own output
against the input (row count and a sum of row hashes: Tessera's by a query through
Tessera). Both Sparks use the machine's cores
(``local[*]``) and never run at the same time. It prints rows, seconds and rows/s per side
(median of the runs) and the ratio; it does not assert.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from harness import Tessera, bench_parser, machine, plain_spark, start_tessera

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_BROKER = "redis://127.0.0.1:6379/15"
CATALOG = "bench_streaming"
WORKER = "bench-streaming-worker"
SCHEMA = "ts TIMESTAMP, id BIGINT, k BIGINT, v DOUBLE, s STRING"
COLUMNS = ["ts", "id", "k", "v", "s"]
CHECK = [
    "count(*) AS n",
    f"sum(CAST(xxhash64({', '.join(COLUMNS)}) AS DECIMAL(38, 0))) AS h",
]
# How often each side's progress is looked at while it runs: seldom, so that the looking
# (a REST call through Django, or a py4j call) takes next to no CPU from the stream.
POLL = 0.5


def parse_args() -> Any:
    parser = bench_parser(__doc__, db_name="tessera_bench_streaming")
    parser.add_argument("--files", type=int, default=40, help="input parquet files")
    parser.add_argument("--rows-per-file", type=int, default=250_000, help="rows per file")
    parser.add_argument(
        "--files-per-trigger", type=int, default=4, help="maxFilesPerTrigger, both sides"
    )
    parser.add_argument(
        "--trigger-ms", type=int, default=100, help="micro-batch trigger (ms), both sides"
    )
    parser.add_argument(
        "--timeout", type=float, default=900, help="seconds one streaming run may take"
    )
    parser.add_argument(
        "--warm-files",
        type=int,
        default=12,
        help="files of the untimed stream each side runs first (its JIT warms up)",
    )
    parser.add_argument(
        "--plain-only", action="store_true", help="only the plain PySpark side (no Tessera)"
    )
    parser.add_argument(
        "--plain-sink",
        choices=("file", "foreachbatch"),
        default="file",
        help="plain side's sink: Spark's parquet file sink, or foreachBatch + write.parquet",
    )
    return parser.parse_args()


@dataclass(frozen=True)
class Batch:
    """One micro-batch as a side reports it: its id, input rows, start and end (epoch s)."""

    batch_id: int
    rows: int
    start: float
    end: float


@dataclass(frozen=True)
class Run:
    batches: list[Batch]
    # Where the batches after the first spent their time (seconds per batch, by phase).
    phases: dict[str, list[float]] = field(default_factory=dict)

    @property
    def rows(self) -> int:
        return sum(b.rows for b in self.batches)

    @property
    def seconds(self) -> float:
        """From the first batch's start to the last batch's commit."""
        return self.batches[-1].end - self.batches[0].start

    @property
    def rate(self) -> float:
        return self.rows / self.seconds

    @property
    def steady(self) -> float:
        """Rows/s after the first batch: rows of the later batches / time from the first
        batch's end to the last one's."""
        later = self.batches[1:]
        if not later:
            return float("nan")
        return sum(b.rows for b in later) / (self.batches[-1].end - self.batches[0].end)


def generate(folder: Path, files: int, rows_per_file: int, first_id: int = 0) -> None:
    """``files`` parquet files of consecutive ids; file i is modified at second i (the
    file source takes new files by modification time, then name: both sides in one order)."""
    import numpy as np
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.compute as pc  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    folder.mkdir(parents=True)
    base = int(datetime(2026, 1, 1).timestamp()) * 1_000_000
    for index in range(files):
        ids = np.arange(rows_per_file, dtype=np.int64) + first_id + index * rows_per_file
        names = pc.binary_join_element_wise("name", pc.cast(pa.array(ids % 97), pa.string()), "")
        table = pa.table(
            {
                "ts": pa.array(base + ids * 1000, pa.timestamp("us", tz="UTC")),
                "id": pa.array(ids),
                "k": pa.array(ids % 1000),
                "v": pa.array((ids * 7919 % 100_000) / 1000.0),
                "s": names,
            }
        )
        path = folder / f"part-{index:05d}.parquet"
        pq.write_table(table, path)
        os.utime(path, (1_700_000_000 + index, 1_700_000_000 + index))


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def _progress_dict(progress: Any) -> dict[str, Any]:
    """A StreamingQueryProgress (PySpark 4) or the dict older versions gave."""
    if isinstance(progress, dict):
        return progress
    data: dict[str, Any] = json.loads(progress.json)
    return data


def plain_run(
    spark: Any,
    source: Path,
    out: Path,
    trigger_ms: int,
    per_trigger: int,
    total: int,
    timeout: float,
    sink: str = "file",
) -> Run:
    """One plain Structured Streaming run over ``source`` into ``out``; stopped once
    ``total`` rows went through. Its batches from ``recentProgress``. ``sink``: Spark's
    parquet file sink, or (``foreachbatch``, to tell Spark's part from Tessera's) a Python
    ``foreachBatch`` writing each batch with ``batch.write.parquet`` into ``out/batch-<n>``,
    as Tessera's sink writes a batch before committing it."""
    frame = (
        spark.readStream.format("parquet")
        .schema(SCHEMA)
        .option("maxFilesPerTrigger", str(per_trigger))
        .load(str(source))
    )
    writer = (
        frame.select(*COLUMNS)
        .writeStream.option("checkpointLocation", str(out.parent / f"{out.name}-checkpoint"))
        .trigger(processingTime=f"{trigger_ms} milliseconds")
    )
    if sink == "foreachbatch":

        def write_batch(batch: Any, batch_id: int) -> None:
            batch.write.mode("overwrite").parquet(str(out / f"batch-{batch_id}"))

        query = writer.foreachBatch(write_batch).start()
    else:
        query = writer.format("parquet").start(str(out))
    deadline = time.monotonic() + timeout
    try:
        while True:
            batches = _plain_batches(query.recentProgress)
            if sum(b.rows for b in batches) >= total:
                break
            if query.exception() is not None:
                raise SystemExit(f"the plain stream failed: {query.exception()}")
            if time.monotonic() > deadline:
                raise SystemExit(f"the plain stream did not finish in {timeout} s")
            time.sleep(POLL)
    finally:
        query.stop()
    return Run(batches, _plain_phases(query.recentProgress))


PLAIN_PHASES = (
    "latestOffset",
    "getBatch",
    "queryPlanning",
    "addBatch",
    "walCommit",
    "commitOffsets",
)


def _plain_phases(progress: list[Any]) -> dict[str, list[float]]:
    """Spark's own split of each batch after the first (``durationMs``), in seconds."""
    phases: dict[str, list[float]] = {name: [] for name in PLAIN_PHASES}
    reports = [p for p in map(_progress_dict, progress) if int(p.get("numInputRows") or 0)]
    for item in reports[1:]:
        for name in PLAIN_PHASES:
            phases[name].append(int(item["durationMs"].get(name) or 0) / 1000)
    return phases


def _plain_batches(progress: list[Any]) -> list[Batch]:
    found: dict[int, Batch] = {}
    for item in map(_progress_dict, progress):
        rows = int(item.get("numInputRows") or 0)
        if rows == 0:
            continue  # an idle trigger's report
        start = _epoch(item["timestamp"])
        end = start + item["durationMs"]["triggerExecution"] / 1000
        found[int(item["batchId"])] = Batch(int(item["batchId"]), rows, start, end)
    return [found[b] for b in sorted(found)]


def tessera_run(side: Tessera, table: str, source: str, total: int, timeout: float) -> Run:
    """One streaming INSERT through Tessera from ``source`` into the new managed ``table``;
    cancelled once its progress counts ``total`` rows committed. Its batches from the
    job's ``batch_committed`` events."""
    from jobs.models import JobEvent

    side.statement(f"CREATE TABLE {CATALOG}.d.{table} ({SCHEMA})")
    job = side.submit(
        f"INSERT INTO {CATALOG}.d.{table} /*+ OPTIONS('execution.runtime-mode' = 'streaming') */ "
        f"SELECT {', '.join(COLUMNS)} FROM {CATALOG}.d.{source}",
        wait=0,
    )
    job_id = str(job["id"])
    deadline = time.monotonic() + timeout
    cpu, wall = time.process_time(), time.monotonic()
    while True:
        job = side.job(job_id)
        if job["status"] in ("FINISHED", "FAILED", "CANCELED"):
            raise SystemExit(f"the Tessera stream ended early: {job}")
        stream = (job.get("progress") or {}).get("stream") or {}
        if int(stream.get("rows_committed") or 0) >= total:
            break
        if time.monotonic() > deadline:
            side.cancel(job_id)
            raise SystemExit(f"the Tessera stream did not finish in {timeout} s: {job}")
        time.sleep(POLL)
    cpu, wall = time.process_time() - cpu, time.monotonic() - wall
    print(f"  (this process's CPU while it polled the job: {cpu / wall:.1%} of a core)")
    side.cancel(job_id)
    job = side.until_done(side.job(job_id), poll=POLL)
    assert job["status"] == "CANCELED", job
    found = JobEvent.objects.filter(job_id=job_id, type__in=("stream_started", "batch_committed"))
    events = [dict(e.detail, type=e.type, at=e.at.timestamp()) for e in found.order_by("at")]
    started = next(e["at"] for e in events if e["type"] == "stream_started")
    committed = [e for e in events if e["type"] == "batch_committed" and int(e["rows"] or 0) > 0]
    return Run(tessera_batches(committed, started), tessera_phases(committed))


def tessera_phases(events: list[dict[str, Any]]) -> dict[str, list[float]]:
    """Where each batch after the first spent its time, from its own ``batch_committed``
    event: ``spark`` the batch's trigger as Spark reports it (``batch_duration_ms``: reading,
    writing through the file sink, Spark's logs); ``commit lag`` from Spark's end of the
    batch to its ``batch_committed`` (the committer's transaction, which runs beside Spark's
    next batch)."""
    spark = [int(e["batch_duration_ms"]) / 1000 for e in events[1:] if e.get("batch_duration_ms")]
    # From Spark's end of a batch (its trigger's start + duration) to its commit: how long
    # after Spark a batch's rows become readable (every batch, the first one included).
    lag = [
        e["at"] - _epoch(str(e["batch_started_at"])) - int(e["batch_duration_ms"]) / 1000
        for e in events
        if e.get("batch_started_at") and e.get("batch_duration_ms")
    ]
    return {"spark": spark, "commit lag": lag}


def tessera_batches(events: list[dict[str, Any]], started: float) -> list[Batch]:
    """Batches from ``batch_committed`` events: ``rows`` are the batch's, the event's time is
    its commit (its rows readable). A batch starts when the one before it was committed (the
    source has more files than one trigger takes, so the next batch starts at once); the
    first one when Spark began its trigger (the event's ``batch_started_at``, the progress
    report's ``timestamp``: where the plain side's first batch starts too), else at the
    ``stream_started`` event (``started``), recorded once ``writeStream.start()`` returned."""
    batches: list[Batch] = []
    for event in events:
        start = batches[-1].end if batches else started
        if not batches and event.get("batch_started_at"):
            start = _epoch(str(event["batch_started_at"]))
        batches.append(Batch(int(event["batch_id"]), int(event["rows"]), start, event["at"]))
    return batches


def tessera_check(side: Tessera, table: str) -> tuple[int, int]:
    """``check`` of a Tessera table, through Tessera (the worker's Spark reads its own
    output, as the plain Spark reads its own: each JVM does the same work between runs)."""
    ((rows, hashed),) = side.rows(f"SELECT {', '.join(CHECK)} FROM {CATALOG}.d.{table}")
    return int(rows), int(hashed)


def check(spark: Any, path: Path | str) -> tuple[int, int]:
    """Row count and sum of row hashes of the parquet data at ``path`` (its files at any
    depth, or the files a file sink's log lists)."""
    reader = spark.read
    if not (Path(path) / "_spark_metadata").exists():
        reader = reader.option("recursiveFileLookup", "true")
    row = reader.parquet(str(path)).selectExpr(*CHECK).first()
    return int(row["n"]), int(row["h"] or 0)


def main() -> None:
    args = parse_args()
    if args.plain_only:
        plain_only(args)
        return
    with start_tessera(args, name=WORKER, broker=DEFAULT_BROKER, catalog=CATALOG) as side:
        run(args, side)


def plain_only(args: Any) -> None:
    """The plain side alone, in a throw-away directory (to try the script's plain half)."""
    import shutil
    import tempfile

    data = Path(tempfile.mkdtemp(prefix="tessera-bench-streaming-plain-"))
    try:
        source = data / "events"
        generate(source, args.files, args.rows_per_file)
        spark = plain_spark(
            data / "plain-warehouse", **{"spark.sql.streaming.numRecentProgressUpdates": "10000"}
        )
        expected = check(spark, source)
        total = args.files * args.rows_per_file
        runs = []
        for index in range(args.runs):
            out = data / "plain" / f"p{index}"
            found = plain_run(
                spark,
                source,
                out,
                args.trigger_ms,
                args.files_per_trigger,
                total,
                args.timeout,
                args.plain_sink,
            )
            runs.append(found)
            same = check(spark, out)
            print(f"plain run {index}: {_describe(found)}; {_same(same, expected)}")
        spark.stop()
        print(f"\n{machine()}")
        _report(args, {_plain_name(args): runs})
    finally:
        if args.keep_data:
            print(f"data kept in {data}")
        else:
            shutil.rmtree(data, ignore_errors=True)


def _describe(found: Run) -> str:
    return (
        f"{len(found.batches)} batches, {found.rows:,} rows in {found.seconds:.2f} s = "
        f"{found.rate:,.0f} rows/s (steady {found.steady:,.0f})"
    )


def _same(found: tuple[int, int], expected: tuple[int, int]) -> str:
    if found == expected:
        return f"the input's {found[0]:,} rows (count and hash sum)"
    return f"DIFFERENT from the input: {found} vs {expected}"


def run(args: Any, side: Tessera) -> None:
    data = side.data_dir
    source = side.bench.external / "events"
    warm = side.bench.external / "warm"
    generate(source, args.files, args.rows_per_file)
    generate(warm, args.warm_files, args.rows_per_file, first_id=10**12)
    spark = plain_spark(
        data / "plain-warehouse", **{"spark.sql.streaming.numRecentProgressUpdates": "10000"}
    )
    side.ready()
    side.statement(f"SET 'execution.checkpointing.interval' = '{args.trigger_ms} ms'")
    for name, folder in (("events", source), ("warm", warm)):
        side.statement(
            f"CREATE TABLE {CATALOG}.d.{name} ({SCHEMA}) WITH ('connector' = 'parquet', "
            f"'path' = '{folder}', 'maxFilesPerTrigger' = '{args.files_per_trigger}')"
        )
    expected = check(spark, source)
    # The worker reads the input once too (the plain JVM just did).
    if tessera_check(side, "events") != expected:
        raise SystemExit("Tessera reads the input differently from plain PySpark")
    total = args.files * args.rows_per_file
    warm_total = args.warm_files * args.rows_per_file

    # Warm both sides (first-stream costs, code generation, the JIT) with an untimed stream
    # each: the worker is long-lived, and the plain JVM has read the input once already.
    plain_run(
        spark,
        warm,
        data / "plain" / "warm",
        args.trigger_ms,
        args.files_per_trigger,
        warm_total,
        args.timeout,
        args.plain_sink,
    )
    tessera_run(side, "warm_t", "warm", warm_total, args.timeout)

    ours: list[Run] = []
    theirs: list[Run] = []
    for index in range(args.runs):
        out = data / "plain" / f"p{index}"
        found = plain_run(
            spark,
            source,
            out,
            args.trigger_ms,
            args.files_per_trigger,
            total,
            args.timeout,
            args.plain_sink,
        )
        theirs.append(found)
        print(f"plain run {index}: {_describe(found)}; {_same(check(spark, out), expected)}")
        found = tessera_run(side, f"t{index}", "events", total, args.timeout)
        ours.append(found)
        written = tessera_check(side, f"t{index}")
        print(f"Tessera run {index}: {_describe(found)}; {_same(written, expected)}")
    spark.stop()
    print(f"\n{machine()}")
    _report(
        args,
        {"Tessera streaming INSERT": ours, _plain_name(args): theirs},
    )
    t = statistics.median(r.rate for r in ours)
    p = statistics.median(r.rate for r in theirs)
    ts = statistics.median(r.steady for r in ours)
    ps = statistics.median(r.steady for r in theirs)
    print(f"\nratio (median rows/s, Tessera / plain): {t / p:.2f}x (steady: {ts / ps:.2f}x)")
    _profile(ours, theirs)


def _plain_name(args: Any) -> str:
    sink = "foreachBatch + write.parquet" if args.plain_sink == "foreachbatch" else "file sink"
    return f"plain PySpark Structured Streaming ({sink})"


def _report(args: Any, sides: dict[str, list[Run]]) -> None:
    total = args.files * args.rows_per_file
    print(
        f"data: {args.files} files x {args.rows_per_file:,} rows = {total:,} rows; "
        f"maxFilesPerTrigger {args.files_per_trigger}, trigger {args.trigger_ms} ms; "
        f"{args.runs} runs each\n"
    )
    print("| side | rows | batches | median s | median rows/s | min | max | steady rows/s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, runs in sides.items():
        rates = [r.rate for r in runs]
        print(
            f"| {name} | {runs[0].rows:,} | {len(runs[0].batches)} | "
            f"{statistics.median(r.seconds for r in runs):.2f} | "
            f"{statistics.median(rates):,.0f} | {min(rates):,.0f} | {max(rates):,.0f} | "
            f"{statistics.median(r.steady for r in runs):,.0f} |"
        )


def _profile(ours: list[Run], theirs: list[Run]) -> None:
    """Per batch, on both sides alike: the first batch's duration and the time from one
    batch's commit to the next one's (a batch, plus what the stream does between batches);
    then each side's split of the batches after the first (median s per batch)."""
    for name, runs in (("Tessera", ours), ("plain", theirs)):
        firsts = [r.batches[0].end - r.batches[0].start for r in runs]
        steps = [
            later.end - earlier.end
            for r in runs
            for earlier, later in zip(r.batches, r.batches[1:], strict=False)
        ]
        if not steps:
            continue
        print(
            f"{name}: first batch median {statistics.median(firsts):.3f} s; commit to commit "
            f"median {statistics.median(steps):.3f} s (min {min(steps):.3f}, max {max(steps):.3f})"
        )
        split = {
            phase: statistics.median(x for r in runs for x in r.phases.get(phase, []))
            for phase in runs[0].phases
            if any(r.phases.get(phase) for r in runs)
        }
        print(f"  per batch: {', '.join(f'{k} {v:.3f}' for k, v in split.items())}")


if __name__ == "__main__":
    main()
