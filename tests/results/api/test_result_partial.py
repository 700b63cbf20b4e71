"""``results.partial``: a result file readable while it is written, never past its progress
mark (a batch half written is not read), whole once renamed, gone once aborted."""

from __future__ import annotations

import os
import time
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pytest

from results import partial, store

SCHEMA = pa.schema([("id", pa.int64()), ("s", pa.string())])
COLUMNS = [{"name": "id", "data_type": "BIGINT"}, {"name": "s", "data_type": "STRING"}]


@pytest.fixture(autouse=True)
def results_dir(settings: Any, tmp_path: Any) -> Any:
    settings.RESULTS_DIR = tmp_path / "results"
    return settings.RESULTS_DIR


def batch(start: int, rows: int = 3) -> pa.RecordBatch:
    ids = list(range(start, start + rows))
    return pa.record_batch([pa.array(ids), pa.array([str(i) for i in ids])], schema=SCHEMA)


def test_a_tail_reads_what_is_written_and_follows_to_the_end():
    writer = partial.ResultWriter("j", SCHEMA, COLUMNS)
    with partial.ResultTail("j") as tail:
        assert list(tail.batches()) == []  # the schema is written with the first batch
        writer.write(batch(0))
        assert [b.num_rows for b in tail.batches()] == [3]
        mark = partial.read_progress("j")
        assert mark is not None and mark["rows"] == 3 and mark["batches"] == 1
        assert mark["columns"] == COLUMNS
        # Bytes past the mark (a batch being written) are not read.
        with open(store.partial_path("j"), "ab") as raw:
            raw.write(b"\xff\xff\xff\xff\x40\x00")
        assert list(tail.batches()) == [] and not tail.complete
        writer.write(batch(3))
        assert writer.finish() == 6
        assert [b.num_rows for b in tail.batches()] == [3] and tail.complete
        assert tail.rows == 6
    assert partial.read_progress("j") is None
    assert store.open_result("j").read_all()["id"].to_pylist() == list(range(6))
    table, complete = partial.read_written("j")
    assert complete and table is not None and table.num_rows == 6


def test_an_aborted_result_is_gone_for_its_readers():
    writer = partial.ResultWriter("j", SCHEMA, COLUMNS)
    writer.write(batch(0))
    with partial.ResultTail("j") as tail:
        assert [b.num_rows for b in tail.batches()] == [3]
        writer.abort()
        assert list(tail.batches()) == [] and tail.gone and not tail.complete
    assert partial.read_written("j") == (None, False)
    assert not store.delete_result("j")


def test_write_batches_truncates_and_leaves_only_the_result(results_dir):
    meta = partial.write_batches(
        "j", SCHEMA, (batch(i * 3) for i in range(5)), columns=COLUMNS, limit=7
    )
    assert meta["row_count"] == 7 and meta["truncated"] is True
    assert sorted(p.name for p in results_dir.iterdir()) == ["j.arrow"]


def test_partial_files_a_dead_worker_left_expire(results_dir, settings):
    writer = partial.ResultWriter("old", SCHEMA, COLUMNS)
    writer.write(batch(0))
    old = time.time() - settings.TESSERA_RESULT_TTL_SECONDS - 60
    for path in (store.partial_path("old"), store.progress_path("old")):
        os.utime(path, (old, old))
    assert store.expire_results() == 2
    assert list(results_dir.iterdir()) == []
