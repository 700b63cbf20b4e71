"""GET /api/v1/health: readiness of the database and the (real) broker."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from kombu.connection import Connection

from jobs.models import Worker
from tests.conftest import API, assert_error

pytestmark = pytest.mark.django_db

HEALTH = f"{API}/health"


def test_healthy_without_authentication(anon_api, settings):
    assert settings.CELERY_BROKER_URL.startswith("redis://")  # the real Redis of the CI machine
    response = anon_api.get(HEALTH)
    assert response.status_code == 200, response.content
    assert response.json() == {"status": "ok", "database": "ok", "broker": "ok", "workers": 0}


def test_health_ignores_a_bad_token(anon_api):
    anon_api.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert anon_api.get(HEALTH).json()["status"] == "ok"


def test_workers_with_a_fresh_heartbeat_are_counted(anon_api):
    now = timezone.now()
    Worker.objects.create(hostname="w1", pid=1, started_at=now, last_heartbeat=now)
    Worker.objects.create(
        hostname="gone", pid=2, started_at=now, last_heartbeat=now - timedelta(hours=1)
    )
    assert anon_api.get(HEALTH).json()["workers"] == 1


def test_unreachable_broker_is_503_naming_the_broker(anon_api, settings, monkeypatch):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    attempts: list[object] = []
    connect = Connection._connection_factory

    def counted(self: Connection) -> object:
        attempts.append(self)
        return connect(self)

    monkeypatch.setattr(Connection, "_connection_factory", counted)
    response = anon_api.get(HEALTH)
    assert 1 <= len(attempts) <= 2  # fails fast (one retry at most) instead of retrying forever
    error = assert_error(response, 503, "UNAVAILABLE", "broker")
    assert "database" not in error["message"]
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["database"] == "ok"
    assert body["broker"].startswith("error:")
    assert body["workers"] == 0
    assert error["details"]["broker"] == body["broker"]
    assert error["details"]["database"] == "ok"
