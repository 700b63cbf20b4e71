"""What the statement benchmarks share: their own PostgreSQL database, Django set up on it
with a throw-away data dir, an authenticated test client, a real Celery worker, the common
arguments (``bench_parser``), a catalog + worker + session driven over REST (``tessera``)
and plain PySpark in the benchmark's own process (``plain_spark``)."""

from __future__ import annotations

import argparse
import logging
import os
import platform
import shutil
import signal
import subprocess
import tempfile
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
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

    from accounts.tokens import token_create
    from webapp.celery import app

    call_command("migrate", interactive=False, verbosity=0)
    user = User.objects.filter(username="bench").first() or User.objects.create_user(
        "bench", password=os.urandom(16).hex()
    )
    _, key = token_create(user=user, name="bench")
    app.control.purge()
    client = Client(HTTP_AUTHORIZATION=f"Token {key}")
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


def bench_parser(
    doc: str | None, *, db_name: str, rows: int | None = None, rows_help: str = "", runs: int = 3
) -> argparse.ArgumentParser:
    """The arguments every Tessera-vs-plain benchmark takes: ``--db-name``, ``--runs``,
    ``--keep-data`` and (when ``rows`` is given) ``--rows``; a script adds its own."""
    parser = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    parser.add_argument("--db-name", default=db_name)
    if rows is not None:
        parser.add_argument("--rows", type=int, default=rows, help=rows_help)
    parser.add_argument("--runs", type=int, default=runs, help="timed runs per side")
    parser.add_argument("--keep-data", action="store_true", help="keep the data dir")
    return parser


TERMINAL = frozenset({"FINISHED", "FAILED", "CANCELED"})


class Tessera:
    """A benchmark's Tessera side: its catalog, its real worker and one session, driven
    through the REST API with the in-process Django test client."""

    def __init__(self, bench: Bench, worker: subprocess.Popen[bytes], name: str, catalog: str):
        self.bench = bench
        self.worker = worker
        self.name = name
        self.catalog = catalog
        self.session = ""

    @property
    def data_dir(self) -> Path:
        return self.bench.data_dir

    def ready(self, timeout: float = 180) -> None:
        """Wait for the worker's heartbeat, then open the session."""
        from jobs.models import Worker

        deadline = time.monotonic() + timeout
        while not Worker.objects.filter(hostname__startswith=f"{self.name}@").exists():
            if self.worker.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the worker did not start; see {self.data_dir / 'worker.log'}")
            time.sleep(0.2)
        response = self.bench.client.post("/api/v1/sessions", {}, content_type="application/json")
        assert response.status_code == 201, response.content
        self.session = str(response.json()["id"])

    def submit(self, sql: str, wait: int = 30) -> dict[str, Any]:
        """POST a statement (waiting up to ``wait`` s for it to end); the job as answered."""
        answer = self.bench.client.post(
            f"/api/v1/sessions/{self.session}/statements",
            {"sql": sql, "wait": wait},
            content_type="application/json",
        )
        assert answer.status_code == 201, answer.content
        job: dict[str, Any] = answer.json()
        return job

    def job(self, job_id: str) -> dict[str, Any]:
        answer = self.bench.client.get(f"/api/v1/jobs/{job_id}")
        assert answer.status_code == 200, answer.content
        job: dict[str, Any] = answer.json()
        return job

    def cancel(self, job_id: str) -> None:
        answer = self.bench.client.post(
            f"/api/v1/jobs/{job_id}/cancel", {}, content_type="application/json"
        )
        assert answer.status_code in (200, 202), answer.content

    def until_done(self, job: dict[str, Any], poll: float = 0.02) -> dict[str, Any]:
        """Poll the job until it is FINISHED, FAILED or CANCELED."""
        while job["status"] not in TERMINAL:
            time.sleep(poll)
            job = self.job(str(job["id"]))
        return job

    def statement(self, sql: str) -> tuple[float, str]:
        """Run one statement to its end: seconds from POST until the job is seen FINISHED,
        and the job's id."""
        started = time.perf_counter()
        job = self.until_done(self.submit(sql))
        seconds = time.perf_counter() - started
        assert job["status"] == "FINISHED", job
        return seconds, str(job["id"])

    def rows(self, sql: str) -> list[list[Any]]:
        """Run a query to its end through Tessera (the worker's Spark); its rows."""
        _, job_id = self.statement(sql)
        answer = self.bench.client.get(f"/api/v1/jobs/{job_id}/result?page_size=1000")
        assert answer.status_code == 200, answer.content
        return [list(row) for row in answer.json()["rows"]]

    def table(self, name: str, database: str = "d") -> Any:
        """The row of the catalog's table ``database.name``."""
        from catalog.models import Table

        return Table.objects.get(
            database__catalog__name=self.catalog, database__name=database, name=name
        )

    def location(self, name: str, database: str = "d") -> str:
        """The current location of the catalog's table ``database.name``."""
        return str(self.table(name, database).location)


@contextmanager
def start_tessera(
    args: argparse.Namespace, *, name: str, broker: str, catalog: str
) -> Iterator[Tessera]:
    """Django on the bench database (``args.db_name``), a new catalog ``catalog`` (database
    ``d``) owned by the user ``bench``, and a real worker ``name`` starting (its JVM starts
    while the caller builds its plain Spark; call ``ready()`` before the first statement).
    At the end: the worker stopped, the catalog dropped, the data dir removed unless
    ``args.keep_data``."""
    bench = setup_django(args.db_name, broker=broker, prefix=f"tessera-{name}-")

    from catalog import services as catalog_services
    from catalog.models import Catalog

    Catalog.objects.filter(name_key=catalog).delete()
    catalog_services.catalog_create(user=bench.user, name=catalog, default_database="d")
    worker = start_worker(name, bench.data_dir / "worker.log")
    try:
        yield Tessera(bench, worker, name, catalog)
    finally:
        stop_worker(worker, name)
        Catalog.objects.filter(name_key=catalog).delete()
        if args.keep_data:
            print(f"data kept in {bench.data_dir}")
        else:
            shutil.rmtree(bench.data_dir, ignore_errors=True)


def machine() -> str:
    """The machine line every benchmark prints: architecture, cores, Python, load."""
    return (
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, load {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
