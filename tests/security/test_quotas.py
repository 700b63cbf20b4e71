"""Per-user quotas (docs/security.md §4, "Quotas"; sessions/quotas.py, jobs/scheduling.py): bob
at each limit is refused cleanly in the API's error shape with nothing created or left on
disk, alice is not concerned by bob's use, and another user's session never counts for or
against alice. ``GET /users/me`` shows each limit with its use.

No worker: streams wait CREATED (with no live worker a stream is admitted by the global
stream slots), so only the user's own limit refuses them here.
"""

from __future__ import annotations

import io
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from jobs.models import Job, Session, TemporaryObject, Upload
from sessions import quotas, uploads
from tests.conftest import API, PASSWORD, assert_error, client_for

ARROW = "application/vnd.apache.arrow.stream"


@pytest.fixture(autouse=True)
def places(settings: Any, tmp_path: Path) -> Path:
    external = tmp_path / "external"
    (external / "events").mkdir(parents=True)
    settings.TESSERA_STORAGE_ROOTS = [external.resolve()]
    settings.WAREHOUSE_DIR = tmp_path / "warehouse"
    settings.UPLOADS_DIR = tmp_path / "uploads"
    return external


def _session(client: APIClient, **body: Any) -> str:
    response = client.post(f"{API}/sessions", body, format="json")
    assert response.status_code == 201, response.content
    return str(response.json()["id"])


def _ipc(rows: int = 200) -> bytes:
    sink = io.BytesIO()
    table = pa.table({"id": pa.array(range(rows), pa.int64())})
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def _upload(client: Any, session: str, body: bytes) -> Any:
    return client.generic("POST", f"{API}/sessions/{session}/uploads", body, content_type=ARROW)


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


# --- streams ---------------------------------------------------------------------------------


class StreamConsole:
    """A streaming session of one user with a temporary table over a directory."""

    def __init__(self, client: APIClient, source: Path, catalog: str) -> None:
        self.client = client
        made = client.post(f"{API}/catalogs", {"name": catalog}, format="json")
        assert made.status_code == 201, made.content
        made = client.post(f"{API}/catalogs/{catalog}/databases", {"name": "db"}, format="json")
        assert made.status_code == 201, made.content
        session = _session(
            client,
            properties={"execution.runtime-mode": "streaming"},
            current_catalog=catalog,
            current_database="db",
        )
        self.url = f"{API}/sessions/{session}/statements"
        made = self.post(
            "CREATE TEMPORARY TABLE r (`value` BIGINT) "
            f"WITH ('connector' = 'parquet', 'path' = '{source}')"
        )
        assert made.status_code == 201 and made.json()["status"] == "FINISHED", made.json()["error"]

    def post(self, sql: str) -> Any:
        return self.client.post(self.url, {"sql": sql}, format="json")


def test_bob_at_his_stream_limit_is_429_and_alice_still_streams(
    settings: Any, places: Path, alice_api: APIClient, bob: User, bob_api: APIClient
) -> None:
    settings.TESSERA_USER_STREAMS = 1
    bobs = StreamConsole(bob_api, places / "events", "bobs")
    first = bobs.post("SELECT `value` FROM r")
    assert first.status_code == 201 and first.json()["status"] == "CREATED", first.content
    before = Job.objects.count()
    refused = bobs.post("SELECT `value` FROM r")
    error = assert_error(
        refused, 429, "TOO_MANY_STREAMS", "You already have 1 stream", "TESSERA_USER_STREAMS"
    )
    assert "stream slot of the live workers" not in error["message"]  # not the global one
    assert error["details"] == {
        "limit": "user_streams",
        "streams": 1,
        "maximum": 1,
        "retry_after": 30,
    }
    assert refused["Retry-After"] == "30"
    assert Job.objects.count() == before  # nothing created
    # Alice's own limit is hers: bob's stream is not counted against her.
    alices = StreamConsole(alice_api, places / "events", "alices")
    assert alices.post("SELECT `value` FROM r").status_code == 201
    # A batch statement of bob's is not a stream; his canceled stream frees his place.
    assert bobs.post("SET 'execution.runtime-mode' = 'batch'").status_code == 201
    assert bobs.post("SELECT 1").status_code == 201
    cancel = bob_api.post(f"{API}/jobs/{first.json()['id']}/cancel")
    assert cancel.status_code == 200, cancel.content
    assert bobs.post("SET 'execution.runtime-mode' = 'streaming'").status_code == 201
    assert bobs.post("SELECT `value` FROM r").status_code == 201


# --- uploads ---------------------------------------------------------------------------------


def test_bob_past_his_upload_bytes_is_413_with_nothing_left_and_alice_uploads(
    settings: Any, alice_api: APIClient, bob: User, bob_api: APIClient
) -> None:
    body = _ipc()
    settings.TESSERA_USER_UPLOAD_BYTES = len(body) * 3 // 2  # one fits, two do not
    first_session, second_session = _session(bob_api), _session(bob_api)
    assert _upload(bob_api, first_session, body).status_code == 201
    held = _files(Path(settings.UPLOADS_DIR))
    # In another session of his: the quota is the user's, not the session's.
    refused = _upload(bob_api, second_session, body)
    error = assert_error(refused, 413, "UPLOAD_QUOTA_EXCEEDED", "TESSERA_USER_UPLOAD_BYTES")
    assert error["details"] == {
        "limit": len(body) * 3 // 2,
        "used": len(body),
        "size": len(body),
    }
    assert Upload.objects.filter(session__user=bob).count() == 1
    assert _files(Path(settings.UPLOADS_DIR)) == held  # nothing of it on disk
    # Without a Content-Length the reader stops at the room left, and nothing stays.
    session = Session.objects.get(pk=second_session)
    with pytest.raises(quotas.UploadQuotaExceeded):
        uploads.upload_create(session=session, body=io.BytesIO(body))
    assert _files(Path(settings.UPLOADS_DIR)) == held
    # Alice's uploads are hers.
    assert _upload(alice_api, _session(alice_api), body).status_code == 201
    # Bob deletes his upload: room again.
    upload = Upload.objects.get(session__user=bob)
    gone = bob_api.delete(f"{API}/sessions/{first_session}/uploads/{upload.pk}")
    assert gone.status_code == 204
    assert _upload(bob_api, second_session, body).status_code == 201


def test_two_uploads_at_once_cannot_both_take_the_last_bytes(
    transactional_db: None, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = _ipc()
    settings.TESSERA_USER_UPLOAD_BYTES = len(body) * 3 // 2
    bob = User.objects.create_user("bob", password=PASSWORD)
    sessions = [_session(client_for(bob)) for _ in range(2)]
    # Both have been read and written before either is stored: each alone fits.
    both_written = threading.Barrier(2, timeout=30)
    reserve = quotas.reserve_upload

    def reserve_together(user_id: Any, size: int) -> None:
        both_written.wait()
        reserve(user_id, size)

    monkeypatch.setattr(quotas, "reserve_upload", reserve_together)
    statuses: list[int] = []

    def send(session: str) -> None:
        try:
            statuses.append(_upload(client_for(bob), session, body).status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=send, args=(s,)) for s in sessions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(statuses) == [201, 413]
    assert Upload.objects.filter(session__user=bob).count() == 1
    assert len(_files(Path(settings.UPLOADS_DIR))) == 1  # the refused one's file is gone


# --- sessions --------------------------------------------------------------------------------


_TEMPORARY_TABLE = (
    "CREATE TEMPORARY TABLE anywhere.db.t (a BIGINT) WITH ('connector' = 'parquet', "
    "'path' = '{path}')"
)


def _busy(session_id: str, user: User) -> Job:
    return Job.objects.create(
        user=user, session_id=session_id, sql="SELECT 1", kind="query", status="CREATED"
    )


def test_bob_past_his_sessions_closes_his_oldest_idle_one_or_is_429(
    settings: Any,
    places: Path,
    alice: User,
    alice_api: APIClient,
    bob: User,
    bob_api: APIClient,
    django_capture_on_commit_callbacks: Any,
) -> None:
    settings.TESSERA_USER_SESSIONS = 3
    alices = _session(alice_api)
    oldest, middle, newest = (_session(bob_api) for _ in range(3))
    _busy(middle, bob)
    # The oldest holds a temporary table and an upload: they go with it.
    made = bob_api.post(
        f"{API}/sessions/{oldest}/statements",
        {"sql": _TEMPORARY_TABLE.format(path=places / "events")},
        format="json",
    )
    assert made.status_code == 201 and made.json()["status"] == "FINISHED", made.json()["error"]
    assert _upload(bob_api, oldest, _ipc()).status_code == 201
    assert TemporaryObject.objects.filter(session_id=oldest).exists()
    # Bob uses the oldest again: now the newest is the least recently used idle one.
    now = timezone.now()
    Session.objects.filter(pk=oldest).update(last_used_at=now)
    Session.objects.filter(pk=newest).update(last_used_at=now - timedelta(hours=1))
    with django_capture_on_commit_callbacks(execute=True):
        fourth = _session(bob_api)
    mine = {str(pk) for pk in Session.objects.filter(user=bob).values_list("pk", flat=True)}
    assert mine == {oldest, middle, fourth}  # the least recently used idle one went
    assert TemporaryObject.objects.filter(session_id=oldest).exists()
    # Now every one of his sessions runs a job: none is closed, 429 and nothing created.
    _busy(oldest, bob), _busy(fourth, bob)
    refused = bob_api.post(f"{API}/sessions", {}, format="json")
    error = assert_error(refused, 429, "TOO_MANY_SESSIONS", "TESSERA_USER_SESSIONS", "3")
    assert error["details"] == {"sessions": 3, "maximum": 3, "retry_after": 5}
    assert refused["Retry-After"] == "5"
    assert Session.objects.filter(user=bob).count() == 3
    # Alice's session was never a candidate, and bob cannot reach it to close it.
    assert Session.objects.filter(pk=alices).exists()
    assert bob_api.delete(f"{API}/sessions/{alices}").status_code == 404
    assert _upload(bob_api, alices, _ipc()).status_code == 404
    assert alice_api.post(f"{API}/sessions", {}, format="json").status_code == 201


def test_the_oldest_idle_session_goes_with_its_temporary_objects_and_upload_files(
    settings: Any,
    places: Path,
    bob: User,
    bob_api: APIClient,
    django_capture_on_commit_callbacks: Any,
) -> None:
    settings.TESSERA_USER_SESSIONS = 1
    first = _session(bob_api)
    made = bob_api.post(
        f"{API}/sessions/{first}/statements",
        {"sql": _TEMPORARY_TABLE.format(path=places / "events")},
        format="json",
    )
    assert made.status_code == 201 and made.json()["status"] == "FINISHED", made.json()["error"]
    assert _upload(bob_api, first, _ipc()).status_code == 201
    assert _files(Path(settings.UPLOADS_DIR))
    with django_capture_on_commit_callbacks(execute=True):
        second = _session(bob_api)
    assert list(Session.objects.filter(user=bob).values_list("pk", flat=True)) == [
        Session.objects.get(pk=second).pk
    ]
    assert not TemporaryObject.objects.filter(session_id=first).exists()
    assert not Upload.objects.filter(session_id=first).exists()
    assert _files(Path(settings.UPLOADS_DIR)) == []
    assert bob_api.get(f"{API}/sessions/{first}").status_code == 404


# --- GET /users/me ---------------------------------------------------------------------------


def test_users_me_shows_each_limit_with_its_use(
    settings: Any, places: Path, alice_api: APIClient, bob: User, bob_api: APIClient
) -> None:
    settings.TESSERA_USER_STREAMS = 2
    settings.TESSERA_USER_SESSIONS = 10
    settings.TESSERA_USER_UPLOAD_BYTES = 1 << 20
    settings.TESSERA_USER_RUNNING_JOBS = 3
    settings.TESSERA_USER_QUEUED_JOBS = 0  # no limit
    body = _ipc()
    bobs = StreamConsole(bob_api, places / "events", "bobs")
    assert bobs.post("SELECT `value` FROM r").status_code == 201
    assert _upload(bob_api, _session(bob_api), body).status_code == 201
    Job.objects.filter(user=bob, status="CREATED").update(status="RUNNING")
    me = bob_api.get(f"{API}/users/me")
    assert me.status_code == 200
    assert me.json()["quotas"] == {
        "running_jobs": {"limit": 3, "used": 1},
        "queued_jobs": {"limit": None, "used": 1},
        "streams": {"limit": 2, "used": 1},
        "sessions": {"limit": 10, "used": 2},
        "upload_bytes": {"limit": 1 << 20, "used": len(body)},
    }
    # Bob's use is his: alice holds one session (the one asked now) and nothing else.
    _session(alice_api)
    assert alice_api.get(f"{API}/users/me").json()["quotas"] == {
        "running_jobs": {"limit": 3, "used": 0},
        "queued_jobs": {"limit": None, "used": 0},
        "streams": {"limit": 2, "used": 0},
        "sessions": {"limit": 10, "used": 1},
        "upload_bytes": {"limit": 1 << 20, "used": 0},
    }
