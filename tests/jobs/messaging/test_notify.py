"""Job notifications (``jobs.notify``) on both carriers: Redis pub/sub and datagram sockets.

A watch must be woken by its own job's announcements, only of the kinds it watches, only
once the announcing transaction has committed, and — when the carrier may have dropped
messages (Redis went away) — woken anyway, so that it re-reads the row. The fallback delay
is raised to a minute in these tests: a watch that returns True was woken, not timed out.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from django.conf import settings as django_settings
from django.db import transaction

from jobs import notify

WOKEN_WITHIN = 30.0  # generous: a wake-up comes in milliseconds; a miss waits the fallback


@pytest.fixture(autouse=True)
def slow_fallback(settings) -> None:
    settings.TESSERA_NOTIFY_FALLBACK_SECONDS = 60


@pytest.fixture(params=["sockets", "redis"])
def hub(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[notify.Hub]:
    carrier: notify.Carrier
    if request.param == "sockets":
        carrier = notify.SocketCarrier(tmp_path / "notify")
    else:
        # A channel of its own: another test run on the same Redis hears nothing of this one.
        carrier = notify.RedisCarrier(django_settings.CELERY_BROKER_URL, f"test:{uuid.uuid4()}")
    hub = notify.Hub(carrier)
    # Subscribed before the test publishes: on a busy machine that can take past READY_SECONDS.
    assert hub.wait_ready(WOKEN_WITHIN)
    yield hub


def test_a_watch_is_woken_by_its_jobs_announcement_only(hub: notify.Hub) -> None:
    with (
        hub.watch(["job-1"], frozenset({notify.STATUS})) as mine,
        hub.watch(["job-2"], frozenset({notify.STATUS})) as other,
        hub.watch(["job-1"], frozenset({notify.CANCEL})) as cancels,
    ):
        hub.publish("job-1", notify.STATUS)
        assert mine.wait(WOKEN_WITHIN) is True
        # Another job's watch and a watch of another kind stay asleep.
        assert other.wait(0.3) is False
        assert cancels.wait(0.3) is False
        # The wake-up was consumed: the next wait waits for a new one.
        assert mine.wait(0.3) is False
        hub.publish("job-1", notify.CANCEL)
        assert cancels.wait(WOKEN_WITHIN) is True


def test_a_watch_over_several_jobs_wakes_for_any_of_them(hub: notify.Hub) -> None:
    with hub.watch(["a", "b", "c"], frozenset({notify.STATUS})) as watch:
        hub.publish("c", notify.STATUS)
        assert watch.wait(WOKEN_WITHIN) is True


def test_garbage_on_the_carrier_wakes_nobody(hub: notify.Hub) -> None:
    with hub.watch(["job-1"], frozenset(notify.KINDS)) as watch:
        assert hub.carrier is not None
        for junk in ("", "job-1", "job-1 explode", " status", "\x00" * 3000):
            hub.carrier.publish(junk)
        assert watch.wait(0.5) is False
        hub.publish("job-1", notify.PROGRESS)
        assert watch.wait(WOKEN_WITHIN) is True


def test_after_redis_drops_the_subscription_every_watch_is_woken_and_it_subscribes_again() -> None:
    """A Redis restart loses messages: the watches are woken to re-read their rows, and the
    listener subscribes again, so later announcements arrive."""
    channel = f"test:{uuid.uuid4()}"
    hub = notify.Hub(notify.RedisCarrier(django_settings.CELERY_BROKER_URL, channel))
    assert hub.wait_ready(WOKEN_WITHIN)  # its client is listed only once it has subscribed
    with hub.watch(["job-1"], frozenset({notify.STATUS})) as watch:
        client = redis.Redis.from_url(django_settings.CELERY_BROKER_URL)
        # This process's listener, by its client name (other processes' are left alone).
        ours = [e for e in client.client_list() if e.get("name") == notify.listener_name()]
        assert ours
        for entry in ours:
            client.client_kill_filter(_id=entry["id"])
        assert watch.wait(WOKEN_WITHIN) is True  # woken by the loss itself

        def subscribed() -> bool:
            return bool(client.execute_command("PUBSUB", "NUMSUB", channel)[1])

        for _ in range(300):
            if subscribed():
                break
            threading.Event().wait(0.05)
        assert subscribed()
        watch.wait(0)  # forget any wake-up from the reconnection itself
        hub.publish("job-1", notify.STATUS)
        assert watch.wait(WOKEN_WITHIN) is True


@pytest.mark.django_db(transaction=True)
def test_an_announcement_is_sent_when_its_transaction_commits_and_never_on_rollback(
    settings, tmp_path: Path
) -> None:
    settings.TESSERA_NOTIFY = "sockets"
    settings.TESSERA_NOTIFY_FOLDER = tmp_path / "notify"
    notify.reset()
    try:
        assert notify.hub().wait_ready(WOKEN_WITHIN)
        with notify.watch(["job-9"], (notify.STATUS,)) as watch:
            with transaction.atomic():
                notify.announce("job-9", notify.STATUS)
                assert watch.wait(0.3) is False  # not before the commit
            assert watch.wait(WOKEN_WITHIN) is True
            try:
                with transaction.atomic():
                    notify.announce("job-9", notify.STATUS)
                    raise RuntimeError("roll back")
            except RuntimeError:
                pass
            assert watch.wait(0.5) is False
    finally:
        notify.reset()


def test_without_a_carrier_a_watch_only_times_out(settings) -> None:
    settings.TESSERA_NOTIFY = "none"
    settings.TESSERA_NOTIFY_FALLBACK_SECONDS = 0.2
    notify.reset()
    try:
        assert notify.hub().carrier is None
        with notify.watch(["job-1"]) as watch:
            notify.hub().publish("job-1", notify.STATUS)  # nowhere to go: no error either
            assert watch.wait(30) is False  # capped at the fallback delay
    finally:
        notify.reset()


def test_the_carrier_follows_the_broker(settings, tmp_path: Path) -> None:
    settings.TESSERA_NOTIFY = "auto"
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:6379/7"
    carrier = notify.make_carrier()
    assert isinstance(carrier, notify.RedisCarrier) and carrier.channel == "tessera:7:jobs"
    settings.CELERY_BROKER_URL = "filesystem://"
    settings.TESSERA_NOTIFY_FOLDER = tmp_path
    assert isinstance(notify.make_carrier(), notify.SocketCarrier)
    settings.CELERY_BROKER_URL = "amqp://guest@localhost//"
    assert notify.make_carrier() is None
    settings.TESSERA_NOTIFY = "carrier-pigeon"
    assert notify.make_carrier() is None


def test_an_end_wakes_status_watchers_and_a_start_does_not_wake_end_watchers(
    hub: notify.Hub,
) -> None:
    with (
        hub.watch(["job-1"], frozenset({notify.STATUS})) as any_change,
        hub.watch(["job-1"], frozenset({notify.ENDED})) as the_end,
    ):
        hub.publish("job-1", notify.STATUS)  # RUNNING: only the status watcher reads again
        assert any_change.wait(WOKEN_WITHIN) is True
        assert the_end.wait(0.3) is False
        hub.publish("job-1", notify.ENDED)  # FINISHED: both
        assert the_end.wait(WOKEN_WITHIN) is True
        assert any_change.wait(WOKEN_WITHIN) is True
