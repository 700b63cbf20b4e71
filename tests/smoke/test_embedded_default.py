"""`make run` on the embedded default: SQLite + file-system broker, no server needed.

Starts the real launcher in its own process group, exactly as a newcomer would (minus the
terminal), waits for readiness and for the worker's heartbeat, uses the API, then sends
Ctrl-C (SIGINT to the group) and checks that everything stopped.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.waiting import poll

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


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


def _ended(base: str, auth: dict[str, str], job: dict[str, Any]) -> dict[str, Any] | None:
    """The job once it left CREATED and RUNNING (None while it is in one of them)."""
    if job["status"] not in ("CREATED", "RUNNING"):
        return job
    current: dict[str, Any] = requests.get(
        f"{base}/jobs/{job['id']}", headers=auth, timeout=10
    ).json()
    return None if current["status"] in ("CREATED", "RUNNING") else current


def test_make_run_serves_health_and_the_demo_catalog_then_stops_on_ctrl_c(tmp_path: Path) -> None:
    port = _free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "TESSERA_STORAGE_ROOTS"}
        and not k.startswith(("PYTEST", "DJANGO_SETTINGS"))
    }
    env.update(PORT=str(port), TESSERA_DATA_DIR=str(tmp_path / "data"))
    log = (tmp_path / "run.log").open("w")
    proc = subprocess.Popen(
        ["make", "run"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}/api/v1"
    try:
        health: dict[str, object] = {}

        def ready() -> bool:
            assert proc.poll() is None, (tmp_path / "run.log").read_text()[-3000:]
            response = requests.get(f"{base}/health", timeout=10)
            health.clear()
            health.update(response.json())
            return response.status_code == 200 and health.get("workers") == 1

        # Not listening yet, or slow while starting: "not yet".
        poll(ready, 120, 0.5, ignoring=(requests.RequestException,))
        assert health == {"status": "ok", "database": "ok", "broker": "ok", "workers": 1}, (
            health,
            (tmp_path / "run.log").read_text()[-3000:],
        )
        # Embedded defaults: everything under the data dir.
        assert (tmp_path / "data" / "tessera.sqlite3").exists()
        assert (tmp_path / "data" / "broker" / "control").is_dir()
        assert not (ROOT / "control").exists(), "the broker wrote into the checkout"

        token = requests.post(
            f"{base}/auth/token", json={"username": "admin", "password": "admin"}, timeout=5
        ).json()["token"]
        orders = requests.get(
            f"{base}/catalogs/demo/databases/sales/tables/orders",
            headers={"Authorization": f"Token {token}"},
            timeout=5,
        ).json()
        assert [c["name"] for c in orders["resolved_schema"]["columns"]][:2] == [
            "id",
            "customer_id",
        ]
        assert orders["resolved_schema"]["primary_key"]["columns"] == ["id"]

        # A query end to end on the embedded default: planner, file-system broker, the
        # worker's Spark, Arrow results in the data dir.
        auth = {"Authorization": f"Token {token}"}
        session = requests.post(
            f"{base}/sessions", json={"current_catalog": "demo"}, headers=auth, timeout=10
        ).json()
        assert session["current_database"] == "sales"
        sql = (
            "SELECT c.country, count(*) AS orders, sum(o.total) AS revenue "
            "FROM orders o JOIN customers c ON c.id = o.customer_id "
            "GROUP BY c.country ORDER BY c.country"
        )
        job = requests.post(
            f"{base}/sessions/{session['id']}/statements",
            json={"sql": sql, "wait": 30},
            headers=auth,
            timeout=60,
        ).json()
        # The worker's first Spark session takes a while.
        job = poll(partial(_ended, base, auth, job), 90, 0.5) or job
        assert job["status"] == "FINISHED", (job, (tmp_path / "run.log").read_text()[-3000:])
        page = requests.get(f"{base}/jobs/{job['id']}/result", headers=auth, timeout=10).json()
        assert [c["name"] for c in page["columns"]] == ["country", "orders", "revenue"]
        assert sum(row[1] for row in page["rows"]) == 5000  # every generated order
        assert {row[0] for row in page["rows"]} <= {"BR", "DE", "FR", "JP", "NL", "US"}

        # The issue-10 escapes, tried by an ordinary user on the embedded default too.
        _escapes_are_refused(base, auth, tmp_path / "data")

        # The browser UI: index.html at / and at client-side routes, its assets served.
        home = requests.get(f"http://127.0.0.1:{port}/", timeout=10)
        assert home.status_code == 200 and "text/html" in home.headers["Content-Type"]
        assert "csrftoken" in home.cookies
        scripts = re.findall(r'src="(/static/ui/assets/[^"]+\.js)"', home.text)
        assert scripts, home.text
        asset = requests.get(f"http://127.0.0.1:{port}{scripts[0]}", timeout=10)
        assert asset.status_code == 200 and len(asset.content) > 10_000
        deep = requests.get(f"http://127.0.0.1:{port}/catalog/demo/sales", timeout=10)
        assert deep.status_code == 200 and deep.text == home.text
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=30)
        finally:
            log.close()
    leftover = not poll(lambda: not _group_alive(proc.pid), 15, 0.2)
    if leftover:
        os.killpg(proc.pid, signal.SIGKILL)
    assert not leftover, "Ctrl-C left processes of `make run` running"


def _escapes_are_refused(base: str, admin: dict[str, str], data_dir: Path) -> None:
    """A signed-in user without admin rights tries the issue's attacks on SQLite and the
    file-system broker: each is refused and nothing leaks (the full suites run on
    PostgreSQL + Redis, tests/security/)."""
    created = requests.post(
        f"{base}/users",
        json={"username": "mallory", "password": "a-long-enough-password"},
        headers=admin,
        timeout=10,
    )
    assert created.status_code == 201, created.text
    token = requests.post(
        f"{base}/auth/token",
        json={"username": "mallory", "password": "a-long-enough-password"},
        timeout=10,
    ).json()["token"]
    auth = {"Authorization": f"Token {token}"}
    session = requests.post(
        f"{base}/sessions", json={"current_catalog": "demo"}, headers=auth, timeout=10
    ).json()

    def run(sql: str) -> dict[str, object]:
        job: dict[str, object] = requests.post(
            f"{base}/sessions/{session['id']}/statements",
            json={"sql": sql, "wait": 30},
            headers=auth,
            timeout=60,
        ).json()
        ended: dict[str, object] | None = poll(partial(_ended, base, auth, job), 60, 0.3)
        return ended or job

    secret = (data_dir / "secret_key").read_text().strip()
    exit_call = "java_method('java.lang.System', 'exit', 0)"
    getenv_call = "java_method('java.lang.System', 'getenv', 'HOME')"
    refused = {
        # A `--` comment ending in a backslash: a string to the planner, code to Spark.
        "-- \\\nSELECT '\nSELECT * FROM text.`/etc/passwd` -- '": "FORBIDDEN_SQL",
        f"SELECT * FROM orders WHERE 1 = 0 -- \\\n OR {exit_call}": "FORBIDDEN_SQL",
        f"SELECT /*+ REPARTITION({getenv_call}) */ 1 AS x": "FORBIDDEN_SQL",
        "SELECT * FROM range(0, 1, 1, 2000000000)": "FORBIDDEN_SQL",
        "SELECT from_xml('<r/>', 'r INT', map('rowValidationXSDPath', '/x'))": "FORBIDDEN_SQL",
        "INSERT INTO orders SELECT * FROM orders": "PERMISSION_DENIED",
        "SET result.max_rows = 5000000": "VALIDATION_ERROR",
        "SET spark.sql.variable.substitute = true": "FORBIDDEN_SQL",
        f"CREATE TEMPORARY TABLE t (value STRING) USING text LOCATION "
        f"'{data_dir}/external/\\.\\./secret_key'": "FORBIDDEN_SQL",
    }
    for sql, code in refused.items():
        job = run(sql)
        assert job["status"] == "FAILED", (sql, job)
        error = job["error"]
        assert isinstance(error, dict) and error["code"] == code, (sql, error)
        assert secret not in str(job)
    # ${…} is never substituted: the text comes back as written.
    job = run("SELECT '${env:HOME}' AS home, '${system:user.name}' AS user")
    assert job["status"] == "FINISHED", job
    page = requests.get(f"{base}/jobs/{job['id']}/result", headers=auth, timeout=10).json()
    assert page["rows"] == [["${env:HOME}", "${system:user.name}"]]
    # Options that reach Hadoop's configuration are refused over REST as well.
    response = requests.post(
        f"{base}/catalogs",
        json={"name": "mallorys"},
        headers=auth,
        timeout=10,
    )
    assert response.status_code == 201, response.text
    response = requests.post(
        f"{base}/catalogs/mallorys/databases/default/tables",
        json={
            "name": "etc",
            "schema": {"columns": [{"name": "value", "kind": "physical", "data_type": "STRING"}]},
            "options": {
                "connector": "text",
                "path": f"{data_dir}/external/x",
                "fs.viewfs.mounttable.default.link./x": "file:///etc",
            },
        },
        headers=auth,
        timeout=10,
    )
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"
