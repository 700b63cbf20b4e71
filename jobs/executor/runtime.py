"""The worker process's one SparkSession, and a fresh isolated session per job.

A worker creates the SparkSession once (``start_in_background`` at worker start, so the
first job does not pay Spark's start-up) and every job runs in ``new_job_session()``, a
``spark.newSession()`` that shares the SparkContext but has its own temporary views, UDFs
and SQL conf. Configuration: ``SPARK_REMOTE`` (Spark Connect, ``sc://host:15002``) when
set, else ``SPARK_MASTER`` (default ``local[*]``).

Spark Connect has no SparkContext in the client: cancellation uses session tags
(``addTag``/``interruptTag``) and there is no status tracker, so progress stays empty
(see ``jobs.executor.control``).
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import threading
import zipfile
from importlib import import_module
from pathlib import Path
from typing import Any

from django.conf import settings
from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

_lock = threading.Lock()
_spark: SparkSession | None = None
_start_error: BaseException | None = None
_starter: threading.Thread | None = None

# Local mode: modest parallelism for shuffles; users may SET their own per session.
DEFAULT_SHUFFLE_PARTITIONS = "8"


def is_connect() -> bool:
    """True when the worker talks to Spark through Spark Connect (``SPARK_REMOTE``)."""
    return bool(settings.SPARK_REMOTE)


def _spark_dir() -> Path:
    path = Path(settings.DATA_DIR) / "spark"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _builder() -> Any:
    # Spark must read exactly the text the guard checked: no ${…} substitution before parsing
    # (it would expand ${env:…}, ${system:…} and ${spark:…} into the statement).
    builder: Any = (
        SparkSession.builder.appName("tessera-worker")
        .config("spark.sql.variable.substitute", "false")
    )
    if is_connect():
        return builder.remote(settings.SPARK_REMOTE).config("spark.sql.session.timeZone", "UTC")
    spark_dir = _spark_dir()
    derby = spark_dir / "derby"
    derby.mkdir(exist_ok=True)
    local_dir = spark_dir / "tmp"
    local_dir.mkdir(exist_ok=True)
    master = settings.SPARK_MASTER
    if master.startswith("local") and "PYSPARK_PYTHON" not in os.environ:
        # Python UDFs run in Spark's Python workers: use this interpreter, which can import
        # the allowlisted UDF packages, not whatever `python3` is on the PATH.
        os.environ["PYSPARK_PYTHON"] = sys.executable
    java_options = f"-Dderby.system.home={derby} -Dderby.stream.error.file={derby / 'derby.log'}"
    return (
        builder.master(master)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.scheduler.mode", "FAIR")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", DEFAULT_SHUFFLE_PARTITIONS)
        .config("spark.sql.warehouse.dir", str(spark_dir / "warehouse"))
        .config("spark.local.dir", str(local_dir))
        .config("spark.driver.extraJavaOptions", java_options)
    )


def _ship_udf_packages(spark: SparkSession) -> None:
    """On a cluster, executors need the allowlisted UDF packages: send them as a zip."""
    master = settings.SPARK_MASTER
    if is_connect() or master.startswith("local"):
        return
    target = Path(tempfile.mkdtemp(prefix="tessera-udfs-", dir=_spark_dir())) / "udfs.zip"
    with zipfile.ZipFile(target, "w") as archive:
        for package in settings.TESSERA_UDF_PACKAGES:
            try:
                module = import_module(package)
            except ImportError:
                log.warning("UDF package %s cannot be imported; not shipped", package)
                continue
            root = Path(module.__file__ or "").parent
            for path in root.rglob("*.py"):
                archive.write(path, Path(package.replace(".", "/")) / path.relative_to(root))
    spark.sparkContext.addPyFile(str(target))


def _create() -> SparkSession:
    log.info(
        "starting Spark (%s)",
        f"remote {settings.SPARK_REMOTE}" if is_connect() else f"master {settings.SPARK_MASTER}",
    )
    spark: SparkSession = _builder().getOrCreate()
    if not is_connect():
        spark.sparkContext.setLogLevel("WARN")
        _ship_udf_packages(spark)
    # PySpark logs every failed query with its whole JVM stack trace; we report errors ourselves.
    logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)
    logging.getLogger("py4j").setLevel(logging.WARNING)
    log.info("Spark %s is ready", spark.version)
    return spark


def get_spark() -> SparkSession:
    """The process-wide SparkSession, created on first use (thread-safe)."""
    global _spark
    if _spark is not None:
        return _spark
    with _lock:
        if _spark is None:
            _spark = _create()
        return _spark


def start_in_background() -> threading.Thread:
    """Start Spark in a thread so the worker takes messages while the JVM comes up."""
    global _starter

    def start() -> None:
        global _start_error
        try:
            get_spark()
        except BaseException as exc:  # kept for the log; jobs retry get_spark() themselves
            _start_error = exc
            log.exception("Spark did not start")

    with _lock:
        if _starter is None:
            _starter = threading.Thread(target=start, name="tessera-spark-start", daemon=True)
            _starter.start()
        return _starter


def new_job_session() -> SparkSession:
    """A new session on the shared SparkContext: private temp views, functions and SQL conf."""
    return get_spark().newSession()


def stop() -> None:
    """Stop the SparkSession (worker shutdown)."""
    global _spark
    with _lock:
        if _spark is not None:
            try:
                _spark.stop()
            finally:
                _spark = None
