"""Delta Lake is in every Spark driver the worker starts (pom.xml, ``engine.spark_config``;
ADR 0018): what it writes is a Delta table that delta-rs (the ``deltalake`` package, no
Spark) reads at every version, and its statements pass the guard only where planned."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

from core.planner.errors import ForbiddenSql
from core.planner.spark_guard import Allowed, check_tree
from engine import spark_config

pytestmark = pytest.mark.spark


def test_the_worker_driver_has_delta_lake() -> None:
    options = spark_config.classic_options("local[1]", "512m")
    jars = options["spark.jars"].split(",")
    assert any(Path(jar).name.startswith("delta-spark_4.2_2.13-") for jar in jars)
    assert all(Path(jar).is_file() for jar in jars)
    assert options["spark.sql.extensions"] == "io.delta.sql.DeltaSparkSessionExtension"


def test_missing_jars_say_how_to_install_them(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(spark_config, "DELTA_JARS_DIR", tmp_path)
    with pytest.raises(spark_config.DeltaJarsMissing, match="run `make install`"):
        spark_config.classic_options("local[1]", "512m")


def test_delta_rs_reads_every_version_spark_wrote(plain_spark: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    plain_spark.range(0, 5).write.format("delta").save(path)
    plain_spark.range(5, 8).write.format("delta").mode("append").save(path)
    plain_spark.sql(f"DELETE FROM delta.`{path}` WHERE id % 2 = 0")

    for version in range(3):
        spark_rows = sorted(
            row.id
            for row in plain_spark.read.format("delta")
            .option("versionAsOf", version)
            .load(path)
            .collect()
        )
        delta_rs_rows = sorted(
            DeltaTable(path, version=version).to_pyarrow_table()["id"].to_pylist()
        )
        assert delta_rs_rows == spark_rows
    assert sorted(DeltaTable(path).to_pyarrow_table()["id"].to_pylist()) == [1, 3, 5, 7]
    operations = [entry["operation"] for entry in DeltaTable(path).history()]
    assert operations == ["DELETE", "WRITE", "WRITE"]


@pytest.mark.parametrize(
    "sql",
    [
        "VACUUM t RETAIN 0 HOURS",
        "OPTIMIZE t ZORDER BY (id)",
        "DESCRIBE HISTORY t",
        "RESTORE TABLE t TO VERSION AS OF 0",
        "CONVERT TO DELTA parquet.`/etc`",
        "DELETE FROM delta.`/etc/passwd` WHERE true",
    ],
)
def test_delta_statements_are_refused_until_planned(plain_spark: Any, sql: str) -> None:
    """Delta's parser adds statements; the guard's closed allow-list refuses each one no
    rule of the planner allows yet (a hostile path among them)."""
    from engine import sqlguard

    session = plain_spark.newSession()
    session.conf.set("spark.sql.variable.substitute", "false")
    tree = sqlguard.parse(session, sql)
    with pytest.raises(ForbiddenSql):
        check_tree(tree, Allowed.of(relations=["t"]), "query")


def test_a_conflicting_commit_is_a_write_conflict_and_commits_nothing(
    plain_spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ADR 0019's commit: files staged against version 0, another writer commits version 1
    meanwhile; an overwrite staged at 0 conflicts (WRITE_CONFLICT, the log stays at 1), an
    append staged at 0 commutes with it."""
    from core.errors import WriteConflict
    from engine import delta_tables

    path = str(tmp_path / "managed")
    monkeypatch.setattr(delta_tables, "checked_location", lambda spark, entry, shown: path)
    staged = delta_tables.stage(plain_spark, path, plain_spark.range(0, 3), [])
    assert staged["delta_created"] == 0 and staged["delta_base"] == 0
    assert DeltaTable(path).version() == 0  # staged files are not committed
    entry = {"table": "`c`.`d`.`t`", "identifier": ["c", "d", "t"], "mode": "overwrite", **staged}
    plain_spark.range(10, 12).write.format("delta").mode("append").save(path)
    with pytest.raises(WriteConflict, match="nothing was committed") as caught:
        delta_tables.commit(plain_spark, entry)
    assert caught.value.code == "WRITE_CONFLICT"
    assert DeltaTable(path).version() == 1
    assert delta_tables.commit(plain_spark, {**entry, "mode": "insert"}) == 2
    rows = sorted(r.id for r in plain_spark.read.format("delta").load(path).collect())
    assert rows == [0, 1, 2, 10, 11]
    properties = DeltaTable(path).metadata().configuration
    assert properties["delta.columnMapping.mode"] == "name"


def test_spark_connect_refuses_managed_delta_writes(settings: Any) -> None:
    from core.errors import CoreError
    from engine import delta_tables

    settings.SPARK_REMOTE = "sc://localhost:15002"
    with pytest.raises(CoreError, match="Spark Connect runtime does not expose"):
        delta_tables.refuse_connect("`c`.`d`.`t`")


def _ids(spark: Any, path: str, version: int) -> list[tuple[int, str]]:
    frame = spark.read.format("delta").option("versionAsOf", version).load(path)
    return sorted((row.id, row.name) for row in frame.collect())


def test_a_row_change_is_undone_by_a_compensating_commit(plain_spark: Any, tmp_path: Path) -> None:
    """ADR 0019 "Row-level DML": a change Delta committed that Tessera did not record is
    reversed by a commit (never RESTORE), deletion vectors included; a commit since that
    touched the same files makes the undo Delta's conflict, nothing committed."""
    import json

    from core.errors import WriteConflict
    from engine import row_changes

    path = str(tmp_path / "u")
    plain_spark.sql(
        f"CREATE TABLE delta.`{path}` (id BIGINT, name STRING) USING delta TBLPROPERTIES ("
        "'delta.enableDeletionVectors' = 'true', 'delta.enableChangeDataFeed' = 'true', "
        "'delta.columnMapping.mode' = 'name')"
    )
    plain_spark.range(0, 8).selectExpr("id", "concat('n', id) AS name").coalesce(1).write.format(
        "delta"
    ).mode("append").save(path)
    plain_spark.sql(f"UPDATE delta.`{path}` SET name = 'x' WHERE id = 2")  # version 2
    assert row_changes.latest_version(path) == 2
    log = Path(path, "_delta_log", f"{2:020d}.json").read_text().splitlines()
    assert any(json.loads(line).get("add", {}).get("deletionVector") for line in log)
    made = row_changes.undo(plain_spark, path, 2)
    assert made == 3
    assert _ids(plain_spark, path, 3) == _ids(plain_spark, path, 1)
    assert DeltaTable(path).version() == 3
    assert row_changes.commit_info(path, 3)["userMetadata"] == "tessera-undo:2"
    # Version 1 was recorded: a change and its undo since do not conflict with it.
    assert row_changes.readable_from(path, 1, "t", ["c", "d", "t"]) == 3
    plain_spark.sql(f"DELETE FROM delta.`{path}` WHERE id = 5")  # version 4
    with pytest.raises(WriteConflict):
        row_changes.readable_from(path, 3, "t", ["c", "d", "t"])
    plain_spark.sql(f"UPDATE delta.`{path}` SET name = 'y' WHERE id = 6")  # 5: same file
    with pytest.raises(Exception, match=r"(?i)concurrent|conflict"):
        row_changes.undo(plain_spark, path, 4)
    assert row_changes.latest_version(path) == 5
    # A change no job recorded (its worker died) is undone by the next change's check.
    plain_spark.sql(f"DELETE FROM delta.`{path}` WHERE id = 7")  # version 6

    def orphan(version: int, marker: str) -> bool:
        row_changes.undo(plain_spark, path, version)
        return True

    assert row_changes.readable_from(path, 5, "t", ["c", "d", "t"], orphan) == 7
    assert _ids(plain_spark, path, 7) == _ids(plain_spark, path, 5)
