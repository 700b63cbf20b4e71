"""``table_changes('t', start [, end])`` on managed Delta tables (issue 31 item 5, ADR 0019):
Delta's change data feed read on the table's directory between two recorded versions.

The expected changes come from an independent reader: delta-rs reads every version of the
table and the changes are their differences by key (insert, delete, update pre- and
post-image). delta-rs's own ``load_cdf`` is used when it can read the table: 1.6 refuses
change data feed scans of a table with column mapping, which every managed Delta table has.
Hostile: other kinds of tables, versions past the recorded one, paths, another user, and
forged plans (another reader option, a log naming a file outside the table)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pytest
from deltalake import DeltaTable

from tests.security.boundary import refused
from tests.tabledata.worker.test_managed_delta import _delta_rows, _row, _versions
from tests.worker_helpers import Pipeline, planned, submit_plan, wait_for_status

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker"),
]

COLUMNS = "id, name, _change_type, _commit_version"
ORDER = "ORDER BY _commit_version, id, _change_type DESC"


def _expected(path: str, start: int, end: int) -> list[list[Any]]:
    """The changes of versions ``start`` to ``end``, from delta-rs's rows at each version
    (keyed by ``id``), in ``ORDER``."""
    changes: list[list[Any]] = []
    before: dict[int, str] = {}
    if start > 0:
        before = {row[0]: row[1] for row in _delta_rows(path, start - 1)}
    for version in range(start, end + 1):
        after = {row[0]: row[1] for row in _delta_rows(path, version)}
        for key in sorted(before.keys() | after.keys()):
            if key not in before:
                changes.append([key, after[key], "insert", version])
            elif key not in after:
                changes.append([key, before[key], "delete", version])
            elif before[key] != after[key]:
                changes.append([key, after[key], "update_preimage", version])
                changes.append([key, after[key], "update_postimage", version])
                changes[-2][1] = before[key]
        before = after
    return changes


def _delta_rs_feed(path: str, start: int, end: int) -> list[list[Any]] | None:
    """delta-rs's own change feed, or None when it cannot read this table's."""
    try:
        reader = DeltaTable(path).load_cdf(starting_version=start, ending_version=end)
        rows = pa.table(reader.read_all()).to_pylist()
    except Exception as exc:  # delta-rs 1.6: column mapping is not supported for CDF scans
        assert "olumn mapping" in str(exc), exc
        return None
    found = [[r["id"], r["name"], r["_change_type"], r["_commit_version"]] for r in rows]
    rank = {"update_preimage": 0, "update_postimage": 1, "insert": 2, "delete": 3}
    return sorted(found, key=lambda r: (r[3], r[0], rank[r[2]]))


def test_table_changes_are_the_versions_differences(alice_sql, catalog) -> None:
    t = f"{catalog}.d.cf"
    # No CTAS: its job would cost as much as the INSERT (CI time); the INSERT makes the
    # empty version 0 and its rows' version 1.
    alice_sql.ok(f"CREATE TABLE {t} (id BIGINT, name STRING) USING delta")
    alice_sql.ok(f"INSERT INTO {t} SELECT id, concat('n', id) FROM range(5)")
    alice_sql.ok(f"UPDATE {t} SET name = 'u' WHERE id IN (1, 4)")
    alice_sql.ok(f"DELETE FROM {t} WHERE id = 0")
    path = _row(catalog, "cf").location
    versions = _versions(catalog, "cf")
    assert versions == [0, 1, 2, 3] == list(range(DeltaTable(path).version() + 1))
    everything = alice_sql.rows(f"SELECT {COLUMNS} FROM table_changes('{t}', 0) {ORDER}")
    assert everything == _expected(path, 0, 3)
    assert [r[2] for r in everything].count("update_postimage") == 2
    assert {r[2] for r in everything} == {
        "insert",
        "update_preimage",
        "update_postimage",
        "delete",
    }
    feed = _delta_rs_feed(path, 0, 3)
    if feed is not None:
        assert everything == feed
    # A range, in the current database, with an alias; the change columns' types.
    alice_sql.ok(f"USE {catalog}.d")
    assert alice_sql.rows(
        f"SELECT c.id, c.name, c._change_type, c._commit_version FROM table_changes('cf', 2, 3) "
        f"AS c {ORDER}"
    ) == _expected(path, 2, 3)
    assert alice_sql.rows(
        "SELECT typeof(_commit_version), typeof(_commit_timestamp), count(*) "
        "FROM table_changes('cf', 3, 3) GROUP BY 1, 2"
    ) == [["bigint", "timestamp", 1]]
    # Timestamps pick recorded versions: the first made since 2000, the one current in 2999.
    assert alice_sql.rows(
        "SELECT count(*) FROM table_changes('cf', '2000-01-01', '2999-01-01 00:00:00Z')"
    ) == [[len(everything)]]
    # A timestamp after the last version: no version made since.
    job = alice_sql.run("SELECT * FROM table_changes('cf', '2999-01-01')")
    refused(alice_sql, job, "VALIDATION_ERROR", "no version of", "was made at or after")

    # Another user without SELECT: the answer of any read of the table.
    bob = Pipeline("bob")
    plain = bob.run(f"SELECT * FROM {t}")
    assert plain["status"] == "FAILED", plain
    changes = bob.run(f"SELECT * FROM table_changes('{t}', 0)")
    refused(bob, changes, plain["error"]["code"])
    assert changes["error"]["message"] == plain["error"]["message"]

    # Hostile: past the recorded version, other kinds of relations, paths, bad arguments.
    alice_sql.ok("CREATE TABLE pq (id INT)")
    alice_sql.ok("CREATE VIEW vw AS SELECT 1 AS id")
    alice_sql.ok("CREATE TEMPORARY VIEW tv AS SELECT 1 AS id")
    for sql, code, fragment in (
        ("table_changes('cf', 4)", "VALIDATION_ERROR", "is beyond its latest version, 3"),
        ("table_changes('cf', 1, 7)", "VALIDATION_ERROR", "is beyond its latest version, 3"),
        ("table_changes('pq', 0)", "VALIDATION_ERROR", "not stored as Delta Lake"),
        ("table_changes('vw', 0)", "VALIDATION_ERROR", "it is a view"),
        ("table_changes('tv', 0)", "VALIDATION_ERROR", "it is a temporary view"),
        (f"table_changes('{path}', 0)", "FORBIDDEN_SQL", "by path"),
        (f"table_changes('delta.`{path}`', 0)", "FORBIDDEN_SQL", "by path"),
        ("table_changes('cf', 0, 1, 2)", "VALIDATION_ERROR", "not 4"),
        ("table_changes('cf', 0 + 1)", "VALIDATION_ERROR", "literals only"),
        ("table_changes('nope', 0)", "NOT_FOUND", "not found"),
    ):
        refused(alice_sql, alice_sql.run(f"SELECT * FROM {sql}"), code, fragment)
    _forged_feeds_are_refused(alice_sql, t, path)
    # A temporary view shadowing the table: not a Delta table.
    alice_sql.ok("CREATE TEMPORARY VIEW cf AS SELECT 1 AS id")
    job = alice_sql.run("SELECT * FROM table_changes('cf', 0)")
    refused(alice_sql, job, "VALIDATION_ERROR", "it is a temporary view")


def _forged(alice_sql, statement: str, travel: dict[str, str]) -> Any:
    plan = planned(alice_sql.session, statement)
    plan["relations"][0]["time_travel"] = travel
    job = submit_plan(alice_sql.user, plan, alice_sql.session)
    wait_for_status(job.pk, {"FINISHED", "FAILED"})
    job.refresh_from_db()
    return job


def _forged_feeds_are_refused(alice_sql, t: str, path: str) -> None:
    """Plans of ``table_changes('t', 0)`` with other reader options, and a log edited to
    name a file outside the table's directory."""
    statement = f"SELECT * FROM table_changes('{t}', 0)"
    feed = planned(alice_sql.session, statement)["relations"][0]["time_travel"]
    assert feed == {"readChangeFeed": "true", "startingVersion": "0", "endingVersion": "3"}
    for travel in (
        {**feed, "startingTimestamp": "2020-01-01"},
        {**feed, "endingVersion": "1 OR 1"},
        {**feed, "startingVersion": "4"},  # after the end
        {"readChangeFeed": "true", "startingVersion": "0"},
    ):
        job = _forged(alice_sql, statement, travel)
        assert job.status == "FAILED" and job.error["code"] == "FORBIDDEN_SQL", (travel, job.error)
    # A well-formed feed past the log's latest version (forged: the planner stops at the
    # recorded one): Delta's refusal, as a sentence.
    job = _forged(alice_sql, statement, {**feed, "startingVersion": "7", "endingVersion": "8"})
    assert job.status == "FAILED" and job.error["code"] == "VALIDATION_ERROR", job.error
    assert "from version 7 to 8 cannot be read" in job.error["message"], job.error
    assert path not in job.error["message"], job.error  # Delta's sentence, paths scrubbed
    # A commit naming a file outside the table's directory (a hand-edited log): refused.
    commit = Path(path, "_delta_log", f"{1:020d}.json")
    edited = []
    for line in commit.read_text().splitlines():
        action = json.loads(line)
        if "add" in action:
            action["add"]["path"] = "file:///etc/hostname"
        edited.append(json.dumps(action))
    commit.write_text("\n".join(edited) + "\n")
    job = alice_sql.run(statement)
    refused(alice_sql, job, "FORBIDDEN_SQL", "outside the table's path")
