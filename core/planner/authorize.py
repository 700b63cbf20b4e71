"""The privilege checks of one statement (ADR 0011 §3.3), before any plan is made.

The planner stays user-agnostic: the reader carries the user (``CatalogReader.access()``)
and, for definer rights, loads what a view's or SQL function's owner holds
(``access(principal=owner_id)``). One ``Authorizer`` per statement decides every check with
``core.privileges.decide`` and remembers each decision per (securable, principal,
privilege), so an object read a hundred times costs one decision.

What the user may not see is answered exactly as a missing object: the caller passes the
error a missing name gets at that very place (``missing``), and a hidden object raises it.
What the user may see but lacks the privilege for raises ``PermissionDenied`` from
``core.privileges.denied_message``. Every allowed check becomes an ``AccessPlan`` record;
the statement's plan carries them (``Plan.access``, outside the plan JSON).

Definer rights: inside a permanent view (or SQL function body) references are checked for
the object's owner (a ``Definer``), the invoker needing ``SELECT`` on the view (``EXECUTE``
on the function) only. Temporary objects are the session's own: they need no privilege,
and what they read is checked for whoever reads them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from core.errors import PermissionDenied
from core.planner.model import CatalogReader, FunctionDef, Relation
from core.planner.plan import AccessPlan
from core.privileges import (
    Access,
    Decision,
    Kind,
    Privilege,
    Securable,
    decide,
    denied_message,
    effective,
    parent_of,
    root_of,
    visible,
)

Obj = TypeVar("Obj", bound=Relation | FunctionDef)
Missing = Callable[[], Exception]


@dataclass(frozen=True)
class Definer:
    """Whose rights the references inside a permanent view or SQL function are checked with.

    ``principal`` is the object's owner (None: it has none, and reads nothing permanent),
    ``name`` the owner's user name, for messages; ``via`` the view or function itself;
    ``outermost`` the outermost object of the chain of definers (the one the invoker's own
    text reads), which EXPLAIN names when it refuses."""

    principal: int | None
    name: str | None
    via: Securable
    outermost: Securable

    @property
    def ident(self) -> tuple[str, ...]:
        return self.via.path


def securable_of(obj: Relation | FunctionDef) -> Securable | None:
    """What privileges on ``obj`` are decided on; None for temporary objects (the session's
    own). A permanent object without one is a reader bug, never an open door."""
    if obj.temporary:
        return None
    if obj.securable is None:
        raise AssertionError(
            f"The reader gave the permanent object {obj.identifier.quoted()} no securable."
        )
    return obj.securable


def _privilege_shown(needed: Privilege | None) -> Privilege:
    """A check of visibility only is recorded (and refused) as USE."""
    return Privilege.USE if needed is None else needed


class _Once:
    """A question to the reader asked at most once, however often its answer is needed."""

    def __init__(self, ask: Callable[[], bool]) -> None:
        self._ask = ask
        self._answer: bool | None = None

    def __call__(self) -> bool:
        if self._answer is None:
            self._answer = bool(self._ask())
        return self._answer


@dataclass(frozen=True)
class _Through:
    """An allowed read made with another principal's rights (inside a view of another
    owner): EXPLAIN refuses unless the invoker may read it too."""

    securable: Securable
    privilege: Privilege
    definer: Definer


class Authorizer:
    """Decides and records the privilege checks of one statement (see the module)."""

    def __init__(self, reader: CatalogReader) -> None:
        self.reader = reader
        self._accesses: dict[int | None, Access] = {}
        self._decisions: dict[tuple[str, int | None, str], Decision] = {}
        self._records: dict[tuple[str, str, tuple[str, ...] | None], AccessPlan] = {}
        self._through: list[_Through] = []
        self._owns_inside: dict[str, _Once] = {}  # per securable: asked at most once

    # -- who ------------------------------------------------------------------------------

    def access(self, principal: int | None = None) -> Access:
        """What the statement's user (``None``) or the user ``principal`` holds, loaded once."""
        found = self._accesses.get(principal)
        if found is None:
            found = self.reader.access(principal)
            self._accesses[principal] = found
        return found

    @property
    def invoker_id(self) -> int | None:
        return self.access().user_id

    def _principal(self, definer: Definer | None) -> int | None:
        """The key of whose rights count: None for the invoker (also for a definer who is
        the invoker: their own ``Access`` with its ``owns_inside``)."""
        if definer is None or definer.principal is None:
            return None
        if definer.principal == self.invoker_id:
            return None
        return definer.principal

    def definer_inside(self, obj: Relation | FunctionDef, outer: Definer | None) -> Definer | None:
        """The definer of the references inside ``obj`` (a view being expanded, a SQL
        function's body): its owner for a permanent one, else whoever reads it (``outer``)."""
        s = securable_of(obj)
        if s is None:
            return outer
        owner = s.owner_ids[2]
        return Definer(owner, obj.owner, s, outer.outermost if outer is not None else s)

    # -- deciding -------------------------------------------------------------------------

    def decision(
        self, s: Securable, needed: Privilege | None, definer: Definer | None = None
    ) -> Decision:
        """ALLOWED, DENIED or HIDDEN for ``needed`` on ``s`` (None: only to see it), for the
        invoker or, inside a permanent view or function, its owner. An ownerless view reads
        nothing permanent: DENIED (the message says an admin must give it an owner)."""
        if definer is not None and definer.principal is None:
            return Decision.DENIED
        principal = self._principal(definer)
        key = (s.key, principal, "" if needed is None else needed.value)
        found = self._decisions.get(key)
        if found is None:
            found = self._decide(s, needed, principal)
            self._decisions[key] = found
        return found

    def _decide(self, s: Securable, needed: Privilege | None, principal: int | None) -> Decision:
        access = self.access(principal)
        owns_inside: Callable[[], bool] | None = None
        if principal is None and s.kind in (Kind.CATALOG, Kind.DATABASE):
            owns_inside = self._owns_inside.setdefault(
                s.key, _Once(lambda: self.reader.owns_inside(s))
            )
        if needed is None:
            if visible(access, s, owns_inside):
                return Decision.ALLOWED
            needed = Privilege.USE  # not visible: decide says DENIED or HIDDEN
        decided = decide(access, s, needed, owns_inside)
        if s.kind is Kind.STORAGE and decided is Decision.HIDDEN:
            return Decision.DENIED  # a storage root is configured, never a secret
        if decided is Decision.HIDDEN and principal is None:
            # ``decide`` judged the parent from the rows alone; the invoker may also see it
            # through an object they own inside it (one query, asked once per statement), as
            # the REST pages do: then the object is refused, not hidden (ADR 0011, amendment 2).
            parent = parent_of(s)
            if parent is not None and self.decision(parent, None) is Decision.ALLOWED:
                return Decision.DENIED
        return decided

    def see(self, obj: Obj, definer: Definer | None = None) -> Obj | None:
        """``obj`` unless it is hidden from whoever's rights count (then None: the caller
        answers as if it did not exist). Temporary objects are always seen. Records nothing."""
        s = securable_of(obj)
        if s is None or self.decision(s, None, definer) is not Decision.HIDDEN:
            return obj
        return None

    def require(
        self,
        obj: Relation | FunctionDef | Securable,
        needed: Privilege | None,
        *,
        missing: Missing,
        definer: Definer | None = None,
        record: bool = True,
    ) -> None:
        """Allow ``needed`` on ``obj`` (None: seeing it is enough), or raise ``missing()``
        (hidden) or ``PermissionDenied`` (seen, not allowed). Temporary objects pass."""
        s = obj if isinstance(obj, Securable) else securable_of(obj)
        if s is None:
            return
        decided = self.decision(s, needed, definer)
        if decided is Decision.HIDDEN:
            raise missing()
        if decided is Decision.DENIED:
            raise self.denied(s, needed, definer)
        if record:
            self.record(s, needed, definer)

    def denied(
        self, s: Securable, needed: Privilege | None, definer: Definer | None = None
    ) -> PermissionDenied:
        """The refusal of ``needed`` on the seen ``s``; through a view, naming the view and
        whose rights are missing."""
        shown = _privilege_shown(needed)
        if definer is None:
            have = effective(self.access(), s)
            message, details = denied_message(s, shown, have)
        else:
            have = effective(self.access(self._principal(definer)), s)
            message, details = denied_message(s, shown, have, definer=definer.name, via=definer.via)
        return PermissionDenied(message, details=details)

    def record(
        self, s: Securable, needed: Privilege | None, definer: Definer | None = None
    ) -> None:
        """Note an allowed check (``require`` does; a caller that allowed otherwise, too)."""
        shown = _privilege_shown(needed)
        via = definer.ident if definer is not None else None
        key = (s.key, shown.value, via)
        if key not in self._records:
            identifier = (s.root,) if s.kind is Kind.STORAGE else s.path
            self._records[key] = AccessPlan(s.kind.value, identifier, shown.value, s.key, via)
        if definer is not None and self._principal(definer) is not None:
            self._through.append(_Through(s, shown, definer))

    # -- containers and files -------------------------------------------------------------

    def require_catalog(
        self, catalog: str, needed: Privilege | None, *, missing: Missing, record: bool = True
    ) -> Securable:
        """The catalog ``catalog`` as a securable, allowed ``needed`` (None: seen)."""
        s = self.reader.catalog_securable(catalog)
        if s is None:
            raise missing()
        self.require(s, needed, missing=missing, record=record)
        return s

    def require_database(
        self,
        catalog: str,
        database: str,
        needed: Privilege | None,
        *,
        missing_catalog: Missing,
        missing: Missing,
        record: bool = True,
    ) -> Securable:
        """The database as a securable, allowed ``needed`` (None: seen); its catalog must be
        seen first (a hidden catalog answers as a missing one)."""
        self.require_catalog(catalog, None, missing=missing_catalog, record=False)
        s = self.reader.database_securable(catalog, database)
        if s is None:
            raise missing()
        self.require(s, needed, missing=missing, record=record)
        return s

    def require_files(self, path: str, roots: Sequence[str]) -> None:
        """``READ FILES`` on the storage root holding the (checked, normalised) ``path``: a
        table declared over files reads whatever lies there."""
        root = root_of(path, roots) or path
        s = Securable(Kind.STORAGE, root=root)
        self.require(s, Privilege.READ_FILES, missing=lambda: self.denied(s, Privilege.READ_FILES))

    def require_admin(self, refusal: Callable[[], PermissionDenied]) -> None:
        """Only admins may go on (storage roots' grants)."""
        if not self.access().admin:
            raise refusal()

    # -- what was checked -----------------------------------------------------------------

    @property
    def records(self) -> tuple[AccessPlan, ...]:
        """The allowed checks, in the order first made (``Plan.access``)."""
        return tuple(self._records.values())

    def reads_beyond_invoker(self) -> list[tuple[Securable, Definer]]:
        """Reads allowed with a view owner's rights that the invoker could not make: EXPLAIN,
        which prints paths and columns, must not show them."""
        out: list[tuple[Securable, Definer]] = []
        for through in self._through:
            if through.privilege is not Privilege.SELECT:
                continue
            if self.decision(through.securable, Privilege.SELECT) is not Decision.ALLOWED:
                out.append((through.securable, through.definer))
        return out
