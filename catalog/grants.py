"""Grants, revokes, SHOW GRANTS, the REST permissions body and ownership transfer (issue 18,
ADR 0011 §4): the one module that writes ``Grant`` rows and moves ownership, for SQL
commands (``jobs/commands/grants.py``) and REST (``catalog/permission_views.py``) alike.
Every change is one transaction with its audit event (``audit.services.record``).

INTERFACE (the contract between the chunks of issue 18; the bodies are filled in by the
catalog chunk): the signatures and docstrings below are what callers rely on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from catalog.models import Catalog, Database, Function, Table
from core.privileges import Privilege, Securable

PrincipalType = Literal["user", "team"]
Row = Catalog | Database | Table | Function


@dataclass(frozen=True)
class Principal:
    """A user or a team (a Django group) that grants are given to."""

    type: PrincipalType
    id: int
    name: str

    @property
    def key(self) -> str:
        """As ``Grant.principal_key`` stores it: ``user:5`` | ``team:3``."""
        return f"{self.type}:{self.id}"


@dataclass(frozen=True)
class GrantLine:
    """One row of ``SHOW GRANTS`` (and of the REST body before grouping)."""

    principal: str
    principal_type: PrincipalType
    privilege: Privilege
    object_type: str  # catalog | database | table | view | function | storage
    object_name: str  # the object's SQL path (storage: the root)
    # None for a grant on the object itself; else the catalog or database it comes from.
    inherited_from: Securable | None = None


def find_principal(principal_type: str, name: str) -> Principal:
    """The user or team named ``name`` (case-insensitive for teams as Django stores them).
    Raises ``NotFound`` ("There is no user named 'x'.") when there is none, and
    ``ValidationError`` for a type other than ``user``/``team``."""
    raise NotImplementedError


def find_securable(
    user: Any, kind: str, identifier: Sequence[str] = (), *, path: str = ""
) -> tuple[Row | None, Securable]:
    """The object ``kind`` (catalog, database, table, view, function, storage) at
    ``identifier`` (1, 2 or 3 parts, as stored or as typed: matched case-insensitively) as
    ``user`` may see it, and its ``Securable``. What the user may not see raises exactly the
    ``NotFound`` a missing object raises. ``table`` naming a view is accepted (Unity Catalog
    does) and the row's real kind is used. ``storage``: ``path`` must be a configured storage
    root (else ``ValidationError``); only admins may see storage grants (others:
    ``PermissionDenied``); the row is None."""
    raise NotImplementedError


def grant(
    *,
    user: Any,
    securable: Securable,
    privileges: Sequence[Privilege | str],
    principal: Principal,
) -> list[Privilege]:
    """Give ``privileges`` (``ALL PRIVILEGES`` expands to ``GRANTABLE[kind]``) on
    ``securable`` to ``principal``. Needs ``MANAGE`` on it (storage roots: an admin),
    ``PermissionDenied`` otherwise. A privilege outside ``GRANTABLE[kind]`` is a
    ``ValidationError`` naming the allowed ones. Idempotent: returns the privileges newly
    granted. One transaction with one audit ``grant`` event."""
    raise NotImplementedError


def revoke(
    *,
    user: Any,
    securable: Securable,
    privileges: Sequence[Privilege | str],
    principal: Principal,
) -> list[Privilege]:
    """Take ``privileges`` back. Needs ``MANAGE``. Revoking what was never granted is a
    ``ValidationError`` ("nothing to revoke"); revoking one that comes from a catalog or
    database says "granted on catalog `c`; revoke it there". Returns those revoked. One
    transaction with one audit ``revoke`` event."""
    raise NotImplementedError


def show_grants(
    *, user: Any, securable: Securable, principal: Principal | None = None
) -> list[GrantLine]:
    """The grants on ``securable`` and those inherited from its database and catalog, ordered
    (principal type, principal, privilege). Without ``MANAGE`` only the caller's own and their
    teams' rows (Unity Catalog's rule). ``principal`` narrows to one principal."""
    raise NotImplementedError


def permissions(
    *,
    user: Any,
    securable: Securable,
    principal: Principal | None = None,
) -> dict[str, Any]:
    """The REST body of ``GET …/{object}/permissions`` (ADR 0011 §4.2): ``object``, ``owner``,
    ``privilege_assignments`` (grouped per principal, direct and inherited),
    ``effective`` and ``can``."""
    raise NotImplementedError


def update_permissions(
    *,
    user: Any,
    securable: Securable,
    changes: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """``PATCH …/{object}/permissions``: ``changes`` is a list of ``{"principal",
    "principal_type", "add": [...], "remove": [...]}``, applied in one transaction (one audit
    event per principal and direction). Errors name their field
    (``details.field`` ``changes[0].add[1]``). Answers the GET body."""
    raise NotImplementedError


def transfer_owner(*, user: Any, row: Row, new_owner: Any) -> None:
    """Make ``new_owner`` (a user) the owner of ``row``. By its owner, a parent's owner or an
    admin (else ``PermissionDenied``). One transaction with an audit ``owner`` event."""
    raise NotImplementedError
