"""``GET /sessions/{id}/resolve?missing=ok``: a lookup while a path is typed answers 200
``{"found": false}`` for a path that names nothing yet (no 404 in the server's log), and
everything else exactly as without it."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tests.conftest import API, assert_error
from tests.sessions.api.test_completion import open_session

pytestmark = pytest.mark.django_db


@pytest.fixture
def sales(make: Any, storage: Any) -> None:
    make.catalog("demo")
    make.database("demo", "sales")
    make.table("demo", "sales", "orders")


def resolve(client: Any, session: str, **params: Any) -> Any:
    return client.get(f"{API}/sessions/{session}/resolve", params)


def test_a_missing_path_is_found_false_and_logs_no_404(
    alice_api: Any, sales: None, caplog: pytest.LogCaptureFixture
) -> None:
    session = open_session(alice_api, current_catalog="demo", current_database="sales")
    with caplog.at_level(logging.WARNING, logger="django.request"):
        for typed in ("o", "or", "ord", "orde", "demo.sales.ord", "nope.x.y"):
            response = resolve(alice_api, session, path=typed, missing="ok")
            assert response.status_code == 200, response.content
            body = response.json()
            assert body["found"] is False and body["object"] is None
            assert "does not exist" in body["message"] or "not found" in body["message"].lower()
    assert not [r for r in caplog.records if "Not Found" in r.getMessage()]

    found = resolve(alice_api, session, path="orders", missing="ok").json()
    assert found["found"] is True and found["identifier"] == ["demo", "sales", "orders"]
    assert found["object"]["name"] == "orders"


def test_without_missing_ok_the_contract_is_unchanged(alice_api: Any, sales: None) -> None:
    session = open_session(alice_api, current_catalog="demo", current_database="sales")
    assert_error(resolve(alice_api, session, path="ord"), 404, "NOT_FOUND")
    body = resolve(alice_api, session, path="orders").json()
    assert "found" not in body and body["identifier"] == ["demo", "sales", "orders"]


def test_bad_input_and_other_users_are_still_refused(
    alice_api: Any, bob_api: Any, sales: None
) -> None:
    session = open_session(alice_api, current_catalog="demo", current_database="sales")
    assert_error(resolve(alice_api, session, path="a.b.c.d", missing="ok"), 400, "VALIDATION_ERROR")
    assert_error(resolve(alice_api, session, path="`x", missing="ok"), 400, "VALIDATION_ERROR")
    assert_error(
        resolve(alice_api, session, path="t", kind="x", missing="ok"), 400, "VALIDATION_ERROR"
    )
    # Another user's session is not a lookup's business: still 404.
    assert_error(resolve(bob_api, session, path="orders", missing="ok"), 404, "NOT_FOUND")
    huge = resolve(alice_api, session, path="x" * 100_000, missing="ok")
    assert huge.status_code in (200, 400)
    if huge.status_code == 200:
        assert huge.json()["found"] is False
