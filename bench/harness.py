"""What the statement benchmarks share: their own PostgreSQL database, Django set up on it
with a throw-away data dir, an authenticated test client, and a real Celery worker."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SERVER = "postgres://postgres@127.0.0.1:5432/postgres"


def bench_database_url(db_name: str) -> str:
    """``db_name`` on the server of ``DATABASE_URL`` (or the local default server)."""
    base = os.environ.get("DATABASE_URL", "")
    if not base.startswith(("postgres://", "postgresql://")):
        base = DEFAULT_SERVER
    return urlunsplit(urlsplit(base)._replace(path=f"/{db_name}"))


def ensure_database(url: str) -> bool:
    """Create the database of ``url`` when it is missing (never the test database); True
    when it was created."""
    import psycopg
    from psycopg import sql

    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            return False
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return True


@dataclass
class Bench:
    data_dir: Path
    external: Path
    user: Any
    client: Any


def setup_django(db_name: str, *, broker: str, prefix: str) -> Bench:
    """Point this process at the bench database and a new data dir, set Django up, migrate,
    and return a client authenticated as the user ``bench``; purges the broker's queue."""
    url = bench_database_url(db_name)
    ensure_database(url)
    data_dir = Path(tempfile.mkdtemp(prefix=prefix))
    external = data_dir / "external"
    external.mkdir()
    os.environ.update(
        {
            "DATABASE_URL": url,
            "CELERY_BROKER_URL": os.environ.get("BENCH_BROKER_URL", broker),
            "TESSERA_DATA_DIR": str(data_dir),
            "TESSERA_STORAGE_ROOTS": str(external),
            "DJANGO_DEBUG": "0",
            "DJANGO_SETTINGS_MODULE": "webapp.settings",
        }
    )
    import django

    warnings.filterwarnings("ignore", message="No directory at", module="django.core.handlers")
    django.setup()

    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.test import Client
    from rest_framework.authtoken.models import Token

    from webapp.celery import app

    call_command("migrate", interactive=False, verbosity=0)
    user = User.objects.filter(username="bench").first() or User.objects.create_user(
        "bench", password=os.urandom(16).hex()
    )
    token, _ = Token.objects.get_or_create(user=user)
    app.control.purge()
    client = Client(HTTP_AUTHORIZATION=f"Token {token.key}")
    return Bench(data_dir=data_dir, external=external, user=user, client=client)


def start_worker(name: str, log_path: Path) -> subprocess.Popen[bytes]:
    """A real Celery worker (threads pool, its own SparkSession) on this process's settings."""
    return subprocess.Popen(
        [
            str(ROOT / ".venv" / "bin" / "celery"),
            "-A",
            "webapp",
            "worker",
            "--pool",
            "threads",
            "--concurrency",
            "4",
            "-n",
            f"{name}@%h",
            "--without-gossip",
            "--without-mingle",
            "--loglevel",
            "WARNING",
        ],
        cwd=ROOT,
        env=os.environ.copy(),
        stdout=log_path.open("wb"),
        stderr=subprocess.STDOUT,
    )


def stop_worker(worker: subprocess.Popen[bytes], name: str) -> None:
    """Stop the worker (TERM, then KILL after 30 s) and forget its heartbeat row."""
    from jobs.models import Worker

    worker.send_signal(signal.SIGTERM)
    try:
        worker.wait(30)
    except subprocess.TimeoutExpired:
        worker.kill()
    Worker.objects.filter(hostname__startswith=f"{name}@").delete()


def plain_spark(warehouse: Path, master: str = "local[*]", **conf: str) -> Any:
    """Plain PySpark in this process, what Tessera is compared with: local[*] (or
    ``master``), UTC, 8 shuffle partitions, no UI, quiet logs, and ``conf``."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = (
        builder.master(master)
        .appName("bench-plain")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.sql.warehouse.dir", str(warehouse))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    logging.getLogger("py4j").setLevel(logging.WARNING)
    return spark
