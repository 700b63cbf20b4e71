"""The server's limits on statements and session properties, and who may plan right now.

The rules themselves are pure (``core.session_properties``, ``core.limits``); this module
binds them to the settings (README, "Configuration"), and keeps the one piece of state the
web process needs: how many statements each user is planning in this process, and who waits
for a planning slot.

Why a per-process gate is enough: gunicorn runs a few processes with a few threads each.
Planning is CPU work in a request thread; a user who sends many big statements at once
would otherwise hold every thread of every process, and other users' requests would wait
behind them. So a process plans at most ``TESSERA_PLANNING_PER_PROCESS`` statements at
once, at most ``TESSERA_PLANNING_PER_USER`` of one user, and a user who plans a statement
already never takes the process's last free slot: it stays for a user who plans nothing
(with the default 2 per process, one user plans one statement at a time in a process, as
before, and another user's statement is planned at once beside it).

Why a request waits a little instead of being refused at once: REST automation sends many
ordinary statements in parallel under one account, each planned in milliseconds; refusing
the ones that meet a busy slot turned a normal program into a stream of ``429``. A request
that finds no free slot waits on a condition variable (no polling) for at most
``TESSERA_PLANNING_WAIT_SECONDS``, and is given a slot the moment one frees — first to the
waiter whose user plans the fewest statements now, then the one that came first, so one
user's queue does not keep another user's statement waiting. Past the wait it is
``429 TOO_MANY_REQUESTS`` with ``Retry-After``. Waiting holds a thread, so it is bounded: at
most ``TESSERA_PLANNING_WAITING_PER_USER`` requests of one user wait in a process, and a
waiting request also takes one of the process's held requests
(``TESSERA_HELD_REQUESTS_PER_PROCESS``, shared with the statements' ``wait``, passed in as
``hold``): beyond either, the answer is ``429`` at once. So one user holds at most
``per_process + waiting_per_user`` threads of a process, the process keeps
``threads - per_process - held`` threads for everything else, and no shared store is needed
for that guarantee (nor anything to clean up after a crash).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from core.errors import TooManyRequests
from core.limits import StatementLimits
from core.session_properties import SessionProperties


def session_properties() -> SessionProperties:
    """The session-property registry bound to the server's limits."""
    return SessionProperties.from_settings(settings)


def statement_limits() -> StatementLimits:
    """What one statement (and one script) may hold."""
    return StatementLimits.from_settings(settings)


def budget_seconds() -> float | None:
    """The planning time budget of one statement (None: unlimited)."""
    seconds = float(settings.TESSERA_PLANNING_BUDGET_SECONDS)
    return seconds if seconds > 0 else None


Hold = Callable[[float], AbstractContextManager[float]]
"""May this request be held ``seconds`` (a thread budget): yields how long, 0: not at all."""


@contextmanager
def _unbounded(seconds: float) -> Iterator[float]:
    yield seconds


@dataclass(frozen=True)
class GateLimits:
    per_user: int
    per_process: int
    wait_seconds: float
    waiting_per_user: int

    @classmethod
    def from_settings(cls) -> GateLimits:
        return cls(
            per_user=max(1, int(settings.TESSERA_PLANNING_PER_USER)),
            per_process=max(1, int(settings.TESSERA_PLANNING_PER_PROCESS)),
            wait_seconds=max(0.0, float(settings.TESSERA_PLANNING_WAIT_SECONDS)),
            waiting_per_user=max(0, int(settings.TESSERA_PLANNING_WAITING_PER_USER)),
        )


@dataclass(eq=False)
class _Waiter:
    user_id: Any
    number: int  # arrival order


class PlanningGate:
    """Counts the plannings under way in this process, per user and in all, and hands freed
    slots to the requests waiting for one (fewest plannings of their user first, then the
    first to come)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._by_user: dict[Any, int] = {}
        self._total = 0
        self._waiting: list[_Waiter] = []
        self._arrivals = 0

    def in_use(self, user_id: Any = None) -> int:
        """Plannings under way (of ``user_id``, or of everyone)."""
        with self._lock:
            return self._total if user_id is None else self._by_user.get(user_id, 0)

    def waiting(self, user_id: Any = None) -> int:
        """Requests waiting for a slot (of ``user_id``, or of everyone)."""
        with self._lock:
            return sum(1 for w in self._waiting if user_id is None or w.user_id == user_id)

    def _could_take(self, user_id: Any, limits: GateLimits) -> bool:
        """Whether a slot is free for ``user_id``, whoever else waits."""
        if self._total >= limits.per_process:
            return False
        mine = self._by_user.get(user_id, 0)
        if mine >= limits.per_user:
            return False
        # The last free slot stays for a user who plans nothing yet.
        return not (mine and self._total == limits.per_process - 1)

    def _free_for(self, user_id: Any, me: _Waiter | None, limits: GateLimits) -> bool:
        """Whether ``user_id`` may take a slot now: one is free for them and no waiter who
        may take it too comes first (fewer plannings of their user, then earlier)."""
        if not self._could_take(user_id, limits):
            return False
        place = (self._by_user.get(user_id, 0), me.number if me else self._arrivals + 1)
        return not any(
            other is not me
            and (self._by_user.get(other.user_id, 0), other.number) < place
            and self._could_take(other.user_id, limits)
            for other in self._waiting
        )

    def _refusal(self, user_id: Any, limits: GateLimits, *, waited: bool) -> TooManyRequests:
        after = " after waiting" if waited else ""
        if self._by_user.get(user_id, 0):
            return TooManyRequests(
                "You are already running as many statements as the server plans for one "
                f"user at a time, and more of yours are waiting{after}; send this one again "
                "when they have been accepted.",
                details={"limit": "planning_per_user", "maximum": limits.per_user},
            )
        return TooManyRequests(
            f"The server is planning as many statements as it can at once{after}; send this "
            "one again in a moment.",
            details={"limit": "planning_per_process", "maximum": limits.per_process},
        )

    @contextmanager
    def slot(self, user_id: Any, hold: Hold = _unbounded) -> Iterator[None]:
        """Hold one planning slot for ``user_id`` while the block runs. With none free, wait
        for one (at most ``TESSERA_PLANNING_WAIT_SECONDS``, if the user has fewer than
        ``TESSERA_PLANNING_WAITING_PER_USER`` requests waiting and ``hold`` allows it);
        ``TooManyRequests`` when none came."""
        limits = GateLimits.from_settings()
        with self._lock:
            taken = self._take(user_id, None, limits)
        if not taken:
            with hold(limits.wait_seconds) as allowed, self._lock:
                self._wait(user_id, limits, allowed)
        try:
            yield
        finally:
            with self._lock:
                left = self._by_user[user_id] - 1
                if left:
                    self._by_user[user_id] = left
                else:
                    del self._by_user[user_id]
                self._total -= 1
                self._changed.notify_all()

    def _take(self, user_id: Any, me: _Waiter | None, limits: GateLimits) -> bool:
        """Take a slot for ``user_id`` if one is free for them (the lock held)."""
        if not self._free_for(user_id, me, limits):
            return False
        self._by_user[user_id] = self._by_user.get(user_id, 0) + 1
        self._total += 1
        return True

    def _wait(self, user_id: Any, limits: GateLimits, allowed: float) -> None:
        """Wait (the lock held; released while waiting) at most ``allowed`` seconds until a
        slot is free for ``user_id`` and take it; ``TooManyRequests`` when the user may not
        wait (nothing allowed, or enough of theirs wait already) or none came in time."""
        queued = sum(1 for w in self._waiting if w.user_id == user_id)
        if allowed <= 0 or queued >= limits.waiting_per_user:
            if self._take(user_id, None, limits):  # freed meanwhile
                return
            raise self._refusal(user_id, limits, waited=False)
        self._arrivals += 1
        me = _Waiter(user_id, self._arrivals)
        self._waiting.append(me)
        try:
            deadline = time.monotonic() + allowed
            while not self._take(user_id, me, limits):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise self._refusal(user_id, limits, waited=True)
                self._changed.wait(left)
        finally:
            self._waiting.remove(me)
            self._changed.notify_all()  # the next in line may come first now


GATE = PlanningGate()
