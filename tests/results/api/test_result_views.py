"""Server-side sort, filter and chart aggregation over a stored result, and a saved query's
chart config: the happy paths and the hostile ones (another user, bad columns, injection-
looking values, huge sizes)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

import pyarrow as pa  # type: ignore[import-untyped]
import pytest

from core import jobstate
from jobs import lifecycle
from jobs.models import Job, Session
from results import store
from sessions import statements
from tests.conftest import API, assert_error

pytestmark = pytest.mark.django_db

N = 5000
COLUMNS = [
    {"name": "id", "data_type": "BIGINT"},
    {"name": "s", "data_type": "STRING"},
    {"name": "price", "data_type": "DECIMAL(10, 2)"},
    {"name": "day", "data_type": "DATE"},
    {"name": "ts", "data_type": "TIMESTAMP"},
    {"name": "tags", "data_type": "ARRAY<STRING>"},
    {"name": "a:b", "data_type": "INT"},
]


def table() -> pa.Table:
    ids = list(range(N))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            # NULL every 7th row; one row holds a SQL-injection-looking text.
            "s": pa.array(
                [None if i % 7 == 0 else ("x' OR '1'='1" if i == 13 else f"v{i}") for i in ids],
                pa.string(),
            ),
            "price": pa.array([Decimal(i % 100) / 4 for i in ids], pa.decimal128(10, 2)),
            "day": pa.array([date(2024, 1, 1) + timedelta(days=i % 366) for i in ids], pa.date32()),
            "ts": pa.array(
                [datetime(2024, 1, 1, tzinfo=UTC) + timedelta(minutes=i) for i in ids],
                pa.timestamp("us", tz="UTC"),
            ),
            "tags": pa.array([[f"t{i % 3}"] for i in ids], pa.list_(pa.string())),
            "a:b": pa.array([i % 5 for i in ids], pa.int32()),
        }
    )


@pytest.fixture(autouse=True)
def results_dir(settings, tmp_path):
    settings.RESULTS_DIR = tmp_path / "results"
    return settings.RESULTS_DIR


@pytest.fixture
def job(alice_api) -> Job:
    response = alice_api.post(f"{API}/sessions", {})
    assert response.status_code == 201
    session = Session.objects.select_related("user").get(pk=response.json()["id"])
    sql = "SELECT * FROM t"
    plan = {"kind": "query", "action": "query", "needs_spark": True, "sql": sql, "args": {}}
    created = statements.submit_plan(session=session, sql=sql, plan=plan)
    lifecycle.transition(created.id, jobstate.CREATED, jobstate.RUNNING, worker="w")
    result = store.write_result(created.id, table(), columns=COLUMNS, truncated=False)
    return lifecycle.transition(created.id, jobstate.RUNNING, jobstate.FINISHED, result=result)


def url(job: Job, path: str = "result", **params: Any) -> str:
    return f"{API}/jobs/{job.id}/{path}?{urlencode(params, doseq=True)}"


def page(api: Any, job: Job, **params: Any) -> dict[str, Any]:
    response = api.get(url(job, **params))
    assert response.status_code == 200, response.content
    body: dict[str, Any] = response.json()
    return body


def test_sort_orders_the_whole_result_with_nulls_last(alice_api, job):
    body = page(alice_api, job, sort="id:desc", page_size=3)
    assert [r[0] for r in body["rows"]] == [N - 1, N - 2, N - 3]
    assert body["row_count"] == N
    # The next page continues in the same order.
    following = page(
        alice_api, job, sort="id:desc", page_size=3, page_token=body["next_page_token"]
    )
    assert [r[0] for r in following["rows"]] == [N - 4, N - 5, N - 6]
    # Text sorts as text; NULLs come last whichever the direction; the last page by offset.
    asc = page(alice_api, job, sort="s:asc", page_size=2)
    assert [r[1] for r in asc["rows"]] == ["v1", "v10"]
    nulls = (N + 6) // 7
    last = page(alice_api, job, sort="s:desc", page_size=1000, offset=N - nulls)
    assert last["next_page_token"] is None
    assert [r[1] for r in last["rows"]] == [None] * nulls
    assert page(alice_api, job, sort="s:desc", page_size=1)["rows"][0][1] == "x' OR '1'='1"
    # Decimals sort as numbers, dates as dates.
    assert page(alice_api, job, sort="price:desc", page_size=1)["rows"][0][2] == "24.75"
    assert page(alice_api, job, sort="day:desc", page_size=1)["rows"][0][3] == "2024-12-31"


def test_filters_over_the_whole_result(alice_api, job):
    body = page(alice_api, job, filter="s:contains:V49", sort="id:asc", page_size=1000)
    ids = [r[0] for r in body["rows"]]
    expected = [i for i in range(N) if i % 7 and i != 13 and "v49" in f"v{i}"]
    assert ids == expected and body["row_count"] == len(expected)
    # Several filters all hold; symbols and words are the same operators.
    both = page(alice_api, job, filter=["id:>=:100", "id:lt:110", "s:not_null"], page_size=50)
    assert [r[0] for r in both["rows"]] == [100, 101, 102, 103, 104, 106, 107, 108, 109]
    assert page(alice_api, job, filter="s:is_null", page_size=1)["row_count"] == (N + 6) // 7
    assert page(alice_api, job, filter="price:=:24.75", page_size=1)["row_count"] == N // 100
    assert page(alice_api, job, filter="day:ge:2024-12-31", page_size=1)["row_count"] == 13
    ts = page(alice_api, job, filter="ts:<:2024-01-01T00:10:00+00:00", page_size=100)
    assert [r[0] for r in ts["rows"]] == list(range(10))
    # Times are searched as they are shown (ISO-8601).
    assert (
        page(alice_api, job, filter="ts:contains:2024-01-01T00:0", page_size=1)["row_count"] == 10
    )
    naive = page(alice_api, job, filter="ts:<:2024-01-01T00:10:00", page_size=100)  # UTC
    assert naive["row_count"] == 10
    # A column name holding ':' is still found.
    assert page(alice_api, job, filter="a:b:eq:4", page_size=1)["row_count"] == N // 5
    # Nested values: null checks only.
    assert page(alice_api, job, filter="tags:not_null", page_size=1)["row_count"] == N


def test_an_injection_looking_value_is_only_data(alice_api, job):
    body = page(alice_api, job, filter="s:eq:x' OR '1'='1", page_size=10)
    assert body["row_count"] == 1 and body["rows"][0][0] == 13
    assert page(alice_api, job, filter="s:eq:' OR 1=1 --", page_size=10)["row_count"] == 0
    assert page(alice_api, job, filter="s:contains:%", page_size=10)["row_count"] == 0
    assert page(alice_api, job, filter="s:contains:.*", page_size=10)["row_count"] == 0


def test_bad_sorts_and_filters_are_refused(alice_api, job):
    def refused(params: dict[str, Any], *fragments: str) -> None:
        error = assert_error(alice_api.get(url(job, **params)), 400, "VALIDATION_ERROR", *fragments)
        assert error["details"]["field"] in ("sort", "filter", "offset", "page_size")

    refused({"sort": "nope:asc"}, "no column named 'nope'")
    refused({"sort": "id:sideways"}, "asc", "desc")
    refused({"sort": "id; DROP TABLE jobs_job:asc"}, "no column named")
    refused({"sort": "tags:asc"}, "nested")
    refused({"filter": "id:like:1"}, "contains")
    refused({"filter": "id:eq:one"}, "'one' is not a value of column 'id'")
    refused({"filter": "day:lt:yesterday"}, "not a value of column 'day'")
    refused({"filter": "id:eq"}, "needs a value")
    refused({"filter": "s:is_null:x"}, "takes no value")
    refused({"filter": "tags:contains:t1"}, "nested")
    refused({"filter": ["id:not_null"] * 21}, "At most 20 filters")
    refused({"filter": "s:contains:" + "x" * 5000}, "at most")
    refused({"offset": "-1"}, "offset")
    refused({"page_size": "1000000"}, "page_size")


def test_duplicate_column_names_must_be_aliased(alice_api, job):
    job.result = {**job.result, "columns": [*COLUMNS[:-1], {"name": "id", "data_type": "INT"}]}
    job.save(update_fields=["result"])
    assert_error(alice_api.get(url(job, sort="id:asc")), 400, "VALIDATION_ERROR", "aliases")


def test_another_users_job_is_not_found(bob_api, job):
    for path, params in (
        ("result", {"sort": "id:asc"}),
        ("result", {"filter": "s:contains:v"}),
        ("result/chart", {"x": "day", "y": "id", "aggregation": "sum"}),
    ):
        assert_error(bob_api.get(url(job, path, **params)), 404, "NOT_FOUND")


def chart(api: Any, job: Job, **params: Any) -> dict[str, Any]:
    response = api.get(url(job, "result/chart", **params))
    assert response.status_code == 200, response.content
    body: dict[str, Any] = response.json()
    return body


def test_a_chart_aggregates_the_whole_result_by_x(alice_api, job):
    # Five distinct X values: one point each, summed over all 5,000 rows.
    body = chart(alice_api, job, x="a:b", y="id", aggregation="sum")
    assert body["x"] == [0, 1, 2, 3, 4]
    assert body["series"] == [
        {"name": "id", "values": [float(sum(i for i in range(N) if i % 5 == k)) for k in range(5)]}
    ]
    assert body["rows"] == N and body["binned"] is False and body["groups"] == 5
    # count needs no Y; a filter narrows the rows charted.
    counted = chart(alice_api, job, x="a:b", aggregation="count", filter="id:lt:10")
    assert counted["series"] == [{"name": "count", "values": [2.0] * 5}] and counted["rows"] == 10
    # avg of two series.
    two = chart(alice_api, job, x="a:b", y=["id", "price"], aggregation="avg")
    assert [s["name"] for s in two["series"]] == ["id", "price"]


def test_a_time_x_is_binned_into_readable_steps(alice_api, job):
    body = chart(alice_api, job, x="ts", y="id", aggregation="count", points=100)
    assert body["binned"] is True and body["x_column"] == {"name": "ts", "kind": "time"}
    assert len(body["x"]) <= 100
    assert sum(body["series"][0]["values"]) == N
    # Bins start on whole hours (5,000 minutes: 84 one-hour bins fit in 100 points).
    assert body["bin_width"] == 3600 * 1_000_000 and len(body["x"]) == 84
    assert all(x.endswith(":00:00+00:00") for x in body["x"])
    days = chart(alice_api, job, x="day", y="price", aggregation="max", points=20)
    assert days["binned"] is True and len(days["x"]) <= 20
    assert days["x"][0] <= "2024-01-01" and all(len(x) == 10 for x in days["x"])


def test_text_x_keeps_its_largest_groups(alice_api, job):
    body = chart(alice_api, job, x="s", y="id", aggregation="sum", points=3)
    assert body["groups"] == N - (N + 6) // 7 + 1  # distinct texts, and NULL
    assert body["omitted_groups"] == body["groups"] - 3
    assert len(body["x"]) == 3 and None in body["x"]  # the NULL group is by far the largest


def test_no_aggregation_samples_rows_for_a_scatter(alice_api, job):
    body = chart(alice_api, job, x="id", y="price", points=50)
    assert body["sampled"] is True and len(body["x"]) == 50
    assert body["x"] == sorted(body["x"])


def test_bad_charts_are_refused(alice_api, job):
    def refused(params: dict[str, Any], *fragments: str) -> None:
        assert_error(
            alice_api.get(url(job, "result/chart", **params)), 400, "VALIDATION_ERROR", *fragments
        )

    refused({"y": "id"}, "X column")
    refused({"x": "nope", "y": "id"}, "no column named 'nope'")
    refused({"x": "id", "y": "s", "aggregation": "sum"}, "not numeric")
    refused({"x": "id", "y": "id", "aggregation": "median"}, "aggregation must be one of")
    refused({"x": "id", "y": "id", "points": "100000000"}, "points")
    refused({"x": "id", "y": ["id"] * 11}, "at most 10")
    refused({"x": "tags", "y": "id", "aggregation": "sum"}, "nested")
    refused({"x": "id", "y": "id", "filter": "id:zz:1"}, "op one of")


def test_a_saved_query_keeps_its_chart(alice_api, bob_api):
    config = {"type": "line", "x": "day", "y": ["amount"], "aggregation": "sum"}
    created = alice_api.post(
        f"{API}/saved-queries", {"name": "q", "sql": "SELECT 1", "chart": config}, format="json"
    )
    assert created.status_code == 201, created.content
    assert created.json()["chart"] == config
    item = f"{API}/saved-queries/{created.json()['id']}"
    changed = {**config, "type": "pie", "y": ["amount", "n"]}
    patched = alice_api.patch(item, {"chart": changed}, format="json")
    assert patched.status_code == 200 and patched.json()["chart"] == changed
    assert alice_api.get(item).json()["chart"] == changed
    assert alice_api.patch(item, {"chart": None}, format="json").json()["chart"] is None
    plain = alice_api.post(f"{API}/saved-queries", {"name": "p", "sql": "SELECT 1"}, format="json")
    assert plain.json()["chart"] is None
    # Another user may not change it.
    assert_error(bob_api.patch(item, {"chart": config}, format="json"), 404, "NOT_FOUND")
    for bad, fragment in (
        ("bar", "must be an object"),
        ({**config, "type": "radar"}, "chart.type"),
        ({**config, "y": "amount"}, "chart.y"),
        ({**config, "y": ["c"] * 11}, "chart.y"),
        ({**config, "x": ""}, "chart.x"),
        ({**config, "aggregation": "median"}, "chart.aggregation"),
        ({**config, "script": "<x>"}, "unknown fields"),
    ):
        error = assert_error(
            alice_api.patch(item, {"chart": bad}, format="json"), 400, "VALIDATION_ERROR", fragment
        )
        assert error["details"]["field"] == "chart"
