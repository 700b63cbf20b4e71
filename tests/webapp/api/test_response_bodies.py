"""Every body comes from the serializer the OpenAPI document names or describes: bodies that
the document once left undocumented (the error envelope, health's 503, a new session's
started_in) have the serializer's fields, in its order."""

from __future__ import annotations

from typing import Any

import pytest

from sessions.serializers import SessionCreatedOut
from tests.conftest import API
from webapp.errors import ErrorDetailOut, ErrorOut
from webapp.health import HealthUnavailableOut

pytestmark = pytest.mark.django_db


def _document(client: Any) -> dict[str, Any]:
    response = client.get(f"{API}/schema?format=json")
    assert response.status_code == 200
    document: dict[str, Any] = response.json()
    return document


def test_the_error_body_is_error_out_and_the_document_describes_it(anon_api: Any) -> None:
    response = anon_api.get(f"{API}/no-such-thing")
    body = response.json()
    assert response.status_code == 404
    assert list(body) == list(ErrorOut().fields)
    assert list(body["error"]) == [f for f in ErrorDetailOut().fields if f in body["error"]]
    assert body == ErrorOut(body).data
    description = _document(anon_api)["info"]["description"]
    assert '{"error": {"code"' in description and "details" in description


def test_a_validation_error_keeps_its_details_through_error_out(alice_api: Any) -> None:
    response = alice_api.post(f"{API}/catalogs", {"name": 5, "comment": ["x"]})
    body = response.json()
    assert response.status_code == 400, body
    assert list(body["error"]) == ["code", "message", "details"]
    assert body["error"]["details"]["field"] in {"name", "comment"}


def test_health_503_is_health_unavailable_out_and_described(anon_api: Any, settings: Any) -> None:
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    response = anon_api.get(f"{API}/health")
    body = response.json()
    assert response.status_code == 503
    assert list(body) == list(HealthUnavailableOut().fields)
    assert body == HealthUnavailableOut(body).data
    operation = _document(anon_api)["paths"]["/api/v1/health"]["get"]
    assert "503" in operation["description"] and "UNAVAILABLE" in operation["description"]


def test_a_new_session_is_session_created_out(alice_api: Any) -> None:
    response = alice_api.post(f"{API}/sessions", {"start": "workspace"})
    body = response.json()
    assert response.status_code == 201, body
    assert list(body) == list(SessionCreatedOut().fields)
    assert body["started_in"] in {
        "requested",
        "last_used",
        "user_default",
        "server_default",
        "personal",
        "none",
    }
    schema = _document(alice_api)["components"]["schemas"]["SessionCreatedOut"]
    assert set(schema["properties"]) == set(body)
