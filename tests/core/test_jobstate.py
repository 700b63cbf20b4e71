from __future__ import annotations

import itertools

import pytest

from core.jobstate import (
    CANCELED,
    CREATED,
    FAILED,
    FINISHED,
    REQUEUE,
    RUNNING,
    STATUSES,
    IllegalTransition,
    after_worker_lost,
    check_transition,
    is_streaming,
)
from core.planner.plan import Plan

ALLOWED = {
    (CREATED, RUNNING),
    (CREATED, CANCELED),
    (CREATED, FAILED),
    (RUNNING, FINISHED),
    (RUNNING, FAILED),
    (RUNNING, CANCELED),
}


@pytest.mark.parametrize(("current", "target"), list(itertools.product(STATUSES, STATUSES)))
def test_exactly_the_documented_transitions_are_allowed(current: str, target: str) -> None:
    if (current, target) in ALLOWED:
        check_transition(current, target)
    else:
        with pytest.raises(IllegalTransition) as caught:
            check_transition(current, target)
        assert f"from {current} to {target}" in caught.value.message
        assert caught.value.code == "ILLEGAL_TRANSITION"


def test_a_finished_job_says_it_has_ended() -> None:
    with pytest.raises(IllegalTransition, match="already ended"):
        check_transition(FINISHED, RUNNING)


# --- streams whose worker is lost (docs/streaming.md) ----------------------------------------


def _plan(args: dict[str, object]) -> Plan:
    return Plan.from_dict(
        {
            "kind": "ctas",
            "action": "ctas",
            "needs_spark": True,
            "sql": "SELECT 1",
            "relations": [],
            "functions": [],
            "target": None,
            "args": args,
        }
    )


STREAM = _plan({"streaming": {"trigger_ms": 1000}})
BATCH = _plan({})


def test_only_a_plan_with_streaming_args_is_a_stream() -> None:
    assert is_streaming(STREAM)
    assert not is_streaming(BATCH)
    assert not is_streaming(None)
    assert not is_streaming(_plan({"streaming": True}))  # not the planner's shape
    assert not is_streaming(_plan({"streaming": None}))


def test_the_requeue_is_not_a_transition_of_the_machine() -> None:
    assert REQUEUE == (RUNNING, CREATED)
    with pytest.raises(IllegalTransition):
        check_transition(*REQUEUE)  # lifecycle.transition can never make it (nor its hooks)


@pytest.mark.parametrize(
    ("plan", "cancel", "restarts", "most", "expected"),
    [
        (STREAM, False, 0, 5, CREATED),
        (STREAM, False, 4, 5, CREATED),
        (STREAM, False, 5, 5, FAILED),  # the bound reached
        (STREAM, False, 9, 5, FAILED),
        (STREAM, False, 0, 0, FAILED),  # never resumed
        (STREAM, True, 0, 5, CANCELED),  # its user asked for the end
        (BATCH, False, 0, 5, FAILED),
        (BATCH, True, 0, 5, CANCELED),
        (None, False, 0, 5, FAILED),
    ],
)
def test_where_a_job_of_a_lost_worker_goes(
    plan: Plan | None, cancel: bool, restarts: int, most: int, expected: str
) -> None:
    assert (
        after_worker_lost(plan, cancel_requested=cancel, restarts=restarts, max_restarts=most)
        == expected
    )
