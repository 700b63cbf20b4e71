"""The privilege rule of issue 18 (``core.privileges``, ADR 0011 §1.1, §2 and its amendments):
what each kind holds, inheritance down from catalogs and databases, ``USE`` staying on the
container, owners, admins, team rows, ``scope`` for list filters, ``decide``'s hidden versus
denied, ``flags``, the refusal sentences — and a Hypothesis test of ``effective``,
``decide``, ``visible`` and ``scope`` against a brute-force oracle written out here, over
random worlds of owners and grants.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.privileges import (
    GRANTABLE,
    HOLDS,
    INHERITED,
    ORDER,
    Access,
    Decision,
    GrantRow,
    Kind,
    Privilege,
    Securable,
    decide,
    denied_message,
    effective,
    flags,
    parse_privilege,
    root_of,
    scope,
    sorted_privileges,
    visible,
)

P = Privilege
ALICE, BOB, CARL = 1, 2, 3

# One world: catalog 1 (owner Alice) with database 10 (owner Alice) holding table 100, view
# 101 and function 200; database 11 (owner Carl) holding table 102. Catalog 2 (owner Carl).
CATALOG = Securable(Kind.CATALOG, catalog_id=1, owner_ids=(ALICE, None, None), path=("c",))
DATABASE = Securable(
    Kind.DATABASE, catalog_id=1, database_id=10, owner_ids=(ALICE, ALICE, None), path=("c", "d")
)
OTHER_DATABASE = Securable(
    Kind.DATABASE, catalog_id=1, database_id=11, owner_ids=(ALICE, CARL, None), path=("c", "e")
)
TABLE = Securable(
    Kind.TABLE,
    catalog_id=1,
    database_id=10,
    object_id=100,
    owner_ids=(ALICE, ALICE, ALICE),
    path=("c", "d", "t"),
)
VIEW = Securable(
    Kind.VIEW,
    catalog_id=1,
    database_id=10,
    object_id=101,
    owner_ids=(ALICE, ALICE, ALICE),
    path=("c", "d", "v"),
)
FUNCTION = Securable(
    Kind.FUNCTION,
    catalog_id=1,
    database_id=10,
    object_id=200,
    owner_ids=(ALICE, ALICE, ALICE),
    path=("c", "d", "f"),
)
CARLS_TABLE = Securable(
    Kind.TABLE,
    catalog_id=1,
    database_id=11,
    object_id=102,
    owner_ids=(ALICE, CARL, CARL),
    path=("c", "e", "u"),
)
CARLS_CATALOG = Securable(Kind.CATALOG, catalog_id=2, owner_ids=(CARL, None, None), path=("x",))
ROOT = Securable(Kind.STORAGE, root="/data/external")


def bob(*rows: GrantRow, **kwargs: object) -> Access:
    return Access(BOB, grants=rows, **kwargs)  # type: ignore[arg-type]


def on(s: Securable, privilege: Privilege) -> GrantRow:
    """A grant row of ``privilege`` on ``s`` (its ancestry denormalised, as stored)."""
    object_id = s.object_id if s.kind in (Kind.TABLE, Kind.VIEW, Kind.FUNCTION) else None
    return GrantRow(privilege, s.kind, s.catalog_id, s.database_id, object_id, s.root)


# --- §1.1: what each kind holds, where each privilege may be granted ----------------------


def test_what_each_kind_holds_and_takes_is_the_adr_table() -> None:
    assert {
        Kind.CATALOG: {P.USE, P.CREATE, P.MANAGE},
        Kind.DATABASE: {P.USE, P.CREATE, P.MANAGE},
        Kind.TABLE: {P.USE, P.SELECT, P.MODIFY, P.MANAGE},
        Kind.VIEW: {P.USE, P.SELECT, P.MANAGE},
        Kind.FUNCTION: {P.USE, P.EXECUTE, P.MANAGE},
        Kind.STORAGE: {P.READ_FILES},
    } == HOLDS
    everything = {P.USE, P.SELECT, P.MODIFY, P.CREATE, P.EXECUTE, P.MANAGE}
    assert GRANTABLE[Kind.CATALOG] == GRANTABLE[Kind.DATABASE] == everything
    for kind in (Kind.TABLE, Kind.VIEW, Kind.FUNCTION, Kind.STORAGE):
        assert GRANTABLE[kind] == HOLDS[kind]
    assert INHERITED[Kind.TABLE] == {P.SELECT, P.MODIFY, P.MANAGE}
    assert INHERITED[Kind.DATABASE] == HOLDS[Kind.DATABASE]  # a catalog's CREATE: databases


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("select", P.SELECT),
        ("  Read   Files ", P.READ_FILES),
        ("READ_FILES", P.READ_FILES),
        ("USE CATALOG", P.USE),
        ("use schema", P.USE),
        ("BROWSE", P.USE),
        ("ALL PRIVILEGES", None),
        ("DELETE", None),
        ("", None),
    ],
)
def test_privileges_are_read_in_any_case_and_unity_catalog_spellings(
    text: str, expected: Privilege | None
) -> None:
    assert parse_privilege(text) == expected


def test_privileges_are_listed_in_one_order() -> None:
    assert sorted_privileges([P.MANAGE, P.USE, P.SELECT, P.USE]) == [P.USE, P.SELECT, P.MANAGE]
    assert ORDER[0] is P.USE and ORDER[-1] is P.READ_FILES


# --- inheritance, USE on the container ---------------------------------------------------


def test_a_catalog_grant_passes_down_what_each_kind_holds() -> None:
    access = bob(on(CATALOG, P.SELECT), on(CATALOG, P.EXECUTE), on(CATALOG, P.MODIFY))
    assert effective(access, TABLE) == {P.SELECT, P.MODIFY}
    assert effective(access, VIEW) == {P.SELECT}  # views are not written
    assert effective(access, FUNCTION) == {P.EXECUTE}
    assert effective(access, CARLS_TABLE) == {P.SELECT, P.MODIFY}  # every database inside
    assert effective(access, CATALOG) == set()  # SELECT means nothing on a catalog
    assert effective(access, CARLS_CATALOG) == set()


def test_a_database_grant_stays_in_its_database() -> None:
    access = bob(on(DATABASE, P.SELECT), on(DATABASE, P.CREATE))
    assert effective(access, TABLE) == {P.SELECT}
    assert effective(access, DATABASE) == {P.CREATE}
    assert effective(access, CARLS_TABLE) == set()
    assert effective(access, CATALOG) == set()  # nothing on the catalog itself ...
    assert visible(access, CATALOG)  # ... but its name is seen
    # An object's parent is its database: database e is not seen, so its table is hidden;
    # the catalog is seen, so database e itself is refused.
    assert decide(access, CARLS_TABLE, P.SELECT) is Decision.HIDDEN
    assert decide(access, OTHER_DATABASE, P.USE) is Decision.DENIED


def test_use_on_a_catalog_shows_it_and_its_databases_but_no_object_inside() -> None:
    access = bob(on(CATALOG, P.USE))
    assert effective(access, CATALOG) == {P.USE}
    assert effective(access, DATABASE) == {P.USE}  # CREATE, USE, MANAGE pass to databases
    assert effective(access, TABLE) == set()
    assert not visible(access, TABLE)
    # Bob may use the database, so a table in it answers DENIED, not HIDDEN (Unity Catalog).
    assert decide(access, TABLE, P.SELECT) is Decision.DENIED
    assert decide(access, CATALOG, P.USE) is Decision.ALLOWED
    assert decide(access, CARLS_CATALOG, P.USE) is Decision.HIDDEN


def test_use_on_a_database_shows_its_name_not_its_tables() -> None:
    access = bob(on(DATABASE, P.USE))
    assert effective(access, DATABASE) == {P.USE}
    assert effective(access, TABLE) == set()
    assert decide(access, TABLE, P.SELECT) is Decision.DENIED
    assert decide(access, OTHER_DATABASE, P.USE) is Decision.DENIED  # the catalog is seen
    assert decide(access, CARLS_TABLE, P.SELECT) is Decision.HIDDEN  # database e is not


def test_a_privilege_on_one_object_shows_it_and_its_parents() -> None:
    access = bob(on(TABLE, P.SELECT))
    assert effective(access, TABLE) == {P.SELECT}
    assert visible(access, DATABASE) and visible(access, CATALOG)
    assert effective(access, DATABASE) == set()
    assert decide(access, TABLE, P.MODIFY) is Decision.DENIED
    assert decide(access, VIEW, P.SELECT) is Decision.DENIED  # its database is seen
    assert decide(access, CARLS_TABLE, P.SELECT) is Decision.HIDDEN
    assert decide(access, OTHER_DATABASE, P.USE) is Decision.DENIED  # the catalog is seen


def test_a_grant_on_an_object_means_only_what_its_kind_holds() -> None:
    # Rows the services never write (MODIFY on a view) still grant nothing beyond HOLDS.
    access = bob(on(VIEW, P.MODIFY), on(FUNCTION, P.SELECT))
    assert effective(access, VIEW) == set()
    assert effective(access, FUNCTION) == set()


# --- owners, admins, anonymous, storage --------------------------------------------------


@pytest.mark.parametrize("s", [CATALOG, DATABASE, TABLE, VIEW, FUNCTION, CARLS_TABLE])
def test_the_owner_of_a_catalog_holds_everything_inside(s: Securable) -> None:
    assert effective(Access(ALICE), s) == HOLDS[s.kind]


def test_a_database_owner_holds_its_objects_and_sees_its_catalog() -> None:
    carl = Access(CARL, owned_databases={11: 1}, owned_catalogs=frozenset({2}))
    assert effective(carl, CARLS_TABLE) == HOLDS[Kind.TABLE]
    assert effective(carl, OTHER_DATABASE) == HOLDS[Kind.DATABASE]
    assert effective(carl, CATALOG) == set()
    assert visible(carl, CATALOG)
    assert decide(carl, DATABASE, P.USE) is Decision.DENIED  # the catalog is seen
    assert decide(carl, TABLE, P.SELECT) is Decision.HIDDEN  # database d is not


def test_an_object_owner_holds_it_and_nothing_beside_it() -> None:
    own = Securable(
        Kind.TABLE, catalog_id=1, database_id=10, object_id=103, owner_ids=(ALICE, ALICE, BOB)
    )
    access = Access(BOB)
    assert effective(access, own) == HOLDS[Kind.TABLE]
    assert effective(access, TABLE) == set()
    # The database is seen through the owned object only when the caller says so (a query).
    assert decide(access, DATABASE, P.USE) is Decision.HIDDEN
    assert decide(access, DATABASE, P.USE, lambda: True) is Decision.DENIED
    assert visible(access, CATALOG, lambda: True)


@pytest.mark.parametrize("s", [CATALOG, DATABASE, TABLE, VIEW, FUNCTION, ROOT, CARLS_CATALOG])
def test_admins_hold_everything_anonymous_users_nothing(s: Securable) -> None:
    assert effective(Access(CARL, admin=True), s) == HOLDS[s.kind]
    assert effective(Access(None, admin=True), s) == HOLDS[s.kind]  # the system
    assert effective(Access(None), s) == set()
    assert decide(Access(None), s, P.USE) in (Decision.HIDDEN, Decision.DENIED)


def test_read_files_comes_from_a_grant_on_the_root_or_the_deployment() -> None:
    assert effective(bob(on(ROOT, P.READ_FILES)), ROOT) == {P.READ_FILES}
    other = Securable(Kind.STORAGE, root="/data/other")
    assert effective(bob(on(ROOT, P.READ_FILES)), other) == set()
    assert effective(bob(read_files_for_all=True), other) == {P.READ_FILES}
    assert effective(Access(ALICE), ROOT) == set()  # owning catalogs gives no files
    assert root_of("/data/external/x/y.csv", ["/data/", "/data/external"]) == "/data/external"
    assert root_of("/data/externals/x", ["/data/external"]) is None
    assert root_of("/data/external", ["/data/external/"]) == "/data/external"


def test_team_and_everyone_rows_add_up_with_the_users_own() -> None:
    # Access holds the user's rows, their teams' and everyone's alike: they add up.
    access = bob(on(TABLE, P.SELECT), on(DATABASE, P.MODIFY), on(CATALOG, P.USE))
    assert effective(access, TABLE) == {P.SELECT, P.MODIFY}
    assert effective(access, CATALOG) == {P.USE}


# --- scope (list filters) ----------------------------------------------------------------


def test_scope_of_admins_is_everything_of_anonymous_nothing() -> None:
    assert scope(Access(BOB, admin=True), Kind.TABLE).everything
    nothing = scope(Access(None), Kind.TABLE)
    assert not nothing.everything and not nothing.covers(1, 10) and not nothing.objects


def test_scope_of_tables_views_and_functions() -> None:
    access = bob(
        on(CATALOG, P.EXECUTE),
        on(DATABASE, P.SELECT),
        on(CARLS_TABLE, P.USE),
        on(VIEW, P.MANAGE),
        owned_databases={12: 2},
        owned_catalogs=frozenset({3}),
    )
    tables = scope(access, Kind.TABLE)
    assert tables.databases == {10, 12} and tables.catalogs == {3}
    assert tables.objects == {102} and tables.owner_id == BOB
    assert tables.covers(1, 10) and tables.covers(3, 99) and not tables.covers(1, 11)
    assert scope(access, Kind.VIEW).objects == {101}
    functions = scope(access, Kind.FUNCTION)
    assert functions.catalogs == {1, 3} and functions.covers(1, 11)
    databases = scope(access, Kind.DATABASE)
    assert databases.catalogs == {1, 3} and databases.databases == {10, 11, 12}
    catalogs = scope(access, Kind.CATALOG)
    assert catalogs.catalogs == {1, 2, 3}


def test_use_on_a_catalog_scopes_its_databases_not_its_tables() -> None:
    access = bob(on(CATALOG, P.USE))
    assert scope(access, Kind.DATABASE).covers(1, None)
    assert not scope(access, Kind.TABLE).covers(1, 10)


# --- flags and messages ------------------------------------------------------------------


def test_flags_say_what_the_rest_api_may_offer() -> None:
    assert flags(bob(on(TABLE, P.SELECT)), TABLE) == {
        "modify": False,
        "drop": False,
        "create": False,
        "manage": False,
        "select": True,
        "write": False,
        "execute": False,
        "transfer_owner": False,
    }
    managed = flags(bob(on(DATABASE, P.MANAGE), on(DATABASE, P.CREATE)), DATABASE)
    assert managed["manage"] and managed["drop"] and managed["create"]
    assert not managed["transfer_owner"]  # MANAGE does not give ownership away
    assert flags(Access(ALICE), TABLE)["transfer_owner"]
    assert flags(Access(CARL, admin=True), TABLE)["transfer_owner"]


def test_the_refusal_names_object_privilege_and_what_the_user_has() -> None:
    message, details = denied_message(TABLE, P.SELECT, {P.USE, P.MANAGE})
    assert message == "You need SELECT on table `c`.`d`.`t` to read it; you have USE, MANAGE."
    assert details == {"kind": "table", "privilege": "SELECT", "identifier": ["c", "d", "t"]}
    message, _ = denied_message(DATABASE, P.CREATE)
    assert message == "You need CREATE on database `c`.`d` to create objects in it; you have none."
    message, details = denied_message(ROOT, P.READ_FILES)
    assert message == (
        "You need READ FILES on storage root '/data/external' to read files under it; "
        "you have none."
    )
    assert details == {"kind": "storage", "privilege": "READ FILES", "path": "/data/external"}


def test_the_refusal_through_a_view_names_the_view_and_whose_rights_are_missing() -> None:
    message, details = denied_message(TABLE, P.SELECT, definer="alice", via=VIEW)
    assert message == (
        "View `c`.`d`.`v` cannot be read: its owner alice needs SELECT on table `c`.`d`.`t`."
    )
    assert details["via"] == {"kind": "view", "identifier": ["c", "d", "v"], "owner": "alice"}
    message, details = denied_message(TABLE, P.SELECT, via=VIEW)
    assert "it has no owner" in message
    assert "ALTER VIEW `c`.`d`.`v` OWNER TO USER name" in message
    assert details["via"]["owner"] is None
    message, _ = denied_message(FUNCTION, P.EXECUTE, definer="bob", via=FUNCTION)
    assert message.startswith("Function `c`.`d`.`f` cannot be called: its owner bob needs")


def test_names_with_backticks_are_quoted_in_messages() -> None:
    odd = Securable(Kind.CATALOG, catalog_id=9, path=("a`b",))
    assert denied_message(odd, P.USE)[0].startswith("You need USE on catalog `a``b`")


# --- the rule against a brute force -------------------------------------------------------

KINDS_BELOW = (Kind.TABLE, Kind.VIEW, Kind.FUNCTION)


@dataclass(frozen=True)
class Node:
    """One object of a random world: its kind, ids and the path of ids above it."""

    kind: Kind
    catalog: int
    database: int | None = None
    object: int | None = None

    def above(self) -> list[Node]:
        """Its catalog and database, literally."""
        out = [Node(Kind.CATALOG, self.catalog)]
        if self.kind in KINDS_BELOW:
            out.append(Node(Kind.DATABASE, self.catalog, self.database))
        return out

    def contains(self, other: Node) -> bool:
        """Whether ``other`` lies strictly inside this catalog or database."""
        if self == other or other.catalog != self.catalog:
            return False
        if self.kind is Kind.CATALOG:
            return True
        return self.kind is Kind.DATABASE and other.database == self.database


# Two catalogs, two databases each, a table, a view and a function in each database.
NODES: list[Node] = []
for _c in (1, 2):
    NODES.append(Node(Kind.CATALOG, _c))
    for _d in (_c * 10, _c * 10 + 1):
        NODES.append(Node(Kind.DATABASE, _c, _d))
        for _i, _k in enumerate(KINDS_BELOW):
            NODES.append(Node(_k, _c, _d, _d * 10 + _i))
USERS = (None, 1, 2)  # owners: nobody, the user under test (1), someone else
ROW = st.sampled_from(NODES).flatmap(
    lambda n: st.tuples(st.just(n), st.sampled_from(sorted(GRANTABLE[n.kind])))
)
WORLD = st.tuples(
    st.booleans(),  # admin
    st.lists(st.sampled_from(USERS), min_size=len(NODES), max_size=len(NODES)),  # owners
    st.lists(ROW, max_size=12),
)
LITERAL_HOLDS = {
    Kind.CATALOG: {"USE", "CREATE", "MANAGE"},
    Kind.DATABASE: {"USE", "CREATE", "MANAGE"},
    Kind.TABLE: {"USE", "SELECT", "MODIFY", "MANAGE"},
    Kind.VIEW: {"USE", "SELECT", "MANAGE"},
    Kind.FUNCTION: {"USE", "EXECUTE", "MANAGE"},
}


class Oracle:
    """The rule as the issue states it, by brute force over the world's nodes."""

    def __init__(
        self, admin: bool, owners: dict[Node, int | None], rows: list[tuple[Node, Privilege]]
    ) -> None:
        self.admin, self.owners, self.rows = admin, owners, rows

    def owns(self, node: Node) -> bool:
        return any(self.owners[n] == 1 for n in [*node.above(), node])

    def held(self, node: Node) -> set[str]:
        holds = LITERAL_HOLDS[node.kind]
        if self.admin or self.owns(node):
            return set(holds)
        out: set[str] = set()
        for target, privilege in self.rows:
            if target == node:
                out |= {privilege.value} & holds
            elif target.contains(node):
                # USE stays on the container for objects; databases take a catalog's all.
                passed = holds - {"USE"} if node.kind in KINDS_BELOW else holds
                out |= {privilege.value} & passed
        return out

    def seen(self, node: Node, *, ask: bool = True) -> bool:
        """Held something, or (containers) something inside is granted or owned; ``ask``:
        also what the user owns inside (the reader's question)."""
        if self.held(node):
            return True
        if node.kind in KINDS_BELOW:
            return False
        if any(target == node or node.contains(target) for target, _ in self.rows):
            return True
        if node.kind is Kind.DATABASE and any(
            target == Node(Kind.CATALOG, node.catalog) for target, _ in self.rows
        ):
            return True
        owned_inside = [n for n in NODES if node.contains(n) and self.owners[n] == 1]
        if any(n.kind is Kind.DATABASE for n in owned_inside):
            return True
        return ask and any(n.kind in KINDS_BELOW for n in owned_inside)

    def decide(self, node: Node, needed: str) -> Decision:
        if needed in self.held(node):
            return Decision.ALLOWED
        if self.seen(node):
            return Decision.DENIED
        parents = node.above()
        if node.kind is not Kind.CATALOG and self.seen(parents[-1], ask=False):
            return Decision.DENIED
        return Decision.HIDDEN


def securable(node: Node, owners: dict[Node, int | None]) -> Securable:
    c_owner = owners[Node(Kind.CATALOG, node.catalog)]
    d_owner = (
        owners[Node(Kind.DATABASE, node.catalog, node.database)]
        if node.database is not None
        else None
    )
    own = owners[node] if node.kind in KINDS_BELOW else None
    return Securable(
        node.kind,
        catalog_id=node.catalog,
        database_id=node.database,
        object_id=node.object,
        owner_ids=(c_owner, d_owner, own),
    )


def access_of(
    admin: bool, owners: dict[Node, int | None], rows: list[tuple[Node, Privilege]]
) -> Access:
    return Access(
        1,
        admin=admin,
        grants=tuple(GrantRow(p, n.kind, n.catalog, n.database, n.object) for n, p in rows),
        owned_catalogs=frozenset(
            n.catalog for n in NODES if n.kind is Kind.CATALOG and owners[n] == 1
        ),
        owned_databases={
            n.database: n.catalog
            for n in NODES
            if n.kind is Kind.DATABASE and owners[n] == 1 and n.database is not None
        },
    )


@settings(max_examples=300, deadline=None)
@given(WORLD)
def test_the_rule_agrees_with_a_brute_force(
    world: tuple[bool, list[int | None], list[tuple[Node, Privilege]]],
) -> None:
    admin, owner_list, rows = world
    owners = dict(zip(NODES, owner_list, strict=True))
    oracle = Oracle(admin, owners, rows)
    access = access_of(admin, owners, rows)
    for node in NODES:
        s = securable(node, owners)

        def owns_inside(node: Node = node) -> bool:
            return any(node.contains(n) and n.kind in KINDS_BELOW and owners[n] == 1 for n in NODES)

        assert {p.value for p in effective(access, s)} == oracle.held(node), node
        assert visible(access, s, owns_inside) == oracle.seen(node), node
        for needed in LITERAL_HOLDS[node.kind]:
            got = decide(access, s, Privilege(needed), owns_inside)
            assert got is oracle.decide(node, needed), (node, needed)
        # The list filters show exactly what is visible.
        sc = scope(access, node.kind)
        if sc.everything:
            listed = True
        elif node.kind is Kind.CATALOG:
            listed = node.catalog in sc.catalogs or owners[node] == 1 or owns_inside()
        elif node.kind is Kind.DATABASE:
            listed = node.catalog in sc.catalogs or node.database in sc.databases or owns_inside()
        else:
            listed = (
                sc.covers(node.catalog, node.database)
                or node.object in sc.objects
                or owners[node] == sc.owner_id
            )
        assert listed == oracle.seen(node), ("scope", node)
