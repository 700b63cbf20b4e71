"""The embedded broker under load: many writers, one reader woken on every message.

Kombu's own file-system transport made the file visible before it was written, and a reader
woken at once read it empty: the worker died of a JSONDecodeError. Here 16 threads publish
through kombu (Producer → our Channel._put, a wake-up datagram per message) while a consumer
drains with the real ``drain_events`` and its wake-up listener; every message must arrive
exactly once and nothing may be undecodable. TESSERA_BROKER_STRESS_PER_WRITER sets the
messages per writer: 250 by default (4,000 in all, about 2 s on 2 cores); 2,000 (32,000 in
all) took 14 s there, the writers and the reader sharing one interpreter lock.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from kombu.connection import Connection
from kombu.entity import Exchange, Queue

from jobs import wakeup

WRITERS = 16
PER_WRITER = int(os.environ.get("TESSERA_BROKER_STRESS_PER_WRITER", "250"))
DEADLINE_SECONDS = 300.0


def _connection(tmp_path: Path) -> Connection:
    for name in ("queue", "control", "wake"):
        (tmp_path / name).mkdir(exist_ok=True)
    options = {
        "data_folder_in": str(tmp_path / "queue"),
        "data_folder_out": str(tmp_path / "queue"),
        "control_folder": str(tmp_path / "control"),
        "store_processed": False,
        "wake_folder": str(tmp_path / "wake"),
        # Without a wake-up the reader would wait this long: it must be woken.
        "polling_interval": 3600.0,
    }
    return Connection("filesystem://", transport="jobs.broker:Transport", transport_options=options)


def test_sixteen_writers_and_a_woken_reader_lose_duplicate_and_garble_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    woken = Counter[str]()
    real_wait = wakeup.Listener.wait

    def counted(self: wakeup.Listener, timeout: float | None) -> list[bytes]:
        got = real_wait(self, timeout)
        woken["by datagram" if got else "by timeout"] += 1
        return got

    monkeypatch.setattr(wakeup.Listener, "wait", counted)
    queue = Queue(f"stress-{uuid.uuid4().hex[:8]}", Exchange("", type="direct"))
    total = WRITERS * PER_WRITER
    received: list[tuple[int, int]] = []
    errors: list[BaseException] = []
    listening = threading.Event()
    go = threading.Barrier(WRITERS + 1)
    done = threading.Event()

    def on_message(body: Any, message: Any) -> None:
        received.append((body["w"], body["i"]))
        message.ack()

    def reader() -> None:
        try:
            with (
                _connection(tmp_path) as conn,
                conn.Consumer(queue, callbacks=[on_message], accept=["json"]),
            ):
                conn.transport._wake_listener()  # bound before any writer starts
                listening.set()
                deadline = time.monotonic() + DEADLINE_SECONDS
                while len(received) < total and time.monotonic() < deadline:
                    try:
                        conn.drain_events(timeout=deadline - time.monotonic())
                    except TimeoutError:
                        break
        except BaseException as exc:
            errors.append(exc)
        finally:
            listening.set()
            done.set()

    def writer(w: int) -> None:
        try:
            with _connection(tmp_path) as conn:
                producer = conn.Producer(serializer="json")
                go.wait(60)
                for i in range(PER_WRITER):
                    producer.publish({"w": w, "i": i}, exchange="", routing_key=queue.name)
        except BaseException as exc:
            errors.append(exc)

    with caplog.at_level(logging.WARNING, logger="jobs.broker"):
        reading = threading.Thread(target=reader)
        reading.start()
        assert listening.wait(60)
        writers = [threading.Thread(target=writer, args=(w,)) for w in range(WRITERS)]
        for t in writers:
            t.start()
        started = time.monotonic()
        go.wait(60)
        for t in writers:
            t.join(DEADLINE_SECONDS)
        written = time.monotonic() - started
        assert done.wait(DEADLINE_SECONDS)
        reading.join(60)
        elapsed = time.monotonic() - started
    print(
        f"\n{total:,} messages by {WRITERS} writers: written in {written:.2f} s, "
        f"all read in {elapsed:.2f} s; reader woken {woken['by datagram']:,} times by a "
        f"datagram, {woken['by timeout']:,} by its poll"
    )
    assert not errors, errors
    counts = Counter(received)
    assert [m for m, n in counts.items() if n > 1] == [], "duplicated"
    expected = {(w, i) for w in range(WRITERS) for i in range(PER_WRITER)}
    assert len(expected - set(counts)) == 0, "lost"
    assert len(received) == total
    assert [r.getMessage() for r in caplog.records] == []  # no undecodable file, no error
    assert not (tmp_path / "dead-letter").exists()
    assert list((tmp_path / "queue").iterdir()) == []  # no temporary file left either
    assert list((tmp_path / "claimed").iterdir()) == []
    assert woken["by datagram"] > 0 and woken["by timeout"] == 0
