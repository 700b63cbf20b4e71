"""The Engines page (main navigation → Engines, docs/api.md "Engines"): a user sees their own
engine and restarts it after a confirmation (the request is recorded for its worker); an admin
sees another user's engine and stops it; somebody without a running engine is told that their
next statement starts one.

The engines are rows made here, as the worker's pool would leave them: no statement runs, so
no worker is needed (the worker's side of a restart is not the page's).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from playwright.sync_api import expect

from jobs.models import Engine
from tests.browser.conftest import PASSWORD, UI
from tests.browser.test_dark_mode import contrasts

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def ui(live_server: Any, transactional_db: None) -> UI:
    return UI(url=live_server.url)


@pytest.fixture
def root(transactional_db: None) -> User:
    return User.objects.create_user("root", password=PASSWORD, is_staff=True, is_superuser=True)


@pytest.fixture
def bob(transactional_db: None) -> User:
    return User.objects.create_user("bob", password=PASSWORD)


def engine_of(user: User, state: str = Engine.READY) -> Engine:
    now = timezone.now()
    stopped = state in (Engine.STOPPED, Engine.LOST)
    return Engine.objects.create(
        share_level="user",
        share_key=f"user:{user.pk}",
        runtime="local",
        state=state,
        worker="worker-1@host",
        pid=4242,
        driver_memory="2g",
        ready_at=now - timedelta(minutes=12),
        last_used_at=now - timedelta(minutes=1),
        stopped_at=now if stopped else None,
        stop_reason="idle" if stopped else "",
    )


def open_engines(page: Any) -> None:
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Engines").click()
    expect(page.get_by_role("heading", name="Engines")).to_be_visible()


def test_a_user_restarts_their_own_engine(ui: UI, page: Any, alice: User) -> None:
    engine = engine_of(alice)
    ended = engine_of(alice, Engine.STOPPED)
    ui.login(page, "alice")
    open_engines(page)

    row = page.get_by_test_id(f"engine-{engine.pk}")
    expect(row).to_contain_text("alice")
    expect(row.get_by_test_id("engine-state")).to_have_text("READY")
    expect(row).to_contain_text("2g")
    expect(row).to_contain_text("12 min")  # uptime
    expect(row).to_contain_text("0 jobs")
    expect(page.get_by_test_id("engines-empty")).to_have_count(0)
    old = page.get_by_test_id(f"engine-{ended.pk}")
    expect(old.get_by_test_id("engine-state")).to_have_text("STOPPED")
    expect(old.get_by_role("button")).to_have_count(0)
    expect(page.get_by_role("button", name="Stop engine of alice")).to_have_count(0)  # admins'
    ui.screenshot(page, "engines")

    # Restart asks first; Cancel leaves the engine alone.
    row.get_by_role("button", name="Restart engine of alice").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("Your next statement starts a fresh engine")
    dialog.get_by_role("button", name="Cancel").click()
    expect(page.get_by_role("dialog")).to_have_count(0)
    assert Engine.objects.get(pk=engine.pk).stop_requested == ""

    row.get_by_role("button", name="Restart engine of alice").click()
    page.get_by_role("dialog").get_by_role("button", name="Restart engine").click()
    expect(row.get_by_test_id("engine-request")).to_have_text("restart requested by alice")
    expect(row.get_by_role("button", name="Restart engine of alice")).to_have_count(0)
    engine.refresh_from_db()
    assert (engine.stop_requested, engine.stop_requested_by) == ("restart", "alice")


def test_without_a_running_engine_the_page_says_the_next_statement_starts_one(
    ui: UI, page: Any, alice: User, bob: User
) -> None:
    engine_of(alice)  # not bob's
    ui.login(page, "bob")
    open_engines(page)
    expect(page.get_by_test_id("engines-empty")).to_have_text(
        "No engine is running for you; your next statement starts one."
    )
    expect(page.get_by_test_id("engines")).to_have_count(0)


def test_an_admin_sees_another_users_engine_and_stops_it(
    ui: UI, page: Any, root: User, bob: User
) -> None:
    engine = engine_of(bob)
    others = [engine_of(bob, state) for state in ("STARTING", "STOPPING", "STOPPED", "LOST")]
    page.emulate_media(color_scheme="dark")
    ui.login(page, "root")
    open_engines(page)
    row = page.get_by_test_id(f"engine-{engine.pk}")
    expect(row).to_contain_text("bob")
    expect(row.get_by_role("button", name="Restart engine of bob")).to_have_count(0)  # not his
    expect(page.get_by_test_id("engines").locator("tbody tr")).to_have_count(5)
    for other in others:
        expect(
            page.get_by_test_id(f"engine-{other.pk}").get_by_test_id("engine-state")
        ).to_have_text(other.state)
    # Dark mode: every text of the page, state badges included, reads at 4.5:1 at least.
    page.mouse.move(0, 0)
    low = [item for item in contrasts(page.locator(".engines-page")) if item["ratio"] < 4.5]
    assert not low, low
    ui.screenshot(page, "engines-admin-dark")

    row.get_by_role("button", name="Stop engine of bob").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("Stop the engine of bob?")
    dialog.get_by_role("button", name="Stop engine").click()
    expect(row.get_by_test_id("engine-request")).to_have_text("stop requested by root")
    expect(row.get_by_role("button", name="Stop engine of bob")).to_have_count(0)
    engine.refresh_from_db()
    assert (engine.stop_requested, engine.stop_requested_by) == ("stop", "root")
