"""Upserts by primary key on a real worker (docs/writes.md, "Upserts"): a changelog
(+I/-U/+U/-D) or plain rows into a keyed managed table leave exactly what a replay in Python
gives; the last row per key wins by input order; the refusals; a failed upsert leaves the
table untouched; concurrent upserts never lose an update."""

from __future__ import annotations

import random
import uuid
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from catalog.models import Table, TableVersion
from jobs.models import Job, JobEvent
from tests.waiting import wait_until
from tests.worker_helpers import Pipeline, events, result_rows, wait_job

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker"),
]

Row = tuple[int, str, int]


def create_keyed(alice_sql: Pipeline, path: str, upsert: bool = True) -> None:
    options = " WITH ('write.mode' = 'upsert')" if upsert else ""
    alice_sql.ok(
        f"CREATE TABLE {path} (id BIGINT, name STRING, qty INT, "
        f"PRIMARY KEY (id) NOT ENFORCED){options}"
    )


@pytest.fixture
def keyed(alice_sql: Pipeline, catalog: str) -> str:
    """``k`` (id BIGINT key, name, qty) in upsert mode, with rows 1..5."""
    path = f"{catalog}.d.k"
    create_keyed(alice_sql, path)
    alice_sql.ok(f"INSERT INTO {path} SELECT id, concat('n', id), CAST(id AS INT) FROM range(1, 6)")
    return path


def table_row(path: str) -> Table:
    c, d, n = path.split(".")
    return Table.objects.get(database__catalog__name=c, database__name=d, name_key=n.lower())


def rows_of(alice_sql: Pipeline, path: str) -> list[Row]:
    rows = alice_sql.rows(f"SELECT id, name, qty FROM {path}")
    return sorted((int(r[0]), str(r[1]), int(r[2])) for r in rows)


def replay(base: list[Row], changes: list[tuple[int, str, int, str]]) -> list[Row]:
    """The by-hand replay: each change in order, by key."""
    state = {row[0]: row for row in base}
    for key, name, qty, op in changes:
        if op in ("+I", "+U"):
            state[key] = (key, name, qty)
        elif op == "-D":
            state.pop(key, None)
    return sorted(state.values())


def values(changes: list[tuple[int, str, int, str]]) -> str:
    rows = ", ".join(f"({k}, '{n}', {q}, '{op}')" for k, n, q, op in changes)
    return f"SELECT * FROM VALUES {rows} AS t(id, name, qty, op)"


def test_changelog_replay(alice_sql: Pipeline, keyed: str) -> None:
    before = rows_of(alice_sql, keyed)
    old_location = table_row(keyed).location
    changes = [
        (10, "ten", 10, "+I"),
        (11, "eleven", 11, "+I"),
        (10, "ten", 10, "-U"),
        (10, "TEN", 100, "+U"),
        (11, "eleven", 11, "-D"),
        (2, "two", 2, "-D"),
        (3, "n3", 3, "-U"),
        (3, "THREE", 33, "+U"),
    ]
    job = alice_sql.ok(f"INSERT INTO {keyed} {values(changes)}")
    assert rows_of(alice_sql, keyed) == replay(before, changes)
    # +I 10, +U 3 (existing), -D 2 (existing); 11 was inserted and deleted in the batch.
    message = result_rows(alice_sql.api, job["id"])[1][0][0]
    assert message.endswith(": 1 inserted, 1 updated, 1 deleted; it has 5 rows."), message
    staging = Job.objects.get(pk=job["id"]).staging
    (item,) = staging.values()
    assert item["operation"] == "UPSERT" and item["mode"] == "upsert"
    assert item["metrics"] == {"inserted": 1, "updated": 1, "deleted": 1}
    assert item["base_location"] == old_location
    table = table_row(keyed)
    # A new version; the one it replaced stays readable (table versions, docs/writes.md).
    assert table.location != old_location and Path(old_location).exists()
    latest = TableVersion.objects.filter(table=table).order_by("-version").first()
    assert latest is not None and latest.location == table.location
    assert latest.operation == "UPSERT" and latest.metrics == item["metrics"]


def test_randomized_against_a_python_replay(alice_sql: Pipeline, keyed: str) -> None:
    rng = random.Random(16)
    before = rows_of(alice_sql, keyed)
    for _ in range(2):
        changes = [
            (
                rng.randrange(0, 40),
                f"v{i}",
                rng.randrange(0, 1000),
                rng.choice(["+I", "-U", "+U", "-D"]),
            )
            for i in range(300)
        ]
        alice_sql.ok(f"INSERT INTO {keyed} {values(changes)}")
        before = replay(before, changes)
        assert rows_of(alice_sql, keyed) == before


def test_duplicate_keys_without_op_last_wins(alice_sql: Pipeline, keyed: str) -> None:
    # range(0, 9, 1, 3): three partitions, in order; key id % 3: rows 6, 7, 8 come last.
    alice_sql.ok(
        f"INSERT INTO {keyed} SELECT id % 3, concat('r', id), CAST(id AS INT) "
        "FROM range(0, 9, 1, 3)"
    )
    rows = rows_of(alice_sql, keyed)
    assert rows == [
        (0, "r6", 6),
        (1, "r7", 7),
        (2, "r8", 8),
        (3, "n3", 3),
        (4, "n4", 4),
        (5, "n5", 5),
    ]


def test_column_list_and_op_column(alice_sql: Pipeline, keyed: str) -> None:
    alice_sql.ok(f"INSERT INTO {keyed} (qty, id) SELECT 77, 4 UNION ALL SELECT 88, 9")
    rows = {r[0]: r for r in alice_sql.rows(f"SELECT id, name, qty FROM {keyed}")}
    assert rows[4] == [4, None, 77] and rows[9] == [9, None, 88], rows
    # The row-kind column is found by its name in the query, never listed.
    alice_sql.ok(f"INSERT INTO {keyed} (id) SELECT * FROM VALUES ('-D', 4), ('-D', 9) AS t(op, id)")
    assert [r[0] for r in rows_of(alice_sql, keyed)] == [1, 2, 3, 5]


def test_table_option_versus_hint(alice_sql: Pipeline, catalog: str) -> None:
    plain = f"{catalog}.d.p"
    create_keyed(alice_sql, plain, upsert=False)
    alice_sql.ok(f"INSERT INTO {plain} VALUES (1, 'a', 1), (2, 'b', 2)")
    alice_sql.ok(f"INSERT INTO {plain} VALUES (1, 'dup', 9)")  # append: the key is not enforced
    assert len(rows_of(alice_sql, plain)) == 3
    hinted = alice_sql.ok(
        f"INSERT INTO {plain} /*+ OPTIONS('write.mode' = 'upsert') */ VALUES (1, 'one', 10)"
    )
    assert rows_of(alice_sql, plain) == [(1, "one", 10), (2, "b", 2)]
    # Both stored rows of key 1 were replaced by the one upserted row.
    assert "2 updated, 0 deleted" in result_rows(alice_sql.api, hinted["id"])[1][0][0]
    upserting = f"{catalog}.d.u"
    create_keyed(alice_sql, upserting)
    alice_sql.ok(f"INSERT INTO {upserting} VALUES (1, 'a', 1)")
    alice_sql.ok(f"INSERT INTO {upserting} VALUES (1, 'b', 2)")
    assert rows_of(alice_sql, upserting) == [(1, "b", 2)]
    alice_sql.ok(
        f"INSERT INTO {upserting} /*+ OPTIONS('write.mode'='append') */ VALUES (1, 'c', 3)"
    )
    assert rows_of(alice_sql, upserting) == [(1, "b", 2), (1, "c", 3)]


def _refused(alice_sql: Pipeline, sql: str, code: str, *words: str) -> dict[str, Any]:
    job = alice_sql.run(sql)
    assert job["status"] == "FAILED", job
    assert job["error"]["code"] == code, job["error"]
    for word in words:
        assert word in job["error"]["message"], job["error"]
    return job


def test_refusals_at_planning(alice_sql: Pipeline, shared_catalog: str, keyed: str) -> None:
    # Shared with everyone: carol and bob may read it; writing into it needs MODIFY.
    catalog = shared_catalog
    nokey = f"{catalog}.d.nokey"
    _refused(
        alice_sql,
        f"CREATE TABLE {nokey} (id BIGINT) WITH ('write.mode' = 'upsert')",
        "VALIDATION_ERROR",
        "primary key",
    )
    alice_sql.ok(f"CREATE TABLE {nokey} (id BIGINT)")
    _refused(
        alice_sql,
        f"INSERT INTO {nokey} /*+ OPTIONS('write.mode' = 'upsert') */ SELECT 1",
        "VALIDATION_ERROR",
        "no primary key",
    )
    _refused(
        alice_sql, f"INSERT OVERWRITE {keyed} SELECT 1, 'a', 1", "VALIDATION_ERROR", "OVERWRITE"
    )
    _refused(
        alice_sql,
        f"INSERT INTO {keyed} /*+ OPTIONS('path' = '/tmp/x') */ SELECT 1, 'a', 1",
        "VALIDATION_ERROR",
        "'path'",
    )
    _refused(
        alice_sql,
        f"INSERT INTO {keyed} /*+ OPTIONS('write.mode' = 'merge') */ SELECT 1, 'a', 1",
        "VALIDATION_ERROR",
        "append, upsert",
    )
    _refused(
        alice_sql,
        f"INSERT INTO {keyed} (name) /*+ OPTIONS('write.mode' = 'upsert') */ SELECT 'a'",
        "VALIDATION_ERROR",
        "right after the table name",
    )
    _refused(
        alice_sql,
        f"CREATE TABLE {catalog}.d.c WITH ('write.mode' = 'upsert') AS SELECT 1 AS id",
        "VALIDATION_ERROR",
        "primary key",
    )
    external = Path(settings.TESSERA_STORAGE_ROOTS[0]) / f"ext-{uuid.uuid4().hex[:10]}"
    _refused(
        alice_sql,
        f"CREATE TABLE {catalog}.d.x (id BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH "
        f"('connector' = 'parquet', 'path' = '{external}', 'write.mode' = 'upsert')",
        "VALIDATION_ERROR",
        "managed tables only",
    )
    carol = Pipeline("carol", catalog=catalog)
    carol.ok(
        f"CREATE TEMPORARY TABLE tmp (id BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH "
        f"('connector' = 'parquet', 'path' = '{external}')"
    )
    _refused(
        carol,
        "INSERT INTO tmp /*+ OPTIONS('write.mode' = 'upsert') */ SELECT 1",
        "UNSUPPORTED_STATEMENT",
        "temporary",
    )
    bob = Pipeline("bob")
    _refused(
        bob,
        f"INSERT INTO {keyed} /*+ OPTIONS('write.mode' = 'upsert') */ SELECT 1, 'b', 1",
        "PERMISSION_DENIED",
    )
    assert rows_of(alice_sql, keyed) == [(i, f"n{i}", i) for i in range(1, 6)]


def test_failed_upserts_leave_the_table_untouched(alice_sql: Pipeline, keyed: str) -> None:
    location = table_row(keyed).location
    before = rows_of(alice_sql, keyed)
    bad = _refused(
        alice_sql,
        f"INSERT INTO {keyed} {values([(1, 'x', 1, '+U'), (2, 'y', 2, '*X')])}",
        "VALIDATION_ERROR",
        "'*X'",
        "row kind",
    )
    assert "data_committed" not in events(bad["id"])
    _refused(
        alice_sql,
        f"INSERT INTO {keyed} SELECT CAST(NULL AS BIGINT), 'nokey', 1",
        "VALIDATION_ERROR",
        "NULL key",
    )
    # A huge hint is refused without reading it.
    _refused(
        alice_sql,
        f"INSERT INTO {keyed} /*+ OPTIONS('write.mode' = '{'u' * 5000}') */ SELECT 1, 'a', 1",
        "VALIDATION_ERROR",
    )
    assert table_row(keyed).location == location
    assert rows_of(alice_sql, keyed) == before
    root = Path(location).parent
    # Nothing of the failed jobs is left: only the table's versions have directories.
    versions = sorted(
        Path(v).name
        for v in TableVersion.objects.filter(table=table_row(keyed)).values_list(
            "location", flat=True
        )
    )
    assert Path(location).name in versions
    wait_until(lambda: sorted(p.name for p in root.iterdir()) == versions, 20, 0.2)


def test_concurrent_upserts_lose_no_update(alice_sql: Pipeline, keyed: str) -> None:
    """A slow upsert whose base moves on (a quick upsert commits while it runs) merges again
    into the new base: both updates are in the table."""
    slow = alice_sql.submit(
        f"INSERT INTO {keyed} SELECT 1, 'slow', CAST(count(*) % 7 AS INT) "
        "FROM range(0, 20000) a CROSS JOIN range(0, 40000) b WHERE a.id + b.id < 0 OR a.id = 0"
    )
    wait_until(lambda: Job.objects.get(pk=slow).status == "RUNNING", 60, 0.1, "the slow upsert")
    fast = alice_sql.run(f"INSERT INTO {keyed} VALUES (2, 'fast', 2), (99, 'new', 99)")
    assert fast["status"] == "FINISHED", fast
    done = wait_job(alice_sql.api, slow, timeout=240)
    rows = {r[0]: r for r in rows_of(alice_sql, keyed)}
    print("slow upsert:", done["status"], events(slow))
    if done["status"] == "FINISHED":
        assert rows[1][1] == "slow" and rows[2][1] == "fast" and 99 in rows, rows
        fast_done = Job.objects.get(pk=fast["id"]).finished_at
        written = JobEvent.objects.get(job_id=slow, type="data_written").at
        if fast_done is not None and fast_done < written:  # its base moved while it merged
            assert "upsert_retried" in events(slow), events(slow)
    else:  # never a silent loss: the loser says so and the winner's rows are there
        assert done["error"]["code"] == "CONFLICT", done
        assert rows[2][1] == "fast" and rows[1][1] == "n1"


def test_two_concurrent_upserts(alice_sql: Pipeline, keyed: str) -> None:
    """Two upserts submitted together (the worker runs both at once): each one's update is
    in the table, or one failed with CONFLICT and the other's rows are there."""
    ids = [
        alice_sql.submit(
            f"INSERT INTO {keyed} SELECT {k}, 'w{k}', 1 FROM range(0, 2000000) GROUP BY 1, 2, 3"
        )
        for k in (1, 2)
    ]
    jobs = [wait_job(alice_sql.api, i, timeout=240) for i in ids]
    rows = {r[0]: r for r in rows_of(alice_sql, keyed)}
    print("two upserts:", [(j["status"], events(j["id"])) for j in jobs])
    for key, job in zip((1, 2), jobs, strict=True):
        if job["status"] == "FINISHED":
            assert rows[key][1] == f"w{key}", (rows, jobs)
        else:
            assert job["error"]["code"] == "CONFLICT", job
            assert rows[key][1] == f"n{key}"
    assert any(job["status"] == "FINISHED" for job in jobs), jobs


def test_partitioned_keyed_table(alice_sql: Pipeline, catalog: str) -> None:
    path = f"{catalog}.d.parts"
    alice_sql.ok(
        f"CREATE TABLE {path} (id BIGINT, name STRING, qty INT, PRIMARY KEY (id) NOT ENFORCED) "
        "PARTITIONED BY (qty) WITH ('write.mode' = 'upsert')"
    )
    alice_sql.ok(
        f"INSERT INTO {path} SELECT id, concat('n', id), CAST(id % 3 AS INT) FROM range(0, 9)"
    )
    changes = [(1, "moved", 2, "+U"), (4, "n4", 1, "-D"), (20, "new", 0, "+I")]
    alice_sql.ok(f"INSERT INTO {path} {values(changes)}")
    base = [(i, f"n{i}", i % 3) for i in range(9)]
    assert rows_of(alice_sql, path) == replay(base, changes)
    location = Path(table_row(path).location)
    assert sorted(p.name for p in location.iterdir() if p.is_dir()) == ["qty=0", "qty=1", "qty=2"]
