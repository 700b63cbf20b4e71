"""The change data feed of a managed Delta table as a relation (``table_changes``, issue 31
item 5, ADR 0019): which tables have one, which versions a call reads, and the plan Delta's
``readChangeFeed`` reads on the table's directory.

Tessera's readers read the versions its database records, never the log's latest: the end
of a feed is at most the recorded current version, and a timestamp picks a recorded version
as ``TIMESTAMP AS OF`` does.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from core.errors import CoreError
from core.planner.errors import UnsupportedStatement
from core.planner.model import CatalogReader, ChangeRange, PlanContext, Relation, TimeTravel
from core.planner.plan import RelationPlan
from core.planner.sources import is_managed_delta
from core.planner.table_plans import staged_error

# The columns Delta adds to each changed row (``_change_type``: insert, update_preimage,
# update_postimage, delete).
CHANGE_COLUMNS = ("_change_type", "_commit_version", "_commit_timestamp")


def not_a_feed(relation: Relation) -> str:
    """What ``relation`` is when it has no change data feed Tessera reads; empty for a
    permanent managed Delta table."""
    if relation.kind == "view":
        return "a temporary view" if relation.temporary else "a view"
    if relation.temporary:
        return "a temporary table"
    if not relation.location:
        return "an external table"
    if not is_managed_delta(relation):
        return "a managed table not stored as Delta Lake"
    return ""


def feed_options(start: int, end: int) -> dict[str, str]:
    """Delta's reader options of the change data feed from version ``start`` to ``end``
    (both included)."""
    return {"readChangeFeed": "true", "startingVersion": str(start), "endingVersion": str(end)}


def feed_plan(table: RelationPlan, start: int, end: int) -> RelationPlan:
    """The plan reading ``table``'s change data feed from ``start`` to ``end``: Delta's own
    columns (the log's, and the change columns), not the catalog's."""
    return replace(table, time_travel=feed_options(start, end), physical_schema="", columns=())


def feed_range(
    reader: CatalogReader, relation: Relation, changes: ChangeRange, context: PlanContext
) -> tuple[int, int]:
    """The versions (first, last) of ``relation``'s change data feed that ``changes`` reads:
    of a managed Delta table only, between versions Tessera recorded (a timestamp picks
    them as TIMESTAMP AS OF does), never past the one it records as current."""
    ident = relation.identifier
    details: dict[str, Any] = {"identifier": list(ident.parts)}
    what = not_a_feed(relation)
    if what:
        raise CoreError(
            f"{changes.text} cannot read {ident.quoted()}: it is {what}, and only managed "
            "Delta tables have a change data feed Tessera reads.",
            details=details,
        )
    if context.runtime_mode == "streaming":
        raise UnsupportedStatement(
            f"{changes.text} is read in batch mode only: streaming reads of a table's changes "
            "are not built yet. SET 'execution.runtime-mode' = 'batch' first.",
            details=details,
        )
    if relation.status == "staged":
        raise staged_error(relation)
    current = relation.delta_version
    if current is None:
        raise CoreError(
            f"{changes.text}: table {ident.quoted()} has no changes yet (no job has written it).",
            details=details,
        )
    start = _version_of(reader, relation, changes, changes.start, first=True)
    end = (
        current
        if changes.end is None
        else _version_of(reader, relation, changes, changes.end, first=False)
    )
    for bound in (start, end):
        if bound > current:
            raise CoreError(
                f"{changes.text}: version {bound} of {ident.quoted()} is beyond its latest "
                f"version, {current}.",
                details={**details, "version": bound, "latest": current},
            )
    if start > end:
        raise CoreError(
            f"{changes.text}: the start (version {start}) is after the end (version {end}).",
            details={**details, "start": start, "end": end},
        )
    return start, end


def _version_of(
    reader: CatalogReader,
    relation: Relation,
    changes: ChangeRange,
    bound: int | datetime,
    *,
    first: bool,
) -> int:
    """A bound as a version: a number as written; a timestamp as the first version made at
    or after it (the start) or the version current at it (the end)."""
    if isinstance(bound, int):
        return bound
    ident = relation.identifier
    if first:
        found = reader.version_since(relation, bound)
        if found is None:
            raise CoreError(
                f"{changes.text}: no version of {ident.quoted()} was made at or after "
                f"{bound.isoformat()}.",
                details={"identifier": list(ident.parts), "timestamp": bound.isoformat()},
            )
        return found
    travel = TimeTravel("timestamp", f"'{bound.isoformat()}'", timestamp=bound)
    return reader.table_version(relation, travel).version
