"""The embedded broker transport (``jobs.broker``) and its wake-up sockets (``jobs.wakeup``).

A consumer that waits for a message no longer sleeps through its polling interval: it
waits on its wake-up socket, and the producer's datagram ends that wait.
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
from kombu.connection import Connection
from kombu.entity import Exchange, Queue

from jobs import wakeup

# The drain's own timeout: without a wake-up the consumer would sleep all of it.
DRAIN_SECONDS = 20.0


def _options(tmp_path: Path) -> dict[str, Any]:
    for name in ("queue", "processed", "control", "wake"):
        (tmp_path / name).mkdir(exist_ok=True)
    return {
        "data_folder_in": str(tmp_path / "queue"),
        "data_folder_out": str(tmp_path / "queue"),
        "processed_folder": str(tmp_path / "processed"),
        "control_folder": str(tmp_path / "control"),
        "store_processed": False,
        "wake_folder": str(tmp_path / "wake"),
        "polling_interval": 3600.0,
    }


def _queue() -> Queue:
    """A queue of its own: kombu keeps declared exchanges in a process-wide state, which
    would route a second test's messages by the first test's folders."""
    name = f"jobs-{uuid.uuid4().hex[:8]}"
    return Queue(name, Exchange(name, type="direct"), routing_key=name)


def _connection(tmp_path: Path) -> Connection:
    return Connection(
        "filesystem://", transport="jobs.broker:Transport", transport_options=_options(tmp_path)
    )


def test_a_waiting_consumer_is_woken_by_a_message_not_by_its_poll(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    waits: list[list[bytes]] = []
    waiting = threading.Event()
    real_wait = wakeup.Listener.wait

    def recorded(self: wakeup.Listener, timeout: float | None) -> list[bytes]:
        waiting.set()
        got = real_wait(self, timeout)
        waits.append(got)
        return got

    monkeypatch.setattr(wakeup.Listener, "wait", recorded)
    queue = _queue()
    received: list[Any] = []
    with (
        _connection(tmp_path) as consumer_conn,
        _connection(tmp_path) as producer_conn,
        consumer_conn.Consumer(queue, callbacks=[lambda body, msg: received.append(body)]),
    ):
        # The consumer binds its wake-up socket on its first drain, looks at the folder,
        # then waits: the message is published once it waits (published between the bind
        # and the look, it would be found without a wait at all).
        drained = threading.Event()
        failure: list[BaseException] = []

        def drain() -> None:
            try:
                consumer_conn.drain_events(timeout=DRAIN_SECONDS)
            except BaseException as exc:
                failure.append(exc)
            drained.set()

        thread = threading.Thread(target=drain)
        thread.start()
        assert waiting.wait(DRAIN_SECONDS), "the consumer never waited"
        assert any(p.suffix == ".sock" for p in (tmp_path / "wake").iterdir())
        producer_conn.Producer().publish(
            {"job": 1}, exchange=queue.exchange, routing_key=queue.routing_key, declare=[queue]
        )
        thread.join(DRAIN_SECONDS + 5)
    assert not failure, failure
    assert received == [{"job": 1}]
    # The consumer's wait ended with the producer's datagram, not at its poll's end.
    assert waits and waits[-1] == [b"q"], waits


def test_the_message_waits_in_the_folder_when_no_consumer_listens(tmp_path: Path) -> None:
    """Durability: the message is a file first; a wake-up nobody hears loses nothing."""
    queue = _queue()
    with _connection(tmp_path) as producer_conn:
        producer_conn.Producer().publish(
            {"job": 2}, exchange=queue.exchange, routing_key=queue.routing_key, declare=[queue]
        )
    assert len(list((tmp_path / "queue").glob("*.msg"))) == 1
    received: list[Any] = []
    with (
        _connection(tmp_path) as consumer_conn,
        consumer_conn.Consumer(queue, callbacks=[lambda body, msg: received.append(body)]),
    ):
        consumer_conn.drain_events(timeout=DRAIN_SECONDS)
    assert received == [{"job": 2}]


def test_send_all_reaches_every_listener_and_removes_dead_sockets(tmp_path: Path) -> None:
    first, second = wakeup.Listener(tmp_path), wakeup.Listener(tmp_path)
    # A socket file left by a process that ended without closing it.
    dead = tmp_path / "dead.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as orphan:
        orphan.bind(str(dead))
    try:
        assert wakeup.send_all(tmp_path, b"42 status") == 2
        assert first.wait(5) == [b"42 status"]
        assert second.wait(5) == [b"42 status"]
        assert not dead.exists()
        assert first.wait(0) == []  # consumed
    finally:
        first.close()
        second.close()
    assert not first.path.exists() and not second.path.exists()
    assert wakeup.send_all(tmp_path, b"x") == 0


def test_a_folder_too_long_for_socket_paths_uses_a_short_stand_in(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 120)
    where = wakeup.socket_folder(deep)
    assert where != deep and len(str(where)) < 60
    assert wakeup.socket_folder(deep) == where  # every process computes the same one
    listener = wakeup.Listener(deep)
    try:
        assert wakeup.send_all(deep, b"hello") == 1
        assert listener.wait(5) == [b"hello"]
        assert oct(where.stat().st_mode & 0o777) == oct(0o700)
    finally:
        listener.close()


def test_a_missing_folder_is_nobody_to_wake(tmp_path: Path) -> None:
    assert wakeup.send_all(tmp_path / "missing", b"x") == 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_does_not_remove_its_parents_socket(tmp_path: Path) -> None:
    listener = wakeup.Listener(tmp_path)
    try:
        pid = os.fork()
        if pid == 0:  # the child closes its copy and leaves
            listener.close()
            os._exit(0)
        os.waitpid(pid, 0)
        assert listener.path.exists()
        assert wakeup.send_all(tmp_path, b"still here") == 1
        assert listener.wait(5) == [b"still here"]
    finally:
        listener.close()
