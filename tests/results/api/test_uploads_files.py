"""Uploads of CSV and Parquet files (``POST /sessions/{id}/uploads`` with ``text/csv`` or
``application/vnd.apache.parquet``): stored as the same parquet as Arrow uploads, with the
same checks, and refused with nothing left on disk."""

from __future__ import annotations

import datetime as dt
import io
import tracemalloc
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest

from jobs.models import Upload
from sessions import upload_formats
from tests.conftest import API, assert_error, json_client
from tests.results.api.test_uploads import (  # noqa: F401
    PartsBody,
    files,
    post,
    session_of,
    uploads_dir,
)

pytestmark = pytest.mark.django_db

CSV = "text/csv"
PARQUET = "application/vnd.apache.parquet"


def parquet(table: pa.Table, row_group_size: int = 2) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, row_group_size=row_group_size)
    return sink.getvalue()


def stored(uploads_dir: Path, session: str, upload: str) -> pa.Table:  # noqa: F811
    where = uploads_dir / session / upload
    assert files(uploads_dir) == [where / "part-00000.parquet"]
    return pq.read_table(where / "part-00000.parquet")


def test_a_csv_becomes_parquet_with_inferred_types(alice_api, uploads_dir):  # noqa: F811
    session = session_of(alice_api)
    body = (
        b"id,name,price,day,at,flag,note\n"
        b"1,ann,1.5,2024-02-29,2024-01-02 03:04:05,true,\n"
        b'2,"b, with comma",,2024-03-01,,false,\n'
    )
    response = post(alice_api, session, body, f"{CSV}; charset=utf-8")
    assert response.status_code == 201, response.content
    answer = response.json()
    assert (answer["rows"], answer["bytes"]) == (2, len(body))
    assert answer["columns"] == [
        {"name": "id", "data_type": "BIGINT"},
        {"name": "name", "data_type": "STRING"},
        {"name": "price", "data_type": "DOUBLE"},
        {"name": "day", "data_type": "DATE"},
        {"name": "at", "data_type": "TIMESTAMP_NTZ"},
        {"name": "flag", "data_type": "BOOLEAN"},
        # Empty in every row: no type to infer, so text (Spark reads no untyped column).
        {"name": "note", "data_type": "STRING"},
    ]
    table = stored(uploads_dir, session, answer["id"])
    assert table.column("name").to_pylist() == ["ann", "b, with comma"]
    assert table.column("at").to_pylist() == [dt.datetime(2024, 1, 2, 3, 4, 5), None]
    assert table.schema.field("at").type == pa.timestamp("us")


def test_a_large_csv_is_read_block_by_block(alice_api, uploads_dir):  # noqa: F811
    session = session_of(alice_api)
    body = b"n,s\n" + b"".join(b"%d,row %d\n" % (i, i) for i in range(200_000))
    assert len(body) > 2 << 20  # more than one block
    answer = post(alice_api, session, body, CSV).json()
    assert answer["rows"] == 200_000
    assert stored(uploads_dir, session, answer["id"]).column("n")[-1].as_py() == 199_999


def test_a_ragged_csv_row_is_400_naming_the_line(alice_api, uploads_dir):  # noqa: F811
    session = session_of(alice_api)
    error = assert_error(
        post(alice_api, session, b"a,b\n1,2\n3,4\n5\n6,7\n", CSV),
        400,
        "VALIDATION_ERROR",
        "Line 4 of the CSV file cannot be read",
        "Expected 2 columns, got 1",
    )
    assert error["details"] == {"line": 4}
    assert files(uploads_dir) == [] and not Upload.objects.exists()


def test_a_value_that_does_not_fit_the_inferred_type_is_400_naming_line_and_column(
    alice_api,
    uploads_dir,  # noqa: F811
):
    body = b"n,s\n" + b"".join(b"%d,x\n" % i for i in range(300_000)) + b"oops,x\n"
    error = assert_error(
        post(alice_api, session_of(alice_api), body, CSV),
        400,
        "VALIDATION_ERROR",
        "Line 300002 of the CSV file cannot be read: column `n` has invalid value 'oops'",
        "BIGINT",
        "first 1 MiB",
    )
    assert error["details"] == {"line": 300_002, "column": "n"}
    assert files(uploads_dir) == [] and not Upload.objects.exists()


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b"", "The CSV file is empty"),
        (b"a,,b\n1,2,3\n", "Column 2 of the upload has an empty name"),
        (b"Amount,amount\n1,2\n", "two columns named `Amount` and `amount`"),
        (b"a,a\n1,2\n", "two columns named `a` and `a`"),
        (b"a,b\n1,2,3\n", "Line 2 of the CSV file cannot be read: Expected 2 columns, got 3"),
    ],
    ids=["empty", "empty-name", "case-duplicate", "duplicate", "too-many-fields"],
)
def test_csv_refusals_are_400_and_leave_nothing(alice_api, uploads_dir, body, fragment):  # noqa: F811
    assert_error(
        post(alice_api, session_of(alice_api), body, CSV), 400, "VALIDATION_ERROR", fragment
    )
    assert files(uploads_dir) == [] and not Upload.objects.exists()


def test_a_csv_of_a_header_alone_is_an_empty_upload(alice_api, uploads_dir):  # noqa: F811
    answer = post(alice_api, session_of(alice_api), b"a,b\n", CSV).json()
    assert answer["rows"] == 0
    assert [c["data_type"] for c in answer["columns"]] == ["STRING", "STRING"]


def test_a_parquet_file_is_read_row_group_by_row_group(alice_api, uploads_dir):  # noqa: F811
    session = session_of(alice_api)
    table = pa.table(
        {
            "id": pa.array(range(7), pa.int32()),
            "at": pa.array([dt.datetime(2024, 1, 1, i) for i in range(7)], pa.timestamp("ms")),
            "name": [f"n{i}" for i in range(7)],
        }
    )
    body = parquet(table)
    assert pq.ParquetFile(io.BytesIO(body)).num_row_groups == 4
    answer = post(alice_api, session, body, PARQUET).json()
    assert (answer["rows"], answer["bytes"]) == (7, len(body))
    assert answer["columns"] == [
        {"name": "id", "data_type": "INT"},
        {"name": "at", "data_type": "TIMESTAMP_NTZ"},
        {"name": "name", "data_type": "STRING"},
    ]
    # The spooled file is gone: only the stored part remains.
    assert stored(uploads_dir, session, answer["id"]).to_pylist() == table.to_pylist()


@pytest.mark.parametrize(
    "body",
    [b"", b"a,b\n1,2\n", b"PAR1" + b"\x00" * 64 + b"PAR1"],
    ids=["empty", "csv", "forged-magic"],
)
def test_a_body_that_is_not_parquet_is_400_and_leaves_nothing(alice_api, uploads_dir, body):  # noqa: F811
    assert_error(
        post(alice_api, session_of(alice_api), body, PARQUET),
        400,
        "VALIDATION_ERROR",
        "not a Parquet file",
    )
    assert files(uploads_dir) == [] and not Upload.objects.exists()


def test_a_cut_off_parquet_file_is_400(alice_api, uploads_dir):  # noqa: F811
    body = parquet(pa.table({"n": list(range(100))}))
    assert_error(
        post(alice_api, session_of(alice_api), body[:-20], PARQUET), 400, "VALIDATION_ERROR"
    )
    assert files(uploads_dir) == []


def test_parquet_types_spark_cannot_read_are_refused_like_arrow(alice_api, uploads_dir):  # noqa: F811
    table = pa.table({"t": pa.array([dt.time(1, 2)], pa.time64("us"))})
    assert_error(
        post(alice_api, session_of(alice_api), parquet(table), PARQUET),
        400,
        "VALIDATION_ERROR",
        "Column `t`",
        "no time-of-day type",
    )
    assert files(uploads_dir) == []


@pytest.mark.parametrize("kind", [CSV, PARQUET])
def test_files_over_the_limit_are_413_and_leave_nothing(
    alice_api,
    settings,
    uploads_dir,  # noqa: F811
    kind,
):
    settings.TESSERA_UPLOAD_MAX_BYTES = 4096
    if kind == CSV:
        body = b"n\n" + b"".join(b"%d\n" % i for i in range(5000))
    else:
        body = parquet(pa.table({"n": [f"value {i}" for i in range(5000)]}), 5000)
    assert len(body) > 4096
    assert_error(post(alice_api, session_of(alice_api), body, kind), 413, "PAYLOAD_TOO_LARGE")
    assert files(uploads_dir) == [] and not Upload.objects.exists()


@pytest.mark.parametrize("kind", [CSV, PARQUET])
def test_another_users_session_is_not_found(alice_api, bob_api, uploads_dir, kind):  # noqa: F811
    session = session_of(alice_api)
    body = b"n\n1\n" if kind == CSV else parquet(pa.table({"n": [1]}))
    assert_error(post(bob_api, session, body, kind), 404, "NOT_FOUND")
    assert files(uploads_dir) == [] and not Upload.objects.exists()


@pytest.mark.parametrize("kind", [CSV, PARQUET, "application/vnd.apache.arrow.stream"])
def test_a_browser_session_uploads_with_its_csrf_token_and_not_without(alice, uploads_dir, kind):  # noqa: F811
    """The catalog page sends files with its session cookie: the CSRF check looks at the
    form data, which must not read (or refuse) the body the view streams."""
    from tests.results.api.test_uploads import ipc
    from tests.webapp.api.test_ui_auth import csrf_token, login

    browser: Any = json_client(enforce_csrf_checks=True)
    assert login(browser).status_code == 200
    token = csrf_token(browser)
    session = browser.post(f"{API}/sessions", {}, HTTP_X_CSRFTOKEN=token).json()["id"]
    body = {
        CSV: b"n\n1\n2\n",
        PARQUET: parquet(pa.table({"n": [1, 2]})),
    }.get(kind) or ipc(pa.table({"n": [1, 2]}))
    url = f"{API}/sessions/{session}/uploads"
    refused = browser.generic("POST", url, body, content_type=kind)
    assert_error(refused, 403, "PERMISSION_DENIED", "CSRF")
    response = browser.generic("POST", url, body, content_type=kind, HTTP_X_CSRFTOKEN=token)
    assert response.status_code == 201, response.content
    assert response.json()["rows"] == 2


class LazyCsv(PartsBody):
    """A CSV body of ``blocks`` blocks of ~1 MB made while it is read (never whole in memory)."""

    def __init__(self, blocks: int) -> None:
        self.block = b"".join(b"%d,name %d,%d.5\n" % (i, i, i) for i in range(50_000))
        super().__init__([b"id,name,amount\n", *([self.block] * blocks)])


def _measured(alice: Any, kind: str, body: Any, length: int) -> tuple[Any, int]:
    from django.test import Client

    client = Client()
    client.force_login(alice)
    session = client.post(f"{API}/sessions", "{}", content_type="application/json").json()["id"]
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        response = client.request(
            REQUEST_METHOD="POST",
            PATH_INFO=f"{API}/sessions/{session}/uploads",
            CONTENT_TYPE=kind,
            CONTENT_LENGTH=str(length),
            **{"wsgi.input": body},
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return response, peak - base


def test_a_140_mb_csv_is_read_in_bounded_memory(alice, settings, uploads_dir):  # noqa: F811
    settings.TESSERA_UPLOAD_MAX_BYTES = 1 << 30
    body = LazyCsv(120)
    assert body.length > 140_000_000
    response, peak = _measured(alice, CSV, body, body.length)
    assert response.status_code == 201, response.content
    assert (response.json()["rows"], response.json()["bytes"]) == (120 * 50_000, body.length)
    # pyarrow reads up to 32 blocks (of 1 MiB) ahead: about 40 MiB at most, never the body
    # (the same at 60 blocks as at 120).
    assert peak < 48 * 1024 * 1024, peak
    assert body.largest_read <= upload_formats.CHUNK_BYTES


def test_a_parquet_file_is_spooled_in_bounded_memory(alice, settings, uploads_dir, tmp_path):  # noqa: F811
    settings.TESSERA_UPLOAD_MAX_BYTES = 1 << 30
    source = tmp_path / "big.parquet"
    table = pa.table({"n": pa.array(range(4_000_000), pa.int64())})
    pq.write_table(table, source, row_group_size=500_000, compression="none")
    length = source.stat().st_size
    assert length > 30_000_000
    del table
    with source.open("rb") as body:
        response, peak = _measured(alice, PARQUET, body, length)
    assert response.status_code == 201, response.content
    assert response.json()["rows"] == 4_000_000
    assert peak < 16 * 1024 * 1024, peak  # chunks of the body, never the file
