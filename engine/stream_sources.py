"""Streaming sources of a streaming plan (docs/streaming.md, "Sources").

A streaming plan's table relations carry ``streaming: true``: each is registered as a
temporary view over ``spark.readStream`` instead of ``spark.read``:

- a file table (parquet, json, csv, orc) is read as a directory, with the table's physical
  schema, its path and options checked exactly as a batch read checks them
  (``engine.locations.checked_read``: storage roots, links, Hadoop's reading, the
  format's option allow-list);
- the ``rate`` demo connector is Spark's rate source with its two allow-listed options,
  ``rowsPerSecond`` (1 to 1,000,000) and ``numPartitions`` (1 to 64), and no path.

Computed and metadata columns are added as registration adds them (built-in expressions
only, checked by Spark's parser), then the table's watermark, ``withWatermark(column,
delay)``, when the relation declares one (the delay's text is allow-listed). Views and
functions are registered as for batch plans: a view over streaming views is streaming.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import TimestampNTZType

from core.errors import CoreError
from core.identifiers import quote_path
from core.planner import Plan, RelationPlan
from core.planner.errors import ForbiddenSql
from engine import locations, registration, sqlguard

RATE = "rate"
# Spark's rate source options the rate connector may pass, with their ranges.
RATE_OPTIONS: Mapping[str, tuple[int, int]] = {
    "rowsPerSecond": (1, 1_000_000),
    "numPartitions": (1, 64),
}
# ``withWatermark``'s delay: "<n> <unit>" as the planner writes it.
_DELAY = re.compile(r"^\s*(\d{1,9})\s+(millisecond|second|minute|hour|day)s?\s*$", re.IGNORECASE)


def shown(relation: RelationPlan) -> str:
    identifier = [str(part) for part in relation.identifier if part]
    return quote_path(identifier or [relation.alias or "?"])


def rate_options(relation: RelationPlan) -> dict[str, str]:
    """The rate source's options, each on the allow-list and in its range; no path."""
    what = f"Table {shown(relation)} cannot be streamed"
    if relation.path:
        raise ForbiddenSql(f"{what}: the rate connector reads no path.")
    checked: dict[str, str] = {}
    for key, value in relation.options.items():
        bounds = RATE_OPTIONS.get(str(key))
        if bounds is None:
            raise ForbiddenSql(
                f"{what}: the rate connector takes only the options "
                f"{', '.join(RATE_OPTIONS)}, not '{key}'.",
                details={"option": str(key)},
            )
        text = str(value).strip()
        low, high = bounds
        if not text.isdigit() or not low <= int(text) <= high:
            raise CoreError(
                f"{what}: the rate connector's option '{key}' takes a whole number from "
                f"{low:,} to {high:,}, not '{value}'.",
                details={"option": str(key)},
            )
        checked[str(key)] = str(int(text))
    return checked


def watermark_delay(text: str, relation: RelationPlan) -> str:
    """The delay of a watermark as ``withWatermark`` takes it ("5 seconds")."""
    found = _DELAY.match(str(text))
    if found is None:
        raise CoreError(
            f"The watermark of {shown(relation)} has the delay '{text}', which is not a "
            "whole number of milliseconds, seconds, minutes, hours or days.",
        )
    return f"{int(found.group(1))} {found.group(2).lower()}s"


def _with_watermark(frame: DataFrame, relation: RelationPlan) -> DataFrame:
    watermark = relation.watermark
    if watermark is None:
        return frame
    column = str(watermark.get("column") or "")
    matches = [name for name in frame.columns if name.lower() == column.lower()]
    if len(matches) != 1:
        raise CoreError(
            f"The watermark of {shown(relation)} names the column `{column}`, which the table "
            "does not have.",
            details={"column": column},
        )
    if isinstance(frame.schema[matches[0]].dataType, TimestampNTZType):
        # A table stored before its schema refused this (core.schema.resolver): the fix,
        # not Spark's EVENT_TIME_IS_NOT_ON_TIMESTAMP_TYPE.
        raise CoreError(
            f"The watermark of {shown(relation)} is on `{matches[0]}`, a TIMESTAMP_NTZ column, "
            "but event time must be a TIMESTAMP. Declare a computed column "
            f"`{matches[0]}_ltz AS CAST({matches[0]} AS TIMESTAMP)` and put the watermark on it "
            "(ALTER TABLE, or re-create the table).",
            details={"column": matches[0]},
        )
    return frame.withWatermark(matches[0], watermark_delay(str(watermark.get("delay")), relation))


def stream_frame(spark: SparkSession, relation: RelationPlan, session_id: Any = None) -> DataFrame:
    """The streaming DataFrame of a table relation (source, columns, watermark)."""
    if relation.format.lower() == RATE:
        frame: DataFrame = spark.readStream.format(RATE).options(**rate_options(relation)).load()
    else:
        source = locations.checked_read(spark, relation, shown(relation), session_id)
        if not relation.physical_schema:
            raise CoreError(f"Table {shown(relation)} has no physical columns to stream.")
        reader = spark.readStream.format(source.format).schema(relation.physical_schema)
        frame = reader.options(**source.options).load(source.path)
    if relation.columns:
        expressions = [registration.column_expression(c) for c in relation.columns]
        frame = sqlguard.guard(spark).select_expr(frame, expressions)
    return _with_watermark(frame, relation)


def register_stream_plan(
    spark: SparkSession,
    plan: Plan,
    properties: Mapping[str, Any],
    udf_packages: Any,
    session_id: Any = None,
) -> None:
    """``registration.register_plan`` for a streaming plan: streaming table relations over
    ``readStream``, the rest as for batch plans, in the plan's (dependency) order."""
    registration.apply_properties(spark, properties)
    sqlguard.install(spark, plan)
    registration.register_functions(spark, plan.functions, udf_packages)
    for relation in plan.relations:
        if relation.kind == "table" and relation.streaming:
            stream_frame(spark, relation, session_id).createOrReplaceTempView(relation.alias)
        elif relation.kind == "view":
            registration.register_view(spark, relation)
        else:
            registration.register_table(spark, relation, session_id)
