"""The commit of one micro-batch of a streaming write, exactly once (docs/streaming.md).

A streaming CTAS or INSERT (``args.streaming`` in its plan) writes into a managed table
micro-batch by micro-batch. The worker writes each batch either through Spark's file sink
into the job's sink directory ``<warehouse>/.tessera-streams/<job>/sink``, whose log names
the batch's files (an append, ``engine.stream_files``), or into the batch's own
staging directory ``<warehouse>/.tessera-streams/<job>/batch-<n>`` (an upsert,
``engine.stream_sink``); then ``commit_batch``, in ONE transaction with the job's
row and the table's row locked:

- if a version of the table already records this (job, batch) — a batch Spark replays after
  a restart, because its checkpoint had not recorded the batch as done — nothing happens;
- else the job's user must still hold MODIFY on the table and every read of its plan
  (``catalog.access.recheck_reads``), and the table gets a new
  version as an INSERT's commit makes one (``tabledata.commit``): a new warehouse directory with
  hard links of the current version's files and the batch's files (an upsert's batch holds
  the whole merged table instead), ``Table.location`` swapped to it, the version recorded
  with operation ``STREAMING UPDATE`` and metrics ``{"batch_id", "job"}``, the event
  ``batch_committed`` and the job's ``progress.stream``.

A batch's staging directory is removed after the commit or the skip (the sink directory
stays while the job lives: its log is Spark's record of the batches). A streaming CTAS's table is
made readable (active, empty, version 0) when the stream starts (``activate_table``); it
keeps its job's mark (``staged_by_job``) until its first batch commits, so that a stream
that ends without committing anything drops it, as a failed CTAS drops its stage table
(``drop_unused_table``, from ``tabledata.write_steps.clean_up_write``). Checkpoints live in
``<data dir>/checkpoints/<job>``; both go when the job ends (``clean_stream``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import BigIntegerField, Max
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

from catalog import access as catalog_access
from catalog import services as catalog_services
from catalog import storage, versions
from catalog.models import Table, TableVersion
from core import jobstate
from core.errors import Conflict, CoreError, PermissionDenied
from core.identifiers import quote_path
from core.planner import Plan
from core.schema import ResolvedSchema
from jobs import access_log, lifecycle, notify
from jobs.identity import current_identity
from jobs.models import Job
from tabledata import commit, staging
from tabledata.commit_files import is_strictly_under, link_tree, remove, require_under, warehouse
from tabledata.manifest import link_files

log = logging.getLogger(__name__)

OPERATION = "STREAMING UPDATE"
STREAMS_DIR = ".tessera-streams"  # under the warehouse: the batches' staging directories
CHECKPOINTS_DIR = "checkpoints"  # under the data dir


class StreamStopped(CoreError):
    """The job is no longer RUNNING (canceled, failed, reaped): the batch is not committed."""

    code = "CANCELED"


def is_streaming(plan: Plan | None) -> bool:
    return plan is not None and isinstance(plan.args.get("streaming"), Mapping)


def checkpoint_dir(job_id: Any) -> Path:
    """Where Spark keeps the job's checkpoint (offsets, commits, state): per job, kept
    while the job lives, so that the same job run again continues from it."""
    return Path(settings.DATA_DIR) / CHECKPOINTS_DIR / str(job_id)


def streams_dir(job_id: Any) -> Path:
    return warehouse() / STREAMS_DIR / str(job_id)


def sink_dir(job_id: Any) -> Path:
    """Where Spark's file sink writes an appending stream's batches (and logs them):
    kept while the job lives, like its checkpoint (``engine.stream_files``)."""
    return streams_dir(job_id) / "sink"


def batch_staging(job_id: Any, batch_id: int) -> Path:
    """The directory one batch is written into before its commit."""
    return streams_dir(job_id) / f"batch-{int(batch_id)}"


@dataclass(frozen=True)
class Committed:
    """What ``commit_batch`` did: ``committed`` False when the batch had been committed
    before (a replay); the table's ``version`` then is the one that recorded it."""

    committed: bool
    version: int | None


def _name(table: Table) -> str:
    return quote_path([table.database.catalog.name, table.database.name, table.name])


def _own(job: Job, table: Table) -> bool:
    """The table this job made (a streaming CTAS), or one its user created."""
    return str(table.staged_by_job or "") == str(job.pk) or (
        table.created_by_id is not None and table.created_by_id == job.user_id
    )


def check_rights(job: Job, table: Table, ctas: bool) -> None:
    """Every batch, with what the user (and each view's owner) holds loaded afresh: a CTAS
    writes only its own table, an INSERT needs MODIFY on the table; and every read the plan
    recorded (``Job.access``) is decided again (``catalog.access.recheck_reads``), so that a
    revoke of SELECT on a source — or on a table a view reads for its owner — stops the
    stream at its next batch: no version is made after the revoke."""
    if ctas:
        if not _own(job, table):
            raise PermissionDenied(
                f"Job {job.pk} did not create table {_name(table)}: a streaming CREATE TABLE "
                "… AS SELECT writes only the table it creates. Nothing was committed.",
                details={"identifier": [table.database.catalog.name, table.database.name]},
            )
    else:
        commit.require_modify(job.user, table)
    catalog_access.recheck_reads(job.user, job.access or [])


def _locked_job(job_id: Any) -> Job:
    """The job's row, locked; it must be RUNNING, and on a worker by this worker: a stream
    requeued while this worker was taken for lost (paused, cut off) and claimed by another
    one since commits nothing more here (``jobs.maintenance``, docs/streaming.md)."""
    job = Job.objects.select_for_update(of=("self",)).select_related("user").get(pk=job_id)
    if job.status != jobstate.RUNNING:
        raise StreamStopped(f"Job {job_id} is {job.status}; the batch was not committed.")
    here = current_identity()
    if here is not None and job.worker and job.worker != here:
        raise StreamStopped(
            f"Job {job_id} runs on another worker now (this one was taken for lost); the "
            "batch was not committed here."
        )
    return job


def check_held(job_id: Any) -> None:
    """Before a stream starts: the job is RUNNING and held by this worker (a runner whose
    job was requeued and claimed by another worker meanwhile starts no second query on
    the same checkpoint)."""
    with transaction.atomic():
        _locked_job(job_id)


def check_writable(job_id: Any, identifier: Sequence[str], ctas: bool) -> None:
    """Before the stream starts: the target exists and the job's user may write it."""
    with transaction.atomic():
        job = _locked_job(job_id)
        check_rights(job, staging.table_row(identifier, lock=False), ctas)


def activate_table(job_id: Any, identifier: Sequence[str]) -> None:
    """A streaming CTAS's stage table becomes the table, readable and empty, with the
    schema the worker stored in the job's staging entry, before the first batch; it keeps
    ``staged_by_job`` until a batch commits. Idempotent: a job run again finds it active."""
    with transaction.atomic():
        job = _locked_job(job_id)
        table = staging.table_row(identifier, lock=True)
        entry = staging.entry(job, identifier)
        if table.status == Table.STATUS_ACTIVE:
            if not _own(job, table):
                check_rights(job, table, ctas=True)
            return
        if str(table.staged_by_job or "") != str(job.pk):
            check_rights(job, table, ctas=True)
        location = Path(str(entry["location"]))
        if not entry.get("managed") or table.location != str(location):
            raise CoreError(f"Table {_name(table)} is not where job {job.pk} would write it.")
        require_under(location, warehouse())
        location.mkdir(parents=True, exist_ok=True)
        if not entry.get("schema"):
            raise CoreError(f"The stream did not store the schema of {_name(table)}.")
        schema = catalog_services.ctas_schema(ResolvedSchema.from_dict(entry["schema"]))
        catalog_services.ctas_table_activate(table=table, schema=schema, staged_by_job=job.pk)
        versions.record(
            table,
            location=str(location),
            operation=versions.OP_CTAS,
            user_id=job.user_id,
            job_id=job.pk,
            rows=0,
            metrics={"job": str(job.pk)},
        )
        lifecycle.record_event(job.pk, "table_ready", {"table": _name(table)})


def totals(job_id: Any, identifier: Sequence[str]) -> tuple[int, int]:
    """The batches of this job the table records, and their rows (a job run again goes on
    counting from there)."""
    table = staging.table_row(identifier, lock=False)
    found = TableVersion.objects.filter(
        table=table, job_id=job_id, metrics__batch_id__isnull=False
    ).values_list("rows", flat=True)
    batches, rows = 0, 0
    for value in found:
        batches += 1
        rows += value or 0
    return batches, rows


def last_batch(job_id: Any, identifier: Sequence[str]) -> int:
    """The last batch of this job the table records (-1 if none)."""
    table = staging.table_row(identifier, lock=False)
    found = TableVersion.objects.filter(
        table=table, job_id=job_id, metrics__batch_id__isnull=False
    ).aggregate(last=Max(Cast(KT("metrics__batch_id"), BigIntegerField())))["last"]
    return int(found) if found is not None else -1


def was_committed(job_id: Any, identifier: Sequence[str], batch_id: int) -> bool:
    """Whether the table records this (job, batch) already: a replay, skipped."""
    table = staging.table_row(identifier, lock=False)
    return _recorded(table, job_id, batch_id) is not None


def _recorded(table: Table, job_id: Any, batch_id: int) -> TableVersion | None:
    return (
        TableVersion.objects.filter(table=table, job_id=job_id, metrics__batch_id=int(batch_id))
        .order_by("version")
        .first()
    )


def commit_batch(
    job_id: Any,
    identifier: Sequence[str],
    batch_id: int,
    staged: Path,
    *,
    files: Sequence[Path] | None = None,
    rows: int | None,
    ctas: bool,
    base: str | None = None,
    event: Mapping[str, Any] | None = None,
    stream: Mapping[str, Any] | None = None,
) -> Committed:
    """Commit the batch ``batch_id`` staged in ``staged`` as the table's next version, or
    skip it if the table records it already; the staging directory is removed either way.
    ``files``: only these files of ``staged`` (relative to it) are the batch, and
    ``staged`` (a file sink's directory, ``sink_dir``) is kept.

    ``base``: an upsert's batch holds the whole new table merged with the version at
    ``base``; CONFLICT if the table moved on since (the caller merges again). ``rows``: the
    version's rows. ``event``: the figures of ``batch_committed`` besides ``batch_id``,
    ``table`` and ``version`` (its ``rows``, when given, are the batch's);
    ``stream``: the job's ``progress.stream`` once the batch is committed."""
    require_under(staged, streams_dir(job_id))
    new: Path | None = None
    try:
        with transaction.atomic():
            job = _locked_job(job_id)
            table = staging.table_row(identifier, lock=True)
            found = _recorded(table, job_id, batch_id)
            if found is not None:
                log.info("job %s: batch %s was committed before; skipped", job_id, batch_id)
                return Committed(False, found.version)
            check_rights(job, table, ctas)
            first = not TableVersion.objects.filter(
                table=table, job_id=job.pk, metrics__batch_id__isnull=False
            ).exists()
            old = table.location
            if base is not None and old != base:
                raise Conflict(
                    f"Table {_name(table)} changed while the batch {batch_id} was merged.",
                    details={"identifier": list(identifier)},
                )
            new = storage.warehouse_location(*identifier)
            require_under(new, warehouse())
            new.mkdir(parents=True)
            if old:
                versions.ensure_initial(table)
                if base is None:
                    link_tree(Path(old), new)
            if files is None:
                link_tree(staged, new)
            else:
                link_files(staged, new, files)
            table.location = str(new)
            table.staged_by_job = None
            table.save(update_fields=["location", "staged_by_job", "updated_at"])
            version = versions.record(
                table,
                location=str(new),
                operation=OPERATION,
                user_id=job.user_id,
                job_id=job.pk,
                rows=rows,
                metrics={"batch_id": int(batch_id), "job": str(job.pk)},
            )
            detail = {"rows": rows, **dict(event or {})}  # an upsert's: the rows it changed
            detail.update(batch_id=int(batch_id), table=_name(table), version=version.version)
            lifecycle.record_event(job.pk, "batch_committed", detail)
            if first:  # the audit's write of a stream: its first committed batch only
                access_log.record_writes(job, [table], ["stream"])
            if stream is not None:
                progress = {**dict(job.progress or {}), "stream": dict(stream)}
                Job.objects.filter(pk=job.pk).update(progress=progress)
        notify.announce(job_id, notify.PROGRESS)
        return Committed(True, version.version)
    except BaseException:
        if new is not None and not versions.in_use(str(new)):
            remove(new)
        raise
    finally:
        if files is None and staged.exists():
            remove(staged)


def drop_unused_table(job_id: Any) -> Table | None:
    """The table of a streaming CTAS that ended without committing a batch (still marked
    with its job): dropped, as a failed CTAS's stage table is; its versions go with it and
    its empty directory is the job's staging (``tabledata.commit.clean_up``)."""
    with transaction.atomic():
        table = (
            Table.objects.select_for_update(of=("self",))
            .select_related("database__catalog")
            .filter(staged_by_job=job_id)
            .first()
        )
        if table is not None:
            table.delete()
    return table


def clean_stream(job_id: Any) -> bool:
    """Remove the job's batch staging and its checkpoint (the job has ended); True if
    something was removed."""
    removed = False
    for path, root in (
        (streams_dir(job_id), warehouse()),
        (checkpoint_dir(job_id), Path(settings.DATA_DIR) / CHECKPOINTS_DIR),
    ):
        if path.exists() and is_strictly_under(path, root) and not path.is_symlink():
            remove(path)
            removed = True
    return removed
