"""Spark's SQL-semantics settings a session may SET (issue 36, item 4; docs/security.md §4):
each one a key of this Spark that a session may change, accepted by SQL ``SET`` and applied
by the worker as plain PySpark applies it; keys that reach files, classes, memory or other
users stay refused, in SQL and in REST, and the worker drops them from a stored session."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from core import spark_semantics
from core.session_properties import spark_settings
from jobs.models import Session
from tests.conftest import API, assert_error
from tests.worker_helpers import open_session, result_rows, statement, wait_job

BOOLEANS = [key for key, _ in spark_semantics.BOOLEAN_KEYS]
CHOICES = [(key, choices) for key, choices, _ in spark_semantics.CHOICE_KEYS]


def _set(client: Any, session: str, sql: str) -> dict[str, Any]:
    response = client.post(f"{API}/sessions/{session}/statements", {"sql": sql})
    assert response.status_code == 201, response.content
    return dict(response.json())


def _stored(session: str) -> dict[str, str]:
    return dict(Session.objects.get(pk=session).properties)


@contextmanager
def plain_conf(spark: Any, key: str, value: str) -> Iterator[None]:
    before = spark.conf.get(key)
    spark.conf.set(key, value)
    try:
        yield
    finally:
        spark.conf.set(key, before)


@pytest.mark.spark
@pytest.mark.parametrize("key", BOOLEANS + [key for key, _ in CHOICES])
def test_every_listed_key_is_a_session_setting_of_this_spark(plain_spark: Any, key: str) -> None:
    """Spark knows the key and lets a session change it (not a static or core setting)."""
    assert plain_spark.conf.isModifiable(key), key
    assert plain_spark.conf.get(key) is not None or key.endswith("nullInEmptyListBehavior")


@pytest.mark.django_db
@pytest.mark.parametrize("key", BOOLEANS)
def test_set_accepts_each_boolean_key(alice_api: Any, key: str) -> None:
    session = open_session(alice_api)
    job = _set(alice_api, session, f"SET {key} = TRUE")
    assert job["status"] == "FINISHED", job["error"]
    assert _stored(session) == {key: "true"}


@pytest.mark.django_db
@pytest.mark.parametrize(("key", "choices"), CHOICES)
def test_set_accepts_each_choice_in_any_case_and_refuses_others(
    alice_api: Any, key: str, choices: tuple[str, ...]
) -> None:
    session = open_session(alice_api)
    for choice in choices:
        job = _set(alice_api, session, f"SET {key} = {choice.lower()}")
        assert job["status"] == "FINISHED", job["error"]
        assert _stored(session) == {key: choice}
    refused = _set(alice_api, session, f"SET {key} = sometimes")
    assert refused["error"]["code"] == "VALIDATION_ERROR"
    assert "one of " + ", ".join(choices) in refused["error"]["message"]
    assert _stored(session) == {key: choices[-1]}


@pytest.mark.django_db
def test_a_boolean_key_refuses_other_values(alice_api: Any) -> None:
    session = open_session(alice_api)
    refused = _set(alice_api, session, "SET spark.sql.groupByAliases = yes")
    assert refused["error"]["code"] == "VALIDATION_ERROR"
    assert "true or false" in refused["error"]["message"]
    assert _stored(session) == {}


# Keys that reach files, directories, classes, memory, threads or other users — or that
# change which object a name resolves to — stay outside the list (docs/security.md §4).
REFUSED_KEYS = [
    "spark.sql.extensions",  # classes loaded into the session
    "spark.sql.catalog.evil",  # a catalog plugin class
    "spark.sql.catalog.spark_catalog",
    "spark.sql.warehouse.dir",  # directories
    "spark.sql.streaming.checkpointLocation",
    "spark.sql.files.ignoreCorruptFiles",  # how files are read
    "spark.sql.sources.default",
    "spark.sql.hive.metastore.jars",
    "spark.driver.memory",  # memory
    "spark.executor.memory",
    "spark.sql.pivotMaxValues",  # values collected on the shared driver
    "spark.sql.legacy.allowUntypedScalaUDF",  # classes
    "spark.sql.caseSensitive",  # which object a name resolves to
    "spark.sql.ansi.doubleQuotedIdentifiers",
    "spark.sql.legacy.ctePrecedencePolicy",
    "spark.sql.legacy.identifierClause",
    "spark.sql.parser.quotedRegexColumnNames",  # column lists the planner did not see
    "spark.sql.storeAssignmentPolicy",  # writes: Tessera's own rule
    "spark.sql.variable.substitute",
    "SPARK.SQL.GROUPBYALIASES",  # keys are exact
    "spark.sql.groupByAliases.x",
    "spark.sql.legacy",
]


@pytest.mark.django_db
@pytest.mark.parametrize("key", REFUSED_KEYS)
def test_keys_reaching_files_classes_memory_or_names_stay_refused(alice_api: Any, key: str) -> None:
    session = open_session(alice_api)
    job = _set(alice_api, session, f"SET {key} = true")
    assert job["status"] == "FAILED"
    assert job["error"]["code"] == "FORBIDDEN_SQL", job["error"]
    assert f"SET of '{key}' is not allowed" in job["error"]["message"]
    assert _stored(session) == {}
    assert_error(
        alice_api.patch(f"{API}/sessions/{session}", {"properties": {key: "true"}}),
        400,
        "VALIDATION_ERROR",
        "cannot be set",
    )
    assert _stored(session) == {}


@pytest.mark.django_db
def test_a_key_spark_removed_is_refused_with_sparks_reason(alice_api: Any) -> None:
    session = open_session(alice_api)
    job = _set(alice_api, session, "SET spark.sql.ansi.strictIndexOperator = false")
    assert job["error"]["code"] == "FORBIDDEN_SQL"
    assert "Spark removed this SQL config in version 3.4.0" in job["error"]["message"]


def test_the_worker_applies_only_listed_keys() -> None:
    """What a session row holds is checked again on the worker (``spark_settings``)."""
    stored = {
        "spark.sql.groupByAliases": "FALSE",
        "spark.sql.legacy.timeParserPolicy": "legacy",
        "spark.sql.mapKeyDedupPolicy": "sometimes",
        "spark.sql.extensions": "evil.Extension",
        "spark.sql.caseSensitive": "true",
        "spark.sql.legacy.sizeOfNull": "maybe",
    }
    assert spark_settings(stored) == {
        "spark.sql.groupByAliases": "false",
        "spark.sql.legacy.timeParserPolicy": "LEGACY",
    }


# --- on the REST path, with plain PySpark as the oracle -----------------------------------

GROUP_BY_ALIAS = "SELECT a % 2 AS k, count(*) AS c FROM VALUES (1), (2), (3) AS t(a) GROUP BY k"
HAVING_AS_WHERE = "SELECT a FROM VALUES (1), (2), (3) AS t(a) HAVING a > 1 ORDER BY a"


def _run(api: Any, session: str, sql: str) -> dict[str, Any]:
    job = statement(api, session, sql)
    done: dict[str, Any] = wait_job(api, job["id"], timeout=120)
    return done


@pytest.mark.spark
def test_set_semantics_answer_as_plain_pyspark(
    transactional_db: None, security_worker: Any, alice_api: Any, plain_spark: Any
) -> None:
    session = open_session(alice_api)
    grouped = _run(alice_api, session, GROUP_BY_ALIAS)
    assert grouped["status"] == "FINISHED", grouped["error"]
    expected = sorted([list(r) for r in plain_spark.sql(GROUP_BY_ALIAS).collect()])
    assert sorted(result_rows(alice_api, grouped["id"])[1]) == expected

    assert _set(alice_api, session, "SET spark.sql.groupByAliases = false")["status"] == "FINISHED"
    refused = _run(alice_api, session, GROUP_BY_ALIAS)
    with (
        plain_conf(plain_spark, "spark.sql.groupByAliases", "false"),
        pytest.raises(Exception, match="UNRESOLVED_COLUMN") as plain,
    ):
        plain_spark.sql(GROUP_BY_ALIAS).collect()
    assert refused["status"] == "FAILED"
    assert "UNRESOLVED_COLUMN" in str(plain.value)
    assert "`k`" in refused["error"]["message"], refused["error"]

    key = "spark.sql.legacy.parser.havingWithoutGroupByAsWhere"
    assert _set(alice_api, session, f"SET {key} = true")["status"] == "FINISHED"
    having = _run(alice_api, session, HAVING_AS_WHERE)
    assert having["status"] == "FINISHED", having["error"]
    with plain_conf(plain_spark, key, "true"):
        expected = [list(r) for r in plain_spark.sql(HAVING_AS_WHERE).collect()]
    assert result_rows(alice_api, having["id"])[1] == expected == [[2], [3]]
