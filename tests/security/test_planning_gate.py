"""The planning gate (sessions/planning.py, docs/security.md §4 "Planning budget and planning
slots"): a statement that finds no free planning slot waits briefly for one instead of
being refused, a freed slot goes to the waiter whose user plans the fewest statements, the
waits are bounded (time, waiters per user, the process's held requests), and one user's
parallel program is accepted whole.

The gate's own tests are handshakes between threads (events, the gate's counts), never
sleeps; the web test runs three threads of one user through the real views.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection

from core.errors import TooManyRequests
from jobs.models import Job
from sessions import planning
from tests.conftest import API, PASSWORD, client_for
from tests.waiting import wait_until


@pytest.fixture
def gate(settings: Any) -> planning.PlanningGate:
    settings.TESSERA_PLANNING_PER_USER = 4
    settings.TESSERA_PLANNING_PER_PROCESS = 2
    settings.TESSERA_PLANNING_WAIT_SECONDS = 30  # a deadline; the handshakes end the waits
    settings.TESSERA_PLANNING_WAITING_PER_USER = 4
    return planning.PlanningGate()


class Holder:
    """A thread that takes a slot of ``user`` and keeps it until ``release``."""

    def __init__(self, gate: planning.PlanningGate, user: str, order: list[str]) -> None:
        self.user, self.order = user, order
        self.taken, self.done = threading.Event(), threading.Event()
        self.error: BaseException | None = None
        self._release = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(gate,), daemon=True)
        self.thread.start()

    def _run(self, gate: planning.PlanningGate) -> None:
        try:
            with gate.slot(self.user):
                self.order.append(self.user)
                self.taken.set()
                self._release.wait(30)
        except BaseException as exc:
            self.error = exc
        finally:
            self.done.set()

    def release(self) -> None:
        self._release.set()
        assert self.done.wait(30)


def _waiting(gate: planning.PlanningGate, count: int) -> None:
    wait_until(lambda: gate.waiting() == count, 10, 0.01, f"{count} waiters")


def test_a_request_waits_for_a_slot_instead_of_429(gate: planning.PlanningGate) -> None:
    order: list[str] = []
    first = Holder(gate, "bob", order)
    assert first.taken.wait(10)
    second = Holder(gate, "bob", order)  # the last free slot is not for bob: he waits
    _waiting(gate, 1)
    with gate.slot("alice"):  # who plans nothing takes it at once
        assert gate.in_use() == 2
    assert not second.taken.is_set()
    first.release()
    assert second.taken.wait(10) and second.error is None
    second.release()
    assert gate.in_use() == 0 and gate.waiting() == 0
    assert order == ["bob", "bob"]


def test_a_freed_slot_goes_to_the_user_planning_fewest(gate: planning.PlanningGate) -> None:
    order: list[str] = []
    bob, carol = Holder(gate, "bob", order), Holder(gate, "carol", order)
    assert bob.taken.wait(10) and carol.taken.wait(10)
    bob_waits = Holder(gate, "bob", order)
    _waiting(gate, 1)
    dave_waits = Holder(gate, "dave", order)  # came later, but dave plans nothing
    erin_waits = Holder(gate, "erin", order)  # the same as dave, and later
    _waiting(gate, 3)
    carol.release()
    assert dave_waits.taken.wait(10)
    assert not bob_waits.taken.is_set() and not erin_waits.taken.is_set()
    dave_waits.release()
    assert erin_waits.taken.wait(10)
    bob.release()
    assert bob_waits.taken.wait(10)
    assert order == ["bob", "carol", "dave", "erin", "bob"]
    erin_waits.release()
    bob_waits.release()


def test_waits_are_bounded_per_user_by_time_and_by_the_held_budget(
    gate: planning.PlanningGate, settings: Any
) -> None:
    settings.TESSERA_PLANNING_WAITING_PER_USER = 1
    order: list[str] = []
    bob, carol = Holder(gate, "bob", order), Holder(gate, "carol", order)
    assert bob.taken.wait(10) and carol.taken.wait(10)
    waiter = Holder(gate, "bob", order)
    _waiting(gate, 1)
    # A second request of bob's may not wait too: 429 at once, without taking a thread.
    with pytest.raises(TooManyRequests) as refused, gate.slot("bob"):
        pass
    assert refused.value.details["limit"] == "planning_per_user"
    assert "after waiting" not in refused.value.message

    # Carol may wait; with no held request left in the process, nobody may.
    @contextlib.contextmanager
    def no_room(seconds: float) -> Iterator[float]:
        yield 0.0

    with pytest.raises(TooManyRequests), gate.slot("carol", no_room):
        pass
    # A wait that sees no slot free in time ends 429 (a short deadline; no slot frees).
    settings.TESSERA_PLANNING_WAIT_SECONDS = 0.05
    with pytest.raises(TooManyRequests) as late, gate.slot("erin"):
        pass
    assert "after waiting" in late.value.message
    assert late.value.details["limit"] == "planning_per_process"
    for holder in (bob, carol, waiter):
        holder.release()
    assert gate.in_use() == 0 and gate.waiting() == 0


def test_the_per_user_limit_holds_while_the_user_waits(
    gate: planning.PlanningGate, settings: Any
) -> None:
    settings.TESSERA_PLANNING_PER_USER = 1
    settings.TESSERA_PLANNING_PER_PROCESS = 4
    order: list[str] = []
    bob = Holder(gate, "bob", order)
    assert bob.taken.wait(10)
    bob_again = Holder(gate, "bob", order)  # a slot of the process is free, not of bob's
    _waiting(gate, 1)
    with gate.slot("alice"):  # alice is not held up by bob's waiting request
        pass
    assert not bob_again.taken.is_set()
    bob.release()
    assert bob_again.taken.wait(10)
    bob_again.release()


def test_three_threads_of_one_user_send_30_statements_each_and_none_is_refused(
    transactional_db: None, settings: Any
) -> None:
    settings.TESSERA_PLANNING_PER_PROCESS = 2  # one at a time for one user: overlaps wait
    user = User.objects.create_user("automation", password=PASSWORD)
    statements = ["SHOW CATALOGS", "SET 'result.max_rows' = '50'", "SET"]
    statuses: list[int] = []
    lock = threading.Lock()
    start = threading.Barrier(3)

    def program(index: int) -> Callable[[], None]:
        def run() -> None:
            try:
                client = client_for(user)
                session = client.post(f"{API}/sessions", {}).json()["id"]
                start.wait(30)
                for n in range(30):
                    sql = statements[(n + index) % len(statements)]
                    answer = client.post(f"{API}/sessions/{session}/statements", {"sql": sql})
                    with lock:
                        statuses.append(answer.status_code)
            finally:
                connection.close()

        return run

    threads = [threading.Thread(target=program(i)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert sorted(set(statuses)) == [201], statuses
    assert len(statuses) == 90
    assert Job.objects.filter(user=user, status="FINISHED").count() == 90
    assert planning.GATE.in_use() == 0 and planning.GATE.waiting() == 0
