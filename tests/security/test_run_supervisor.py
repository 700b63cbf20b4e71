"""`make run` survives a worker crash (docs/security.md §5); the containers run as an
unprivileged user (§6).

Starts the real launcher (``scripts/run.sh``) on a free port with its own data dir, on the
embedded defaults (SQLite, file-system broker: nothing shared with other tests), then
``kill -9``s the worker in the middle of a query. The web server keeps answering, the
supervisor starts a new worker (a new identity), the lost job ends ``WORKER_LOST`` and the
next query runs on the new worker. Ctrl-C still stops everything.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import sqlite3
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.waiting import poll, wait_until

ROOT = Path(__file__).resolve().parents[2]

SLOW_SQL = "SELECT count(*) AS n FROM range(0, 100000000) AS a CROSS JOIN range(0, 100000) AS b"
STARTED = re.compile(r"\[run\.sh [\d:]+\] worker started \(pid (\d+)\)")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def answered(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    """``wait_until`` over HTTP: a server not answering yet is "not yet"."""
    return wait_until(condition, timeout, 0.25, what, ignoring=(requests.RequestException,))


class Launcher:
    """scripts/run.sh in its own process group, as a terminal would run it."""

    def __init__(self, tmp_path: Path) -> None:
        self.port = _free_port()
        self.hs2_port = _free_port()
        self.flight_sql_port = _free_port()
        self.data_dir = tmp_path / "data"
        self.log_path = tmp_path / "run.log"
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "TESSERA_STORAGE_ROOTS"}
            and not k.startswith(("PYTEST", "DJANGO_SETTINGS", "TESSERA_"))
        }
        env.update(
            PORT=str(self.port),
            TESSERA_HS2_PORT=str(self.hs2_port),
            TESSERA_FLIGHT_SQL_PORT=str(self.flight_sql_port),
            TESSERA_DATA_DIR=str(self.data_dir),
            TESSERA_WORKER_HEARTBEAT_SECONDS="1",
            # Long: only the new worker's identity check can reap the lost job quickly.
            TESSERA_WORKER_TIMEOUT_SECONDS="120",
            SPARK_MASTER="local[2]",
        )
        self._log = self.log_path.open("w")
        self.process = subprocess.Popen(
            [str(ROOT / "scripts" / "run.sh")],
            cwd=ROOT,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.base = f"http://127.0.0.1:{self.port}/api/v1"
        self.auth: dict[str, str] = {}

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def worker_pids(self) -> list[int]:
        return [int(pid) for pid in STARTED.findall(self.log())]

    def get(self, path: str, timeout: float = 10) -> requests.Response:
        return requests.get(f"{self.base}{path}", headers=self.auth, timeout=timeout)

    def health(self) -> dict[str, Any] | None:
        assert self.process.poll() is None, self.log()[-3000:]
        response = self.get("/health", timeout=5)
        return response.json() if response.status_code == 200 else None

    def login(self) -> None:
        token = requests.post(
            f"{self.base}/auth/token", json={"username": "admin", "password": "admin"}, timeout=10
        ).json()["token"]
        self.auth = {"Authorization": f"Token {token}"}

    def submit(self, session: str, sql: str) -> str:
        response = requests.post(
            f"{self.base}/sessions/{session}/statements",
            json={"sql": sql},
            headers=self.auth,
            timeout=30,
        )
        assert response.status_code == 201, response.text
        return str(response.json()["id"])

    def job(self, job_id: str) -> dict[str, Any]:
        body: dict[str, Any] = self.get(f"/jobs/{job_id}").json()
        return body

    def wait_job(self, job_id: str, statuses: set[str], timeout: float) -> dict[str, Any]:
        return dict(
            answered(
                lambda: (job := self.job(job_id))["status"] in statuses and job,
                timeout,
                f"job {job_id} to be {statuses}",
            )
        )

    def claimed_by(self, job_id: str) -> str:
        """The worker identity recorded on the job (the launcher's SQLite database)."""
        with sqlite3.connect(self.data_dir / "tessera.sqlite3") as db:
            row = db.execute(
                "SELECT worker FROM jobs_job WHERE id = ?", (job_id.replace("-", ""),)
            ).fetchone()
        return str(row[0]) if row else ""

    def ctrl_c(self) -> str:
        """SIGINT to the group, as a terminal does; "" if everything stopped, else what was
        left running and the end of the log, for the failure to name."""
        os.killpg(self.process.pid, signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=60)
        left = ""
        if not poll(lambda: not _group_alive(self.process.pid), 40, 0.2):
            left = subprocess.run(
                ["ps", "-o", "pid,stat,etime,args", "-g", str(self.process.pid)],
                capture_output=True,
                text=True,
            ).stdout
            left = f"still running:\n{left}\nlog:\n{self.log()[-4000:]}"
            os.killpg(self.process.pid, signal.SIGKILL)
        self._log.close()
        return left


@pytest.fixture
def launcher(tmp_path: Path) -> Iterator[Launcher]:
    started = Launcher(tmp_path)
    try:
        yield started
    except BaseException:
        print(started.log()[-5000:])
        raise
    finally:
        if _group_alive(started.process.pid):
            started.ctrl_c()


@pytest.mark.spark
@pytest.mark.slow
def test_a_killed_worker_is_restarted_and_the_web_keeps_serving(launcher: Launcher) -> None:
    answered(lambda: (h := launcher.health()) and h["workers"] == 1, 180, "the web and a worker")
    launcher.login()
    session = requests.post(
        f"{launcher.base}/sessions", json={}, headers=launcher.auth, timeout=10
    ).json()["id"]
    first = launcher.wait_job(launcher.submit(session, "SELECT 1 AS one"), {"FINISHED"}, 180)
    [first_pid] = launcher.worker_pids()
    first_identity = launcher.claimed_by(first["id"])
    assert first_identity.startswith("worker1@") and f"/{first_pid}/" in first_identity

    slow = launcher.submit(session, SLOW_SQL)
    launcher.wait_job(slow, {"RUNNING"}, 60)
    os.kill(first_pid, signal.SIGKILL)

    # The web server keeps answering while the worker is down and until a new one runs.
    answers: list[int] = []

    def restarted() -> list[int] | None:
        answers.append(launcher.get("/catalogs").status_code)
        assert answers[-1] == 200
        pids = launcher.worker_pids()
        return pids if len(pids) == 2 else None

    pids = wait_until(restarted, 60, 0.1, "a new worker")
    assert len(answers) >= 5
    assert launcher.process.poll() is None
    assert pids[1] != first_pid
    log = launcher.log()
    assert "worker exited (killed by SIGKILL)" in log
    assert "starting it again in 1 s" in log

    # Judged by identity, not by the 120 s worker timeout: reaped well within 60 s (a
    # deadline for the wait).
    lost = launcher.wait_job(slow, {"FAILED", "CANCELED", "FINISHED"}, 60)
    assert lost["status"] == "FAILED" and lost["error"]["code"] == "WORKER_LOST", lost
    assert first_identity in lost["error"]["message"]

    answered(lambda: (h := launcher.health()) and h["workers"] == 1, 60, "one live worker")
    after = launcher.wait_job(launcher.submit(session, "SELECT 2 AS two"), {"FINISHED"}, 180)
    second_identity = launcher.claimed_by(after["id"])
    assert second_identity != first_identity
    assert f"/{pids[1]}/" in second_identity

    left = launcher.ctrl_c()
    assert not left, f"Ctrl-C left processes of scripts/run.sh running: {left}"
    assert "worker stopped" in launcher.log()


# --- the production shape: containers as an unprivileged user ---------------------------------


def _compose_config() -> dict[str, Any]:
    """``docker compose config`` (the resolved file), or skip where no client is installed."""
    import shutil

    import yaml

    docker = shutil.which("docker")
    if (
        docker
        and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0
    ):
        command = [docker, "compose"]
    elif shutil.which("docker-compose"):
        command = ["docker-compose"]
    else:
        pytest.skip(
            "neither `docker compose` nor `docker-compose` is installed (.ci/run installs it)"
        )
    # The production shape has no default secret key (docker-compose.yml requires one).
    result = subprocess.run(
        [*command, "-f", "docker-compose.yml", "config"],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SECRET_KEY": "a-throwaway-key-for-the-config-check"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    config: dict[str, Any] = yaml.safe_load(result.stdout)
    return config


def test_web_and_workers_run_as_an_unprivileged_user() -> None:
    services = _compose_config()["services"]
    for name in ("web", "worker", "spark-worker", "hiveserver2"):
        service = services[name]
        uid = str(service.get("user", "")).split(":")[0]
        assert uid not in {"", "0", "root"}, (name, service.get("user"))
        assert service.get("cap_drop") == ["ALL"], name
        assert "no-new-privileges:true" in service.get("security_opt", []), name
    for name in ("web", "worker"):
        assert services[name].get("restart") == "unless-stopped", name
    # The image itself does not default to root either.
    dockerfile = (ROOT / "Dockerfile").read_text()
    users = [line.split()[1] for line in dockerfile.splitlines() if line.startswith("USER ")]
    assert users and users[-1].split(":")[0] not in {"root", "0"}, users


def test_the_image_holds_every_room_the_project_installs() -> None:
    # A room left out of the image fails only there (no test starts the image): the web
    # image once lacked sessions, results, engine and both protocol endpoints.
    import tomllib

    from django.conf import settings

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    included = project["tool"]["setuptools"]["packages"]["find"]["include"]
    rooms = {pattern.rstrip("*") for pattern in included} - {"frontend"}
    dockerfile = (ROOT / "Dockerfile").read_text()
    copied = {line.split()[1] for line in dockerfile.splitlines() if line.startswith("COPY ")}
    assert rooms <= copied, sorted(rooms - copied)
    apps = {app.split(".")[0] for app in settings.INSTALLED_APPS}
    ours = {app for app in apps if (ROOT / app).is_dir()}
    assert ours <= rooms, sorted(ours - rooms)
