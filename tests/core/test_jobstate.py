from __future__ import annotations

import itertools

import pytest

from core.jobstate import (
    CANCELED,
    CREATED,
    FAILED,
    FINISHED,
    RUNNING,
    STATUSES,
    IllegalTransition,
    check_transition,
)

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
