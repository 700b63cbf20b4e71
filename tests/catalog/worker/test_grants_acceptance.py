"""Issue 18's "what it must show", on a real worker: team grants decide what Bob sees and
reads, a revoke counts from his next statement, and a shared view gives him its rows only.

Alice shares her catalog the Unity Catalog way: ``USE`` on the catalog (Bob may enter it and
its databases, and sees no object inside) and ``SELECT`` on one table to team ``analysts``.
Carol, in no team, is the outsider: what she may not see answers exactly as a missing name.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest
from django.contrib.auth.models import Group

from tests.conftest import API
from tests.worker_helpers import Pipeline

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker"),
]


def failed(pipeline: Pipeline, sql: str) -> dict[str, Any]:
    job = pipeline.run(sql)
    assert job["status"] == "FAILED", (sql, job)
    return dict(job["error"])


def table_names(pipeline: Pipeline, catalog: str) -> list[str]:
    response = pipeline.api.get(f"{API}/catalogs/{catalog}/databases/d/tables")
    if response.status_code == 404:
        return []
    assert response.status_code == 200, response.content
    return [item["name"] for item in response.json()["items"]]


def searched(pipeline: Pipeline, catalog: str) -> set[tuple[str, str]]:
    response = pipeline.api.get(f"{API}/search?q=grant_t")
    assert response.status_code == 200, response.content
    return {
        (item["kind"], item["name"])
        for item in response.json()["items"]
        if item["catalog"] == catalog
    }


def completed(pipeline: Pipeline, catalog: str) -> list[str]:
    response = pipeline.api.get(f"{API}/complete?path={quote(f'{catalog}.d.')}")
    assert response.status_code == 200, response.content
    return sorted(item["label"] for item in response.json()["items"])


@pytest.fixture
def shared(alice_sql: Pipeline, catalog: str) -> dict[str, Pipeline]:
    """Alice's catalog with two tables; Bob in team ``analysts``; Carol in no team."""
    bob, carol = Pipeline("bob"), Pipeline("carol")
    analysts, _ = Group.objects.get_or_create(name="analysts")
    bob.user.groups.add(analysts)
    alice_sql.ok(f"USE {catalog}.d")
    alice_sql.ok("CREATE TABLE grant_t1 AS SELECT * FROM VALUES (1, 'a'), (2, 'b') AS v(id, name)")
    alice_sql.ok(
        "CREATE TABLE grant_t2 AS SELECT * FROM VALUES (1, 10), (2, 20), (3, 30) AS v(id, x)"
    )
    alice_sql.ok(f"GRANT USE ON CATALOG {catalog} TO TEAM analysts")
    alice_sql.ok(f"GRANT SELECT ON TABLE {catalog}.d.grant_t1 TO TEAM analysts")
    return {"alice": alice_sql, "bob": bob, "carol": carol}


def test_a_team_grant_shows_one_table_and_a_revoke_takes_it_back(
    shared: dict[str, Pipeline], catalog: str
) -> None:
    alice_sql, bob, carol = shared["alice"], shared["bob"], shared["carol"]
    t1, t2 = f"{catalog}.d.grant_t1", f"{catalog}.d.grant_t2"

    assert bob.rows(f"SELECT id, name FROM {t1} ORDER BY id") == [[1, "a"], [2, "b"]]
    assert table_names(bob, catalog) == ["grant_t1"]
    assert searched(bob, catalog) == {("table", "grant_t1")}
    assert completed(bob, catalog) == ["grant_t1"]
    # Bob may use the database, so a name in it he holds nothing on is refused, not hidden.
    refused = failed(bob, f"SELECT * FROM {t2}")
    assert refused["code"] == "PERMISSION_DENIED", refused
    assert "SELECT" in refused["message"] and "grant_t2" in refused["message"]
    # Writing needs MODIFY, which SELECT does not give.
    write = failed(bob, f"INSERT INTO {t1} VALUES (3, 'c')")
    assert write["code"] == "PERMISSION_DENIED" and "MODIFY" in write["message"], write

    alice_sql.ok(f"REVOKE SELECT ON TABLE {t1} FROM TEAM analysts")
    after = failed(bob, f"SELECT id FROM {t1}")
    assert after["code"] == "PERMISSION_DENIED", after
    assert table_names(bob, catalog) == []
    assert searched(bob, catalog) == set()
    assert completed(bob, catalog) == []

    # Carol sees nothing of the catalog: its table answers as a name that does not exist.
    hidden = failed(carol, f"SELECT * FROM {t1}")
    missing = failed(carol, f"SELECT * FROM {catalog}.d.no_such_table")
    assert hidden["code"] == missing["code"] == "NOT_FOUND", (hidden, missing)
    assert hidden["message"].replace("grant_t1", "X") == missing["message"].replace(
        "no_such_table", "X"
    )
    response = carol.api.get(f"{API}/catalogs/{catalog}")
    assert response.status_code == 404
    assert catalog not in {c["name"] for c in carol.api.get(f"{API}/catalogs").json()["items"]}


def test_a_shared_view_gives_its_rows_only(shared: dict[str, Pipeline], catalog: str) -> None:
    alice_sql, bob = shared["alice"], shared["bob"]
    t2 = f"{catalog}.d.grant_t2"
    alice_sql.ok(f"CREATE VIEW {catalog}.d.grant_tv AS SELECT id, x FROM {t2} WHERE id >= 2")
    alice_sql.ok(f"GRANT SELECT ON VIEW {catalog}.d.grant_tv TO TEAM analysts")

    assert bob.rows(f"SELECT id, x FROM {catalog}.d.grant_tv ORDER BY id") == [[2, 20], [3, 30]]
    assert failed(bob, f"SELECT * FROM {t2}")["code"] == "PERMISSION_DENIED"
    # Joining the view back to the table it hides is a read of the table: refused.
    join = failed(bob, f"SELECT * FROM {catalog}.d.grant_tv v JOIN {t2} t ON v.id = t.id")
    assert join["code"] == "PERMISSION_DENIED", join

    # The view reads with its owner's rights, so it is not given to Bob, who may not read
    # its table (ADR 0012) ...
    owner = f"ALTER VIEW {catalog}.d.grant_tv OWNER TO USER {bob.user.username}"
    refused = failed(alice_sql, owner)
    assert refused["code"] == "PERMISSION_DENIED", refused
    assert bob.user.username in refused["message"] and "grant_t2" in refused["message"]
    # ... until he may; once he may no longer, it fails even for Alice (who owns the
    # catalog), and says whose rights are missing.
    alice_sql.ok(f"GRANT SELECT ON TABLE {t2} TO USER {bob.user.username}")
    alice_sql.ok(owner)
    alice_sql.ok(f"REVOKE SELECT ON TABLE {t2} FROM USER {bob.user.username}")
    through = failed(alice_sql, f"SELECT * FROM {catalog}.d.grant_tv")
    assert through["code"] == "PERMISSION_DENIED", through
    assert bob.user.username in through["message"] and "grant_t2" in through["message"]
