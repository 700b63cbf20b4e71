"""`make run` (scripts/run.sh) serves Arrow Flight SQL: its own supervised process beside the
web server, the worker and HiveServer2, on TESSERA_FLIGHT_SQL_PORT, reaching the demo catalog
that bootstrap makes; a Flight SQL process that dies is started again; Ctrl-C stops it with
the rest."""

from __future__ import annotations

import io
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import adbc_driver_flightsql.dbapi as adbc
import pytest
from django.core.management import call_command

from tests.security.test_run_supervisor import Launcher, answered
from tests.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.spark]


def _signed_in(port: int) -> Any:
    try:
        return adbc.connect(
            f"grpc://127.0.0.1:{port}", db_kwargs={"username": "admin", "password": "admin"}
        )
    except Exception:
        return None


def _pids(launcher: Launcher) -> list[int]:
    found = subprocess.run(
        ["pgrep", "-g", str(launcher.process.pid), "-f", "manage.py flightsql"],
        capture_output=True,
        text=True,
    )
    return [int(pid) for pid in found.stdout.split()]


def test_port_zero_turns_it_off() -> None:
    out = io.StringIO()
    call_command("flightsql", port=0, stdout=out)
    assert "Flight SQL is off" in out.getvalue()


def test_make_run_serves_flight_sql(tmp_path: Path) -> None:
    launcher = Launcher(tmp_path)
    try:
        answered(lambda: (h := launcher.health()) and h["workers"] == 1, 180, "web and worker")
        conn = wait_until(lambda: _signed_in(launcher.flight_sql_port), 60, 0.5, "Flight SQL")
        cursor = conn.cursor()
        cursor.execute("SELECT count(*) AS n FROM demo.sales.orders")
        assert cursor.fetchall()[0][0] > 0
        conn.close()
        [first] = _pids(launcher)
        os.kill(first, signal.SIGKILL)
        assert launcher.get("/health").status_code == 200
        again = wait_until(lambda: _signed_in(launcher.flight_sql_port), 60, 0.5, "again")
        again.close()
        assert "Flight SQL exited; starting it again" in launcher.log()
    except BaseException:
        print(launcher.log()[-5000:])
        raise
    finally:
        left = launcher.ctrl_c()
        assert not left, f"Ctrl-C left processes of scripts/run.sh running: {left}"
