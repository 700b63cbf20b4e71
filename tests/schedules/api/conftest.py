"""API-level tests, no worker (tests/fixtures/api.py): PostgreSQL only, a private warehouse
and storage root per test; the test plays the worker's side of a run's job
(``finish_job``) and calls the scheduler's tick itself."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pytest

from core import jobstate
from jobs import lifecycle
from jobs.models import Job
from results import store
from schedules.models import Schedule
from tests.conftest import API
from tests.fixtures.api import _postgresql_only, storage  # noqa: F401 (fixtures)


@pytest.fixture(autouse=True)
def results_dir(settings, tmp_path):
    settings.RESULTS_DIR = tmp_path / "results"
    return settings.RESULTS_DIR


def save_query(client, name: str = "revenue", sql: str = "SELECT 42 AS n", **extra: Any) -> str:
    response = client.post(f"{API}/saved-queries", {"name": name, "sql": sql, **extra})
    assert response.status_code == 201, response.content
    return str(response.json()["id"])


def create_schedule(
    client, query: str, cron: str = "* * * * *", timezone: str = "UTC", **extra: Any
) -> dict[str, Any]:
    body = {"saved_query": query, "cron": cron, "timezone": timezone, **extra}
    response = client.post(f"{API}/schedules", body)
    assert response.status_code == 201, response.content
    return dict(response.json())


def due_at(schedule_id: Any, when: datetime) -> None:
    """Make the schedule's next slot ``when`` (as if it had been planned then)."""
    Schedule.objects.filter(pk=schedule_id).update(next_run_at=when)


def finish_job(job_id: Any, rows: dict[str, list[Any]], types: dict[str, str]) -> Job:
    """Play the worker: claim the job, write its result (``rows`` by column), finish it."""
    lifecycle.transition(job_id, jobstate.CREATED, jobstate.RUNNING, worker="w")
    table = pa.table(rows)
    columns = [{"name": name, "data_type": types[name]} for name in rows]
    result = store.write_result(job_id, table, columns=columns, truncated=False)
    return lifecycle.transition(job_id, jobstate.RUNNING, jobstate.FINISHED, result=result)
