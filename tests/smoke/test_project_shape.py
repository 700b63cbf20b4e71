"""The project's outer shape: the web process stays JVM-free, compose is valid."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_the_web_process_never_imports_pyspark(tmp_path: Path) -> None:
    code = (
        "import django, sys; django.setup();"
        "import webapp.urls, webapp.wsgi, catalog.views, catalog.admin;"
        "from django.test import Client; Client().get('/api/v1/health');"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j'));"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "webapp.settings"}
    env.pop("DATABASE_URL", None)
    env["TESSERA_DATA_DIR"] = str(tmp_path)
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def _compose_command() -> list[str] | None:
    docker = shutil.which("docker")
    if (
        docker
        and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0
    ):
        return [docker, "compose"]
    legacy = shutil.which("docker-compose")
    return [legacy] if legacy else None


def test_docker_compose_file_is_valid() -> None:
    command = _compose_command()
    if command is None:
        pytest.skip(
            "neither `docker compose` nor `docker-compose` is installed (.ci/run installs it)"
        )
    result = subprocess.run(
        [*command, "-f", "docker-compose.yml", "config", "--services"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert set(result.stdout.split()) == {
        "postgres",
        "redis",
        "web",
        "worker",
        "spark-master",
        "spark-worker",
    }


def test_readme_quick_start_is_the_two_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    quick_start = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = [line.strip() for line in quick_start.splitlines() if line.startswith("make ")]
    assert commands == ["make run", "make test"]
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in ci


def test_nothing_runs_in_the_checkout_itself() -> None:
    # Runtime state belongs under TESSERA_DATA_DIR or a temp dir, never in the repo.
    # (Run last in this module order; the spark and worker suites run before smoke.)
    strays = [
        name
        for name in ("spark-warehouse", "metastore_db", "derby.log", "control")
        if (ROOT / name).exists()
    ]
    assert strays == []
