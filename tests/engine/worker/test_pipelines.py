"""Pipeline jobs on a real worker (docs/pipelines.md): ``EXECUTE PIPELINE`` and
``POST /sessions/{id}/pipelines`` run ``function(t_env, **args)`` from the test package
``tests.pipelines`` (allowed for the test workers, tests/workers.py)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from catalog import services as catalog_services
from jobs.models import Job
from tests.conftest import API
from tests.waiting import wait_until
from tests.worker_helpers import Pipeline, events, wait_for_status, wait_job

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker"),
]

PACKAGES = ("tessera_pipelines", "tests.pipelines", "tests.conformance")
CASES = "tests.pipelines.cases"


@pytest.fixture(autouse=True)
def _allowed(settings: Any) -> None:
    settings.TESSERA_PIPELINE_PACKAGES = PACKAGES


@pytest.fixture
def catalog(alice_sql: Pipeline) -> str:
    name = f"p{uuid.uuid4().hex[:10]}"
    catalog_services.catalog_create(user=alice_sql.user, name=name, default_database="d")
    response = alice_sql.api.patch(
        f"{API}/sessions/{alice_sql.session_id}", {"current_catalog": name}, format="json"
    )
    assert response.status_code == 200, response.content
    return name


def run_pipeline(p: Pipeline, entry_point: str, args: dict[str, Any] | None = None) -> str:
    response = p.api.post(
        f"{API}/sessions/{p.session_id}/pipelines",
        {"entry_point": entry_point, "args": args or {}},
        format="json",
    )
    assert response.status_code == 201, response.content
    job = response.json()
    assert job["kind"] == "pipeline", job
    return str(job["id"])


def test_a_pipeline_over_sql_makes_its_ctas_target(alice_sql: Pipeline, catalog: str) -> None:
    job = alice_sql.run(f"EXECUTE PIPELINE '{CASES}:ctas' WITH ('target' = 'squares', 'n' = '4')")
    assert job["status"] == "FINISHED", job["error"]
    assert job["kind"] == "pipeline"
    assert alice_sql.rows("SELECT id, square FROM squares ORDER BY id") == [
        [0, 0],
        [1, 1],
        [2, 4],
        [3, 9],
    ]
    children = list(
        Job.objects.filter(parent_id=uuid.UUID(job["id"])).values_list("kind", "status")
    )
    assert children == [("ctas", "FINISHED")]
    types = events(job["id"])
    assert "statement_started" in types and "statement_finished" in types


def test_a_pipeline_over_rest_makes_its_ctas_target(alice_sql: Pipeline, catalog: str) -> None:
    job = wait_job(
        alice_sql.api, run_pipeline(alice_sql, f"{CASES}:ctas", {"target": "sq", "n": 3})
    )
    assert job["status"] == "FINISHED", job["error"]
    assert alice_sql.rows("SELECT count(*), sum(square) FROM sq") == [[3, 5]]
    child_id = Job.objects.get(parent_id=uuid.UUID(job["id"])).pk
    child = alice_sql.api.get(f"{API}/jobs/{child_id}").json()
    assert child["parent"] == job["id"]


def test_a_pipeline_that_raises_fails_with_its_own_message_and_frames(
    alice_sql: Pipeline, catalog: str
) -> None:
    job = alice_sql.run(f"EXECUTE PIPELINE '{CASES}:fails' WITH ('message' = 'no input today')")
    assert job["status"] == "FAILED", job
    error = job["error"]
    assert error["code"] == "PIPELINE_FAILED"
    assert error["message"] == "ValueError: no input today"
    frames = error["details"]["traceback"]
    assert [f["function"] for f in frames] == ["fails", "_deeper"]
    assert {f["file"] for f in frames} == {"tests/pipelines/cases.py"}
    assert "jobs" not in str(frames) and "/" + "work" not in str(error)


def test_cancel_of_a_running_pipeline_cancels_its_child(alice_sql: Pipeline, catalog: str) -> None:
    job_id = run_pipeline(alice_sql, f"{CASES}:slow", {"target": "never"})

    def child() -> Job | None:
        return Job.objects.filter(parent_id=uuid.UUID(job_id), status="RUNNING").first()

    running = wait_until(child, 90, message="the pipeline's CTAS to run")
    response = alice_sql.api.post(f"{API}/jobs/{job_id}/cancel")
    assert response.status_code == 200, response.content
    assert wait_job(alice_sql.api, job_id, {"CANCELED"}, timeout=60)["status"] == "CANCELED"
    ended = wait_for_status(running.pk, {"CANCELED"}, timeout=60)
    assert "stage_table_dropped" in events(ended.pk)
    assert alice_sql.run("SELECT * FROM never")["error"]["code"] == "NOT_FOUND"


def test_to_data_frame_is_live_and_written_back(alice_sql: Pipeline, catalog: str) -> None:
    alice_sql.ok("CREATE TABLE numbers AS SELECT id FROM range(6)")
    job = alice_sql.run(
        f"EXECUTE PIPELINE '{CASES}:live' WITH ('source' = 'numbers', 'target' = 'evens')"
    )
    assert job["status"] == "FINISHED", job["error"]
    assert alice_sql.rows("SELECT id, doubled FROM evens ORDER BY id") == [[0, 0], [2, 4], [4, 8]]


def test_temporary_objects_and_lists_of_the_session_are_visible(
    alice_sql: Pipeline, catalog: str
) -> None:
    alice_sql.ok("CREATE TEMPORARY VIEW recent AS SELECT 7 AS x")
    job = alice_sql.run(
        f"EXECUTE PIPELINE '{CASES}:temporary' WITH ('view' = 'recent', 'target' = 'copied')"
    )
    assert job["status"] == "FINISHED", job["error"]
    assert alice_sql.rows("SELECT x FROM copied") == [[7]]
    job = alice_sql.run(f"EXECUTE PIPELINE '{CASES}:lists' WITH ('target' = 'seen')")
    assert job["status"] == "FINISHED", job["error"]
    assert alice_sql.rows("SELECT seen FROM seen") == [[f"{catalog}|copied|1"]]


# --- hostile ---------------------------------------------------------------------------------


def _marker() -> Path:
    return Path(settings.DATA_DIR) / "pipelines_evil_imported"


@pytest.mark.parametrize(
    "entry_point",
    [
        "tests.pipelines_evil.boom:run",  # a prefix of an allowed package, not inside it
        "os:system",
        f"{CASES}:__import__",
        f"{CASES}:_deeper",
        ".cases:ctas",
        "tests.pipelines.cases.ctas",
        "tests.pipelines.cases:ctas:x",
    ],
)
def test_entry_points_outside_the_allow_list_are_refused_before_import(
    alice_sql: Pipeline, entry_point: str
) -> None:
    for job in (
        alice_sql.run(f"EXECUTE PIPELINE '{entry_point}'"),
        wait_job(alice_sql.api, run_pipeline(alice_sql, entry_point)),
    ):
        assert job["status"] == "FAILED", job
        assert job["error"]["code"] == "FORBIDDEN", job
    assert not _marker().exists()


def test_a_name_that_is_not_a_function_is_refused_on_the_worker(alice_sql: Pipeline) -> None:
    job = alice_sql.run(f"EXECUTE PIPELINE '{CASES}:NOT_A_FUNCTION'")
    assert job["status"] == "FAILED", job
    assert job["error"]["code"] == "FORBIDDEN"
    job = alice_sql.run(f"EXECUTE PIPELINE '{CASES}:missing'")
    assert job["error"]["code"] == "FORBIDDEN", job
    job = alice_sql.run("EXECUTE PIPELINE 'tests.pipelines.nothing:run'")
    assert job["error"]["code"] == "NOT_FOUND", job


def test_a_pipeline_in_a_streaming_session_starts_no_stream(
    alice_sql: Pipeline, catalog: str
) -> None:
    """A pipeline's statements never run as streams (docs/pipelines.md): a stream started
    inline would never end and would hold the pipeline's slot outside the stream slots.
    Its statement fails STREAMING_UNSUPPORTED, and the pipeline with it."""
    source = Path(settings.TESSERA_STORAGE_ROOTS[0]) / f"src-{uuid.uuid4().hex[:10]}"
    source.mkdir(parents=True)
    alice_sql.ok(
        f"CREATE TABLE src (id BIGINT) WITH ('connector' = 'parquet', 'path' = '{source}')"
    )
    alice_sql.ok("SET 'execution.runtime-mode' = 'streaming'")
    job = alice_sql.run(
        f"EXECUTE PIPELINE '{CASES}:stream_in' WITH ('source' = 'src')", timeout=180
    )
    assert job["status"] == "FAILED", job
    assert job["error"]["code"] == "PIPELINE_FAILED"
    assert "A pipeline runs its statements once, in batch mode" in job["error"]["message"]
    (child,) = Job.objects.filter(parent_id=job["id"])
    assert child.status == "FAILED" and child.error is not None
    assert child.error["code"] == "STREAMING_UNSUPPORTED"
    assert "SET 'execution.runtime-mode' = 'batch'" in child.error["message"]
    assert not Job.objects.filter(parent_id=job["id"], status="RUNNING").exists()
