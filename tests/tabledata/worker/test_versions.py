"""Table versions on a real worker (docs/writes.md, "Table versions"): every commit to a
managed table is a numbered version; old versions stay readable (``VERSION AS OF``,
``TIMESTAMP AS OF``, a query that started before the commit) until the retention expires
them; ``DESCRIBE HISTORY`` and ``GET …/tables/{t}/versions`` list them.

Each test has its own catalog (``v<hex>``), so its warehouse folder holds only its tables.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.utils import timezone

from catalog import versions
from catalog.models import Table, TableVersion
from jobs import maintenance
from jobs.models import Job
from tests.conftest import API
from tests.waiting import wait_until
from tests.worker_helpers import (
    Pipeline,
    api_for,
    create_user,
    planned,
    result_rows,
    submit_plan,
    wait_job,
)

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker"),
]


def table_of(catalog: str, name: str) -> Table:
    return Table.objects.get(database__catalog__name=catalog, database__name="d", name_key=name)


def history(catalog: str, name: str) -> list[TableVersion]:
    return list(TableVersion.objects.filter(table=table_of(catalog, name)).order_by("version"))


def failed(alice_sql: Pipeline, sql: str) -> dict[str, Any]:
    """The error of a statement that must not run (refused by the planner: 400, or FAILED)."""
    response = alice_sql.api.post(f"{API}/sessions/{alice_sql.session_id}/statements", {"sql": sql})
    if response.status_code == 400:
        error: dict[str, Any] = response.json()["error"]
        return error
    assert response.status_code == 201, response.content
    job = _finished(alice_sql, str(response.json()["id"]))
    assert job["status"] == "FAILED", job
    error = job["error"]
    return error


def _finished(alice_sql: Pipeline, job_id: str) -> dict[str, Any]:
    return wait_job(alice_sql.api, job_id, timeout=120)


@pytest.fixture
def three_versions(alice_sql: Pipeline, catalog: str) -> str:
    """``m``: v0 CTAS (ids 0 to 99), v1 INSERT (100 to 149), v2 OVERWRITE (one row, id 7)."""
    m = f"{catalog}.d.m"
    alice_sql.ok(f"CREATE TABLE {m} AS SELECT id, concat('m', id) AS name FROM range(0, 100, 1, 2)")
    alice_sql.ok(f"INSERT INTO {m} SELECT id, concat('i', id) FROM range(100, 150)")
    alice_sql.ok(f"INSERT OVERWRITE {m} SELECT 7, 'only'")
    return m


def test_each_commit_is_a_version_and_old_ones_stay_readable(
    alice_sql: Pipeline, catalog: str, three_versions: str
) -> None:
    m = three_versions
    found = history(catalog, "m")
    assert [(v.version, v.operation, v.rows) for v in found] == [
        (0, "CREATE TABLE AS SELECT", 100),
        (1, "INSERT", 50),
        (2, "OVERWRITE", 1),
    ]
    assert {v.user_id for v in found} == {alice_sql.user.pk}
    jobs = [Job.objects.get(pk=str(v.job_id)) for v in found]
    assert [job.sql.split()[0] for job in jobs] == ["CREATE", "INSERT", "INSERT"]
    assert [v.replaced_at is None for v in found] == [False, False, True]
    assert table_of(catalog, "m").location == found[-1].location
    assert all(Path(v.location).is_dir() for v in found)  # every directory kept

    assert alice_sql.rows(f"SELECT count(*), min(name) FROM {m} VERSION AS OF 0") == [[100, "m0"]]
    assert alice_sql.rows(f"SELECT count(*) FROM {m} VERSION AS OF 1") == [[150]]
    assert alice_sql.rows(f"SELECT count(*) FROM {m}") == [[1]]
    # Two versions of one table in one query: a self-join.
    joined = alice_sql.rows(
        f"SELECT count(*), count(b.id) FROM {m} VERSION AS OF 1 a "
        f"LEFT JOIN {m} VERSION AS OF 0 AS b ON a.id = b.id"
    )
    assert joined == [[150, 100]]
    # TIMESTAMP AS OF: the version current at that moment.
    at = (found[1].created_at + timedelta(microseconds=1)).isoformat()
    assert alice_sql.rows(f"SELECT count(*) FROM {m} TIMESTAMP AS OF '{at}'") == [[150]]
    first = (found[0].created_at - timedelta(microseconds=1)).isoformat()
    assert alice_sql.rows(f"SELECT count(*) FROM {m} FOR SYSTEM_TIME AS OF '{at}'") == [[150]]
    error = failed(alice_sql, f"SELECT * FROM {m} TIMESTAMP AS OF '{first}'")
    assert error["code"] == "VALIDATION_ERROR"
    assert "before it was created" in error["message"]


def test_describe_history_and_the_rest_list(
    alice_sql: Pipeline, shared_catalog: str, three_versions: str
) -> None:
    catalog = shared_catalog
    m = three_versions
    job = alice_sql.ok(f"DESCRIBE HISTORY {m}")
    columns, rows = result_rows(alice_sql.api, job["id"])
    assert [c["name"] for c in columns] == [
        "version",
        "timestamp",
        "user",
        "job",
        "operation",
        "rows",
        "metrics",
        "readable",
    ]
    assert [(r[0], r[2], r[4], r[5], r[6], r[7]) for r in rows] == [
        (2, alice_sql.user.username, "OVERWRITE", 1, "{}", True),
        (1, alice_sql.user.username, "INSERT", 50, "{}", True),
        (0, alice_sql.user.username, "CREATE TABLE AS SELECT", 100, "{}", True),
    ]
    # The REST list, paged, for another user too (alice shares the catalog with everyone).
    bob = api_for(create_user(f"bob{uuid.uuid4().hex[:6]}"))
    url = f"{API}/catalogs/{catalog}/databases/d/tables/m/versions"
    first = bob.get(f"{url}?page_size=2")
    assert first.status_code == 200, first.content
    body = first.json()
    assert [i["version"] for i in body["items"]] == [2, 1]
    assert body["items"][0]["current"] is True and body["items"][1]["current"] is False
    assert body["items"][0]["operation"] == "OVERWRITE"
    assert body["items"][0]["user"] == alice_sql.user.username
    assert body["items"][0]["readable"] is True
    assert body["items"][0]["job_id"] is None  # another user's job: jobs are private
    own = alice_sql.api.get(f"{url}?page_size=1").json()["items"][0]
    assert own["job_id"] == str(history(catalog, "m")[2].job_id)
    assert [r[3] for r in rows] == [str(v.job_id) for v in reversed(history(catalog, "m"))]
    rest = bob.get(f"{url}?page_size=2&page_token={body['next_page_token']}").json()
    assert [i["version"] for i in rest["items"]] == [0] and rest["next_page_token"] is None


def test_errors_of_time_travel(alice_sql: Pipeline, catalog: str, three_versions: str) -> None:
    m = three_versions
    unknown = failed(alice_sql, f"SELECT * FROM {m} VERSION AS OF 9")
    assert unknown["code"] == "VALIDATION_ERROR"
    assert "has no version 9" in unknown["message"] and "0 to 2" in unknown["message"]
    for clause, fragment in [
        ("VERSION AS OF -1", "non-negative integer"),
        ("VERSION AS OF 1.0", "non-negative integer"),
        ("VERSION AS OF 99999999999999999999", "at most"),
        ("VERSION AS OF (SELECT max(id) FROM range(3))", "non-negative integer"),
        ("TIMESTAMP AS OF now()", "timestamp literal"),
        ("TIMESTAMP AS OF '../../etc/passwd'", "is not a timestamp"),
    ]:
        error = failed(alice_sql, f"SELECT * FROM {m} {clause}")
        assert error["code"] == "VALIDATION_ERROR", (clause, error)
        assert fragment in error["message"], (clause, error)
    alice_sql.ok(f"CREATE VIEW {catalog}.d.v AS SELECT * FROM {m}")
    view = failed(alice_sql, f"SELECT * FROM {catalog}.d.v VERSION AS OF 0")
    assert view["code"] == "VALIDATION_ERROR" and "it is a view" in view["message"]
    missing = failed(alice_sql, f"SELECT * FROM {catalog}.d.nope VERSION AS OF 0")
    assert missing["code"] == "NOT_FOUND"
    # A view over an old version reads that version (its stored text keeps the clause).
    alice_sql.ok(f"CREATE VIEW {catalog}.d.old AS SELECT count(*) AS n FROM {m} VERSION AS OF 0")
    assert alice_sql.rows(f"SELECT n FROM {catalog}.d.old") == [[100]]


def test_describe_history_refusals(alice_sql: Pipeline, catalog: str) -> None:
    external = Path(settings.TESSERA_STORAGE_ROOTS[0]) / f"ext-{uuid.uuid4().hex[:8]}"
    alice_sql.ok(
        f"CREATE TABLE {catalog}.d.x WITH ('connector' = 'parquet', 'path' = '{external}') "
        "AS SELECT 1 AS id"
    )
    error = failed(alice_sql, f"DESCRIBE HISTORY {catalog}.d.x")
    assert error["code"] == "VALIDATION_ERROR" and "external table" in error["message"]
    assert failed(alice_sql, f"SELECT * FROM {catalog}.d.x VERSION AS OF 0")["code"] == (
        "VALIDATION_ERROR"
    )
    assert failed(alice_sql, f"DESCRIBE HISTORY {catalog}.d.nope")["code"] == "NOT_FOUND"
    url = f"{API}/catalogs/{catalog}/databases/d/tables"
    assert alice_sql.api.get(f"{url}/x/versions").status_code == 400
    gone = alice_sql.api.get(f"{url}/nope/versions")
    assert gone.status_code == 404 and gone.json()["error"]["code"] == "NOT_FOUND"
    tricky = alice_sql.api.get(f"{url}/..%2F..%2Fx/versions")
    assert tricky.status_code == 404
    bad_token = alice_sql.api.get(f"{url}/x/versions?page_token=WzFd")
    assert bad_token.status_code == 400


def test_plain_create_table_is_version_zero(alice_sql: Pipeline, catalog: str) -> None:
    alice_sql.ok(f"CREATE TABLE {catalog}.d.p (id BIGINT)")
    [v0] = history(catalog, "p")
    assert (v0.version, v0.operation, v0.user_id) == (0, "CREATE TABLE", alice_sql.user.pk)
    alice_sql.ok(f"INSERT INTO {catalog}.d.p SELECT id FROM range(1, 3)")
    assert alice_sql.rows(f"SELECT count(*) FROM {catalog}.d.p VERSION AS OF 0") == [[0]]
    assert alice_sql.rows(f"SELECT count(*) FROM {catalog}.d.p VERSION AS OF 1") == [[2]]


def test_retention_removes_only_expired_directories_and_drop_removes_all(
    alice_sql: Pipeline, catalog: str, three_versions: str
) -> None:
    m = three_versions
    v0, v1, v2 = history(catalog, "m")
    retention = timedelta(seconds=settings.TESSERA_VERSION_RETENTION_SECONDS)
    # Just inside the retention of v1's replacement: nothing goes.
    assert v1.replaced_at is not None and v0.replaced_at is not None
    soon = v1.replaced_at + retention - timedelta(seconds=1)
    assert maintenance.expire_table_versions(now=soon) == (
        [v0.location] if v0.replaced_at + retention < soon else []
    )
    later = v1.replaced_at + retention + timedelta(seconds=1)
    removed = maintenance.expire_table_versions(now=later)
    assert v1.location in removed and v2.location not in removed
    assert not Path(v0.location).exists() and not Path(v1.location).exists()
    assert Path(v2.location).is_dir()  # the current version is never removed
    assert maintenance.expire_table_versions(now=later + timedelta(days=400)) == []
    assert [v.readable for v in history(catalog, "m")] == [False, False, True]
    error = failed(alice_sql, f"SELECT * FROM {m} VERSION AS OF 0")
    assert error["code"] == "VALIDATION_ERROR"
    assert "has expired" in error["message"] and "only readable version is 2" in error["message"]
    job = alice_sql.ok(f"DESCRIBE HISTORY {m}")
    assert [r[7] for r in result_rows(alice_sql.api, job["id"])[1]] == [True, False, False]

    # A version whose directory another readable version still points at is kept.
    alice_sql.ok(f"CREATE TABLE {catalog}.d.k AS SELECT 1 AS id")
    alice_sql.ok(f"INSERT INTO {catalog}.d.k SELECT 2")
    k0, k1 = history(catalog, "k")
    TableVersion.objects.filter(pk=k1.pk).update(location=k0.location)  # a shared directory
    Table.objects.filter(pk=k1.table_id).update(location=k1.location)
    far = timezone.now() + retention + timedelta(days=1)
    assert k0.location not in maintenance.expire_table_versions(now=far)
    assert Path(k0.location).is_dir()

    # DROP removes every version's directory.
    alice_sql.ok(f"INSERT INTO {m} SELECT 8, 'eight'")
    dirs = [v.location for v in history(catalog, "m") if v.readable]
    assert len(dirs) == 2 and all(Path(d).is_dir() for d in dirs)
    alice_sql.ok(f"DROP TABLE {m}")
    wait_until(lambda: not any(Path(d).exists() for d in dirs), 15, 0.1, "the versions to go")
    assert not TableVersion.objects.filter(location__in=dirs).exists()


def test_a_query_started_before_a_commit_finishes_with_the_old_rows(
    alice_sql: Pipeline, catalog: str
) -> None:
    """The race the versions fix: a query planned on v0 reads v0's files after an OVERWRITE
    committed v1; the old directory stays, so the query finishes with v0's rows (before
    versions, the commit deleted the directory under the query's feet and the query
    failed with a missing file: checked by putting that delete back)."""
    m = f"{catalog}.d.big"
    alice_sql.ok(f"CREATE TABLE {m} AS SELECT id FROM range(0, 200000, 1, 8)")
    v0 = history(catalog, "big")[0]
    # Spark lists the table's files when the query is planned, then computes the slow
    # one-row side of the join first (one task: the other cores stay free for the
    # OVERWRITE), and only then reads the table's files — after the commit below.
    slow = alice_sql.submit(
        f"SELECT count(*), sum(id) FROM {m} CROSS JOIN ("
        "SELECT max(length(sha2(repeat(CAST(id AS STRING), 2000), 512))) AS k "
        "FROM range(0, 250000, 1, 1)) s WHERE s.k = 128"
    )

    def computing() -> bool:
        job = Job.objects.get(pk=slow)
        assert job.status in {"CREATED", "RUNNING"}, (job.status, job.error)
        progress = job.progress or {}
        return job.status == "RUNNING" and int(progress.get("tasks_total") or 0) >= 1

    wait_until(computing, 120, 0.05, "the slow query to start")
    alice_sql.ok(f"INSERT OVERWRITE {m} SELECT -1")
    assert Job.objects.get(pk=slow).status == "RUNNING", "the query ended before the commit"
    done = _finished(alice_sql, slow)
    assert done["status"] == "FINISHED", done
    assert Path(v0.location).is_dir()
    assert result_rows(alice_sql.api, slow)[1] == [[200000, sum(range(200000))]]
    assert alice_sql.rows(f"SELECT id FROM {m}") == [[-1]]
    assert versions.history(table_of(catalog, "big")).count() == 2


def test_the_worker_refuses_a_time_travel_clause_the_planner_did_not_replace(
    alice_sql: Pipeline, catalog: str, three_versions: str
) -> None:
    """A hand-made plan whose text still holds ``VERSION AS OF`` after an alias: Spark's own
    parse has a ``RelationTimeTravel`` node, which the worker's guard does not allow."""
    plan = planned(alice_sql.session, f"SELECT count(*) FROM {three_versions}")
    assert "`__tessera_r1` AS `m`" in plan["sql"], plan["sql"]
    plan["sql"] = plan["sql"].replace("`__tessera_r1` AS `m`", "`__tessera_r1` VERSION AS OF 0")
    job = wait_job(alice_sql.api, submit_plan(alice_sql.user, plan, session=alice_sql.session).id)
    assert job["status"] == "FAILED", job
    assert job["error"]["code"] == "FORBIDDEN_SQL", job["error"]
