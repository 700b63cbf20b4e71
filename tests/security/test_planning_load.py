"""One user's statements never block other users' requests (docs/security.md §4).

The issue's reproduction, against a real gunicorn started as ``make run`` starts it (2
processes of 4 threads) on PostgreSQL: eight concurrent ≈2 MB statements from one user
spent minutes planning and other users' ``GET /catalogs`` timed out. Now they are refused
in milliseconds (STATEMENT_TOO_LARGE); and eight concurrent statements just under the
limits, each seconds of planning, take at most one planning slot per process (the others
are 429 at once) while another user's reads stay under the issue's bound of 1 s.

The measured figures are printed (``-s``) and collected by ``bench/planning_load.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from django.conf import settings
from django.contrib.auth.models import User

from accounts.tokens import token_create
from jobs.models import Job
from tests.conftest import require_postgresql
from tests.security.servers import (
    TWO_MB,
    Attack,
    Gunicorn,
    attack,
    heavy_statement,
    reads_alone,
    server_env,
    two_megabyte_statement,
)
from tests.workers import _database_url

pytestmark = pytest.mark.slow

# The issue's acceptance figure for other users' reads while one user attacks.
VICTIM_BOUND_SECONDS = 1.0


@pytest.fixture
def server(transactional_db: None, tmp_path: Path) -> Iterator[dict[str, Any]]:
    require_postgresql()
    attacker = User.objects.create_user("mallory", password="x")
    victim = User.objects.create_user("victor", password="x")
    tokens = {u.username: token_create(user=u)[1] for u in (attacker, victim)}
    env = server_env(
        tmp_path / "data",
        {
            "DATABASE_URL": _database_url(),
            "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
            # This server has 4 threads a process (make run: 16): no thread for waiting
            # requests, so a statement that meets a busy slot is refused at once.
            "TESSERA_PLANNING_WAIT_SECONDS": "0",
        },
    )
    gunicorn = Gunicorn(env, tmp_path)
    gunicorn.start()
    try:
        auth = {"Authorization": f"Token {tokens['mallory']}"}
        made = requests.post(
            f"{gunicorn.url}/api/v1/catalogs", json={"name": "demo"}, headers=auth, timeout=30
        )
        assert made.status_code == 201, made.text
        session = requests.post(
            f"{gunicorn.url}/api/v1/sessions",
            json={"current_catalog": "demo"},
            headers=auth,
            timeout=30,
        ).json()["id"]
        alone = reads_alone(gunicorn.url, tokens["victor"], 2.0)
        yield {
            "gunicorn": gunicorn,
            "tokens": tokens,
            "session": session,
            "attacker": attacker,
            "baseline_max": max(alone),
        }
    finally:
        gunicorn.stop()


def _run(server: dict[str, Any], sql: str) -> Attack:
    return attack(
        server["gunicorn"].url,
        server["tokens"]["mallory"],
        server["tokens"]["victor"],
        server["session"],
        sql,
    )


def _bound(server: dict[str, Any]) -> float:
    """The issue's bound, on top of the slowest read of this machine as loaded right now
    without any attack (a few tens of milliseconds on a quiet machine): the attack may add
    at most 1 s to any read. Without that tolerance, other processes on a shared machine
    would decide the test."""
    return VICTIM_BOUND_SECONDS + float(server["baseline_max"])


def _report(name: str, measured: Attack) -> None:
    print(
        f"\n{name}: victim GET /catalogs n={len(measured.victim)} "
        f"p50={measured.victim_percentile(0.5) * 1000:.0f} ms "
        f"p95={measured.victim_percentile(0.95) * 1000:.0f} ms "
        f"max={measured.victim_max * 1000:.0f} ms; attacker: "
        + ", ".join(f"{code} in {seconds:.2f} s" for seconds, _, code in sorted(measured.attacker))
    )


def test_eight_two_megabyte_statements_are_refused_and_others_read_on(
    server: dict[str, Any],
) -> None:
    sql = two_megabyte_statement()
    assert TWO_MB - 10 < len(sql) <= TWO_MB
    measured = _run(server, sql)
    _report("8 x 2 MB", measured)
    assert len(measured.attacker) == 8
    for seconds, status, code in measured.attacker:
        assert (status, code) == (413, "STATEMENT_TOO_LARGE"), measured.attacker
        assert seconds < 5, measured.attacker  # refused before planning
    assert {status for _, status in measured.victim} == {200}
    assert measured.victim_max < _bound(server), (measured.victim, server["baseline_max"])
    assert not Job.objects.filter(user=server["attacker"]).exists()  # nothing was made


def test_eight_statements_under_the_limits_take_one_slot_per_process(
    server: dict[str, Any],
) -> None:
    measured = _run(server, heavy_statement())
    _report("8 x heavy", measured)
    assert len(measured.attacker) == 8
    planned = [a for a in measured.attacker if a[1] == 201]
    refused = [a for a in measured.attacker if a[1] == 429]
    assert len(planned) + len(refused) == 8, measured.attacker
    # One planning per user per process, 2 processes: the rest answered at once.
    assert 1 <= len(planned) <= 2, measured.attacker
    for seconds, _, code in refused:
        assert code == "TOO_MANY_REQUESTS retry-after=1", measured.attacker
        assert seconds < 5, measured.attacker
    for _, _, code in planned:
        assert code in ("NOT_FOUND", "PLANNING_TIMEOUT"), measured.attacker
    assert {status for _, status in measured.victim} == {200}
    assert measured.victim_max < _bound(server), (measured.victim, server["baseline_max"])
    # Nothing ran: the planned statements' jobs failed in planning.
    jobs = Job.objects.filter(user=server["attacker"])
    assert jobs.count() == len(planned)
    assert set(jobs.values_list("status", flat=True)) == {"FAILED"}
