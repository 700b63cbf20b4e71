"""The job status machine and the job-status hook interface (pure Python).

CREATED → RUNNING → FINISHED | FAILED | CANCELED, and CREATED → CANCELED | FAILED.
The storage layer makes each transition one conditional UPDATE; this module says which
transitions exist and what a hook looks like.

One more move exists outside the machine: a *streaming* job (its plan has
``args["streaming"]``) whose worker is lost goes RUNNING → CREATED (``REQUEUE``) to be
claimed again and resume from its checkpoint. It is not a transition: no hook runs (the
CREATED hooks made the job's staging and stage table once; they are kept), its event is
``worker_lost``, and ``after_worker_lost`` decides when it applies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from core.errors import CoreError
from core.planner.plan import Plan

CREATED = "CREATED"
RUNNING = "RUNNING"
FINISHED = "FINISHED"
FAILED = "FAILED"
CANCELED = "CANCELED"

STATUSES = (CREATED, RUNNING, FINISHED, FAILED, CANCELED)
TERMINAL = frozenset({FINISHED, FAILED, CANCELED})
TRANSITIONS: Mapping[str, frozenset[str]] = {
    CREATED: frozenset({RUNNING, CANCELED, FAILED}),
    RUNNING: frozenset({FINISHED, FAILED, CANCELED}),
    FINISHED: frozenset(),
    FAILED: frozenset(),
    CANCELED: frozenset(),
}


# A streaming job whose worker is lost waits again for a worker (see the module's text).
REQUEUE = (RUNNING, CREATED)


class IllegalTransition(CoreError):
    """A transition the status machine does not have, or one that lost a race."""

    code: ClassVar[str] = "ILLEGAL_TRANSITION"


def check_transition(current: str, target: str) -> None:
    """Raise IllegalTransition unless ``current → target`` is in the status machine."""
    if current not in TRANSITIONS:
        raise IllegalTransition(f"Unknown job status '{current}'.")
    if target not in TRANSITIONS[current]:
        raise IllegalTransition(
            f"A job cannot go from {current} to {target}"
            + (" (it has already ended)." if current in TERMINAL else ".")
        )


def is_streaming(plan: Plan | None) -> bool:
    """Whether a plan runs as a stream (a long-running Structured Streaming job)."""
    return plan is not None and isinstance(plan.args.get("streaming"), Mapping)


def after_worker_lost(
    plan: Plan | None, *, cancel_requested: bool, restarts: int, max_restarts: int
) -> str:
    """Where a RUNNING job whose worker is lost goes: CANCELED when its user had asked for
    that (the worker died before it could), CREATED (requeued, ``REQUEUE``) for a stream
    resumed fewer than ``max_restarts`` times, FAILED otherwise."""
    if cancel_requested:
        return CANCELED
    if is_streaming(plan) and restarts < max_restarts:
        return CREATED
    return FAILED


@dataclass(frozen=True)
class JobView:
    """What a hook sees of a job."""

    id: str
    kind: str
    status: str
    user: str
    sql: str
    target: tuple[str, ...] | None
    plan: Plan | None  # None: the job has no plan (refused, or not planned yet)
    script: str | None = None  # the script the job is a statement of, if any
    origin: str = "user"  # who submitted it: "user", or "schedule" (a scheduled run)


Record = Callable[[str, Mapping[str, Any]], None]


class JobStatusHook(Protocol):
    """Called exactly once per transition into the named status (FLIP-218's job-status hook)."""

    def on_created(self, job: JobView, record: Record) -> None: ...
    def on_running(self, job: JobView, record: Record) -> None: ...
    def on_finished(self, job: JobView, record: Record) -> None: ...
    def on_failed(self, job: JobView, record: Record) -> None: ...
    def on_canceled(self, job: JobView, record: Record) -> None: ...


class NoOpHook:
    """A hook that does nothing; subclass and override what you need."""

    def on_created(self, job: JobView, record: Record) -> None:
        return None

    def on_running(self, job: JobView, record: Record) -> None:
        return None

    def on_finished(self, job: JobView, record: Record) -> None:
        return None

    def on_failed(self, job: JobView, record: Record) -> None:
        return None

    def on_canceled(self, job: JobView, record: Record) -> None:
        return None


HOOK_METHOD = {
    CREATED: "on_created",
    RUNNING: "on_running",
    FINISHED: "on_finished",
    FAILED: "on_failed",
    CANCELED: "on_canceled",
}
