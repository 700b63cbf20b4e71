"""Changelogs (FLIP-136): ``from_changelog`` replays a log of +I/-U/+U/-D rows, and
``to_changelog`` gives a table's rows, or the changes between two of its versions, as one.

Every expected answer is computed by hand in Python from the same input."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pandas as pd  # type: ignore[import-untyped]
import pytest

from tests.client.conftest import tessera

pytestmark = pytest.mark.django_db(transaction=True)

KEYED = (
    tessera.Schema.new_builder()
    .column("id", "BIGINT")
    .column("name", "STRING")
    .primary_key("id")
    .build()
)


def replay_by_key(log: list[tuple[str, int, str]]) -> dict[int, str]:
    """The table a keyed changelog describes, replayed one row at a time."""
    table: dict[int, str] = {}
    for op, key, name in log:
        if op in ("+I", "+U"):
            table[key] = name
        elif op == "-D":
            table.pop(key, None)
    return table


def frame(log: list[tuple[str, int, str]]) -> pd.DataFrame:
    return pd.DataFrame(
        {"op": [r[0] for r in log], "id": [r[1] for r in log], "name": [r[2] for r in log]}
    )


def rows_of(table: Any) -> dict[int, str]:
    result = table.to_pandas()
    assert list(result.columns) == ["id", "name"]
    assert result["id"].is_unique
    return dict(zip(result["id"].tolist(), result["name"].tolist(), strict=True))


def test_the_issue_log_leaves_what_a_replay_by_hand_gives(t_env):
    log = [("+I", 1, "a"), ("+I", 2, "b"), ("-U", 1, "a"), ("+U", 1, "c"), ("-D", 2, "b")]
    table = t_env.from_changelog(frame(log), KEYED)
    assert rows_of(table) == {1: "c"} == replay_by_key(log)
    assert table.get_schema().data_types == ["BIGINT", "STRING"]


def test_a_random_log_with_repeated_keys_matches_the_replay(t_env):
    rng = random.Random(16)
    log: list[tuple[str, int, str]] = []
    for i in range(400):
        key = rng.randrange(40)
        log.append((rng.choice(["+I", "+U", "-U", "-D", "+I"]), key, f"v{i}"))
    assert rows_of(t_env.from_changelog(frame(log), KEYED)) == replay_by_key(log)


def test_duplicate_keys_in_one_batch_the_last_wins_by_log_order(t_env):
    log = [("+I", 7, "first"), ("+I", 7, "second"), ("+U", 7, "third")]
    assert rows_of(t_env.from_changelog(frame(log), KEYED)) == {7: "third"}
    log = [("+I", 7, "first"), ("-D", 7, "first"), ("+I", 7, "again")]
    assert rows_of(t_env.from_changelog(frame(log), KEYED)) == {7: "again"}


def test_without_a_key_the_log_is_a_multiset(t_env):
    log = [
        ("+I", 1, "a"),
        ("+I", 1, "a"),
        ("+I", 2, "b"),
        ("-D", 1, "a"),
        ("-U", 2, "b"),
        ("+U", 2, "B"),
    ]
    result = t_env.from_changelog(frame(log)).to_pandas()
    expected: Counter[tuple[int, str]] = Counter()
    for op, key, name in log:
        expected[(key, name)] += 1 if op in ("+I", "+U") else -1
    got = Counter(zip(result["id"].tolist(), result["name"].tolist(), strict=True))
    assert got == +expected == Counter({(1, "a"): 1, (2, "B"): 1})


def test_a_pyspark_changelog_keeps_its_order(t_env, plain_spark):
    log = [("+I", 1, "a"), ("+U", 1, "b"), ("+I", 3, "x"), ("-D", 3, "x"), ("+U", 1, "z")]
    df = plain_spark.createDataFrame(log, "op STRING, id BIGINT, name STRING").coalesce(1)
    assert rows_of(t_env.from_changelog(df, KEYED)) == {1: "z"}


def test_rows_are_addressable_by_name_attribute_and_position(t_env):
    table = t_env.from_changelog(frame([("+I", 5, "five")]), KEYED)
    row = next(iter(table.collect()))
    assert row["name"] == row.name == row[1] == "five"
    assert row["id"] == row.id == row[0] == 5


def test_a_bad_changelog_is_refused_with_a_reason(t_env, plain_spark):
    with pytest.raises(tessera.ValidationError, match="column `op`"):
        t_env.from_changelog(pd.DataFrame({"id": [1]}), KEYED)
    with pytest.raises(tessera.ValidationError, match="'\\+X'"):
        t_env.from_changelog(frame([("+X", 1, "a")]), KEYED)
    bad_key = tessera.Schema.new_builder().column("id", "BIGINT").primary_key("nope").build()
    with pytest.raises(tessera.ValidationError, match="nope"):
        t_env.from_changelog(frame([("+I", 1, "a")]), bad_key)
    # A PySpark log is checked where it is read: by Spark, in the job.
    df = plain_spark.createDataFrame(
        [("+I", 1, "a"), ("?", 2, "b")], "op STRING, id BIGINT, name STRING"
    )
    with pytest.raises(tessera.TesseraError, match="row kind"):
        t_env.from_changelog(df, KEYED).to_pandas()


def test_to_changelog_of_a_table_is_its_rows_as_inserts(t_env):
    log = t_env.from_path("orders").order_by("id").to_changelog()
    assert list(log.columns) == ["op", "id", "customer", "price", "qty"]
    assert log["op"].tolist() == ["+I"] * 4
    assert log["id"].tolist() == [1, 2, 3, 4]
    with pytest.raises(tessera.ValidationError, match="already"):
        t_env.sql_query("SELECT id AS op FROM orders").to_changelog()


def history(t_env) -> None:
    """Table ``people`` (keyed by id) at version 0 (CTAS) and version 1 (OVERWRITE)."""
    t_env.execute_sql(
        "CREATE TABLE people (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED)"
    ).wait()
    t_env.execute_sql("INSERT INTO people VALUES (1, 'Ada'), (2, 'Bo'), (3, 'Cy')").wait()
    t_env.execute_sql("INSERT OVERWRITE people VALUES (1, 'Ada'), (2, 'Bob'), (4, 'Di')").wait()


def test_to_changelog_between_versions_gives_the_changes_by_key(t_env):
    history(t_env)
    versions = [int(r["version"]) for r in t_env.execute_sql("DESCRIBE HISTORY people").collect()]
    first, last = min(versions), max(versions)
    changes = t_env.from_path("people").to_changelog(first + 1, last)
    assert list(changes.itertuples(index=False, name=None)) == [
        ("-U", 2, "Bo"),
        ("+U", 2, "Bob"),
        ("-D", 3, "Cy"),
        ("+I", 4, "Di"),
    ]
    # To the current data when no end is given; nothing between a version and itself.
    assert len(t_env.from_path("people").to_changelog(first + 1)) == 4
    assert t_env.from_path("people").to_changelog(last, last).empty
    # Replaying the old version's rows and the changes gives the new version.
    old = t_env.sql_query(f"SELECT * FROM people VERSION AS OF {first + 1}").to_pandas()
    replay = [("+I", i, n) for i, n in zip(old["id"], old["name"], strict=True)]
    replay += list(changes.itertuples(index=False, name=None))
    assert replay_by_key(replay) == {1: "Ada", 2: "Bob", 4: "Di"}


def test_versions_are_checked_and_only_for_tables_read_by_path(t_env):
    with pytest.raises(tessera.ValidationError, match="version number"):
        t_env.from_path("orders").to_changelog(-1)
    with pytest.raises(tessera.ValidationError, match="version number"):
        t_env.from_path("orders").to_changelog("0 UNION SELECT 1")
    with pytest.raises(tessera.ValidationError, match="from_path"):
        t_env.from_path("orders").where("id > 1").to_changelog(0, 1)


def test_changes_of_a_managed_delta_table_are_its_change_feed(t_env):
    t_env.execute_sql("CREATE TABLE feed USING delta AS SELECT 1 AS id, 'a' AS name").wait()
    t_env.execute_sql("UPDATE feed SET name = 'b' WHERE id = 1").wait()
    table = t_env.from_path("feed")
    # The name as written, resolved by the server in the session's catalog and database.
    assert table.changes_sql(1, 2) == "SELECT * FROM table_changes('`feed`', 1, 2)"
    found = table.changes(1).order_by("_commit_version", "_change_type").to_pandas()
    assert list(found.columns)[:3] == ["id", "name", "_change_type"]
    kinds = zip(found["name"], found["_change_type"], found["_commit_version"], strict=True)
    assert list(kinds) == [
        ("a", "insert", 1),
        ("b", "update_postimage", 2),
        ("a", "update_preimage", 2),
    ]
    with pytest.raises(tessera.ValidationError, match="version number"):
        table.changes(-1)
    with pytest.raises(tessera.ValidationError, match="from_path"):
        table.where("id > 1").changes(0)
