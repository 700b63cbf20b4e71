"""Fixtures of the streaming worker tests (tests/worker/test_streaming*.py)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest
from django.conf import settings

from jobs.models import Job
from tests.conftest import API
from tests.waiting import wait_until
from tests.worker.helpers import TERMINAL, api_for


@pytest.fixture
def source_dir() -> Path:
    """A new directory under the first storage root, for a source table's files."""
    path = Path(settings.TESSERA_STORAGE_ROOTS[0]) / f"src-{uuid.uuid4().hex[:10]}"
    path.mkdir(parents=True)
    return path


@pytest.fixture
def streams() -> Iterator[list[str]]:
    """Jobs a test started: cancelled (by their owner) at its end, so that no stream
    outlives its test and holds one of the shared worker's stream slots."""
    started: list[str] = []
    yield started
    for job_id in started:
        job = Job.objects.select_related("user").filter(pk=job_id).first()
        if job is not None and job.status in ("CREATED", "RUNNING"):
            api_for(job.user).post(f"{API}/jobs/{job_id}/cancel")

    for job_id in started:
        wait_until(partial(_ended, job_id), 60, 0.1, f"stream {job_id} to end")


def _ended(job_id: str) -> bool:
    status = Job.objects.filter(pk=job_id).values_list("status", flat=True).first()
    return status is None or status in TERMINAL
