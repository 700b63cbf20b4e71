"""FLIP-218's steps of a write job's transitions (job kinds ``ctas``, ``insert`` and
``statement_set``): CTAS stage tables, the commit and the clean-up. ``jobs.steps`` lists them
among every transition's steps; they run in whichever process makes the transition (web,
workers, the reaper).

- ``prepare_write`` (CREATED, inside the transition's transaction: an error aborts it and
  reaches the caller): decides every target's staging location (``Job.staging``); a
  non-atomic CTAS creates its stage table (status ``staged``, ``staged_by_job``, no schema
  yet) → event ``stage_table_created``. A taken name raises AlreadyExists, so the job is not
  created: ``sessions.statements.start_job`` records it as FAILED ALREADY_EXISTS (or, with
  IF NOT EXISTS, finishes it with ``skipped_exists``).
- ``commit_write`` (FINISHED, inside the transaction: a commit that fails leaves no
  FINISHED job): CTAS: the table gets the schema the worker stored in its staging entry and
  becomes ``active`` (atomic mode: the table is created here; a taken name fails the
  transition); then ``tabledata.commit.commit`` for every target → ``data_committed`` each.
- ``clean_up_write`` (FAILED / CANCELED, after the transaction): a CTAS drops the stage
  table it created → ``stage_table_dropped``; ``tabledata.commit.clean_up`` deletes what the
  job staged → ``data_cleaned {"deleted"}``. A streaming CTAS (``tabledata.stream_commit``)
  keeps its table once a micro-batch committed into it, and drops it otherwise; a stream's
  batch staging and checkpoint are removed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catalog import access as catalog_access
from catalog import selectors, storage
from catalog import services as catalog_services
from catalog.models import Table
from core.errors import CoreError, NotFound
from core.identifiers import quote_path
from core.jobstate import JobView, Record
from core.planner import Action
from core.schema import ResolvedSchema, Schema
from jobs.models import Job
from tabledata import commit, staging, stream_commit

WRITE_KINDS = ("ctas", "insert", "statement_set")
ATOMIC_PROPERTY = "table.ctas.atomic"


def _is_write(job: JobView) -> bool:
    return job.kind in WRITE_KINDS and job.plan is not None and job.plan.writes


def _is_ctas(job: JobView) -> bool:
    return job.plan is not None and job.plan.action == Action.CTAS


def _args(job: JobView) -> Mapping[str, Any]:
    return job.plan.args if job.plan is not None else {}


def _identifier(job: JobView) -> list[str]:
    return list(_args(job).get("identifier") or job.target or [])


def _table_name(table: Table) -> str:
    return quote_path([table.database.catalog.name, table.database.name, table.name])


def is_atomic(row: Job, args: Mapping[str, Any]) -> bool:
    """``args.atomic`` (the statement's option), else the session's ``table.ctas.atomic``."""
    if isinstance(args.get("atomic"), bool):
        return bool(args["atomic"])
    properties = row.session.properties if row.session is not None else {}
    return str((properties or {}).get(ATOMIC_PROPERTY, "false")).strip().lower() == "true"


def _check_external_path(args: Mapping[str, Any], user: Any) -> None:
    """Before anything is staged: a CTAS path must be empty (or new), hold no link leading
    out, and overlap no other table's path — atomic mode creates its table only at the
    commit, so this is the check that keeps its staging out of another table's files."""
    options = staging.ctas_options(args)
    path = options.get("path")
    if path is None:
        return
    if staging.path_holds_data(path):
        raise CoreError(
            f"The path '{path}' already holds files; CREATE TABLE … AS SELECT "
            "writes only into an empty or new directory.",
            details={"field": "options.path"},
        )
    storage.normalize_external_path(path)  # its tree: empty of data, so cheap
    storage.check_no_overlap(path, path, user=user)  # names only what the user may see


def _create_table(
    row: Job,
    args: Mapping[str, Any],
    entry: Mapping[str, Any],
    schema: Schema | None,
    *,
    tree: bool = True,
) -> Table:
    c, d, n = entry["identifier"]
    return catalog_services.ctas_table_create(
        user=row.user,
        database=selectors.get_database(c, d, access=catalog_access.access_for(row.user)),
        name=n,
        options=staging.ctas_options(args),
        partition_by=list(args.get("partition_by") or []),
        comment=str(args.get("comment") or ""),
        location=str(entry["final"]) if entry["managed"] else "",
        staged_by_job=None if schema is not None else row.pk,
        schema=schema,
        tree=tree,
    )


def worker_schema(entry: Mapping[str, Any]) -> Schema:
    """The CTAS table's schema from what the worker stored (``entry["schema"]``)."""
    if not entry.get("schema"):
        raise CoreError(
            f"The job finished without the schema of {entry.get('table')}: nothing was committed.",
            details={"table": entry.get("table")},
        )
    return catalog_services.ctas_schema(ResolvedSchema.from_dict(entry["schema"]))


def prepare_write(job: JobView, record: Record) -> None:
    """CREATED: the write's staging, and a non-atomic CTAS's stage table."""
    if not _is_write(job):
        return
    row = Job.objects.select_related("session", "user").get(pk=job.id)
    args = _args(job)
    if _is_ctas(job):
        _check_external_path(args, row.user)
    staging.prepare(row)
    if not _is_ctas(job):
        return
    # A streaming CTAS is never atomic: its table is there from the start (FLIP-218).
    atomic = is_atomic(row, args) and not stream_commit.is_streaming(job.plan)
    entry = staging.record(row, _identifier(job), atomic=atomic)
    if not atomic:
        table = _create_table(row, args, entry, schema=None)
        record("stage_table_created", {"table": _table_name(table)})


def commit_write(job: JobView, record: Record) -> None:
    """FINISHED: a CTAS's table gets its schema (atomic: is created), then every target's
    commit."""
    if not _is_write(job):
        return
    row = Job.objects.select_related("session", "user").get(pk=job.id)
    if _is_ctas(job):
        args = _args(job)
        entry = staging.entry(row, _identifier(job))
        schema = worker_schema(entry)
        if entry.get("atomic"):
            # In the commit's transaction: no tree listed (the worker checked the
            # staging before it; the path held no data at CREATED).
            _create_table(row, args, entry, schema=schema, tree=False)
        else:
            staged = (
                Table.objects.select_for_update(of=("self",))
                .filter(staged_by_job=row.pk, status=Table.STATUS_STAGED)
                .first()
            )
            if staged is None:
                raise NotFound(
                    f"The stage table {entry['table']} was dropped while the job ran; "
                    "nothing was committed.",
                    details={"identifier": entry["identifier"]},
                )
            catalog_services.ctas_table_activate(table=staged, schema=schema)
    for detail in commit.commit(row):
        record("data_committed", detail)


def clean_up_write(job: JobView, record: Record) -> None:
    """FAILED / CANCELED: drop the job's stage table, delete what it staged."""
    if not _is_write(job):
        return
    streaming = stream_commit.is_streaming(job.plan)
    if _is_ctas(job):
        # A streaming CTAS keeps its table once a batch committed (FLIP-218's streaming
        # semantics); one that committed none is dropped like a stage table.
        dropped = (
            stream_commit.drop_unused_table(job.id)
            if streaming
            else catalog_services.ctas_table_drop(job_id=job.id)
        )
        if dropped is not None:
            record("stage_table_dropped", {"table": _table_name(dropped)})
    staged = Job.objects.filter(pk=job.id).values_list("staging", flat=True).first()
    if staged:
        record("data_cleaned", {"deleted": commit.clean_up(job)})
    if streaming:
        stream_commit.clean_stream(job.id)
