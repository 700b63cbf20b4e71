"""GRANT, REVOKE, SHOW GRANTS and ALTER … OWNER TO (ADR 0011 §4.1).

    GRANT  priv [, priv …] | ALL PRIVILEGES ON securable TO   USER name | TEAM name
    REVOKE priv [, priv …] | ALL PRIVILEGES ON securable FROM USER name | TEAM name
    SHOW GRANTS ON securable [FOR USER name | TEAM name]
    ALTER {CATALOG | DATABASE | SCHEMA | TABLE | VIEW | FUNCTION} p [SET] OWNER TO USER name
    securable := CATALOG c | {DATABASE | SCHEMA} p | [TABLE] p | VIEW p | FUNCTION p
               | STORAGE ROOT 'path'
    priv      := USE | SELECT | MODIFY | CREATE | EXECUTE | MANAGE | READ FILES
                 (Unity Catalog's USE CATALOG, USE SCHEMA and BROWSE read as USE)

Names are as Spark reads them (bare or in backticks; a principal's name may also be a
string, for names such as ``'ann@example.com'``). ``TABLE p`` naming a view is accepted, as
Unity Catalog does: the plan records the object's real kind. Planning checks what the
statement's user may see (a hidden object answers exactly as a missing one) and holds:
``MANAGE`` to grant and revoke, the owner's rights to give an object a new owner, an admin for
storage roots; seeing the object is enough for SHOW GRANTS (which then lists only the user's
own rows unless they may manage it: the web side's rule). These plans need no Spark: the web
process runs them (``sessions/commands/grants.py``).

Plan args (docs/statements.md, "Grants"): ``securable`` is ``{"kind", "identifier"}`` (the
full path as stored) or ``{"kind": "storage", "path"}``; ``privileges`` the privileges in
``core.privileges.ORDER`` (``ALL PRIVILEGES`` expanded to what the kind takes);
``principal`` ``{"type": "user" | "team", "name"}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core import locations
from core.errors import CoreError, NotFound, PermissionDenied, missing_object
from core.planner import guard
from core.planner.authorize import securable_of
from core.planner.errors import ForbiddenSql
from core.planner.model import FunctionDef, Relation
from core.planner.plan import Action, Plan
from core.planner.statement import Statement, missing_relation
from core.planner.tokens import Token, TokenCursor
from core.privileges import (
    GRANTABLE,
    ORDER,
    Kind,
    Privilege,
    Securable,
    parse_privilege,
    sorted_privileges,
)

# The securable kinds a statement names, by keyword (SCHEMA is DATABASE, as in Spark).
KIND_WORDS: dict[str, Kind] = {
    "CATALOG": Kind.CATALOG,
    "DATABASE": Kind.DATABASE,
    "SCHEMA": Kind.DATABASE,
    "TABLE": Kind.TABLE,
    "VIEW": Kind.VIEW,
    "FUNCTION": Kind.FUNCTION,
}
MAX_PRINCIPAL_CHARS = 150  # Django's user and group names
_MAX_PRIVILEGE_WORDS = 3
_SHOWN_CHARS = 40
_PRIVILEGES_TEXT = "USE, SELECT, MODIFY, CREATE, EXECUTE, MANAGE and READ FILES"


@dataclass(frozen=True)
class Target:
    """The securable a statement names, found and checked: its ``Securable`` and the plan's
    ``securable`` argument."""

    securable: Securable

    @property
    def kind(self) -> Kind:
        return self.securable.kind

    def args(self) -> dict[str, Any]:
        if self.kind is Kind.STORAGE:
            return {"kind": "storage", "path": self.securable.root}
        return {"kind": self.kind.value, "identifier": list(self.securable.path)}

    @property
    def plan_target(self) -> tuple[str, ...] | None:
        return None if self.kind is Kind.STORAGE else self.securable.path


# -- privileges ----------------------------------------------------------------------------


def _shown(text: str) -> str:
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"


def parse_privileges(statement: Statement, cursor: TokenCursor) -> list[Privilege] | None:
    """``priv [, priv …]`` up to ON (each once, in the order of ``ORDER``), or None for
    ``ALL PRIVILEGES``. An unknown privilege is a VALIDATION_ERROR naming the known ones."""
    if cursor.accept_words("ALL", "PRIVILEGES"):
        return None
    if cursor.peek_words("ALL"):
        following = cursor.peek(1)
        if following is None or following.is_word("ON"):
            raise CoreError(
                "Write ALL PRIVILEGES (not ALL) to name every privilege the object takes.",
                details={"privilege": "ALL", "field": "sql"},
            )
    chosen: set[Privilege] = set()
    while True:
        start = cursor.position
        words: list[Token] = []
        while len(words) < _MAX_PRIVILEGE_WORDS:
            token = cursor.peek()
            if token is None or token.kind != "word" or token.is_word("ON"):
                break
            words.append(cursor.next())
        if not words:
            raise cursor.error("a privilege")
        following = cursor.peek()
        if following is not None and not (following.is_punct(",") or following.is_word("ON")):
            # The privilege ends where a known one ends: what follows is out of place.
            for count in range(len(words), 0, -1):
                if parse_privilege(statement.span(words[0], words[count - 1])) is not None:
                    cursor.position = start + count
                    raise cursor.error("',' or ON")
            words = words[:1]
        text = statement.span(words[0], words[-1])
        privilege = parse_privilege(text)
        if privilege is None:
            shown = _shown(" ".join(text.split()))
            raise CoreError(
                f"{shown} is not a privilege; the privileges are {_PRIVILEGES_TEXT} (or ALL "
                "PRIVILEGES).",
                details={"privilege": shown, "field": "sql"},
            )
        chosen.add(privilege)
        if not cursor.accept_punct(","):
            return sorted_privileges(chosen)


def applicable(privileges: list[Privilege] | None, kind: Kind) -> list[Privilege]:
    """The privileges a grant on a ``kind`` gives: ``ALL PRIVILEGES`` expanded; one the kind
    does not take is a VALIDATION_ERROR naming those it does."""
    allowed = GRANTABLE[kind]
    if privileges is None:
        return [p for p in ORDER if p in allowed]
    for privilege in privileges:
        if privilege not in allowed:
            takes = [p.value for p in ORDER if p in allowed]
            what = "storage root" if kind is Kind.STORAGE else kind.value
            raise CoreError(
                f"{privilege.value} does not apply to a {what}; a {what} takes {_listed(takes)}.",
                details={"privilege": privilege.value, "kind": kind.value, "allowed": takes},
            )
    return privileges


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


# -- principals ----------------------------------------------------------------------------


def principal_name(cursor: TokenCursor, what: str) -> str:
    """A user's or team's name: a bare word, a backticked name or a string."""
    token = cursor.peek()
    if token is None or not (token.is_name or token.kind == "string"):
        raise cursor.error(what)
    cursor.next()
    name = token.text
    if not name.strip() or len(name) > MAX_PRINCIPAL_CHARS or any(ord(c) < 32 for c in name):
        raise CoreError(
            f"A principal's name is 1 to {MAX_PRINCIPAL_CHARS} characters without control "
            f"characters; got {_shown(repr(name))}.",
            details={"field": "sql", "principal": _shown(name)},
        )
    return name


def parse_principal(cursor: TokenCursor) -> dict[str, str]:
    """``USER name | TEAM name``."""
    if cursor.accept_words("USER"):
        return {"type": "user", "name": principal_name(cursor, "a user name")}
    if cursor.accept_words("TEAM"):
        return {"type": "team", "name": principal_name(cursor, "a team name")}
    raise cursor.error("USER name or TEAM name")


# -- securables ----------------------------------------------------------------------------


def parse_securable(cursor: TokenCursor) -> tuple[Kind, tuple[str, ...] | str]:
    """``CATALOG c | DATABASE p | SCHEMA p | [TABLE] p | VIEW p | FUNCTION p | STORAGE ROOT
    'path'``: the kind named and the path as written (storage: the root's text)."""
    if cursor.peek_words("STORAGE", "ROOT"):
        cursor.expect_words("STORAGE", "ROOT")
        return Kind.STORAGE, cursor.expect_string("a quoted storage root path")
    token, following = cursor.peek(), cursor.peek(1)
    kind = Kind.TABLE
    named_kind = token is not None and token.upper in KIND_WORDS
    if token is not None and named_kind and following is not None and following.is_name:
        kind = KIND_WORDS[token.upper]
        cursor.next()
    max_parts = {Kind.CATALOG: 1, Kind.DATABASE: 2}.get(kind, 3)
    what = "a database name" if kind is Kind.DATABASE else f"a {kind.value} name"
    parts, _, _ = cursor.path(what, max_parts=max_parts)
    return kind, parts


def resolve_securable(
    statement: Statement,
    kind: Kind,
    named: tuple[str, ...] | str,
    needed: Privilege | None,
    *,
    storage_verb: str,
    record: bool = True,
) -> Target:
    """The object named, seen by the user (hidden answers as missing) and allowed ``needed``
    (None: seen is enough). Storage roots are admins' only."""
    authorizer = statement.authorizer
    if kind is Kind.STORAGE:
        assert isinstance(named, str)
        authorizer.require_admin(
            lambda: PermissionDenied(
                f"Only admins may {storage_verb} privileges on storage roots.",
                details={"kind": "storage", "path": named, "privilege": "MANAGE"},
            )
        )
        root = _storage_root(named, statement.context.storage_roots)
        target = Target(Securable(Kind.STORAGE, root=root))
        if record:  # an admin: allowed whatever a root holds
            authorizer.record(target.securable, needed)
        return target
    assert not isinstance(named, str)
    if kind is Kind.CATALOG:
        guard.check_reserved_parts(named)
        return Target(statement.require_catalog(named[0], needed, record=record))
    if kind is Kind.DATABASE:
        database = statement.database_identifier(named)
        return Target(
            statement.require_database(database.catalog, database.database, needed, record=record)
        )
    ident = statement.object_identifier(named)
    found: Relation | FunctionDef | None
    if kind is Kind.FUNCTION:
        guard.check_function_name(ident.parts)
        found = statement.reader.get_function(ident)

        def missing() -> NotFound:
            return missing_object(
                "function",
                f"Function {ident.quoted()} not found",
                details={"identifier": list(ident.parts)},
            )
    else:
        guard.check_file_path_table(named)
        found = statement.reader.get_relation(ident)

        def missing() -> NotFound:
            return missing_relation(ident)

    if found is None or authorizer.see(found) is None:
        raise missing()
    shown = found.identifier.quoted()
    if found.temporary:
        what = "function" if isinstance(found, FunctionDef) else f"{found.kind}"
        raise CoreError(
            f"{shown} is a temporary {what} of this session: temporary objects are the "
            "session's own and take no grants or owners (drop it to reach a permanent object "
            "of that name).",
            details={"identifier": list(found.identifier.parts), "temporary_kind": what},
        )
    if kind is Kind.VIEW and isinstance(found, Relation) and found.kind != "view":
        raise CoreError(
            f"{shown} is a table, not a view: name it TABLE {shown}.",
            details={"identifier": list(found.identifier.parts), "kind": "table"},
        )
    securable = securable_of(found)
    assert securable is not None
    authorizer.require(securable, needed, missing=missing, record=record)
    return Target(securable)


def _storage_root(text: str, roots: tuple[str, ...]) -> str:
    """The configured storage root ``text`` names (normalised); anything else is refused."""
    normal = locations.comparable(text)
    configured = [locations.normal_root(root) for root in roots]
    if not normal or normal not in configured:
        shown = ", ".join(configured) or "none configured"
        raise CoreError(
            f"'{_shown(text)}' is not a storage root of this server; privileges on files are "
            f"granted on a root (TESSERA_STORAGE_ROOTS): {shown}.",
            details={"path": text, "roots": configured},
        )
    return normal


# -- the statements ------------------------------------------------------------------------


def _plan_change(statement: Statement, action: Action, preposition: str) -> Plan:
    """GRANT (``TO``) and REVOKE (``FROM``)."""
    cursor = statement.cursor(1)
    privileges = parse_privileges(statement, cursor)
    cursor.expect_words("ON")
    kind, named = parse_securable(cursor)
    cursor.expect_words(preposition)
    principal = parse_principal(cursor)
    cursor.expect_end()
    verb = "grant" if action is Action.GRANT else "revoke"
    target = resolve_securable(statement, kind, named, Privilege.MANAGE, storage_verb=verb)
    given = applicable(privileges, target.kind)
    return Plan.of(
        action,
        target=target.plan_target,
        args={
            "securable": target.args(),
            "privileges": [p.value for p in given],
            "principal": principal,
        },
    )


def plan_grant(statement: Statement) -> Plan:
    """``GRANT … ON … TO USER u | TEAM t`` → action ``grant`` (kind ``ddl``)."""
    return _plan_change(statement, Action.GRANT, "TO")


def plan_revoke(statement: Statement) -> Plan:
    """``REVOKE … ON … FROM USER u | TEAM t`` → action ``revoke`` (kind ``ddl``)."""
    return _plan_change(statement, Action.REVOKE, "FROM")


def plan_show_grants(statement: Statement, cursor: TokenCursor) -> Plan:
    """``SHOW GRANTS ON securable [FOR USER u | TEAM t]`` (cursor after GRANTS) → action
    ``show_grants`` (kind ``show``)."""
    cursor.expect_words("ON")
    kind, named = parse_securable(cursor)
    principal = parse_principal(cursor) if cursor.accept_words("FOR") else None
    cursor.expect_end()
    target = resolve_securable(statement, kind, named, None, storage_verb="show")
    return Plan.of(
        Action.SHOW_GRANTS,
        target=target.plan_target,
        args={"securable": target.args(), "principal": principal},
    )


def _owner_clause(cursor: TokenCursor) -> bool:
    """Whether ``[SET] OWNER TO`` follows (consumed if so)."""
    if cursor.peek_words("SET", "OWNER", "TO"):
        cursor.position += 1
    return cursor.accept_words("OWNER", "TO")


def plan_alter(statement: Statement) -> Plan:
    """``ALTER {CATALOG|DATABASE|SCHEMA|TABLE|VIEW|FUNCTION} p [SET] OWNER TO USER u`` →
    action ``alter_owner`` (kind ``ddl``); every other ALTER keeps its refusal."""
    cursor = statement.cursor(1)
    token = cursor.peek()
    kind = KIND_WORDS.get(token.upper) if token is not None else None
    if kind is None:
        raise not_in_reference(statement)
    cursor.next()
    max_parts = {Kind.CATALOG: 1, Kind.DATABASE: 2}.get(kind, 3)
    try:
        named, _, _ = cursor.path("a name", max_parts=max_parts)
    except CoreError:
        raise not_in_reference(statement) from None
    if not _owner_clause(cursor):
        raise not_in_reference(statement)
    if cursor.peek_words("TEAM"):
        raise CoreError(
            "Owners are users: ALTER … OWNER TO USER name. To let a team manage the object, "
            "GRANT MANAGE ON … TO TEAM name.",
            details={"field": "sql"},
        )
    if not cursor.accept_words("USER"):
        raise cursor.error("USER name")
    owner = principal_name(cursor, "a user name")
    cursor.expect_end()
    target = resolve_securable(statement, kind, named, None, storage_verb="change", record=False)
    s = target.securable
    access = statement.authorizer.access()
    if not (access.admin or access.owns(s)):
        raise PermissionDenied(
            f"You may not give {s.kind.value} {s.sql_path} a new owner: only its owner, the "
            "owner of what holds it, or an admin may.",
            details={"kind": s.kind.value, "identifier": list(s.path), "privilege": "OWNER"},
        )
    statement.authorizer.require(s, Privilege.MANAGE, missing=lambda: AssertionError("owner"))
    return Plan.of(
        Action.ALTER_OWNER,
        target=target.plan_target,
        args={"securable": target.args(), "owner": {"type": "user", "name": owner}},
    )


def not_in_reference(statement: Statement) -> ForbiddenSql:
    """The refusal of a statement outside Tessera's SQL reference (its first two words)."""
    shown = " ".join(t.upper or t.text for t in statement.tokens[:2])
    return ForbiddenSql(
        f"{shown} … is not supported: Tessera runs the statements of its SQL reference only, "
        "so that it sees every object a statement touches."
    )
