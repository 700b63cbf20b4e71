"""Per-job control of Spark work: FAIR pool, job group and tag, cancel and progress.

Classic Spark (``SPARK_MASTER``): in the thread that runs the job we set the FAIR pool
(``spark.scheduler.pool`` = the user's session, ``pool_of``), a job group and a job tag,
all thread-local properties of the SparkContext. Any thread can then cancel with
``cancelJobsWithTag`` and ``cancelJobGroup`` (0.2 s measured), and read progress from
``statusTracker()`` by group.
Celery's pool threads are reused, so ``leave()`` clears all of it.

Spark Connect (the ``connect`` runtime, ``engine.runtimes``): no SparkContext on the
client. The job's thread adds an operation tag to its session (``addTag``: tags are
thread-local in the client, so it must be the thread that runs the actions); any thread
then stops every operation of the job with ``interruptTag`` (measured: a long aggregation
ended ``OPERATION_CANCELED`` 0.1 s later, its Spark job cancelled on the server). Progress
comes from the client's progress handler (stages, tasks) of each operation. A FAIR pool
cannot be set over Connect: ordinary jobs run in the server's default pool (logged once);
asking for a pool explicitly is ``UNSUPPORTED`` (``require_pools``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from pyspark.sql import SparkSession

from engine import stage_metrics
from engine.runtimes import current_runtime, is_remote_session

log = logging.getLogger(__name__)

EMPTY_PROGRESS = {"stages_total": 0, "stages_done": 0, "tasks_total": 0, "tasks_done": 0}
# At most this long for the stage metrics at a job's end (a JVM that does not answer).
STAGES_WAIT_SECONDS = 5.0
_pools_logged = threading.Event()
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


def pool_of(job: Any) -> str:
    """The job's FAIR pool: its user's session. Spark shares an engine's cores fairly between
    pools and runs one pool's jobs in order, so one session's long query does not starve the
    short one the same user runs in another tab or client."""
    return f"{job.user.get_username()}/{job.session_id or 'none'}"


class SparkJobControl:
    """Pool, group/tag, cancel and progress of one Tessera job's Spark work."""

    def __init__(self, spark: SparkSession, job_id: str, pool: str) -> None:
        self.spark = spark
        self.group = f"tessera-job-{job_id}"
        self.tag = self.group
        self.pool = pool or "default"
        self.connect = is_remote_session(spark)
        self._connect_stages: dict[int, tuple[int, int, bool]] = {}
        self.interrupted: list[str] = []  # operation ids interruptTag reported (Connect)
        self._lock = threading.Lock()
        self._last_progress: dict[str, int] = dict(EMPTY_PROGRESS)
        self._cancel_lane = _Lane(f"tessera-cancel-{job_id}")
        self._progress_lane = _Lane(f"tessera-progress-{job_id}")
        self._stages_lane = _Lane(f"tessera-stages-{job_id}")
        self._job_id = job_id

    # --- in the job's own thread ----------------------------------------------------------

    def enter(self) -> None:
        """Call in the thread that runs the Spark actions, before the first one."""
        if self.connect:
            self.spark.addTag(self.tag)
            register = getattr(self.spark, "registerProgressHandler", None)
            if callable(register):
                register(self._on_connect_progress)
            if self.pool != "default" and not _pools_logged.is_set():
                _pools_logged.set()
                log.info(
                    "per-user FAIR pools cannot be set on %s; jobs run in the server's "
                    "default pool",
                    current_runtime().title,
                )
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
                stopped = self.spark.interruptTag(self.tag)
                self.interrupted.extend(str(op) for op in stopped or [])
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
        running are killed again, with an interrupt.

        Spark Connect: returns True at once. Called after the job's own thread returned,
        i.e. after the server ended the interrupted operations' result streams with
        ``OPERATION_CANCELED``, which it does once it has cancelled their Spark jobs (their
        tasks are sent a kill with an interrupt). Whether every task saw its interrupt is
        the server's to know: the client has no task list to wait on, nor a way to kill a
        task again (docs/deploy.md); a stopped write watches its staging locations instead
        (``write_runner.clean_up_until_quiet``)."""
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

    def require_pools(self) -> None:
        """For a job that asks for a FAIR pool explicitly: ``UNSUPPORTED`` where the runtime
        cannot set one (Spark Connect)."""
        runtime = current_runtime()
        if self.connect or not runtime.pools:
            raise runtime.unsupported(f"Running a job in the FAIR pool '{self.pool}'")

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

    def succeeded_progress(self) -> dict[str, int]:
        """``progress`` of a job whose Spark work all succeeded. Spark Connect reports a
        stage's end only at its next report, which a short job does not live to see; its
        stages are complete (as the classic tracker counts a succeeded job's stages)."""
        if self.connect:
            with self._lock:
                for stage_id, (total, _, _) in list(self._connect_stages.items()):
                    self._connect_stages[stage_id] = (total, total, True)
        return self.progress()

    # --- when the job's Spark work ended ---------------------------------------------------------

    def stages_within(self, timeout: float = STAGES_WAIT_SECONDS) -> list[dict[str, Any]] | None:
        """The per-stage metrics of this job's Spark work (``engine.stage_metrics``),
        or None: Spark Connect (not visible from the client), an error (logged), or Spark did
        not answer within ``timeout`` s. Never raises: metrics must not fail a job."""
        if self.connect:
            return None
        found: list[list[dict[str, Any]]] = []

        def read() -> None:
            try:
                found.append(stage_metrics.collect(self.spark, self.group))
            except Exception:
                log.warning("Spark stages of %s unavailable", self.group, exc_info=True)

        if not self._stages_lane.run(read, timeout):
            log.warning("Spark stages of %s: no answer within %.1f s", self.group, timeout)
        return found[0] if found else None

    def ended(self, succeeded: bool = False) -> dict[str, Any]:
        """The progress to store with the job's terminal transition: ``progress`` (or
        ``succeeded_progress``). Its ``stages`` come after the transition (``record_stages``)."""
        return dict(self.succeeded_progress() if succeeded else self.progress())

    def record_stages(self) -> None:
        """Once the job ended (and, when the monitor ended it, its tasks settled): add the
        stages that ran to its stored progress."""
        stage_metrics.record(self._job_id, self.stages_within())

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
