"""A real Spark Connect server for the tests, from the pinned PySpark wheel (no download).

``start_connect_server(tmp_dir)`` runs ``spark-submit --class
org.apache.spark.sql.connect.service.SparkConnectServer`` (what ``sbin/start-connect-server.sh``
runs; the Connect jar ships in the wheel's ``jars/``) in the foreground, in its own process
group, on a free loopback port: master ``local[2]``, a small heap, UI off, Python workers on
this virtualenv's interpreter (so the allow-listed UDF packages import), its warehouse,
Derby and local dirs under ``tmp_dir``. It returns once the server accepts connections and
answers ``SELECT 1``; ``ConnectServer.stop()`` kills the process group.

No fixtures here: ``tests/runtimes/conftest.py`` and modules build theirs on it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from engine import spark_config

START_TIMEOUT = 120.0
SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class ConnectServer:
    """A running Spark Connect server (``url``: ``sc://127.0.0.1:PORT``)."""

    process: subprocess.Popen[bytes]
    port: int
    log_path: Path

    @property
    def url(self) -> str:
        return f"sc://127.0.0.1:{self.port}"

    def alive(self) -> bool:
        return self.process.poll() is None

    def log_tail(self, lines: int = 60) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def kill(self) -> None:
        """SIGKILL the process group: a server that crashes, no goodbye to its clients."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(20)

    def stop(self) -> None:
        """Kill the server's process group (spark-submit's launcher and its JVM)."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(20)


def _answers(url: str) -> bool:
    """``SELECT 1`` through a Connect client (a fresh one, closed again)."""
    from pyspark.sql.connect.session import SparkSession as RemoteSession

    session = RemoteSession.builder.remote(url).create()
    try:
        return bool(session.sql("SELECT 1 AS one").collect()[0][0] == 1)
    finally:
        try:
            session.client.release_session()
        finally:
            session.client.close()


def start_connect_server(
    tmp_dir: Path, memory: str = "768m", master: str = "local[2]", port: int = 0
) -> ConnectServer:
    """Start a Spark Connect server and wait until it answers (``START_TIMEOUT``); on
    ``port`` if given (a server started again where its clients look), else a free one."""
    tmp_dir = Path(tmp_dir)
    tmp_dir.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    home = _spark_home()
    derby = tmp_dir / "derby"
    derby.mkdir(exist_ok=True)
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "SPARK_LOCAL_REMOTE"}
    }
    env.update(
        {
            "SPARK_HOME": str(home),
            "PYSPARK_PYTHON": sys.executable,
            "SPARK_NO_DAEMONIZE": "1",
            "SPARK_LOCAL_IP": "127.0.0.1",
        }
    )
    command = [
        str(home / "bin" / "spark-submit"),
        "--class",
        SERVER_CLASS,
        "--name",
        "tessera-test-connect-server",
        "--master",
        master,
        "--driver-memory",
        memory,
        "--conf",
        "spark.connect.grpc.binding.address=127.0.0.1",
        "--conf",
        f"spark.connect.grpc.binding.port={port}",
        "--conf",
        "spark.ui.enabled=false",
        "--conf",
        "spark.sql.shuffle.partitions=4",
        "--conf",
        f"spark.sql.warehouse.dir={tmp_dir / 'warehouse'}",
        "--conf",
        f"spark.local.dir={tmp_dir / 'local'}",
        "--conf",
        f"spark.driver.extraJavaOptions=-Dderby.system.home={derby}",
        # Delta Lake, as a Connect server Tessera uses must have it (docs/deploy.md).
        "--jars",
        ",".join(spark_config.delta_jars()),
        *(
            arg
            for key, value in spark_config.DELTA_CONF.items()
            for arg in ("--conf", f"{key}={value}")
        ),
    ]
    log_path = tmp_dir / "connect-server.log"
    log = log_path.open("ab")
    process = subprocess.Popen(
        command,
        cwd=tmp_dir,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    server = ConnectServer(process, port, log_path)
    deadline = time.monotonic() + START_TIMEOUT
    try:
        while True:
            if process.poll() is not None:
                raise RuntimeError(
                    f"the Spark Connect server exited ({process.returncode}):\n{server.log_tail()}"
                )
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
            except OSError:
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"the Spark Connect server did not listen within {START_TIMEOUT:.0f} s:\n"
                        f"{server.log_tail()}"
                    ) from None
                time.sleep(0.3)
                continue
            break
        if not _answers(server.url):
            raise RuntimeError(f"the Spark Connect server does not answer:\n{server.log_tail()}")
    except BaseException:
        server.stop()
        raise
    return server
