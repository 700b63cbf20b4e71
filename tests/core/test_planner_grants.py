"""Privileges in the planner (issue 18, ADR 0011 §3.3, §4.1): every statement checks what
it needs before a plan exists; what the user may not see answers exactly as a missing name;
views and SQL functions run with their owner's rights; READ FILES for tables over paths;
GRANT, REVOKE, SHOW GRANTS and ALTER … OWNER TO; ``Plan.access``, the checks made.

The world is ``sample_catalog()`` (catalog c, owned objects by alice, user 1): the statement's
user is set per test (bob, user 2, or an outsider), with grants written as rows.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from core.errors import CoreError, NotFound, PermissionDenied
from core.identifiers import ObjectIdentifier
from core.planner import ForbiddenSql, ParseError, Plan, plan_statement, statement_kind
from core.planner.plan import AccessPlan
from core.privileges import GRANTABLE, ORDER, Access, GrantRow, Kind, Privilege, Securable
from tests.core.test_planner_support import (
    STORAGE_ROOT,
    MemoryCatalog,
    context,
    plan,
    sample_catalog,
)

P = Privilege
ALICE, BOB, CARL, OLGA = 1, 2, 3, 4


def world() -> MemoryCatalog:
    """The sample catalog, its owners named; c.d.orders is read by the view big_orders."""
    catalog = sample_catalog()
    catalog.names.update({CARL: "carl", OLGA: "olga"})
    catalog.owners[("catalog", "c")] = ALICE
    return catalog


def securable(catalog: MemoryCatalog, path: str) -> Securable:
    """The securable of a catalog (1 part), database (2) or object (3 parts; ``f:`` prefix
    for a function)."""
    namespace = "relation"
    if path.startswith("f:"):
        namespace, path = "function", path[2:]
    parts = path.split(".")
    if len(parts) == 1:
        found = catalog.catalog_securable(parts[0])
    elif len(parts) == 2:
        found = catalog.database_securable(parts[0], parts[1])
    else:
        found = catalog.securable(ObjectIdentifier.of(parts), namespace)
    assert found is not None, path
    return found


def row(catalog: MemoryCatalog, path: str, privilege: Privilege) -> GrantRow:
    s = securable(catalog, path)
    return GrantRow(privilege, s.kind, s.catalog_id, s.database_id, s.object_id)


def as_user(
    catalog: MemoryCatalog, user: int, *grants: tuple[str, Privilege], **kwargs: Any
) -> MemoryCatalog:
    """Make ``user`` the statement's user, holding ``grants`` (path, privilege)."""
    catalog.user = Access(user, grants=tuple(row(catalog, p, g) for p, g in grants), **kwargs)
    return catalog


def give(catalog: MemoryCatalog, user: int, *grants: tuple[str, Privilege]) -> None:
    """What ``user`` (a view's or function's owner) holds."""
    catalog.principals[user] = Access(user, grants=tuple(row(catalog, p, g) for p, g in grants))


def error_of(sql: str, catalog: MemoryCatalog, **kwargs: Any) -> CoreError:
    with pytest.raises(CoreError) as caught:
        plan(sql, catalog, **kwargs)
    return caught.value


def shape(error: CoreError) -> tuple[str, str, str, str]:
    return (type(error).__name__, error.code, error.message, json.dumps(error.details))


def access(result: Plan) -> list[tuple[str, tuple[str, ...], str, tuple[str, ...] | None]]:
    return [(a.kind, a.identifier, a.privilege, a.via) for a in result.access]


ORDERS = ("c", "d", "orders")
BIG = ("c", "d", "big_orders")


# --- Plan.access ----------------------------------------------------------------------------


def test_every_read_is_recorded_with_the_view_it_was_read_through() -> None:
    result = plan("SELECT * FROM big_orders JOIN orders USING (id)", world())
    assert access(result) == [
        ("view", BIG, "SELECT", None),
        ("table", ORDERS, "SELECT", BIG),
        ("table", ORDERS, "SELECT", None),
    ]
    assert {a.securable_key for a in result.access} == {
        securable(world(), "c.d.big_orders").key,
        securable(world(), "c.d.orders").key,
    }
    # Outside the plan JSON, and not compared: the plan is what it always was.
    assert "access" not in result.to_dict()
    assert Plan.from_dict(json.loads(json.dumps(result.to_dict()))) == result
    for record in result.access:
        assert AccessPlan.from_dict(json.loads(json.dumps(record.to_dict()))) == record


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT slugify(name) FROM customers", [("table", "SELECT"), ("function", "EXECUTE")]),
        (
            "INSERT INTO customers SELECT * FROM customers",
            [("table", "MODIFY"), ("table", "SELECT")],
        ),
        ("CREATE TABLE t2 AS SELECT 1 AS x", [("database", "CREATE")]),
        ("CREATE DATABASE c.newdb", [("catalog", "CREATE")]),
        (
            "CREATE VIEW v2 AS SELECT * FROM customers",
            [("table", "SELECT"), ("database", "CREATE")],
        ),
        ("DROP TABLE customers", [("table", "MANAGE")]),
        ("DESCRIBE customers", [("table", "USE")]),
        ("SHOW TABLES", [("database", "USE")]),
        ("SHOW DATABASES", [("catalog", "USE")]),
        ("USE c.other", [("database", "USE")]),
        ("USE CATALOG c", [("catalog", "USE")]),
        ("ANALYZE TABLE customers COMPUTE STATISTICS", [("table", "MODIFY")]),
        ("EXPLAIN SELECT * FROM customers", [("table", "SELECT")]),
        ("GRANT SELECT ON customers TO USER bob", [("table", "MANAGE")]),
        ("SHOW GRANTS ON customers", [("table", "USE")]),
        ("ALTER TABLE customers OWNER TO USER bob", [("table", "MANAGE")]),
        (
            f"CREATE TEMPORARY TABLE tt (id INT) USING csv LOCATION '{STORAGE_ROOT}/tt'",
            [("storage", "READ FILES")],
        ),
        ("SET spark.sql.ansi.enabled = true", []),
        ("SHOW CATALOGS", []),
    ],
)
def test_every_plan_kind_carries_its_checks(sql: str, expected: list[tuple[str, str]]) -> None:
    assert [(a.kind, a.privilege) for a in plan(sql, world()).access] == expected


def test_a_statement_set_records_each_target_once() -> None:
    result = plan(
        "EXECUTE STATEMENT SET BEGIN INSERT INTO customers SELECT * FROM customers; "
        "INSERT INTO c.other.orders SELECT id FROM customers; END",
        world(),
    )
    assert access(result) == [
        ("table", ("c", "d", "customers"), "MODIFY", None),
        ("table", ("c", "d", "customers"), "SELECT", None),
        ("table", ("c", "other", "orders"), "MODIFY", None),
    ]


# --- reads: allowed, denied, hidden ---------------------------------------------------------


def test_a_grant_on_one_table_lets_bob_read_it_and_nothing_else() -> None:
    catalog = as_user(world(), BOB, ("c.d.orders", P.SELECT))
    assert access(plan("SELECT id FROM c.d.orders", catalog)) == [("table", ORDERS, "SELECT", None)]
    # The database is seen (through the grant), so its other tables are refused, by name.
    refused = error_of("SELECT * FROM c.d.customers", catalog)
    assert isinstance(refused, PermissionDenied)
    assert refused.message == (
        "You need SELECT on table `c`.`d`.`customers` to read it; you have none."
    )
    assert refused.details == {
        "kind": "table",
        "privilege": "SELECT",
        "identifier": ["c", "d", "customers"],
    }
    # Another database of the catalog is not seen: its table answers as a missing one.
    hidden = error_of("SELECT * FROM c.other.orders", catalog)
    missing = error_of("SELECT * FROM c.other.orderz", catalog)
    assert shape(hidden) == shape(
        missing.__class__(
            missing.message.replace("orderz", "orders"),
            details=json.loads(json.dumps(missing.details).replace("orderz", "orders")),
        )
    )
    assert hidden.code == "NOT_FOUND"


def test_select_does_not_give_modify_nor_execute() -> None:
    catalog = as_user(world(), BOB, ("c.d.customers", P.SELECT))
    write = error_of("INSERT INTO customers SELECT * FROM customers", catalog)
    assert isinstance(write, PermissionDenied)
    assert write.message == (
        "You need MODIFY on table `c`.`d`.`customers` to write into it; you have SELECT."
    )
    call = error_of("SELECT c.d.slugify(name) FROM customers", catalog)
    assert isinstance(call, PermissionDenied) and "EXECUTE on function" in call.message


def test_a_catalog_grant_passes_down_to_every_table() -> None:
    catalog = as_user(world(), BOB, ("c", P.SELECT), ("c", P.EXECUTE))
    result = plan(
        "SELECT slugify(o.file) FROM c.d.orders o JOIN c.other.orders p USING (id)", catalog
    )
    assert [a.privilege for a in result.access] == ["SELECT", "SELECT", "EXECUTE"]


def test_time_travel_needs_select_like_any_read() -> None:
    catalog = world()
    catalog.versions[ORDERS] = {1: "/w/v1"}
    as_user(catalog, BOB, ("c.d.customers", P.SELECT))
    refused = error_of("SELECT * FROM orders VERSION AS OF 1", catalog)
    assert isinstance(refused, PermissionDenied) and "SELECT on table `c`.`d`.`orders`" in (
        refused.message
    )
    as_user(catalog, OLGA)
    hidden = error_of("SELECT * FROM orders VERSION AS OF 1", catalog)
    missing = error_of("SELECT * FROM orderz VERSION AS OF 1", catalog)
    assert hidden.message.replace("orders", "X") == missing.message.replace("orderz", "X")


def test_a_temporary_object_needs_nothing_but_what_it_reads_does() -> None:
    catalog = as_user(world(), BOB, ("c.d", P.USE), read_files_for_all=True)
    catalog.add_table("c.d.scratch", ["id BIGINT"], temporary=True)
    catalog.add_view("c.d.tv", "SELECT * FROM c.d.orders", temporary=True)
    # The table itself needs nothing; the files it reads, READ FILES (everyone's, here).
    assert access(plan("SELECT * FROM scratch", catalog)) == [
        ("storage", (STORAGE_ROOT,), "READ FILES", None)
    ]
    refused = error_of("SELECT * FROM tv", catalog)  # the temporary view reads as Bob
    assert isinstance(refused, PermissionDenied) and "`c`.`d`.`orders`" in refused.message
    as_user(catalog, BOB, ("c.d.orders", P.SELECT))
    assert access(plan("SELECT * FROM tv", catalog)) == [("table", ORDERS, "SELECT", None)]


# --- hidden = missing, byte for byte --------------------------------------------------------

# (statement naming a hidden object, the same statement naming a missing one, the name that
# differs). Olga, the outsider, holds nothing: catalog c and all in it are hidden from her.
HIDDEN_CASES = [
    ("SELECT * FROM c.d.orders", "SELECT * FROM c.d.ordersx", "orders"),
    ("SELECT * FROM c.d.big_orders", "SELECT * FROM c.d.big_ordersx", "big_orders"),
    ("SELECT c.d.slugify('a')", "SELECT c.d.slugifyx('a')", "slugify"),
    (
        "INSERT INTO c.d.customers SELECT 1, 'a'",
        "INSERT INTO c.d.customersx SELECT 1, 'a'",
        "customers",
    ),
    (
        "INSERT OVERWRITE c.d.customers SELECT 1, 'a'",
        "INSERT OVERWRITE c.d.customersx SELECT 1, 'a'",
        "customers",
    ),
    ("CREATE TABLE c.d.t2 AS SELECT 1 AS x", "CREATE TABLE cx.d.t2 AS SELECT 1 AS x", "c"),
    ("CREATE TABLE c.d.t2 (x INT)", "CREATE TABLE cx.d.t2 (x INT)", "c"),
    ("CREATE VIEW c.d.v2 AS SELECT 1 AS x", "CREATE VIEW cx.d.v2 AS SELECT 1 AS x", "c"),
    (
        "CREATE FUNCTION c.d.f2 AS 'tessera_udfs.text.slugify'",
        "CREATE FUNCTION cx.d.f2 AS 'tessera_udfs.text.slugify'",
        "c",
    ),
    ("CREATE DATABASE c.d2", "CREATE DATABASE cx.d2", "c"),
    ("DESCRIBE c.d.orders", "DESCRIBE c.d.ordersx", "orders"),
    ("DESCRIBE HISTORY c.d.orders", "DESCRIBE HISTORY c.d.ordersx", "orders"),
    ("SHOW CREATE TABLE c.d.orders", "SHOW CREATE TABLE c.d.ordersx", "orders"),
    ("SHOW TABLES IN c.d", "SHOW TABLES IN cx.d", "c"),
    ("SHOW DATABASES IN c", "SHOW DATABASES IN cx", "c"),
    ("USE c.d", "USE cx.d", "c"),
    ("USE CATALOG c", "USE CATALOG cx", "c"),
    (
        "ANALYZE TABLE c.d.orders COMPUTE STATISTICS",
        "ANALYZE TABLE c.d.ordersx COMPUTE STATISTICS",
        "orders",
    ),
    ("EXPLAIN SELECT * FROM c.d.orders", "EXPLAIN SELECT * FROM c.d.ordersx", "orders"),
    (
        "GRANT SELECT ON TABLE c.d.orders TO USER olga",
        "GRANT SELECT ON TABLE c.d.ordersx TO USER olga",
        "orders",
    ),
    ("GRANT USE ON CATALOG c TO TEAM t", "GRANT USE ON CATALOG cx TO TEAM t", "c"),
    ("REVOKE USE ON SCHEMA c.d FROM TEAM t", "REVOKE USE ON SCHEMA cx.d FROM TEAM t", "c"),
    (
        "GRANT EXECUTE ON FUNCTION c.d.slugify TO USER u",
        "GRANT EXECUTE ON FUNCTION c.d.slugifyx TO USER u",
        "slugify",
    ),
    ("SHOW GRANTS ON VIEW c.d.big_orders", "SHOW GRANTS ON VIEW c.d.big_ordersx", "big_orders"),
    (
        "ALTER TABLE c.d.orders OWNER TO USER olga",
        "ALTER TABLE c.d.ordersx OWNER TO USER olga",
        "orders",
    ),
    ("SELECT * FROM c.d.orders, c.d.orders", "SELECT * FROM c.d.ordersx, c.d.ordersx", "orders"),
]


@pytest.mark.parametrize(("hidden", "missing", "name"), HIDDEN_CASES)
def test_a_hidden_object_answers_exactly_as_a_missing_one(
    hidden: str, missing: str, name: str
) -> None:
    catalog = as_user(world(), OLGA)
    got, twin = error_of(hidden, catalog), error_of(missing, catalog)
    assert got.code == "NOT_FOUND"
    mark = f"{name}x"
    expected = (
        type(twin).__name__,
        twin.code,
        twin.message.replace(mark, name),
        json.dumps(twin.details).replace(mark, name),
    )
    assert shape(got) == expected


def test_an_unseen_database_of_a_seen_catalog_is_refused_as_unity_catalog_does() -> None:
    catalog = as_user(world(), BOB, ("c.d.orders", P.SELECT))  # c and c.d seen, c.other not
    refused = error_of("CREATE TABLE c.other.t (x INT)", catalog)
    assert isinstance(refused, PermissionDenied)
    assert refused.message == (
        "You need CREATE on database `c`.`other` to create objects in it; you have none."
    )
    assert isinstance(error_of("USE c.other", catalog), PermissionDenied)
    # Its objects are hidden: their database is not seen.
    hidden = error_of("SELECT * FROM c.other.orders", catalog)
    assert hidden.message == "Table or view `c`.`other`.`orders` not found"


def test_drop_of_a_hidden_object_plans_exactly_as_a_missing_one() -> None:
    catalog = as_user(world(), OLGA)
    for kind, real, twin in [
        ("TABLE", "c.d.orders", "c.d.ordersx"),
        ("VIEW", "c.d.big_orders", "c.d.big_ordersx"),
        ("FUNCTION", "c.d.slugify", "c.d.slugifyx"),
        ("DATABASE", "c.d", "c.dx"),
        ("CATALOG", "c", "cx"),
    ]:
        for if_exists in ("", "IF EXISTS "):
            got = plan(f"DROP {kind} {if_exists}{real}", catalog).to_dict()
            missing = plan(f"DROP {kind} {if_exists}{twin}", catalog).to_dict()
            name, twin_name = real.split(".")[-1], twin.split(".")[-1]
            assert json.dumps(got) == json.dumps(missing).replace(f'"{twin_name}"', f'"{name}"')


def test_a_view_reading_a_table_its_owner_may_not_see_answers_as_missing() -> None:
    catalog = as_user(world(), BOB, ("c.d.big_orders", P.SELECT))
    catalog.owners[("relation", *BIG)] = CARL  # Carl sees nothing of c
    hidden = error_of("SELECT * FROM big_orders", catalog)
    assert isinstance(hidden, NotFound)
    assert hidden.message == (
        "Table or view `c`.`d`.`orders` not found (read by view `c`.`d`.`big_orders`)."
    )


# --- writes, creates, drops, ANALYZE --------------------------------------------------------


def test_writes_need_modify_on_every_target() -> None:
    catalog = as_user(world(), BOB, ("c.d.customers", P.MODIFY), ("c.d.customers", P.SELECT))
    assert plan("INSERT OVERWRITE customers SELECT * FROM customers", catalog).action == "insert"
    refused = error_of(
        "EXECUTE STATEMENT SET BEGIN INSERT INTO customers SELECT * FROM customers; "
        "INSERT INTO orders (id) SELECT id FROM customers; END",
        catalog,
    )
    assert isinstance(refused, PermissionDenied)
    assert refused.details["identifier"] == list(ORDERS)
    assert refused.details["privilege"] == "MODIFY"


def test_a_view_target_is_refused_as_a_view_once_seen() -> None:
    catalog = as_user(world(), BOB, ("c.d.big_orders", P.SELECT))
    refused = error_of("INSERT INTO big_orders SELECT * FROM big_orders", catalog)
    assert refused.message.endswith("is a view; INSERT writes only into tables.")


def test_the_read_only_world_of_the_memory_catalog_refuses_writes() -> None:
    catalog = sample_catalog()
    catalog.read_only.add(("c", "d", "customers"))
    assert plan("INSERT INTO orders (id) SELECT id FROM customers", catalog).action == "insert"
    refused = error_of("INSERT INTO customers SELECT * FROM customers", catalog)
    assert isinstance(refused, PermissionDenied) and "you have SELECT" in refused.message


@pytest.mark.parametrize(
    ("sql", "on", "privilege"),
    [
        ("CREATE TABLE c.d.t2 AS SELECT 1 AS x", "database `c`.`d`", "CREATE"),
        ("CREATE TABLE c.d.t2 (x INT)", "database `c`.`d`", "CREATE"),
        ("CREATE VIEW c.d.v2 AS SELECT 1 AS x", "database `c`.`d`", "CREATE"),
        ("CREATE FUNCTION c.d.f2 AS 'tessera_udfs.text.slugify'", "database `c`.`d`", "CREATE"),
        ("CREATE FUNCTION c.d.f3(x INT) RETURNS INT RETURN x", "database `c`.`d`", "CREATE"),
        ("CREATE DATABASE c.d2", "catalog `c`", "CREATE"),
        ("DROP TABLE c.d.orders", "table `c`.`d`.`orders`", "MANAGE"),
        ("DROP VIEW IF EXISTS c.d.big_orders", "view `c`.`d`.`big_orders`", "MANAGE"),
        ("DROP FUNCTION c.d.slugify", "function `c`.`d`.`slugify`", "MANAGE"),
        ("DROP DATABASE c.d CASCADE", "database `c`.`d`", "MANAGE"),
        ("DROP CATALOG c", "catalog `c`", "MANAGE"),
        ("ANALYZE TABLE c.d.orders COMPUTE STATISTICS", "table `c`.`d`.`orders`", "MODIFY"),
        (
            "CREATE OR REPLACE VIEW c.d.big_orders AS SELECT 1 AS x",
            "view `c`.`d`.`big_orders`",
            "MANAGE",
        ),
    ],
)
def test_creates_drops_and_analyze_need_their_privilege(sql: str, on: str, privilege: str) -> None:
    # Bob may use everything (USE on the catalog and database, SELECT on all) and create in
    # the database, except where the case needs exactly that.
    grants: list[tuple[str, Privilege]] = [
        ("c", P.USE),
        ("c.d", P.USE),
        ("c", P.SELECT),
        ("c", P.EXECUTE),
        ("c.d.orders", P.USE),
        ("c.d.big_orders", P.USE),
        ("f:c.d.slugify", P.USE),
    ]
    if "CREATE" not in privilege or "DATABASE" in sql:
        grants.append(("c.d", P.CREATE))
    catalog = as_user(world(), BOB, *grants)
    refused = error_of(sql, catalog)
    assert isinstance(refused, PermissionDenied), refused
    assert refused.message.startswith(f"You need {privilege} on {on} to ")
    kind, shown = on.split(" ", 1)
    path = shown.replace("`", "")
    grants.append((f"f:{path}" if kind == "function" else path, P(privilege)))
    planned = plan(sql, as_user(world(), BOB, *grants))
    assert (kind, privilege) in [(a.kind, a.privilege) for a in planned.access]


def test_or_replace_over_a_view_needs_manage_on_it_and_create_in_its_database() -> None:
    catalog = as_user(world(), BOB, ("c.d", P.CREATE), ("c.d.customers", P.SELECT))
    sql = "CREATE OR REPLACE VIEW big_orders AS SELECT * FROM customers"
    assert "MANAGE on view `c`.`d`.`big_orders`" in error_of(sql, catalog).message
    as_user(
        catalog, BOB, ("c.d", P.CREATE), ("c.d.customers", P.SELECT), ("c.d.big_orders", P.MANAGE)
    )
    assert [a.privilege for a in plan(sql, catalog).access] == ["SELECT", "CREATE", "MANAGE"]
    # A new view needs no MANAGE: nothing is replaced.
    fresh = "CREATE OR REPLACE VIEW v9 AS SELECT * FROM customers"
    assert [a.privilege for a in plan(fresh, catalog).access] == ["SELECT", "CREATE"]


def test_create_catalog_follows_the_servers_rule() -> None:
    catalog = as_user(world(), BOB)
    assert plan("CREATE CATALOG mine", catalog).action == "create_catalog"
    refused = plan_statement_error(
        "CREATE CATALOG mine", catalog, dataclasses.replace(context(), may_create_catalogs=False)
    )
    assert isinstance(refused, PermissionDenied)
    assert "only admins create them" in refused.message
    assert refused.details == {"kind": "catalog", "identifier": ["mine"], "privilege": "CREATE"}


def plan_statement_error(sql: str, catalog: MemoryCatalog, ctx: Any) -> CoreError:
    with pytest.raises(CoreError) as caught:
        plan_statement(sql, catalog, ctx)
    return caught.value


def test_owners_of_a_database_hold_everything_inside_it() -> None:
    catalog = world()
    catalog.owners[("database", "c", "other")] = BOB
    for key in list(catalog.relations):
        catalog.owners[("relation", *key)] = ALICE
    as_user(catalog, BOB, owned_databases={securable(catalog, "c.other").database_id: 1})
    assert plan("INSERT INTO c.other.orders SELECT 1", catalog).action == "insert"
    assert plan("DROP TABLE c.other.orders", catalog).access[0].privilege == "MANAGE"
    assert plan("CREATE TABLE c.other.t (x INT)", catalog).action == "create_table"


def test_describe_and_show_need_only_to_see_the_object() -> None:
    catalog = as_user(world(), BOB, ("c.d.orders", P.MANAGE))
    for sql in ("DESCRIBE orders", "SHOW CREATE TABLE orders", "DESCRIBE HISTORY orders"):
        assert plan(sql, catalog).access[0].privilege == "USE"
    refused = error_of("DESCRIBE customers", catalog)  # its database is seen
    assert isinstance(refused, PermissionDenied)
    assert refused.message == "You need USE on table `c`.`d`.`customers` to use it; you have none."
    assert plan("SHOW TABLES IN c.d", catalog).action == "show_tables"
    assert plan("USE c.d", catalog).action == "use"
    refused = error_of("USE c.other", catalog)  # the catalog is seen: refused, not hidden
    assert isinstance(refused, PermissionDenied)
    assert error_of("USE x.y", catalog).code == "NOT_FOUND"  # catalog x is not seen


def test_entering_a_database_needs_only_to_see_it_and_an_owned_object_shows_it() -> None:
    catalog = as_user(world(), BOB)
    catalog.owners[("relation", "c", "other", "orders")] = BOB
    assert plan("USE c.other", catalog).args == {"catalog": "c", "database": "other"}
    assert any(q.startswith("owns_inside") for q in catalog.questions)
    # Nothing of Bob's in c.d, but he sees the catalog through c.other.orders: the database
    # is refused, not hidden, as its REST page is.
    refused = error_of("USE c.d", catalog)
    assert isinstance(refused, PermissionDenied) and "`c`.`d`" in refused.message
    # A table of c.d answers as a missing one: which names c.d holds is not his to learn
    # (a missing name in it answers the same).
    assert error_of("SELECT * FROM c.d.orders", catalog).code == "NOT_FOUND"
    assert error_of("USE x.y", catalog).code == "NOT_FOUND"  # nothing of Bob's in catalog x


def test_an_object_owned_inside_a_database_makes_its_other_objects_refused_not_hidden() -> None:
    catalog = world()
    catalog.add_table("c.other.notes", ["id BIGINT"])
    catalog.owners[("relation", "c", "other", "orders")] = BOB
    as_user(catalog, BOB)
    refused = error_of("SELECT * FROM c.other.notes", catalog)
    assert isinstance(refused, PermissionDenied)
    assert "`c`.`other`.`notes`" in refused.message
    assert error_of("SELECT * FROM c.other.nothing", catalog).code == "NOT_FOUND"
    # Olga owns nothing anywhere: the same names are missing to her.
    as_user(catalog, OLGA)
    assert error_of("SELECT * FROM c.other.notes", catalog).code == "NOT_FOUND"
    assert error_of("SELECT * FROM c.d.orders", catalog).code == "NOT_FOUND"
    assert error_of("USE c.d", catalog).code == "NOT_FOUND"


def test_owns_inside_is_asked_once_per_securable_and_statement() -> None:
    catalog = as_user(world(), OLGA)
    error_of("CREATE TABLE c.d.t (x INT)", catalog)
    assert catalog.questions.count(f"owns_inside {securable(catalog, 'c').key}") == 1
    assert catalog.questions.count("access None") == 1


# --- READ FILES -----------------------------------------------------------------------------

OVER_PATH = f"CREATE TEMPORARY TABLE tt (id INT) USING csv LOCATION '{STORAGE_ROOT}/data/tt'"


def test_a_temporary_table_over_files_needs_read_files_on_their_root() -> None:
    catalog = as_user(world(), BOB)
    refused = error_of(OVER_PATH, catalog)
    assert isinstance(refused, PermissionDenied)
    assert refused.message == (
        f"You need READ FILES on storage root '{STORAGE_ROOT}' to read files under it; you "
        "have none."
    )
    assert refused.details == {"kind": "storage", "privilege": "READ FILES", "path": STORAGE_ROOT}
    root = GrantRow(P.READ_FILES, Kind.STORAGE, root=STORAGE_ROOT)
    catalog.user = Access(BOB, grants=(root,))
    assert access(plan(OVER_PATH, catalog)) == [("storage", (STORAGE_ROOT,), "READ FILES", None)]
    catalog.user = Access(BOB, read_files_for_all=True)
    assert plan(OVER_PATH, catalog).action == "create_table"


def test_external_tables_and_ctas_with_a_path_need_read_files() -> None:
    catalog = as_user(world(), BOB, ("c.d", P.CREATE))
    for sql in (
        f"CREATE TABLE e1 (id INT) USING csv LOCATION '{STORAGE_ROOT}/e1'",
        f"CREATE TABLE e2 USING parquet LOCATION '{STORAGE_ROOT}/e2' AS SELECT 1 AS id",
        f"CREATE TABLE e3 WITH ('connector' = 'json', 'path' = '{STORAGE_ROOT}/e3') AS SELECT 1",
    ):
        assert error_of(sql, catalog).details.get("privilege") == "READ FILES", sql
    # Managed tables read no files of anyone's: CREATE is enough.
    assert plan("CREATE TABLE m1 (id INT)", catalog).action == "create_table"
    assert plan("CREATE TABLE m2 AS SELECT 1 AS id", catalog).action == "ctas"


def test_reading_a_temporary_table_over_files_needs_read_files_again() -> None:
    """Declared while Bob held READ FILES, the table reads the files with his rights of now:
    a revoke counts from his next statement, as for every other privilege."""
    catalog = as_user(world(), BOB)
    catalog.add_table("c.d.scratch", ["id BIGINT"], temporary=True)  # a path under the root
    refused = error_of("SELECT * FROM scratch", catalog)
    assert isinstance(refused, PermissionDenied)
    assert refused.details == {"kind": "storage", "privilege": "READ FILES", "path": STORAGE_ROOT}
    catalog.user = Access(BOB, grants=(GrantRow(P.READ_FILES, Kind.STORAGE, root=STORAGE_ROOT),))
    assert access(plan("SELECT * FROM scratch", catalog)) == [
        ("storage", (STORAGE_ROOT,), "READ FILES", None)
    ]


def test_uploads_dataframes_and_the_rate_connector_need_no_read_files() -> None:
    catalog = as_user(world(), BOB)
    result = plan("CREATE TEMPORARY TABLE r WITH ('connector' = 'rate')", catalog)
    assert result.access == ()


# --- definer rights -------------------------------------------------------------------------


def test_a_shared_view_gives_bob_its_rows_only() -> None:
    catalog = as_user(world(), BOB, ("c.d.big_orders", P.SELECT))
    result = plan("SELECT * FROM big_orders", catalog)
    assert access(result) == [("view", BIG, "SELECT", None), ("table", ORDERS, "SELECT", BIG)]
    refused = error_of("SELECT * FROM orders", catalog)
    assert isinstance(refused, PermissionDenied)
    # Read directly and through the view, the table is checked for both: refused.
    joined = error_of("SELECT * FROM big_orders b JOIN orders o ON b.id = o.id", catalog)
    assert isinstance(joined, PermissionDenied) and joined.details["identifier"] == list(ORDERS)
    joined = error_of("SELECT * FROM orders o JOIN big_orders b ON b.id = o.id", catalog)
    assert isinstance(joined, PermissionDenied) and joined.details["identifier"] == list(ORDERS)


def test_a_view_runs_with_its_new_owners_rights_after_a_transfer() -> None:
    catalog = as_user(
        world(), ALICE, owned_catalogs=frozenset({securable(world(), "c").catalog_id})
    )
    assert plan("SELECT * FROM big_orders", catalog).action == "query"
    catalog.owners[("relation", *BIG)] = BOB
    give(catalog, BOB, ("c", P.USE))  # Bob sees the catalog and its databases, reads nothing
    refused = error_of("SELECT * FROM big_orders", catalog)
    assert isinstance(refused, PermissionDenied)
    assert refused.message == (
        "View `c`.`d`.`big_orders` cannot be read: its owner bob needs SELECT on table "
        "`c`.`d`.`orders`."
    )
    assert refused.details["via"] == {"kind": "view", "identifier": list(BIG), "owner": "bob"}
    give(catalog, BOB, ("c.d.orders", P.SELECT))
    assert access(plan("SELECT * FROM big_orders", catalog))[1] == ("table", ORDERS, "SELECT", BIG)


def test_an_ownerless_view_reads_nothing_permanent_and_says_how_to_fix_it() -> None:
    catalog = world()
    catalog.owners[("relation", *BIG)] = None
    refused = error_of("SELECT * FROM big_orders", catalog)  # even for an admin
    assert isinstance(refused, PermissionDenied)
    assert "it has no owner" in refused.message
    assert "ALTER VIEW `c`.`d`.`big_orders` OWNER TO USER name" in refused.message
    catalog.add_view("c.d.constant", "SELECT 1 AS one")
    catalog.owners[("relation", "c", "d", "constant")] = None
    assert plan("SELECT * FROM constant", catalog).action == "query"


def test_nested_views_of_different_owners_each_read_with_their_owners_rights() -> None:
    catalog = world()
    catalog.add_view("c.d.outer_v", "SELECT * FROM c.d.big_orders")
    catalog.owners[("relation", *BIG)] = CARL  # outer_v (Alice's) reads Carl's big_orders
    as_user(catalog, BOB, ("c.d.outer_v", P.SELECT))
    give(catalog, CARL, ("c.d", P.USE))
    refused = error_of("SELECT * FROM outer_v", catalog)
    assert refused.message == (
        "View `c`.`d`.`big_orders` cannot be read: its owner carl needs SELECT on table "
        "`c`.`d`.`orders`."
    )
    give(catalog, CARL, ("c.d.orders", P.SELECT))
    assert access(plan("SELECT * FROM outer_v", catalog)) == [
        ("view", ("c", "d", "outer_v"), "SELECT", None),
        ("view", BIG, "SELECT", ("c", "d", "outer_v")),  # Alice's right on Carl's view
        ("table", ORDERS, "SELECT", BIG),  # Carl's right on the table
    ]
    catalog.owners[("relation", *BIG)] = OLGA  # who may not see the table at all
    assert error_of("SELECT * FROM outer_v", catalog).code == "NOT_FOUND"


def test_a_sql_function_body_calls_with_its_owners_rights() -> None:
    catalog = world()
    catalog.add_sql_function("c.d.wrap", (("x", "INT"),), "INT", "c.d.plus1(x) * 2")
    catalog.owners[("function", "c", "d", "wrap")] = CARL
    as_user(catalog, BOB, ("f:c.d.wrap", P.EXECUTE))
    give(catalog, CARL, ("c.d", P.USE))
    refused = error_of("SELECT wrap(1)", catalog)
    assert refused.message == (
        "Function `c`.`d`.`wrap` cannot be called: its owner carl needs EXECUTE on function "
        "`c`.`d`.`plus1`."
    )
    give(catalog, CARL, ("f:c.d.plus1", P.EXECUTE))
    assert access(plan("SELECT wrap(1)", catalog)) == [
        ("function", ("c", "d", "wrap"), "EXECUTE", None),
        ("function", ("c", "d", "plus1"), "EXECUTE", ("c", "d", "wrap")),
    ]
    # Bob calling plus1 himself needs his own EXECUTE.
    assert isinstance(error_of("SELECT wrap(1) + plus1(1)", catalog), PermissionDenied)


def test_a_sql_function_body_reading_a_table_is_refused_whether_or_not_it_exists() -> None:
    catalog = as_user(world(), OLGA, ("c.d", P.CREATE))
    real = error_of(
        "CREATE FUNCTION f9(x INT) RETURNS INT RETURN (SELECT max(id) FROM orders)", catalog
    )
    twin = error_of(
        "CREATE FUNCTION f9(x INT) RETURNS INT RETURN (SELECT max(id) FROM ordersx)", catalog
    )
    assert "SQL functions cannot read tables or views" in real.message
    assert real.message == twin.message.replace("ordersx", "orders")


def test_explain_through_another_owners_view_names_only_the_view() -> None:
    catalog = as_user(world(), BOB, ("c.d.big_orders", P.SELECT))
    assert plan("SELECT * FROM big_orders", catalog).action == "query"
    refused = error_of("EXPLAIN EXTENDED SELECT * FROM big_orders", catalog)
    assert isinstance(refused, PermissionDenied)
    assert "big_orders" in refused.message and "`orders`" not in refused.message
    assert refused.details == {"kind": "view", "identifier": list(BIG), "privilege": "SELECT"}
    as_user(catalog, BOB, ("c.d.big_orders", P.SELECT), ("c.d.orders", P.SELECT))
    assert plan("EXPLAIN SELECT * FROM big_orders", catalog).action == "explain"
    # Through nested views, the view Bob's own text reads is the one named.
    catalog.add_view("c.d.outer_v", "SELECT * FROM c.d.big_orders")
    as_user(catalog, BOB, ("c.d.outer_v", P.SELECT))
    refused = error_of("EXPLAIN SELECT * FROM outer_v", catalog)
    assert refused.details["identifier"] == ["c", "d", "outer_v"]
    assert "big_orders" not in refused.message


def test_explain_of_ones_own_view_shows_what_one_reads_anyway() -> None:
    catalog = world()
    catalog.add_view("c.d.mine", "SELECT * FROM c.d.customers")
    catalog.owners[("relation", "c", "d", "mine")] = BOB
    as_user(catalog, BOB, ("c.d.customers", P.SELECT), ("c.d.mine", P.SELECT))
    assert plan("EXPLAIN SELECT * FROM mine", catalog).action == "explain"


@pytest.mark.parametrize(
    "reference",
    [
        "__tessera_r1",
        "`__tessera_r1`",
        "c.d.__tessera_r1",
        "`c`.`d`.`__tessera_r1`",
        "__TESSERA_R1",
    ],
)
def test_the_alias_of_a_views_table_cannot_be_named(reference: str) -> None:
    # Bob may read the view; its table is registered under an alias he must not reach.
    catalog = as_user(world(), BOB, ("c.d.big_orders", P.SELECT))
    for sql in (
        f"SELECT * FROM big_orders, {reference}",
        f"SELECT * FROM {reference}",
        f"WITH x AS (SELECT * FROM {reference}) SELECT * FROM big_orders, x",
    ):
        refused = error_of(sql, catalog)
        assert refused.code == "NOT_FOUND", (sql, refused)
        assert "__tessera_r1" in refused.message.lower()


def test_a_decision_is_made_once_however_often_an_object_is_read() -> None:
    catalog = as_user(world(), BOB, ("c.d.orders", P.SELECT))
    sql = "SELECT * FROM " + ", ".join(f"orders o{i}" for i in range(200))
    result = plan(sql, catalog)
    assert len(result.access) == 1
    assert catalog.questions.count("access None") == 1


# --- GRANT, REVOKE, SHOW GRANTS, ALTER … OWNER TO --------------------------------------------


def test_grant_plans_its_args() -> None:
    result = plan("GRANT SELECT, USE ON TABLE c.d.orders TO TEAM analysts", world())
    assert result.to_dict() == {
        "kind": "ddl",
        "action": "grant",
        "needs_spark": False,
        "sql": "",
        "relations": [],
        "functions": [],
        "target": ["c", "d", "orders"],
        "args": {
            "securable": {"kind": "table", "identifier": ["c", "d", "orders"]},
            "privileges": ["USE", "SELECT"],
            "principal": {"type": "team", "name": "analysts"},
        },
    }
    assert statement_kind("GRANT SELECT ON t TO USER u") == "ddl"
    assert statement_kind("REVOKE SELECT ON t FROM USER u") == "ddl"
    assert statement_kind("SHOW GRANTS ON t") == "show"


@pytest.mark.parametrize(
    ("sql", "securable", "privileges", "principal"),
    [
        ("grant select on orders to user bob", ("table", ORDERS), ["SELECT"], ("user", "bob")),
        (
            "GRANT ALL PRIVILEGES ON TABLE big_orders TO USER `ann@example.com`",
            ("view", BIG),  # TABLE naming a view: its real kind
            ["USE", "SELECT", "MANAGE"],
            ("user", "ann@example.com"),
        ),
        (
            "GRANT USE CATALOG, use  schema, BROWSE ON CATALOG `c` TO TEAM 'data team'",
            ("catalog", ("c",)),
            ["USE"],
            ("team", "data team"),
        ),
        (
            "GRANT ALL PRIVILEGES ON SCHEMA d TO TEAM t",
            ("database", ("c", "d")),
            ["USE", "SELECT", "MODIFY", "CREATE", "EXECUTE", "MANAGE"],
            ("team", "t"),
        ),
        (
            "GRANT EXECUTE ON FUNCTION C.D.SLUGIFY TO USER u",
            ("function", ("c", "d", "slugify")),
            ["EXECUTE"],
            ("user", "u"),
        ),
        (
            "GRANT MODIFY, SELECT ON DATABASE other TO USER u",
            ("database", ("c", "other")),
            ["SELECT", "MODIFY"],
            ("user", "u"),
        ),
        (
            "REVOKE MANAGE ON VIEW c.d.big_orders FROM TEAM t",
            ("view", BIG),
            ["MANAGE"],
            ("team", "t"),
        ),
        (
            f"GRANT READ FILES ON STORAGE ROOT '{STORAGE_ROOT}/' TO TEAM t",
            ("storage", STORAGE_ROOT),
            ["READ FILES"],
            ("team", "t"),
        ),
        (
            f"REVOKE ALL PRIVILEGES ON STORAGE ROOT 'file:{STORAGE_ROOT}' FROM USER u",
            ("storage", STORAGE_ROOT),
            ["READ FILES"],
            ("user", "u"),
        ),
    ],
)
def test_grant_and_revoke_grammar(
    sql: str, securable: tuple[str, Any], privileges: list[str], principal: tuple[str, str]
) -> None:
    result = plan(sql, world())
    kind, where = securable
    expected = (
        {"kind": kind, "path": where}
        if kind == "storage"
        else {"kind": kind, "identifier": list(where)}
    )
    assert result.args == {
        "securable": expected,
        "privileges": privileges,
        "principal": {"type": principal[0], "name": principal[1]},
    }
    assert result.needs_spark is False and result.kind == "ddl"


def test_all_privileges_expands_to_what_each_kind_takes_in_order() -> None:
    for on, kind in [
        ("CATALOG c", Kind.CATALOG),
        ("TABLE orders", Kind.TABLE),
        ("FUNCTION slugify", Kind.FUNCTION),
    ]:
        result = plan(f"GRANT ALL PRIVILEGES ON {on} TO USER u", world())
        assert result.args["privileges"] == [p.value for p in ORDER if p in GRANTABLE[kind]]


@pytest.mark.parametrize(
    ("sql", "fragment", "details"),
    [
        (
            "GRANT MODIFY ON VIEW big_orders TO USER u",
            "MODIFY does not apply to a view; a view takes USE, SELECT and MANAGE.",
            {"privilege": "MODIFY", "kind": "view", "allowed": ["USE", "SELECT", "MANAGE"]},
        ),
        ("GRANT MODIFY ON TABLE big_orders TO USER u", "MODIFY does not apply to a view", None),
        (
            "GRANT EXECUTE ON orders TO USER u",
            "a table takes USE, SELECT, MODIFY and MANAGE.",
            None,
        ),
        ("GRANT READ FILES ON CATALOG c TO USER u", "READ FILES does not apply to a catalog", None),
        (
            "GRANT SELECT ON STORAGE ROOT '/srv/tessera/external' TO USER u",
            "a storage root takes READ FILES.",
            None,
        ),
        (
            "GRANT DELETE ON orders TO USER u",
            "DELETE is not a privilege; the privileges are USE, SELECT",
            {"privilege": "DELETE", "field": "sql"},
        ),
        ("GRANT CREATE TABLE ON SCHEMA d TO USER u", "CREATE TABLE is not a privilege", None),
        ("GRANT SELECT ORDERS ON orders TO USER u", "SELECT ORDERS is not a privilege", None),
        ("GRANT ALL ON orders TO USER u", "Write ALL PRIVILEGES (not ALL)", None),
        ("GRANT SELECT ON VIEW orders TO USER u", "`c`.`d`.`orders` is a table, not a view", None),
        (
            "GRANT USE ON STORAGE ROOT '/etc' TO USER u",
            "'/etc' is not a storage root of this server",
            None,
        ),
        (
            "GRANT USE ON STORAGE ROOT '/srv/tessera/external/x' TO USER u",
            "is not a storage root",
            None,
        ),
        ("ALTER TABLE orders OWNER TO TEAM t", "Owners are users", None),
        ("GRANT SELECT ON orders TO USER ''", "A principal's name is 1 to 150 characters", None),
        (
            "GRANT SELECT ON orders TO USER `" + "x" * 151 + "`",
            "A principal's name is 1 to 150",
            None,
        ),
    ],
)
def test_grant_refusals_say_what_is_allowed(
    sql: str, fragment: str, details: dict[str, Any] | None
) -> None:
    refused = error_of(sql, world())
    assert refused.code == "VALIDATION_ERROR", refused
    assert fragment in refused.message
    assert refused.message.endswith(".")
    if details is not None:
        assert refused.details == details


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("GRANT SELECT ON orders TO bob", "Expected USER name or TEAM name but found 'bob'"),
        ("GRANT SELECT orders TO USER bob", "Expected ',' or ON but found 'orders'"),
        ("GRANT ON orders TO USER bob", "Expected a privilege but found 'ON'"),
        ("GRANT SELECT, ON orders TO USER bob", "Expected a privilege but found 'ON'"),
        (
            "GRANT SELECT ON orders TO USER bob WITH GRANT OPTION",
            "Expected the end of the statement",
        ),
        ("REVOKE SELECT ON orders TO USER bob", "Expected FROM but found 'TO'"),
        ("GRANT SELECT ON c.d.e.f TO USER bob", "A name has at most 3 parts"),
        ("GRANT USE ON CATALOG c.d TO USER bob", "A name has at most 1 part"),
        ("GRANT 'SELECT' ON orders TO USER bob", "Expected a privilege"),
        ("SHOW GRANTS orders", "Expected ON but found 'orders'"),
        ("SHOW GRANTS ON orders FOR bob", "Expected USER name or TEAM name"),
        ("ALTER TABLE orders OWNER TO bob", "Expected USER name but found 'bob'"),
        ("ALTER TABLE orders OWNER TO USER", "Expected a user name but the statement ended"),
    ],
)
def test_grant_grammar_errors_point_at_the_spot(sql: str, expected: str) -> None:
    with pytest.raises(ParseError) as caught:
        plan(sql, world())
    assert caught.value.message.startswith(expected), caught.value.message


def test_show_grants_plans_its_args_and_needs_only_to_see() -> None:
    catalog = as_user(world(), BOB, ("c.d.orders", P.SELECT))
    result = plan("SHOW GRANTS ON TABLE orders FOR USER `bob`", catalog)
    assert (result.kind, result.action) == ("show", "show_grants")
    assert result.args == {
        "securable": {"kind": "table", "identifier": list(ORDERS)},
        "principal": {"type": "user", "name": "bob"},
    }
    assert plan("SHOW GRANTS ON CATALOG c", catalog).args["principal"] is None
    assert isinstance(error_of("SHOW GRANTS ON customers", catalog), PermissionDenied)


def test_grant_and_revoke_need_manage() -> None:
    catalog = as_user(world(), BOB, ("c.d.orders", P.SELECT), ("c", P.USE))
    for sql in (
        "GRANT SELECT ON orders TO USER carl",
        "REVOKE SELECT ON orders FROM USER bob",
        "GRANT USE ON CATALOG c TO USER carl",
        "GRANT USE ON DATABASE c.other TO USER carl",
    ):
        refused = error_of(sql, catalog)
        assert isinstance(refused, PermissionDenied), sql
        assert "MANAGE" in refused.message and "to change, drop or grant privileges on it" in (
            refused.message
        )
    as_user(catalog, BOB, ("c.d", P.MANAGE))  # MANAGE on the database passes down
    assert plan("GRANT SELECT ON orders TO USER carl", catalog).action == "grant"
    assert isinstance(error_of("GRANT USE ON CATALOG c TO USER carl", catalog), PermissionDenied)


def test_storage_roots_are_for_admins_only() -> None:
    catalog = as_user(world(), BOB, read_files_for_all=True)
    for sql in (
        f"GRANT READ FILES ON STORAGE ROOT '{STORAGE_ROOT}' TO USER bob",
        f"SHOW GRANTS ON STORAGE ROOT '{STORAGE_ROOT}'",
        "SHOW GRANTS ON STORAGE ROOT '/etc'",  # and roots are not revealed to them
    ):
        refused = error_of(sql, catalog)
        assert isinstance(refused, PermissionDenied), sql
        assert refused.message.startswith("Only admins may")
        assert STORAGE_ROOT not in refused.message or STORAGE_ROOT in sql


def test_alter_owner_by_owners_and_admins_only() -> None:
    result = plan("ALTER VIEW c.d.big_orders SET OWNER TO USER `carl`", world())
    assert result.args == {
        "securable": {"kind": "view", "identifier": list(BIG)},
        "owner": {"type": "user", "name": "carl"},
    }
    assert (result.kind, result.action, result.needs_spark) == ("ddl", "alter_owner", False)
    for words, kind in [
        ("CATALOG c", "catalog"),
        ("SCHEMA c.d", "database"),
        ("DATABASE d", "database"),
        ("FUNCTION slugify", "function"),
        ("TABLE big_orders", "view"),
    ]:
        assert plan(f"ALTER {words} OWNER TO USER u", world()).args["securable"]["kind"] == kind
    # MANAGE is not enough to give an object away.
    catalog = as_user(world(), BOB, ("c.d.orders", P.MANAGE))
    refused = error_of("ALTER TABLE orders OWNER TO USER bob", catalog)
    assert isinstance(refused, PermissionDenied)
    assert "only its owner, the owner of what holds it, or an admin may" in refused.message
    catalog.owners[("relation", *ORDERS)] = BOB
    assert plan("ALTER TABLE orders OWNER TO USER carl", catalog).action == "alter_owner"


@pytest.mark.parametrize(
    "sql",
    [
        "ALTER TABLE orders RENAME TO x",
        "ALTER TABLE orders SET LOCATION '/etc'",
        "ALTER TABLE orders SET TBLPROPERTIES ('a' = 'b')",
        "ALTER VIEW big_orders AS SELECT 1",
        "ALTER TABLE a.b.c.d OWNER TO USER u",
        "ALTER INDEX i OWNER TO USER u",
        "ALTER TABLE",
        "ALTER",
    ],
)
def test_other_alter_statements_keep_their_refusal(sql: str) -> None:
    with pytest.raises(ForbiddenSql) as caught:
        plan(sql, world())
    assert caught.value.message.endswith(
        "is not supported: Tessera runs the statements of its SQL reference only, so that it "
        "sees every object a statement touches."
    )


def test_temporary_objects_take_no_grants() -> None:
    catalog = world()
    catalog.add_table("c.d.orders", ["id BIGINT"], temporary=True)  # shadows the table
    refused = error_of("GRANT SELECT ON orders TO USER u", catalog)
    assert "temporary table of this session" in refused.message


def test_a_huge_privilege_list_is_planned_quickly_and_once_each() -> None:
    words = ["SELECT", "USE", "MANAGE", "MODIFY", "USE SCHEMA", "BROWSE"] * 2_000
    began = time.perf_counter()
    result = plan(f"GRANT {', '.join(words)} ON orders TO USER u", world())
    assert time.perf_counter() - began < 5
    assert result.args["privileges"] == ["USE", "SELECT", "MODIFY", "MANAGE"]
    refused = error_of(f"GRANT {', '.join(words)}, {'NOPE ' * 3}ON orders TO USER u", world())
    assert len(refused.message) < 200


def test_plan_of_every_grant_statement_round_trips_and_needs_no_spark() -> None:
    for sql in (
        "GRANT SELECT ON orders TO USER u",
        "REVOKE SELECT ON orders FROM TEAM t",
        "SHOW GRANTS ON orders",
        "ALTER TABLE orders OWNER TO USER u",
    ):
        result = plan(sql, world())
        assert not result.needs_spark
        assert Plan.from_dict(json.loads(json.dumps(result.to_dict()))) == result


def test_a_grants_statement_on_a_hidden_object_is_missing_for_every_kind() -> None:
    refuse: Callable[[str], CoreError] = lambda sql: error_of(sql, as_user(world(), OLGA))  # noqa: E731
    for sql in (
        "GRANT USE ON DATABASE c.d TO USER olga",
        "SHOW GRANTS ON FUNCTION c.d.slugify FOR USER olga",
        "ALTER CATALOG c OWNER TO USER olga",
    ):
        assert refuse(sql).code == "NOT_FOUND", sql


def test_the_planning_budget_covers_the_readers_privilege_questions() -> None:
    from core.limits import PlanningTimeout

    class SlowAccess(MemoryCatalog):
        def access(self, principal: int | None = None) -> Access:
            time.sleep(0.3)
            return super().access(principal)

    catalog = SlowAccess()
    catalog.add_table("c.d.t", ["id BIGINT"])
    catalog.add_table("c.d.u", ["id BIGINT"])
    ctx = dataclasses.replace(context(), budget_seconds=0.1)
    with pytest.raises(PlanningTimeout):  # the lookup after the slow answer stops it
        plan_statement("SELECT * FROM t JOIN u USING (id)", catalog, ctx)


def test_a_catalog_seen_through_an_owned_object_costs_one_question_per_statement() -> None:
    catalog = as_user(world(), OLGA)
    catalog.owners[("relation", "c", "other", "orders")] = OLGA  # c is seen through it
    refused = error_of("CREATE DATABASE c.newdb", catalog)  # seen, then CREATE refused
    assert isinstance(refused, PermissionDenied)
    assert plan("SHOW DATABASES IN c", catalog).action == "show_databases"
    assert catalog.questions.count(f"owns_inside {securable(catalog, 'c').key}") == 2  # 2 plans
