"""Session properties a user cannot lift (docs/security.md §4).

Every settable key has a type and a range, and Tessera's own keys are capped by the server's
settings: a value outside them is refused when it is set (SQL ``SET``: the job fails; REST
``POST``/``PATCH /sessions``: 400), and nothing is stored. Values stored before these limits
existed are clamped or dropped where they are used: the job's timeout, the rows the worker
keeps, the Spark settings of the job's session.
"""

from __future__ import annotations

from typing import Any

import pytest

from core.session_properties import (
    BROADCAST_THRESHOLD_MAX,
    SHUFFLE_PARTITIONS_MAX,
    SessionProperties,
    spark_settings,
)
from jobs.models import Job, Session
from tests.conftest import API, assert_error
from tests.worker_helpers import open_session, result_rows, statement, wait_job

FIFTY_DIGITS = "9" * 50
CAP = 100_000  # TESSERA_RESULT_MAX_ROWS's default
TIMEOUT_MAX = 3600  # TESSERA_JOB_TIMEOUT_SECONDS's default, also the maximum by default


@pytest.fixture(autouse=True)
def _server_limits(settings: Any, tmp_path: Any) -> None:
    settings.TESSERA_RESULT_MAX_ROWS = CAP
    settings.TESSERA_JOB_TIMEOUT_SECONDS = TIMEOUT_MAX
    settings.TESSERA_JOB_TIMEOUT_MAX_SECONDS = TIMEOUT_MAX


def _set(client: Any, session: str, sql: str) -> dict[str, Any]:
    response = client.post(f"{API}/sessions/{session}/statements", {"sql": sql})
    assert response.status_code == 201, response.content
    return dict(response.json())


def _stored(session: str) -> dict[str, str]:
    return dict(Session.objects.get(pk=session).properties)


# --- refused when set: SQL SET ----------------------------------------------------------------

# (key, value, a fragment of the message)
REFUSED_VALUES = [
    ("result.max_rows", str(CAP + 1), "from 1 to 100,000"),
    ("result.max_rows", "5000000", "from 1 to 100,000"),
    ("result.max_rows", FIFTY_DIGITS, "from 1 to 100,000"),
    ("result.max_rows", "0", "from 1 to 100,000"),
    ("result.max_rows", "-1", "from 1 to 100,000"),
    ("result.max_rows", "1e6", "whole number"),
    ("result.max_rows", "100000.0", "whole number"),
    ("result.max_rows", "0x186A0", "whole number"),
    ("result.max_rows", "1_000", "whole number"),
    ("result.max_rows", "\uff11\uff10", "whole number"),  # full-width digits
    ("job.timeout_seconds", str(TIMEOUT_MAX + 1), "from 1 to 3,600"),
    ("job.timeout_seconds", FIFTY_DIGITS, "from 1 to 3,600"),
    ("job.timeout_seconds", "0", "from 1 to 3,600"),
    ("job.timeout_seconds", "NaN", "whole number"),
    ("spark.sql.shuffle.partitions", "0", "from 1 to 10,000"),
    ("spark.sql.shuffle.partitions", "-1", "from 1 to 10,000"),
    ("spark.sql.shuffle.partitions", str(SHUFFLE_PARTITIONS_MAX + 1), "from 1 to 10,000"),
    ("spark.sql.shuffle.partitions", "2147483648", "from 1 to 10,000"),
    ("spark.sql.shuffle.partitions", FIFTY_DIGITS, "from 1 to 10,000"),
    ("spark.sql.shuffle.partitions", "many", "whole number"),
    ("spark.sql.autoBroadcastJoinThreshold", "1g", "64 MiB"),
    ("spark.sql.autoBroadcastJoinThreshold", str(BROADCAST_THRESHOLD_MAX + 1), "64 MiB"),
    ("spark.sql.autoBroadcastJoinThreshold", "-2", "size in bytes"),
    ("spark.sql.autoBroadcastJoinThreshold", "10.5m", "size in bytes"),
    ("spark.sql.files.maxPartitionBytes", "1", "from 1 MiB to 1 GiB"),
    ("spark.sql.files.maxPartitionBytes", "2g", "from 1 MiB to 1 GiB"),
    ("spark.sql.session.timeZone", "Mars/Olympus", "time zone"),
    ("spark.sql.session.timeZone", "../../etc/passwd", "time zone"),
    ("spark.sql.session.timeZone", "+19:00", "-18:00 to +18:00"),
    ("spark.sql.session.timeZone", "+1:00", "time zone"),
    ("spark.sql.session.timeZone", "PST", "time zone"),
    ("spark.sql.ansi.enabled", "yes", "true or false"),
    ("spark.sql.adaptive.enabled", "1", "true or false"),
    ("table.ctas.atomic", "maybe", "true or false"),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("key", "value", "fragment"), REFUSED_VALUES)
def test_set_refuses_values_out_of_type_or_range_and_stores_nothing(
    alice_api: Any, key: str, value: str, fragment: str
) -> None:
    session = open_session(alice_api, {key: _allowed_value(key)})
    before = _stored(session)
    job = _set(alice_api, session, f"SET {key} = {value}")
    assert job["status"] == "FAILED", job
    assert job["error"]["code"] == "VALIDATION_ERROR", job["error"]
    assert fragment in job["error"]["message"], job["error"]["message"]
    assert key in job["error"]["message"]
    assert "Traceback" not in job["error"]["message"]
    assert _stored(session) == before  # nothing stored
    # Quoted the same way, the same refusal.
    quoted = _set(alice_api, session, f"SET {key} = '{value}'")
    assert quoted["status"] == "FAILED" and quoted["error"]["code"] == "VALIDATION_ERROR"
    assert _stored(session) == before


def _allowed_value(key: str) -> str:
    return {
        "result.max_rows": "10",
        "job.timeout_seconds": "60",
        "spark.sql.shuffle.partitions": "8",
        "spark.sql.autoBroadcastJoinThreshold": "1048576",
        "spark.sql.files.maxPartitionBytes": "134217728",
        "spark.sql.session.timeZone": "UTC",
    }.get(key, "true")


# (key, value, the canonical value stored)
ACCEPTED_VALUES = [
    ("result.max_rows", str(CAP), str(CAP)),  # exactly the server's limit
    ("result.max_rows", str(CAP - 1), str(CAP - 1)),
    ("result.max_rows", "1", "1"),
    ("result.max_rows", "00042", "42"),
    ("job.timeout_seconds", str(TIMEOUT_MAX), str(TIMEOUT_MAX)),
    ("spark.sql.shuffle.partitions", str(SHUFFLE_PARTITIONS_MAX), str(SHUFFLE_PARTITIONS_MAX)),
    ("spark.sql.autoBroadcastJoinThreshold", "64m", str(BROADCAST_THRESHOLD_MAX)),
    ("spark.sql.autoBroadcastJoinThreshold", "-1", "-1"),
    ("spark.sql.autoBroadcastJoinThreshold", "10MB", str(10 * 1024 * 1024)),
    ("spark.sql.files.maxPartitionBytes", "1m", str(1024 * 1024)),
    ("spark.sql.session.timeZone", "America/Los_Angeles", "America/Los_Angeles"),
    ("spark.sql.session.timeZone", "+01:00", "+01:00"),
    ("spark.sql.session.timeZone", "-08", "-08:00"),
    ("spark.sql.session.timeZone", "Z", "Z"),
    ("spark.sql.ansi.enabled", "TRUE", "true"),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("key", "value", "canonical"), ACCEPTED_VALUES)
def test_set_accepts_values_up_to_the_limits_in_canonical_form(
    alice_api: Any, key: str, value: str, canonical: str
) -> None:
    session = open_session(alice_api)
    job = _set(alice_api, session, f"SET {key} = {value}")
    assert job["status"] == "FINISHED", job["error"]
    assert _stored(session) == {key: canonical}


@pytest.mark.django_db
def test_the_caps_are_the_server_settings(alice_api: Any, settings: Any) -> None:
    settings.TESSERA_RESULT_MAX_ROWS = 50
    settings.TESSERA_JOB_TIMEOUT_MAX_SECONDS = 7200
    session = open_session(alice_api)
    refused = _set(alice_api, session, "SET result.max_rows = 51")
    assert refused["error"]["code"] == "VALIDATION_ERROR"
    assert "from 1 to 50" in refused["error"]["message"]
    assert _set(alice_api, session, "SET result.max_rows = 50")["status"] == "FINISHED"
    # A server may let sessions ask for more than the default timeout, up to its maximum.
    assert _set(alice_api, session, "SET job.timeout_seconds = 7200")["status"] == "FINISHED"
    assert _set(alice_api, session, "SET job.timeout_seconds = 7201")["status"] == "FAILED"
    assert _stored(session) == {"result.max_rows": "50", "job.timeout_seconds": "7200"}


@pytest.mark.django_db
@pytest.mark.parametrize(
    "key",
    [
        "spark.sql.warehouse.dir",
        "spark.master",
        "spark.driver.memory",
        "spark.sql.variable.substitute",
        "spark.sql.adaptive.autoBroadcastJoinThreshold",
        "Result.Max_Rows",
        "RESULT.MAX_ROWS",
        "spark.sql.shuffle.partitions.x",
        "result.max_rows.",
    ],
)
def test_keys_outside_the_allow_list_are_forbidden(alice_api: Any, key: str) -> None:
    session = open_session(alice_api)
    job = _set(alice_api, session, f"SET {key} = 1")
    assert job["status"] == "FAILED"
    assert job["error"]["code"] == "FORBIDDEN_SQL", job["error"]
    assert _stored(session) == {}
    error = assert_error(
        alice_api.patch(f"{API}/sessions/{session}", {"properties": {key: "1"}}),
        400,
        "VALIDATION_ERROR",
        "cannot be set",
    )
    assert error["details"]["field"] == f"properties.{key}"
    assert _stored(session) == {}


# --- refused when set: REST ---------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(("key", "value", "fragment"), REFUSED_VALUES)
def test_sessions_refuse_the_same_values_on_post_and_patch(
    alice_api: Any, key: str, value: str, fragment: str
) -> None:
    count = Session.objects.count()
    error = assert_error(
        alice_api.post(f"{API}/sessions", {"properties": {key: value}}),
        400,
        "VALIDATION_ERROR",
        fragment,
    )
    assert error["details"]["field"] == f"properties.{key}"
    assert Session.objects.count() == count  # no session made
    session = open_session(alice_api, {"result.max_rows": "10"})
    assert_error(
        alice_api.patch(f"{API}/sessions/{session}", {"properties": {key: value}}),
        400,
        "VALIDATION_ERROR",
        fragment,
    )
    assert _stored(session) == {"result.max_rows": "10"}  # PATCH changed nothing


# --- values stored before the limits: clamped where they are used --------------------------


def _legacy_session(user: Any, properties: dict[str, str]) -> Session:
    """A session whose properties were stored before these checks existed (or before the
    server lowered its limits): written straight to the row, as old code let them be."""
    return Session.objects.create(
        user=user, properties=properties, last_used_at=_now(), idle_timeout_seconds=3600
    )


def _now() -> Any:
    from django.utils import timezone

    return timezone.now()


LEGACY = {
    "result.max_rows": "5000000",
    "job.timeout_seconds": FIFTY_DIGITS,
    "spark.sql.shuffle.partitions": "0",
    "spark.sql.autoBroadcastJoinThreshold": "8g",
    "spark.sql.session.timeZone": "no such zone",
    "spark.master": "local[64]",
}


@pytest.mark.django_db
def test_legacy_values_show_and_apply_clamped_on_the_web_side(alice: Any, alice_api: Any) -> None:
    session = _legacy_session(alice, LEGACY)
    job = _set(alice_api, str(session.pk), "SET")
    assert job["status"] == "FINISHED"
    _, rows = result_rows(alice_api, job["id"])
    assert {key: value for key, value in rows} == {
        "result.max_rows": str(CAP),
        "job.timeout_seconds": str(TIMEOUT_MAX),
        "spark.sql.shuffle.partitions": "1",
        "spark.sql.autoBroadcastJoinThreshold": str(BROADCAST_THRESHOLD_MAX),
    }
    one = _set(alice_api, str(session.pk), "SET result.max_rows")
    assert result_rows(alice_api, one["id"])[1] == [["result.max_rows", str(CAP)]]
    # A new statement's job gets the timeout in force, never the stored 50 digits.
    show = _set(alice_api, str(session.pk), "SHOW CATALOGS")
    assert Job.objects.get(pk=show["id"]).timeout_seconds == TIMEOUT_MAX


def test_the_registry_clamps_what_it_did_not_store() -> None:
    registry = SessionProperties(result_max_rows=CAP, job_timeout_seconds=TIMEOUT_MAX)
    assert registry.effective(LEGACY) == {
        "result.max_rows": str(CAP),
        "job.timeout_seconds": str(TIMEOUT_MAX),
        "spark.sql.shuffle.partitions": "1",
        "spark.sql.autoBroadcastJoinThreshold": str(BROADCAST_THRESHOLD_MAX),
    }
    assert registry.result_max_rows({"result.max_rows": "5000000"}) == CAP
    assert registry.result_max_rows({"result.max_rows": "garbage"}) == CAP
    assert registry.job_timeout_seconds({}) == TIMEOUT_MAX
    assert registry.clamp_timeout(10**30) == TIMEOUT_MAX
    assert registry.clamp_timeout(None) == TIMEOUT_MAX
    assert spark_settings({**LEGACY, "spark.sql.shuffle.partitions": "999999999999"}) == {
        "spark.sql.shuffle.partitions": str(SHUFFLE_PARTITIONS_MAX),
        "spark.sql.autoBroadcastJoinThreshold": str(BROADCAST_THRESHOLD_MAX),
    }
    odd: dict[Any, Any] = {"spark.sql.shuffle.partitions": True, 5: "x"}
    assert spark_settings(odd) == {}


# --- on the worker ----------------------------------------------------------------------------


@pytest.mark.spark
def test_the_worker_keeps_at_most_the_server_limit_of_rows(
    transactional_db: None, security_worker: Any, alice: Any, alice_api: Any
) -> None:
    """The reproduction: SET result.max_rows = 5000000 used to store 3 million rows. A
    session that holds such a value (stored before the check) gets the server's limit."""
    session = _legacy_session(alice, {"result.max_rows": "5000000"})
    job = statement(alice_api, str(session.pk), f"SELECT explode(sequence(1, {CAP + 5000})) AS n")
    done = wait_job(alice_api, job["id"], timeout=120)
    assert done["status"] == "FINISHED", done["error"]
    assert done["result"]["row_count"] == CAP
    assert done["result"]["truncated"] is True


@pytest.mark.spark
def test_the_worker_checks_spark_settings_again(
    transactional_db: None, security_worker: Any, alice: Any, alice_api: Any
) -> None:
    """Stored values Spark would refuse (shuffle partitions 0) or must not get (an unknown
    key, a zone that does not exist) are clamped or dropped: the job runs with the rest."""
    session = _legacy_session(
        alice,
        {
            "spark.sql.shuffle.partitions": "0",
            "spark.sql.session.timeZone": "no such zone",
            "spark.sql.warehouse.dir": "/etc",
            "spark.sql.ansi.enabled": "true",
        },
    )
    job = statement(
        alice_api,
        str(session.pk),
        "SELECT n % 3 AS k, count(*) AS c, current_timezone() AS tz "
        "FROM (SELECT explode(sequence(1, 30)) AS n) GROUP BY n % 3 ORDER BY k",
    )
    done = wait_job(alice_api, job["id"], timeout=120)
    assert done["status"] == "FINISHED", done["error"]
    _, rows = result_rows(alice_api, job["id"])
    assert [row[:2] for row in rows] == [[0, 10], [1, 10], [2, 10]]
    assert rows[0][2] != "no such zone"
    # And a valid zone set through SQL reaches Spark.
    tokyo = open_session(alice_api, {"spark.sql.session.timeZone": "Asia/Tokyo"})
    job = statement(alice_api, tokyo, "SELECT current_timezone() AS tz")
    done = wait_job(alice_api, job["id"], timeout=120)
    assert result_rows(alice_api, job["id"])[1] == [["Asia/Tokyo"]]
