"""MERGE, UPDATE and DELETE on managed Delta tables (issue 31 item 3, ADR 0019): the planner
(target: a managed Delta table the user may MODIFY, sources read as queries) and the guard of
Spark's parse (exactly the planned kind of statement, writing exactly the planned target)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from core.errors import CoreError, NotFound, PermissionDenied
from core.planner import ForbiddenSql, Plan, UnsupportedStatement
from core.planner.classify import statement_kind
from core.planner.spark_guard import Allowed, check_tree
from core.privileges import Privilege
from tests.core.test_delta_tables import _managed
from tests.core.test_planner_grants import BOB, as_user
from tests.core.test_planner_support import MemoryCatalog, plan
from tests.core.test_spark_guard import ANALYSIS, LOGICAL, Tree

T = "`__tessera_t1`"


def _catalog(version: int | None = 3) -> MemoryCatalog:
    return _managed(version)


def _round_trip(result: Plan) -> dict[str, Any]:
    data = result.to_dict()
    assert Plan.from_dict(json.loads(json.dumps(data))) == result
    return data


def test_merge_is_planned_with_its_source_read_as_a_query() -> None:
    sql = (
        "MERGE INTO m USING customers s ON m.id = s.id "
        "WHEN MATCHED AND s.id > 1 THEN UPDATE SET id = plus1(s.id) "
        "WHEN NOT MATCHED THEN INSERT (id) VALUES (s.id) "
        "WHEN NOT MATCHED BY SOURCE THEN DELETE"
    )
    result = plan(sql, _catalog())
    data = _round_trip(result)
    assert result.writes and data["kind"] == "insert" and data["action"] == "merge"
    assert result.sql == (
        f"MERGE INTO {T} AS `m` USING `__tessera_r1` s ON m.id = s.id "
        "WHEN MATCHED AND s.id > 1 THEN UPDATE SET id = `__tessera_f1`(s.id) "
        "WHEN NOT MATCHED THEN INSERT (id) VALUES (s.id) "
        "WHEN NOT MATCHED BY SOURCE THEN DELETE"
    )
    assert [r.identifier for r in result.relations] == [("c", "d", "customers")]
    args = data["args"]
    assert args["read_version"] == 3 and args["operation"] == "MERGE"
    assert args["table"]["alias"] == "__tessera_t1"
    assert args["table"]["time_travel"] == {"versionAsOf": "3"}
    assert data["target"] == ["c", "d", "m"]


def test_a_subquery_source_and_star_actions() -> None:
    sql = (
        "MERGE INTO m AS t USING (SELECT id FROM orders WHERE qty > 1) AS s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )
    result = plan(sql, _catalog())
    assert result.sql.startswith(
        f"MERGE INTO {T} AS t USING (SELECT id FROM `__tessera_r1` AS `orders` WHERE qty > 1)"
    )
    assert [r.identifier for r in result.relations] == [("c", "d", "orders")]


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        (
            "UPDATE m SET id = id + 1 WHERE id > 2",
            f"UPDATE {T} AS `m` SET id = id + 1 WHERE id > 2",
        ),
        (
            "UPDATE m t SET t.id = CASE WHEN t.id > 1 THEN 2 ELSE 3 END, id = 4",
            f"UPDATE {T} t SET t.id = CASE WHEN t.id > 1 THEN 2 ELSE 3 END, id = 4",
        ),
        (
            "DELETE FROM m WHERE id IN (SELECT id FROM customers)",
            f"DELETE FROM {T} AS `m` WHERE id IN (SELECT id FROM `__tessera_r1` AS `customers`)",
        ),
        ("DELETE FROM c.d.m", f"DELETE FROM {T} AS `m`"),
    ],
)
def test_update_and_delete_are_planned(sql: str, expected: str) -> None:
    result = plan(sql, _catalog())
    assert result.sql == expected
    assert result.action in ("update", "delete") and result.writes
    assert statement_kind(sql) == "insert"


@pytest.mark.parametrize(
    ("sql", "error", "fragment"),
    [
        ("DELETE FROM orders", UnsupportedStatement, "is stored as parquet"),
        ("UPDATE events SET payload = 'x'", UnsupportedStatement, "is external"),
        ("DELETE FROM big_orders", CoreError, "is a view"),
        ("DELETE FROM nowhere", NotFound, "not found"),
        (
            "MERGE WITH SCHEMA EVOLUTION INTO m USING customers ON true WHEN MATCHED THEN DELETE",
            UnsupportedStatement,
            "SCHEMA EVOLUTION",
        ),
        ("UPDATE m SET id = 1 WHERE", CoreError, "expression"),
        ("MERGE INTO m USING customers ON true", CoreError, "WHEN"),
        ("DELETE FROM m WHERE id = 1; DROP TABLE m", CoreError, "one statement"),
    ],
)
def test_other_targets_and_malformed_statements_are_refused(
    sql: str, error: type[CoreError], fragment: str
) -> None:
    with pytest.raises(error) as caught:
        plan(sql, _catalog())
    assert fragment.lower() in caught.value.message.lower()


def test_a_table_never_written_is_refused() -> None:
    with pytest.raises(CoreError, match="no committed version yet"):
        plan("DELETE FROM m", _catalog(None))


def test_a_temporary_table_is_refused() -> None:
    catalog = _catalog()
    catalog.add_table("c.d.tmp", ["id BIGINT"], temporary=True)
    with pytest.raises(CoreError, match="temporary"):
        plan("DELETE FROM tmp", catalog)


def test_modify_on_the_target_and_select_on_every_source() -> None:
    catalog = as_user(
        _catalog(),
        BOB,
        ("c", Privilege.USE),
        ("c.d", Privilege.USE),
        ("c.d.m", Privilege.SELECT),
        ("c.d.customers", Privilege.SELECT),
    )
    with pytest.raises(PermissionDenied, match="MODIFY"):
        plan("DELETE FROM m", catalog)
    catalog = as_user(
        _catalog(),
        BOB,
        ("c", Privilege.USE),
        ("c.d", Privilege.USE),
        ("c.d.m", Privilege.MODIFY),
        ("c.d.customers", Privilege.SELECT),
    )
    assert plan("DELETE FROM m WHERE id IN (SELECT id FROM customers)", catalog).writes
    with pytest.raises((PermissionDenied, NotFound)):
        plan("DELETE FROM m WHERE id IN (SELECT id FROM orders)", catalog)
    with pytest.raises((PermissionDenied, NotFound)):
        plan("MERGE INTO m USING orders o ON m.id = o.id WHEN MATCHED THEN DELETE", catalog)


def test_the_planners_guard_reads_every_piece_first() -> None:
    catalog = _catalog()
    with pytest.raises(ForbiddenSql):
        plan("DELETE FROM missing WHERE id IN (SELECT id FROM parquet.`/etc`)", catalog)
    assert all("missing" not in str(lookup) for lookup in catalog.lookups)


# -- the guard of Spark's parse (root "dml") -------------------------------------------------

DML = replace(Allowed.of(["__tessera_r1", "__tessera_t1"]), target="__tessera_t1")


def _merge(t: Tree, target: int, source: int, **extra: Any) -> int:
    action = t.expr(
        LOGICAL + "UpdateAction",
        condition=t.seq(),
        assignments=t.seq(
            t.expr(
                LOGICAL + "Assignment",
                key=t.expr(ANALYSIS + "UnresolvedAttribute", nameParts=t.seq("id")),
                value=t.expr(ANALYSIS + "UnresolvedAttribute", nameParts=t.seq("s", "id")),
            )
        ),
    )
    fields: dict[str, Any] = {
        "targetTable": target,
        "sourceTable": source,
        "mergeCondition": t.expr(ANALYSIS + "UnresolvedAttribute", nameParts=t.seq("x")),
        "matchedActions": t.seq(action),
        "notMatchedActions": t.seq(t.expr(LOGICAL + "InsertStarAction", condition=t.seq())),
        "notMatchedBySourceActions": t.seq(),
        "withSchemaEvolution": False,
    }
    fields.update(extra)
    return t.plan(LOGICAL + "MergeIntoTable", **fields)


def _written(t: Tree, name: str) -> int:
    return t.relation(name, options={"__required_write_privileges__": "UPDATE,INSERT"})


def test_the_planned_merge_passes_and_counts_its_target() -> None:
    t = Tree()
    root = _merge(
        t,
        t.plan(LOGICAL + "SubqueryAlias", identifier="t", child=_written(t, "__tessera_t1")),
        t.relation("__tessera_r1"),
    )
    refs = check_tree(t.done(root), DML, "dml")
    assert refs.relations == {"__tessera_t1": 1, "__tessera_r1": 1}


@pytest.mark.parametrize("target", ["__tessera_r1", "orders", "__tessera_t2"])
def test_a_merge_writing_another_table_is_refused(target: str) -> None:
    t = Tree()
    root = _merge(t, _written(t, target), t.relation("__tessera_r1"))
    with pytest.raises(ForbiddenSql, match="not the table that was planned"):
        check_tree(t.done(root), DML, "dml")


def test_a_source_the_plan_did_not_resolve_is_refused() -> None:
    t = Tree()
    root = _merge(t, _written(t, "__tessera_t1"), t.relation("secret"))
    with pytest.raises(ForbiddenSql, match="not a table or view the planner resolved"):
        check_tree(t.done(root), DML, "dml")


def test_schema_evolution_and_other_roots_are_refused() -> None:
    t = Tree()
    root = _merge(
        t, _written(t, "__tessera_t1"), t.relation("__tessera_r1"), withSchemaEvolution=True
    )
    with pytest.raises(ForbiddenSql, match="SCHEMA EVOLUTION"):
        check_tree(t.done(root), DML, "dml")
    t = Tree()
    query = t.project(t.relation("__tessera_r1"))
    with pytest.raises(ForbiddenSql, match="other than the row-level change"):
        check_tree(t.done(query), DML, "dml")
    t = Tree()
    delete = t.plan(
        LOGICAL + "DeleteFromTable", table=_written(t, "__tessera_t1"), condition=t.seq()
    )
    check_tree(t.done(delete), DML, "dml")
    with pytest.raises(ForbiddenSql, match="other than the row-level change"):
        check_tree(t.done(delete), replace(DML, target=None), "dml")  # a plan without one
    with pytest.raises(ForbiddenSql):
        check_tree(t.done(delete), DML, "query")  # a query's guard never passes one


def test_merge_actions_outside_a_planned_change_are_refused() -> None:
    t = Tree()
    root = t.project(
        t.relation("__tessera_r1"), t.expr(LOGICAL + "InsertStarAction", condition=t.seq())
    )
    with pytest.raises(ForbiddenSql, match="InsertStarAction"):
        check_tree(t.done(root), DML)
