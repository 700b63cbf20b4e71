"""A handshake for tests of a race between two transactions on PostgreSQL.

The first transaction, holding its insert uncommitted, waits until PostgreSQL shows the
second one waiting for a lock (``pg_locks``, not granted): only then may it commit. So the
second runs into the first's uncommitted work however slow the machine is, and a test that
asserts ``waited`` fails when that interleaving did not happen (instead of passing because a
sleep was too short).
"""

from __future__ import annotations

import threading
import time

from django.db import connection


class LockWait:
    """The second transaction's thread calls ``second_starts`` before it begins (it names its
    database connection) and ``second_ended`` when it is done; the first, inside its open
    transaction, calls ``hold_until_the_second_waits``. That returns once the second's
    backend waits for a lock (``waited`` becomes True), or once the second ended without
    ever waiting (there was no lock to wait for: the test's outcome shows what followed), or
    after ``timeout`` seconds."""

    def __init__(self, timeout: float = 30) -> None:
        self.timeout = timeout
        self.pid: int | None = None
        self.started = threading.Event()
        self.ended = threading.Event()
        self.waited = False

    def second_starts(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            self.pid = int(cursor.fetchone()[0])
        self.started.set()

    def second_ended(self) -> None:
        self.ended.set()

    def hold_until_the_second_waits(self) -> None:
        deadline = time.monotonic() + self.timeout
        if not self.started.wait(self.timeout):
            return
        while not self.ended.is_set() and time.monotonic() < deadline:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE pid = %s AND NOT granted)",
                    [self.pid],
                )
                if cursor.fetchone()[0]:
                    self.waited = True
                    return
            time.sleep(0.005)
