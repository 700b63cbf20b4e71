"""``result.arrow`` of a running job follows it, holding a thread of the web server until the
job ends: a user has at most ``TESSERA_RESULT_FOLLOWERS_PER_USER`` such followers in a
process, and all followers together take no more than the process's held requests; beyond
that ``429 TOO_MANY_REQUESTS`` with ``Retry-After``. A place comes back when its response is
closed, read or not. No Spark: the worker's part is ``results.partial.ResultWriter``, and
no live worker (``own_workers_only``), which would claim the committed jobs first."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.ipc as ipc  # type: ignore[import-untyped]
import pytest
from django.contrib.auth.models import User

from core import jobstate
from jobs import lifecycle
from jobs import selectors as job_selectors
from jobs.models import Job, Session
from results import partial
from sessions import statements
from tests.conftest import API, assert_error, client_for

# Closing a streamed response ends its request, which closes the database connection (as in
# the server): a transaction around the test would go with it.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("own_workers_only")]

SCHEMA = pa.schema([("id", pa.int64())])
COLUMNS = [{"name": "id", "data_type": "BIGINT"}]


@pytest.fixture(autouse=True)
def results_dir(settings: Any, tmp_path: Any) -> Any:
    settings.RESULTS_DIR = tmp_path / "results"
    settings.TESSERA_RESULT_FOLLOWERS_PER_USER = 2
    return settings.RESULTS_DIR


@pytest.fixture
def held_places(settings: Any) -> Iterator[None]:
    job_selectors.set_held_limit(3)
    yield
    job_selectors.set_held_limit(settings.TESSERA_HELD_REQUESTS_PER_PROCESS)


def writing_job(client: Any) -> Job:
    """A RUNNING query job of the client's user that has written one batch of its result."""
    response = client.post(f"{API}/sessions", {})
    assert response.status_code == 201, response.content
    session = Session.objects.select_related("user").get(pk=response.json()["id"])
    sql = "SELECT id FROM range(10)"
    plan = {"kind": "query", "action": "query", "needs_spark": True, "sql": sql, "args": {}}
    job = statements.submit_plan(session=session, sql=sql, plan=plan)
    lifecycle.transition(job.id, jobstate.CREATED, jobstate.RUNNING, worker="w")
    writer = partial.ResultWriter(job.id, SCHEMA, COLUMNS)
    writer.write(pa.record_batch([pa.array([1, 2, 3])], schema=SCHEMA))
    return job


def follow(client: Any, job: Job) -> Any:
    return client.get(f"{API}/jobs/{job.id}/result.arrow")


def test_a_user_follows_at_most_their_share_and_a_closed_follower_frees_its_place(
    alice: User, held_places: None
) -> None:
    alice_api = client_for(alice)
    job = writing_job(alice_api)
    first, second = follow(alice_api, job), follow(alice_api, job)
    assert first.status_code == second.status_code == 200
    assert first["X-Tessera-Complete"] == "false"

    third = follow(alice_api, job)
    error = assert_error(third, 429, "TOO_MANY_REQUESTS", "already following 2 running results")
    assert error["details"]["limit"] == 2 and third["Retry-After"] == "5"

    first.close()  # never read: closing gives the place back all the same
    again = follow(alice_api, job)
    assert again.status_code == 200
    for response in (second, again):
        response.close()


def test_followers_of_all_users_stay_within_the_processs_held_requests(
    alice: User, bob: User, held_places: None
) -> None:
    alice_api, bob_api = client_for(alice), client_for(bob)
    alices, bobs = writing_job(alice_api), writing_job(bob_api)
    taken = [follow(alice_api, alices), follow(alice_api, alices), follow(bob_api, bobs)]
    assert [r.status_code for r in taken] == [200, 200, 200]
    # Bob has a place of his own left, the process has none.
    assert_error(follow(bob_api, bobs), 429, "TOO_MANY_REQUESTS", "as many waiting requests")
    # Waits of statements and jobs are answered at once meanwhile, never refused.
    with job_selectors.held(30) as allowed:
        assert allowed == 0
    taken.pop().close()
    fourth = follow(bob_api, bobs)
    assert fourth.status_code == 200
    for response in (*taken, fourth):
        response.close()
    with job_selectors.held(30) as allowed:
        assert allowed == 30


def test_a_follower_read_to_the_end_gives_its_place_back(alice: User, held_places: None) -> None:
    alice_api = client_for(alice)
    job = writing_job(alice_api)
    responses = [follow(alice_api, job) for _ in range(2)]
    lifecycle.transition(job.id, jobstate.RUNNING, jobstate.CANCELED)
    for response in responses:  # each ends: the job was canceled
        reader = ipc.open_stream(pa.BufferReader(b"".join(response.streaming_content)))
        first = reader.read_next_batch()
        assert first.column(0).to_pylist() == [1, 2, 3]
        _, metadata = reader.read_next_batch_with_custom_metadata()
        assert metadata is not None and b"tessera.error" in metadata
    # Read to the end, both places are free again.
    again = [follow(alice_api, writing_job(alice_api)) for _ in range(2)]
    assert [r.status_code for r in again] == [200, 200]
    for response in again:
        response.close()
