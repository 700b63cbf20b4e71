"""Pipeline jobs (``EXECUTE PIPELINE 'pkg.module:function'``, docs/pipelines.md).

A pipeline is claimed as any job and runs under a monitor (cancel, timeout, heartbeat) in a
SparkSession of its own. Its function is imported here, after the allow-list check is made
again (``core.planner.pipelines.check_entry_point``), and called as
``function(t_env, **args)`` with the in-worker ``TableEnvironment``
(``engine.pipeline_env``). Every statement the pipeline runs through ``t_env`` is a
child job (``Job.parent``): planned in the pipeline's session, started with ``start_job``
but never enqueued (``sessions.statements.INLINE``), and run at once in this thread, in the
pipeline's SparkSession, by ``run_child`` (``engine.run._run_job``). Writes go
through the same stage tables, staging locations and commits as SQL.

A pipeline that raises FAILS with ``PIPELINE_FAILED``: the message is
``"<ExceptionType>: <message>"``, ``details.traceback`` the last frames that belong to the
allowed packages' own files (module-relative names, never the worker's frames).
"""

from __future__ import annotations

import inspect
import logging
import os
import time
import traceback
from collections.abc import Callable, Iterable
from importlib import import_module, util
from typing import Any

from django.conf import settings

from core import jobstate
from core.errors import CoreError, NotFound
from core.planner import Action, Plan
from core.planner.pipelines import ForbiddenPipeline, check_entry_point
from engine import dataframes, errors, registration, spark_session
from engine.control import SparkJobControl, pool_of
from engine.monitor import CANCEL_WAIT_SECONDS, JobMonitor, job_properties, timeout_seconds
from jobs import lifecycle, notify
from jobs.errors import CANCELED, JobError
from jobs.identity import current_identity
from jobs.models import Job
from jobs.running import running_here
from sessions import statements

log = logging.getLogger(__name__)

PIPELINE_FAILED = "PIPELINE_FAILED"
MAX_FRAMES = 10
RunChild = Callable[[Job, Plan, notify.Watch, Any], Any]


class PipelineStopped(Exception):
    """Raised into the pipeline's code when its job was canceled, timed out or ended: its
    next ``t_env`` call does not run."""


# --- the function ------------------------------------------------------------------------


def load_pipeline(entry_point: str, packages: Iterable[str]) -> Callable[..., Any]:
    """The pipeline function: the entry point passes the planner's check again (nothing is
    imported otherwise), and the object must be a function defined in an allowed package,
    not a name its module merely imported."""
    allowed = tuple(packages)
    module_name, name = check_entry_point(entry_point, allowed)
    if util.find_spec(module_name.split(".")[0]) is None:
        raise NotFound(
            f"The pipeline package '{module_name.split('.')[0]}' is not installed on the worker.",
            details={"entry_point": entry_point},
        )
    try:
        module = import_module(module_name)
    except ModuleNotFoundError as exc:
        raise NotFound(
            f"The pipeline module '{module_name}' cannot be imported: no module named "
            f"'{exc.name}'.",
            details={"entry_point": entry_point},
        ) from None
    function = getattr(module, name, None)
    defined_in = str(getattr(function, "__module__", "") or "")
    if not inspect.isfunction(function) or not any(
        defined_in == p or defined_in.startswith(p + ".") for p in allowed
    ):
        raise ForbiddenPipeline(
            f"'{name}' is not a function defined in the pipeline module '{module_name}'.",
            details={"entry_point": entry_point, "allowed_packages": list(allowed)},
        )
    return function


def _package_dirs(packages: Iterable[str]) -> list[tuple[str, str]]:
    """(directory, package) of every allowed package that is installed."""
    found: list[tuple[str, str]] = []
    for package in packages:
        try:
            spec = util.find_spec(package)
        except (ImportError, ValueError):
            continue
        for location in (spec.submodule_search_locations or []) if spec else []:
            found.append((os.path.realpath(location), package))
    return found


def pipeline_frames(exc: BaseException, packages: Iterable[str]) -> list[dict[str, Any]]:
    """The last ``MAX_FRAMES`` frames of ``exc``'s traceback that are files of the allowed
    packages, named relative to them (``tessera_pipelines/sessionize.py``)."""
    dirs = _package_dirs(packages)
    frames: list[dict[str, Any]] = []
    for frame in traceback.extract_tb(exc.__traceback__):
        path = os.path.realpath(frame.filename)
        for directory, package in dirs:
            if path.startswith(directory + os.sep):
                relative = os.path.relpath(path, directory).replace(os.sep, "/")
                frames.append(
                    {
                        "file": f"{package.replace('.', '/')}/{relative}",
                        "line": frame.lineno,
                        "function": frame.name,
                        "code": (frame.line or "")[:300],
                    }
                )
                break
    return frames[-MAX_FRAMES:]


def pipeline_error(exc: BaseException, packages: Iterable[str]) -> JobError:
    """The job error of a pipeline whose code raised ``exc``."""
    code = getattr(exc, "code", None)
    message = errors.scrub_paths(f"{type(exc).__name__}: {exc}")
    if len(message) > errors.MAX_MESSAGE:
        message = message[: errors.MAX_MESSAGE - 3] + "..."
    details: dict[str, Any] = {"traceback": pipeline_frames(exc, packages)}
    if isinstance(code, str) and code:  # a TesseraError of a statement the pipeline ran
        details["cause"] = {"code": code, "job": getattr(exc, "details", {}).get("job")}
    return JobError(PIPELINE_FAILED, message, details)


# --- the monitor ---------------------------------------------------------------------------


class PipelineMonitor(JobMonitor):
    """A job monitor that, on cancel or timeout, first cancels the pipeline's running child
    (whose own monitor stops its Spark work and cleans its writes up)."""

    def _stop_children(self) -> None:
        stop_children(self.job_id)

    def _cancel(self) -> None:
        self._stop_children()
        super()._cancel()

    def _time_out(self) -> None:
        self._stop_children()
        super()._time_out()


def stop_children(job_id: Any, wait: float = CANCEL_WAIT_SECONDS) -> None:
    """Cancel every unfinished child of ``job_id`` and wait (at most ``wait`` s) for them to
    end."""
    children = Job.objects.filter(parent_id=job_id)
    for child_id in children.filter(status=jobstate.CREATED).values_list("id", flat=True):
        lifecycle.try_transition(
            child_id,
            jobstate.CREATED,
            jobstate.CANCELED,
            error=JobError(CANCELED, "Its pipeline was stopped.", {}),
        )
    running = list(children.filter(status=jobstate.RUNNING).values_list("id", flat=True))
    if not running:
        return
    Job.objects.filter(pk__in=running, status=jobstate.RUNNING).update(cancel_requested=True)
    for child_id in running:
        notify.announce(child_id, notify.CANCEL)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if not children.filter(pk__in=running, status=jobstate.RUNNING).exists():
            return
        time.sleep(0.05)


# --- running it ----------------------------------------------------------------------------


class PipelineRun:
    """One pipeline job running in this thread: its session, Spark, monitor and children."""

    def __init__(
        self, job: Job, spark: Any, control: SparkJobControl, monitor: JobMonitor, run: RunChild
    ) -> None:
        self.job = job
        self.spark = spark
        self.control = control
        self.monitor = monitor
        self._run_child = run

    def check_running(self) -> None:
        """Raise ``PipelineStopped`` unless the job still runs and is not being canceled."""
        if self.monitor.outcome is not None:
            raise PipelineStopped(f"The pipeline job {self.job.pk} was {self.monitor.outcome}.")
        row = Job.objects.filter(pk=self.job.pk).values("status", "cancel_requested").first()
        if row is None or row["status"] != jobstate.RUNNING or row["cancel_requested"]:
            raise PipelineStopped(f"The pipeline job {self.job.pk} was stopped.")

    def run_child(self, child_id: Any) -> None:
        """Run a child job at once, here, in the pipeline's SparkSession (after the commit
        that made it CREATED). Never raises: the child's row tells its end."""
        try:
            self._run(child_id)
        except Exception:
            log.exception("pipeline %s: its statement %s failed to run", self.job.pk, child_id)
            lifecycle.try_transition(
                child_id, jobstate.RUNNING, jobstate.FAILED, error=JobError.internal()
            )
        finally:
            self.control.enter()  # the child's leave() cleared the pipeline's group and pool

    def _run(self, child_id: Any) -> None:
        child = Job.objects.select_related("session", "user").get(pk=child_id)
        stopped = self.monitor.outcome is not None
        plan = child.typed_plan
        if stopped or plan is None or plan.action == Action.PIPELINE:
            message = (
                "Its pipeline was stopped."
                if stopped
                else "A pipeline cannot run another pipeline; call its function instead."
            )
            lifecycle.try_transition(
                child_id,
                jobstate.CREATED,
                jobstate.CANCELED if stopped else jobstate.FAILED,
                error=JobError(CANCELED if stopped else "FORBIDDEN", message),
            )
            return
        identity = current_identity() or "pipeline"
        with running_here(child_id), notify.watch([child_id], (notify.CANCEL,)) as watch:
            claimed = lifecycle.try_transition(
                child_id, jobstate.CREATED, jobstate.RUNNING, known=child, worker=identity
            )
            if claimed is None:
                return
            lifecycle.record_event(self.job.pk, "statement_started", {"job": str(child_id)})
            status = self._run_child(claimed, plan, watch, self.spark)
            lifecycle.record_event(
                self.job.pk, "statement_finished", {"job": str(child_id), "status": status}
            )


def run_pipeline(job: Job, plan: Plan, watch: notify.Watch, run_child: RunChild) -> str:
    """Run a claimed pipeline job to its end; returns the status it ended in."""
    from engine import pipeline_env  # the client classes load with the first pipeline

    properties = job_properties(job)
    packages = tuple(settings.TESSERA_PIPELINE_PACKAGES)
    spark = spark_session.new_job_session()
    control = SparkJobControl(spark, str(job.id), pool_of(job))
    monitor = PipelineMonitor(job.id, control, timeout_seconds(job, properties), watch)
    failure: BaseException | None = None
    control.enter()
    monitor.start()
    dataframes.claim(spark, job.id)  # its DataFrames: readable only in this session
    run = PipelineRun(job, spark, control, monitor, run_child)
    inline = statements.INLINE.set(statements.Inline(job.id, job.session_id, run.run_child))
    try:
        registration.apply_properties(spark, properties)
        function = load_pipeline(str(plan.args.get("entry_point") or ""), packages)
        args = dict(plan.args.get("args") or {})
        with pipeline_env.environment(run) as t_env:
            function(t_env, **args)
    except Exception as exc:
        failure = exc
    finally:
        statements.INLINE.reset(inline)
        monitor.stop()
        control.leave()
    if monitor.outcome is not None:  # canceled, timed out or gone: the monitor ended it
        stop_children(job.id)
        control.wait_idle(5.0)
        dataframes.release(spark, job.id, job.session_id)
        return _status_of(job.id)
    # Before its end is visible: a client that saw it end no longer sees its DataFrames.
    dataframes.release(spark, job.id, job.session_id)
    if failure is not None:
        error = _failure_error(spark, failure, packages)
        log.info("pipeline %s failed: %s", job.id, error.message)
        lifecycle.try_transition(
            job.id, jobstate.RUNNING, jobstate.FAILED, error=error, progress=control.ended()
        )
        control.record_stages()
        return _status_of(job.id)
    lifecycle.try_transition(
        job.id, jobstate.RUNNING, jobstate.FINISHED, known=job, progress=control.ended(True)
    )
    control.record_stages()
    return _status_of(job.id)


def _failure_error(spark: Any, exc: BaseException, packages: Iterable[str]) -> JobError:
    lost = spark_session.failure_of(spark, exc)
    if lost is not exc:  # the JVM died under it: SPARK_* as for any job
        return errors.job_error(lost, {})
    if isinstance(exc, CoreError) and exc.__traceback__ is not None:
        frames = pipeline_frames(exc, packages)
        if not frames:  # refused before the pipeline's code ran (allow-list, import)
            return JobError.of(exc)
    return pipeline_error(exc, packages)


def _status_of(job_id: Any) -> str:
    status = Job.objects.filter(pk=job_id).values_list("status", flat=True).first()
    return str(status or "")
