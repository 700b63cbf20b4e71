"""Every conformance case as a pipeline job on a worker (the second runtime, FLIP-32):
``EXECUTE PIPELINE 'tests.conformance.cases:case_<name>' WITH ('db' = …)``, where ``t_env``
is the worker's own ``TableEnvironment``; and the shipped examples run the same way.

Needs pipeline jobs (issue 16 item 1: ``EXECUTE PIPELINE``, ``POST /sessions/{id}/pipelines``)
and a worker whose ``TESSERA_PIPELINE_PACKAGES`` includes ``tests.conformance`` (the shared
test worker's WORKER_ENV, tests/workers.py). The statements are sent with the remote client
(any SQL client can send ``EXECUTE PIPELINE``); a FAILED pipeline shows its error and the
traceback frames of the case in the assertion message.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd  # type: ignore[import-untyped]
import pytest
import requests

from tests.conformance.cases import CASES
from tests.conformance.conftest import CATALOG, db_for
from tests.conftest import token_for
from tests.examples.test_examples_remote import (
    GAP_MINUTES,
    changes_frame,
    expected_revenue,
    expected_sessions,
    orders_frame,
    page_views,
    replayed,
)
from tests.live_client import connect_as, tessera

pytestmark = [pytest.mark.slow, pytest.mark.spark]

PACKAGES = ("tessera_pipelines", "tests.conformance")
PIPELINE_TIMEOUT = 240.0
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _pipelines_allowed(settings: Any) -> None:
    """The web side (the live server runs in this process) allows the cases' package too."""
    settings.TESSERA_PIPELINE_PACKAGES = PACKAGES


def explain(error: tessera.TesseraError) -> str:
    """A failed pipeline's error with its traceback frames, for an assertion message."""
    details = json.dumps(error.details, indent=2, default=str)[:6000]
    return f"{error.code}: {error.message}\n{details}"


def run_pipeline(t_env: tessera.TableEnvironment, entry_point: str, **args: str) -> Any:
    with_clause = ", ".join(
        f"{tessera.string_literal(k)} = {tessera.string_literal(v)}" for k, v in args.items()
    )
    sql = f"EXECUTE PIPELINE {tessera.string_literal(entry_point)}"
    if with_clause:
        sql += f" WITH ({with_clause})"
    try:
        result = t_env.execute_sql(sql).wait(timeout=PIPELINE_TIMEOUT)
    except tessera.TesseraError as error:
        pytest.fail(f"{entry_point} did not finish: {explain(error)}", pytrace=False)
    assert result.status == "FINISHED", result.job
    assert result.job["kind"] == "pipeline", result.job
    return result


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_passes_in_a_pipeline_on_the_worker(server, name):
    with connect_as(server, "alice") as env:
        env.execute_sql(f"CREATE CATALOG {CATALOG}").wait()
    with connect_as(server, "alice", catalog=CATALOG) as t_env:
        run_pipeline(t_env, f"tests.conformance.cases:case_{name}", db=db_for(name))


def test_a_failing_case_fails_its_pipeline_with_the_cases_own_frames(server):
    """The suite can fail in the worker: a case given a db it refuses is a FAILED job whose
    error is the case's assertion, its frames those of tests/conformance/cases.py."""
    with connect_as(server, "alice") as env:
        env.execute_sql(f"CREATE CATALOG {CATALOG}").wait()
    with connect_as(server, "alice", catalog=CATALOG) as t_env:
        sql = "EXECUTE PIPELINE 'tests.conformance.cases:case_errors' WITH ('db' = 'Not-A-Name')"
        with pytest.raises(tessera.TesseraError) as failed:
            t_env.execute_sql(sql).wait(timeout=PIPELINE_TIMEOUT)
    error = failed.value
    assert "AssertionError" in error.message and "lower-case identifier" in error.message
    frames = error.details.get("traceback") or []
    assert frames, explain(error)
    assert all(str(f.get("file", "")).startswith("tests/conformance/") for f in frames), frames
    assert "/work/" not in json.dumps(error.details), "no server paths in the error"


def test_sessionize_over_sql_and_rest_gives_what_plain_pyspark_computes(server, plain_spark):
    """The issue's "must show": a shipped example run as a pipeline from SQL (the editor's
    way) and over REST: FINISHED, its target active with the rows plain PySpark computes."""
    frame = page_views(seed=7)
    expected = expected_sessions(plain_spark, frame)
    with connect_as(server, "alice") as env:
        env.execute_sql("CREATE CATALOG web").wait()
    with connect_as(server, "alice", catalog="web") as t_env:
        t_env.execute_sql(
            "CREATE TABLE page_views (user_id BIGINT, ts TIMESTAMP, url STRING)"
        ).wait()
        t_env.from_pandas(frame).execute_insert("page_views").wait()
        run_pipeline(
            t_env,
            "tessera_pipelines.sessions:sessionize",
            source="page_views",
            target="sessions_sql",
            gap_minutes=str(GAP_MINUTES),
        )
        response = requests.post(
            f"{server}/api/v1/sessions/{t_env.session_id}/pipelines",
            json={
                "entry_point": "tessera_pipelines.sessions:sessionize",
                "args": {"source": "page_views", "target": "sessions_rest", "gap_minutes": 30},
            },
            headers={"Authorization": f"Token {token_for('alice')}"},
            timeout=30,
        )
        assert response.status_code == 201, response.text
        job = response.json()
        assert job["kind"] == "pipeline", job
        done = tessera.TableResult(t_env._http, job)
        try:
            done.wait(timeout=PIPELINE_TIMEOUT)
        except tessera.TesseraError as error:
            pytest.fail(f"over REST: {explain(error)}", pytrace=False)
        for target in ("sessions_sql", "sessions_rest"):
            read = t_env.from_path(target).select(
                "user_id",
                "session_no",
                "unix_seconds(session_start)",
                "unix_seconds(session_end)",
                "pages",
                "distinct_urls",
                "entry_url",
                "exit_url",
            )
            assert {tuple(r) for r in read.collect()} == expected, target


def test_a_bad_argument_fails_the_example_with_its_sentence(server):
    with connect_as(server, "alice") as env:
        env.execute_sql("CREATE CATALOG web").wait()
    with connect_as(server, "alice", catalog="web") as t_env:
        sql = (
            "EXECUTE PIPELINE 'tessera_pipelines.sessions:sessionize' "
            "WITH ('source' = 'v', 'target' = 's', 'gap_minutes' = 'soon')"
        )
        with pytest.raises(tessera.TesseraError) as failed:
            t_env.execute_sql(sql).wait(timeout=PIPELINE_TIMEOUT)
    assert failed.value.message.startswith("ValueError: The argument 'gap_minutes'"), explain(
        failed.value
    )


def walkthrough() -> tuple[list[str], list[list[str]]]:
    """The statements of docs/pipeline-examples.md's sessionize example and its table."""
    text = (ROOT / "docs" / "pipeline-examples.md").read_text()
    section = text[text.index("## Sessionize page views") :]
    block = section[section.index("```sql") + len("```sql") : section.index("```\n\n")]
    code = "\n".join(line.split("--")[0] for line in block.splitlines())
    statements = [s.strip() for s in code.split(";") if s.strip()]
    lines = [line for line in section.splitlines() if line.startswith("| ")]
    table = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[1:]]
    return statements, table


def test_the_walkthrough_gives_the_table_the_docs_show(server):
    statements, table = walkthrough()
    assert statements[-1].startswith("SELECT") and len(table) == 3, (statements, table)
    with connect_as(server, "alice") as env:
        env.execute_sql("CREATE CATALOG web").wait()
    with connect_as(server, "alice", catalog="web") as t_env:
        for sql in statements[:-1]:
            try:
                t_env.execute_sql(sql).wait(timeout=PIPELINE_TIMEOUT)
            except tessera.TesseraError as error:
                pytest.fail(f"{sql}: {explain(error)}", pytrace=False)
        shown = [
            [
                value.strftime("%Y-%m-%d %H:%M:%S") if hasattr(value, "strftime") else str(value)
                for value in row
            ]
            for row in t_env.execute_sql(statements[-1]).wait().collect()
        ]
    assert shown == table


def test_daily_revenue_as_a_pipeline_upserts_the_days_plain_pyspark_computes(server, plain_spark):
    """The upsert example as a pipeline job: the keyed target made on the first run, and a
    second run with ``since`` rewrites only the days from then on (needs upserts)."""
    first = orders_frame(1, 200, [0, 1, 2, 3], seed=5)
    more = orders_frame(1000, 30, [3, 4], seed=6)
    with connect_as(server, "alice") as env:
        env.execute_sql("CREATE CATALOG shop").wait()
    with connect_as(server, "alice", catalog="shop") as t_env:
        t_env.execute_sql(
            "CREATE TABLE orders (order_id BIGINT, ordered_at TIMESTAMP, amount DECIMAL(12, 2))"
        ).wait()
        t_env.from_pandas(first).execute_insert("orders").wait()
        entry = "tessera_pipelines.revenue:daily_revenue"
        run_pipeline(t_env, entry, orders="orders", target="daily")

        def read() -> dict[Any, Any]:
            rows = t_env.from_path("daily").collect()
            return {r["day"]: (r["revenue"], r["orders"]) for r in rows}

        assert read() == expected_revenue(plain_spark, first)
        before = read()
        t_env.from_pandas(more).execute_insert("orders").wait()
        day3 = sorted(before)[3]
        run_pipeline(t_env, entry, orders="orders", target="daily", since=day3.isoformat())
        after = read()
    assert after == expected_revenue(plain_spark, pd.concat([first, more], ignore_index=True))
    assert {d: v for d, v in after.items() if d < day3} == {
        d: v for d, v in before.items() if d < day3
    }


def test_replay_changelog_as_a_pipeline_gives_the_replay_by_hand(server):
    frame = changes_frame(seed=9)
    with connect_as(server, "alice") as env:
        env.execute_sql("CREATE CATALOG cdc").wait()
    with connect_as(server, "alice", catalog="cdc") as t_env:
        t_env.execute_sql(
            "CREATE TABLE changes (seq BIGINT, op STRING, id BIGINT, name STRING, city STRING)"
        ).wait()
        t_env.from_pandas(frame).execute_insert("changes").wait()
        run_pipeline(
            t_env,
            "tessera_pipelines.changelog:replay_changelog",
            changes="changes",
            target="customers",
            key="id",
        )
        read = t_env.from_path("customers").select("id", "name", "city")
        assert {tuple(r) for r in read.collect()} == replayed(frame)
