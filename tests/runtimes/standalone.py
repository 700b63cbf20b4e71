"""A real Spark standalone cluster for the tests: one master and one worker, started from
the pinned PySpark's own launcher (``bin/spark-class``), on loopback, with small memory.

Test-only helper (no fixtures here): ``tests/runtimes/conftest.py`` starts one cluster for
the whole run and every cluster test shares it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyspark

SPARK_HOME = Path(pyspark.__file__).resolve().parent
START_TIMEOUT = 120.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class StandaloneCluster:
    """A running master + worker; ``url`` is ``spark://127.0.0.1:PORT``, ``ui_url`` the
    master's web UI (``http://127.0.0.1:PORT``; ``state()`` reads its JSON)."""

    url: str
    folder: Path
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    ui_url: str = ""

    def state(self) -> dict[str, Any]:
        """The master's JSON state (``/json/``): ``activeapps`` and ``completedapps`` (each
        with ``id``, ``name``, ``cores``, ``memoryperexecutor``, ``state``) and ``workers``
        (``cores``, ``coresused``, ``memory``, ``memoryused``)."""
        with urllib.request.urlopen(f"{self.ui_url}/json/", timeout=10) as response:
            state: dict[str, Any] = json.load(response)
        return state

    def log_tail(self, lines: int = 40) -> str:
        parts = []
        for name in ("master.log", "worker.log"):
            path = self.folder / name
            if path.exists():
                text = path.read_text(errors="replace").splitlines()[-lines:]
                parts.append(f"--- {name}\n" + "\n".join(text))
        return "\n".join(parts)

    def stop(self) -> None:
        for process in reversed(self.processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(20)


def _spark_class(
    folder: Path, log_name: str, daemon_options: str, *arguments: str, hide: Path | None = None
) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "SPARK_HOME": str(SPARK_HOME),
        "SPARK_LOG_DIR": str(folder),
        "SPARK_DAEMON_MEMORY": "512m",
        # No REST submission server (it would run any jar a caller posts), no history.
        "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",
        "SPARK_DAEMON_JAVA_OPTS": daemon_options,
    }
    log = (folder / log_name).open("ab")
    command = [str(SPARK_HOME / "bin" / "spark-class"), *arguments]
    if hide is not None:
        # A host that does not share this folder: the JVM and its executors run in a mount
        # namespace of their own, with an empty file system mounted over it.
        command = [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "--",
            "sh",
            "-c",
            'mount -t tmpfs -o size=16m tessera-not-shared "$0" && exec "$@"',
            str(hide),
            *command,
        ]
    return subprocess.Popen(
        command,
        cwd=folder,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: stop() ends the JVM launched by it
    )


def _wait_for(cluster: StandaloneCluster, log_name: str, text: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    path = cluster.folder / log_name
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text(errors="replace"):
            return
        if any(process.poll() is not None for process in cluster.processes):
            break
        time.sleep(0.2)
    cluster.stop()
    raise RuntimeError(f"the Spark standalone cluster did not start:\n{cluster.log_tail()}")


def start_standalone_cluster(
    folder: Path, *, cores: int = 2, memory: str = "1g", hide: Path | None = None
) -> StandaloneCluster:
    """Start a master and one worker (``cores`` cores, ``memory`` for executors). With
    ``hide``, the worker and its executors see an empty folder at that path (it must
    exist): storage that is not shared with them."""
    folder.mkdir(parents=True, exist_ok=True)
    port, ui_port = free_port(), free_port()
    cluster = StandaloneCluster(
        f"spark://127.0.0.1:{port}", folder, ui_url=f"http://127.0.0.1:{ui_port}"
    )
    cluster.processes.append(
        _spark_class(
            folder,
            "master.log",
            "",
            "org.apache.spark.deploy.master.Master",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--webui-port",
            str(ui_port),
        )
    )
    _wait_for(cluster, "master.log", "I have been elected leader")
    cluster.processes.append(
        _spark_class(
            folder,
            "worker.log",
            "",
            "org.apache.spark.deploy.worker.Worker",
            cluster.url,
            "--host",
            "127.0.0.1",
            "--cores",
            str(cores),
            "--memory",
            memory,
            "--work-dir",
            str(folder / "work"),
            "--webui-port",
            str(free_port()),
            hide=hide,
        )
    )
    _wait_for(cluster, "worker.log", "Successfully registered with master")
    return cluster


def cluster_defaults(folder: Path, *, executor_memory: str = "512m", cores: int = 2) -> Path:
    """A ``SPARK_CONF_DIR`` with ``spark-defaults.conf`` for a worker on this cluster: how an
    operator sizes executors (docs/deploy.md), here small."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "spark-defaults.conf").write_text(
        f"spark.executor.memory {executor_memory}\n"
        f"spark.cores.max {cores}\n"
        "spark.driver.host 127.0.0.1\n"
        "spark.driver.bindAddress 127.0.0.1\n",
        encoding="utf-8",
    )
    return folder
