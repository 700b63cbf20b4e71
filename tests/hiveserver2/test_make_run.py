"""`make run` (scripts/run.sh) serves HiveServer2: its own supervised process beside the web
server and the worker, on TESSERA_HS2_PORT, reaching the demo catalog that bootstrap makes;
Ctrl-C stops it with the rest."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.hiveserver2.conftest import connect
from tests.security.test_run_supervisor import Launcher, answered
from tests.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.spark]


def _signed_in(port: int) -> Any:
    try:
        return connect(
            port, "admin", "admin", configuration={"use:catalog": "demo"}, database="sales"
        )
    except Exception:
        return None


def _hs2_pids(launcher: Launcher) -> list[int]:
    found = subprocess.run(
        ["pgrep", "-g", str(launcher.process.pid), "-f", "manage.py hiveserver2"],
        capture_output=True,
        text=True,
    )
    return [int(pid) for pid in found.stdout.split()]


def test_make_run_serves_hiveserver2(tmp_path: Path) -> None:
    launcher = Launcher(tmp_path)
    try:
        answered(lambda: (h := launcher.health()) and h["workers"] == 1, 180, "web and worker")
        conn = wait_until(lambda: _signed_in(launcher.hs2_port), 60, 0.5, "HiveServer2")
        cursor = conn.cursor()
        cursor.execute("SELECT 1 AS one")
        assert cursor.fetchall() == [(1,)]
        conn.close()
        # A HiveServer2 that dies is started again; the web server keeps serving meanwhile.
        [first] = _hs2_pids(launcher)
        os.kill(first, signal.SIGKILL)
        assert launcher.get("/health").status_code == 200
        conn = wait_until(lambda: _signed_in(launcher.hs2_port), 60, 0.5, "HiveServer2 again")
        conn.close()
        assert "HiveServer2 exited; starting it again" in launcher.log()
    except BaseException:
        print(launcher.log()[-5000:])
        raise
    finally:
        left = launcher.ctrl_c()
        assert not left, f"Ctrl-C left processes of scripts/run.sh running: {left}"
