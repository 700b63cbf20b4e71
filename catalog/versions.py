"""Table versions: every commit to a managed table is a numbered version that stays readable
for ``TESSERA_VERSION_RETENTION`` after a newer one replaced it (docs/writes.md, "Table
versions").

A version is a warehouse directory that stays: a managed table's commit writes a new
directory and moves ``Table.location`` to it (``tabledata.commit``); ``record`` numbers it in the
same transaction, with the table row locked, and marks the version it replaces. The
maintenance (``expire``, run from workers' heartbeats) removes the directories of versions
replaced longer ago than the retention — never the current one, never a directory a table or
another readable version still points at. Dropping a table removes every version's directory
(``locations_of``).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Max, Min, QuerySet
from django.utils import timezone

from catalog import storage
from catalog.models import Table, TableVersion
from core import durations
from core.errors import CoreError
from core.identifiers import quote_path

log = logging.getLogger(__name__)

OP_CREATE = "CREATE TABLE"
OP_CTAS = "CREATE TABLE AS SELECT"
OP_INSERT = "INSERT"
OP_OVERWRITE = "OVERWRITE"
OP_UPSERT = "UPSERT"
# A staging item's ``mode`` → the operation of the version it commits.
OPERATION_OF_MODE = {"ctas": OP_CTAS, "insert": OP_INSERT, "overwrite": OP_OVERWRITE}
EXPIRE_BATCH = 100


def retention() -> timedelta:
    return timedelta(seconds=int(settings.TESSERA_VERSION_RETENTION_SECONDS))


def retention_hours() -> int:
    """The retention in whole hours, rounded up: the least a VACUUM may retain."""
    return max(1, math.ceil(int(settings.TESSERA_VERSION_RETENTION_SECONDS) / 3600))


def operation_of(item: dict[str, Any] | Any) -> str:
    """The operation of a commit, from its staging item: ``operation`` when the writer gave
    one (upserts), else from its ``mode``."""
    given = item.get("operation")
    if isinstance(given, str) and given:
        return given[:32]
    return OPERATION_OF_MODE.get(str(item.get("mode")), str(item.get("mode") or "WRITE"))[:32]


def _name(table: Table) -> str:
    return quote_path([table.database.catalog.name, table.database.name, table.name])


def record(
    table: Table,
    *,
    location: str,
    operation: str,
    user_id: Any = None,
    job_id: Any = None,
    rows: int | None = None,
    metrics: dict[str, Any] | None = None,
    now: datetime | None = None,
    number: int | None = None,
) -> TableVersion:
    """Number ``location`` as the table's next version (0 for the first) and mark the
    version it replaces. Run it in the transaction that points ``table.location`` at
    ``location``, with the table row locked (one commit per table at a time)."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("versions.record must run inside the commit's transaction.")
    current = now or timezone.now()
    last = TableVersion.objects.filter(table=table).aggregate(top=Max("version"))["top"]
    TableVersion.objects.filter(table=table, replaced_at__isnull=True).update(replaced_at=current)
    return TableVersion.objects.create(
        table=table,
        version=number if number is not None else (0 if last is None else last + 1),
        location=location,
        operation=operation,
        user_id=user_id,
        job_id=job_id,
        created_at=current,
        rows=rows,
        metrics=dict(metrics or {}),
    )


def is_managed_delta(table: Table) -> bool:
    """A managed table stored as Delta Lake (its versions are Delta's, ADR 0019)."""
    options = {str(k).lower(): str(v).strip().lower() for k, v in (table.options or {}).items()}
    return bool(table.location) and "path" not in options and options.get("format") == "delta"


def current_delta_version(table: Table) -> int | None:
    """The Delta version a managed Delta table's readers read: the one its last FINISHED
    job recorded (None: not a managed Delta table, or never written)."""
    if table.kind != Table.KIND_TABLE or not is_managed_delta(table):
        return None
    found = (
        TableVersion.objects.filter(table=table, replaced_at__isnull=True)
        .values_list("version", flat=True)
        .first()
    )
    return int(found) if found is not None else None


def ensure_initial(table: Table, *, now: datetime | None = None) -> None:
    """A managed table whose current directory no version records yet (made before
    versions existed, by a process that had not migrated) gets version 0 there, so that
    its directory is kept and later expired like any other."""
    if table.location and not TableVersion.objects.filter(table=table).exists():
        record(table, location=table.location, operation=OP_CREATE, now=now)


def history(table: Table) -> QuerySet[TableVersion]:
    """The table's versions, newest first."""
    return TableVersion.objects.filter(table=table).select_related("user").order_by("-version")


def _range_text(table: Table) -> str:
    readable = TableVersion.objects.filter(table=table, expired_at__isnull=True)
    bounds = readable.aggregate(low=Min("version"), high=Max("version"))
    if bounds["low"] is None:
        return "it has no readable versions"
    if bounds["low"] == bounds["high"]:
        return f"its only readable version is {bounds['low']}"
    return f"its readable versions are {bounds['low']} to {bounds['high']}"


def _unreadable(table: Table, found: TableVersion, what: str) -> CoreError:
    return CoreError(
        f"{what} of table {_name(table)} (version {found.version}) has expired: its data was "
        f"removed {_retention_text()} after a newer version replaced it; {_range_text(table)}.",
        details={"version": found.version, "expired_at": found.expired_at.isoformat()}
        if found.expired_at
        else {"version": found.version},
    )


def _retention_text() -> str:
    return durations.describe_seconds(int(retention().total_seconds()))


def at_version(table: Table, number: int) -> TableVersion:
    """The readable version ``number`` of the table; CoreError naming the readable range
    when there is no such version or its data has expired."""
    found = TableVersion.objects.filter(table=table, version=number).first()
    if found is None:
        raise CoreError(
            f"Table {_name(table)} has no version {number}; {_range_text(table)}.",
            details={"version": number},
        )
    if found.expired_at is not None:
        raise _unreadable(table, found, f"Version {number}")
    return found


def at_time(table: Table, moment: datetime) -> TableVersion:
    """The version current at ``moment``: the last one created at or before it."""
    found = (
        TableVersion.objects.filter(table=table, created_at__lte=moment)
        .order_by("-version")
        .first()
    )
    if found is None:
        first = TableVersion.objects.filter(table=table).order_by("version").first()
        since = f" (its first version was made at {first.created_at.isoformat()})" if first else ""
        raise CoreError(
            f"Table {_name(table)} has no version at {moment.isoformat()}: that is before it "
            f"was created{since}.",
            details={"timestamp": moment.isoformat()},
        )
    if found.expired_at is not None:
        raise _unreadable(table, found, f"The version at {moment.isoformat()}")
    return found


def first_since(table: Table, moment: datetime) -> int | None:
    """The number of the first version made at or after ``moment`` (None: none was)."""
    found = (
        TableVersion.objects.filter(table=table, created_at__gte=moment)
        .order_by("version")
        .values_list("version", flat=True)
        .first()
    )
    return int(found) if found is not None else None


# --- removing data -----------------------------------------------------------------------------


def locations_of(tables: QuerySet[Table] | Iterable[Table]) -> list[str]:
    """Every directory of these tables that holds data now: each managed table's current
    location and its versions' directories not yet removed (for DROP)."""
    ids = [t.pk for t in tables] if not isinstance(tables, QuerySet) else tables.values("pk")
    found = set(
        Table.objects.filter(pk__in=ids).exclude(location="").values_list("location", flat=True)
    )
    found.update(
        TableVersion.objects.filter(table__in=ids, expired_at__isnull=True).values_list(
            "location", flat=True
        )
    )
    return sorted(found)


def in_use(location: str, *, besides: Any = None) -> bool:
    """Whether a table points at ``location`` or a readable version (other than
    ``besides``) holds it."""
    if Table.objects.filter(location=location).exists():
        return True
    others = TableVersion.objects.filter(location=location, expired_at__isnull=True)
    if besides is not None:
        others = others.exclude(pk=besides)
    return others.exists()


def expire(now: datetime | None = None) -> list[str]:
    """Remove the directories of versions replaced more than the retention ago; returns
    them. Each version is taken by one conditional UPDATE (two workers never both take it);
    its directory is deleted after that commits, unless a table or another readable version
    still points at it."""
    current = now or timezone.now()
    cutoff = current - retention()
    due = TableVersion.objects.filter(
        replaced_at__isnull=False, replaced_at__lt=cutoff, expired_at__isnull=True
    ).values_list("pk", "location")[:EXPIRE_BATCH]
    removed: list[str] = []
    for pk, location in list(due):
        with transaction.atomic():
            taken = TableVersion.objects.filter(pk=pk, expired_at__isnull=True).update(
                expired_at=current
            )
            if taken != 1 or in_use(location, besides=pk):
                continue
            transaction.on_commit(partial(_delete, location))
        removed.append(location)
    if removed:
        log.info("expired %d table versions", len(removed))
    return removed


def _delete(location: str) -> None:
    try:
        storage.delete_location(location)
    except Exception:  # the row says expired; a directory left behind is only litter
        log.exception("could not delete the expired table version %s", location)
