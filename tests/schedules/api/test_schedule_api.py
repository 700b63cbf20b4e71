"""/schedules: CRUD by the owner, cron and time zone checked with clear sentences, anyone
else's schedule answering NOT_FOUND."""

from __future__ import annotations

from datetime import datetime

import pytest

from schedules import cron
from schedules.models import Schedule
from tests.conftest import API, assert_error
from tests.schedules.api.conftest import create_schedule, save_query

pytestmark = pytest.mark.django_db

URL = f"{API}/schedules"
KEYS = {
    "id",
    "saved_query",
    "saved_query_name",
    "owner",
    "cron",
    "timezone",
    "enabled",
    "next_run_at",
    "created_at",
    "updated_at",
}


def test_the_owner_creates_reads_lists_changes_and_deletes_a_schedule(alice_api):
    query = save_query(alice_api)
    made = create_schedule(alice_api, query, cron="*/5 * * * *", timezone="Europe/Paris")
    assert set(made) == KEYS
    assert (made["cron"], made["timezone"], made["enabled"]) == (
        "*/5 * * * *",
        "Europe/Paris",
        True,
    )
    assert (made["owner"], made["saved_query"], made["saved_query_name"]) == (
        "alice",
        query,
        "revenue",
    )
    following = datetime.fromisoformat(made["next_run_at"])
    assert following.minute % 5 == 0 and following.second == 0
    url = f"{URL}/{made['id']}"
    assert alice_api.get(url).json() == made
    assert [s["id"] for s in alice_api.get(URL).json()["items"]] == [made["id"]]

    off = alice_api.patch(url, {"enabled": False}).json()
    assert off["enabled"] is False and off["next_run_at"] is None
    on = alice_api.patch(url, {"enabled": True, "cron": "0 9 * * 1", "timezone": "UTC"}).json()
    again = datetime.fromisoformat(on["next_run_at"])
    assert (again.weekday(), again.hour, again.minute) == (0, 9, 0)

    assert alice_api.delete(url).status_code == 204
    assert_error(alice_api.get(url), 404, "NOT_FOUND")
    assert not Schedule.objects.exists()


def test_another_users_schedule_is_not_found_whatever_they_do(alice_api, bob_api):
    made = create_schedule(alice_api, save_query(alice_api))
    url = f"{URL}/{made['id']}"
    for response in (
        bob_api.get(url),
        bob_api.patch(url, {"enabled": False}),
        bob_api.delete(url),
        bob_api.get(f"{url}/runs"),
        bob_api.get(f"{API}/alerts?schedule={made['id']}"),
        bob_api.post(
            f"{API}/alerts",
            {"schedule": made["id"], "name": "x", "column": "n", "operator": ">", "value": 1},
        ),
    ):
        assert_error(response, 404, "NOT_FOUND", "does not exist")
    assert bob_api.get(URL).json()["items"] == []
    assert alice_api.get(url).json() == made  # untouched
    for garbage in ("not-a-uuid", "0" * 5000, "%00"):
        assert_error(alice_api.get(f"{URL}/{garbage}"), 404, "NOT_FOUND")


def test_a_schedule_of_someone_elses_private_saved_query_is_refused(alice_api, bob_api):
    query = save_query(alice_api)
    response = bob_api.post(URL, {"saved_query": query, "cron": "* * * * *", "timezone": "UTC"})
    assert_error(response, 404, "NOT_FOUND", "Saved query")
    assert not Schedule.objects.exists()


@pytest.mark.parametrize(
    ("expression", "fragment"),
    [
        ("* * * * * *", "at most once a minute"),  # every second (croniter's seconds field)
        ("*/1 * * * * * *", "five fields"),
        ("garbage", "five fields"),
        ("61 * * * *", "not a valid cron expression"),
        ("x" * 10_000, "at most 100 characters"),
        ("0 0 30 2 *", "never runs"),
        ("H * * * *", "Hashed and random"),
        ("@reboot", "Unknown cron nickname"),
        ("", "needs a cron expression"),
        ("* * * *\x00 *", ""),  # refused by the body's shape check (no NUL)
    ],
)
def test_a_bad_cron_expression_is_a_validation_error(alice_api, expression, fragment):
    query = save_query(alice_api)
    response = alice_api.post(URL, {"saved_query": query, "cron": expression, "timezone": "UTC"})
    error = assert_error(response, 400, "VALIDATION_ERROR", fragment)
    assert error["details"]["field"] == "cron"
    assert not Schedule.objects.exists()


@pytest.mark.parametrize(
    "zone", ["Mars/Olympus_Mons", "../../etc/passwd", "x" * 10_000, "", "utc ", "Europe/"]
)
def test_an_unknown_time_zone_is_a_validation_error(alice_api, zone):
    query = save_query(alice_api)
    response = alice_api.post(URL, {"saved_query": query, "cron": "* * * * *", "timezone": zone})
    error = assert_error(response, 400, "VALIDATION_ERROR", "time zone")
    assert error["details"]["field"] == "timezone"


def test_a_patch_with_a_bad_cron_changes_nothing(alice_api):
    made = create_schedule(alice_api, save_query(alice_api), cron="0 * * * *")
    url = f"{URL}/{made['id']}"
    assert_error(alice_api.patch(url, {"cron": "* * * * * *"}), 400, "VALIDATION_ERROR")
    assert_error(alice_api.patch(url, {"timezone": "Nowhere/Land"}), 400, "VALIDATION_ERROR")
    assert alice_api.get(url).json() == made


def test_nicknames_and_the_one_minute_floor():
    assert cron.check_cron("@Hourly") == "@hourly"
    assert cron.check_cron("  */1   *  * * * ") == "*/1 * * * *"
    now = datetime.fromisoformat("2026-03-29T00:30:00+00:00")
    assert cron.interval_at_least_a_minute("* * * * *", "UTC", now)
    # 09:00 in Paris is 08:00 UTC in winter and 07:00 UTC once the clocks went forward.
    winter = datetime.fromisoformat("2026-03-27T12:00:00+00:00")
    assert cron.next_slot("0 9 * * *", "Europe/Paris", winter).isoformat() == (
        "2026-03-28T08:00:00+00:00"
    )
    assert cron.next_slot("0 9 * * *", "Europe/Paris", now).isoformat() == (
        "2026-03-29T07:00:00+00:00"
    )
    assert cron.latest_slot("*/10 * * * *", "UTC", now).isoformat() == "2026-03-29T00:30:00+00:00"
