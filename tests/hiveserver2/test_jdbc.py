"""Apache Hive's JDBC driver (``hive-jdbc`` 3.1.3 standalone, from Maven Central) against the
HiveServer2 endpoint, driven by tests/hiveserver2/jdbc/JdbcHarness.java as DBeaver or beeline
would drive it: sign-in (password and API token), DatabaseMetaData walks with grants, a query,
Statement.cancel, a temporary view shadowing a table, and refusals.

The harness is built on first use by ``mvn package dependency:copy-dependencies`` into
``var/jdbc`` (the driver cached in ``~/.m2``; nothing is fetched once both exist)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hiveserver2.server import HiveServer2
from tests.conftest import API, PASSWORD, client_for, token_for

pytestmark = [pytest.mark.slow, pytest.mark.spark]

ROOT = Path(__file__).resolve().parents[2]
PROJECT = Path(__file__).resolve().parent / "jdbc"
BUILD = ROOT / "var" / "jdbc"
ORDERS = [[1, 10, "2.50", 4], [2, 10, "10.00", 1], [3, 11, "1.25", 8], [4, 12, "99.99", 1]]


def build_harness() -> str:
    """The harness's class path, built by Maven unless it is newer than its sources."""
    jar = BUILD / "jdbc-harness-1.jar"
    sources = [PROJECT / "pom.xml", *PROJECT.rglob("*.java")]
    built = jar.exists() and any((BUILD / "lib").glob("hive-jdbc-*-standalone.jar"))
    if not built or jar.stat().st_mtime < max(s.stat().st_mtime for s in sources):
        mvn = shutil.which("mvn")
        if mvn is None or shutil.which("java") is None:
            pytest.fail("The JDBC tests need Java 17 and Maven (mvn) on the PATH.")
        subprocess.run(
            [
                *(mvn, "-q", "-B", "-f", str(PROJECT / "pom.xml"), f"-Dharness.build={BUILD}"),
                *("package", "dependency:copy-dependencies"),
            ],
            check=True,
            timeout=600,
        )
    return os.pathsep.join([str(jar), str(BUILD / "lib" / "*")])


@pytest.fixture(scope="session")
def harness() -> str:
    return build_harness()


Jdbc = Callable[..., list[dict[str, Any]]]


@pytest.fixture
def jdbc(shop: HiveServer2, harness: str) -> Jdbc:
    """``jdbc(user, password, *commands, database=…, params=…)``: one JDBC connection (one
    HS2 session) that runs the harness commands in turn; their JSON answers (or, with
    ``expect_refusal``, the one ``connect_error``)."""

    def run(
        user: str,
        password: str,
        *commands: str,
        database: str = "sales",
        params: str = "",
        expect_refusal: bool = False,
    ) -> list[dict[str, Any]]:
        url = f"jdbc:hive2://127.0.0.1:{shop.port}/{database}{params}"
        done = subprocess.run(
            ["java", "-cp", harness, "tessera.jdbc.JdbcHarness", url, user, password],
            input="\n".join(commands) + "\n",
            capture_output=True,
            text=True,
            timeout=240,
        )
        answers = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        assert answers, done.stderr[-3000:]
        # A connection refused answers once; otherwise one answer per command.
        refused = "connect_error" in answers[0]
        assert (refused and expect_refusal) or len(answers) == len(commands), (
            answers,
            done.stderr[-3000:],
        )
        return answers

    return run


def rows(answer: dict[str, Any]) -> list[list[Any]]:
    assert "rows" in answer, answer
    found: list[list[Any]] = answer["rows"]
    return found


CATALOG = "?use:catalog=shop"  # Hive JDBC sends it as set:hiveconf:use:catalog


def test_a_password_sign_in_runs_a_query_equal_to_the_table(jdbc: Jdbc) -> None:
    select, joined = jdbc(
        "alice",
        PASSWORD,
        "sql SELECT id, customer, price, qty FROM orders ORDER BY id",
        "sql SELECT c.name, sum(o.qty) AS qty FROM orders o JOIN customers c "
        "ON o.customer = c.id GROUP BY c.name ORDER BY c.name",
        params=CATALOG,
    )
    assert rows(select) == ORDERS
    assert select["columns"] == ["id", "customer", "price", "qty"]
    assert select["types"] == ["bigint", "bigint", "decimal", "int"]
    assert rows(joined) == [["Ada", 5], ["Bo", 8], ["Cy", 1]]


def test_an_api_token_signs_in_as_its_user(jdbc: Jdbc) -> None:
    (answer,) = jdbc("token", token_for("alice"), "sql SELECT count(*) FROM orders", params=CATALOG)
    assert rows(answer) == [[4]]


def test_use_and_fully_qualified_names_without_a_catalog_in_the_url(jdbc: Jdbc) -> None:
    qualified, used, unqualified = jdbc(
        "alice",
        PASSWORD,
        "sql SELECT count(*) FROM shop.sales.customers",
        "sql USE shop.sales",
        "sql SELECT name FROM customers ORDER BY id",
        database="default",
    )
    assert rows(qualified) == [[3]]
    assert "error" not in used, used
    assert rows(unqualified) == [["Ada"], ["Bo"], ["Cy"]]


def test_database_metadata_walk(jdbc: Jdbc) -> None:
    catalogs, schemas, tables, columns = jdbc(
        "alice",
        PASSWORD,
        "catalogs",
        "schemas shop %",
        "tables shop sal% %",
        "columns shop sales orders",
        params=CATALOG,
    )
    assert ["shop"] in rows(catalogs)
    assert sorted(rows(schemas)) == [["default", "shop"], ["sales", "shop"]]
    assert [t[:4] for t in rows(tables)] == [
        ["shop", "sales", "customers", "TABLE"],
        ["shop", "sales", "orders", "TABLE"],
    ]
    assert [(c[3], c[4], c[5], c[11]) for c in rows(columns)] == [
        ("id", -5, "BIGINT", ""),
        ("customer", -5, "BIGINT", "who"),
        ("price", 3, "DECIMAL(10,2)", ""),
        ("qty", 4, "INT", ""),
    ]


def test_metadata_and_queries_respect_an_ordinary_users_grants(jdbc: Jdbc) -> None:
    catalogs, tables, denied = jdbc(
        "bob",
        PASSWORD,
        "catalogs",
        "tables shop % %",
        "sql SELECT * FROM shop.sales.orders",
        database="default",
        params="?use:catalog=bobs",
    )
    assert ["bobs"] in rows(catalogs) and ["shop"] not in rows(catalogs)
    assert rows(tables) == []
    # Without USE on the catalog its tables are not even there for him (as over REST).
    assert denied["error"].startswith("[NOT_FOUND]"), denied
    jdbc(
        "alice",
        PASSWORD,
        "sql GRANT USE ON CATALOG shop TO USER bob",
        "sql GRANT USE ON DATABASE shop.sales TO USER bob",
        "sql GRANT SELECT ON TABLE shop.sales.customers TO USER bob",
        params=CATALOG,
    )
    catalogs, tables, allowed, still_denied = jdbc(
        "bob",
        PASSWORD,
        "catalogs",
        "tables shop sales %",
        "sql SELECT count(*) FROM shop.sales.customers",
        "sql SELECT * FROM shop.sales.orders",
        database="default",
        params="?use:catalog=bobs",
    )
    assert ["shop"] in rows(catalogs)
    assert [t[2] for t in rows(tables)] == ["customers"]  # not orders
    assert rows(allowed) == [[3]]
    assert still_denied["error"].startswith("[PERMISSION_DENIED]"), still_denied
    assert still_denied["sqlstate"] == "42501"


def test_statement_cancel_stops_a_long_query(jdbc: Jdbc, alice: Any) -> None:
    (cancelled,) = jdbc(
        "alice",
        PASSWORD,
        "cancel 4 SELECT count(*) FROM range(1000000000) a CROSS JOIN range(1000000) b",
        params=CATALOG,
    )
    assert cancelled["outcome"].startswith("error"), cancelled
    assert cancelled["seconds"] < 60, cancelled
    jobs = client_for(alice).get(f"{API}/jobs", params={"limit": 5}).json()["items"]
    long_one = [j for j in jobs if "CROSS JOIN range(1000000)" in j.get("sql", "")]
    assert long_one and long_one[0]["status"] == "CANCELED", jobs


def test_a_temporary_view_shadows_a_table_in_its_session_only(jdbc: Jdbc) -> None:
    created, shadowed, tables = jdbc(
        "alice",
        PASSWORD,
        "sql CREATE TEMPORARY VIEW orders AS SELECT 42 AS id",
        "sql SELECT id FROM orders",
        "tables shop sales orders",
        params=CATALOG,
    )
    assert "error" not in created, created
    assert rows(shadowed) == [[42]]
    assert [t[:4] for t in rows(tables)] == [["shop", "sales", "orders", "VIEW"]]
    (other,) = jdbc("alice", PASSWORD, "sql SELECT count(*) FROM orders", params=CATALOG)
    assert rows(other) == [[4]]


def test_a_wrong_password_or_token_is_refused(jdbc: Jdbc) -> None:
    (wrong,) = jdbc("alice", "not-" + PASSWORD, "sql SELECT 1", params=CATALOG, expect_refusal=True)
    assert "[INVALID_CREDENTIALS]" in wrong["connect_error"], wrong
    (bad_token,) = jdbc(
        "token", "tsr_not_a_token", "sql SELECT 1", params=CATALOG, expect_refusal=True
    )
    assert "connect_error" in bad_token, bad_token
    (nobody,) = jdbc("mallory", PASSWORD, "sql SELECT 1", params=CATALOG, expect_refusal=True)
    assert "[INVALID_CREDENTIALS]" in nobody["connect_error"], nobody


def test_a_statement_refused_over_rest_is_refused_with_its_code(jdbc: Jdbc) -> None:
    (refused,) = jdbc("alice", PASSWORD, "sql SET spark.sql.warehouse.dir = /tmp", params=CATALOG)
    assert refused.get("error"), refused
    assert refused["error"].startswith("["), refused
