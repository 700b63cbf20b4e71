"""Job notifications: whoever waits on a job is woken the moment it changes.

Three things used to poll the job row: the ``wait`` of ``POST /statements`` (every 50 ms),
the worker's monitor looking for a cancel (every 200 ms), and the browser (every 500 ms).
Now every change is announced, after its transaction commits, as ``"<job id> <what>"``:

- ``status``: a transition (``jobs.lifecycle``); ``ended`` instead when the job reached a
  terminal status, which wakes ``status`` watchers too (a wait for the end watches ``ended``
  only, and is not woken to re-read a job that has only started);
- ``progress``: the worker's monitor wrote progress and a heartbeat;
- ``cancel``: a cancel was asked for a RUNNING job (``jobs.services.job_cancel``);
- ``rows``: the worker wrote another record batch of the job's result
  (``results.partial.ResultWriter``), for readers that follow it.

Each process has at most one listener thread (started by the first ``watch``), which wakes
the ``Watch`` objects of that job in the process. A notification is a hint, never the
truth: a woken watcher reads the row again, and every watcher also re-reads it every
``TESSERA_NOTIFY_FALLBACK_SECONDS`` whatever happens, so a lost notification (a Redis
restart, a full socket buffer) costs at most that delay, never a wrong answer.

Carriers (``TESSERA_NOTIFY``): Redis pub/sub on the broker's Redis (``PUBLISH`` reaches
the whole server, so the channel is named after the broker's database number), or
datagram sockets in ``TESSERA_DATA_DIR/notify`` on the embedded default (``jobs.wakeup``:
every process of a ``make run`` shares one machine), or none (re-reading only).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from django.conf import settings
from django.db import transaction

from jobs import wakeup

log = logging.getLogger(__name__)

STATUS = "status"
ENDED = "ended"
PROGRESS = "progress"
CANCEL = "cancel"
ROWS = "rows"
KINDS = frozenset({STATUS, ENDED, PROGRESS, CANCEL, ROWS})

# How long a first ``watch`` waits for its process's listener to be ready (subscribed): a
# carrier that is slower than this is used once it is ready, re-reading covers the gap.
READY_SECONDS = 2.0
RECONNECT_SECONDS = (0.1, 0.5, 1.0, 2.0, 5.0)

Dispatch = Callable[[str, str], None]


class Carrier(Protocol):
    name: str

    def publish(self, message: str) -> None: ...

    def listen(self, ready: threading.Event, dispatch: Dispatch, lost: Callable[[], None]) -> None:
        """Run forever in the listener thread: call ``dispatch(job_id, kind)`` for each
        message, set ``ready`` once messages are being received, and call ``lost`` whenever
        messages may have been missed (a reconnection)."""


def _pause_before_retry(attempt: int) -> None:
    """The listener's back-off before subscribing or binding again."""
    time.sleep(RECONNECT_SECONDS[min(attempt, len(RECONNECT_SECONDS) - 1)])


def _parse(raw: bytes | str) -> tuple[str, str] | None:
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    job_id, _, kind = text.partition(" ")
    return (job_id, kind) if job_id and kind in KINDS else None


def listener_name() -> str:
    """The Redis client name of this process's listener (``CLIENT LIST`` shows who listens)."""
    return f"tessera-notify-{os.getpid()}"


class RedisCarrier:
    name = "redis"

    def __init__(self, url: str, channel: str) -> None:
        import redis

        self.url = url
        self.channel = channel
        self._redis = redis
        self._publisher = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)

    def publish(self, message: str) -> None:
        self._publisher.publish(self.channel, message)

    def listen(self, ready: threading.Event, dispatch: Dispatch, lost: Callable[[], None]) -> None:
        attempt = 0
        while True:
            try:
                client = self._redis.Redis.from_url(
                    self.url,
                    socket_connect_timeout=2,
                    socket_keepalive=True,
                    client_name=listener_name(),
                )
                pubsub = client.pubsub()  # type: ignore[no-untyped-call]
                pubsub.subscribe(self.channel)
                for message in pubsub.listen():
                    if message["type"] == "subscribe":
                        attempt = 0
                        ready.set()
                        lost()  # anything published before this subscription was missed
                    elif message["type"] == "message":
                        parsed = _parse(message["data"])
                        if parsed:
                            dispatch(*parsed)
            except Exception as exc:  # Redis restarted, network trouble: subscribe again
                log.warning("job notifications from Redis interrupted (%s); reconnecting", exc)
            lost()
            _pause_before_retry(attempt)
            attempt += 1


class SocketCarrier:
    name = "sockets"

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def publish(self, message: str) -> None:
        wakeup.send_all(self.folder, message.encode("utf-8"))

    def listen(self, ready: threading.Event, dispatch: Dispatch, lost: Callable[[], None]) -> None:
        attempt = 0
        while True:
            try:
                listener = wakeup.Listener(self.folder)
            except OSError as exc:
                log.warning("cannot listen for job notifications in %s: %s", self.folder, exc)
                _pause_before_retry(attempt)
                attempt += 1
                continue
            try:
                ready.set()
                while True:
                    for raw in listener.wait(None):
                        parsed = _parse(raw)
                        if parsed:
                            dispatch(*parsed)
            except Exception:
                log.exception("job notifications: the socket listener failed; binding again")
            finally:
                listener.close()
            lost()


class Watch:
    """Wakes when one of ``job_ids`` announces one of ``kinds`` (or when told to)."""

    def __init__(self, job_ids: Iterable[Any], kinds: frozenset[str]) -> None:
        self.job_ids = frozenset(str(job_id) for job_id in job_ids)
        self.kinds = kinds
        self._event = threading.Event()

    def wait(self, timeout: float) -> bool:
        """Wait until woken or ``timeout`` (at most the fallback delay) passed; True if woken.
        The wake is consumed: the next ``wait`` waits for a new one."""
        woken = self._event.wait(max(0.0, min(timeout, settings.TESSERA_NOTIFY_FALLBACK_SECONDS)))
        self._event.clear()
        return woken

    def wake(self) -> None:
        self._event.set()


class Hub:
    """This process's listener and the watches waiting in it."""

    def __init__(self, carrier: Carrier | None) -> None:
        self.carrier = carrier
        self._lock = threading.Lock()
        self._watches: dict[str, set[Watch]] = defaultdict(set)
        self._ready = threading.Event()
        self._pid: int | None = None

    def ensure_listening(self) -> None:
        if self.carrier is None:
            return
        with self._lock:
            if self._pid == os.getpid():
                return
            # First use in this process (or in a child forked after the parent listened):
            # start this process's listener.
            self._pid = os.getpid()
            self._ready = threading.Event()
            self._watches = defaultdict(set)
            threading.Thread(
                target=self.carrier.listen,
                args=(self._ready, self.dispatch, self.wake_all),
                name="tessera-notify",
                daemon=True,
            ).start()
        if not self._ready.wait(READY_SECONDS):
            log.warning("job notifications (%s) are not ready yet", self.carrier.name)

    def wait_ready(self, timeout: float) -> bool:
        """Start this process's listener if needed and wait until it receives messages
        (``ensure_listening`` gives up after ``READY_SECONDS``; a test needs the handshake)."""
        self.ensure_listening()
        return self.carrier is None or self._ready.wait(timeout)

    def dispatch(self, job_id: str, kind: str) -> None:
        with self._lock:
            watches = list(self._watches.get(job_id, ()))
        for watch in watches:
            if kind in watch.kinds or (kind == ENDED and STATUS in watch.kinds):
                watch.wake()

    def wake_all(self) -> None:
        with self._lock:
            watches = {watch for group in self._watches.values() for watch in group}
        for watch in watches:
            watch.wake()

    @contextlib.contextmanager
    def watch(self, job_ids: Iterable[Any], kinds: frozenset[str]) -> Iterator[Watch]:
        watch = Watch(job_ids, kinds)
        self.ensure_listening()
        with self._lock:
            for job_id in watch.job_ids:
                self._watches[job_id].add(watch)
        try:
            yield watch
        finally:
            with self._lock:
                for job_id in watch.job_ids:
                    group = self._watches.get(job_id)
                    if group is not None:
                        group.discard(watch)
                        if not group:
                            del self._watches[job_id]

    def publish(self, job_id: Any, kind: str) -> None:
        if self.carrier is None:
            return
        try:
            self.carrier.publish(f"{job_id} {kind}")
        except Exception as exc:  # waiters fall back to re-reading the row
            log.warning("could not announce job %s %s (%s)", job_id, kind, exc)


def redis_channel() -> str:
    """One channel per Redis database number, as the broker's queues are: ``PUBLISH``
    reaches every subscriber of the server, whatever database they selected."""
    from urllib.parse import urlsplit

    number = urlsplit(settings.CELERY_BROKER_URL).path.strip("/") or "0"
    return f"tessera:{number}:jobs"


def make_carrier() -> Carrier | None:
    choice = settings.TESSERA_NOTIFY
    url = settings.CELERY_BROKER_URL
    if choice == "auto":
        if url.startswith(("redis://", "rediss://")):
            choice = "redis"
        elif url.startswith("filesystem://"):
            choice = "sockets"
        else:
            choice = "none"
    if choice == "redis":
        return RedisCarrier(url, redis_channel())
    if choice == "sockets":
        return SocketCarrier(Path(settings.TESSERA_NOTIFY_FOLDER))
    if choice != "none":
        log.warning(
            "TESSERA_NOTIFY=%r is not one of auto, redis, sockets, none: using none", choice
        )
    return None


_hub: Hub | None = None
_hub_lock = threading.Lock()


def hub() -> Hub:
    global _hub
    if _hub is None:
        with _hub_lock:
            if _hub is None:
                _hub = Hub(make_carrier())
    return _hub


def reset() -> None:
    """Forget this process's hub (tests that change the settings)."""
    global _hub
    with _hub_lock:
        _hub = None


def listen() -> None:
    """Start this process's listener now (workers, at start) rather than at the first
    ``watch``."""
    hub().ensure_listening()


def watch(
    job_ids: Iterable[Any], kinds: Iterable[str] = (STATUS,)
) -> contextlib.AbstractContextManager[Watch]:
    """``with watch([job_id]) as w: … w.wait(seconds)``: register before reading the row,
    so that a change between the read and the wait still wakes it."""
    return hub().watch(job_ids, frozenset(kinds))


def announce(job_id: Any, kind: str) -> None:
    """Tell every watcher that job ``job_id`` changed, once the current transaction commits
    (at once outside one)."""
    transaction.on_commit(partial(hub().publish, job_id, kind), robust=True)
