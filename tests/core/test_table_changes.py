"""``table_changes('name', start [, end])`` in the planner (issue 31 item 5): the change data
feed of a managed Delta table, planned as a relation Delta reads with ``readChangeFeed``
between two recorded versions; Spark sees only the alias."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from core.errors import CoreError, NotFound, PermissionDenied
from core.planner import ForbiddenSql, Plan, UnsupportedStatement, plan_statement
from core.privileges import Privilege
from tests.core.test_delta_tables import DELTA_PATH, _catalog
from tests.core.test_planner_grants import as_user
from tests.core.test_planner_support import MemoryCatalog, context, plan

FEED = {"readChangeFeed": "true", "startingVersion": "1", "endingVersion": "4"}


def _managed(version: int | None = 4, name: str = "m") -> MemoryCatalog:
    catalog = _catalog()
    made = catalog.add_table(f"c.d.{name}", ["id BIGINT"], options={"format": "delta"})
    catalog.relations[made.identifier.key] = replace(made, delta_version=version)
    if version is not None:
        catalog.versions[made.identifier.key] = {v: made.location for v in range(version + 1)}
    return catalog


def _planned(sql: str, world: MemoryCatalog | None = None, **kwargs: str | None) -> Plan:
    result = plan(sql, world if world is not None else _managed(), **kwargs)
    assert Plan.from_dict(json.loads(json.dumps(result.to_dict()))) == result
    return result


@pytest.mark.parametrize(
    ("sql", "run"),
    [
        ("SELECT * FROM table_changes('m', 1)", "SELECT * FROM `__tessera_r1`"),
        ("SELECT * FROM TABLE_CHANGES('d.m', 1, 4) AS c", "SELECT * FROM `__tessera_r1` AS c"),
        (
            "SELECT c.id FROM table_changes('c.d.m', 1) c WHERE _change_type = 'delete'",
            "SELECT c.id FROM `__tessera_r1` c WHERE _change_type = 'delete'",
        ),
        ("SELECT * FROM table_changes('`c`.`d`.`m`', 1)", "SELECT * FROM `__tessera_r1`"),
    ],
)
def test_the_call_becomes_a_relation_reading_the_feed(sql: str, run: str) -> None:
    result = _planned(sql)
    assert result.sql == run
    (relation,) = result.relations
    assert relation.identifier == ("c", "d", "m")
    assert (relation.format, relation.path) == ("delta", "/srv/tessera/warehouse/c/d/m")
    assert relation.time_travel == FEED
    # Delta's own columns: the log's, and _change_type, _commit_version, _commit_timestamp.
    assert (relation.physical_schema, relation.columns) == ("", ())


def test_the_end_defaults_to_the_recorded_version_never_the_logs_latest() -> None:
    feed = _planned("SELECT * FROM table_changes('m', 0)", _managed(2)).relations[0]
    assert feed.time_travel == {**FEED, "startingVersion": "0", "endingVersion": "2"}


def test_the_same_range_is_one_relation_and_the_table_another() -> None:
    result = _planned(
        "SELECT * FROM table_changes('m', 1, 2) a JOIN table_changes('d.m', 1, 2) b USING (id) "
        "JOIN m USING (id) JOIN table_changes('m', 2) c USING (id)"
    )
    assert [r.time_travel for r in result.relations] == [
        {**FEED, "endingVersion": "2"},
        {"versionAsOf": "4"},
        {**FEED, "startingVersion": "2"},
    ]
    assert result.sql.count("`__tessera_r1`") == 2


def test_timestamps_pick_recorded_versions() -> None:
    # The memory catalog: a start timestamp is its first version, an end its latest.
    feed = _planned(
        "SELECT * FROM table_changes('m', '2026-11-24 10:00:00', '2026-11-25T00:00:00+02:00')"
    ).relations[0]
    assert feed.time_travel == {**FEED, "startingVersion": "0", "endingVersion": "4"}


def test_a_name_resolves_like_any_relation() -> None:
    catalog = _managed()
    catalog.add_database("c", "other")
    result = _planned("SELECT * FROM table_changes('m', 1)", catalog)
    assert result.relations[0].identifier == ("c", "d", "m")
    with pytest.raises(NotFound, match=r"Table or view `c`\.`other`\.`m` not found"):
        plan_statement("SELECT * FROM table_changes('m', 1)", catalog, context("c", "other"))
    # A CTE of the same name does not shadow the table the string names.
    result = _planned("WITH m AS (SELECT 1 AS id) SELECT * FROM table_changes('m', 1)")
    assert result.relations[0].time_travel == FEED


def test_a_view_stores_the_call_with_the_full_name() -> None:
    result = _planned("CREATE VIEW v AS SELECT * FROM table_changes('m', 1, '2026-11-24')")
    assert "table_changes('`c`.`d`.`m`', 1, '2026-11-24')" in json.dumps(result.args)


@pytest.mark.parametrize(
    ("setup", "fragment"),
    [
        ("view", "it is a view"),
        ("temporary view", "it is a temporary view"),
        ("temporary table", "it is a temporary table"),
        ("external delta", "it is an external table"),
        ("parquet", "it is a managed table not stored as Delta Lake"),
    ],
)
def test_only_managed_delta_tables_have_a_feed(setup: str, fragment: str) -> None:
    catalog = _managed()
    if setup == "view":
        catalog.add_view("c.d.t", "SELECT 1 AS id")
    elif setup == "temporary view":  # shadows the managed Delta table of the same name
        catalog.add_view("c.d.m", "SELECT 1 AS id", temporary=True)
    elif setup == "temporary table":
        catalog.add_table("c.d.t", temporary=True)
    elif setup == "external delta":
        catalog.add_table("c.d.t", options={"connector": "delta", "path": DELTA_PATH})
    else:
        catalog.add_table("c.d.t")
    name = "m" if setup == "temporary view" else "t"
    with pytest.raises(CoreError, match=fragment) as caught:
        plan(f"SELECT * FROM table_changes('{name}', 0)", catalog)
    assert "only managed Delta tables have a change data feed" in caught.value.message
    assert type(caught.value) is CoreError  # VALIDATION_ERROR


@pytest.mark.parametrize(
    ("sql", "fragment"),
    [
        ("table_changes('m', 5)", "version 5 of `c`.`d`.`m` is beyond its latest version, 4"),
        ("table_changes('m', 1, 9)", "version 9 of `c`.`d`.`m` is beyond its latest version"),
        ("table_changes('m', 3, 2)", r"the start \(version 3\) is after the end \(version 2\)"),
        ("table_changes('m', 99999999999)", "version numbers are at most"),
        ("table_changes('m')", "2 or 3 arguments\\), not 1"),
        ("table_changes()", "not 0"),
        ("table_changes('m', 1, 2, 3)", "not 4"),
        ("table_changes('m', -1)", "literals only"),
        ("table_changes('m', 1 + 1)", "literals only"),
        ("table_changes('m', current_timestamp())", "literals only"),
        ("table_changes(t => 'm', 1)", "literals only"),
        ("table_changes(m, 1)", "table's name as a string"),
        ("table_changes('m', 1.5)", "version number"),
        ("table_changes('m', 'yesterday')", "neither a version number nor a timestamp"),
        ("table_changes('m' || '', 1)", "literals only"),
        ("table_changes('m', 1) VERSION AS OF 2", "cannot be followed by VERSION AS OF"),
        ("table_changes('a.b.c.d', 1)", "takes the name of a table"),
        ("table_changes('m; DROP TABLE m', 1)", "takes the name of a table"),
        ("table_changes('', 1)", "takes the name of a table"),
    ],
)
def test_malformed_calls_are_refused(sql: str, fragment: str) -> None:
    with pytest.raises(CoreError, match=fragment) as caught:
        plan(f"SELECT * FROM {sql}", _managed())
    assert type(caught.value) is CoreError


@pytest.mark.parametrize(
    "name",
    ["/tmp/x", "file:/tmp/x", "delta.`/tmp/x`", "parquet.`/srv/tessera/warehouse/c/d/m`"],
)
def test_a_path_is_refused(name: str) -> None:
    with pytest.raises(ForbiddenSql, match="by path"):
        plan(f"SELECT * FROM table_changes('{name}', 0)", _managed())


def test_a_table_no_job_wrote_has_no_changes() -> None:
    with pytest.raises(CoreError, match="has no changes yet"):
        plan("SELECT * FROM table_changes('m', 0)", _managed(None))


def test_the_call_is_a_table_only_in_from() -> None:
    for sql in (
        "SELECT table_changes('m', 0)",
        "SELECT * FROM LATERAL table_changes('m', 0)",
    ):
        with pytest.raises(CoreError, match="is a table: call it in FROM"):
            plan(sql, _managed())


def test_streams_are_refused() -> None:
    ctx = replace(context(), runtime_mode="streaming")
    with pytest.raises(UnsupportedStatement, match="streaming reads of a table's changes"):
        plan_statement("SELECT * FROM table_changes('m', 0)", _managed(), ctx)


def test_select_is_required() -> None:
    catalog = _managed()
    catalog.read_only.add(("c", "d", "m"))  # owned by another user, SELECT granted
    assert _planned("SELECT * FROM table_changes('m', 1)", catalog).relations[0].time_travel
    denied = as_user(_managed(), 7, ("c", Privilege.USE), ("c.d", Privilege.USE))
    with pytest.raises((PermissionDenied, NotFound)) as caught:
        plan("SELECT * FROM table_changes('m', 1)", denied)
    assert caught.value.code in ("PERMISSION_DENIED", "NOT_FOUND")


def test_written_through_an_insert_and_a_ctas() -> None:
    for sql in (
        "INSERT INTO m SELECT id FROM table_changes('m', 1) WHERE _change_type = 'insert'",
        "CREATE TABLE n AS SELECT * FROM table_changes('m', 1, 2)",
    ):
        result = _planned(sql)
        assert {**FEED, "endingVersion": "4"} in [r.time_travel for r in result.relations] or any(
            r.time_travel == {**FEED, "endingVersion": "2"} for r in result.relations
        )


def test_timestamps_are_utc_unless_they_say_otherwise() -> None:
    from core.planner.references import analyze_query
    from core.planner.tokens import tokenize

    text = "SELECT * FROM table_changes('m', '2026-11-24 10:00:00', '2026-11-24T12:00:00+02:00')"
    (ref,) = analyze_query(text, tokenize(text)).tables
    assert ref.changes is not None
    assert ref.changes.start == datetime(2026, 11, 24, 10, tzinfo=UTC)
    assert ref.changes.end == datetime(2026, 11, 24, 10, tzinfo=UTC)
