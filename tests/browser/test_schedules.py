"""The schedules page: a user's schedules with their alerts, a new schedule from the form (a
bad cron said where it was typed), and the notifications with the top bar's unread count."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from playwright.sync_api import expect

from schedules.models import Alert, Notification, Schedule
from tests.browser.conftest import UI
from workbench.models import SavedQuery

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_schedules_alerts_and_the_unread_count(ui: UI, page: Any, alice: User) -> None:
    query = SavedQuery.objects.create(owner=alice, name="revenue", sql="SELECT 42 AS n")
    schedule = Schedule.objects.create(
        owner=alice,
        saved_query=query,
        cron="0 9 * * 1",
        timezone="Europe/Paris",
        next_run_at=timezone.now() + timedelta(days=3),  # the live worker leaves it alone
    )
    alert = Alert.objects.create(
        schedule=schedule, name="big", column="n", operator=">", value="10", state="triggered"
    )
    Notification.objects.create(
        user=alice, alert=alert, kind="triggered", message="Alert [big] triggered (n = 42)."
    )
    ui.login(page, "alice")
    bell = page.get_by_test_id("bell")
    expect(bell).to_contain_text("1")
    bell.click()
    expect(page.get_by_test_id("notifications")).to_contain_text("n = 42")
    card = page.get_by_test_id(f"schedule-{schedule.pk}")
    expect(card).to_contain_text("0 9 * * 1")
    expect(card).to_contain_text("big")
    ui.screenshot(page, "schedules")
    page.get_by_role("button", name="Mark all read").click()
    expect(bell).not_to_contain_text("1")

    form = page.get_by_role("form", name="New schedule")
    form.get_by_label("Cron").fill("* * * * * *")
    form.get_by_label("Time zone").fill("UTC")
    form.get_by_role("button", name="Create").click()
    expect(form.get_by_role("alert")).to_contain_text("at most once a minute")
    form.get_by_label("Cron").fill("*/15 * * * *")
    form.get_by_role("button", name="Create").click()
    expect(page.get_by_text("*/15 * * * *", exact=True)).to_be_visible()
    assert Schedule.objects.filter(owner=alice, cron="*/15 * * * *", timezone="UTC").count() == 1
