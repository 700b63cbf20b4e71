"""Streams read from Python (issue 35, item 5): a real streaming INSERT over the ``rate``
connector runs on the shared worker's Spark while the client reads its committed
micro-batches — ``collect()`` rows as they commit, ``stream_batches()`` one Arrow table per
batch, ``to_pandas(timeout=…, max_rows=…)`` what arrived — and a cancel ends the iterators
cleanly. The handshakes are the batches themselves (each ``next()`` returns once a version
has committed), never sleeps. Another user's job and a forged id are ``NOT_FOUND``."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest

from tests.client.conftest import connect_as, tessera

pytestmark = pytest.mark.slow

RATE = (
    "CREATE TEMPORARY TABLE r WITH ('connector' = 'rate', 'rows-per-second' = '20', "
    "'num-partitions' = '1')"
)


def _take(rows: Iterator[tessera.Row], count: int) -> list[tessera.Row]:
    return [next(rows) for _ in range(count)]


def _committed_versions(env: tessera.TableEnvironment) -> int:
    """The stream's committed versions of ``sink`` (from the table's history)."""
    history = env.execute_sql("DESCRIBE HISTORY sink").to_arrow()
    return sum(1 for op in history.column("operation").to_pylist() if op == "STREAMING UPDATE")


@pytest.fixture
def stream(
    t_env: tessera.TableEnvironment,
) -> Iterator[tuple[tessera.TableEnvironment, tessera.TableResult]]:
    """alice's streaming INSERT of the rate source into shop.sales.sink, RUNNING."""
    t_env.execute_sql(RATE).wait()
    t_env.execute_sql("CREATE TABLE sink (`timestamp` TIMESTAMP, `value` BIGINT)").wait()
    t_env.execute_sql("SET 'execution.checkpointing.interval' = '500 ms'").wait()
    result = t_env.execute_sql(
        "INSERT INTO sink /*+ OPTIONS('execution.runtime-mode' = 'streaming') */ "
        "SELECT `timestamp`, `value` FROM r"
    )
    assert result.job["streaming"] is True
    try:
        yield t_env, result
    finally:
        result.cancel()


def test_a_stream_is_read_batch_by_batch_while_it_runs_and_a_cancel_ends_it(
    stream: tuple[tessera.TableEnvironment, tessera.TableResult],
) -> None:
    env, result = stream
    # collect(): rows as the micro-batches commit. The rate source counts 0, 1, 2…: each
    # value arrives once (exactly once); batches come in commit order, the rows of one batch
    # in no particular order, so only whole batches are a prefix of the sequence.
    rows = result.collect()
    first = _take(rows, 5)
    assert result.status == "RUNNING"
    assert first[0].fields == ("timestamp", "value")
    values = [row.value for row in first]
    more = _take(rows, 30)  # several batches later: the stream keeps committing
    values += [row.value for row in more]
    assert len(set(values)) == len(values) and min(values) == 0
    assert _committed_versions(env) >= 2

    # stream_batches(): one Arrow table per committed batch, the batches in version order.
    batches = result.stream_batches()
    tables = [next(batches) for _ in range(3)]
    assert all(t.column_names == ["timestamp", "value"] for t in tables)
    # (a batch may be empty: the rate source's first one is, and is committed all the same)
    assert sum(t.num_rows for t in tables) > 0
    streamed = [v for t in tables for v in t.column("value").to_pylist()]
    assert sorted(streamed) == list(range(len(streamed)))
    batches.close()  # leaves the job running
    assert result.status == "RUNNING"

    # to_pandas(max_rows=…): returns as soon as that many rows arrived, never more.
    head = result.to_pandas(max_rows=7)
    assert list(head.columns) == ["timestamp", "value"]
    assert len(head) == 7 and head["value"].is_unique
    assert result.to_arrow(max_rows=0).num_rows == 0

    # to_pandas(timeout=…): what the batches committed so far hold (partial: the stream runs
    # on), within the timeout instead of blocking forever.
    started = time.monotonic()
    partial = result.to_pandas(timeout=2)
    assert time.monotonic() - started < 60
    assert result.status == "RUNNING"
    got = sorted(partial["value"].tolist())
    assert len(got) >= len(values) and got == list(range(len(got)))

    # A cancel ends a reading iterator cleanly: the batches committed before it, then the end.
    assert result.cancel() in ("CANCELED", "RUNNING")
    rest = list(rows)
    every = sorted(values + [row.value for row in rest])
    assert every == list(range(len(every)))
    assert result.status == "CANCELED"
    kept = result.to_arrow(timeout=30)  # the committed batches stay readable, read at once
    assert sorted(kept.column("value").to_pylist()) == every
    with pytest.raises(tessera.errors.CanceledError):
        result.wait()


def test_another_users_stream_and_a_forged_id_are_not_found(
    stream: tuple[tessera.TableEnvironment, tessera.TableResult], shop: str
) -> None:
    _, result = stream
    with connect_as(shop, "bob") as bob:
        for job_id in (result.job_id, str(uuid.uuid4())):
            forged = tessera.TableResult(
                bob._http, {"id": job_id, "status": "RUNNING", "streaming": True, "kind": "insert"}
            )
            with pytest.raises(tessera.errors.NotFoundError):
                next(forged.stream_batches(timeout=5))
            with pytest.raises(tessera.errors.NotFoundError):
                forged.to_pandas(timeout=5)
            with pytest.raises(tessera.errors.NotFoundError):
                next(forged.collect(timeout=5))
        # Nor can bob read the sink's versions the batches are read from.
        with pytest.raises(tessera.errors.TesseraError) as refused:
            bob.execute_sql("SELECT * FROM shop.sales.sink VERSION AS OF 1").to_arrow()
        assert refused.value.code in ("PERMISSION_DENIED", "NOT_FOUND")
    assert result.status == "RUNNING"


def test_a_streaming_select_gives_its_preview_not_its_batches(
    t_env: tessera.TableEnvironment,
) -> None:
    t_env.execute_sql(RATE).wait()
    t_env.execute_sql("SET 'execution.runtime-mode' = 'streaming'").wait()
    preview = t_env.execute_sql("SELECT `value` FROM r")
    try:
        assert preview.job["streaming"] is True
        with pytest.raises(tessera.errors.UnsupportedError, match="streaming SELECT"):
            next(preview.collect())
        with pytest.raises(tessera.errors.UnsupportedError):
            next(preview.stream_batches())
        tail = preview.to_pandas(timeout=120, max_rows=1000)
        assert len(tail) > 0 and preview.status == "RUNNING"
        values = tail["value"].tolist()
        assert sorted(values) == list(range(min(values), min(values) + len(values)))
    finally:
        preview.cancel()


def test_a_keyed_streams_batches_are_its_changes_with_their_row_kinds(
    t_env: tessera.TableEnvironment,
) -> None:
    t_env.execute_sql(RATE).wait()
    t_env.execute_sql("CREATE TABLE agg (k BIGINT, n BIGINT, PRIMARY KEY (k) NOT ENFORCED)").wait()
    t_env.execute_sql("SET 'execution.checkpointing.interval' = '500 ms'").wait()
    result = t_env.execute_sql(
        "INSERT INTO agg /*+ OPTIONS('execution.runtime-mode' = 'streaming') */ "
        "SELECT `value` % 3 AS k, count(*) AS n FROM r GROUP BY `value` % 3"
    )
    try:
        kinds: set[str] = set()
        batches = result.stream_batches()
        while "+U" not in kinds:  # each next() returns once a batch has committed
            table = next(batches)
            assert table.column_names == ["op", "k", "n"]
            rows = table.to_pylist()
            kinds |= {row["op"] for row in rows}
            before = {row["k"]: row["n"] for row in rows if row["op"] == "-U"}
            after = {row["k"]: row["n"] for row in rows if row["op"] == "+U"}
            assert before.keys() == after.keys()
            assert all(after[k] > before[k] for k in after)  # counts only grow
        assert kinds <= {"+I", "-U", "+U"}
        assert "+I" in kinds
        result.cancel()
        for table in batches:  # ends cleanly after the cancel
            assert table.column_names == ["op", "k", "n"]
        assert result.status == "CANCELED"
    finally:
        result.cancel()
