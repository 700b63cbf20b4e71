"""MERGE, UPDATE and DELETE on a managed Delta table (ADR 0019, "Row-level DML").

Delta's commands commit themselves, so the worker runs the command and the FINISHED
transition records the version it committed (``tabledata.delta_commit``); until then
Tessera's readers read the recorded version, which the command did not change.

1. ``run``: the table's directory is the staging entry's (the server's, never the plan's);
   the log may have moved past the recorded version (``delta_base``, from the plan) only by
   commits that undo one another, else WRITE_CONFLICT before anything runs. The target's
   alias is registered over the log's latest version, the statement is checked as Spark
   parses it (``SqlGuard.row_change``: exactly the planned kind of statement, writing that
   alias) and run with the job's marker as the commit's ``userMetadata``. Delta's conflict
   checker refuses a commit that a concurrent one invalidates (WRITE_CONFLICT, nothing
   committed); a commit whose read version is not the one checked before is undone.
2. ``end``: FINISHED records the committed version if the recorded one is still
   ``delta_base``; a failure, a cancel or a refused FINISHED after Delta committed is undone
   by a compensating commit (``undo``: the command's added files removed, the files it
   removed added back with the deletion vectors they had) — never RESTORE, which would drop
   other writers' commits made in between (ADR 0018).
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from catalog import versions
from core import jobstate
from core.errors import CoreError, WriteConflict
from core.identifiers import quote_path
from core.planner import TABLE_CHANGE_ACTIONS, Action, Plan, RelationPlan
from core.planner.alter_changes import change_sql
from core.planner.table_maintenance import check_retain_hours
from core.privileges import Privilege
from engine import delta_tables, errors, sqlguard
from engine.control import SparkJobControl
from engine.registration import _check_delta_files
from engine.write_runner import RESULT_COLUMNS, settle
from jobs import lifecycle
from jobs.errors import INTERNAL_ERROR
from jobs.models import Job
from results.store import delete_result, write_rows
from tabledata import commit, staging

log = logging.getLogger(__name__)

USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"
# OPTIMIZE and VACUUM read the table's state in Delta's 50 partitions and VACUUM lists its
# directory in 10,000 tasks by default (a minute of scheduling for a small table): the
# session's shuffle partitions instead, for their job only.
_MAINTENANCE_TUNING = (
    "spark.sql.sources.parallelPartitionDiscovery.parallelism",
    "spark.databricks.delta.snapshotPartitions",
)
MARKER = "tessera-job:{}"
UNDO_MARKER = "tessera-undo:{}"  # the version a compensating commit undoes
ORPHAN_ROUNDS = 3  # undoing orphaned changes, then looking at the log again
_DELTA = "org.apache.spark.sql.delta"
# A VACUUM DRY RUN answers the files it would delete.
DRY_RUN_COLUMNS = [{"name": "path", "data_type": "STRING"}]


def _conflict(shown: str, identifier: list[str], why: str) -> WriteConflict:
    return WriteConflict(
        f"Table {shown} changed while the job ran ({why}); nothing was committed. Run the "
        "statement again.",
        details={"identifier": identifier},
    )


# --- the log, read as files (the table's own directory) ------------------------------------


def _log_dir(path: str) -> Path:
    return Path(path) / "_delta_log"


def latest_version(path: str) -> int:
    """The newest version of the log (its newest commit file)."""
    numbers = [int(p.stem) for p in _log_dir(path).glob("*.json") if p.stem.isdigit()]
    if not numbers:
        raise CoreError("The table's Delta log holds no commit.")
    return max(numbers)


def commit_actions(path: str, version: int) -> list[dict[str, Any]]:
    """The actions of one commit, as its JSON file holds them (empty if it is gone)."""
    file = _log_dir(path) / f"{version:020d}.json"
    if not file.is_file():
        return []
    return [json.loads(line) for line in file.read_text().splitlines() if line.strip()]


def commit_info(path: str, version: int) -> dict[str, Any]:
    for action in commit_actions(path, version):
        if "commitInfo" in action:
            return dict(action["commitInfo"])
    return {}


def readable_from(
    path: str,
    base: int,
    shown: str,
    identifier: list[str],
    orphan: Callable[[int, str], bool] | None = None,
) -> int:
    """The version the command may read: ``base`` (the recorded version the statement was
    planned on), or a later one when every commit since ``base`` was undone by another one
    since (a change committed by Delta that its job never recorded). ``orphan(version,
    marker)`` may undo such a change of a job that ended without recording it (True: undone).
    Else WRITE_CONFLICT."""
    prefix = UNDO_MARKER.format("")
    for _ in range(ORPHAN_ROUNDS):
        latest = latest_version(path)
        if latest < base:
            raise CoreError(f"Table {shown}'s Delta log lacks its recorded version {base}.")
        undone: set[int] = set()
        others: dict[int, str] = {}
        for version in range(base + 1, latest + 1):
            marker = str(commit_info(path, version).get("userMetadata") or "")
            if marker.startswith(prefix) and marker[len(prefix) :].isdigit():
                undone.add(int(marker[len(prefix) :]))
            else:
                others[version] = marker
        pending = {v: m for v, m in others.items() if v not in undone}
        if not pending:
            return latest
        if orphan is None or not all(orphan(v, m) for v, m in sorted(pending.items())):
            break
    raise _conflict(shown, identifier, "another write is committing, or committed first")


def orphan_undoer(spark: SparkSession, path: str) -> Callable[[int, str], bool]:
    """Undo a row-level change whose job ended without FINISHED recording it (its worker
    died between Delta's commit and the transition): its marker names a FAILED or CANCELED
    job. Anything else (another writer, a job still running) is left alone."""

    def undo_orphan(version: int, marker: str) -> bool:
        prefix = MARKER.format("")
        try:
            job_id = uuid.UUID(marker[len(prefix) :]) if marker.startswith(prefix) else None
        except ValueError:
            job_id = None
        if job_id is None:
            return False
        status = Job.objects.filter(pk=job_id).values_list("status", flat=True).first()
        if status not in (jobstate.FAILED, jobstate.CANCELED):
            return False
        made = undo(spark, path, version)
        log.info("Delta version %s of a %s job undone by version %s", version, status, made)
        return True

    return undo_orphan


def find_commit(path: str, after: int, marker: str) -> int | None:
    """The version committed with ``marker`` since ``after``, if any."""
    found = find_commits(path, after, marker)
    return found[0] if found else None


def find_commits(path: str, after: int, marker: str) -> list[int]:
    """Every version committed with ``marker`` since ``after``: one per command, but a
    VACUUM commits its start and its end, and auto-compaction compacts after a write."""
    return [
        version
        for version in range(after + 1, latest_version(path) + 1)
        if commit_info(path, version).get("userMetadata") == marker
    ]


def _operation_metrics(path: str, versions_: list[int]) -> dict[str, int]:
    """Delta's metrics of the commits (numbers as strings in the log), summed."""
    found: dict[str, int] = {}
    for version in versions_:
        metrics = commit_info(path, version).get("operationMetrics") or {}
        for key, value in dict(metrics).items():
            if isinstance(value, str) and value.isdigit():
                found[str(key)] = found.get(str(key), 0) + int(value)
    return found


# --- the compensating commit ---------------------------------------------------------------


def undo(spark: SparkSession, path: str, version: int) -> int:
    """Commit the reverse of ``version``: its added files removed, the files it removed
    added back from the snapshot before it (with their deletion vectors). Returns the version
    made; Delta's conflict checker refuses it if a commit since touched those files."""
    jvm: Any = spark._jvm
    delta = getattr(jvm, _DELTA)
    none = jvm.scala.Option.apply(None)
    log_ = delta.DeltaLog.forTable(spark._jsparkSession, path)
    actions: list[Any] = []
    removed: set[str] = set()
    changed = commit_actions(path, version)
    if any("metaData" in action for action in changed):
        # A schema change (ALTER TABLE): the metadata before it comes back (with column
        # mapping, a dropped or renamed column's data is still in its files).
        previous = log_.getSnapshotAt(version - 1, none, none, False).metadata()
        actions.append(previous)
    for action in changed:
        if "add" in action:
            text = json.dumps({"add": action["add"]})
            actions.append(delta.actions.Action.fromJson(text).remove())
        elif "remove" in action:
            removed.add(str(action["remove"]["path"]))
    if removed:
        before = log_.getSnapshotAt(version - 1, none, none, False)
        for added in before.allFiles().collectAsList():
            if str(added.path()) in removed:
                data = json.loads(str(added.json()))
                data["add"]["dataChange"] = True
                actions.append(delta.actions.Action.fromJson(json.dumps(data)))
    # On the snapshot of ``version`` itself: a later commit that removed one of these files
    # too (changed its rows since) is Delta's conflict, and nothing is committed.
    at = log_.getSnapshotAt(version, none, none, False)
    txn = log_.startTransaction(none, jvm.scala.Option.apply(at))
    append = jvm.org.apache.spark.sql.SaveMode.valueOf("Append")
    operation = delta.DeltaOperations.Write(
        append, none, none, jvm.scala.Option.apply(UNDO_MARKER.format(version)),
        none, none, none, none, none,
    )  # fmt: skip
    return int(txn.commit(delta_tables._seq(jvm, actions), operation))


# --- the job ---------------------------------------------------------------------------------


@dataclass
class RowChange:
    """One planned MERGE / UPDATE / DELETE, as the worker runs it."""

    spark: SparkSession
    identifier: list[str]
    operation: str
    path: str
    marker: str
    read: int
    committed: int | None = None
    metrics: dict[str, int] = field(default_factory=dict)
    # A VACUUM DRY RUN's answer: the files it would delete (paths in the table's directory).
    files: list[str] | None = None

    @property
    def shown(self) -> str:
        return quote_path(self.identifier)

    def message(self) -> str:
        m = self.metrics
        version = f"version {self.committed}" if self.committed is not None else "no new version"
        if self.operation == "ALTER TABLE":
            if self.committed is None:
                return f"Table {self.shown} unchanged. No new version."
            return f"Table {self.shown} altered: version {self.committed}."
        if self.operation == "OPTIMIZE":
            return (
                f"Optimized {self.shown}: {m.get('numRemovedFiles', 0)} files compacted into "
                f"{m.get('numAddedFiles', 0)}; {version}."
            )
        if self.operation == "VACUUM":
            count = m.get("numDeletedFiles", 0)
            return f"Vacuumed {self.shown}: {count} files deleted; {version}."
        if self.operation == "MERGE":
            text = (
                f"Merged into {self.shown}: {m.get('num_updated_rows', 0)} updated, "
                f"{m.get('num_inserted_rows', 0)} inserted, {m.get('num_deleted_rows', 0)} "
                "deleted."
            )
        else:
            verb = "Updated" if self.operation == "UPDATE" else "Deleted"
            place = "in" if self.operation == "UPDATE" else "from"
            count = m.get("num_affected_rows", 0)
            text = f"{verb} {count} row{'' if count == 1 else 's'} {place} {self.shown}."
        return text if self.committed is not None else text + " No new version."

    def undo_quietly(self, why: str) -> None:
        """Undo the command's commits (if it made any and FINISHED did not record them),
        newest first."""
        try:
            made_by_it = find_commits(self.path, self.read, self.marker)
        except Exception:
            log.warning("%s: the Delta log could not be read", self.shown, exc_info=True)
            return
        for version in reversed(made_by_it):
            try:
                made = undo(self.spark, self.path, version)
                log.info("%s: Delta version %s undone by %s (%s)", self.shown, version, made, why)
            except Exception:
                log.warning("%s: Delta version %s not undone", self.shown, version, exc_info=True)
                return


def _target(plan: Plan) -> RelationPlan:
    data = plan.args.get("table")
    if not isinstance(data, Mapping) or data.get("alias") != "__tessera_t1":
        raise CoreError("The plan names no target for its row-level change.")
    return RelationPlan.from_dict(data)


def run(spark: SparkSession, job: Job, plan: Plan, holder: list[RowChange]) -> None:
    """Run the planned change (see the module docstring); ``holder`` receives it as soon as
    it can have committed, so that every way out can undo it."""
    targets = staging.write_targets(plan)
    if len(targets) != 1:
        raise CoreError("A row-level change writes exactly one table.")
    identifier = list(targets[0]["identifier"])
    shown = quote_path(identifier)
    delta_tables.refuse_connect(shown, spark)
    staging.staging_location(job, identifier)
    entry = staging.entry(job, identifier)
    path = delta_tables.checked_location(spark, entry, shown)
    # Before Delta commits anything: the job's user may change the table now, and it is
    # still the managed Delta table in that directory (a plan need not be the planner's).
    table = staging.table_row(identifier, lock=False)
    alter = plan.action in TABLE_CHANGE_ACTIONS
    privilege = Privilege.MANAGE if alter else Privilege.MODIFY
    commit.require_modify(Job.objects.select_related("user").get(pk=job.pk).user, table, privilege)
    if table.location != str(entry.get("final")) or not versions.is_managed_delta(table):
        raise CoreError(f"Table {shown} is no longer the managed Delta table planned.")
    base = plan.args.get("read_version")
    if not isinstance(base, int) or isinstance(base, bool):
        raise CoreError(f"The plan names no recorded version of {shown} to change.")
    read = readable_from(path, base, shown, identifier, orphan_undoer(spark, path))
    target = _target(plan)
    maintenance = plan.action in (Action.OPTIMIZE, Action.VACUUM)
    # Before the read computes the snapshot's state; the session is the job's own.
    for key in _MAINTENANCE_TUNING if maintenance else ():
        spark.conf.set(key, str(spark.conf.get("spark.sql.shuffle.partitions", "8")))
    frame = spark.read.format("delta").load(path)
    _check_delta_files(frame, path, shown)
    if not alter:
        frame.createOrReplaceTempView(str(target.alias))
    marker = MARKER.format(job.pk)
    staging.record(job, identifier, delta_base=base, delta_read=read, delta_marker=marker)
    change = RowChange(spark, identifier, str(entry.get("operation") or ""), path, marker, read)
    holder.append(change)
    spark.conf.set(USER_METADATA, marker)
    try:
        if alter:
            change_ = plan.args.get("change")
            if not isinstance(change_, Mapping):
                raise CoreError(f"The plan names no change of {shown}.")
            try:
                text = change_sql(change_, "delta." + quote_path([path]))
                if change_["op"] == "vacuum":  # a plan need not be the planner's
                    check_retain_hours(int(change_["retain_hours"]), versions.retention_hours())
            except (KeyError, TypeError, AttributeError, ValueError):
                raise CoreError(f"The plan's change of {shown} is malformed.") from None
            maintains = change_.get("op") in (Action.OPTIMIZE, Action.VACUUM)
            if maintains != maintenance or (maintains and change_.get("op") != plan.action):
                raise CoreError(f"The plan's change of {shown} is not its action.")
            rows = sqlguard.guard(spark).alter_table(text, path, change_).collect()
            if change_.get("op") == "vacuum" and change_.get("dry_run"):
                change.files = [_in_table(path, str(r["path"])) for r in rows]
        else:
            result = sqlguard.guard(spark).row_change(plan.sql, str(target.alias), shown)
            rows = result.collect()
    except Exception as exc:
        if delta_tables.is_conflict(exc):
            raise _conflict(shown, identifier, "a concurrent write conflicts with it") from None
        raise
    finally:
        spark.conf.unset(USER_METADATA)
        for key in _MAINTENANCE_TUNING if maintenance else ():
            spark.conf.unset(key)
    first = rows[0].asDict() if rows and change.files is None else {}
    change.metrics = {str(k): int(v) for k, v in first.items() if isinstance(v, int)}
    made = find_commits(path, read, marker)
    if made and maintenance:
        change.metrics = _operation_metrics(path, made)
    change.committed = made[-1] if made else None
    fields: dict[str, Any] = {"metrics": change.metrics}
    if "num_affected_rows" in change.metrics:
        fields["rows"] = change.metrics["num_affected_rows"]
    if made:
        if commit_info(path, made[0]).get("readVersion") != read or made != list(
            range(made[0], made[-1] + 1)
        ):
            raise _conflict(shown, identifier, "another write committed as it ran")
        fields["delta_committed"] = change.committed
    staging.record(job, identifier, **fields)


def _in_table(path: str, found: str) -> str:
    """A file Delta names (an absolute URI) as a path inside the table's directory."""
    local = found.removeprefix("file:")
    root = str(Path(path)).rstrip("/") + "/"
    return local[len(root) :] if local.startswith(root) else Path(local).name


def end(
    job: Job,
    holder: list[RowChange],
    failure: BaseException | None,
    *,
    stopped: bool,
    progress: Mapping[str, Any],
    aliases: Mapping[str, str],
    control: SparkJobControl | None,
    texts: tuple[str, str] | None,
) -> str:
    """The terminal transition; anything Delta committed that FINISHED did not record is
    undone."""
    change = holder[0] if holder else None
    if stopped:
        if change is not None:
            change.undo_quietly("the job was stopped")
        settle(job.id, control)
        return _status_of(job.id)
    if failure is not None:
        if change is not None:
            change.undo_quietly("the job failed")
        error = errors.job_error(failure, aliases, texts=texts)
        if error.code == INTERNAL_ERROR:
            log.error("job %s failed", job.id, exc_info=failure)
        lifecycle.try_transition(
            job.id, jobstate.RUNNING, jobstate.FAILED, error=error, progress=dict(progress)
        )
        return _status_of(job.id)
    if change is not None and change.files is not None:
        result = write_rows(job.id, DRY_RUN_COLUMNS, [[f] for f in change.files])
    else:
        message = change.message() if change is not None else ""
        result = write_rows(job.id, RESULT_COLUMNS, [[message]])
    try:
        lifecycle.transition(
            job.id, jobstate.RUNNING, jobstate.FINISHED, result=result, progress=dict(progress)
        )
    except Exception as exc:
        delete_result(job.id)
        if _status_of(job.id) != jobstate.FINISHED and change is not None:
            change.undo_quietly("FINISHED did not record it")
        if _status_of(job.id) == jobstate.RUNNING:
            error = errors.job_error(exc, aliases)
            log.info("job %s: the commit failed: %s", job.id, error.message)
            lifecycle.try_transition(
                job.id, jobstate.RUNNING, jobstate.FAILED, error=error, progress=dict(progress)
            )
    return _status_of(job.id)


def _status_of(job_id: Any) -> str:
    status = Job.objects.filter(pk=job_id).values_list("status", flat=True).first()
    return str(status or "")
