"""The server's limits on statements and session properties, and who may plan right now.

The rules themselves are pure (``core.session_properties``, ``core.limits``); this module
binds them to the settings (README, "Configuration"), and keeps the one piece of state the
web process needs: how many statements each user is planning in this process.

Why a per-process gate is enough: gunicorn runs a few processes with a few threads each
(``--workers 2 --threads 4``). Planning is CPU work in a request thread; a user who sends
many big statements at once would otherwise hold every thread of every process, and other
users' requests would wait behind them. With at most ``TESSERA_PLANNING_PER_USER``
plannings per user and ``TESSERA_PLANNING_PER_PROCESS`` in all per process, a request that
finds no free slot is answered at once (``429 TOO_MANY_REQUESTS`` with ``Retry-After``),
never queued: its thread is free again in milliseconds. So one user holds at most
``per_user * processes`` threads, planning at most ``budget`` seconds each, and every
process keeps ``threads - per_process`` threads for everything else. No shared store is
needed for that guarantee, so there is none (and nothing to clean up after a crash).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

from django.conf import settings

from core.errors import CoreError
from core.limits import StatementLimits
from core.session_properties import SessionProperties


class TooManyRequests(CoreError):
    """A request refused because the caller already uses their share; retry later."""

    code: ClassVar[str] = "TOO_MANY_REQUESTS"

    def __init__(
        self, message: str, *, retry_after: int = 1, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message, details={**(details or {}), "retry_after": retry_after})
        self.retry_after = retry_after


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


class PlanningGate:
    """Counts the plannings under way in this process, per user and in all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_user: dict[Any, int] = {}
        self._total = 0

    def in_use(self, user_id: Any = None) -> int:
        """Plannings under way (of ``user_id``, or of everyone)."""
        with self._lock:
            return self._total if user_id is None else self._by_user.get(user_id, 0)

    @contextmanager
    def slot(self, user_id: Any) -> Iterator[None]:
        """Hold one planning slot for ``user_id`` while the block runs; ``TooManyRequests``
        at once when the user (or the process) has none free."""
        per_user = max(1, int(settings.TESSERA_PLANNING_PER_USER))
        per_process = max(1, int(settings.TESSERA_PLANNING_PER_PROCESS))
        with self._lock:
            mine = self._by_user.get(user_id, 0)
            if mine >= per_user:
                raise TooManyRequests(
                    "You are already running as many statements as the server plans for one "
                    "user at a time; send this one again when they have been accepted.",
                    details={"limit": "planning_per_user", "maximum": per_user},
                )
            if self._total >= per_process:
                raise TooManyRequests(
                    "The server is planning as many statements as it can at once; send this "
                    "one again in a moment.",
                    details={"limit": "planning_per_process", "maximum": per_process},
                )
            self._by_user[user_id] = mine + 1
            self._total += 1
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


GATE = PlanningGate()
