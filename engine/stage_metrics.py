"""Per-stage Spark metrics of a job, read from the driver's status store when its work ends.

Classic Spark only: the job's Spark jobs are those of its job group (``tessera-job-<id>``,
set by ``SparkJobControl.enter`` in the thread that runs the actions); the stages of each
come from Spark's ``AppStatusStore`` (what the Spark UI shows), serialised in the JVM by
Jackson (one py4j call per stage). They are stored in the job's ``progress`` JSON as
``progress.stages`` (docs/api.md), a list of at most ``MAX_STAGES`` entries::

    {"stage_id", "attempt", "name", "status", "tasks", "tasks_completed", "tasks_failed",
     "rows_read", "bytes_read", "rows_written", "bytes_written",
     "shuffle_read_rows", "shuffle_read_bytes", "shuffle_write_rows", "shuffle_write_bytes",
     "memory_spilled", "disk_spilled", "duration_ms", "run_time_ms", "failure"}

Stages Spark skipped (their shuffle output was reused) did no work and are left out.
Spark Connect: the client cannot see the server's status store, so nothing is recorded
(``stages`` stays absent; the API shows ``null``). Reading the metrics never fails a job:
any error is logged and the job ends without them.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from django.db import transaction

from core import jobstate
from engine.errors import scrub_paths
from jobs import notify
from jobs.models import Job

log = logging.getLogger(__name__)

MAX_STAGES = 100
# How long to let Spark's listener bus deliver the last task and stage events to the status
# store (it is asynchronous): without it, a stage that just ended may read as still active.
LISTENER_WAIT_MS = 1000
_NAME_CHARS = 120
_FAILURE_CHARS = 300
_TERMINAL = (jobstate.FINISHED, jobstate.FAILED, jobstate.CANCELED)


def collect(spark: Any, group: str, limit: int = MAX_STAGES) -> list[dict[str, Any]]:
    """The stages of the Spark jobs of ``group``, by stage id and attempt (at most
    ``limit``). Classic Spark only; raises on any py4j or JVM error (callers log it)."""
    sc: Any = spark.sparkContext
    jsc: Any = sc._jsc.sc()
    try:
        jsc.listenerBus().waitUntilEmpty(LISTENER_WAIT_MS)
    except Exception:  # busy with other jobs' events: read what the store has now
        log.debug("listener bus of %s not drained in time", group, exc_info=True)
    tracker: Any = sc.statusTracker()
    stage_ids: set[int] = set()
    for job_id in tracker.getJobIdsForGroup(group):
        info = tracker.getJobInfo(job_id)
        if info is not None:
            stage_ids.update(int(stage_id) for stage_id in info.stageIds)
    store: Any = jsc.statusStore()
    mapper = _json_mapper(sc)
    no_statuses = sc._jvm.java.util.ArrayList()
    no_quantiles = sc._gateway.new_array(sc._jvm.double, 0)
    stages: list[dict[str, Any]] = []
    for stage_id in sorted(stage_ids):
        if len(stages) >= limit:
            break
        try:
            attempts = store.stageData(stage_id, False, no_statuses, False, no_quantiles)
        except Exception:  # evicted from the store (spark.ui.retainedStages), or never run
            log.debug("stage %s of %s is not in the status store", stage_id, group)
            continue
        for data in json.loads(mapper.writeValueAsString(attempts)):
            if data.get("status") != "SKIPPED":
                stages.append(stage_entry(data))
    stages.sort(key=lambda stage: (stage["stage_id"], stage["attempt"]))
    return stages[:limit]


# One mapper per SparkContext (a new JVM has a new context): making one is a few py4j calls.
_mappers: dict[int, tuple[Any, Any]] = {}


def _json_mapper(sc: Any) -> Any:
    kept = _mappers.get(id(sc))
    if kept is not None and kept[0] is sc:
        return kept[1]
    jvm = sc._jvm
    mapper = jvm.com.fasterxml.jackson.databind.ObjectMapper()
    scala_module = getattr(jvm.com.fasterxml.jackson.module.scala, "DefaultScalaModule$")
    mapper.registerModule(scala_module.__getattr__("MODULE$"))
    _mappers.clear()  # one Spark per process: the old context's mapper goes with it
    _mappers[id(sc)] = (sc, mapper)
    return mapper


def stage_entry(data: dict[str, Any]) -> dict[str, Any]:
    """One stage attempt as stored, from Spark's ``StageData`` as JSON (api/v1)."""
    submitted, completed = data.get("submissionTime"), data.get("completionTime")
    duration = (
        int(completed) - int(submitted)
        if isinstance(submitted, int) and isinstance(completed, int)
        else None
    )
    failure = data.get("failureReason")
    return {
        "stage_id": int(data.get("stageId") or 0),
        "attempt": int(data.get("attemptId") or 0),
        "name": stage_name(str(data.get("name") or "")),
        "status": str(data.get("status") or "UNKNOWN"),
        "tasks": _count(data, "numTasks"),
        "tasks_completed": _count(data, "numCompleteTasks"),
        "tasks_failed": _count(data, "numFailedTasks"),
        "rows_read": _count(data, "inputRecords"),
        "bytes_read": _count(data, "inputBytes"),
        "rows_written": _count(data, "outputRecords"),
        "bytes_written": _count(data, "outputBytes"),
        "shuffle_read_rows": _count(data, "shuffleReadRecords"),
        "shuffle_read_bytes": _count(data, "shuffleReadBytes"),
        "shuffle_write_rows": _count(data, "shuffleWriteRecords"),
        "shuffle_write_bytes": _count(data, "shuffleWriteBytes"),
        "memory_spilled": _count(data, "memoryBytesSpilled"),
        "disk_spilled": _count(data, "diskBytesSpilled"),
        "duration_ms": duration,
        "run_time_ms": _count(data, "executorRunTime"),
        "failure": _first_line(scrub_paths(str(failure)), _FAILURE_CHARS) if failure else None,
    }


def stage_name(call_site: str) -> str:
    """Spark names a stage by its call site, ``toArrow at /srv/…/run.py:237``: the action
    only (the place is Tessera's own code, on the server)."""
    name = _first_line(call_site, _NAME_CHARS * 4)
    action, found, _ = name.partition(" at ")
    return _first_line(action if found and action else scrub_paths(name), _NAME_CHARS)


def _count(data: dict[str, Any], key: str) -> int:
    value = data.get(key)
    return int(value) if isinstance(value, int | float) else 0


def _first_line(text: str, limit: int) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def record(job_id: Any, stages: list[dict[str, Any]] | None) -> None:
    """Add ``stages`` to the progress of a job that already ended, and tell whoever follows
    the job. Read after the job's terminal transition, so that reading them (a listener-bus
    drain and a dozen py4j calls) never delays the job's end. Nothing for ``None`` (not
    recorded: Spark Connect, or an error)."""
    if stages is None:
        return
    try:
        # Merged in Python, not with SQL's JSON operators: the same on SQLite and PostgreSQL.
        with transaction.atomic():
            rows = list(
                Job.objects.select_for_update()
                .filter(pk=job_id, status__in=_TERMINAL)
                .values_list("progress", flat=True)[:1]
            )
            if not rows:
                return
            progress = {**(rows[0] or {}), "stages": stages}
            Job.objects.filter(pk=job_id).update(progress=progress)
        notify.announce(job_id, notify.PROGRESS)
    except Exception:
        log.warning("job %s: could not record its Spark stages", job_id, exc_info=True)
