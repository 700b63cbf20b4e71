"""``ANALYZE TABLE … COMPUTE STATISTICS`` on a worker (plan action ``analyze_table``,
``core/planner/analyze.py``; docs/statements.md "ANALYZE TABLE").

The table is read through the relation the planner registered (its ``__tessera_r1``
alias); the figures come from one DataFrame aggregation, so one scan of the data: the row
count and, per column, what ``args.columns[].stats`` asks for. No SQL text from the user
reaches Spark. ``noscan`` counts the table's files and bytes only, without Spark.

The figures are staged on the job (``Job.staging["statistics"]``) and stored on the table by
``tabledata.statistics_steps.store_statistics`` inside the job's FINISHED transition: a job
that fails, is canceled or loses its table stores nothing. The job's result lists them too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from django.utils import timezone

from catalog import selectors as catalog_selectors
from catalog.access import SYSTEM
from core.identifiers import quote_part
from core.planner import Plan
from jobs.models import Job
from results.store import write_result
from tabledata import commit
from tabledata.statistics import data_size
from tabledata.statistics_steps import STAGING_KEY

COLUMN_RESULT = (
    ("column", "STRING"),
    ("data_type", "STRING"),
    ("null_count", "BIGINT"),
    ("distinct_count", "BIGINT"),
    ("min", "STRING"),
    ("max", "STRING"),
    ("avg", "DOUBLE"),
    ("avg_length", "DOUBLE"),
    ("max_length", "BIGINT"),
)
TABLE_RESULT = (("row_count", "BIGINT"), ("files", "BIGINT"), ("size_bytes", "BIGINT"))


def _now() -> str:
    return timezone.now().isoformat().replace("+00:00", "Z")


def _aggregations(frame: Any, columns: Sequence[Mapping[str, Any]]) -> list[Any]:
    """One aggregate expression per figure: ``rows``, then ``n{i}``, ``d{i}``, ``lo{i}``,
    ``hi{i}``, ``avg{i}``, ``al{i}``, ``ml{i}`` as each column's kind asks."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as st

    fields = {field.name: field.dataType for field in frame.schema.fields}
    expressions = [F.count(F.lit(1)).alias("rows")]
    for index, column in enumerate(columns):
        name = str(column["name"])
        value = F.col(quote_part(name))
        expressions.append(F.count(F.when(value.isNull(), 1)).alias(f"n{index}"))
        kind = column.get("stats")
        if kind == "nulls":
            continue
        expressions.append(F.approx_count_distinct(value).alias(f"d{index}"))
        if kind == "length":
            length = F.length(value)
            expressions.append(F.avg(length).cast("double").alias(f"al{index}"))
            expressions.append(F.max(length).cast("long").alias(f"ml{index}"))
            continue
        expressions.append(F.min(value).cast("string").alias(f"lo{index}"))
        expressions.append(F.max(value).cast("string").alias(f"hi{index}"))
        if isinstance(fields.get(name), st.NumericType):
            expressions.append(F.avg(value).cast("double").alias(f"avg{index}"))
    return expressions


def _finite(value: Any) -> float | None:
    """A JSON number: NaN and infinities (an average over NaN) are stored as null."""
    if value is None or not math.isfinite(float(value)):
        return None
    return float(value)


def compute(spark: Any, plan: Plan) -> dict[str, Any]:
    """The row count and the column figures of the plan's table, in one scan."""
    columns: list[Mapping[str, Any]] = list(plan.args.get("columns") or [])
    frame = spark.table(quote_part(str(plan.args["alias"])))
    row = frame.agg(*_aggregations(frame, columns)).collect()[0].asDict()
    figures: list[dict[str, Any]] = []
    for index, column in enumerate(columns):
        distinct = row.get(f"d{index}")
        max_length = row.get(f"ml{index}")
        figures.append(
            {
                "name": column["name"],
                "data_type": column.get("data_type"),
                "null_count": int(row[f"n{index}"]),
                "distinct_count": None if distinct is None else int(distinct),
                "min": row.get(f"lo{index}"),
                "max": row.get(f"hi{index}"),
                "avg": _finite(row.get(f"avg{index}")),
                "avg_length": _finite(row.get(f"al{index}")),
                "max_length": None if max_length is None else int(max_length),
            }
        )
    return {"row_count": int(row["rows"]), "columns": figures, "computed_at": _now()}


def _result(job_id: Any, mode: str, figures: Mapping[str, Any]) -> dict[str, Any]:
    import pyarrow as pa  # type: ignore[import-untyped]

    if mode == "columns":
        names = [name for name, _ in COLUMN_RESULT]
        keys = ["name", *names[1:]]
        rows = [[entry.get(key) for key in keys] for entry in figures["columns"]]
        shape: tuple[tuple[str, str], ...] = COLUMN_RESULT
    else:
        names = [name for name, _ in TABLE_RESULT]
        rows = [[figures.get(name) for name in names]]
        shape = TABLE_RESULT
    types = {"STRING": pa.string(), "BIGINT": pa.int64(), "DOUBLE": pa.float64()}
    table = pa.table(
        [
            pa.array([row[i] for row in rows], type=types[data_type])
            for i, (_, data_type) in enumerate(shape)
        ],
        names=names,
    )
    described = [{"name": name, "data_type": data_type} for name, data_type in shape]
    result: dict[str, Any] = write_result(job_id, table, columns=described, truncated=False)
    return result


def execute(spark: Any, plan: Plan, job_id: Any) -> dict[str, Any]:
    """Compute what the plan asks, stage it on the job and store the job's result."""
    mode = str(plan.args["mode"])
    catalog, database, name = (str(part) for part in plan.args["identifier"])
    # Found for the product (SYSTEM); the user's right is decided next, afresh.
    table = catalog_selectors.get_table(catalog, database, name, access=SYSTEM)
    user = Job.objects.select_related("user").get(pk=job_id).user
    commit.require_modify(user, table)  # MODIFY, loaded afresh; checked again when stored
    figures: dict[str, Any] = compute(spark, plan) if mode != "noscan" else {}
    # The files as they are once the scan is done (a write committed meanwhile is counted).
    files, size = data_size(table)
    figures.update(files=files, size_bytes=size, size_computed_at=_now())
    Job.objects.filter(pk=job_id).update(staging={STAGING_KEY: {"mode": mode, "figures": figures}})
    return _result(job_id, mode, figures)
