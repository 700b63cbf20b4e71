"""Downloads of a result as the grid shows it: sorted and filtered like a result page, and
named after the query (docs/api.md "Results"); the hostile cases: bad sorts and filters,
names that would break out of the header or the folder, another user's job."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest

from results import store
from tests.conftest import assert_error
from tests.results.api.test_result_views import N, job, results_dir, url

pytestmark = pytest.mark.django_db

__all__ = ["job", "results_dir"]  # fixtures


def body(response: Any) -> bytes:
    assert response.status_code == 200, getattr(response, "content", b"")
    return b"".join(response.streaming_content)


def test_a_sorted_and_filtered_download_has_the_rows_shown_in_their_order(alice_api, job):
    params = {"sort": "price:desc", "filter": ["id:lt:200", "s:not_null"], "name": "Top prices"}
    expected = sorted(
        (i for i in range(200) if i % 7 != 0), key=lambda i: (-(i % 100), i)
    )  # a stable sort: equal prices keep the stored order

    response = alice_api.get(url(job, "result.csv", **params))
    assert response["Content-Disposition"] == 'attachment; filename="Top prices.csv"'
    rows = list(csv.reader(io.StringIO(body(response).decode())))
    assert rows[0][:3] == ["id", "s", "price"]
    assert [int(row[0]) for row in rows[1:]] == expected

    response = alice_api.get(url(job, "result.json", **params))
    assert 'filename="Top prices.json"' in response["Content-Disposition"]
    lines = [json.loads(line) for line in body(response).decode().splitlines()]
    assert [line["id"] for line in lines] == expected

    response = alice_api.get(url(job, "result.parquet", **params))
    assert 'filename="Top prices.parquet"' in response["Content-Disposition"]
    back = pq.read_table(io.BytesIO(body(response)))
    assert back.column("id").to_pylist() == expected


def test_no_sort_or_filter_is_the_whole_result_as_stored(alice_api, job):
    rows = list(csv.reader(io.StringIO(body(alice_api.get(url(job, "result.csv"))).decode())))
    assert [int(row[0]) for row in rows[1:]] == list(range(N))
    # A filter nothing passes: the header alone.
    none = body(alice_api.get(url(job, "result.csv", filter="id:lt:0"))).decode()
    assert none.splitlines() == ["id,s,price,day,ts,tags,a:b"]


@pytest.mark.parametrize(
    ("name", "filename"),
    [
        (None, "job-{id}.csv"),
        ("", "job-{id}.csv"),
        ("Query 1", "Query 1.csv"),
        ('a"b\r\nSet-Cookie: x=1', "a_b_Set-Cookie_ x_1.csv"),
        ("../../etc/passwd", "etc_passwd.csv"),
        ("..", "job-{id}.csv"),
        ("\x00\x1f", "job-{id}.csv"),
        ("x" * 300, "x" * store.FILENAME_STEM_MAX + ".csv"),
    ],
)
def test_the_file_is_named_after_the_name_asked_made_safe(alice_api, job, name, filename):
    params = {} if name is None else {"name": name}
    response = alice_api.get(url(job, "result.csv", **params))
    assert response.status_code == 200
    expected = filename.format(id=job.id)
    assert response["Content-Disposition"] == f'attachment; filename="{expected}"'
    assert "\n" not in response["Content-Disposition"]


def test_a_name_beyond_ascii_is_sent_as_rfc_5987(alice_api, job):
    response = alice_api.get(url(job, "result.csv", name="Umsätze März"))
    assert response["Content-Disposition"] == (
        "attachment; filename*=utf-8''Ums%C3%A4tze%20M%C3%A4rz.csv"
    )


def test_bad_sorts_and_filters_of_a_download_are_refused(alice_api, job):
    def refused(path: str, params: dict[str, Any], field: str, *fragments: str) -> None:
        error = assert_error(alice_api.get(url(job, path, **params)), 400, "VALIDATION_ERROR")
        assert error["details"]["field"] == field, error
        for fragment in fragments:
            assert fragment in error["message"], error

    refused("result.csv", {"sort": "nope:asc"}, "sort", "no column named 'nope'")
    refused("result.json", {"sort": "tags:desc"}, "sort", "nested")
    refused("result.parquet", {"filter": "id:eq:one"}, "filter", "not a value of column 'id'")
    refused("result.csv", {"filter": ["id:not_null"] * 21}, "filter", "At most 20 filters")
    # The Arrow stream is the stored result as it is: asked otherwise, it says so.
    refused("result.arrow", {"sort": "id:asc"}, "sort", "csv, json and parquet")
    refused("result.arrow", {"name": "x"}, "name", "csv, json and parquet")


def test_another_users_download_is_not_found(bob_api, job):
    for fmt in ("csv", "json", "parquet"):
        response = bob_api.get(url(job, f"result.{fmt}", sort="id:asc", name="mine"))
        assert_error(response, 404, "NOT_FOUND")
