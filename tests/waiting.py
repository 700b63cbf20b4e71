"""The one polling helper of the test suite: wait for a state, never for a duration.

``wait_until`` polls a predicate until it returns something truthy and returns that value;
after ``timeout`` seconds it fails the test with ``message``. ``poll`` is the same without
failing (for clean-ups that escalate instead, e.g. SIGKILL after a SIGINT). The timeout is
a deadline (how long a correct system may take on a loaded machine), not a measurement: no
test asserts on how long something took (figures live in ``bench/``). A predicate may
raise to stop waiting early (e.g. a job that ended in the wrong state).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

import pytest

T = TypeVar("T")


def poll(
    predicate: Callable[[], T | None],
    timeout: float,
    interval: float = 0.05,
    *,
    ignoring: tuple[type[BaseException], ...] = (),
) -> T | None:
    """Poll ``predicate`` until it returns something truthy (returned); None after
    ``timeout`` s. Exceptions of the types in ``ignoring`` count as "not yet"."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = predicate()
        except ignoring:
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            return None
        time.sleep(interval)


def wait_until(
    predicate: Callable[[], T | None],
    timeout: float = 30.0,
    interval: float = 0.05,
    message: str | Callable[[], str] = "",
    *,
    ignoring: tuple[type[BaseException], ...] = (),
) -> T:
    """``poll``, failing the test after ``timeout`` s with ``message`` (or what a callable
    ``message`` says then: the state the test saw last)."""
    value = poll(predicate, timeout, interval, ignoring=ignoring)
    if not value:
        said = message() if callable(message) else message
        pytest.fail(f"timed out after {timeout} s waiting for {said or predicate}")
    return value


def holds_for(
    predicate: Callable[[], Any],
    quiet: float,
    timeout: float = 60.0,
    message: str | Callable[[], str] = "",
) -> None:
    """Until ``predicate()`` has held on every poll for ``quiet`` seconds in a row (fail
    after ``timeout``). For a state that may flicker while stragglers finish (the tasks of
    a stopped write), where no event marks the end."""
    since: list[float] = []

    def settled() -> bool:
        now = time.monotonic()
        if not predicate():
            since.clear()
            return False
        if not since:
            since.append(now)
        return now - since[0] >= quiet

    wait_until(settled, timeout, 0.1, message)
