"""``webapp.rows.RowReader`` gives the object the ORM gives, on either database (this module
runs on PostgreSQL in ``make test`` and on SQLite in ``scripts/test-sqlite.sh``)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import ApiToken
from accounts.tokens import key_digest, token_create
from jobs.models import Job, Session
from sessions import services as session_services
from webapp.rows import RowReader

pytestmark = pytest.mark.django_db


def _fields(obj: Any) -> dict[str, Any]:
    return {k: v for k, v in vars(obj).items() if k != "_state" and not k.startswith("_")}


def test_a_token_with_its_user_is_what_the_orm_reads(alice: User) -> None:
    _token, key = token_create(user=alice, name="laptop", expires_in_seconds=3600)
    reader = RowReader(ApiToken, "digest", select_related=("user",))
    with CaptureQueriesContext(connection) as queries:
        found = reader.get(key_digest(key))
    expected = ApiToken.objects.select_related("user").get(digest=key_digest(key))
    assert found is not None and len(queries) == 1  # the user joined, not read after
    assert _fields(found) == _fields(expected)
    assert _fields(found.user) == _fields(expected.user)
    assert found.expires is not None and found.expires.tzinfo is not None
    assert reader.get(key_digest(key + "x")) is None


def test_a_session_keeps_its_types_json_and_uuid_included(alice: User, bob: User) -> None:
    session, _ = session_services.session_open(user=alice, start="workspace")
    Session.objects.filter(pk=session.pk).update(properties={"spark.sql.ansi.enabled": "true"})
    reader = RowReader(Session, "id", "user_id", select_related=("user",))
    for _ in range(2):  # the second call runs the kept SQL with new values
        found = reader.get(session.pk, alice.pk)
        assert found is not None
        expected = Session.objects.select_related("user").get(pk=session.pk)
        assert _fields(found) == _fields(expected)
        assert found.properties == {"spark.sql.ansi.enabled": "true"}
        assert isinstance(found.pk, uuid.UUID) and found.user.username == "alice"
    assert reader.get(session.pk, bob.pk) is None  # another user's: no row
    assert reader.get(str(session.pk), alice.pk) is not None  # text keys are prepared
    assert reader.get(None, alice.pk) is None


def test_a_job_is_found_only_by_its_whole_key(alice: User, bob: User) -> None:
    session, _ = session_services.session_open(user=alice, start="workspace")
    job = Job.objects.create(user=alice, session=session, sql="SELECT 1")
    reader = RowReader(Job, "id", "user_id", "session_id")
    found = reader.get(job.pk, alice.pk, session.pk)
    assert found is not None and _fields(found) == _fields(Job.objects.get(pk=job.pk))
    assert reader.get(job.pk, bob.pk, session.pk) is None
    assert reader.get(job.pk, alice.pk, uuid.uuid4()) is None
    with pytest.raises(TypeError):
        reader.get(job.pk, alice.pk)
