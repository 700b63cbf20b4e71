"""``VERSION AS OF`` / ``TIMESTAMP AS OF`` in the planner (core/planner/time_travel.py):
the name and the clause are replaced by one alias, each version is a relation of its own,
and only literals are accepted. The version lookup itself is the reader's (the Django
reader's tests are tests/tabledata/worker/test_versions.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from core.errors import CoreError
from core.planner.time_travel import parse_timestamp
from tests.core.test_planner_support import MemoryCatalog, plan, sample_catalog

V0 = "/srv/tessera/warehouse/c/d/orders-v0"
V1 = "/srv/tessera/warehouse/c/d/orders-v1"


def versioned() -> MemoryCatalog:
    catalog = sample_catalog()
    catalog.versions[("c", "d", "orders")] = {0: V0, 1: V1}
    return catalog


def test_version_as_of_reads_that_versions_directory_and_spark_sees_only_the_alias() -> None:
    result = plan("SELECT id FROM orders VERSION AS OF 0 WHERE id > 1", versioned())
    assert result.sql == "SELECT id FROM `__tessera_r1` AS `orders` WHERE id > 1"
    assert [r.path for r in result.relations] == [V0]
    aliased = plan("SELECT o.id FROM c.d.orders VERSION AS OF 1 AS o", versioned())
    assert aliased.sql == "SELECT o.id FROM `__tessera_r1` AS o"
    assert aliased.relations[0].path == V1


def test_two_versions_of_one_table_are_two_relations() -> None:
    result = plan(
        "SELECT a.id FROM orders VERSION AS OF 0 a JOIN orders FOR SYSTEM_TIME AS OF "
        "'2026-01-01' b ON a.id = b.id JOIN orders c ON c.id = a.id "
        "JOIN orders VERSION AS OF 0 d ON d.id = a.id",
        versioned(),
    )
    assert [r.path for r in result.relations] == [V0, V1, "/srv/tessera/warehouse/c/d/orders"]
    assert result.sql.count("`__tessera_r1`") == 2  # version 0 registered once
    assert "AS OF" not in result.sql


@pytest.mark.parametrize(
    ("clause", "fragment"),
    [
        ("VERSION AS OF -1", "non-negative integer literal"),
        ("VERSION AS OF 1.5", "non-negative integer literal"),
        ("VERSION AS OF 1 + 1", "non-negative integer literal"),
        ("VERSION AS OF '1'", "non-negative integer literal"),
        ("VERSION AS OF (SELECT 1)", "non-negative integer literal"),
        ("VERSION AS OF 99999999999999999999999", "at most 2147483647"),
        ("TIMESTAMP AS OF current_timestamp()", "timestamp literal"),
        ("TIMESTAMP AS OF '2026-01-01' || ''", "timestamp literal"),
        ("TIMESTAMP AS OF 'yesterday'", "is not a timestamp"),
        ("TIMESTAMP AS OF 12", "timestamp literal"),
    ],
)
def test_only_literals_are_accepted(clause: str, fragment: str) -> None:
    with pytest.raises(CoreError, match=fragment.replace("+", r"\+")):
        plan(f"SELECT * FROM orders {clause}", versioned())


def test_unknown_version_is_the_readers_error() -> None:
    with pytest.raises(CoreError, match="no such version"):
        plan("SELECT * FROM orders VERSION AS OF 7", versioned())


@pytest.mark.parametrize(
    ("setup", "fragment"),
    [
        ("view", "it is a view"),
        ("temporary", "it is a temporary table"),
        ("external", "it is an external table"),
    ],
)
def test_only_permanent_managed_tables_have_versions(setup: str, fragment: str) -> None:
    catalog = versioned()
    if setup == "view":
        catalog.add_view("c.d.t", "SELECT 1 AS id")
    elif setup == "temporary":
        catalog.add_table("c.d.t", temporary=True)
    else:
        catalog.add_table(
            "c.d.t", options={"connector": "parquet", "path": "/srv/tessera/external/t"}
        )
    with pytest.raises(CoreError, match=fragment):
        plan("SELECT * FROM t VERSION AS OF 0", catalog)


def test_a_cte_has_no_versions() -> None:
    with pytest.raises(CoreError, match="common table expression"):
        plan("WITH x AS (SELECT 1 AS id) SELECT * FROM x VERSION AS OF 0", versioned())


def test_an_alias_named_version_is_not_time_travel() -> None:
    result = plan("SELECT version.id FROM orders version", versioned())
    assert result.sql == "SELECT version.id FROM `__tessera_r1` version"
    assert result.relations[0].path.endswith("/orders")


def test_timestamps_are_utc_unless_they_say_otherwise() -> None:
    assert parse_timestamp("2026-11-24 10:00:00", "t") == datetime(2026, 11, 24, 10, tzinfo=UTC)
    assert parse_timestamp("2026-11-24", "t") == datetime(2026, 11, 24, tzinfo=UTC)
    shifted = parse_timestamp("2026-11-24T12:00:00+02:00", "t")
    assert shifted == datetime(2026, 11, 24, 10, tzinfo=UTC)
    with pytest.raises(CoreError):
        parse_timestamp("2026-11-24 10:00:00" + "0" * 60, "t")
