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


def _compose_config(
    command: list[str], env_file: Path, **env: str
) -> subprocess.CompletedProcess[str]:
    """``config --services`` of docker-compose.yml with exactly ``env`` (and ``env_file``, in
    place of a developer's own ``.env``) for the variables it reads."""
    environ = {k: v for k, v in os.environ.items() if k not in ("DJANGO_SECRET_KEY", "PORT")}
    return subprocess.run(
        [*command, "-f", "docker-compose.yml", "--env-file", str(env_file), "config", "--services"],
        cwd=ROOT,
        env={**environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_docker_compose_file_is_valid(tmp_path: Path) -> None:
    command = _compose_command()
    if command is None:
        pytest.skip(
            "neither `docker compose` nor `docker-compose` is installed (.ci/run installs it)"
        )
    env_file = tmp_path / "compose.env"
    env_file.write_text("")
    # The production shape has no default secret key (README, "Docker"): validating the file
    # needs one, so a throwaway value is given here.
    result = _compose_config(command, env_file, DJANGO_SECRET_KEY="validation-only-not-a-secret")
    assert result.returncode == 0, result.stderr
    assert set(result.stdout.split()) == {
        "postgres",
        "redis",
        "web",
        "hiveserver2",
        "flightsql",
        "worker",
        "worker-connect",
        "spark-master",
        "spark-worker",
        "spark-connect",
    }


def test_docker_compose_refuses_to_start_without_a_secret_key(tmp_path: Path) -> None:
    """A known default key would let anyone sign sessions and CSRF tokens: without
    DJANGO_SECRET_KEY (unset or empty) compose stops and says what to set."""
    command = _compose_command()
    if command is None:
        pytest.skip(
            "neither `docker compose` nor `docker-compose` is installed (.ci/run installs it)"
        )
    env_file = tmp_path / "compose.env"
    env_file.write_text("")
    for env in ({}, {"DJANGO_SECRET_KEY": ""}):
        result = _compose_config(command, env_file, **env)
        assert result.returncode != 0, (env, result.stdout)
        assert "set DJANGO_SECRET_KEY to a long random string" in result.stderr, result.stderr
    compose = (ROOT / "docker-compose.yml").read_text()
    assert "change-me" not in compose


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
