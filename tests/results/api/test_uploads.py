"""Uploads (``POST/GET /sessions/{id}/uploads``, ``DELETE …/uploads/{upload}``): Arrow IPC in,
parquet on disk, the limits, ownership, and the files going with the upload or its session.
Tables over uploads are planned here too (no worker: their refusals come from the planner);
reading them with Spark is in tests/results/worker/test_uploads.py."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import tracemalloc
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from core.errors import PayloadTooLarge
from jobs.models import Session, TemporaryObject, Upload
from sessions import upload_formats, uploads
from tests.conftest import API, assert_error
from tests.sessions.api.test_statements import Console

pytestmark = pytest.mark.django_db

ARROW = "application/vnd.apache.arrow.stream"


@pytest.fixture(autouse=True)
def uploads_dir(settings, tmp_path: Path) -> Path:
    settings.UPLOADS_DIR = tmp_path / "uploads"
    settings.TESSERA_UPLOAD_MAX_BYTES = 10 * 1024 * 1024
    return Path(settings.UPLOADS_DIR)


def ipc(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table, max_chunksize=2)
    return sink.getvalue()


def session_of(client: Any) -> str:
    response = client.post(f"{API}/sessions", {})
    assert response.status_code == 201, response.content
    return str(response.json()["id"])


def post(client: Any, session: str, body: bytes, content_type: str = ARROW) -> Any:
    return client.generic(
        "POST", f"{API}/sessions/{session}/uploads", body, content_type=content_type
    )


def files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


EVERY_TYPE = pa.table(
    {
        "id": pa.array([1, 2, None], pa.int64()),
        "small": pa.array([1, None, 3], pa.int8()),
        "flag": pa.array([True, None, False]),
        "price": pa.array(
            [decimal.Decimal("12345678901234567890.1234567890"), None, decimal.Decimal("-1")],
            pa.decimal128(38, 10),
        ),
        "at": pa.array(
            [dt.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=dt.UTC), None, dt.datetime(1970, 1, 1)],
            pa.timestamp("us", tz="UTC"),
        ),
        "local": pa.array([dt.datetime(2024, 1, 2, 3, 4, 5), None, None], pa.timestamp("ns")),
        "day": pa.array([dt.date(2024, 2, 29), None, dt.date(1999, 12, 31)], pa.date32()),
        "raw": pa.array([b"\x00\xff", None, b""], pa.binary()),
        "name": pa.array(["a", None, "ü"], pa.large_string()),
        "items": pa.array(
            [[{"k": "x", "v": 1.5}], None, []],
            pa.list_(pa.struct([("k", pa.string()), ("v", pa.float64())])),
        ),
        "tags": pa.array([[("a", 1)], None, []], pa.map_(pa.string(), pa.int32())),
        "count": pa.array([1, 2, 3], pa.uint64()),
        "kind": pa.array(["x", "y", "x"]).dictionary_encode(),
    }
)

EVERY_TYPE_COLUMNS = [
    {"name": "id", "data_type": "BIGINT"},
    {"name": "small", "data_type": "TINYINT"},
    {"name": "flag", "data_type": "BOOLEAN"},
    {"name": "price", "data_type": "DECIMAL(38, 10)"},
    {"name": "at", "data_type": "TIMESTAMP"},
    {"name": "local", "data_type": "TIMESTAMP_NTZ"},
    {"name": "day", "data_type": "DATE"},
    {"name": "raw", "data_type": "BINARY"},
    {"name": "name", "data_type": "STRING"},
    {"name": "items", "data_type": "ARRAY<STRUCT<k: STRING, v: DOUBLE>>"},
    {"name": "tags", "data_type": "MAP<STRING, INT>"},
    {"name": "count", "data_type": "DECIMAL(20, 0)"},
    {"name": "kind", "data_type": "STRING"},
]


def test_an_upload_becomes_one_parquet_file_of_the_session(alice_api, uploads_dir):
    session = session_of(alice_api)
    body = ipc(EVERY_TYPE)
    response = post(alice_api, session, body)
    assert response.status_code == 201, response.content
    answer = response.json()
    assert set(answer) == {"id", "rows", "bytes", "columns", "created_at"}
    assert answer["rows"] == 3 and answer["bytes"] == len(body)
    assert answer["columns"] == EVERY_TYPE_COLUMNS
    where = uploads_dir / session / answer["id"]
    assert files(uploads_dir) == [where / "part-00000.parquet"]
    stored = pq.read_table(where / "part-00000.parquet")
    # Timestamps in microseconds (Spark's unit); the values themselves unchanged.
    assert stored.schema.field("local").type == pa.timestamp("us")
    assert stored.column("price").to_pylist() == EVERY_TYPE.column("price").to_pylist()
    assert stored.column("items").to_pylist() == EVERY_TYPE.column("items").to_pylist()
    assert stored.column("at").to_pylist() == EVERY_TYPE.column("at").to_pylist()
    row = Upload.objects.get()
    assert (str(row.id), str(row.session_id), row.rows) == (answer["id"], session, 3)

    listed = alice_api.get(f"{API}/sessions/{session}/uploads").json()
    assert [item["id"] for item in listed["items"]] == [answer["id"]]
    one = alice_api.get(f"{API}/sessions/{session}/uploads/{answer['id']}").json()
    assert one == answer


def test_list_and_delete(alice_api, uploads_dir, django_capture_on_commit_callbacks):
    session = session_of(alice_api)
    ids = [post(alice_api, session, ipc(pa.table({"n": [i]}))).json()["id"] for i in range(3)]
    with CaptureQueriesContext(connection) as queries:
        listed = alice_api.get(f"{API}/sessions/{session}/uploads").json()["items"]
    assert [item["id"] for item in listed] == ids
    # The token, the session (no touch within seconds) and the uploads: not one per upload.
    assert len(queries) <= 3, [q["sql"] for q in queries]
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_api.delete(f"{API}/sessions/{session}/uploads/{ids[1]}")
    assert response.status_code == 204
    assert not (uploads_dir / session / ids[1]).exists()
    assert (uploads_dir / session / ids[0]).is_dir()
    assert [
        u["id"] for u in alice_api.get(f"{API}/sessions/{session}/uploads").json()["items"]
    ] == [
        ids[0],
        ids[2],
    ]
    assert_error(
        alice_api.delete(f"{API}/sessions/{session}/uploads/{ids[1]}"), 404, "NOT_FOUND", ids[1]
    )
    assert_error(alice_api.delete(f"{API}/sessions/{session}/uploads/../../x"), 404, "NOT_FOUND")


def test_another_users_session_and_uploads_are_not_found(alice_api, bob_api, uploads_dir):
    session = session_of(alice_api)
    upload = post(alice_api, session, ipc(pa.table({"n": [1]}))).json()["id"]
    assert_error(post(bob_api, session, ipc(pa.table({"n": [2]}))), 404, "NOT_FOUND")
    assert_error(bob_api.get(f"{API}/sessions/{session}/uploads"), 404, "NOT_FOUND")
    assert_error(bob_api.delete(f"{API}/sessions/{session}/uploads/{upload}"), 404, "NOT_FOUND")
    # Nor through a session of bob's own.
    bobs = session_of(bob_api)
    assert_error(bob_api.get(f"{API}/sessions/{bobs}/uploads/{upload}"), 404, "NOT_FOUND")
    assert_error(bob_api.delete(f"{API}/sessions/{bobs}/uploads/{upload}"), 404, "NOT_FOUND")
    # Nobody signed in: 401 before the body is read.
    anonymous = post(Client(), session, ipc(pa.table({"n": [3]})))
    assert_error(anonymous, 401, "NOT_AUTHENTICATED")
    assert Upload.objects.count() == 1
    assert len(files(uploads_dir)) == 1


def test_a_body_over_the_limit_is_413_and_leaves_nothing(alice_api, settings, uploads_dir):
    settings.TESSERA_UPLOAD_MAX_BYTES = 4096
    session = session_of(alice_api)
    body = ipc(pa.table({"n": list(range(2000))}))
    assert len(body) > 4096
    error = assert_error(
        post(alice_api, session, body),
        413,
        "PAYLOAD_TOO_LARGE",
        "The upload is larger than the server's limit of 4,096 bytes.",
    )
    assert error["details"] == {"limit": 4096}
    assert files(uploads_dir) == [] and not Upload.objects.exists()
    # The request limit of other endpoints does not apply to uploads, and the reverse.
    settings.TESSERA_UPLOAD_MAX_BYTES = 10 * 1024 * 1024
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    assert post(alice_api, session, body).status_code == 201


def test_the_bytes_received_are_counted_whatever_the_length_said(settings, alice, uploads_dir):
    """Past the middleware (a Content-Length under the limit), the counting reader stops."""
    settings.TESSERA_UPLOAD_MAX_BYTES = 4096
    session = Session.objects.create(
        user=alice, last_used_at=dt.datetime.now(dt.UTC), idle_timeout_seconds=60
    )
    body = io.BytesIO(ipc(pa.table({"n": list(range(2000))})))
    with pytest.raises(PayloadTooLarge) as raised:
        uploads.upload_create(session=session, body=body)
    assert raised.value.details == {"limit": 4096}
    assert files(uploads_dir) == [] and not Upload.objects.exists()
    assert [p.name for p in (uploads_dir / str(session.id)).iterdir()] == []


@pytest.mark.parametrize(
    "body",
    [b"", b"not arrow at all", b"\xff\xff\xff\xff" + b"\x00" * 64],
    ids=["empty", "text", "garbage"],
)
def test_a_body_that_is_not_an_arrow_stream_is_400(alice_api, uploads_dir, body):
    session = session_of(alice_api)
    assert_error(
        post(alice_api, session, body), 400, "VALIDATION_ERROR", "not a valid Arrow IPC stream"
    )
    assert files(uploads_dir) == [] and not Upload.objects.exists()


def test_a_cut_off_stream_is_400_and_leaves_nothing(alice_api, uploads_dir):
    session = session_of(alice_api)
    body = ipc(pa.table({"n": list(range(100))}))
    assert_error(
        post(alice_api, session, body[: len(body) - 40]),
        400,
        "VALIDATION_ERROR",
        "not a valid Arrow IPC stream",
    )
    assert files(uploads_dir) == []


def test_an_arrow_file_instead_of_a_stream_is_400(alice_api):
    sink = io.BytesIO()
    table = pa.table({"n": [1]})
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    assert_error(post(alice_api, session_of(alice_api), sink.getvalue()), 400, "VALIDATION_ERROR")


def test_another_content_type_is_415(alice_api):
    session = session_of(alice_api)
    body = ipc(pa.table({"n": [1]}))
    error = assert_error(
        post(alice_api, session, body, "application/json"),
        415,
        "UNSUPPORTED_MEDIA_TYPE",
        ARROW,
    )
    assert error["details"]["expected"] == ARROW
    assert error["details"]["accepted"] == [ARROW, "text/csv", "application/vnd.apache.parquet"]


@pytest.mark.parametrize(
    ("column", "fragment"),
    [
        (pa.array([dt.time(1, 2)], pa.time64("us")), "no time-of-day type"),
        (pa.array([1], pa.duration("s")), "durations and intervals"),
        (pa.array([None], pa.null()), "only NULLs needs a type"),
        (pa.array([decimal.Decimal(1)], pa.decimal256(40, 0)), "at most 38 digits"),
        (pa.array([[dt.time(1)]], pa.list_(pa.time32("s"))), "no time-of-day type"),
    ],
    ids=["time", "duration", "null", "decimal256", "nested-time"],
)
def test_types_spark_cannot_read_are_400_naming_the_column(
    alice_api, uploads_dir, column, fragment
):
    table = pa.table({"fine": [1], "bad col": column})
    error = assert_error(
        post(alice_api, session_of(alice_api), ipc(table)),
        400,
        "VALIDATION_ERROR",
        "Column `bad col`",
        fragment,
    )
    assert error["details"]["column"].startswith("`bad col`")
    assert files(uploads_dir) == []


def test_float16_is_refused(alice_api):
    import numpy as np

    table = pa.table({"h": pa.array(np.array([1.5], dtype=np.float16))})
    assert_error(
        post(alice_api, session_of(alice_api), ipc(table)), 400, "VALIDATION_ERROR", "half"
    )


def test_column_names_must_be_present_and_distinct(alice_api, uploads_dir):
    session = session_of(alice_api)
    empty = pa.Table.from_arrays([pa.array([1]), pa.array([2])], names=["a", " "])
    assert_error(post(alice_api, session, ipc(empty)), 400, "VALIDATION_ERROR", "empty name")
    twice = pa.Table.from_arrays([pa.array([1]), pa.array([2])], names=["Amount", "amount"])
    assert_error(
        post(alice_api, session, ipc(twice)),
        400,
        "VALIDATION_ERROR",
        "two columns named `Amount` and `amount`",
    )
    none = pa.table({"n": [1]}).select([])
    assert_error(post(alice_api, session, ipc(none)), 400, "VALIDATION_ERROR", "no columns")
    assert files(uploads_dir) == []


def test_nanoseconds_that_would_be_lost_are_400(alice_api, uploads_dir):
    exact = pa.array([1_000, None], pa.timestamp("ns", tz="Europe/Paris"))
    assert post(alice_api, session_of(alice_api), ipc(pa.table({"t": exact}))).status_code == 201
    lossy = pa.array([1_001], pa.timestamp("ns"))
    assert_error(
        post(alice_api, session_of(alice_api), ipc(pa.table({"t": lossy}))),
        400,
        "VALIDATION_ERROR",
        "cannot be stored as Spark reads it",
    )
    assert len(files(uploads_dir)) == 1


def test_uploads_go_with_their_session(alice_api, uploads_dir, django_capture_on_commit_callbacks):
    session = session_of(alice_api)
    post(alice_api, session, ipc(pa.table({"n": [1]})))
    other = session_of(alice_api)
    post(alice_api, other, ipc(pa.table({"n": [1]})))
    with django_capture_on_commit_callbacks(execute=True):
        assert alice_api.delete(f"{API}/sessions/{session}").status_code == 204
    assert not (uploads_dir / session).exists()
    assert (uploads_dir / other).is_dir()
    assert Upload.objects.filter(session_id=other).count() == 1
    # An expired session goes with its uploads however it is found.
    Session.objects.filter(pk=other).update(last_used_at=dt.datetime(2000, 1, 1, tzinfo=dt.UTC))
    with django_capture_on_commit_callbacks(execute=True):
        assert alice_api.get(f"{API}/sessions").status_code == 200
    assert not (uploads_dir / other).exists() and not Upload.objects.exists()


def test_the_maintenance_sweep_ends_uploads_of_expired_sessions(
    alice_api, uploads_dir, django_capture_on_commit_callbacks
):
    from jobs import maintenance

    session = session_of(alice_api)
    post(alice_api, session, ipc(pa.table({"n": [1]})))
    Session.objects.filter(pk=session).update(last_used_at=dt.datetime(2000, 1, 1, tzinfo=dt.UTC))
    orphan = uploads_dir / str(uuid.uuid4()) / str(uuid.uuid4())
    orphan.mkdir(parents=True)
    with django_capture_on_commit_callbacks(execute=True):
        assert maintenance.expire_sessions() == 1
    assert not (uploads_dir / session).exists()
    assert not orphan.parent.exists()  # a session directory whose session is gone


# --- memory -------------------------------------------------------------------------------


class PartsBody(io.RawIOBase):
    """A request body of ``parts`` read in bounded chunks (never joined whole); records the
    largest read asked of it."""

    def __init__(self, parts: list[bytes]) -> None:
        super().__init__()
        self.length = sum(len(part) for part in parts)
        self.parts = iter(parts)
        self.pending = b""
        self.largest_read = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        assert size is not None and size >= 0, "the body must be read in bounded chunks"
        self.largest_read = max(self.largest_read, size)
        while len(self.pending) < size:
            part = next(self.parts, None)
            if part is None:
                break
            self.pending += part
        piece, self.pending = self.pending[:size], self.pending[size:]
        return piece


class LazyBody(PartsBody):
    """An Arrow IPC stream of ``batches`` copies of one ~1 MB batch, made as it is read."""

    def __init__(self, batches: int) -> None:
        table = pa.table({"v": pa.array(range(131_072), pa.int64())})
        head = io.BytesIO()
        with pa.ipc.new_stream(head, table.schema):
            pass
        one = io.BytesIO()
        with pa.ipc.new_stream(one, table.schema) as writer:
            writer.write_table(table)
        self.schema_part = head.getvalue()[:-8]
        self.batch_part = one.getvalue()[len(self.schema_part) : -8]
        self.eos = head.getvalue()[-8:]
        super().__init__([self.schema_part, *([self.batch_part] * batches), self.eos])


def test_a_200_mb_upload_is_streamed_in_bounded_memory(alice, settings, uploads_dir):
    settings.TESSERA_UPLOAD_MAX_BYTES = 1 << 30
    body = LazyBody(200)
    assert body.length > 200_000_000
    client = Client()
    client.force_login(alice)
    session = session_of_django(client)
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": f"{API}/sessions/{session}/uploads",
        "CONTENT_TYPE": ARROW,
        "CONTENT_LENGTH": str(body.length),
        "wsgi.input": body,
    }
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        response = client.request(**environ)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert response.status_code == 201, response.content
    assert response.json()["rows"] == 200 * 131_072
    assert response.json()["bytes"] == body.length
    # A batch (~1 MB) at a time, never the body: far below the 200 MB that went through.
    assert peak - base < 16 * 1024 * 1024, peak - base
    assert body.largest_read <= upload_formats.CHUNK_BYTES


def session_of_django(client: Client) -> str:
    response = client.post(f"{API}/sessions", "{}", content_type="application/json")
    assert response.status_code == 201, response.content
    return str(response.json()["id"])


# --- tables over uploads, as the planner sees them ------------------------------------------


@pytest.fixture
def console(alice_api, make) -> Console:
    make.catalog("demo")
    return Console(alice_api, current_catalog="demo")


def test_a_temporary_table_over_an_upload(console, alice_api):
    upload = post(alice_api, console.id, ipc(EVERY_TYPE)).json()["id"]
    assert (
        console.message(
            f"CREATE TEMPORARY TABLE t WITH ('connector' = 'upload', 'upload' = '{upload}')"
        )
        == "Created temporary table `demo`.`default`.`t`."
    )
    row = TemporaryObject.objects.get()
    assert row.definition["options"] == {"connector": "upload", "upload": upload}
    columns = row.definition["resolved_schema"]["columns"]
    assert [(c["name"], c["data_type"]) for c in columns] == [
        (c["name"], c["data_type"]) for c in EVERY_TYPE_COLUMNS
    ]
    # A declared schema: some columns, in another order, with a primary key.
    console.run(
        "CREATE TEMPORARY TABLE u (day DATE, count DECIMAL(20, 0) NOT NULL, "
        "PRIMARY KEY (count) NOT ENFORCED) "
        f"USING upload OPTIONS ('upload' = '{upload.upper()}')"
    )
    stored = TemporaryObject.objects.get(name="u").definition
    assert stored["options"] == {"connector": "upload", "upload": upload}


def test_a_declared_not_null_over_an_upload_with_a_null_is_refused_naming_the_row(
    console, alice_api
):
    upload = post(alice_api, console.id, ipc(EVERY_TYPE)).json()["id"]
    error = console.fails(
        f"CREATE TEMPORARY TABLE t (ID BIGINT NOT NULL, day DATE) WITH ('connector' = 'upload', "
        f"'upload' = '{upload}')",
        "VALIDATION_ERROR",
        "Column `ID` is declared NOT NULL but row 3 of upload",
    )
    assert error["details"] == {"column": "ID", "row": 3, "upload": upload}
    # "small" has its NULL in row 2 of the first batch of two rows.
    console.fails(
        "CREATE TEMPORARY TABLE t (small TINYINT NOT NULL) WITH ('connector' = 'upload', "
        f"'upload' = '{upload}')",
        "VALIDATION_ERROR",
        "row 2",
    )
    assert not TemporaryObject.objects.exists()


def test_an_arrow_field_that_is_not_nullable_stays_not_null_and_may_hold_no_null(
    alice_api, uploads_dir
):
    session = session_of(alice_api)
    schema = pa.schema([pa.field("k", pa.int64(), nullable=False), ("v", pa.string())])
    good = pa.Table.from_arrays([pa.array([1, 2, 3]), pa.array(["a", None, "c"])], schema=schema)
    answer = post(alice_api, session, ipc(good)).json()
    assert answer["columns"] == [
        {"name": "k", "data_type": "BIGINT NOT NULL"},
        {"name": "v", "data_type": "STRING"},
    ]
    bad = pa.Table.from_arrays([pa.array([1, 2, None]), pa.array(["a", "b", "c"])], schema=schema)
    error = assert_error(
        post(alice_api, session, ipc(bad)),
        400,
        "VALIDATION_ERROR",
        "Column `k` is not nullable in the Arrow schema but row 3",
    )
    assert error["details"] == {"column": "k", "row": 3}
    assert Upload.objects.count() == 1 and len(files(uploads_dir)) == 1


@pytest.mark.parametrize(
    "value",
    ["../x", "", "00000000-0000-0000-0000-000000000000", "/etc/passwd"],
    ids=["path", "empty", "made-up", "absolute"],
)
def test_a_table_over_an_upload_that_is_not_the_sessions_is_refused(console, value):
    console.fails(
        f"CREATE TEMPORARY TABLE t (a INT) WITH ('connector' = 'upload', 'upload' = '{value}')",
        "VALIDATION_ERROR",
    )
    assert not TemporaryObject.objects.exists()


def test_another_sessions_upload_is_refused(console, alice_api, bob_api):
    other = session_of(alice_api)  # alice's own, but another session
    upload = post(alice_api, other, ipc(pa.table({"a": [1]}))).json()["id"]
    bobs = session_of(bob_api)
    bobs_upload = post(bob_api, bobs, ipc(pa.table({"a": [1]}))).json()["id"]
    for candidate in (upload, bobs_upload):
        console.fails(
            f"CREATE TEMPORARY TABLE t WITH ('connector' = 'upload', 'upload' = '{candidate}')",
            "VALIDATION_ERROR",
            f"Upload '{candidate}' does not exist in this session",
        )


def test_an_upload_table_takes_no_path_nor_options_and_is_never_permanent(console, alice_api):
    upload = post(alice_api, console.id, ipc(pa.table({"a": [1]}))).json()["id"]
    console.fails(
        f"CREATE TEMPORARY TABLE t (a BIGINT) WITH ('connector' = 'upload', 'upload' = '{upload}', "
        "'path' = '/tmp')",
        "VALIDATION_ERROR",
        "drop LOCATION and 'path'",
    )
    console.fails(
        f"CREATE TEMPORARY TABLE t (a BIGINT) WITH ('connector' = 'upload', 'upload' = '{upload}', "
        "'mergeSchema' = 'true')",
        "VALIDATION_ERROR",
        "takes only the option 'upload'",
    )
    console.fails(
        f"CREATE TABLE t (a BIGINT) WITH ('connector' = 'upload', 'upload' = '{upload}')",
        "VALIDATION_ERROR",
        "Only a temporary table can read an upload",
    )
    console.fails(
        f"CREATE TABLE t USING upload OPTIONS ('upload' = '{upload}') AS SELECT 1 AS a",
        "VALIDATION_ERROR",
        "Only a temporary table can read an upload",
    )
    console.fails(
        "CREATE TEMPORARY TABLE t WITH ('connector' = 'parquet', 'path' = '/tmp/x')",
        "VALIDATION_ERROR",
        "needs a column list",
    )


def test_a_table_over_a_deleted_upload_fails_at_use(console, alice_api):
    upload = post(alice_api, console.id, ipc(pa.table({"a": [1]}))).json()["id"]
    console.run(f"CREATE TEMPORARY TABLE t WITH ('connector' = 'upload', 'upload' = '{upload}')")
    assert alice_api.delete(f"{API}/sessions/{console.id}/uploads/{upload}").status_code == 204
    console.fails("SELECT * FROM t", "VALIDATION_ERROR", f"its upload '{upload}' no longer exists")
