"""How a classic driver JVM launched by a worker is configured: the driver's heap and what
one action may bring to it, the JVM's hardening, and the UDF packages shipped to a
cluster's executors. Which runtime uses it how is ``engine.runtimes``;
``engine.spark_session`` keeps the one session and watches its JVM.
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

from jobs import engines

log = logging.getLogger(__name__)

# Local mode: modest parallelism for shuffles; users may SET their own per session.
DEFAULT_SHUFFLE_PARTITIONS = "8"


# No XML parser in the JVM may fetch external DTDs, schemas or stylesheets (file: or
# http:): Spark's XML functions would otherwise resolve entities a query supplies.
XML_HARDENING = (
    "-Djavax.xml.accessExternalDTD= -Djavax.xml.accessExternalSchema="
    " -Djavax.xml.accessExternalStylesheet="
)


# Delta Lake in every driver Tessera starts (ADR 0018): its jars, copied by `make install`
# from pom.xml beside this interpreter (the image's Dockerfile does the same), and its SQL
# extension and catalog, as Delta's documentation configures a session.
DELTA_JARS_DIR = Path(sys.prefix) / "share" / "tessera" / "jars"
DELTA_CONF = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
}


class DeltaJarsMissing(RuntimeError):
    """Delta Lake's jars are not where ``make install`` puts them."""


def delta_jars() -> list[str]:
    """The jars Spark needs for Delta Lake, as paths; raises when they were not installed."""
    jars = sorted(str(path) for path in DELTA_JARS_DIR.glob("*.jar"))
    if not any(Path(jar).name.startswith("delta-spark_") for jar in jars):
        raise DeltaJarsMissing(
            f"Delta Lake's jars are missing from {DELTA_JARS_DIR}: run `make install` "
            "(it copies them from Maven Central, as pom.xml lists)."
        )
    return jars


def is_connect() -> bool:
    """True when the worker executes through Spark Connect (``SPARK_REMOTE``); prefer
    ``engine.runtimes.current_runtime()``."""
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


def classic_options(master: str, memory: str) -> dict[str, str]:
    """The configuration of a SparkContext this process launches (a classic driver JVM):
    the executing one of the local and cluster runtimes, or the Connect runtime's parser.
    Spark must read exactly the text the guard checked: no ${…} substitution before
    parsing (it would expand ${env:…}, ${system:…} and ${spark:…} into the statement)."""
    spark_dir = _spark_dir()
    derby = spark_dir / "derby"
    derby.mkdir(exist_ok=True)
    local_dir = spark_dir / "tmp"
    local_dir.mkdir(exist_ok=True)
    java_options = (
        f"-Dderby.system.home={derby} -Dderby.stream.error.file={derby / 'derby.log'}"
        # Out of heap: exit now (detected, jobs failed, Spark restarted) rather than thrash.
        " -XX:+ExitOnOutOfMemoryError"
        f" {XML_HARDENING}"
    )
    heap = memory_bytes(memory)
    engine_id = os.environ.get("TESSERA_ENGINE_ID", "")
    cores: dict[str, str] = {}
    if master.startswith("spark://") and engines.hosted():
        # One application per engine: each takes its share of the cluster, never all of it.
        cores["spark.cores.max"] = str(max(int(settings.TESSERA_ENGINE_CORES), 1))
    return {
        **cores,
        **DELTA_CONF,
        "spark.jars": ",".join(delta_jars()),
        "spark.master": master,
        # An engine process names its application after its engine (engine.pool).
        "spark.app.name": f"tessera-engine-{engine_id}" if engine_id else "tessera-worker",
        "spark.sql.variable.substitute": "false",
        # Query parameters are bound as literals, never written into the parsed text.
        "spark.sql.legacy.parameterSubstitution.constantsOnly": "true",
        "spark.driver.memory": memory,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.scheduler.mode": "FAIR",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": DEFAULT_SHUFFLE_PARTITIONS,
        "spark.sql.warehouse.dir": str(spark_dir / "warehouse"),
        "spark.local.dir": str(local_dir),
        "spark.driver.extraJavaOptions": java_options,
        # Executors of a cluster parse XML too (local mode: they are the driver's JVM).
        "spark.executor.extraJavaOptions": XML_HARDENING,
        # What one job may pull into the driver's heap: results of an action, a broadcast
        # side of a join. Over it the job fails with Spark's error; the JVM lives on.
        "spark.driver.maxResultSize": str(max(heap // 4, 16 << 20)),
        "spark.sql.maxBroadcastTableSize": str(max(heap // 8, 8 << 20)),
        # Plan strings (EXPLAIN, listener events) of huge statements stay bounded.
        "spark.sql.maxPlanStringLength": str(1_000_000),
        # A long-lived driver keeps less history of finished jobs (no UI reads it).
        "spark.ui.retainedJobs": "200",
        "spark.ui.retainedStages": "200",
        "spark.ui.retainedTasks": "20000",
        "spark.sql.ui.retainedExecutions": "50",
    }


def classic_builder(master: str) -> Any:
    """A classic ``SparkSession.builder`` for ``master`` with ``classic_options``."""
    if "PYSPARK_PYTHON" not in os.environ:
        # Python UDFs run in Spark's Python workers: use this interpreter, which can import
        # the allowlisted UDF packages, not whatever `python3` is on the PATH. On a cluster
        # the executors start the same path: install Tessera's image (or the same virtual
        # environment) on every host, or set PYSPARK_PYTHON (docs/deploy.md).
        os.environ["PYSPARK_PYTHON"] = sys.executable
    builder: Any = SparkSession.builder
    for key, value in classic_options(master, driver_memory()).items():
        builder = builder.config(key, value)
    return builder


def _ship_udf_packages(spark: SparkSession) -> None:
    """On a cluster, executors need the allowlisted UDF packages: send them as a zip (the
    cluster runtime calls it; local executors are this interpreter already)."""
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
