"""Query parameters on a real worker: ``:name`` values go to Spark beside the text and are
bound as literals (never written into the SQL), so a hostile value stays data."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import API
from tests.worker_helpers import api_for, create_user, open_session, result_rows, wait_job

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker"),
]


def run(client: Any, session: str, sql: str, parameters: dict[str, Any]) -> dict[str, Any]:
    response = client.post(
        f"{API}/sessions/{session}/statements", {"sql": sql, "parameters": parameters}
    )
    assert response.status_code == 201, response.content
    return wait_job(client, response.json()["id"])


def test_the_same_query_with_other_values_gives_other_rows() -> None:
    client = api_for(create_user("paula"))
    session = open_session(client)
    sql = "SELECT id FROM range(0, 10) WHERE id >= :low AND id < :high ORDER BY id"

    first = run(client, session, sql, {"low": 2, "high": 5})
    second = run(client, session, sql, {"low": 7, "high": 9})

    assert first["status"] == "FINISHED", first["error"]
    assert second["status"] == "FINISHED", second["error"]
    assert result_rows(client, first["id"])[1] == [[2], [3], [4]]
    assert result_rows(client, second["id"])[1] == [[7], [8]]
    assert first["parameters"] == {"low": 2, "high": 5}
    assert first["sql"] == second["sql"] == sql  # the text was never rewritten


def test_values_of_every_allowed_type_are_bound_as_literals() -> None:
    client = api_for(create_user("tina"))
    session = open_session(client)
    job = run(
        client,
        session,
        "SELECT :s AS s, :i AS i, :f AS f, :b AS b, :n IS NULL AS n",
        {"s": "x", "i": 3, "f": 1.5, "b": True, "n": None},
    )
    assert job["status"] == "FINISHED", job["error"]
    columns, rows = result_rows(client, job["id"])
    assert rows == [["x", 3, 1.5, True, True]]
    assert [c["data_type"] for c in columns][:4] == ["STRING", "INT", "DOUBLE", "BOOLEAN"]


def test_a_hostile_value_stays_data() -> None:
    """A value that reads as SQL is a string literal to Spark: it is returned as it was
    sent, and nothing of it runs (the table it names to drop is still there)."""
    client = api_for(create_user("mallory"))
    session = open_session(client)
    hostile = "1; DROP TABLE x"
    job = run(client, session, "SELECT :v AS v, ':v' AS text", {"v": hostile})
    assert job["status"] == "FINISHED", job["error"]
    assert result_rows(client, job["id"])[1] == [[hostile, ":v"]]

    quote = "x' OR '1' = '1"
    job = run(client, session, "SELECT count(*) AS n FROM range(0, 5) WHERE :v = 'x'", {"v": quote})
    assert job["status"] == "FINISHED", job["error"]
    assert result_rows(client, job["id"])[1] == [[0]]


def test_current_catalog_and_database_answer_the_sessions() -> None:
    client = api_for(create_user("carla"))
    response = client.post(f"{API}/catalogs", {"name": "Kat"})
    assert response.status_code == 201, response.content
    response = client.post(f"{API}/sessions", {"current_catalog": "Kat"})
    session = response.json()["id"]
    job = run(
        client,
        session,
        "SELECT current_catalog() AS c, current_database() AS d, :x AS x",
        {"x": "y"},
    )
    assert job["status"] == "FINISHED", job["error"]
    assert result_rows(client, job["id"])[1] == [["Kat", "default", "y"]]
    assert job["parameters"] == {"x": "y"}

    nowhere = open_session(client)
    response = client.post(
        f"{API}/sessions/{nowhere}/statements", {"sql": "SELECT current_catalog() AS c"}
    )
    job = wait_job(client, response.json()["id"])
    assert job["status"] == "FINISHED", job["error"]
    assert result_rows(client, job["id"])[1] == [[None]]
