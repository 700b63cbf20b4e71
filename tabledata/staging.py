"""Where write jobs (CTAS, INSERT, statement sets) put their data before the commit.

The contract is docs/statements.md, "Writes: CTAS, INSERT, statement sets (FLIP-218)";
the commit itself and the clean-up are ``tabledata.commit``.

- Managed tables: a job writes into a NEW warehouse directory (its staging location).
- External tables: a job writes into ``<path>/_tessera_staging_<job id>/``.

Each job records what it staged in ``Job.staging``, one entry per target table, keyed by
``staging_key(identifier)``::

    {"identifier": [c, d, t], "table": "`c`.`d`.`t`",
     "mode": "ctas|insert|overwrite|upsert|merge|update|delete",
     "managed": bool, "format": "parquet", "location": "<where Spark writes>",
     "final": "<where the data is once committed>", "path_existed": bool (external),
     "atomic": bool (ctas), "schema": <resolved schema JSON> (ctas, by the worker),
     "rows": int (optional, by the worker),
     upserts: "operation": "UPSERT", "base_location": <the table's location the worker merged
     with>, "metrics": {"inserted", "updated", "deleted"} (by the worker, when counted),
     managed Delta tables: "delta": true, and by the worker "delta_base": <the Delta version
     the files were written against>, "delta_created": <the version the worker's creation of
     the empty table made, if it made one>, "delta_actions": [<AddFile JSON>, …]}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from django.db import transaction

from catalog import storage
from catalog.models import Table
from catalog.services import check_options
from core import locations
from core import options as option_rules
from core.errors import CoreError, NotFound
from core.identifiers import quote_path
from core.jobstate import JobView
from core.planner import ROW_CHANGE_ACTIONS, Action, Plan
from core.planner.errors import ForbiddenSql, UnsupportedStatement
from jobs.models import Job

STAGING_PREFIX = "_tessera_staging_"
CTAS_ONLY_OPTIONS = frozenset({"table.ctas.atomic"})  # statement options, never stored
ROW_CHANGE_MODES = frozenset(str(action) for action in ROW_CHANGE_ACTIONS)

JobRef = Job | JobView

# --- what a job writes -----------------------------------------------------------------------


def job_id_of(job: JobRef) -> str:
    return str(job.pk if isinstance(job, Job) else job.id)


def staging_key(identifier: Sequence[str]) -> str:
    """The key of a target in ``Job.staging``: ``"c.d.t"``, lower-cased."""
    return ".".join(str(part).lower() for part in identifier)


def write_targets(plan: Plan | Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The targets of a write plan (or of its JSON), in plan order: ``{"identifier", "mode",
    "args"}`` with mode ``ctas``, ``insert``, ``overwrite`` or ``upsert``. Empty for other
    plans and for a skipped CTAS."""
    if plan is not None and not isinstance(plan, Plan):
        plan = Plan.from_dict(plan) if plan else None
    if plan is None or not plan.writes:
        return []
    action, args = plan.action, plan.args
    if action == Action.STATEMENT_SET:
        inserts = [dict(item) for item in args.get("inserts") or []]
    else:
        inserts = [dict(args)]
    targets = []
    for item in inserts:
        identifier = list(item.get("identifier") or plan.target or [])
        if len(identifier) != 3:
            raise CoreError("A write plan names its target table with three parts.")
        mode = (
            "ctas"
            if action == Action.CTAS
            else ("overwrite" if item.get("overwrite") else "insert")
        )
        if action in ROW_CHANGE_ACTIONS:
            mode = str(action)
        if mode == "insert" and item.get("write_mode") == "upsert":
            mode = "upsert"
        targets.append({"identifier": identifier, "mode": mode, "args": item})
    return targets


def _not_delta(options: dict[str, str], shown: str) -> dict[str, str]:
    """Nothing writes an external Delta table (the planner refuses first; this is the commit
    path's own check, as for the path rules)."""
    if str(options.get("connector", "")).lower() == option_rules.DELTA:
        raise UnsupportedStatement(
            f"{shown} cannot be written. {option_rules.DELTA_WRITES_REFUSED}"
        )
    return options


def ctas_options(args: Mapping[str, Any]) -> dict[str, str]:
    """A CTAS's table options as they will be stored (checked, without statement options;
    the path's own links followed — its tree is looked at where the table row is made)."""
    options = {k: v for k, v in (args.get("options") or {}).items() if k not in CTAS_ONLY_OPTIONS}
    return _not_delta(check_options(options, tree=False), "The new table")


def table_options(table: Table, *, user: Any = None) -> dict[str, str]:
    """A target table's options checked by today's rules (format, allow-list, path strictly
    below a storage root with its own links resolved now: the row may predate them), and
    its files its own (no other table's path overlaps it; the other table is named only to a
    ``user`` who may see it). Refusals of the storage boundary are FORBIDDEN_SQL, as on the
    worker. No directory tree is listed here: this runs when a job is created and inside the
    commit's transaction."""
    name = quote_path([table.database.catalog.name, table.database.name, table.name])
    try:
        checked = check_options(dict(table.options), tree=False)
        storage.check_table_apart(table, user=user)
    except (locations.LocationRefused, option_rules.OptionRefused) as exc:
        raise ForbiddenSql(
            f"Table {name} cannot be written. {exc.message}", details=exc.details
        ) from None
    except CoreError as exc:
        exc.message = f"Table {name} cannot be written. {exc.message}"
        exc.args = (exc.message,)
        raise
    return _not_delta(checked, f"Table {name}")


def path_holds_data(path: str | Path) -> bool:
    """Whether a directory holds data files (what Spark would read from it)."""
    path = Path(path)
    return path.is_dir() and any(not hidden_name(child.name) for child in path.iterdir())


def _new_entry(job: Job, identifier: list[str]) -> dict[str, Any]:
    """Where this job writes ``identifier``: a new warehouse directory, or the table's path's
    staging directory."""
    key = staging_key(identifier)
    targets = [t for t in write_targets(job.typed_plan) if staging_key(t["identifier"]) == key]
    if not targets:
        raise CoreError(f"Job {job.pk} does not write {quote_path(identifier)}.")
    target = targets[0]  # the planner refuses a statement set writing one table twice
    mode = target["mode"]
    if mode == "ctas":
        options = ctas_options(target["args"])
        managed = "connector" not in options
        fmt = options["format"] if managed else options["connector"]
        path = options.get("path", "")
    else:
        table = table_row(identifier, lock=False)
        managed = table.managed
        checked = table_options(table, user=job.user)
        fmt = checked.get("format" if managed else "connector") or "parquet"
        path = "" if managed else checked["path"]
    entry: dict[str, Any] = {
        "identifier": list(identifier),
        "table": quote_path(identifier),
        "mode": mode,
        "managed": managed,
        "format": fmt,
    }
    delta = managed and str(fmt).lower() == option_rules.DELTA
    if delta:
        entry["delta"] = True
    if mode in ROW_CHANGE_MODES:
        if not delta:  # the planner refuses first; a hand-made plan meets this
            raise UnsupportedStatement(
                f"Table {quote_path(identifier)} is not a managed Delta table: MERGE, UPDATE, "
                "DELETE and ALTER TABLE change managed Delta tables only."
            )
        entry["operation"] = "ALTER TABLE" if mode == str(Action.ALTER_TABLE) else mode.upper()
    if mode == "upsert":
        if delta:
            raise UnsupportedStatement(
                f"Table {quote_path(identifier)} is a Delta table: its INSERT upserts by key "
                "are not built yet ('write.mode' = 'upsert'); write it with INSERT INTO."
            )
        if not managed:
            raise CoreError(
                f"Table {quote_path(identifier)} is external: upserts write managed tables only."
            )
        entry["operation"] = "UPSERT"
    if delta and mode != "ctas":
        # One directory for every version: Delta's log numbers them; the job's files are
        # committed into it only at FINISHED (tabledata.delta_commit).
        entry.update(location=table.location, final=table.location)
    elif managed:
        location = str(storage.warehouse_location(*identifier))
        entry.update(location=location, final=location)
    else:
        entry.update(
            location=str(Path(path) / f"{STAGING_PREFIX}{job.pk}"),
            final=path,
            path_existed=Path(path).exists(),
        )
    return entry


def staging_location(job: JobRef, identifier: Sequence[str]) -> str:
    """The directory where ``job`` writes ``identifier`` (Spark writes there, nowhere else).

    The first call decides it and records it in ``Job.staging`` (``prepare_write`` calls it for
    every target when the job is created); later calls return the same directory.
    """
    key = staging_key(identifier)
    with transaction.atomic():
        row = Job.objects.select_for_update().get(pk=job_id_of(job))
        staging = dict(row.staging or {})
        if key not in staging:
            staging[key] = _new_entry(row, list(identifier))
            Job.objects.filter(pk=row.pk).update(staging=staging)
    if isinstance(job, Job):
        job.staging = staging
    return str(staging[key]["location"])


def prepare(job: JobRef) -> dict[str, Any]:
    """Decide and record the staging location of every target of the job's plan."""
    row = Job.objects.get(pk=job_id_of(job))
    for target in write_targets(row.typed_plan):
        staging_location(row, target["identifier"])
    return dict(Job.objects.values_list("staging", flat=True).get(pk=row.pk) or {})


def entry(job: JobRef, identifier: Sequence[str]) -> dict[str, Any]:
    """The staging entry of one target (as stored now); NotFound if none was recorded."""
    staging = Job.objects.values_list("staging", flat=True).get(pk=job_id_of(job)) or {}
    found = staging.get(staging_key(identifier))
    if found is None:
        raise NotFound(f"Job {job_id_of(job)} staged nothing for {quote_path(identifier)}.")
    return dict(found)


def record(job: JobRef, identifier: Sequence[str], **fields: Any) -> dict[str, Any]:
    """Add fields to a target's staging entry (the worker: ``schema``, ``rows``)."""
    key = staging_key(identifier)
    with transaction.atomic():
        row = Job.objects.select_for_update().get(pk=job_id_of(job))
        staging = dict(row.staging or {})
        if key not in staging:
            raise NotFound(f"Job {row.pk} staged nothing for {quote_path(identifier)}.")
        staging[key] = {**staging[key], **fields}
        Job.objects.filter(pk=row.pk).update(staging=staging)
    if isinstance(job, Job):
        job.staging = staging
    return dict(staging[key])


def table_row(identifier: Sequence[str], *, lock: bool) -> Table:
    c, d, n = identifier
    qs = Table.objects.filter(
        database__catalog__name_key=c.lower(),
        database__name_key=d.lower(),
        name_key=n.lower(),
        kind=Table.KIND_TABLE,
    )
    if lock:
        qs = qs.select_for_update(of=("self",))
    table = qs.first()
    if table is None:
        raise NotFound(
            f"Table {quote_path(identifier)} no longer exists; nothing was written to it.",
            details={"identifier": list(identifier)},
        )
    return table


def hidden_name(name: str) -> bool:
    """Names Spark skips when reading a directory (its own rule), e.g. ``_SUCCESS``,
    ``.part-….crc``, ``_temporary``, our staging directories."""
    return (
        (name.startswith("_") and "=" not in name)
        or name.startswith(".")
        or name.endswith("._COPYING_")
    )
