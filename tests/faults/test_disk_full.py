"""The staging area's disk fills up mid-write, repeatedly.

The catalog's warehouse directory is a small tmpfs (8 MB, mounted here: needs root), so a
CTAS or an INSERT of ≈100 MB runs out of space while Spark writes its staging directory.
Invariant each time: the job ends FAILED with an error that says the disk is full (a
sentence, no traceback), no staging file is left, the permanent table is unchanged, and
the worker runs the next job.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from tests.faults.harness import (
    Owner,
    assert_ran_once,
    files_under,
    make_keep,
    new_owner,
    wait_left_nothing,
    wait_terminal,
)
from tests.faults.tally import inject, time_limit
from tests.worker_helpers import api_for, result_rows, submit_sql
from tests.workers import WorkerProcess

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    time_limit(200),
]

SIZE = "8m"
# ≈ 130 MB of incompressible text: far past the 8 MB the staging area has.
BIG_QUERY = "SELECT id, sha2(CAST(id AS STRING), 512) AS h FROM range(0, 1000000, 1, 2)"
# keep has one BIGINT column: ≈ 32 MB of random 60-bit integers.
BIG_INSERT = (
    "SELECT CAST(conv(substr(sha2(CAST(id AS STRING), 256), 1, 15), 16, 10) AS BIGINT) AS id "
    "FROM range(0, 4000000, 1, 2)"
)
END_BOUND = 180.0


@pytest.fixture
def small_disk(steady: WorkerProcess) -> Iterator[Owner]:
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    owner = new_owner("disk")
    owner.warehouse.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={SIZE}", "tmpfs", str(owner.warehouse)], check=True
    )
    try:
        yield owner
    finally:
        if subprocess.run(["umount", str(owner.warehouse)], check=False).returncode != 0:
            subprocess.run(["umount", "-l", str(owner.warehouse)], check=False)


def _check_disk_full(job: Any) -> None:
    assert job.status == "FAILED", (job.status, job.error)
    error = job.error or {}
    message = str(error.get("message"))
    assert "no space left" in message.lower(), error
    assert "Traceback" not in message and "\tat " not in message, error
    assert_ran_once(job.id)


def test_a_full_staging_disk_fails_the_write_and_leaves_the_table_as_it_was(
    small_disk: Owner,
) -> None:
    owner = small_disk
    make_keep(owner)
    api = api_for(owner.user)

    def attempt(number: int) -> None:
        before = owner.snapshot()
        ctas = number % 2 == 0
        name = f"big{number}"
        sql = (
            f"CREATE TABLE {owner.catalog}.d.{name} AS {BIG_QUERY}"
            if ctas
            else f"INSERT INTO {owner.catalog}.d.keep {BIG_INSERT}"
        )
        job = submit_sql(owner.user, sql)
        ended = wait_terminal(job.id, END_BOUND)
        _check_disk_full(ended)
        print(f"disk full #{number + 1} ({'CTAS' if ctas else 'INSERT'}): {ended.error}")
        wait_left_nothing(ended, owner, name)
        assert owner.snapshot() == before
        assert files_under(owner.warehouse) == [
            f"d/{os.path.basename(before[1])}/{f}" for f in before[2]
        ]
        count = submit_sql(owner.user, f"SELECT count(*) AS n FROM {owner.catalog}.d.keep")
        done = wait_terminal(count.id, END_BOUND)
        assert done.status == "FINISHED", (done.status, done.error)
        assert result_rows(api, count.id)[1] == [[owner.keep_rows]]

    inject("staging disks filled mid-write", attempt)
