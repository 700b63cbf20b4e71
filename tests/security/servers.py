"""A real gunicorn for the tests of the HTTP edges and of planning under load.

Started the way ``scripts/run.sh`` starts it (``-c python:webapp.gunicorn_conf``, 2 worker
processes of 4 threads), on a free port, with its own data dir, in its own process group;
its access log records the worker process of every request (``%(p)s``). Stopped by the id
of the process it started.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import requests

from core.limits import MAX_TOKENS, StatementLimits, check_statement
from tests.waiting import poll

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / ".venv" / "bin"
START_TIMEOUT = 60.0
ACCESS_FORMAT = '%(p)s "%(r)s" %(s)s %(L)s'

# What the test runner's own environment must not hand the server (it picks its own).
_NOT_INHERITED = ("DATABASE_URL", "CELERY_BROKER_URL", "TESSERA_STORAGE_ROOTS", "TESSERA_DATA_DIR")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_env(data_dir: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a server on ``data_dir``: the embedded default (SQLite, file-system
    broker) unless ``extra`` names DATABASE_URL / CELERY_BROKER_URL."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in _NOT_INHERITED and not k.startswith(("PYTEST", "DJANGO_SETTINGS"))
    }
    env.update(TESSERA_DATA_DIR=str(data_dir), TESSERA_LOG_LEVEL="WARNING")
    env.update(extra or {})
    return env


def manage(env: Mapping[str, str], *args: str, stdin: str | None = None) -> str:
    """Run ``manage.py`` with the server's environment; its output."""
    result = subprocess.run(
        [str(BIN / "python"), "manage.py", *args],
        cwd=ROOT,
        env=dict(env),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


class Gunicorn:
    """``gunicorn webapp.wsgi -c python:webapp.gunicorn_conf --workers 2 --threads 4``."""

    def __init__(self, env: Mapping[str, str], log_dir: Path, workers: int = 2) -> None:
        self.env = dict(env)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.access_log = log_dir / "access.log"
        self.error_log = log_dir / "error.log"
        self.workers = workers
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        command = [
            str(BIN / "gunicorn"),
            "webapp.wsgi",
            "-c",
            "python:webapp.gunicorn_conf",
            "--bind",
            f"127.0.0.1:{self.port}",
            "--workers",
            str(self.workers),
            "--threads",
            "4",
            "--graceful-timeout",
            "5",
            "--access-logfile",
            str(self.access_log),
            "--access-logformat",
            ACCESS_FORMAT,
            "--error-logfile",
            str(self.error_log),
        ]
        output = (self.error_log.parent / "server.log").open("ab")
        self.process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=self.env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        output.close()
        process = self.process

        def answering() -> bool:
            assert process.poll() is None, self.log_tail()
            requests.get(f"{self.url}/api/v1/health", timeout=5)
            return True

        if not poll(answering, START_TIMEOUT, 0.2, ignoring=(requests.RequestException,)):
            raise AssertionError(
                f"gunicorn did not answer within {START_TIMEOUT} s\n{self.log_tail()}"
            )

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)  # the group this test started
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(30)

    def worker_pids(self) -> set[str]:
        """The worker processes that served at least one request (from the access log)."""
        return {line.split(" ", 1)[0] for line in self.access_lines()}

    def access_lines(self) -> list[str]:
        try:
            return self.access_log.read_text().splitlines()
        except FileNotFoundError:
            return []

    def log_tail(self, lines: int = 60) -> str:
        try:
            text = self.error_log.read_text(errors="replace")
        except FileNotFoundError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def raw(self, data: bytes, timeout: float = 10) -> bytes:
        """Send raw bytes on a new connection; everything the server answers."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as sock:
            # It may answer and close before it has read everything sent.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                sock.sendall(data)
            chunks = []
            while True:
                try:
                    chunk = sock.recv(65536)
                except (ConnectionResetError, TimeoutError):
                    break
                if not chunk:
                    break
                chunks.append(chunk)
        return b"".join(chunks)


# --- one user's statements against another user's reads -------------------------------------


@dataclass
class Attack:
    """What ``attack`` measured: the victim's reads and the attacker's answers."""

    victim: list[tuple[float, int]] = field(default_factory=list)  # (seconds, status)
    attacker: list[tuple[float, int, str]] = field(default_factory=list)  # (seconds, status, code)

    @property
    def victim_max(self) -> float:
        return max(seconds for seconds, _ in self.victim)

    def victim_percentile(self, fraction: float) -> float:
        ordered = sorted(seconds for seconds, _ in self.victim)
        return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def reads_alone(
    base_url: str, token: str, seconds: float, poll_seconds: float = 0.05
) -> list[float]:
    """The victim's ``GET /api/v1/catalogs`` latencies with nobody attacking (the baseline
    of the machine as it is loaded right now)."""
    latencies = []
    end = time.monotonic() + seconds
    with requests.Session() as http:
        http.headers["Authorization"] = f"Token {token}"
        while time.monotonic() < end:
            began = time.monotonic()
            http.get(f"{base_url}/api/v1/catalogs", timeout=30).raise_for_status()
            latencies.append(time.monotonic() - began)
            time.sleep(poll_seconds)
    return latencies


def attack(
    base_url: str,
    attacker_token: str,
    victim_token: str,
    session_id: str,
    sql: str,
    *,
    concurrency: int = 8,
    poll_seconds: float = 0.05,
    settle_seconds: float = 0.5,
    timeout: float = 300,
) -> Attack:
    """Fire ``concurrency`` copies of ``sql`` at once from the attacker's session while the
    victim reads ``GET /api/v1/catalogs`` in a loop (from before the first statement until
    ``settle_seconds`` after the last answer). Each attacker answer is recorded with its
    status and error code (for a 201, the job's status or its error code)."""
    result = Attack()
    body = json.dumps({"sql": sql}).encode()
    done = threading.Event()
    start = threading.Barrier(concurrency + 1)

    def victim() -> None:
        with requests.Session() as http:
            http.headers["Authorization"] = f"Token {victim_token}"
            while not done.is_set():
                began = time.monotonic()
                try:
                    status = http.get(f"{base_url}/api/v1/catalogs", timeout=30).status_code
                except requests.RequestException:
                    status = 0
                result.victim.append((time.monotonic() - began, status))
                time.sleep(poll_seconds)

    def attacker() -> None:
        headers = {"Authorization": f"Token {attacker_token}", "Content-Type": "application/json"}
        url = f"{base_url}/api/v1/sessions/{session_id}/statements"
        start.wait()
        began = time.monotonic()
        try:
            response = requests.post(url, data=body, headers=headers, timeout=timeout)
            answer = response.json()
            code = (answer.get("error") or {}).get("code") or answer.get("status", "")
            if response.status_code == 429:
                code += f" retry-after={response.headers.get('Retry-After')}"
            status = response.status_code
        except (requests.RequestException, ValueError) as error:
            status, code = 0, type(error).__name__
        result.attacker.append((time.monotonic() - began, status, str(code)))

    reader = threading.Thread(target=victim, name="victim")
    reader.start()
    time.sleep(0.3)  # the victim's reads before the attack are in the figures too
    threads = [threading.Thread(target=attacker, name=f"attacker-{i}") for i in range(concurrency)]
    for thread in threads:
        thread.start()
    start.wait()
    for thread in threads:
        thread.join()
    time.sleep(settle_seconds)
    done.set()
    reader.join()
    return result


# --- the statements of the reproduction ------------------------------------------------

TWO_MB = 2 * 1024 * 1024


def two_megabyte_statement() -> str:
    """What the issue sent: a query of about 2 MB (here a long IN list)."""
    head = "SELECT * FROM missing_table WHERE id IN ("
    values = ",".join(str(i) for i in range(400_000))
    return (head + values)[: TWO_MB - 1] + ")"


def heavy_statement(tokens: int = MAX_TOKENS - 10) -> str:
    """Just under the token limit, and as costly to plan per token as anything measured
    (subqueries in a long AND chain): seconds of planning, then NOT_FOUND (it reads a
    table that does not exist), so nothing ever runs."""
    head = "SELECT * FROM missing_table WHERE "  # 5 tokens
    part = "x IN (SELECT y FROM missing_{})"  # 8 tokens, and AND between parts
    count = (tokens - 5 + 1) // 9
    sql = head + " AND ".join(part.format(i % 50) for i in range(count))
    huge = StatementLimits(max_chars=10**9, max_tokens=10**9, max_depth=10**6)
    assert tokens - 9 < check_statement(sql, huge).tokens <= tokens
    return sql
