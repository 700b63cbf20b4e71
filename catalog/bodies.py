"""What an object's body may reach (ADR 0012): a view's query and a SQL function's body run
with their owner's rights, so each is judged with the rights of whoever makes it run.

- Storing or changing a body plans it with the changer's rights (views: ``services.views.
  _derive_view_schema``; SQL functions: ``check_function_body``): what they may not reach,
  no body of theirs reaches.
- Handing an object over (``check_handover``, from ``grants.transfer_owner``) plans its body
  again with the giver's rights and with the new owner's: if either cannot reach everything
  it reaches, the transfer is refused, naming the object and what it reaches.

Planning needs the planner's catalog reader, which lives in the jobs app; the catalog names
what it needs (``Reach``) and the jobs app installs it (``sessions.bodies``, from
``JobsConfig.ready``), as it does Spark's analyzer (``catalog.analysis``).

Refusals carry ``details.refused`` (``body`` | ``owner``) and are audited as ``denied``
events (``record_refusal``) once the refused change has been rolled back.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, ParamSpec, Protocol, TypeVar

from audit import models as audit_models
from audit.services import record
from catalog.access import securable_key_at
from catalog.analysis import Unavailable
from catalog.models import Function, Table
from core.errors import CoreError, NotFound, PermissionDenied
from core.identifiers import quote_path

P = ParamSpec("P")
R = TypeVar("R")

BODY = "body"
OWNER = "owner"

# The verb of a reach, by the privilege it needs.
_VERBS = {"SELECT": "reads", "EXECUTE": "calls", "READ FILES": "reads files under"}


class Reach(Protocol):
    def view_query(self, catalog: str, database: str, query: str, *, user: Any) -> None:
        """Plan a view's query, read in its catalog and database, with ``user``'s rights;
        raise what a statement of theirs reading it directly would (``PermissionDenied``,
        ``NotFound`` for what they may not see)."""
        ...

    def function_body(
        self, catalog: str, database: str, name: str, body: str, *, user: Any
    ) -> None:
        """Plan the SQL body of function ``catalog.database.name`` with ``user``'s rights;
        raise as ``view_query``."""
        ...


_installed: list[Reach] = []


def install(reach: Reach) -> None:
    """Make ``reach`` the one the catalog asks (the jobs app, at start)."""
    _installed[:] = [reach]


def reach() -> Reach:
    if not _installed:
        raise Unavailable(
            "The planner is not available in this process, so what a body reaches cannot be "
            "checked; nothing was stored."
        )
    return _installed[0]


def has_body(row: Any) -> bool:
    """Whether ``row`` runs a body with its owner's rights: a view, or a SQL function. Tables
    are read with the reader's SELECT (their computed columns call built-ins only); Python
    functions name allow-listed code; catalogs and databases hold no body."""
    if isinstance(row, Table):
        return row.kind == Table.KIND_VIEW
    return isinstance(row, Function) and row.language == Function.LANGUAGE_SQL


def _path(row: Table | Function) -> list[str]:
    d = row.database
    return [d.catalog.name, d.name, row.name]


def _kind(row: Table | Function) -> str:
    return "function" if isinstance(row, Function) else row.kind


def _object(kind: str, path: list[str]) -> dict[str, Any]:
    return {"kind": kind, "identifier": path}


def tag(error: CoreError, refused: str, kind: str, path: list[str]) -> None:
    """Mark ``error`` as the refusal of a body change or transfer of the object at ``path``
    (additive details: the answer is otherwise the planner's, so hidden still reads as
    missing)."""
    if isinstance(error, PermissionDenied | NotFound):
        error.details = {**error.details, "refused": refused, "object": _object(kind, path)}


def check_function_body(user: Any, database: Any, name: str, body: str) -> None:
    """Plan the SQL ``body`` of function ``name`` of ``database`` with ``user``'s rights:
    everything it calls must be callable by them (``EXECUTE``), else what a call of theirs
    would answer, tagged as a refused body."""
    catalog = database.catalog.name
    try:
        reach().function_body(catalog, database.name, name, body, user=user)
    except CoreError as exc:
        if exc.code == "VALIDATION_ERROR" and "field" not in exc.details:
            exc.details = {**exc.details, "field": "implementation"}
        tag(exc, BODY, "function", [catalog, database.name, name])
        raise


def _plan_as(user: Any, row: Table | Function) -> None:
    d = row.database
    if isinstance(row, Function):
        reach().function_body(d.catalog.name, d.name, row.name, row.implementation, user=user)
    else:
        reach().view_query(d.catalog.name, d.name, row.query, user=user)


def _reached(error: CoreError) -> dict[str, Any]:
    """What the refused reference was, from the planner's refusal."""
    details = error.details
    if isinstance(error, PermissionDenied):
        return {
            "kind": str(details.get("kind") or ""),
            "identifier": list(details.get("identifier") or []),
            "privilege": str(details.get("privilege") or ""),
        }
    function = error.message.startswith("Function")
    return {
        "kind": "function" if function else "table or view",
        "identifier": list(details.get("identifier") or []),
        "privilege": "EXECUTE" if function else "SELECT",
    }


def _handover_refused(
    row: Table | Function, error: CoreError, *, who: str, principal: str, new_owner: str
) -> PermissionDenied:
    kind, path = _kind(row), _path(row)
    reached = _reached(error)
    named = f"{kind.capitalize()} {quote_path(path)}"
    part = "body" if kind == "function" else "query"
    if reached["identifier"] and "via" not in error.details:
        verb = _VERBS.get(reached["privilege"], "reaches")
        what = f"{reached['kind']} {quote_path(reached['identifier'])}"
        holds = "do" if who == "you" else "does"
        needed = reached["privilege"]
        reason = f"its {part} {verb} {what}, and {who} {holds} not hold {needed} on it"
    else:
        reason = error.message
    return PermissionDenied(
        f"{named} cannot be given to {new_owner}: {reason}. What an object reaches must stay "
        "within the rights of both who gives it and who receives it.",
        details={
            **_object(kind, path),
            "privilege": "OWNER",
            "refused": OWNER,
            "principal": principal,
            "new_owner": new_owner,
            "reaches": reached,
        },
    )


def check_handover(*, user: Any, row: Any, new_owner: Any) -> None:
    """Refuse to make ``new_owner`` the owner of ``row`` when its body reaches anything that
    the acting ``user`` (the giver) or ``new_owner`` cannot: planned with each one's rights
    in turn. The giver is judged first and as in any statement of theirs (what they may not
    see answers as missing); the new owner's shortfall is ``PERMISSION_DENIED`` naming the
    object and what it reaches (the giver may see it). Objects without a body pass."""
    if not has_body(row):
        return
    kind, path = _kind(row), _path(row)
    actor = getattr(user, "get_username", lambda: "")()
    receiver = new_owner.get_username()
    try:
        _plan_as(user, row)
    except PermissionDenied as exc:
        raise _handover_refused(row, exc, who="you", principal=actor, new_owner=receiver) from None
    except CoreError as exc:
        tag(exc, OWNER, kind, path)
        raise
    try:
        _plan_as(new_owner, row)
    except (PermissionDenied, NotFound) as exc:
        raise _handover_refused(
            row, exc, who=receiver, principal=receiver, new_owner=receiver
        ) from None


# --- the audit of refusals ---------------------------------------------------------------------


def record_refusal(user: Any, error: CoreError, *, job_id: Any = None) -> bool:
    """A ``denied`` audit event for a refused body change or ownership transfer (an error
    with ``details.refused``), on the object refused; False for any other error. Write it
    after the refused change was rolled back, or it goes with it."""
    details = error.details
    refused = details.get("refused")
    if refused not in (BODY, OWNER):
        return False
    target = details.get("object")
    if not isinstance(target, Mapping):
        target = {"kind": details.get("kind"), "identifier": details.get("identifier")}
    kind = str(target.get("kind") or "")
    path = [str(part) for part in target.get("identifier") or []]
    detail: dict[str, Any] = {
        "refused": refused,
        "code": error.code,
        "message": error.message[:500],
    }
    for key in ("reaches", "principal", "new_owner"):
        if key in details:
            detail[key] = details[key]
    privilege = str(details.get("privilege") or "")
    record(
        audit_models.DENIED,
        actor=user if getattr(user, "pk", None) is not None else None,
        object_kind=kind[:10],
        path=path,
        securable_key=securable_key_at(kind, path),
        privileges=[privilege] if privilege else [],
        job_id=job_id,
        detail=detail,
    )
    return True


def audits_refusals(service: Callable[P, R]) -> Callable[P, R]:
    """A catalog service (called with ``user=``) whose refused body change or transfer is
    audited once its transaction has rolled the change back, and raised on."""

    @functools.wraps(service)
    def audited(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return service(*args, **kwargs)
        except CoreError as exc:
            record_refusal(kwargs.get("user"), exc)
            raise

    return audited
