"""Helpers of the worker tests: users, sessions, plans, statements and waiting for jobs.

Plans come from the real planner (``planned``), in the form the web stores in ``Job.plan``;
``hand_plan`` is only for plans the planner would never make (hostile or impossible plans the
worker must refuse on its own).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
from django.conf import settings
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from catalog.models import Table
from core.planner import plan_statement
from jobs.models import Engine, Job, JobEvent, Session

# The web's planning context and catalog reader, and its submission: the one place the tests
# import these jobs functions (jobs/ is being split into modules; a move is a one-line fix).
from sessions import services, statements
from sessions.catalog_reader import DjangoCatalogReader
from tests.conftest import API, PASSWORD, client_for
from tests.waiting import wait_until

TERMINAL = {"FINISHED", "FAILED", "CANCELED"}


def create_user(name: str) -> User:
    return User.objects.create_user(name, f"{name}@example.com", PASSWORD)


def api_for(user: User) -> APIClient:
    return client_for(user)


def open_session(
    client: APIClient, properties: dict[str, str] | None = None, catalog: str = ""
) -> str:
    body: dict[str, Any] = {"properties": properties or {}}
    if catalog:
        body["current_catalog"] = catalog
    response = client.post(f"{API}/sessions", body)
    assert response.status_code == 201, response.content
    return str(response.json()["id"])


def statement(client: APIClient, session_id: str, sql: str, wait: float = 0) -> dict[str, Any]:
    """POST a statement through the REST API; returns the job JSON."""
    body: dict[str, Any] = {"sql": sql}
    if wait:
        body["wait"] = wait
    response = client.post(f"{API}/sessions/{session_id}/statements", body)
    assert response.status_code == 201, response.content
    job: dict[str, Any] = response.json()
    return job


def get_job(client: APIClient, job_id: Any) -> dict[str, Any]:
    response = client.get(f"{API}/jobs/{job_id}")
    assert response.status_code == 200, response.content
    job: dict[str, Any] = response.json()
    return job


def wait_job(
    client: APIClient, job_id: Any, statuses: set[str] = TERMINAL, timeout: float = 60
) -> dict[str, Any]:
    """Poll ``GET /jobs/{id}`` until the job is in one of ``statuses``."""

    def reached() -> dict[str, Any] | None:
        job = get_job(client, job_id)
        if job["status"] in statuses:
            return job
        if job["status"] in TERMINAL:
            raise AssertionError(f"job {job_id} is {job['status']}, expected {statuses}: {job}")
        return None

    return wait_until(reached, timeout, message=f"job {job_id} to be one of {statuses}")


def result_rows(client: APIClient, job_id: Any) -> tuple[list[dict[str, Any]], list[list[Any]]]:
    """All rows of a job's result (following pages) and its columns."""
    rows: list[list[Any]] = []
    token: str | None = None
    columns: list[dict[str, Any]] = []
    while True:
        url = f"{API}/jobs/{job_id}/result?page_size=1000"
        if token:
            url += f"&page_token={token}"
        response = client.get(url)
        assert response.status_code == 200, response.content
        page = response.json()
        columns = page["columns"]
        rows.extend(page["rows"])
        token = page.get("next_page_token")
        if not token:
            return columns, rows


def events(job_id: Any, *, requeued: bool = False) -> list[str]:
    """The job's event types in order. ``requeued`` is left out unless asked for: on a loaded
    machine the sweeper may re-send a job the worker has not claimed yet, which is correct
    and changes nothing else; the sweeper's own tests ask for it."""
    types = JobEvent.objects.filter(job_id=job_id).values_list("type", flat=True)
    return [t for t in types if requeued or t != "requeued"]


# --- plans ----------------------------------------------------------------------------------


def planned(session: Session, sql: str) -> dict[str, Any]:
    """The plan the web stores in ``Job.plan`` for ``sql`` in ``session``: the real planner
    (``core.planner.plan_statement``) over the catalog as the session sees it."""
    reader = DjangoCatalogReader(session)
    plan = plan_statement(sql, reader, statements.plan_context(session))
    return dict(plan.to_dict())


def hand_plan(
    sql: str,
    *,
    action: str = "query",
    relations: list[dict[str, Any]] | None = None,
    functions: list[dict[str, Any]] | None = None,
    args: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A plan made by hand, for what the planner never produces: a plan naming an alias it
    did not register, an implementation outside the allowlist, a forged path. The worker
    must refuse these on its own (docs/statements.md describes the plan JSON)."""
    kind = {"query": "query", "explain": "explain"}.get(action, "ddl")
    return {
        "kind": kind,
        "action": action,
        "needs_spark": True,
        "sql": sql,
        "relations": relations or [],
        "functions": functions or [],
        "target": None,
        "args": args or {},
    }


def session_for(user: User, properties: dict[str, str] | None = None) -> Session:
    return services.session_create(user=user, properties=properties or {})


def submit_plan(
    user: User, plan: dict[str, Any], session: Session | None = None, sql: str = ""
) -> Job:
    """Store and enqueue a plan as the web does after planning (``statements.submit_plan``)."""
    return statements.submit_plan(
        session=session or session_for(user), sql=sql or plan["sql"], plan=plan
    )


def submit_sql(user: User, sql: str, session: Session | None = None) -> Job:
    """``sql`` planned by the real planner, stored and enqueued as the web does."""
    session = session or session_for(user)
    return submit_plan(user, planned(session, sql), session=session, sql=sql)


def wait_for_status(job_id: Any, statuses: set[str], timeout: float = 60) -> Job:
    """Poll the job row until its status is one of ``statuses``."""

    def reached() -> Job | None:
        job = Job.objects.get(pk=job_id)
        if job.status in statuses:
            return job
        if job.status in TERMINAL:
            raise AssertionError(
                f"job {job_id} is {job.status}, expected {statuses}: error={job.error}"
            )
        return None

    return wait_until(reached, timeout, message=f"job {job_id} to be one of {statuses}")


def json_value(value: Any) -> Any:
    """A plain-PySpark value as the results API renders it (decimals as strings, ISO times)."""
    if isinstance(value, Decimal):
        return format(value, "f")
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


# A table with physical, computed and metadata columns (the worker suites' external table).
SCHEMA: dict[str, Any] = {
    "columns": [
        {"name": "id", "kind": "physical", "data_type": "BIGINT"},
        {"name": "name", "kind": "physical", "data_type": "STRING"},
        {"name": "price", "kind": "physical", "data_type": "DECIMAL(10, 2)"},
        {"name": "qty", "kind": "physical", "data_type": "INT"},
        {"name": "total", "kind": "computed", "expression": "price * qty"},
        {
            "name": "file",
            "kind": "metadata",
            "data_type": "STRING",
            "metadata_key": "file_path",
            "virtual": True,
        },
    ]
}


class Pipeline:
    """A new user (``name`` and a random suffix; a superuser when ``admin``) with an API
    client and a SQL session, opened with ``properties`` and in catalog ``catalog`` when
    given. The fixture ``alice_sql`` (tests/fixtures/worker.py) is one of these; the
    security tests call it ``Actor`` (tests/security/boundary.py)."""

    def __init__(
        self,
        name: str,
        properties: dict[str, str] | None = None,
        catalog: str = "",
        *,
        admin: bool = False,
    ) -> None:
        # WhiteNoise warns on every request when the (throw-away) static root is missing.
        Path(settings.STATIC_ROOT).mkdir(parents=True, exist_ok=True)
        self.user: User = create_user(f"{name}{uuid.uuid4().hex[:6]}")
        if admin:
            self.user.is_superuser = True
            self.user.save(update_fields=["is_superuser"])
        self.api = api_for(self.user)
        self.session_id = open_session(self.api, properties, catalog)

    @property
    def session(self) -> Session:
        return Session.objects.get(pk=self.session_id)

    def submit(self, sql: str) -> str:
        """Submit ``sql`` through the API (planned by the web's planner)."""
        return str(statement(self.api, self.session_id, sql)["id"])

    def run(self, sql: str, timeout: float = 120) -> dict[str, Any]:
        """The job of ``sql`` once it ended."""
        return wait_job(self.api, self.submit(sql), timeout=timeout)

    def ok(self, sql: str, timeout: float = 120) -> dict[str, Any]:
        """Run ``sql``; it must finish."""
        job = self.run(sql, timeout)
        assert job["status"] == "FINISHED", (sql, job)
        return job

    def rows(self, sql: str) -> list[list[Any]]:
        return result_rows(self.api, self.ok(sql)["id"])[1]


# --- streams (docs/streaming.md) ---------------------------------------------------------------

TRIGGER_MS = 300
STREAMING = {
    "execution.runtime-mode": "streaming",
    "execution.checkpointing.interval": f"{TRIGGER_MS} ms",
}


def write_atomically(path: Path, write: Callable[[Path], Any]) -> Path:
    """A file that appears at once, whole, as a producer feeding a stream must write it:
    ``write`` fills a hidden name (Spark's file sources skip names starting with '.'),
    which is then renamed to ``path``."""
    hidden = path.with_name(f".{path.name}.tmp")
    write(hidden)
    os.replace(hidden, path)
    return path


def write_file(directory: Path, name: str, table: pa.Table) -> Path:
    """A parquet file ``<name>.parquet`` in ``directory``, written atomically."""
    return write_atomically(
        directory / f"{name}.parquet", lambda hidden: pq.write_table(table, hidden)
    )


def stream_session(pipeline: Pipeline, properties: dict[str, str] | None = None) -> Session:
    """A new session of ``pipeline``'s user in streaming mode."""
    return Session.objects.get(pk=open_session(pipeline.api, {**STREAMING, **(properties or {})}))


def start_stream(pipeline: Pipeline, streams: list[str], sql: str) -> str:
    """``sql`` submitted over REST in a new session in streaming mode; the job is added to
    ``streams`` (the ``streams`` fixture stops it at the end of the test)."""
    session = stream_session(pipeline)
    job_id = str(statement(pipeline.api, str(session.pk), sql)["id"])
    streams.append(job_id)
    return job_id


def table_of(catalog: str, name: str) -> Table | None:
    return Table.objects.filter(
        database__catalog__name=catalog, database__name="d", name_key=name.lower()
    ).first()


def table_rows(plain_spark: Any, catalog: str, name: str) -> list[tuple[Any, ...]]:
    """The rows of a managed (parquet) table's current version, read by plain PySpark."""
    table = table_of(catalog, name)
    assert table is not None and table.location
    return sorted(tuple(r) for r in plain_spark.read.parquet(table.location).collect())


def count_of(catalog: str, name: str) -> int:
    """The rows of a managed (parquet) table's current version, from the files' footers;
    -1 while it has no location."""
    table = table_of(catalog, name)
    if table is None or not table.location or not Path(table.location).is_dir():
        return -1
    return sum(
        pq.read_metadata(p).num_rows
        for p in Path(table.location).rglob("*.parquet")
        if not p.name.startswith((".", "_"))
    )


def state_of(job_id: str) -> str:
    """A job's status and error, for a wait's message."""
    job = Job.objects.get(pk=job_id)
    return f"job {job_id} {job.status} {job.error}"


def cancel(pipeline: Pipeline, job_id: str) -> dict[str, Any]:
    response = pipeline.api.post(f"{API}/jobs/{job_id}/cancel")
    assert response.status_code in (200, 202), response.content
    return wait_job(pipeline.api, job_id, {"CANCELED"}, timeout=30)


def with_stages(client: APIClient, job: dict[str, Any], timeout: float = 30) -> dict[str, Any]:
    """The ended ``job`` once its Spark stages are recorded (just after its end)."""

    def recorded() -> dict[str, Any] | None:
        found = get_job(client, job["id"])
        return found if found["progress"].get("stages") is not None else None

    return wait_until(recorded, timeout, message=f"the Spark stages of job {job['id']}")


def run_to_end(who: User, sql: str, timeout: float = 240) -> Job:
    """Submit ``sql`` as ``who`` and wait for the job to end."""
    return wait_for_status(submit_sql(who, sql).id, TERMINAL, timeout)


def finished_rows(job: Job) -> list[list[Any]]:
    """The rows of a job that must have FINISHED."""
    assert job.status == "FINISHED", (job.status, job.error)
    return result_rows(api_for(job.user), job.pk)[1]


def engine_of(job: Job) -> Engine:
    """The engine that ran the job (engines per user or team)."""
    job.refresh_from_db()
    assert job.engine_id is not None, job.status
    return Engine.objects.get(pk=job.engine_id)


def runs_tasks(job: Job) -> bool:
    """The job runs Spark tasks on its engine (its monitor reported them)."""
    row = Job.objects.get(pk=job.pk)
    assert row.status in {"CREATED", "RUNNING"}, (row.status, row.error)
    return row.status == "RUNNING" and bool((row.progress or {}).get("tasks_total"))
