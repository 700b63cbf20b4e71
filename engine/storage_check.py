"""Can Spark's executors reach the storage this worker reads and commits? Checked at worker
start on a cluster (``SPARK_MASTER=spark://…``, YARN, Kubernetes) and on Spark Connect.

On such runtimes the executors run on other hosts (or in the Connect server's processes):
they write a job's staging files, and this worker commits them by renaming files it must
see at the same path; they read the tables' files that this worker checked and registered.
A warehouse or storage root that only this host can see would give jobs that read nothing,
or commits of files that are not there. So at start, for the warehouse and each storage
root, a Spark job writes a probe directory there and this worker looks for what the
executors wrote; then a second job reads back a file this worker wrote. Both must hold.

The probe directories are hidden (``.tessera-probe-…``: Spark's file index skips names
starting with ``.``), and removed again. In local mode executors are this process's JVM:
nothing to check.
"""

from __future__ import annotations

import logging
import shutil
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path

from pyspark.sql import SparkSession

from core.errors import CoreError

log = logging.getLogger(__name__)


class StorageUnreachable(CoreError):
    """Spark's executors do not see the files this worker sees."""

    code = "STORAGE_UNREACHABLE"


def _probe(spark: SparkSession, root: Path, label: str, runtime: str) -> None:
    token = uuid.uuid4().hex
    probe = root / f".tessera-probe-{token}"
    written = probe / "from-executors"
    local = probe / "from-worker.txt"
    try:
        probe.mkdir(parents=True)
        local.write_text(token, encoding="utf-8")
        # Executors → this host: what a job stages, the worker commits.
        spark.range(1).selectExpr(f"'{token}' AS value").write.mode("error").text(written.as_uri())
        parts = [path for path in written.glob("part-*") if path.is_file()]
        if not any(token in path.read_text(encoding="utf-8") for path in parts):
            raise StorageUnreachable(
                f"Spark's executors ({runtime}) wrote a probe in {label}, but this worker "
                "does not see what they wrote there: the staging and warehouse directories "
                "must be one shared file system mounted at the same path on every host (or an "
                "object store). See docs/deploy.md.",
                details={"storage": label, "direction": "executors_to_worker"},
            )
        # This host → executors: the tables' files the worker checked must be what they read.
        rows = spark.read.text(local.as_uri()).collect()
        if [row[0] for row in rows] != [token]:
            raise StorageUnreachable(
                f"Spark's executors ({runtime}) do not read in {label} the file this worker "
                "wrote there: the storage roots must be one shared file system mounted at the "
                "same path on every host. See docs/deploy.md.",
                details={"storage": label, "direction": "worker_to_executors"},
            )
    except StorageUnreachable:
        raise
    except Exception as exc:
        log.error("storage check of %s (%s) failed", label, root, exc_info=True)
        raise StorageUnreachable(
            f"Spark's executors ({runtime}) could not use {label}. The staging, "
            "warehouse and storage-root directories must be shared by this worker and every "
            "executor, at the same path. See docs/deploy.md.",
            details={"storage": label},
        ) from exc
    finally:
        shutil.rmtree(probe, ignore_errors=True)


def storage_to_check(warehouse: Path, roots: Iterable[str | Path]) -> dict[str, Path]:
    """The folders to check, by the name an error gives them (users see no server paths)."""
    found = {"the warehouse (TESSERA_DATA_DIR/warehouse)": Path(warehouse)}
    for number, root in enumerate(roots, start=1):
        found[f"storage root #{number} of TESSERA_STORAGE_ROOTS"] = Path(root)
    return found


def check_shared_storage(spark: SparkSession, folders: Mapping[str, Path], runtime: str) -> None:
    """Raise ``StorageUnreachable`` unless the executors of ``spark`` write where this worker
    reads and read what it writes, in every one of ``folders`` (created if missing)."""
    for label, root in folders.items():
        _probe(spark, Path(root), label, runtime)
        log.info(
            "storage check: executors (%s) share %s (%s) with this worker", runtime, label, root
        )
