"""The embedded broker's message files (``jobs.broker``): whole or invisible, undecodable
ones set aside, two readers of one file, and a dead consumer's messages handed on.

Races are set up with handshakes (events, barriers, pipes), never with sleeps.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from queue import Empty
from types import SimpleNamespace
from typing import Any

import pytest
from kombu.connection import Connection
from kombu.entity import Exchange, Queue

from jobs import broker, wakeup

WAIT = 20.0


def _options(tmp_path: Path) -> dict[str, Any]:
    for name in ("queue", "control", "wake"):
        (tmp_path / name).mkdir(exist_ok=True)
    return {
        "data_folder_in": str(tmp_path / "queue"),
        "data_folder_out": str(tmp_path / "queue"),
        "control_folder": str(tmp_path / "control"),
        "store_processed": False,
        "wake_folder": str(tmp_path / "wake"),
        # The defaults: <queue>/../claimed and <queue>/../dead-letter.
        "polling_interval": 3600.0,
    }


def _connection(tmp_path: Path) -> Connection:
    return Connection(
        "filesystem://", transport="jobs.broker:Transport", transport_options=_options(tmp_path)
    )


def _queue_name() -> str:
    return f"q-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[Connection]:
    with _connection(tmp_path) as connection:
        yield connection


def _publish(connection: Connection, queue: str, body: Any) -> None:
    # The anonymous exchange: the routing key is the queue (basic_publish → _put).
    connection.Producer().publish(body, exchange="", routing_key=queue, serializer="json")


def _messages(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in (tmp_path / "queue").iterdir())


def _body(payload: dict[str, Any], channel: Any) -> Any:
    return channel.Message(payload, channel=channel).decode()


def _kombu_payload(channel: Any, body: Any) -> dict[str, Any]:
    message = channel.prepare_message(json.dumps(body), content_type="application/json")
    channel._inplace_augment_message(message, "", "x")
    return dict(message)


def test_a_message_is_renamed_into_place_and_no_temporary_name_matches_a_queue(
    tmp_path: Path, conn: Connection
) -> None:
    folder = tmp_path / "queue"
    channel = conn.default_channel
    name = f"1_{uuid.uuid4()}.celery.msg"
    data = json.dumps(_kombu_payload(channel, {"n": 1})).encode()
    broker.write_message(folder, name, data)
    assert _messages(tmp_path) == [name]  # no temporary file left behind
    # kombu's reader, _size and _purge match partition('.')[2] == '<queue>.msg'.
    temp = f"{broker.TEMP_PREFIX}{name}{broker.TEMP_SUFFIX}"
    for queue in ("celery", "celery.msg", "x.celery", name, name + ".part", ""):
        assert temp.partition(".")[2] != f"{queue}.msg"
    # A writer that died before its rename leaves only a hidden file nobody reads.
    (folder / f".2_{uuid.uuid4()}.celery.msg.part").write_bytes(b"{")
    assert channel._size("celery") == 1
    assert _body(channel._get("celery"), channel) == {"n": 1}
    with pytest.raises(Empty):
        channel._get("celery")
    assert not (tmp_path / "dead-letter").exists()


def test_garbage_and_old_empty_files_go_to_the_dead_letter_folder_and_reading_goes_on(
    tmp_path: Path, conn: Connection, caplog: pytest.LogCaptureFixture
) -> None:
    queue = _queue_name()
    folder = tmp_path / "queue"
    empty = folder / f"1_{uuid.uuid4()}.{queue}.msg"
    empty.write_bytes(b"")
    past = time.time() - broker.EMPTY_GRACE_SECONDS - 1
    os.utime(empty, (past, past))  # empty for longer than any writer takes
    garbage = folder / f"2_{uuid.uuid4()}.{queue}.msg"
    garbage.write_bytes(b'{"properties": {"delivery_ta')
    not_utf8 = folder / f"3_{uuid.uuid4()}.{queue}.msg"
    not_utf8.write_bytes(b"\xff\xfe\x00")
    _publish(conn, queue, {"job": "good"})
    channel = conn.default_channel
    with caplog.at_level(logging.WARNING, logger="jobs.broker"):
        payload = channel._get(queue)
    assert _body(payload, channel) == {"job": "good"}
    dead = tmp_path / "dead-letter"
    assert sorted(p.name for p in dead.iterdir()) == sorted(
        [empty.name, garbage.name, not_utf8.name]
    )
    for path in (empty, garbage, not_utf8):
        assert any(
            "undecodable message" in r.getMessage() and str(path) in r.getMessage()
            for r in caplog.records
        ), path
    assert _messages(tmp_path) == []


def test_the_worker_loop_survives_a_garbage_file(tmp_path: Path, conn: Connection) -> None:
    """Through drain_events, as the Celery worker reads: no exception, the next message."""
    queue = Queue(_queue_name(), Exchange("", type="direct"))
    (tmp_path / "queue" / f"1_{uuid.uuid4()}.{queue.name}.msg").write_bytes(b"not json")
    received: list[Any] = []

    def on_message(body: Any, message: Any) -> None:
        received.append(body)
        message.ack()

    with conn.Consumer(queue, callbacks=[on_message]):
        _publish(conn, queue.name, {"n": 1})
        conn.drain_events(timeout=WAIT)
    assert received == [{"n": 1}]
    assert len(list((tmp_path / "dead-letter").iterdir())) == 1


def test_a_young_empty_file_is_left_for_its_writer(tmp_path: Path, conn: Connection) -> None:
    queue = _queue_name()
    young = tmp_path / "queue" / f"1_{uuid.uuid4()}.{queue}.msg"
    young.write_bytes(b"")
    with pytest.raises(Empty):
        conn.default_channel._get(queue)
    assert young.exists()
    assert not (tmp_path / "dead-letter").exists()


def test_a_file_an_older_kombu_is_still_writing_is_read_whole(
    tmp_path: Path, conn: Connection
) -> None:
    """kombu's own _put: create, flock, write. The reader claims it mid-write and waits."""
    queue = _queue_name()
    channel = conn.default_channel
    data = json.dumps(_kombu_payload(channel, {"big": "x" * 100_000})).encode()
    path = tmp_path / "queue" / f"1_{uuid.uuid4()}.{queue}.msg"
    half_written, finish = threading.Event(), threading.Event()

    def old_writer() -> None:
        with open(path, "wb", buffering=0) as f:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX)
            f.write(data[: len(data) // 2])
            half_written.set()
            finish.wait(WAIT)
            f.write(data[len(data) // 2 :])
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)

    got: list[Any] = []
    writer = threading.Thread(target=old_writer)
    writer.start()
    assert half_written.wait(WAIT)
    reader = threading.Thread(target=lambda: got.append(channel._get(queue)))
    reader.start()
    deadline = time.monotonic() + WAIT
    while path.exists() and time.monotonic() < deadline:  # the reader has claimed it
        reader.join(0.01)
    assert not path.exists() and reader.is_alive()  # claimed, waiting for the writer's lock
    finish.set()
    writer.join(WAIT)
    reader.join(WAIT)
    assert _body(got[0], channel) == {"big": "x" * 100_000}
    assert not (tmp_path / "dead-letter").exists()


def test_two_consumers_listing_the_same_file_one_takes_it_the_other_goes_on(
    tmp_path: Path,
) -> None:
    queue = _queue_name()
    with _connection(tmp_path) as first, _connection(tmp_path) as second:
        channels = [first.default_channel, second.default_channel]
        for round_ in range(200):
            _publish(first, queue, {"round": round_})
            start = threading.Barrier(2)
            results: list[Any] = [None, None]

            def take(
                i: int, start: threading.Barrier = start, results: list[Any] = results
            ) -> None:
                start.wait(WAIT)
                try:
                    results[i] = channels[i]._get(queue)
                except Empty:
                    results[i] = "empty"
                except BaseException as exc:
                    results[i] = exc

            threads = [threading.Thread(target=take, args=(i,)) for i in (0, 1)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(WAIT)
            winners = [r for r in results if isinstance(r, dict)]
            assert len(winners) == 1 and "empty" in results, results
            channels[results.index(winners[0])].basic_ack(winners[0]["properties"]["delivery_tag"])
        assert _messages(tmp_path) == []


def test_an_acknowledged_message_is_gone_and_an_unacknowledged_one_returns_on_close(
    tmp_path: Path,
) -> None:
    queue = _queue_name()
    claimed = tmp_path / "claimed"
    with _connection(tmp_path) as connection:
        _publish(connection, queue, {"n": 1})
        _publish(connection, queue, {"n": 2})
        channel = connection.default_channel
        first = channel.basic_get(queue)
        assert [p.name for p in next(claimed.iterdir()).iterdir() if p.name != ".owner"]
        first.ack()
        second = channel.basic_get(queue)
        # Sent within one millisecond, they may come in either order.
        assert sorted([first.decode()["n"], second.decode()["n"]]) == [1, 2]
        assert len(list(next(claimed.iterdir()).iterdir())) == 2  # its file and the lock
    # Closed without an ack: kombu restores it, its claim goes, the folder goes.
    assert len(_messages(tmp_path)) == 1
    assert list(claimed.iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_dead_consumers_message_is_handed_to_the_next_one(tmp_path: Path) -> None:
    queue = _queue_name()
    with _connection(tmp_path) as connection:
        _publish(connection, queue, {"job": "held"})
    took_r, took_w = os.pipe()
    die_r, die_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # a worker that takes the message and dies before it acknowledges it
        try:
            child = _connection(tmp_path)
            message = child.default_channel.basic_get(queue)
            os.write(took_w, b"1" if message is not None else b"0")
            os.read(die_r, 1)
        finally:
            os._exit(0)  # no close, no restore: as kill -9
    try:
        assert os.read(took_r, 1) == b"1"
        with _connection(tmp_path) as other:
            channel = other.default_channel
            # Alive: its claim is its own.
            with pytest.raises(Empty):
                channel._get(queue)
            os.write(die_w, b"x")
            os.waitpid(pid, 0)
            pid = 0
            channel._recovered_at = float("-inf")  # its next look, not a second later
            started = time.monotonic()
            message = channel.basic_get(queue)
            assert message is not None and message.decode() == {"job": "held"}
            assert time.monotonic() - started < 1.0
            message.ack()
        assert list((tmp_path / "claimed").iterdir()) == []
    finally:
        if pid:
            os.write(die_w, b"x")
            os.waitpid(pid, 0)
        for fd in (took_r, took_w, die_r, die_w):
            os.close(fd)


def test_the_wake_up_socket_is_bound_again_after_a_reconnection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    waiting = threading.Event()
    waits: list[list[bytes]] = []
    real_wait = wakeup.Listener.wait

    def recorded(self: wakeup.Listener, timeout: float | None) -> list[bytes]:
        waiting.set()
        got = real_wait(self, timeout)
        waits.append(got)
        return got

    monkeypatch.setattr(wakeup.Listener, "wait", recorded)
    wake = tmp_path / "wake"
    queue = Queue(_queue_name(), Exchange("", type="direct"))
    received: list[Any] = []
    connection = _connection(tmp_path)
    with pytest.raises(TimeoutError):
        connection.drain_events(timeout=0.01)
    first = {p.name for p in wake.iterdir()}
    assert len(first) == 1
    connection.close()  # close_connection: the socket goes with the listener
    assert list(wake.iterdir()) == []
    with connection, connection.Consumer(queue, callbacks=[lambda b, m: received.append(b)]):
        waiting.clear()
        thread = threading.Thread(target=connection.drain_events, kwargs={"timeout": WAIT})
        thread.start()
        assert waiting.wait(WAIT)
        assert {p.name for p in wake.iterdir()} - first  # a new socket
        with _connection(tmp_path) as producer:
            _publish(producer, queue.name, {"again": True})
        thread.join(WAIT + 5)
    assert received == [{"again": True}]
    assert waits[-1] == [b"q"]


def test_a_listener_whose_socket_file_was_removed_binds_a_new_one(tmp_path: Path) -> None:
    with _connection(tmp_path) as connection:
        transport: Any = connection.transport
        listener = transport._wake_listener()
        listener.path.unlink()  # someone cleaned the folder
        again = transport._wake_listener()
        assert again is not listener and again.path.exists()
        assert wakeup.send_all(tmp_path / "wake", b"q") == 1
        assert again.wait(5) == [b"q"]


def test_a_stale_socket_file_of_a_dead_process_does_not_stop_a_new_listener(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A dead process with our pid bound the very name we are about to take.
    tokens = iter(["deadbeef", "deadbeef"])
    monkeypatch.setattr("jobs.wakeup.secrets", SimpleNamespace(token_hex=lambda n: next(tokens)))
    stale = tmp_path / f"{os.getpid():x}-deadbeef{wakeup.SUFFIX}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as dead:
        dead.bind(str(stale))
    listener = wakeup.Listener(tmp_path)
    try:
        assert listener.path == stale
        # A regular file left with the suffix is no receiver either: senders go on.
        (tmp_path / f"junk{wakeup.SUFFIX}").write_bytes(b"")
        assert wakeup.send_all(tmp_path, b"q") == 1
        assert listener.wait(5) == [b"q"]
    finally:
        listener.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_waiting_worker_takes_over_a_killed_workers_message_within_seconds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As in production: the other worker waits in drain_events (poll 1 s), the first one
    dies holding a message; the waiting one runs it within a poll and a recovery interval,
    not the sweeper's 15 to 20 s."""
    waiting = threading.Event()
    real_wait = wakeup.Listener.wait

    def recorded(self: wakeup.Listener, timeout: float | None) -> list[bytes]:
        waiting.set()
        return real_wait(self, timeout)

    monkeypatch.setattr(wakeup.Listener, "wait", recorded)
    queue = Queue(_queue_name(), Exchange("", type="direct"))
    with _connection(tmp_path) as connection:
        _publish(connection, queue.name, {"job": "orphan"})
    took_r, took_w = os.pipe()
    die_r, die_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            message = _connection(tmp_path).default_channel.basic_get(queue.name)
            os.write(took_w, b"1" if message is not None else b"0")
            os.read(die_r, 1)
        finally:
            os._exit(0)  # as kill -9: nothing restored
    received: list[Any] = []

    def on_message(body: Any, message: Any) -> None:
        received.append(body)
        message.ack()

    options = {**_options(tmp_path), "polling_interval": 1.0}
    other = Connection(
        "filesystem://", transport="jobs.broker:Transport", transport_options=options
    )
    try:
        assert os.read(took_r, 1) == b"1"
        with other, other.Consumer(queue, callbacks=[on_message]):
            thread = threading.Thread(target=other.drain_events, kwargs={"timeout": WAIT})
            thread.start()
            assert waiting.wait(WAIT)  # looked, found nothing (the message is claimed)
            assert received == []
            os.write(die_w, b"x")
            os.waitpid(pid, 0)
            pid = 0
            died = time.monotonic()
            thread.join(WAIT + 5)
            took = time.monotonic() - died
    finally:
        if pid:
            os.write(die_w, b"x")
            os.waitpid(pid, 0)
        for fd in (took_r, took_w, die_r, die_w):
            os.close(fd)
    assert received == [{"job": "orphan"}]
    assert took < 2.0 + 1.0, took  # a poll and a recovery interval, and a margin


def test_messages_are_read_oldest_first_by_the_number_their_name_starts_with(
    tmp_path: Path, conn: Connection
) -> None:
    queue = _queue_name()
    channel = conn.default_channel
    for ms, n in ((1000, 2), (999, 1)):  # as strings, "1000_" would sort first
        data = json.dumps(_kombu_payload(channel, {"n": n})).encode()
        broker.write_message(tmp_path / "queue", f"{ms}_{uuid.uuid4()}.{queue}.msg", data)
    assert [_body(channel._get(queue), channel)["n"] for _ in range(2)] == [1, 2]


def test_store_processed_keeps_an_acknowledged_message(tmp_path: Path) -> None:
    (tmp_path / "processed").mkdir()
    queue = _queue_name()
    with _connection(tmp_path) as connection:
        connection.transport_options.update(
            store_processed=True, processed_folder=str(tmp_path / "processed")
        )
        _publish(connection, queue, {"n": 1})
        message = connection.default_channel.basic_get(queue)
        message.ack()
    assert len(list((tmp_path / "processed").iterdir())) == 1
    assert _messages(tmp_path) == []
