"""The embedded broker, polled or woken: ``python bench/broker_wakeup.py``.

Kombu's file-system transport (the embedded default's broker) finds a message on its next
poll; ``jobs.broker`` wakes the consumer through a datagram socket (``jobs.wakeup``). In one
run, for kombu's transport at its default 1 s poll, at a 10 ms poll (the tuning a user could
try instead: ``polling_interval``), and for ``jobs.broker``: a consumer drains a queue in a
thread as Celery's worker loop does (``drain_events(timeout=2)``); the bench measures the
process's CPU while idle (``--idle`` seconds), then the delay from publish to delivery for
``--messages`` messages sent at irregular intervals. Folders are throw-away temp dirs. It
reports; it does not assert.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kombu.connection import Connection  # noqa: E402
from kombu.entity import Exchange, Queue  # noqa: E402


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--idle", type=float, default=10.0, help="seconds of idle CPU measured")
    parser.add_argument("--messages", type=int, default=30)
    return parser.parse_args()


def options(folder: Path, interval: float, wake: bool) -> dict[str, Any]:
    for name in ("queue", "processed", "control", "wake"):
        (folder / name).mkdir(parents=True, exist_ok=True)
    found: dict[str, Any] = {
        "data_folder_in": str(folder / "queue"),
        "data_folder_out": str(folder / "queue"),
        "processed_folder": str(folder / "processed"),
        "control_folder": str(folder / "control"),
        "store_processed": False,
        "polling_interval": interval,
    }
    if wake:
        found["wake_folder"] = str(folder / "wake")
    return found


def connect(transport: str, opts: dict[str, Any]) -> Connection:
    return Connection("filesystem://", transport=transport, transport_options=opts)  # type: ignore[no-untyped-call]


def measure(
    transport: str, interval: float, wake: bool, args: argparse.Namespace
) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="tessera-bench-broker-"))
    name = f"bench-{time.time_ns()}"  # kombu keeps declared exchanges process-wide
    queue = Queue(name, Exchange(name, type="direct"), routing_key=name)  # type: ignore[no-untyped-call]
    delays: list[float] = []
    stop = threading.Event()
    opts = options(folder, interval, wake)
    try:
        with (
            connect(transport, opts) as consumer,
            connect(transport, opts) as producer,
            consumer.Consumer(
                queue,
                callbacks=[lambda body, _m: delays.append(time.perf_counter() - body["sent"])],
            ),
        ):

            def loop() -> None:  # Celery's synloop: drain_events(timeout=2.0) over and over
                while not stop.is_set():
                    with contextlib.suppress(TimeoutError):
                        consumer.drain_events(timeout=2.0)

            thread = threading.Thread(target=loop, daemon=True)
            thread.start()
            time.sleep(0.5)
            before, began = os.times(), time.monotonic()
            time.sleep(args.idle)
            after, ended = os.times(), time.monotonic()
            cpu = (after.user - before.user + after.system - before.system) / (ended - began)
            publish = producer.Producer().publish
            for i in range(args.messages):
                publish(
                    {"sent": time.perf_counter()},
                    exchange=queue.exchange,
                    routing_key=name,
                    declare=[queue],
                )
                time.sleep(0.05 + (i * 37 % 100) / 1000)  # irregular, never on the poll's beat
            deadline = time.monotonic() + interval + 3
            while len(delays) < args.messages and time.monotonic() < deadline:
                time.sleep(0.05)
            stop.set()
            thread.join(5)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    ms = sorted(d * 1000 for d in delays)
    return {
        "cpu": cpu * 100,
        "n": len(ms),
        "p50": statistics.median(ms),
        "p95": ms[int(0.95 * (len(ms) - 1))],
        "max": ms[-1],
    }


def main() -> None:
    args = parse_args()
    rows = [
        ("kombu file-system transport, poll 1 s (before)", "filesystem", 1.0, False),
        ("kombu file-system transport, poll 10 ms", "filesystem", 0.01, False),
        ("jobs.broker: woken by a socket, poll 1 s", "jobs.broker:Transport", 1.0, True),
    ]
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, load {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n"
    )
    print("| transport | idle CPU (% of a core) | n | delivery p50 ms | p95 ms | max ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, transport, interval, wake in rows:
        r = measure(transport, interval, wake, args)
        print(
            f"| {label} | {r['cpu']:.1f} | {r['n']} | {r['p50']:.1f} | {r['p95']:.1f} | "
            f"{r['max']:.1f} |"
        )


if __name__ == "__main__":
    main()
