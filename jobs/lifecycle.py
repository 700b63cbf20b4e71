"""Job transitions: one conditional UPDATE each, events, and the transition's steps.

Whoever wins the UPDATE (exactly one row changed) records the event and runs the steps of
that transition, exactly once. A caller that loses the race gets IllegalTransition and runs
nothing. The steps — a write's staging and commit, the statistics of ANALYZE TABLE, a
script's next statement — are listed in order in ``jobs.steps``, which hands them to
``install_steps`` once per process. ``register_hook`` adds a ``JobStatusHook`` (FLIP-218's
interface; tests use it) that runs after the steps of its phase.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from django.db import transaction
from django.utils import timezone

from core import jobstate, storable
from core.jobstate import IllegalTransition, JobStatusHook, JobView, Record
from jobs import notify
from jobs.errors import JobError
from jobs.models import Job, JobEvent

log = logging.getLogger(__name__)

Step = Callable[[JobView, Record], None]


@dataclass(frozen=True)
class Steps:
    """What a transition into a status does besides its row and its event, in order.

    ``inside``: run inside the transition's transaction; a step that raises rolls the
    transition back and its error reaches the caller (a commit that fails leaves no
    FINISHED job). ``after``: run once the transaction committed, in whichever process made
    the transition; a step that raises is logged and recorded (event ``hook_failed``),
    never re-run, and the steps after it still run."""

    inside: Mapping[str, Sequence[Step]] = field(default_factory=dict)
    after: Mapping[str, Sequence[Step]] = field(default_factory=dict)


_steps = Steps()


def install_steps(steps: Steps) -> None:
    """The steps of every transition from now on (``jobs.steps.install``, once per
    process)."""
    global _steps
    _steps = steps


_HOOKS: dict[str, list[JobStatusHook]] = defaultdict(list)
ANY_KIND = "*"


def register_hook(hook: JobStatusHook, kind: str = ANY_KIND) -> None:
    """Run ``hook`` on every transition of jobs of ``kind`` (or of every kind)."""
    _HOOKS[kind].append(hook)


def unregister_hook(hook: JobStatusHook, kind: str = ANY_KIND) -> None:
    _HOOKS[kind].remove(hook)


def hooks_for(kind: str) -> list[JobStatusHook]:
    return [*_HOOKS[ANY_KIND], *_HOOKS[kind]]


def record_event(job_id: Any, type_: str, detail: Mapping[str, Any] | None = None) -> None:
    JobEvent.objects.create(job_id=job_id, type=type_, detail=dict(detail or {}))


def job_view(job: Job) -> JobView:
    return JobView(
        id=str(job.id),
        kind=job.kind,
        status=job.status,
        user=job.user.get_username(),
        sql=job.sql,
        target=tuple(job.target) if job.target else None,
        plan=job.typed_plan,
        script=str(job.script_id) if job.script_id is not None else None,
        origin=job.origin,
    )


def _in_transaction(hook: JobStatusHook) -> bool:
    return bool(getattr(hook, "in_transaction", False))


def _recorder(job: Job) -> Record:
    def record(type_: str, detail: Mapping[str, Any]) -> None:
        record_event(job.id, type_, detail)

    return record


def _run_steps_inside(job: Job, status: str) -> None:
    """The ``inside`` steps of ``status``, then the hooks with ``in_transaction = True``:
    inside the transition's transaction; one that raises rolls the transition back and the
    error reaches the caller."""
    method = jobstate.HOOK_METHOD[status]
    view, record = job_view(job), _recorder(job)
    for step in _steps.inside.get(status, ()):
        step(view, record)
    for hook in hooks_for(job.kind):
        if _in_transaction(hook):
            getattr(hook, method)(view, record)


def _run_steps_after(job: Job, status: str) -> None:
    """The ``after`` steps of ``status``, then the other hooks: after the transaction; a
    failure is recorded, never lost, never re-run, and the rest still run."""
    method = jobstate.HOOK_METHOD[status]
    view, record = job_view(job), _recorder(job)
    for step in _steps.after.get(status, ()):
        _guarded(job, step.__name__, method, partial(step, view, record))
    for hook in hooks_for(job.kind):
        if not _in_transaction(hook):
            call = partial(getattr(hook, method), view, record)
            _guarded(job, type(hook).__name__, method, call)


def _guarded(job: Job, name: str, method: str, call: Callable[[], None]) -> None:
    try:
        call()
    except Exception as exc:  # recorded, never lost, never re-run
        log.exception("job %s: %s (%s) failed", job.id, name, method)
        record_event(job.id, "hook_failed", {"hook": name, "method": method, "error": str(exc)})


def created(job: Job) -> None:
    """Record the CREATED event and run the CREATED steps for a job just inserted (call it in
    the transaction that inserted the job: an inside step that raises aborts both)."""
    record_event(job.id, "created", {"status": jobstate.CREATED})
    _run_steps_inside(job, jobstate.CREATED)
    _run_steps_after(job, jobstate.CREATED)


def transition(
    job_id: Any,
    current: str,
    target: str,
    *,
    known: Job | None = None,
    held_by: str | None = None,
    error: JobError | Mapping[str, Any] | None = None,
    **fields: Any,
) -> Job:
    """Move a job from ``current`` to ``target`` with one conditional UPDATE.

    ``error``: why it failed or was canceled, stored as ``JobError.to_json`` (a mapping is
    taken as that JSON already). ``fields`` are written in the same UPDATE (result, worker,
    …); ``started_at`` and ``finished_at`` are set here. Raises IllegalTransition when the
    machine forbids it or when the job is no longer in ``current`` (somebody else moved it
    first).

    ``held_by``: a worker identity (``jobs.worker``) the job's ``Job.worker`` must still be,
    in the same UPDATE. A runner passes the identity it claimed the job under: a stream
    requeued while its worker was taken for lost (paused, cut off from the database) and
    claimed by another worker since is RUNNING again, but not this runner's to end
    (docs/streaming.md, "A stream survives its worker"). None or "": no such condition.

    ``known``: the caller's copy of the row (with its user), brought up to date in memory
    instead of read again after the UPDATE (the worker's claim and end: one query less each).
    Its other fields are as the caller read them.
    """
    jobstate.check_transition(current, target)
    if error is not None:  # Spark's messages may echo data holding a NUL
        json = error.to_json() if isinstance(error, JobError) else dict(error)
        fields["error"] = storable.scrubbed(json)
    now = timezone.now()
    if target == jobstate.RUNNING:
        fields.setdefault("started_at", now)
        fields.setdefault("heartbeat_at", now)
    if target in jobstate.TERMINAL:
        fields.setdefault("finished_at", now)
    condition: dict[str, Any] = {"pk": job_id, "status": current}
    if held_by:
        condition["worker"] = held_by
    with transaction.atomic():
        changed = Job.objects.filter(**condition).update(status=target, **fields)
        if changed != 1:
            row = Job.objects.filter(pk=job_id).values("status", "worker").first()
            actual = row["status"] if row is not None else None
            if row is not None and actual == current and held_by:
                raise IllegalTransition(
                    f"Job {job_id} is held by worker {row['worker'] or '(none)'} now, not "
                    f"{held_by}: it cannot go to {target} from here."
                )
            raise IllegalTransition(
                f"Job {job_id} is {actual or 'gone'}, not {current}: it cannot go to {target}."
            )
        detail: dict[str, Any] = {"from": current, "to": target}
        if fields.get("error"):
            detail["error"] = fields["error"]
        if known is not None and known.pk == job_id:
            job = known
            job.status = target
            for name, value in fields.items():
                setattr(job, name, value)
        else:
            job = Job.objects.select_related("user").get(pk=job_id)
        # The inside steps are part of the transition (a write's commit happens inside
        # FINISHED, which fails with it): their events (``data_committed``) come first, and
        # the status event is recorded once they have run, so the timeline — ordered by
        # event id — reads in the order things happened.
        _run_steps_inside(job, target)
        record_event(job_id, target.lower(), detail)
        notify.announce(job_id, notify.ENDED if target in jobstate.TERMINAL else notify.STATUS)
    _run_steps_after(job, target)
    return job


def try_transition(
    job_id: Any,
    current: str,
    target: str,
    *,
    known: Job | None = None,
    held_by: str | None = None,
    error: JobError | Mapping[str, Any] | None = None,
    **fields: Any,
) -> Job | None:
    """``transition`` for callers that race by design (claim, cancel, reap): None if lost
    (``held_by``: see ``transition``)."""
    try:
        return transition(
            job_id, current, target, known=known, held_by=held_by, error=error, **fields
        )
    except IllegalTransition:
        return None


def requeue(job_id: Any, detail: Mapping[str, Any], event: str = "worker_lost") -> bool:
    """A stream whose worker is lost waits for a worker again (``jobstate.REQUEUE``:
    RUNNING → CREATED, one conditional UPDATE). Not a transition: no step runs — the job
    keeps the staging and stage table its CREATED steps made, and its checkpoint — and the
    event is ``event`` (``detail`` plus from/to): ``worker_lost``, or ``engine_lost`` for a
    read lost with its engine (``jobs.engines.lose_with_engine``). ``started_at`` is kept
    (the stream's first start; a CREATED job with one is a requeued one), the claim's fields
    are cleared.
    False when the job was no longer RUNNING (somebody else moved it first)."""
    current, target = jobstate.REQUEUE
    with transaction.atomic():
        changed = Job.objects.filter(pk=job_id, status=current).update(
            status=target, worker="", heartbeat_at=None, enqueued_at=None, enqueue_count=0
        )
        if changed != 1:
            return False
        record_event(job_id, event, {"from": current, "to": target, **detail})
        notify.announce(job_id, notify.STATUS)
    return True


def restarts_of(job_id: Any) -> int:
    """How many times a stream was requeued after a lost worker (its ``worker_lost``
    events)."""
    return JobEvent.objects.filter(job_id=job_id, type="worker_lost").count()
