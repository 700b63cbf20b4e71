"""Shared fixtures: users, token-authenticated API clients and a catalog-object factory,
fast password hashing, a plain PySpark session, and (from the plugin ``tests.workers``) the
shared live worker.

Everything here goes through the real stack: users are Django users, tokens come from
``POST /api/v1/auth/token``, and catalog objects are made with the REST API.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import OperationalError, connection
from django.db.backends.base.operations import BaseDatabaseOperations
from rest_framework.test import APIClient

# The live-worker plugin may be imported by a package's conftest before ``pytest_configure``
# registers it: its asserts are rewritten all the same.
pytest.register_assert_rewrite("tests.workers", "tests.live_client", "tests.fixtures.worker")

API = "/api/v1"
PASSWORD = "correct-horse-battery-staple"


def simple_schema(*columns: str) -> dict[str, Any]:
    """A schema of physical columns given as "name TYPE" strings."""
    cols = columns or ("id BIGINT",)
    return {
        "columns": [
            {"name": name, "kind": "physical", "data_type": data_type}
            for name, data_type in (c.split(" ", 1) for c in cols)
        ]
    }


def json_client(**kwargs: Any) -> APIClient:
    """An APIClient that sends JSON bodies (the API parses nothing else)."""
    client = APIClient(**kwargs)
    client.default_format = "json"
    return client


def token_for(username: str, password: str = PASSWORD) -> str:
    response = json_client().post(f"{API}/auth/token", {"username": username, "password": password})
    assert response.status_code == 200, response.content
    token = response.json()["token"]
    assert isinstance(token, str) and len(token) >= 20
    return token


def client_for(user: User) -> APIClient:
    client = json_client()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_for(user.get_username())}")
    return client


def assert_error(response: Any, status: int, code: str, *fragments: str) -> dict[str, Any]:
    """Check the contract's error envelope and return its ``error`` object.

    Each fragment must occur in the message (case-sensitive: names are case-preserving).
    """
    assert response.status_code == status, (response.status_code, response.content[:2000])
    assert response["Content-Type"].startswith("application/json"), response["Content-Type"]
    body = response.json()
    assert set(body) >= {"error"}, body
    error = body["error"]
    assert set(error) <= {"code", "message", "details"}, error
    assert error["code"] == code, error
    assert isinstance(error["message"], str) and error["message"].strip(), error
    assert "Traceback" not in error["message"]
    if "details" in error:
        assert isinstance(error["details"], dict), error
    for fragment in fragments:
        assert fragment in error["message"], (fragment, error["message"])
    return dict(error)


def require_postgresql() -> None:
    """These tests are about the production database; SQLite would hide real behaviour."""
    vendor = connection.vendor
    if vendor != "postgresql":
        pytest.fail(
            f"The API tests must run on PostgreSQL, but the database vendor is {vendor!r} "
            "(run them with scripts/test.sh, which sets DATABASE_URL).",
            pytrace=False,
        )


DEADLOCK_DETECTED = "40P01"  # PostgreSQL's SQLSTATE


def _flush_again_after_a_deadlock() -> None:
    """Emptying the test database between transactional tests TRUNCATEs every table in one
    statement, taking its locks one table after another; a live worker's transaction (its
    heartbeat, the sweeper) that holds one of them and waits for another makes PostgreSQL
    end one of the two as a deadlock. The flush is one transaction, rolled back whole, so it
    is simply run again (at most five times)."""
    original = BaseDatabaseOperations.execute_sql_flush

    def execute_sql_flush(self: BaseDatabaseOperations, sql_list: list[str]) -> None:
        for attempt in range(1, 6):
            try:
                original(self, sql_list)
                return
            except OperationalError as exc:
                if getattr(exc.__cause__, "sqlstate", None) != DEADLOCK_DETECTED or attempt == 5:
                    raise
                time.sleep(0.1 * attempt)

    BaseDatabaseOperations.execute_sql_flush = execute_sql_flush  # type: ignore[method-assign,assignment]


def pytest_configure(config: pytest.Config) -> None:
    _flush_again_after_a_deadlock()
    # The live-worker fixtures (``worker``, ``own_workers_only``) for every package: a plugin
    # module, loaded here since it imports this one.
    config.pluginmanager.import_plugin("tests.workers")
    # ``alice_sql``, her ``catalog``, ``shared_catalog``, ``source_dir``, ``streams``.
    config.pluginmanager.import_plugin("tests.fixtures.worker")
    # The Python client's live-server fixtures (tests/client, tests/conformance, tests/examples).
    config.pluginmanager.import_plugin("tests.live_client")
    config.addinivalue_line(
        "markers", "kills_shared_worker: the test kills the shared worker (runs after the rest)"
    )
    config.addinivalue_line(
        "markers", "runtime_matrix: runs on each Spark runtime (local, cluster, connect)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from tests.workers import order_worker_tests

    order_worker_tests(items)


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Any) -> None:
    # PBKDF2 costs ~0.3 s per login; what is tested is the API around it, not the hash.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(scope="session")
def plain_spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Plain PySpark in the test process (one SparkContext for the run): writes test data,
    computes expected answers, runs Spark's own parser for the guard checks. With Delta
    Lake as its documentation configures it, as every driver of the worker has it."""
    from pyspark.sql import SparkSession

    from engine import spark_config

    base = tmp_path_factory.mktemp("plain-spark")
    builder = SparkSession.builder
    for key, value in spark_config.DELTA_CONF.items():
        builder = builder.config(key, value)
    spark = (
        builder.config("spark.jars", ",".join(spark_config.delta_jars()))
        .master("local[1]")
        .appName("tessera-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
        # Spark would otherwise create spark-warehouse/ in the working directory (the repo).
        .config("spark.sql.warehouse.dir", str(base / "warehouse"))
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={base}")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    # py4j logs at interpreter exit, after pytest closed its capture streams.
    logging.getLogger("py4j").setLevel(logging.WARNING)
    yield spark
    spark.stop()


@pytest.fixture(autouse=True)
def _sign_in_throttle_off(settings: Any) -> None:
    """Sign-in attempts are throttled per client address (accounts/throttles.py), and every
    test client is 127.0.0.1: tests that are not about throttling sign in as often as they
    need (tests/security/test_http_edges.py turns it on)."""
    settings.TESSERA_AUTH_THROTTLE_RATE = None


@pytest.fixture(autouse=True)
def _read_files_for_everyone(settings: Any) -> None:
    """Declaring a table over a path needs ``READ FILES`` on its storage root (issue 18);
    tests about something else may, as before (tests about grants turn it back off)."""
    settings.TESSERA_READ_FILES_FOR = "everyone"


@pytest.fixture(autouse=True)
def _user_streams_unlimited(settings: Any) -> None:
    """One stream per user by default (``TESSERA_USER_STREAMS``); tests about streams run
    several of one user at once (tests/security/test_quotas.py turns the limit on)."""
    settings.TESSERA_USER_STREAMS = 0


@pytest.fixture
def admin(db: None) -> User:
    return User.objects.create_superuser("admin", "admin@example.com", PASSWORD)


@pytest.fixture
def alice(db: None) -> User:
    return User.objects.create_user("alice", "alice@example.com", PASSWORD)


@pytest.fixture
def bob(db: None) -> User:
    return User.objects.create_user("bob", "bob@example.com", PASSWORD)


@pytest.fixture
def anon_api() -> APIClient:
    return json_client()


@pytest.fixture
def admin_api(admin: User) -> APIClient:
    return client_for(admin)


@pytest.fixture
def alice_api(alice: User) -> APIClient:
    return client_for(alice)


@pytest.fixture
def bob_api(bob: User) -> APIClient:
    return client_for(bob)


class CatalogFactory:
    """Creates catalog objects through the REST API and checks each create succeeded."""

    def __init__(self, client: APIClient) -> None:
        self.client = client

    def _post(self, url: str, body: dict[str, Any]) -> dict[str, Any]:
        response = self.client.post(url, body)
        assert response.status_code == 201, response.content
        data: dict[str, Any] = response.json()
        return data

    def catalog(self, name: str = "demo", *, shared: bool = True, **extra: Any) -> dict[str, Any]:
        """A new catalog; ``shared`` (the default) gives ``USE, SELECT, EXECUTE`` on it to the
        team ``everyone`` — the rule before grants (issue 18), which most tests take as given.
        Tests about grants pass ``shared=False``."""
        made = self._post(f"{API}/catalogs", {"name": name, **extra})
        if shared:
            from tests.grants_support import share

            share(made["name"])
        return made

    def database(self, catalog: str, name: str, **extra: Any) -> dict[str, Any]:
        return self._post(f"{API}/catalogs/{catalog}/databases", {"name": name, **extra})

    def table(
        self,
        catalog: str,
        database: str,
        name: str,
        schema: dict[str, Any] | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        body = {"name": name, "schema": schema or simple_schema(), **extra}
        return self._post(f"{API}/catalogs/{catalog}/databases/{database}/tables", body)

    def view(self, catalog: str, database: str, name: str, **extra: Any) -> dict[str, Any]:
        body = {"name": name, "query": "SELECT 1 AS one", **extra}
        return self._post(f"{API}/catalogs/{catalog}/databases/{database}/views", body)

    def function(self, catalog: str, database: str, name: str, **extra: Any) -> dict[str, Any]:
        body = {"name": name, "language": "python", "implementation": "udfs.text.upper", **extra}
        return self._post(f"{API}/catalogs/{catalog}/databases/{database}/functions", body)


@pytest.fixture
def analyzer(transactional_db: None, worker: Any) -> Any:
    """Spark's analyzer for catalog writes that wait for it (FLIP-164: views, and tables
    with computed columns or watermarks, are resolved by a worker before they are stored):
    the shared live worker, with committed rows (``transactional_db``) so that it sees the
    question."""
    return worker


@pytest.fixture
def make(alice_api: APIClient) -> CatalogFactory:
    """Catalog objects made by alice."""
    return CatalogFactory(alice_api)
