"""What is particular to a standalone cluster: jobs really run in the cluster's executors,
and a worker whose executors do not share its storage refuses to run anything, saying why
(``engine.storage_check``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.runtimes.standalone import (
    StandaloneCluster,
    cluster_defaults,
    start_standalone_cluster,
)
from tests.worker_helpers import create_user, submit_sql, wait_for_status
from tests.workers import WorkerProcess, purge_queue

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("own_workers_only"),
]


def test_jobs_run_in_the_cluster_s_executors(
    standalone_cluster: StandaloneCluster,
    django_db_blocker: Any,
    tmp_path: Path,
) -> None:
    conf = cluster_defaults(tmp_path / "conf")
    worker = WorkerProcess(
        "rt-cluster-app",
        tmp_path / "worker.log",
        django_db_blocker,
        {"SPARK_MASTER": standalone_cluster.url, "SPARK_CONF_DIR": str(conf)},
    )
    purge_queue()
    worker.start()
    try:
        user = create_user("carla")
        job = wait_for_status(
            submit_sql(user, "SELECT sum(id) AS s FROM range(0, 1000000, 1, 4)").id,
            {"FINISHED", "FAILED"},
            120,
        )
        assert job.status == "FINISHED", job.error
        master_log = (standalone_cluster.folder / "master.log").read_text(errors="replace")
        assert "Registering app tessera-worker" in master_log
        assert "Launching executor" in master_log
        assert "storage check: executors (cluster" in worker.log_tail(400)
    finally:
        worker.stop()
        purge_queue()


def test_storage_the_executors_do_not_share_fails_jobs_with_a_clear_error(
    django_db_blocker: Any, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    (data_dir / "warehouse").mkdir(parents=True)
    cluster = start_standalone_cluster(tmp_path / "cluster", hide=data_dir)
    try:
        worker = WorkerProcess(
            "rt-cluster-apart",
            tmp_path / "worker.log",
            django_db_blocker,
            {
                "SPARK_MASTER": cluster.url,
                "SPARK_CONF_DIR": str(cluster_defaults(tmp_path / "conf")),
                "TESSERA_DATA_DIR": str(data_dir),
                "TESSERA_STORAGE_ROOTS": str(data_dir / "external"),
            },
        )
        purge_queue()
        worker.start()
        try:
            user = create_user("dora")
            job = wait_for_status(
                submit_sql(user, "SELECT 1 AS one").id, {"FINISHED", "FAILED"}, 180
            )
            assert job.status == "FAILED"
            assert job.error is not None
            assert job.error["code"] == "STORAGE_UNREACHABLE", job.error
            message = job.error["message"]
            assert "executors (cluster spark://127.0.0.1:" in message
            assert "the warehouse (TESSERA_DATA_DIR/warehouse)" in message
            assert "shared" in message and "docs/deploy.md" in message
            assert str(data_dir) not in message  # no server paths for users
            assert "Traceback" not in message
            assert not list((data_dir / "warehouse").glob(".tessera-probe-*"))
        finally:
            worker.stop()
            purge_queue()
    finally:
        cluster.stop()
