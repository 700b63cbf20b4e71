"""Who runs next, and how many jobs one user may have (docs/adr/0009-fair-claim.md).

A ``tessera.run_job`` message says "a worker slot is free", not "run this job": the worker
thread that takes one claims the **fairest** CREATED Spark job (``claim_next``), whichever
message named it. Fairest: the job's user has the fewest RUNNING Spark jobs, then the
oldest job. A user with ``TESSERA_USER_RUNNING_JOBS`` jobs running is not picked at all: the
job waits CREATED until one of theirs ends (``hand_on`` then sends a message for it).
Every claim is one conditional transition (CREATED → RUNNING), so a job never runs twice;
a message that finds nothing to claim does nothing.

One slot is kept for whoever comes next: a claim never gives the **last free slot** of the
live workers (their ``concurrency`` less their RUNNING Spark jobs) to a user who already
runs a Spark job; it waits CREATED (``held``, its message spent) and the next slot that
frees sends it a message (``hand_on``). So one user's long jobs, however many the running
limit allows, leave a slot that another user's statement takes at once. With one slot in
all nothing is kept. A job that waits says why once per reason (event ``queued``:
``reserved_slot`` or ``running_limit``, with its ``position``).

Claims are serialised by one transaction-level lock (PostgreSQL advisory lock; SQLite's
immediate transactions already are): the count of a user's RUNNING jobs a claim reads
cannot be changed by another claim before it commits, so the running limit holds across
any number of workers. The lock is held for one short transaction (milliseconds).

``TESSERA_USER_QUEUED_JOBS`` bounds a user's unfinished jobs (CREATED + RUNNING; a script
counts once, however many statements it holds): beyond it a new statement is refused with
``429 TOO_MANY_JOBS`` (``check_room``) and nothing is created. The count is taken again
under a per-user lock in the transaction that inserts the job (``reserve_room``), so two
requests at once cannot both take the last place.

Streams (docs/streaming.md): a streaming job holds its worker slot until it is
canceled or fails, so each worker process takes at most its ``stream_slots`` of them
(``jobs.worker``: ``TESSERA_WORKER_MAX_STREAMS``, never its last slot); a claim by a worker
whose stream slots are full passes streams over (``claim_next``). A streaming statement is
admitted only while the live workers have a stream slot free for it, counted under a lock
in the transaction that inserts it (``reserve_stream``); otherwise ``429
TOO_MANY_STREAMS`` and nothing is created (with no live worker at all, it waits CREATED
like any job). A stream requeued after a lost worker
(``jobs.maintenance.lose_job``) was admitted already: it waits CREATED for a free slot.

No pyspark here: the web process imports this module.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Callable
from typing import Any, ClassVar

from django.conf import settings
from django.db import connection, transaction
from django.db.models import (
    BooleanField,
    Count,
    ExpressionWrapper,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
)
from django.db.models.functions import Coalesce

from core import jobstate
from core.errors import CoreError, TooManyStreams
from core.planner import Plan
from jobs import dispatch, lifecycle
from jobs.models import Job, JobEvent, Worker

log = logging.getLogger(__name__)

# Keys of PostgreSQL's advisory locks (two 32-bit ints: namespace, key).
_LOCK_NAMESPACE = zlib.crc32(b"tessera.jobs.scheduling") & 0x7FFFFFFF
_CLAIM_KEY = 0
# The admission of streams: its own namespace (user keys are 1…2^31-1 in the other).
_STREAM_NAMESPACE = zlib.crc32(b"tessera.jobs.streams") & 0x7FFFFFFF
# A refused client is told to try again after this many seconds.
RETRY_AFTER_SECONDS = 5
UNFINISHED = (jobstate.CREATED, jobstate.RUNNING)
# Jobs a claim tries before it gives up (another one can only be lost to a cancel or an
# end that committed between the choice and the UPDATE).
CLAIM_ATTEMPTS = 3


class TooManyJobs(CoreError):
    """A user already has ``TESSERA_USER_QUEUED_JOBS`` unfinished jobs (HTTP 429)."""

    code: ClassVar[str] = "TOO_MANY_JOBS"

    def __init__(self, message: str, *, details: dict[str, Any]) -> None:
        super().__init__(message, details={**details, "retry_after": RETRY_AFTER_SECONDS})
        self.retry_after = RETRY_AFTER_SECONDS


# --- limits ------------------------------------------------------------------------------------


def running_limit() -> int | None:
    """How many Spark jobs of one user run at once, on all workers together (None: no limit)."""
    limit = int(settings.TESSERA_USER_RUNNING_JOBS)
    return limit if limit > 0 else None


def queued_limit() -> int | None:
    """How many unfinished jobs one user may have (None: no limit)."""
    limit = int(settings.TESSERA_USER_QUEUED_JOBS)
    return limit if limit > 0 else None


# --- who is next ------------------------------------------------------------------------------


def spark_jobs() -> QuerySet[Job]:
    """Jobs a worker runs: their plan needs Spark (a script's statement gets its plan, and so
    becomes one of these, only when its turn comes)."""
    return Job.objects.filter(plan__needs_spark=True, parent__isnull=True)


def _running_of_user() -> Subquery:
    running = (
        spark_jobs()
        .filter(status=jobstate.RUNNING, user_id=OuterRef("user_id"))
        .order_by()
        .values("user_id")
        .annotate(n=Count("id"))
        .values("n")
    )
    return Subquery(running, output_field=IntegerField())


def with_user_running() -> QuerySet[Job]:
    """CREATED Spark jobs, each with ``user_running``: how many of its user's run now."""
    return (
        spark_jobs()
        .filter(status=jobstate.CREATED)
        .annotate(user_running=Coalesce(_running_of_user(), 0))
    )


def held_back() -> Q:
    """Jobs that wait only because their user is at the running limit (as a filter on
    ``with_user_running``); nothing when there is no limit."""
    limit = running_limit()
    return Q(user_running__gte=limit) if limit is not None else Q(pk__in=[])


def eligible(streams: bool = True) -> QuerySet[Job]:
    """The CREATED Spark jobs a free slot may take now, fairest first: the user with the
    fewest running jobs, then the oldest job. ``streams`` False: not streaming jobs (the
    slot's worker has no stream slot free)."""
    jobs = with_user_running().exclude(held_back())
    if not streams:
        jobs = jobs.exclude(streaming())
    return jobs.order_by("user_running", "created_at", "id")


# --- streams ----------------------------------------------------------------------------------


def streaming() -> Q:
    """Streaming jobs (their plan has ``args.streaming``, ``jobstate.is_streaming``)."""
    return Q(plan__args__has_key="streaming")


def free_stream_slots(worker: str) -> int:
    """Stream slots of the worker process ``worker`` (an identity) not taken by its running
    streams. A process without a heartbeat row (run by hand, tests) has
    ``TESSERA_WORKER_MAX_STREAMS``."""
    slots = Worker.objects.filter(hostname=worker).values_list("stream_slots", flat=True).first()
    if slots is None:
        slots = max(int(settings.TESSERA_WORKER_MAX_STREAMS), 0)
    taken = spark_jobs().filter(streaming(), status=jobstate.RUNNING, worker=worker).count()
    return int(slots) - taken


def stream_room() -> dict[str, int]:
    """The live workers' stream slots (``slots``, on ``workers`` processes) and the
    streaming jobs that hold or will take one (``streams``: RUNNING, or CREATED — new, or
    requeued after a lost worker)."""
    live = dispatch.live_workers().aggregate(workers=Count("id"), slots=Sum("stream_slots"))
    streams = spark_jobs().filter(streaming(), status__in=UNFINISHED).count()
    return {"workers": live["workers"] or 0, "slots": live["slots"] or 0, "streams": streams}


def check_stream_room() -> None:
    """Raise ``TooManyStreams`` unless the live workers have a stream slot free. With no
    live worker at all (none started yet, or one restarting) the stream is admitted: it
    waits CREATED for a worker, as every job does then."""
    room = stream_room()
    workers, slots, streams = room["workers"], room["slots"], room["streams"]
    if streams < slots or workers == 0:
        return
    if slots == 0:
        who = (
            "The live worker runs no streams"
            if workers == 1
            else f"None of the {workers:,} live workers runs streams"
        )
        message = (
            f"{who} (a worker runs at most "
            "TESSERA_WORKER_MAX_STREAMS, and never in its last slot: a worker with "
            "--concurrency 1 runs none); start a worker with more slots, then send the "
            "statement again."
        )
    else:
        message = (
            f"Every stream slot of the live workers is taken ({_count(streams, 'stream')} "
            f"for {_count(slots, 'slot')} on {_count(workers, 'worker')}). Stop a stream you "
            "no longer need (POST /jobs/{id}/cancel) or start another worker, then send the "
            "statement again."
        )
    raise TooManyStreams(message, details=room)


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def user_streams_limit() -> int | None:
    """How many streams one user may have running or waiting (None: no limit)."""
    limit = int(settings.TESSERA_USER_STREAMS)
    return limit if limit > 0 else None


def streams_of(user_id: Any) -> int:
    """The user's streams that hold or will take a stream slot (RUNNING or CREATED)."""
    return spark_jobs().filter(streaming(), status__in=UNFINISHED, user_id=user_id).count()


def check_user_streams(user_id: Any) -> None:
    """Raise ``TooManyStreams`` when the user has ``TESSERA_USER_STREAMS`` streams already:
    their own limit, whatever the workers have free."""
    limit = user_streams_limit()
    if limit is None:
        return
    mine = streams_of(user_id)
    if mine < limit:
        return
    raise TooManyStreams(
        f"You already have {_count(mine, 'stream')} running or waiting, the most the server "
        f"runs for one user (TESSERA_USER_STREAMS is {limit:,}). Stop one you no longer need "
        "(POST /jobs/{id}/cancel), then send the statement again.",
        details={"limit": "user_streams", "streams": mine, "maximum": limit},
    )


def reserve_stream(plan: Plan | None, user_id: Any = None) -> None:
    """For a streaming plan: the user's own limit (``check_user_streams``, when ``user_id``
    is given), then ``check_stream_room``, inside the transaction that inserts the job,
    under a lock held until it commits (two statements cannot both take the last stream
    slot, or a user's last stream). Anything else: nothing."""
    if not jobstate.is_streaming(plan):
        return
    _lock(0, _STREAM_NAMESPACE)
    if user_id is not None:
        check_user_streams(user_id)
    check_stream_room()


def _lock(key: int, namespace: int = _LOCK_NAMESPACE) -> None:
    """A transaction-level lock on PostgreSQL. SQLite needs none: its transactions are
    immediate (``webapp.settings``), one writer at a time from the first statement."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s::int, %s::int)", [namespace, key])


def claim_next(worker: str, before_claim: Callable[[Any], None] | None = None) -> Job | None:
    """Claim the fairest eligible job for ``worker`` (CREATED → RUNNING); None if there is
    none. ``before_claim(job_id)`` runs before the claim commits (the worker's cancel watch:
    a cancel asked the moment the job is RUNNING is not missed).

    No ``SELECT … FOR UPDATE SKIP LOCKED``: under the claims' lock no other claim holds a
    row, and the rows other writers hold for a moment (the dispatcher noting that it sent a
    job, a cancel) must not be skipped: the message of a job skipped that way would be
    spent on nothing. The claim waits for them instead (milliseconds); a job that ended
    meanwhile fails the conditional UPDATE and the next one is tried.

    A worker whose stream slots are all taken (``free_stream_slots``) passes streaming jobs
    over. A stream requeued after a lost worker (a CREATED job with a ``started_at``) keeps
    its first start and gets the event ``resumed`` ({"worker", "restart"})."""
    with transaction.atomic():
        _lock(_CLAIM_KEY)
        streams: bool | None = None  # whether this worker has a stream slot free: asked
        for _ in range(CLAIM_ATTEMPTS):  # only when the fairest job is a stream
            found = _next_eligible(streams is not False)
            if found is not None and found[1] and streams is None:
                streams = free_stream_slots(worker) > 0
                if not streams:
                    found = _next_eligible(False)
            if found is None:
                return None
            if keeps_slot(worker, found[0], found[2]):  # the pool's last free slot
                _hold(streams is not False)
                return None
            job_id = found[0]
            if before_claim is not None:
                before_claim(job_id)
            job = Job.objects.select_related("session", "user").filter(pk=job_id).first()
            if job is None:  # deleted with its user meanwhile
                continue
            first_start = job.started_at
            fields: dict[str, Any] = {"worker": worker, "held": False}
            if first_start is not None:
                fields["started_at"] = first_start
            claimed = lifecycle.try_transition(
                job_id, jobstate.CREATED, jobstate.RUNNING, known=job, **fields
            )
            if claimed is not None:
                if first_start is not None:
                    _resumed(job_id, worker)
                return claimed
    return None


def _resumed(job_id: Any, worker: str) -> None:
    restart = lifecycle.restarts_of(job_id)
    lifecycle.record_event(job_id, "resumed", {"worker": worker, "restart": restart})
    log.warning("job %s resumed on %s (restart %d)", job_id, worker, restart)


def _next_eligible(streams: bool) -> tuple[Any, bool, int] | None:
    """(id, is a stream, its user's running jobs) of the job a free slot would take now;
    None: none."""
    flag = ExpressionWrapper(streaming(), output_field=BooleanField())
    row = (
        eligible(streams).annotate(stream=flag).values_list("id", "stream", "user_running").first()
    )
    return (row[0], bool(row[1]), int(row[2])) if row is not None else None


# --- the slot kept for whoever comes next -------------------------------------------------------


def pool_slots(worker: str) -> tuple[int, int] | None:
    """(free, all) slots of the live workers and ``worker`` (the claiming one, live by
    definition): their ``concurrency`` less their RUNNING Spark jobs. None when the
    claiming worker's concurrency is not known (no heartbeat row yet, or a process run by
    hand): nothing is kept then. Workers of unknown concurrency count for nothing."""
    pool = dispatch.live_workers() | Worker.objects.filter(hostname=worker)
    rows = list(pool.values_list("hostname", "concurrency"))
    if not any(name == worker and slots > 0 for name, slots in rows):
        return None
    known = [name for name, slots in rows if slots > 0]
    total = sum(slots for _, slots in rows)
    running = spark_jobs().filter(status=jobstate.RUNNING, worker__in=known).count()
    return total - running, total


def keeps_slot(worker: str, job_id: Any, user_running: int) -> bool:
    """Whether ``worker``'s claim of ``job_id`` (its user runs ``user_running`` Spark jobs)
    must leave its slot free: the last free one of the pool (of more than one), while the user
    runs a batch job. Streams do not count: they hold a slot for hours, are capped apart and
    never take a worker's last slot, and their user's queries must still run beside them."""
    slots = pool_slots(worker) if user_running >= 1 else None
    if slots is None or slots[1] <= 1 or slots[0] > 1:
        return False
    user = Subquery(Job.objects.filter(pk=job_id).values("user_id")[:1])
    return spark_jobs().filter(status=jobstate.RUNNING, user_id=user).exclude(streaming()).exists()


def _hold(streams: bool) -> None:
    """A message is spent on nothing because the last slot is kept: the fairest job without
    a debt yet (``held``) is owed one, which ``hand_on`` sends when a slot frees."""
    job_id = eligible(streams).filter(held=False).values_list("id", flat=True).first()
    if job_id is None:  # every waiting job is owed one already (more messages than jobs)
        return
    Job.objects.filter(pk=job_id).update(held=True)
    queued(job_id, "reserved_slot")


QUEUED = "queued"
# Waiting jobs a position is counted among at most (the claim's order is read, not stored).
POSITION_HORIZON = 1000


def queued(job_id: Any, reason: str) -> bool:
    """Record once per job and reason why a CREATED job waits: event ``queued`` with
    ``reason`` (``reserved_slot``: the last free slot is kept for a user with nothing
    running; ``running_limit``: its user runs ``TESSERA_USER_RUNNING_JOBS`` jobs),
    ``position`` (1: the next a free slot takes; for the running limit, among the user's own
    waiting jobs, which run oldest first as theirs end) and ``running`` (its user's Spark
    jobs running). True if recorded now."""
    if JobEvent.objects.filter(job_id=job_id, type=QUEUED, detail__reason=reason).exists():
        return False
    row = (
        spark_jobs()
        .filter(pk=job_id, status=jobstate.CREATED)
        .annotate(running=Coalesce(_running_of_user(), 0))
        .values_list("user_id", "created_at", "running")
        .first()
    )
    if row is None:  # claimed or ended meanwhile
        return False
    user_id, created_at, running = row
    detail: dict[str, Any] = {"reason": reason, "running": int(running)}
    if reason == "running_limit":
        mine = spark_jobs().filter(status=jobstate.CREATED, user_id=user_id)
        ahead = mine.filter(
            Q(created_at__lt=created_at) | Q(created_at=created_at, id__lt=job_id)
        ).count()
        detail.update(position=ahead + 1, limit=running_limit())
    else:
        order = [str(pk) for pk in eligible().values_list("id", flat=True)[:POSITION_HORIZON]]
        place = order.index(str(job_id)) + 1 if str(job_id) in order else len(order) + 1
        detail["position"] = place
    lifecycle.record_event(job_id, QUEUED, detail)
    return True


def note_waiting(job_id: Any) -> bool:
    """A message sent for ``job_id`` claimed nothing: if the job waits because its user is at
    the running limit, say so once (``queued``). True if recorded now."""
    if running_limit() is None:
        return False
    held = with_user_running().filter(held_back(), pk=job_id).exists()
    return held and queued(job_id, "running_limit")


def next_eligible(streams: bool = True) -> Any:
    """The id of the job a free slot would take now (None: none), without claiming it;
    ``streams`` False: not a streaming job."""
    return eligible(streams).values_list("id", flat=True).first()


# --- how many a user may have ------------------------------------------------------------------


def unfinished_of(user_id: Any) -> tuple[int, int]:
    """(running, waiting) units of ``user_id``: unfinished jobs, a script counted once (as
    running while one of its statements runs)."""
    rows = (
        Job.objects.filter(user_id=user_id, status__in=UNFINISHED)
        .annotate(unit=Coalesce("script_id", "parent_id", "id"))
        .values("unit")
        .annotate(running=Count("id", filter=Q(status=jobstate.RUNNING)))
        .values_list("running", flat=True)
    )
    counts = list(rows)
    running = sum(1 for n in counts if n)
    return running, len(counts) - running


def check_room(user_id: Any, adding: int = 1) -> None:
    """Raise ``TooManyJobs`` when ``adding`` more unfinished jobs (a script: 1) would take
    the user past ``TESSERA_USER_QUEUED_JOBS``."""
    limit = queued_limit()
    if limit is None:
        return
    running, waiting = unfinished_of(user_id)
    if running + waiting + adding <= limit:
        return
    raise TooManyJobs(
        f"You have {running + waiting:,} unfinished jobs ({running:,} running, {waiting:,} "
        f"waiting for a worker); the server keeps at most {limit:,} per user. Wait for some "
        "to finish, or cancel those you no longer need (POST /jobs/{id}/cancel), then send "
        "this again.",
        details={"running": running, "queued": waiting, "maximum": limit},
    )


def reserve_room(user_id: Any, adding: int = 1) -> None:
    """``check_room`` inside the transaction that inserts the jobs, under a per-user lock
    held until it commits: two requests of one user cannot both take the last place."""
    if queued_limit() is None:
        return
    _lock(_user_key(user_id))
    check_room(user_id, adding)


def _user_key(user_id: Any) -> int:
    # Key 0 is the claims' lock; user ids are positive integers.
    return (int(user_id) % 0x7FFFFFFF) + 1


def hand_on(user_id: Any) -> bool:
    """After a job of ``user_id`` ended in this worker (a slot is free), send the messages
    the jobs waiting for that slot are owed:

    - a job a claim passed over to keep the pool's last slot (``held``): its message was
      spent then; the first one is sent again (its debt cleared by a conditional UPDATE, so
      two ends never send for the same debt);
    - one of the ended job's user's jobs that is eligible now: a job held back by its user's
      running limit may have had its message taken by a slot that found nothing to claim.
      Only the user of the ended job can have such a job that became eligible by this end
      (a slot freed by the reaper is the sweeper's).

    So at most two messages per ended job, and only while jobs wait; a message with nothing
    left to claim does nothing. True if one was sent."""
    sent = False
    owed = eligible().filter(held=True).values_list("id", flat=True).first()
    if owed is not None and Job.objects.filter(pk=owed, held=True).update(held=False) == 1:
        sent = dispatch.enqueue(owed)
    if running_limit() is None:  # nothing is held back by the limit
        return sent
    job_id = eligible().filter(user_id=user_id).values_list("id", flat=True).first()
    if job_id is None or job_id == owed:
        return sent
    return dispatch.enqueue(job_id) or sent
