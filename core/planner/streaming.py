"""Streaming mode (FLIP-218 streaming, FLIP-164 watermarks; docs/streaming.md).

A statement is planned in the session's ``execution.runtime-mode`` (``PlanContext``), or in
the mode its own options name: a CTAS's ``WITH ('execution.runtime-mode' = 'streaming')``,
an INSERT's ``/*+ OPTIONS('execution.runtime-mode' = 'streaming') */``. ``finish`` takes a
finished batch plan and makes it a streaming one, or refuses it:

- a SELECT, CTAS or INSERT gets ``args.streaming`` (``{"trigger_ms": …}``) and each table it
  reads ``streaming: true`` — the worker reads it with ``readStream``, its declared watermark
  applied (``RelationPlan.watermark``, from ``declared_watermark``);
- what Structured Streaming cannot read (a DataFrame of a pipeline) or a watermark it cannot
  express is refused here, before anything runs;
- a streaming CTAS is never atomic: its table exists from the job's creation (FLIP-218);
- the target is a managed table (the worker commits each micro-batch as a version);
- EXPLAIN, statement sets and INSERT OVERWRITE are refused in streaming mode; statements
  that read no data (SET, SHOW, DDL) and ANALYZE or pipelines run as in batch mode;
- a pipeline's own statements (``PlanContext.pipeline_job``) are never streams: a pipeline
  is a batch program, run in one worker slot, and a stream it started would never end nor
  count against the stream slots (``in_pipeline``, ``STREAMING_UNSUPPORTED``).

In batch mode a table over the ``rate`` connector (a stream by nature) is refused.
Pure: no Django, no pyspark.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from core.errors import CoreError
from core.planner.errors import StreamingUnsupported, UnsupportedStatement
from core.planner.model import PlanContext
from core.planner.plan import Action, Plan, RelationPlan
from core.planner.sources import RATE_CONNECTOR
from core.schema import ResolvedSchema
from core.session_properties import CHECKPOINT_INTERVAL, RUNTIME_MODE

STREAMING = "streaming"
STREAM_FORMATS = frozenset({"parquet", "json", "csv", "orc", RATE_CONNECTOR})
STREAM_ACTIONS = frozenset({Action.QUERY, Action.CTAS, Action.INSERT})
_REFUSED_STREAMING = frozenset({Action.EXPLAIN, Action.STATEMENT_SET})
# Statements that read the rows of what they name (a view's definition does not).
READING_ACTIONS = STREAM_ACTIONS | _REFUSED_STREAMING | {Action.ANALYZE_TABLE, Action.PIPELINE}
_SET_STREAMING = f"SET '{RUNTIME_MODE}' = 'streaming'"
_SET_BATCH = f"SET '{RUNTIME_MODE}' = 'batch'"

# ``ts`` or ``ts - INTERVAL '5' SECOND`` / ``ts - INTERVAL '5 seconds'``: what
# ``withWatermark(column, delay)`` expresses. Other watermark expressions are refused.
_COLUMN = r"(?P<column>`(?:[^`]|``)+`|[A-Za-z_][A-Za-z0-9_]*)"
_UNITS = r"MILLISECOND|SECOND|MINUTE|HOUR|DAY"
_WATERMARK = re.compile(
    rf"\s*{_COLUMN}\s*(?:-\s*INTERVAL\s*(?:"
    rf"'\s*(?P<n>[0-9]{{1,9}})\s*'\s*(?P<unit>{_UNITS})S?"
    rf"|'\s*(?P<n2>[0-9]{{1,9}})\s*(?P<unit2>{_UNITS})S?\s*'"
    rf"|(?P<n3>[0-9]{{1,9}})\s*(?P<unit3>{_UNITS})S?"
    r")\s*)?",
    re.IGNORECASE,
)


def _unquote(name: str) -> str:
    return name[1:-1].replace("``", "`") if name.startswith("`") else name


def declared_watermark(schema: ResolvedSchema | None) -> dict[str, str] | None:
    """A table's declared watermark as ``withWatermark`` takes it: ``{"column", "delay"}``
    (``delay`` such as ``"5 seconds"``, ``"0 seconds"`` for ``WATERMARK FOR ts AS ts``), or
    ``{"column", "expression"}`` when the expression is not of that form (refused in
    streaming mode); None without a watermark."""
    if schema is None or not schema.watermarks:
        return None
    watermark = schema.watermarks[0]
    found = _WATERMARK.fullmatch(watermark.expression or "")
    if found is None or _unquote(found["column"]).lower() != watermark.column.lower():
        return {"column": watermark.column, "expression": watermark.expression}
    amount = found["n"] or found["n2"] or found["n3"]
    unit = (found["unit"] or found["unit2"] or found["unit3"] or "second").lower()
    count = int(amount) if amount else 0
    return {"column": watermark.column, "delay": f"{count} {unit}s"}


def _requested_mode(plan: Plan) -> tuple[Plan, str | None]:
    """The plan without its per-statement ``execution.runtime-mode``, and that mode."""
    args = dict(plan.args)
    mode = args.pop(RUNTIME_MODE, None)
    members = args.get("inserts")
    if isinstance(members, list) and any(RUNTIME_MODE in m for m in members):
        raise UnsupportedStatement(
            "A statement set runs in batch mode: drop the hint "
            f"'{RUNTIME_MODE}' from its INSERT statements (streaming statement sets are not "
            "supported)."
        )
    if mode is None:
        return plan, None
    return replace(plan, args=args), str(mode)


def finish(plan: Plan, context: PlanContext) -> Plan:
    """The plan in its runtime mode (see the module docstring)."""
    plan, requested = _requested_mode(plan)
    mode = requested or context.runtime_mode
    if mode != STREAMING or plan.action not in STREAM_ACTIONS | _REFUSED_STREAMING:
        if plan.action in READING_ACTIONS:
            _refuse_rate_in_batch(plan)
        return plan
    if context.pipeline_job is not None:
        raise in_pipeline(per_statement=requested is not None)
    if plan.action == Action.EXPLAIN:
        raise UnsupportedStatement(
            f"EXPLAIN of a stream is not supported; {_SET_BATCH} to explain the batch query."
        )
    if plan.action == Action.STATEMENT_SET:
        raise UnsupportedStatement(
            "Statement sets run in batch mode only; run each INSERT as its own stream, or "
            f"{_SET_BATCH}."
        )
    if plan.args.get("skip"):  # CREATE TABLE IF NOT EXISTS … AS of an existing table
        return plan
    args: dict[str, Any] = dict(plan.args)
    _check_target(plan, args)
    relations = tuple(_streaming_relation(r) for r in plan.relations)
    if not any(r.streaming for r in relations):
        raise CoreError(
            "A stream needs a table to read continuously (a file-backed table or the rate "
            f"connector); this statement reads none. {_SET_BATCH} to run it once.",
        )
    args[STREAMING] = {"trigger_ms": context.checkpoint_interval_ms}
    return replace(plan, relations=relations, args=args)


def in_pipeline(per_statement: bool = False) -> StreamingUnsupported:
    """The refusal of a stream among a pipeline's statements (the planner's, and the
    submission's for a plan that would get past it)."""
    fix = (
        f"drop the statement's '{RUNTIME_MODE}' = 'streaming' option"
        if per_statement
        else f'run t_env.execute_sql("{_SET_BATCH}") first in the pipeline'
    )
    return StreamingUnsupported(
        "A pipeline runs its statements once, in batch mode: it cannot start a stream (a "
        "stream never ends, and would hold the pipeline's worker slot outside the stream "
        f"slots). To run this statement once, {fix}; to stream it, send it as a statement "
        "of its own session.",
        details={"pipeline": True},
    )


DELTA_STREAM_REFUSED = (
    "A stream does not write managed Delta tables yet: each micro-batch would need its own "
    "Delta commit. Write the table in batch mode ({set_batch})."
)


def _writes_delta(plan: Plan, args: Mapping[str, Any]) -> bool:
    if plan.action == Action.CTAS:
        options: Mapping[str, str] = args.get("options") or {}
    else:
        options = (args.get("table") or {}).get("options") or {}
        if (args.get("table") or {}).get("format") == "delta":
            return True
    return any(str(v).strip().lower() == "delta" for v in options.values())


def _check_target(plan: Plan, args: dict[str, Any]) -> None:
    if _writes_delta(plan, args):
        raise UnsupportedStatement(DELTA_STREAM_REFUSED.format(set_batch=_SET_BATCH))
    if plan.action == Action.CTAS:
        options: Mapping[str, str] = args.get("options") or {}
        if "connector" in options or "path" in options:
            raise UnsupportedStatement(
                "A streaming CREATE TABLE … AS SELECT writes a managed table: drop LOCATION and "
                "'path' (external tables take batch writes only)."
            )
        if args.get("atomic") is True:
            raise CoreError(
                "A streaming CREATE TABLE … AS SELECT creates its table at once and commits "
                "each micro-batch (FLIP-218): 'table.ctas.atomic' = 'true' does not apply.",
                details={"key": "table.ctas.atomic"},
            )
        args["atomic"] = False
    elif plan.action == Action.INSERT:
        shown = ".".join(str(p) for p in args.get("identifier") or ())
        if args.get("overwrite"):
            raise UnsupportedStatement(
                f"INSERT OVERWRITE cannot stream into {shown}: a stream appends (or upserts) "
                f"each micro-batch. Use INSERT INTO, or {_SET_BATCH}."
            )
        if not args.get("managed"):
            raise UnsupportedStatement(
                f"Table {shown} is external: a stream writes managed tables only "
                "(each micro-batch is committed as a table version)."
            )


def _streaming_relation(relation: RelationPlan) -> RelationPlan:
    if relation.kind != "table":
        return relation  # a view: registered over the streaming tables it reads
    shown = ".".join(relation.identifier)
    if relation.format not in STREAM_FORMATS:
        raise UnsupportedStatement(
            f"Table {shown} cannot be read as a stream: streams read tables of files "
            f"({', '.join(sorted(STREAM_FORMATS - {RATE_CONNECTOR}))}) or the rate connector.",
            details={"identifier": list(relation.identifier)},
        )
    watermark = relation.watermark
    if watermark and "delay" not in watermark:
        raise CoreError(
            f"The watermark of {shown} ({watermark.get('expression')}) cannot be applied to a "
            f"stream: write it as WATERMARK FOR {watermark.get('column')} AS "
            f"{watermark.get('column')} - INTERVAL 'n' SECOND (or MINUTE, HOUR, DAY).",
            details={"identifier": list(relation.identifier)},
        )
    return replace(relation, streaming=True)


def _refuse_rate_in_batch(plan: Plan) -> None:
    for relation in plan.relations:
        if relation.kind == "table" and relation.format == RATE_CONNECTOR:
            shown = ".".join(relation.identifier)
            raise CoreError(
                f"Table {shown} reads the rate connector, a stream: {_SET_STREAMING} (and "
                f"'{CHECKPOINT_INTERVAL}' for the trigger) to read it.",
                details={"identifier": list(relation.identifier)},
            )
