"""Upserts by primary key on the worker (docs/writes.md, "Upserts"), copy-on-write.

The planner marks an INSERT as an upsert (``core.planner.upserts``: ``write_mode``,
``key``, ``op_column`` in its args). Here:

1. ``with_row_kind``: the query's rows get their row kind (the query's ``op`` column, taken
   out of the columns, or ``+I``) and their input order (``monotonically_increasing_id()``,
   taken before any shuffle), then the columns are matched to the table's as for INSERT.
   An invalid row kind or a NULL key fails the job with VALIDATION_ERROR (``raise_error`` in
   the plan, turned into our error by ``write``).
2. ``merged``: per key the LAST row by input order wins (``-U`` rows, before-images, are
   dropped first); the new version is the current rows whose key did not change plus the
   rows whose last kind is ``+I``/``+U``; a key whose last kind is ``-D`` is gone. One Spark
   job: the current rows are LEFT-joined to the changed keys (a flag, observed to count the
   updated and deleted rows), the unchanged ones kept, the upserted rows added.
3. ``write``: the new version goes into the job's own new directory; the table's location
   read as the base is recorded in the staging entry (``base_location``). If the table moved
   on meanwhile (another commit), the merge is done again against the new base, at most
   ``RETRIES`` times, then CONFLICT. The commit compares ``base_location`` with the locked
   table row again (``tabledata.commit``): a base that moved after the last look is CONFLICT too,
   so no update is ever lost.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import reduce
from typing import Any

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as sf

from core.errors import Conflict, CoreError
from core.identifiers import name_key
from core.planner import RelationPlan
from engine import errors, locations, spark_config
from jobs import lifecycle
from tabledata import staging

log = logging.getLogger(__name__)

OP = "__tessera_op"
SEQ = "__tessera_seq"
FLAG = "__tessera_flag"
KINDS = ("+I", "-U", "+U", "-D")
UPSERTED = ("+I", "+U")
RETRIES = 3
# Marks the messages of our raise_error calls, to turn them back into VALIDATION_ERROR.
MARKER = "TESSERA_UPSERT: "
_MARKED = re.compile(re.escape(MARKER) + r"(.*?)(?:\s*SQLSTATE: \w+)?\s*$", re.DOTALL)


@dataclass
class Changes:
    """An upsert's input: the physical columns (declared types), then ``OP`` and ``SEQ``."""

    frame: DataFrame
    key: list[str]
    relation: dict[str, Any]  # the target as the plan reads it (format, options, schema)
    metrics: dict[str, int] = field(default_factory=dict)


def with_row_kind(
    query: DataFrame,
    *,
    op_column: bool,
    targets: Sequence[str],
    key: Sequence[str],
    shown: str,
) -> DataFrame:
    """The query's columns (its ``op`` taken out when the table has no such column), the
    columns matched to a key column (``targets``: the column list or the table's physical
    columns, by position) checked for NULL, then ``OP`` and ``SEQ``."""
    names = query.columns
    at = [i for i, n in enumerate(names) if name_key(n) == "op"] if op_column else []
    if len(at) > 1:
        raise CoreError(
            f"The query of the upsert into {shown} has {len(at)} columns named `op`; the "
            "row-kind column is given once."
        )
    positional = query.toDF(*(f"__tessera_q{i}" for i in range(len(names))))
    kept = [(f"__tessera_q{i}", n) for i, n in enumerate(names) if i not in at]
    keys = {name_key(k) for k in key}
    null_key = (
        f"{MARKER}A row of the upsert into {shown} has a NULL key ({', '.join(key)}): "
        "every row needs its key."
    )
    columns: list[Column] = []
    for position, (inner, name) in enumerate(kept):
        value = sf.col(inner)
        if position < len(targets) and name_key(targets[position]) in keys:
            value = sf.when(value.isNull(), sf.raise_error(sf.lit(null_key))).otherwise(value)
        columns.append(value.alias(name))
    op = sf.col(f"__tessera_q{at[0]}").cast("string") if at else sf.lit("+I")
    invalid = sf.concat(
        sf.lit(f"{MARKER}Invalid row kind '"),
        sf.coalesce(op, sf.lit("NULL")),
        sf.lit(f"' in the column `op` of the upsert into {shown}: it takes +I, -U, +U or -D."),
    )
    checked = sf.when(op.isin(*KINDS), op).otherwise(sf.raise_error(invalid))
    return positional.select(
        *columns, checked.alias(OP), sf.monotonically_increasing_id().alias(SEQ)
    )


def read_base(spark: Any, relation: Mapping[str, Any], location: str, shown: str) -> DataFrame:
    """The table's current rows at ``location`` (checked as any read is)."""
    plan = RelationPlan.from_dict({**relation, "path": location, "columns": []})
    source = locations.checked_read(spark, plan, shown)
    reader = spark.read.format(source.format).schema(plan.physical_schema)
    frame: DataFrame = reader.options(**source.options).load(source.path)
    return frame


def _observe(frame: DataFrame, name: str, **metrics: Column) -> tuple[DataFrame, Any]:
    if spark_config.is_connect():
        return frame, None
    from pyspark.sql import Observation

    observation = Observation(name)
    aliased = [value.alias(key) for key, value in metrics.items()]
    return frame.observe(observation, *aliased), observation


def _observed(observation: Any) -> dict[str, int] | None:
    if observation is None:
        return None
    try:
        if not observation._jo.future().isCompleted():
            return None  # never block: Observation.get waits for ever on a missing metric
        values = observation.get
    except Exception:
        log.debug("upsert metrics not observed", exc_info=True)
        return None
    return {str(k): int(v or 0) for k, v in values.items()}


def _count_if(condition: Column) -> Column:
    return sf.coalesce(sf.sum(sf.when(condition, 1).otherwise(0)), sf.lit(0))


def merged(changes: Changes, base: DataFrame, columns: Sequence[str]) -> tuple[DataFrame, Any]:
    """The table's new version and the observations that count what changed."""
    frame = changes.frame
    order = Window.partitionBy(*[sf.col(k) for k in changes.key]).orderBy(sf.col(SEQ).desc())
    latest = (
        frame.filter(sf.col(OP) != "-U")
        .withColumn("__tessera_n", sf.row_number().over(order))
        .filter(sf.col("__tessera_n") == 1)
    )
    keys = latest.select(
        *[sf.col(k).alias(f"__tessera_k{i}") for i, k in enumerate(changes.key)],
        sf.col(OP).alias(FLAG),
    )
    condition = reduce(
        lambda a, b: a & b,
        [base[k] == keys[f"__tessera_k{i}"] for i, k in enumerate(changes.key)],
    )
    flagged = base.join(keys, condition, "left")
    flagged, touched = _observe(
        flagged,
        "tessera_upsert_base",
        updated=_count_if(sf.col(FLAG).isin(*UPSERTED)),
        deleted=_count_if(sf.col(FLAG) == "-D"),
    )
    kept = flagged.filter(sf.col(FLAG).isNull()).select(*[base[c] for c in columns])
    upserted = latest.filter(sf.col(OP).isin(*UPSERTED)).select(*columns)
    upserted, added = _observe(upserted, "tessera_upsert_rows", upserted=sf.count(sf.lit(1)))
    return kept.unionByName(upserted), (touched, added)


def _metrics(observations: Any) -> dict[str, int]:
    touched, added = (_observed(o) for o in observations)
    if touched is None or added is None:
        return {}
    updated, deleted = touched.get("updated", 0), touched.get("deleted", 0)
    # Exact for unique keys; a key the table holds twice (not enforced) counts each replaced row.
    inserted = max(added.get("upserted", 0) - updated, 0)
    return {"inserted": inserted, "updated": updated, "deleted": deleted}


def current_location(identifier: Sequence[str]) -> str:
    return str(staging.table_row(identifier, lock=False).location)


def validation_error(exc: BaseException) -> CoreError | None:
    """Our ``raise_error`` (an invalid row kind, a NULL key) as VALIDATION_ERROR."""
    if not errors.is_spark_exception(exc):
        return None
    for message in (errors.spark_message(exc), *errors.java_messages(exc)):
        found = _MARKED.search(message)
        if found:
            return CoreError(found.group(1).strip())
    return None


def write(
    job: Any,
    item: Any,
    stopped: Callable[[], bool],
    write_one: Callable[[Any, Any], int | None],
) -> int | None:
    """Merge ``item.upsert`` into the table's current data and write the new version into
    the job's staging location; again (``RETRIES`` times) while the base moves on."""
    changes: Changes = item.upsert
    spark = changes.frame.sparkSession
    columns = [f.name for f in changes.frame.schema.fields if f.name not in (OP, SEQ)]
    for attempt in range(RETRIES + 1):
        base = current_location(item.identifier)
        frame = read_base(spark, changes.relation, base, item.shown).select(*columns)
        item.frame, observations = merged(changes, frame, columns)
        try:
            rows = write_one(job, item)
        except Exception as exc:
            refused = validation_error(exc)
            if refused is not None:
                raise refused from None
            if stopped() or current_location(item.identifier) == base or attempt == RETRIES:
                raise
            rows = None  # the base was replaced while it was read: merge again
        else:
            changes.metrics = _metrics(observations)
            extra = {"metrics": changes.metrics} if changes.metrics else {}
            staging.record(job, item.identifier, base_location=base, **extra)
            if stopped() or current_location(item.identifier) == base:
                return rows
        if attempt < RETRIES:
            lifecycle.record_event(
                job.id, "upsert_retried", {"table": item.shown, "attempt": attempt + 1}
            )
    raise Conflict(
        f"Table {item.shown} changed {RETRIES + 1} times while the upsert merged into it (other "
        "writes committed first); nothing was committed. Run the statement again.",
        details={"identifier": list(item.identifier)},
    )


def result_message(item: Any) -> str:
    metrics: dict[str, int] = item.upsert.metrics if item.upsert is not None else {}
    total = (
        "" if item.rows is None else f"; it has {item.rows} row" + ("" if item.rows == 1 else "s")
    )
    if metrics:
        return (
            f"Upserted into {item.shown}: {metrics['inserted']} inserted, "
            f"{metrics['updated']} updated, {metrics['deleted']} deleted{total}."
        )
    return f"Upserted into {item.shown}{total}."
