"""Fixtures of the worker tests: the user ``alice`` and a new catalog of hers (private; shared
with everyone as ``shared_catalog``), and for the streaming tests
(tests/worker/test_streaming*.py) a source directory and the streams a test started."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest
from django.conf import settings

from catalog import services as catalog_services
from jobs.models import Job
from tests.conftest import API
from tests.grants_support import share
from tests.waiting import wait_until
from tests.worker.helpers import TERMINAL, Pipeline, api_for


@pytest.fixture
def alice() -> Pipeline:
    return Pipeline("alice")


@pytest.fixture
def catalog(alice: Pipeline) -> str:
    """A new catalog of alice's (default database ``d``)."""
    name = f"s{uuid.uuid4().hex[:10]}"
    catalog_services.catalog_create(user=alice.user, name=name, default_database="d")
    return name


@pytest.fixture
def shared_catalog(catalog: str) -> str:
    """``catalog`` shared with everyone (``USE``, ``SELECT``, ``EXECUTE`` to team
    ``everyone``: the rule before grants), for tests where other users read alice's objects.
    Opt-in: ``catalog`` itself stays private (tests/worker/test_grants_acceptance.py relies
    on it)."""
    share(catalog)
    return catalog


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
