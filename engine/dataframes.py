"""Live DataFrames of a pipeline job as session tables (``'connector' = 'dataframe'``).

In a pipeline, ``t_env.from_data_frame(df)`` and ``t_env.create_temporary_view(path, df)``
copy nothing (``engine.pipeline_env``): ``df`` — a DataFrame of the pipeline's own
SparkSession — becomes a Spark temporary view of that session under a hidden, generated
name (``__tessera_df_<uuid hex>``), and a temporary table of the pipeline's session with
the options ``{'connector': 'dataframe', 'view': <hidden name>, 'job': <pipeline job>}``
stands for it in the catalog (declared with ``CREATE TEMPORARY TABLE``: planned, checked
and recorded as any statement of the pipeline).

Only the pipeline can use it. The planner refuses the connector unless the statement is
planned for the running pipeline job the options name (``PlanContext.pipeline_job``,
``core.planner.sources``); the command that creates the table checks again that its job's
parent is that running pipeline; and here, at registration, the SparkSession must be the
one the pipeline claimed (``claim``; child jobs run inline in it) and hold the hidden view.
Another job runs in a SparkSession of its own, where the view does not exist. The hidden
name never appears in a statement's query: the planner gives the relation an alias, and
``read`` registers the alias over the view, so the guard still judges Spark's parse of
the query text.

When the pipeline ends (any outcome) ``release`` drops the hidden views from its Spark
session and deletes its ``dataframe`` temporary tables, and the session's temporary views
its statements made over them, from the pipeline's session.
"""

from __future__ import annotations

import logging
import uuid
import weakref
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, StructType

from core.errors import CoreError
from core.planner import RelationPlan
from core.planner.sources import (
    DATAFRAME_CONNECTOR,
    DATAFRAME_JOB,
    DATAFRAME_VIEW,
    DATAFRAME_VIEW_NAME,
    DATAFRAME_VIEW_PREFIX,
    DataFrameRefused,
)
from jobs.models import TemporaryObject

log = logging.getLogger(__name__)

# The pipeline job each pipeline's SparkSession belongs to (while the pipeline runs).
_owners: weakref.WeakKeyDictionary[SparkSession, str] = weakref.WeakKeyDictionary()


def claim(spark: SparkSession, job_id: Any) -> None:
    """``spark`` is the SparkSession of the pipeline job ``job_id`` until ``release``."""
    _owners[spark] = str(job_id)


def owner(spark: SparkSession) -> str | None:
    """The pipeline job whose SparkSession ``spark`` is, or None."""
    return _owners.get(spark)


def _same_session(frame: DataFrame, spark: SparkSession) -> bool:
    session: Any = frame.sparkSession
    if session is spark:
        return True
    mine: Any = spark
    if hasattr(session, "_jsparkSession") and hasattr(mine, "_jsparkSession"):
        return bool(session._jsparkSession.equals(mine._jsparkSession))
    theirs = getattr(session, "session_id", None)
    return theirs is not None and theirs == getattr(mine, "session_id", None)


def hide(spark: SparkSession, frame: Any, job_id: Any) -> str:
    """Register ``frame`` as a Spark temporary view of the pipeline's session under a new
    hidden name; the name. ``frame`` must be a DataFrame of that session (``t_env.spark``,
    ``to_data_frame()``), nothing is computed or copied."""
    if owner(spark) != str(job_id):
        raise DataFrameRefused("This SparkSession is not the running pipeline's.")
    if not isinstance(frame, DataFrame):
        raise CoreError(
            f"Expected a PySpark DataFrame of t_env.spark, not {type(frame).__name__}.",
            details={"type": type(frame).__name__},
        )
    if not _same_session(frame, spark):
        raise CoreError(
            "The DataFrame belongs to another SparkSession: build it from t_env.spark or "
            "from Table.to_data_frame() of this pipeline."
        )
    name = DATAFRAME_VIEW_PREFIX + uuid.uuid4().hex
    frame.createTempView(name)
    return name


def spark_columns(frame: DataFrame) -> str:
    """The column list of ``frame`` as DDL (all nullable, no comments):
    ```a` BIGINT,`b` STRING``."""
    fields = [f.__class__(f.name, f.dataType, True) for f in frame.schema.fields]
    if not fields:
        raise CoreError("The DataFrame has no columns; a table needs at least one.")
    return StructType(fields).toDDL()


def _temporary_view_exists(spark: SparkSession, name: str) -> bool:
    return any(table.isTemporary and table.name == name for table in spark.catalog.listTables())


def read(spark: SparkSession, relation: RelationPlan, shown: str) -> DataFrame:
    """The frame of a table relation over a DataFrame (``'connector' = 'dataframe'``): only
    in the SparkSession of the pipeline job its options name, which holds its hidden view;
    the physical columns of its schema taken by name and cast to their types (computed
    columns are added by the caller, as for any table)."""
    options = {str(k).lower(): str(v) for k, v in relation.options.items()}
    job, view = options.get(DATAFRAME_JOB, ""), options.get(DATAFRAME_VIEW, "")
    if (
        relation.format != DATAFRAME_CONNECTOR
        or not DATAFRAME_VIEW_NAME.match(view)
        or owner(spark) is None
        or owner(spark) != job
    ):
        raise DataFrameRefused(
            f"Table {shown} cannot be read: it reads a live DataFrame of the pipeline job "
            f"{job or '?'}, and this is not that running pipeline.",
            details={"job": job},
        )
    if not _temporary_view_exists(spark, view):
        raise CoreError(
            f"Table {shown} cannot be read: its DataFrame is no longer registered in the "
            "pipeline's SparkSession.",
            details={"job": job},
        )
    frame = spark.table(view)
    if not relation.physical_schema:
        return frame
    schema = DataType.fromDDL(relation.physical_schema)
    assert isinstance(schema, StructType)
    present = {name.lower(): name for name in frame.columns}
    projected = []
    for field in schema.fields:
        found = present.get(field.name.lower())
        if found is None:
            raise CoreError(
                f"Table {shown} has the column `{field.name}`, which its DataFrame does not "
                f"have (it has {', '.join(frame.columns)}).",
                details={"column": field.name},
            )
        projected.append(
            F.col(f"`{found.replace('`', '``')}`").cast(field.dataType).alias(field.name)
        )
    return frame.select(*projected)


def release(spark: SparkSession | None, job_id: Any, session_id: Any) -> None:
    """The pipeline ended: its hidden views leave its Spark session, and its ``dataframe``
    temporary tables (with the temporary views its statements made over them) leave its
    session. Never raises."""
    job = str(job_id)
    if spark is not None:
        try:
            for table in spark.catalog.listTables():
                if table.isTemporary and table.name.startswith(DATAFRAME_VIEW_PREFIX):
                    spark.catalog.dropTempView(table.name)
        except Exception:  # a dead JVM has no views left to drop
            log.warning("pipeline %s: its DataFrame views could not be dropped", job)
        _owners.pop(spark, None)
    try:
        drop_temporary_objects(job, session_id)
    except Exception:
        log.exception("pipeline %s: its DataFrame tables could not be dropped", job)


def drop_temporary_objects(job_id: str, session_id: Any) -> int:
    """Delete the session's temporary tables over the pipeline's DataFrames, and the
    temporary views the pipeline's statements made that name them; how many rows went."""
    rows = TemporaryObject.objects.filter(session_id=session_id)
    tables = [
        row
        for row in rows.filter(kind=TemporaryObject.KIND_TABLE)
        if _is_dataframe_of(row.definition, job_id)
    ]
    if not tables:
        return 0
    names = [row.name.lower() for row in tables]
    views = [
        row
        for row in rows.filter(
            kind=TemporaryObject.KIND_VIEW, created_by_job__parent_id=uuid.UUID(job_id)
        )
        if _names_any(row.definition, names)
    ]
    doomed = [row.pk for row in (*tables, *views)]
    deleted, _ = TemporaryObject.objects.filter(pk__in=doomed).delete()
    return int(deleted)


def _is_dataframe_of(definition: Any, job_id: str) -> bool:
    options = dict((definition or {}).get("options") or {})
    lowered = {str(k).lower(): str(v) for k, v in options.items()}
    return (
        lowered.get("connector", "").lower() == DATAFRAME_CONNECTOR
        and lowered.get(DATAFRAME_JOB) == job_id
    )


def _names_any(definition: Any, names: list[str]) -> bool:
    text = " ".join(
        str((definition or {}).get(key) or "") for key in ("query", "expanded_query")
    ).lower()
    return any(name in text for name in names)
