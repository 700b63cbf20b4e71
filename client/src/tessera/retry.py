"""When the client sends a request again: ``429`` and ``503`` answers (the server refused
for now, nothing was created), honouring ``Retry-After``, bounded and jittered."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from tessera.errors import RETRYABLE_STATUSES


@dataclass(frozen=True)
class RetryPolicy:
    """How :func:`tessera.connect`'s connection retries a refused request.

    ``max_attempts``: sends of one request at most (1: never retry). ``max_wait``: seconds
    all the waits of one request may add up to; a ``Retry-After`` that would pass it is not
    waited for (the error is raised at once). A wait is the server's ``Retry-After`` when it
    gives one, else ``backoff`` doubling with each attempt (capped at ``max_backoff``); then
    up to ``jitter`` of it is added at random, so that many clients refused together do not
    come back together. ``statuses``: the HTTP statuses retried.
    """

    max_attempts: int = 5
    max_wait: float = 60.0
    backoff: float = 0.5
    max_backoff: float = 10.0
    jitter: float = 0.25
    statuses: tuple[int, ...] = field(default=RETRYABLE_STATUSES)

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1 (1: no retry).")
        if self.max_wait < 0 or self.backoff < 0 or self.max_backoff < 0 or self.jitter < 0:
            raise ValueError("max_wait, backoff, max_backoff and jitter cannot be negative.")

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before send number ``attempt + 1`` (``attempt`` ≥ 1 were sent)."""
        if retry_after is not None and retry_after >= 0:
            base = retry_after
        else:
            base = min(self.max_backoff, self.backoff * (2 ** (attempt - 1)))
        return base + random.uniform(0, base * self.jitter)


#: The policy of a connection made without one.
DEFAULT_RETRY = RetryPolicy()
#: Never retry.
NO_RETRY = RetryPolicy(max_attempts=1)
