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
import time
from collections.abc import Callable
from typing import Any

from pyspark.sql import SparkSession

from jobs.executor import spark_config

log = logging.getLogger(__name__)

EMPTY_PROGRESS = {"stages_total": 0, "stages_done": 0, "tasks_total": 0, "tasks_done": 0}
_JOB_GROUP_PROPERTIES = (
    "spark.jobGroup.id",
    "spark.job.description",
    "spark.job.interruptOnCancel",
)


class _Lane:
    """Runs one call at a time in a daemon thread, and lets the caller wait a bounded
    time: a JVM that does not answer blocks the lane, never the caller (the job's monitor
    must keep heartbeating and honour cancel whatever Spark does)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def run(self, call: Callable[[], object], timeout: float) -> bool:
        """Start ``call`` unless the previous one still runs; wait up to ``timeout`` s.
        True when no call of this lane is running any more."""
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=call, name=self.name, daemon=True)
                self._thread.start()
            thread = self._thread
        thread.join(timeout)
        return not thread.is_alive()


class SparkJobControl:
    """Pool, group/tag, cancel and progress of one Tessera job's Spark work."""

    def __init__(self, spark: SparkSession, job_id: str, pool: str) -> None:
        self.spark = spark
        self.group = f"tessera-job-{job_id}"
        self.tag = self.group
        self.pool = pool or "default"
        self.connect = spark_config.is_connect()
        self._connect_stages: dict[int, tuple[int, int, bool]] = {}
        self._lock = threading.Lock()
        self._last_progress: dict[str, int] = dict(EMPTY_PROGRESS)
        self._cancel_lane = _Lane(f"tessera-cancel-{job_id}")
        self._progress_lane = _Lane(f"tessera-progress-{job_id}")

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

    def cancel_within(self, timeout: float) -> bool:
        """``cancel`` without waiting more than ``timeout`` s for Spark to take it; True if
        it did. A cancel still under way is not sent twice."""
        return self._cancel_lane.run(self.cancel, timeout)

    def wait_idle(self, timeout: float, interval: float = 0.02, rekill: float = 1.0) -> bool:
        """After the job's Spark work was stopped: wait until none of its tasks runs any more
        (True), or ``timeout`` passed (False). A killed task keeps running until it sees its
        interrupt, and an interrupt can get lost (Hadoop's local file system swallows one
        while it waits for a shell command): every ``rekill`` seconds the tasks still
        running are killed again, with an interrupt. Spark Connect: returns at once."""
        if self.connect:
            return True
        started = time.monotonic()
        next_kill = started + rekill
        while True:
            try:
                running = self._running_tasks()
            except Exception:
                log.debug("task state of %s unavailable", self.group, exc_info=True)
                return False
            if not running:
                return True
            now = time.monotonic()
            if now - started > timeout:
                log.warning("tasks of %s still running after %.1f s", self.group, timeout)
                return False
            if now >= next_kill:
                self._kill_tasks(running)
                next_kill = now + rekill
            time.sleep(interval)

    def _running_tasks(self) -> list[int]:
        """Ids of this job's task attempts that are still running."""
        sc: Any = self.spark.sparkContext
        tracker: Any = sc.statusTracker()
        store: Any = None
        running: list[int] = []
        for job_id in tracker.getJobIdsForGroup(self.group):
            info = tracker.getJobInfo(job_id)
            for stage_id in list(info.stageIds) if info is not None else []:
                stage = tracker.getStageInfo(stage_id)
                if stage is None or stage.numActiveTasks <= 0:
                    continue
                store = store or sc._jsc.sc().statusStore()
                tasks = store.taskList(stage_id, stage.currentAttemptId, 100_000)
                for index in range(tasks.size()):
                    task = tasks.apply(index)
                    if task.status() == "RUNNING":
                        running.append(int(task.taskId()))
        return running

    def _kill_tasks(self, task_ids: list[int]) -> None:
        sc: Any = self.spark.sparkContext
        for task_id in task_ids:
            try:
                sc._jsc.sc().killTaskAttempt(task_id, True, f"{self.group} was stopped")
            except Exception:
                log.debug("could not kill task %s of %s", task_id, self.group, exc_info=True)
        log.info("killed %d lingering task(s) of %s again", len(task_ids), self.group)

    def progress(self) -> dict[str, int]:
        """``{"stages_total","stages_done","tasks_total","tasks_done"}`` so far."""
        try:
            progress = self._connect_progress() if self.connect else self._classic_progress()
        except Exception:
            log.debug("progress of %s unavailable", self.group, exc_info=True)
            return dict(self._last_progress)
        self._last_progress = progress
        return dict(progress)

    def progress_within(self, timeout: float) -> dict[str, int]:
        """``progress`` if Spark tells it within ``timeout`` s, else the last one known."""
        self._progress_lane.run(self.progress, timeout)
        return dict(self._last_progress)

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
