"""Per-job control of Spark work: FAIR pool, job group and tag, cancel and progress.

Classic Spark (``SPARK_MASTER``): in the thread that runs the job we set the FAIR pool
(``spark.scheduler.pool`` = the user), a job group and a job tag, all thread-local
properties of the SparkContext. Any thread can then cancel with ``cancelJobsWithTag`` and
``cancelJobGroup`` (0.2 s measured), and read progress from ``statusTracker()`` by group.
Celery's pool threads are reused, so ``leave()`` clears all of it.

Spark Connect (``SPARK_REMOTE``): no SparkContext on the client. Cancel uses the session's
operation tags (``addTag``/``interruptTag``); progress comes from the client's progress
handler where the client has one (PySpark >= 4.0), else stays empty. Pools are not settable.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from pyspark.sql import SparkSession

from jobs.executor import runtime

log = logging.getLogger(__name__)

EMPTY_PROGRESS = {"stages_total": 0, "stages_done": 0, "tasks_total": 0, "tasks_done": 0}
_JOB_GROUP_PROPERTIES = (
    "spark.jobGroup.id",
    "spark.job.description",
    "spark.job.interruptOnCancel",
)


class SparkJobControl:
    """Pool, group/tag, cancel and progress of one Tessera job's Spark work."""

    def __init__(self, spark: SparkSession, job_id: str, pool: str) -> None:
        self.spark = spark
        self.group = f"tessera-job-{job_id}"
        self.tag = self.group
        self.pool = pool or "default"
        self.connect = runtime.is_connect()
        self._connect_stages: dict[int, tuple[int, int, bool]] = {}
        self._lock = threading.Lock()

    # --- in the job's own thread ----------------------------------------------------------

    def enter(self) -> None:
        """Call in the thread that runs the Spark actions, before the first one."""
        if self.connect:
            self.spark.addTag(self.tag)
            register = getattr(self.spark, "registerProgressHandler", None)
            if callable(register):
                register(self._on_connect_progress)
            return
        sc: Any = self.spark.sparkContext
        sc.setLocalProperty("spark.scheduler.pool", self.pool)
        sc.setJobGroup(self.group, f"Tessera job {self.group}", True)
        sc.addJobTag(self.tag)

    def leave(self) -> None:
        """Undo ``enter`` (the thread will run other jobs)."""
        try:
            if self.connect:
                self.spark.removeTag(self.tag)
                remove = getattr(self.spark, "removeProgressHandler", None)
                if callable(remove):
                    remove(self._on_connect_progress)
                return
            sc: Any = self.spark.sparkContext
            sc.removeJobTag(self.tag)
            for key in (*_JOB_GROUP_PROPERTIES, "spark.scheduler.pool"):
                sc.setLocalProperty(key, None)
        except Exception:  # a JVM that went away must not hide the job's own outcome
            log.warning("could not clear Spark properties of %s", self.group, exc_info=True)

    # --- from the monitor thread ------------------------------------------------------------

    def cancel(self) -> None:
        """Stop every Spark job of this Tessera job (safe to call repeatedly)."""
        try:
            if self.connect:
                self.spark.interruptTag(self.tag)
                return
            sc: Any = self.spark.sparkContext
            sc.cancelJobsWithTag(self.tag)
            sc.cancelJobGroup(self.group)
        except Exception:
            log.warning("cancelling %s failed", self.group, exc_info=True)

    def progress(self) -> dict[str, int]:
        """``{"stages_total","stages_done","tasks_total","tasks_done"}`` so far."""
        try:
            return self._connect_progress() if self.connect else self._classic_progress()
        except Exception:
            log.debug("progress of %s unavailable", self.group, exc_info=True)
            return dict(EMPTY_PROGRESS)

    def _classic_progress(self) -> dict[str, int]:
        tracker: Any = self.spark.sparkContext.statusTracker()
        stages_total = stages_done = tasks_total = tasks_done = 0
        for job_id in tracker.getJobIdsForGroup(self.group):
            info = tracker.getJobInfo(job_id)
            if info is None:
                continue
            succeeded = info.status == "SUCCEEDED"
            for stage_id in list(info.stageIds):
                stage = tracker.getStageInfo(stage_id)
                stages_total += 1
                if stage is None:  # not submitted yet, or skipped (its shuffle output reused)
                    stages_done += int(succeeded)
                    continue
                tasks_total += stage.numTasks
                done = succeeded or stage.numCompletedTasks >= stage.numTasks
                stages_done += int(done)
                tasks_done += stage.numTasks if succeeded else stage.numCompletedTasks
        return {
            "stages_total": stages_total,
            "stages_done": stages_done,
            "tasks_total": tasks_total,
            "tasks_done": tasks_done,
        }

    def _on_connect_progress(
        self,
        stages: Any = None,
        inflight_tasks: int = 0,
        operation_id: Any = None,
        done: bool = False,
        **_: Any,
    ) -> None:
        with self._lock:
            for stage in stages or []:
                self._connect_stages[int(stage.stage_id)] = (
                    int(stage.num_tasks),
                    int(stage.num_completed_tasks),
                    bool(stage.done),
                )

    def _connect_progress(self) -> dict[str, int]:
        with self._lock:
            stages = list(self._connect_stages.values())
        return {
            "stages_total": len(stages),
            "stages_done": sum(1 for _, _, done in stages if done),
            "tasks_total": sum(total for total, _, _ in stages),
            "tasks_done": sum(completed for _, completed, _ in stages),
        }
