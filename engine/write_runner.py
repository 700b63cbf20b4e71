"""The worker's write path (FLIP-218): CTAS, INSERT and statement sets.

``engine.run`` claims the job, registers its relations and functions and keeps the
monitor (cancel, timeout, heartbeat) running; this module does the rest
(docs/statements.md, "Writes"):

1. ``prepare_writes``: analyse every target's query (``df.schema``, no Spark job) before
   anything is written. CTAS: the table's schema is the query's (Tessera types), checked as
   a table schema and against ``partition_by``, and stored in the job's staging entry
   (``tabledata.staging.record(…, schema=…)``) for the commit (``commit_write``). INSERT: the
   query's columns are checked against the target's physical columns (count; each type
   storable into the column's) and cast to the declared types, in the table's order. A
   mismatch fails the job with VALIDATION_ERROR before any target is written.
2. ``write_all``: each target is written by Spark into the directory
   ``tabledata.staging.staging_location`` gives (this job's own: a new warehouse directory, or
   ``<path>/_tessera_staging_<job>``) → event ``data_written {"table", "rows"}``.
3. ``end_write``: RUNNING → FINISHED with a result row per target; the commit runs inside
   that transition (``tabledata.write_steps.commit_write``, a FINISHED step of
   ``jobs.steps``). A commit that raises fails the job with its error. Every way of not
   finishing (Spark error, cancel, timeout, commit failure) ends with
   ``tabledata.commit.clean_up`` once more, silently: files a cancelled write's tasks left
   after ``clean_up_write`` had cleaned up.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as sf
from pyspark.sql import types as st

from catalog import services as catalog_services
from catalog.models import Table
from core import jobstate
from core.errors import CoreError, DataTypeError
from core.identifiers import name_key, quote_path
from core.planner import Plan
from core.schema import PhysicalColumn, ResolvedSchema, Schema
from engine import delta_tables, errors, locations, spark_config, sqlguard
from engine import upsert as upsert_runner
from engine.control import SparkJobControl
from engine.store_types import store_assignable, type_sql
from engine.typing import to_tessera_type
from jobs import lifecycle
from jobs.errors import INTERNAL_ERROR
from jobs.models import Job
from results.store import delete_result, write_rows
from tabledata import commit, staging

log = logging.getLogger(__name__)

RESULT_COLUMNS = [{"name": "result", "data_type": "STRING"}]
# Keys of a table's options that are not writer options.
_NOT_WRITER_OPTIONS = frozenset({"connector", "format", "path", "table.ctas.atomic", "write.mode"})
# How long to wait for the tasks of a stopped write to end before the last clean-up: killed
# tasks keep writing until they next check for interruption (seconds; longer under load).
SETTLE_SECONDS = 60.0
# Spark Connect: how long a stopped write's staging must stay clean, and how often to look.
QUIET_SECONDS = 5.0
QUIET_POLL_SECONDS = 0.25


@dataclass
class PreparedWrite:
    """One target, analysed: the frame to write and how to write it."""

    identifier: list[str]
    mode: str  # "ctas" | "insert" | "overwrite" | "upsert"
    frame: DataFrame
    format: str
    options: dict[str, str] = field(default_factory=dict)
    partition_by: list[str] = field(default_factory=list)
    schema: ResolvedSchema | None = None  # CTAS: the table's schema
    rows: int | None = None  # once written
    upsert: upsert_runner.Changes | None = None  # an upsert's input (``engine.upsert``)

    @property
    def shown(self) -> str:
        return quote_path(self.identifier)


# --- analysis -----------------------------------------------------------------------------


def _writer_options(options: Mapping[str, Any]) -> dict[str, str]:
    """A table's options without the source keys, as writer options. A key no format takes
    (``fs.*``, ``spark.*``, unknown …) is refused here rather than dropped: the row or the
    plan is not one Tessera made (``write_one`` checks the rest against the format)."""
    result = {
        str(k): str(v) for k, v in options.items() if str(k).lower() not in _NOT_WRITER_OPTIONS
    }
    locations.check_option_keys(result, "The table's options cannot be written")
    return result


def _validation(message: str, **details: Any) -> CoreError:
    return CoreError(message, details=details)


def ctas_schema(struct: st.StructType, shown: str) -> ResolvedSchema:
    """The CTAS table's schema: the query's columns in order, all physical, Tessera types,
    validated as a table schema (names, duplicates)."""
    columns: list[PhysicalColumn] = []
    for field_ in struct.fields:
        try:
            data_type = to_tessera_type(field_.dataType, field_.nullable)
        except DataTypeError:
            raise _validation(
                f"Column `{field_.name}` of the query has type "
                f"{field_.dataType.simpleString().upper()}, which a table column cannot have; "
                f"cast it to a concrete type (e.g. CAST(NULL AS STRING)) to create {shown}.",
                column=field_.name,
            ) from None
        columns.append(PhysicalColumn(field_.name, data_type))
    if not columns:
        raise _validation(f"The query of CREATE TABLE {shown} … AS produces no columns.")
    resolved: ResolvedSchema = catalog_services.resolve_schema(Schema(tuple(columns)))
    return resolved


def _prepare_ctas(spark: SparkSession, target: Mapping[str, Any], sql: str) -> PreparedWrite:
    identifier = list(target["identifier"])
    args: Mapping[str, Any] = target["args"]
    shown = quote_path(identifier)
    frame = sqlguard.guard(spark).sql(sql)
    schema = ctas_schema(frame.schema, shown)
    partition_by = catalog_services.check_partitioning(list(args.get("partition_by") or []), schema)
    options = staging.ctas_options(args)
    managed = "connector" not in options
    fmt = str(options.get("format") if managed else options.get("connector")) or "parquet"
    return PreparedWrite(
        identifier,
        "ctas",
        frame,
        fmt,
        _writer_options(options),
        partition_by,
        schema=schema,
    )


def _names(names: Sequence[str]) -> str:
    return ", ".join(f"`{n}`" for n in names) or "(none)"


def table_field(identifier: Sequence[str], field: str) -> Any:
    """One stored field of the target table (None when there is no such table)."""
    c, d, n = identifier
    return (
        Table.objects.filter(
            database__catalog__name_key=c.lower(),
            database__name_key=d.lower(),
            name_key=n.lower(),
            kind=Table.KIND_TABLE,
        )
        .values_list(field, flat=True)
        .first()
    )


def _table_partitioning(identifier: Sequence[str]) -> list[str]:
    """The target table's partition columns, from the catalog."""
    return [str(name) for name in table_field(identifier, "partition_by") or []]


def insert_frame(
    frame: DataFrame,
    physical: st.StructType,
    written: Sequence[str] | None,
    shown: str,
    carry: int = 0,
) -> DataFrame:
    """The query's rows as the target's physical columns: matched by position (to the
    column list when there is one, else to every physical column), checked, cast to the
    declared types; columns left out of a column list are NULL; a NULL reaching a NOT NULL
    column fails the write. The last ``carry`` columns are passed through unmatched."""
    by_key = {name_key(f.name): f for f in physical.fields}
    targets = [f.name for f in physical.fields] if written is None else list(written)
    fields = frame.schema.fields
    source = fields[: len(fields) - carry]
    carried = [f.name for f in fields[len(source) :]]
    if len(source) != len(targets):
        where = "the column list names" if written is not None else "the table has"
        plural = "" if len(source) == 1 else "s"
        raise _validation(
            f"Cannot insert into {shown}: the query produces {len(source)} column{plural} "
            f"({_names([f.name for f in source])}) but {where} {len(targets)} "
            f"({_names(targets)}).",
            query_columns=[f.name for f in source],
            target_columns=targets,
        )
    assigned: dict[str, tuple[int, st.StructField]] = {}
    for index, (src, name) in enumerate(zip(source, targets, strict=True)):
        column = by_key.get(name_key(name))
        if column is None:
            raise _validation(
                f"Column `{name}` does not exist in {shown}; its columns are: "
                f"{_names([f.name for f in physical.fields])}.",
                column=name,
            )
        if not store_assignable(src.dataType, column.dataType):
            raise _validation(
                f"Cannot insert into {shown}: column `{column.name}` is "
                f"{type_sql(column.dataType)} but the query's column `{src.name}` "
                f"(position {index + 1}) is {type_sql(src.dataType)}, which cannot be "
                "stored into it. Cast it in the query.",
                column=column.name,
                query_column=src.name,
            )
        assigned[name_key(column.name)] = (index, src)
    positional = frame.toDF(*(f"__tessera_c{i}" for i in range(len(source))), *carried)
    projection: list[Column] = []
    for column in physical.fields:
        match = assigned.get(name_key(column.name))
        if match is None:
            if not column.nullable:
                raise _validation(
                    f"Cannot insert into {shown}: column `{column.name}` is NOT NULL and the "
                    "column list gives it no value.",
                    column=column.name,
                )
            value = sf.lit(None).cast(column.dataType)
        else:
            value = sf.col(f"__tessera_c{match[0]}").cast(column.dataType)
            if not column.nullable and match[1].nullable:
                # Spark's own INSERT asserts NOT NULL at run time; so do we.
                message = f"Cannot insert NULL into NOT NULL column `{column.name}` of {shown}."
                value = sf.when(value.isNull(), sf.raise_error(sf.lit(message))).otherwise(value)
        projection.append(value.alias(column.name))
    return positional.select(*projection, *carried)


def listed_columns(args: Mapping[str, Any], query: DataFrame) -> list[str] | None:
    """The columns an INSERT writes, in the query's order: its column list, or for INSERT …
    BY NAME the query's own column names (checked against the table by ``insert_frame``)."""
    if args.get("by_name"):
        return [f.name for f in query.schema.fields]
    listed = args.get("columns")
    return [str(c) for c in listed] if listed else None


def _prepare_insert(
    spark: SparkSession, target: Mapping[str, Any], sql: str, mode: str
) -> PreparedWrite:
    identifier = list(target["identifier"])
    args: Mapping[str, Any] = target["args"]
    table: Mapping[str, Any] = args.get("table") or {}
    shown = quote_path(identifier)
    ddl = str(table.get("physical_schema") or "")
    if not ddl:
        raise _validation(f"Table {shown} has no physical columns to insert into.")
    physical = spark.createDataFrame([], ddl).schema
    query = sqlguard.guard(spark).sql(sql)
    listed = listed_columns(args, query)
    key = [str(k) for k in args.get("key") or []] if mode == "upsert" else []
    if mode == "upsert" and not key:
        raise _validation(f"The plan upserts into {shown} without naming its key columns.")
    if key:
        targets = list(listed) if listed else [f.name for f in physical.fields]
        op_column = bool(args.get("op_column"))
        query = upsert_runner.with_row_kind(
            query, op_column=op_column, targets=targets, key=key, shown=shown
        )
    frame = insert_frame(query, physical, listed, shown, 2 if key else 0)
    options = dict(table.get("options") or {})
    fmt = str(table.get("format") or options.get("connector") or options.get("format") or "")
    partition_by = args.get("partition_by")
    if partition_by is None:
        partition_by = _table_partitioning(identifier)
    item = PreparedWrite(
        identifier, mode, frame, fmt or "parquet", _writer_options(options), list(partition_by)
    )
    if key:
        item.upsert = upsert_runner.Changes(frame, key, dict(table))
    return item


def prepare_writes(spark: SparkSession, job: Job, plan: Plan) -> list[PreparedWrite]:
    """Analyse every target (no Spark job runs); CTAS schemas go into the job's staging."""
    prepared: list[PreparedWrite] = []
    for target in staging.write_targets(plan):
        args: Mapping[str, Any] = target["args"]
        sql = str(args.get("sql") or plan.sql or "")
        if not sql.strip():
            raise _validation(f"The plan has no query for {quote_path(target['identifier'])}.")
        if target["mode"] == "ctas":
            prepared.append(_prepare_ctas(spark, target, sql))
        else:
            prepared.append(_prepare_insert(spark, target, sql, str(target["mode"])))
    for item in prepared:
        if item.schema is not None:
            staging.record(job, item.identifier, schema=item.schema.to_dict())
    return prepared


# --- writing ------------------------------------------------------------------------------


def _observe(frame: DataFrame) -> tuple[DataFrame, Any]:
    """The frame with a row count observed as it is written (classic Spark only)."""
    if spark_config.is_connect():
        return frame, None
    from pyspark.sql import Observation

    observation = Observation("tessera_rows")
    return frame.observe(observation, sf.count(sf.lit(1)).alias("rows")), observation


def _observed_rows(observation: Any) -> int | None:
    if observation is None:
        return None
    try:
        if not observation._jo.future().isCompleted():
            return None  # never block: Observation.get waits for ever on a missing metric
        value = observation.get.get("rows")
    except Exception:
        log.debug("row count not observed", exc_info=True)
        return None
    return int(value) if isinstance(value, int) else None


def parquet_rows(location: str) -> int | None:
    """Rows of the parquet files under ``location`` (footers only), None if unreadable."""
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    total = 0
    try:
        for path in Path(location).rglob("*.parquet"):
            if any(part.startswith(("_", ".")) for part in path.relative_to(location).parts):
                continue
            total += int(pq.read_metadata(path).num_rows)
    except Exception:
        log.debug("could not count the rows under %s", location, exc_info=True)
        return None
    return total


def write_one(job: Job, item: PreparedWrite) -> int | None:
    """Write one target into this job's staging location; returns its row count if known."""
    staging.staging_location(job, item.identifier)  # decided at CREATED; recorded if not
    entry = staging.entry(job, item.identifier)
    if entry.get("delta"):  # files in its own directory, committed by the FINISHED transition
        return delta_tables.write(job, item.identifier, item.frame, item.partition_by, entry)
    # Checked now, at the write: the resolved directory and allow-listed options only.
    target = locations.checked_write(
        item.frame.sparkSession, entry, str(job.pk), item.format, item.options, item.shown
    )
    location = target.path
    frame, observation = _observe(item.frame)
    writer = frame.write.format(target.format).mode("overwrite")
    if target.options:
        writer = writer.options(**target.options)
    if item.partition_by:
        writer = writer.partitionBy(*item.partition_by)
    writer.save(location)
    # What the job wrote, looked at here, outside the commit's transaction.
    locations.checked_written(target, entry, item.shown)
    rows = _observed_rows(observation)
    if rows is None and item.format == "parquet":
        rows = parquet_rows(location)
    return rows


def write_all(job: Job, prepared: Sequence[PreparedWrite], stopped: Callable[[], bool]) -> None:
    """Write every target in turn (one thread: the job's Spark tag and group cover them all);
    stop early when the monitor ended the job."""
    for item in prepared:
        if stopped():
            return
        if item.upsert is not None:
            item.rows = upsert_runner.write(job, item, stopped, write_one)
        else:
            item.rows = write_one(job, item)
        if stopped():
            return
        detail: dict[str, Any] = {"table": item.shown}
        if item.rows is not None:
            detail["rows"] = item.rows
            staging.record(job, item.identifier, rows=item.rows)
        lifecycle.record_event(job.id, "data_written", detail)


# --- ending the job -------------------------------------------------------------------------


def _count(rows: int | None) -> str:
    if rows is None:
        return ""
    return f"{rows} row" if rows == 1 else f"{rows} rows"


def result_message(item: PreparedWrite) -> str:
    rows = _count(item.rows)
    if item.mode == "upsert":
        return upsert_runner.result_message(item)
    if item.mode == "ctas":
        return f"Created table {item.shown}" + (f" with {rows}." if rows else ".")
    if item.mode == "overwrite":
        return f"Overwrote table {item.shown}" + (f" with {rows}." if rows else ".")
    return f"Inserted {rows} into {item.shown}." if rows else f"Inserted rows into {item.shown}."


def clean_up_quietly(job_id: Any) -> bool:
    """``tabledata.commit.clean_up`` for a job that did not finish, without events (the hooks
    cleaned up already): True if it removed what Spark's tasks wrote after them."""
    try:
        if commit.clean_up(Job(pk=job_id)):
            log.info("job %s: removed files written after the job ended", job_id)
            return True
    except Exception:
        log.warning("job %s: the last clean-up failed", job_id, exc_info=True)
    return False


def clean_up_until_quiet(
    job_id: Any, quiet: float = QUIET_SECONDS, timeout: float = SETTLE_SECONDS
) -> None:
    """Spark Connect's last clean-up of a stopped write: the client sees no tasks to wait
    for, so it cleans the job's staging locations until nothing has reappeared in them for
    ``quiet`` seconds (a task launched as the job was cancelled can still create them)."""
    last_removal = time.monotonic()
    deadline = last_removal + timeout
    while True:
        now = time.monotonic()
        if clean_up_quietly(job_id):
            last_removal = now
        elif now - last_removal >= quiet:
            return
        if now > deadline:
            log.warning("job %s: files still reappearing after %.0f s", job_id, timeout)
            return
        time.sleep(QUIET_POLL_SECONDS)


def _status_of(job_id: Any) -> str:
    status = Job.objects.filter(pk=job_id).values_list("status", flat=True).first()
    return str(status or "")


def settle(job_id: Any, control: SparkJobControl | None) -> None:
    """Wait (bounded) until no task of the job's Spark work is still running, then remove
    what they wrote after the hooks cleaned up."""
    if control is not None and control.connect:
        clean_up_until_quiet(job_id)
        return
    if control is not None:
        control.wait_idle(SETTLE_SECONDS)
    clean_up_quietly(job_id)


def end_write(
    job: Job,
    prepared: Sequence[PreparedWrite],
    failure: BaseException | None,
    *,
    stopped: bool,
    progress: Mapping[str, Any],
    aliases: Mapping[str, str],
    control: SparkJobControl | None = None,
    texts: tuple[str, str] | None = None,
) -> str:
    """The write job's terminal transition (unless the monitor made it); returns the status.
    ``texts``: the query Spark ran and the statement written, to place its errors
    (``errors.job_error``)."""
    if stopped:  # canceled, timed out or reaped: the monitor's transition ran the hooks
        settle(job.id, control)
        return _status_of(job.id)
    if failure is not None:
        error = errors.job_error(failure, aliases, texts=texts)
        if error.code == INTERNAL_ERROR:
            log.error("job %s failed", job.id, exc_info=failure)
        else:
            log.info("job %s failed: %s", job.id, error.message)
        lifecycle.try_transition(
            job.id, jobstate.RUNNING, jobstate.FAILED, error=error, progress=dict(progress)
        )
        settle(job.id, control)
        return _status_of(job.id)
    result = write_rows(job.id, RESULT_COLUMNS, [[result_message(item)] for item in prepared])
    try:
        with delta_tables.lent(prepared[0].frame.sparkSession if prepared else None):
            lifecycle.transition(
                job.id, jobstate.RUNNING, jobstate.FINISHED, result=result, progress=dict(progress)
            )
    except Exception as exc:
        delete_result(job.id)
        if _status_of(job.id) == jobstate.RUNNING:  # the commit failed and was rolled back
            error = errors.job_error(exc, aliases)
            log.info("job %s: the commit failed: %s", job.id, error.message)
            lifecycle.try_transition(
                job.id, jobstate.RUNNING, jobstate.FAILED, error=error, progress=dict(progress)
            )
        clean_up_quietly(job.id)
    return _status_of(job.id)
