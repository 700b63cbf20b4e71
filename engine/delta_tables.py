"""Managed Delta tables (ADR 0019): stage a job's files with Delta's own writer while the job
runs, commit them at FINISHED.

- ``stage``: ``DeltaLog.forTable(spark, path).startTransaction().writeFiles(df)`` writes the
  data files (physical column names under column mapping, statistics) and commits nothing;
  the job's staging entry keeps the transaction's read version and the ``AddFile`` JSON. A
  table no job has written yet is first created empty (``DeltaTable.createIfNotExists``
  with ``core.options.DELTA_MANAGED_PROPERTIES``): that is the table, not the job's rows.
- ``commit`` (lent to ``tabledata.delta_commit`` for the FINISHED transition): a
  transaction on the snapshot at the read version, the staged adds (an overwrite also
  removes every file of that snapshot), ``commit`` → the Delta version. Delta's conflict
  checker refuses a commit that another commit since the read version invalidates:
  ``WriteConflict``, nothing committed.

Only classic Spark (py4j) reaches ``DeltaLog``; Spark Connect is refused before anything
is written (``core.options.DELTA_CONNECT_REFUSED``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from functools import partial
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from catalog import storage
from core import options as table_options
from core.errors import CoreError, WriteConflict
from engine import locations, spark_config
from jobs.models import Job
from tabledata import delta_commit, staging

_DELTA = "org.apache.spark.sql.delta"
# Delta's exceptions of optimistic concurrency (io.delta.exceptions.*).
_CONFLICTS = (
    "ConcurrentAppendException",
    "ConcurrentDeleteReadException",
    "ConcurrentDeleteDeleteException",
    "ConcurrentTransactionException",
    "MetadataChangedException",
    "ProtocolChangedException",
    "ConcurrentWriteException",
    "DeltaConcurrentModificationException",
)


def refuse_connect(shown: str, spark: SparkSession | None = None) -> None:
    """Spark Connect (the settings' runtime, or a session without a py4j JVM) is refused."""
    if spark_config.is_connect() or (spark is not None and getattr(spark, "_jvm", None) is None):
        raise CoreError(f"Table {shown} cannot be written. {table_options.DELTA_CONNECT_REFUSED}")


def checked_location(spark: SparkSession, entry: Mapping[str, Any], shown: str) -> str:
    """The table's directory in the warehouse, links resolved; the staging entry's own."""
    with locations.refusals(f"Table {shown} cannot be written"):
        if not entry.get("managed") or not entry.get("delta"):
            raise CoreError("The staging entry is not a managed Delta table's.")
        if str(entry.get("location")) != str(entry.get("final")):
            raise CoreError("A managed Delta table is written in its own directory only.")
        real = storage.resolved_managed_location(str(entry["location"]))
        locations.hadoop_agrees(spark, real)
    return real


def _jvm(spark: SparkSession) -> Any:
    return spark._jvm


def _none(jvm: Any) -> Any:
    return jvm.scala.Option.apply(None)


def _seq(jvm: Any, items: Sequence[Any]) -> Any:
    """A Scala immutable Seq of ``items``."""
    java = jvm.java.util.ArrayList()
    for item in items:
        java.add(item)
    return jvm.scala.jdk.javaapi.CollectionConverters.asScala(java).toList()


def _list(seq: Any) -> list[Any]:
    return [seq.apply(i) for i in range(seq.size())]


def _rows(actions: Sequence[str]) -> int | None:
    """Rows of the staged files, from the ``numRecords`` of each ``AddFile``'s statistics."""
    total = 0
    for text in actions:
        stats = json.loads(text).get("add", {}).get("stats")
        records = json.loads(stats).get("numRecords") if isinstance(stats, str) else None
        if not isinstance(records, int):
            return None
        total += records
    return total


def write(
    job: Job,
    identifier: Sequence[str],
    frame: DataFrame,
    partition_by: Sequence[str],
    entry: Mapping[str, Any],
) -> int | None:
    """A managed Delta target of a write job: its files written uncommitted, what the commit
    needs recorded in the job's staging entry; returns the rows written."""
    spark = frame.sparkSession
    shown = str(entry.get("table") or "")
    refuse_connect(shown, spark)
    path = checked_location(spark, entry, shown)
    fields = stage(spark, path, frame, partition_by)
    staging.record(job, identifier, **fields)
    return _rows(fields["delta_actions"])


def _create_if_missing(
    spark: SparkSession, path: str, frame: DataFrame, partition_by: Sequence[str]
) -> int | None:
    """Create the empty Delta table at ``path`` (its columns are the frame's) unless it has a
    log; returns the version the creation made, None if the table was there."""
    if os.path.isdir(os.path.join(path, "_delta_log")):
        return None
    jvm = _jvm(spark)
    jschema = jvm.org.apache.spark.sql.types.DataType.fromJson(frame.schema.json())
    builder = jvm.io.delta.tables.DeltaTable.createIfNotExists(spark._jsparkSession)
    builder = builder.location(path).addColumns(jschema)
    for key, value in table_options.DELTA_MANAGED_PROPERTIES.items():
        builder = builder.property(key, value)
    if partition_by:
        gateway: Any = spark.sparkContext._gateway
        names = gateway.new_array(jvm.java.lang.String, len(partition_by))
        for index, name in enumerate(partition_by):
            names[index] = name
        builder = builder.partitionedBy(names)
    builder.execute()
    return int(
        jvm.io.delta.tables.DeltaTable.forPath(spark._jsparkSession, path)
        .history(1)
        .first()
        .getLong(0)
    )


def stage(
    spark: SparkSession, path: str, frame: DataFrame, partition_by: Sequence[str]
) -> dict[str, Any]:
    """Write the frame's files into the table's directory, uncommitted; returns the staging
    fields (``delta_base``, ``delta_actions``, ``delta_created`` when it created the table)."""
    created = _create_if_missing(spark, path, frame, partition_by)
    jvm = _jvm(spark)
    log = getattr(jvm, _DELTA).DeltaLog.forTable(spark._jsparkSession, path)
    txn = log.startTransaction()
    files = txn.writeFiles(frame._jdf)
    fields: dict[str, Any] = {
        "delta_base": int(txn.readVersion()),
        "delta_actions": [str(action.json()) for action in _list(files)],
    }
    if created is not None:
        fields["delta_created"] = created
    return fields


def is_conflict(exc: BaseException) -> bool:
    """Delta's optimistic concurrency refused a commit: a py4j error, or the exception
    pyspark made of one (``spark.sql`` of a MERGE / UPDATE / DELETE)."""
    java = getattr(exc, "java_exception", None) or getattr(exc, "_origin", None)
    try:
        name = str(java.getClass().getName()) if java is not None else type(exc).__name__
    except Exception:
        name = type(exc).__name__
    return any(name.endswith(conflict) for conflict in _CONFLICTS)


def lent(spark: SparkSession | None) -> AbstractContextManager[None]:
    """Lend ``commit`` on ``spark`` to ``tabledata.delta_commit`` while the block runs (a
    job with no target lends nothing)."""
    if spark is None:
        return nullcontext()
    return delta_commit.lend(partial(commit, spark))


def commit(spark: SparkSession, entry: Mapping[str, Any]) -> int:
    """Commit the staged files of ``entry`` on the snapshot they were written against;
    returns the Delta version made. A conflicting commit since → ``WriteConflict``."""
    shown = str(entry.get("table") or "")
    path = checked_location(spark, entry, shown)
    jvm = _jvm(spark)
    delta = getattr(jvm, _DELTA)
    none = _none(jvm)
    overwrite = entry.get("mode") == "overwrite"
    try:
        log = delta.DeltaLog.forTable(spark._jsparkSession, path)
        snapshot = log.getSnapshotAt(int(entry["delta_base"]), none, none, False)
        txn = log.startTransaction(none, jvm.scala.Option.apply(snapshot))
        actions = [delta.actions.Action.fromJson(text) for text in entry["delta_actions"]]
        if overwrite:  # reading every file registers the whole table as read: conflicts
            actions += [added.remove() for added in _list(txn.filterFiles())]
        mode = jvm.org.apache.spark.sql.SaveMode.valueOf("Overwrite" if overwrite else "Append")
        operation = delta.DeltaOperations.Write(
            mode, none, none, none, none, none, none, none, none
        )
        return int(txn.commit(_seq(jvm, actions), operation))
    except Exception as exc:
        if not is_conflict(exc):
            raise
        raise WriteConflict(
            f"Table {shown} changed while the job ran (another write committed first and "
            "conflicts with this one); nothing was committed. Run the statement again.",
            details={"identifier": list(entry.get("identifier") or [])},
        ) from None
