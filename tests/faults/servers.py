"""PostgreSQL and Redis servers of the fault suite's own, to restart at will.

``scripts/test-faults.sh`` chooses two free ports and a directory and points
``DATABASE_URL``/``CELERY_BROKER_URL`` at them before pytest starts (Django reads its
settings once); ``tests/faults/conftest.py`` starts these servers before the test database
is created. The machine's shared servers are never touched.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

PG_BIN = Path("/usr/lib/postgresql/15/bin")
START_TIMEOUT = 60.0


def _as_postgres(command: list[str]) -> list[str]:
    """initdb and postgres refuse to run as root: run them as the ``postgres`` user then."""
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *command]
    return command


def _port_open(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _wait_for(check: object, what: str, timeout: float = START_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not come up within {timeout:.0f} s")
        time.sleep(0.1)


class PostgresServer:
    """A throw-away cluster (initdb, trust auth on 127.0.0.1) on its own port."""

    def __init__(self, root: Path, port: int) -> None:
        self.root = root / "pg"
        self.data = self.root / "data"
        self.sockets = self.root / "sockets"
        self.log = self.root / "postgres.log"
        self.port = port

    def _run(self, *args: str, timeout: float = 120) -> None:
        subprocess.run(_as_postgres(list(args)), check=True, timeout=timeout, capture_output=True)

    def init(self) -> None:
        self.sockets.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            shutil.chown(self.root.parent, "postgres")
            for path in (self.root, self.sockets):
                shutil.chown(path, "postgres", "postgres")
        self._run(
            str(PG_BIN / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust",
            "-E", "UTF8", "--no-sync",
        )  # fmt: skip

    def start(self) -> None:
        options = (
            f"-p {self.port} -k {self.sockets} -c listen_addresses=127.0.0.1 "
            "-c max_connections=200 -c fsync=off -c full_page_writes=off"
        )
        self._run(
            str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", options,
            "-w", "-t", str(int(START_TIMEOUT)), "start",
        )  # fmt: skip

    def stop(self, mode: str = "fast") -> None:
        """``fast``: connections are ended, the server shuts down cleanly; ``immediate``: it
        quits at once and recovers from its WAL at the next start (as after a crash)."""
        self._run(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")

    def restart(self, mode: str = "fast", down_seconds: float = 0) -> None:
        """Stop, stay down ``down_seconds`` (the outage: a duration chosen, not a wait for a
        state), start."""
        self.stop(mode)
        time.sleep(down_seconds)
        self.start()

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


class RedisServer:
    """``redis-server`` without persistence: a restart loses every queued message."""

    def __init__(self, root: Path, port: int) -> None:
        self.port = port
        self.log = root / "redis.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        log = self.log.open("ab")
        self.process = subprocess.Popen(
            [
                "redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--daemonize", "no",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        _wait_for(lambda: _port_open(self.port), f"redis-server on port {self.port}")

    def kill(self) -> None:
        """SIGKILL, as a crash: what it held in memory (queued messages) is gone."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(30)
        _wait_for(lambda: not _port_open(self.port), "redis-server to go away", 30)

    def restart(self) -> None:
        self.kill()
        self.start()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(30)
