"""The embedded broker: kombu's file-system transport, woken instead of polled.

Kombu's file-system transport (the embedded default: one folder shared by the web and the
worker) has no way to wait for a message: the worker lists the folder, finds nothing and
sleeps ``polling_interval`` (1 s), so every statement waited up to 1 s before a worker saw it
(docs/benchmarks.md, "Interactive latency"). This transport is the same transport, with
two changes:

- after a message file is written and closed, the sender sends a one-byte datagram to the
  sockets of the consumers (``jobs.wakeup``, folder ``wake_folder`` of the transport
  options);
- a consumer waits on its own socket instead of sleeping, so it reads the folder again as
  soon as a message arrives; it still reads it every ``polling_interval`` without one.

Durability is the file-system transport's: the message is a file before anyone is woken;
a wake-up that is lost (no consumer listening yet, a full socket buffer) only delays the
message to the next poll. Selected by ``CELERY_BROKER_TRANSPORT`` in ``webapp.settings``
when the broker URL is ``filesystem://``. Imports neither Django nor pyspark.
"""

from __future__ import annotations

from pathlib import Path
from queue import Empty
from time import monotonic, sleep
from typing import Any

from kombu.transport import filesystem

from jobs import wakeup

WAKE_FOLDER_OPTION = "wake_folder"


def wake_folder(transport_options: dict[str, Any]) -> Path | None:
    folder = transport_options.get(WAKE_FOLDER_OPTION)
    return Path(folder) if folder else None


class Channel(filesystem.Channel):
    def _put(self, queue: str, payload: Any, **kwargs: Any) -> None:  # type: ignore[override]
        super()._put(queue, payload, **kwargs)  # type: ignore[no-untyped-call]
        folder = wake_folder(self.transport_options)
        if folder is not None:
            wakeup.send_all(folder, b"q")


class Transport(filesystem.Transport):
    """``filesystem.Transport`` whose consumers wait on a wake-up socket."""

    Channel = Channel
    driver_name = "filesystem"
    _listener: wakeup.Listener | None = None

    def _wake_listener(self) -> wakeup.Listener | None:
        if self._listener is None:
            client: Any = self.client
            folder = wake_folder(client.transport_options)
            if folder is None:
                return None
            self._listener = wakeup.Listener(folder)
        return self._listener

    def drain_events(  # type: ignore[override]
        self, connection: Any, timeout: float | None = None
    ) -> None:
        """kombu's ``virtual.Transport.drain_events``, waiting on the wake-up socket where
        it would sleep."""
        time_start = monotonic()
        listener = self._wake_listener()  # bound before the first look: no wake-up is missed
        cycle: Any = self.cycle
        get = cycle.get
        polling_interval = self.polling_interval
        if timeout and polling_interval and polling_interval > timeout:
            polling_interval = timeout
        while True:
            try:
                get(self._deliver, timeout=timeout)
            except Empty:
                if timeout is not None and monotonic() - time_start >= timeout:
                    raise TimeoutError() from None
                if listener is not None:
                    left = None if timeout is None else time_start + timeout - monotonic()
                    if polling_interval is not None:
                        left = polling_interval if left is None else min(left, polling_interval)
                    listener.wait(None if left is None else max(0.0, left))
                elif polling_interval is not None:
                    sleep(polling_interval)
            else:
                break

    def close_connection(self, connection: Any) -> None:
        super().close_connection(connection)  # type: ignore[no-untyped-call]
        if self._listener is not None:
            self._listener.close()
            self._listener = None
