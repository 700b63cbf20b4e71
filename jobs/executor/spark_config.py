"""How a worker's SparkSession is built: Spark Connect or classic (``SPARK_REMOTE`` /
``SPARK_MASTER``), the driver's heap and what one action may bring to it, the JVM's
hardening, and the UDF packages shipped to executors. ``jobs.executor.runtime`` keeps the
one session and watches its JVM.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import tempfile
import zipfile
from importlib import import_module
from pathlib import Path
from typing import Any

from django.conf import settings
from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

# Local mode: modest parallelism for shuffles; users may SET their own per session.
DEFAULT_SHUFFLE_PARTITIONS = "8"


# No XML parser in the JVM may fetch external DTDs, schemas or stylesheets (file: or
# http:): Spark's XML functions would otherwise resolve entities a query supplies.
XML_HARDENING = (
    "-Djavax.xml.accessExternalDTD= -Djavax.xml.accessExternalSchema="
    " -Djavax.xml.accessExternalStylesheet="
)


def is_connect() -> bool:
    """True when the worker talks to Spark through Spark Connect (``SPARK_REMOTE``)."""
    return bool(settings.SPARK_REMOTE)


def _spark_dir() -> Path:
    path = Path(settings.DATA_DIR) / "spark"
    path.mkdir(parents=True, exist_ok=True)
    return path


_SIZE = re.compile(r"^\s*(\d+)\s*([kmgt]?)b?\s*$", re.IGNORECASE)


def memory_bytes(text: str) -> int:
    """A JVM memory size (``512m``, ``2g``, ``1048576``) in bytes; 1 GiB if unreadable."""
    match = _SIZE.match(text or "")
    if not match:
        return 1 << 30
    return int(match.group(1)) << (10 * " kmgt".index((match.group(2) or " ").lower()))


def driver_memory() -> str:
    return str(settings.TESSERA_SPARK_DRIVER_MEMORY or "1g")


def _builder() -> Any:
    # Spark must read exactly the text the guard checked: no ${…} substitution before parsing
    # (it would expand ${env:…}, ${system:…} and ${spark:…} into the statement).
    builder: Any = SparkSession.builder.appName("tessera-worker").config(
        "spark.sql.variable.substitute", "false"
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
    java_options = (
        f"-Dderby.system.home={derby} -Dderby.stream.error.file={derby / 'derby.log'}"
        # Out of heap: exit now (detected, jobs failed, Spark restarted) rather than thrash.
        " -XX:+ExitOnOutOfMemoryError"
        f" {XML_HARDENING}"
    )
    heap = memory_bytes(driver_memory())
    return (
        builder.master(master)
        .config("spark.driver.memory", driver_memory())
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.scheduler.mode", "FAIR")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", DEFAULT_SHUFFLE_PARTITIONS)
        .config("spark.sql.warehouse.dir", str(spark_dir / "warehouse"))
        .config("spark.local.dir", str(local_dir))
        .config("spark.driver.extraJavaOptions", java_options)
        # Executors of a cluster parse XML too (local mode: they are the driver's JVM).
        .config("spark.executor.extraJavaOptions", XML_HARDENING)
        # What one job may pull into the driver's heap: results of an action, a broadcast
        # side of a join. Over it the job fails with Spark's error; the JVM lives on.
        .config("spark.driver.maxResultSize", str(max(heap // 4, 16 << 20)))
        .config("spark.sql.maxBroadcastTableSize", str(max(heap // 8, 8 << 20)))
        # Plan strings (EXPLAIN, listener events) of huge statements stay bounded.
        .config("spark.sql.maxPlanStringLength", str(1_000_000))
        # A long-lived driver keeps less history of finished jobs (no UI reads it).
        .config("spark.ui.retainedJobs", "200")
        .config("spark.ui.retainedStages", "200")
        .config("spark.ui.retainedTasks", "20000")
        .config("spark.sql.ui.retainedExecutions", "50")
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


def create_session() -> SparkSession:
    log.info(
        "starting Spark (%s)",
        f"remote {settings.SPARK_REMOTE}"
        if is_connect()
        else f"master {settings.SPARK_MASTER}, driver memory {driver_memory()}",
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
