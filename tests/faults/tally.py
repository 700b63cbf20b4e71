"""How often each fault was injected and how often the invariant held (``inject``).

A module of its own (not the conftest), so that the tests and the conftest's report share
one tally."""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable

import pytest

REPEATS = int(os.environ.get("TESSERA_FAULT_REPEATS", "3"))
WORKER_TIMEOUT_SECONDS = 4  # as the workers are told (tests/workers.py WORKER_ENV)


class Tally:
    def __init__(self) -> None:
        self.counts: dict[str, dict[str, int]] = {}
        self.failures: dict[str, list[str]] = {}

    def record(self, fault: str, survived: bool, why: str = "") -> None:
        counts = self.counts.setdefault(fault, {"injected": 0, "survived": 0})
        counts["injected"] += 1
        counts["survived"] += int(survived)
        if not survived:
            self.failures.setdefault(fault, []).append(why)

    def lines(self) -> list[str]:
        return [
            f"{c['survived']}/{c['injected']} {fault}" for fault, c in sorted(self.counts.items())
        ]


TALLY = Tally()


def inject(fault: str, attempt: Callable[[int], None], repeats: int = REPEATS) -> None:
    """Run ``attempt(i)`` (inject the fault once, check the invariant) ``repeats`` times;
    count each; fail the test at the end if any injection broke the invariant."""
    broken: list[str] = []
    for number in range(repeats):
        try:
            attempt(number)
        except (Exception, pytest.fail.Exception) as exc:
            why = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            sys.stderr.write(f"\n{fault} #{number + 1} broke the invariant:\n")
            traceback.print_exc()
            TALLY.record(fault, False, why)
            broken.append(f"#{number + 1}: {why}")
        else:
            TALLY.record(fault, True)
    if broken:
        pytest.fail(f"{len(broken)}/{repeats} {fault} broke the invariant:\n" + "\n".join(broken))


def time_limit(per_injection: float, setup: float = 180) -> pytest.MarkDecorator:
    """pytest-timeout's limit for a test injecting its fault ``REPEATS`` times."""
    return pytest.mark.timeout(int(setup + REPEATS * per_injection))
