"""Flight's session actions on the Tessera session a bearer's sign-in opened.

- ``CloseSession`` closes that session as REST's ``DELETE /sessions/{id}`` does (its temporary
  objects go with it); the server then forgets the sign-in's bearer and prepared statements,
  so a later call with the bearer is UNAUTHENTICATED. ADBC's ``conn.close()`` sends it.
- ``SetSessionOptions``: ``catalog`` and ``schema`` are the session's current catalog and
  database. A value is planned as the statement ``USE CATALOG c`` / ``USE DATABASE d`` (the
  planner's guard, name rules and grants, exactly as a typed ``USE``) and stored as REST's
  ``PATCH /sessions`` stores it; a valueless option clears it. Any other name is a session
  property, set as ``SET key = value`` sets it (``sessions.services.session_set_property``:
  SET's allow-list and the registry's value check; no second list here); valueless: as
  ``RESET key``. ADBC sends ``catalog`` and ``schema`` for ``adbc_current_catalog`` and
  ``adbc_current_db_schema``.
- ``GetSessionOptions``: ``catalog`` and ``schema`` when set, and the properties in force.

A refused option is an entry of the result's ``errors`` map — ``INVALID_NAME`` for a name
that is not settable, ``INVALID_VALUE`` for a value refused (wrong type, out of range, over
``MAX_VALUE_CHARS``, a catalog that is missing or not the caller's to use: the same answer,
as for ``USE``) — never an error of the whole call; the other options are still set. The
protocol's errors carry no text: the reason is logged.
"""

from __future__ import annotations

import logging
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]

from core.errors import CoreError
from core.identifiers import quote_path
from core.planner import Action
from flightsql.proto import Flight_pb2 as wire
from jobs.models import Session
from sessions import planning
from sessions import services as session_services
from sessions.statements import plan_in_session

log = logging.getLogger(__name__)

CATALOG = "catalog"
SCHEMA = "schema"
MAX_OPTIONS = 100
MAX_VALUE_CHARS = 4096
ACTIONS = [
    ("SetSessionOptions", "Set catalog, schema (as USE) or session properties (as SET)."),
    ("GetSessionOptions", "The session's catalog, schema and session properties."),
    ("CloseSession", "Close this sign-in's session; its bearer token ends."),
]
Result = wire.SetSessionOptionsResult


class OptionRefused(Exception):
    """One option not set: the protocol's error value, and the reason (for the log)."""

    def __init__(self, value: Any, reason: str) -> None:
        super().__init__(reason)
        self.value = value


def set_options(session: Session, request: Any) -> Any:
    """A ``SetSessionOptionsRequest`` applied option by option: the result names the refused
    ones. ``catalog`` goes first, then ``schema`` (a database of the new catalog)."""
    options = request.session_options
    if len(options) > MAX_OPTIONS:
        raise pa.ArrowInvalid(
            f"[VALIDATION_ERROR] At most {MAX_OPTIONS} session options per request "
            f"(got {len(options)})."
        )
    result = Result()
    order = {CATALOG: 0, SCHEMA: 1}
    for name in sorted(options, key=lambda n: (order.get(n, 2), n)):
        try:
            _set_one(session, name, options[name])
        except OptionRefused as refused:
            log.info("Flight SQL session option %.100r refused: %s", name, refused)
            result.errors[name].value = refused.value
    return result


def get_options(session: Session) -> Any:
    """The session's current catalog and database, and its properties in force (a value
    stored before a limit was lowered shows as jobs get it)."""
    result = wire.GetSessionOptionsResult()
    if session.current_catalog:
        result.session_options[CATALOG].string_value = session.current_catalog
    if session.current_database:
        result.session_options[SCHEMA].string_value = session.current_database
    for key, value in planning.session_properties().effective(session.properties).items():
        result.session_options[key].string_value = value
    return result


def close(session: Session) -> Any:
    """Close the session (REST's DELETE); the caller forgets the sign-in."""
    session_services.session_delete(session=session)
    return wire.CloseSessionResult(status=wire.CloseSessionResult.CLOSED)


def _set_one(session: Session, name: str, value: Any) -> None:
    if len(name) > MAX_VALUE_CHARS:
        raise OptionRefused(Result.INVALID_NAME, "the name is too long")
    text = _text(name, value)
    if text is not None and len(text) > MAX_VALUE_CHARS:
        raise OptionRefused(Result.INVALID_VALUE, f"the value is over {MAX_VALUE_CHARS} characters")
    if name in (CATALOG, SCHEMA):
        try:
            _use(session, name, text)
        except CoreError as exc:
            raise OptionRefused(Result.INVALID_VALUE, f"[{exc.code}] {exc.message}") from None
        return
    registry = planning.session_properties()
    if name not in registry.keys:
        raise OptionRefused(Result.INVALID_NAME, "not a settable session property")
    try:
        session_services.session_set_property(session=session, key=name, value=text)
    except CoreError as exc:
        raise OptionRefused(Result.INVALID_VALUE, f"[{exc.code}] {exc.message}") from None


def _text(name: str, value: Any) -> str | None:
    """An option's value as SET's text; None: valueless (clear). ``catalog`` and ``schema``
    take strings only; a property also a boolean or a whole number (as its SQL text)."""
    kind = value.WhichOneof("option_value")
    if kind is None:
        return None
    if kind == "string_value":
        return str(value.string_value)
    if name not in (CATALOG, SCHEMA):
        if kind == "bool_value":
            return "true" if value.bool_value else "false"
        if kind == "int64_value":
            return str(value.int64_value)
    raise OptionRefused(Result.INVALID_VALUE, f"a {kind} is not a value of this option")


def _use(session: Session, name: str, text: str | None) -> None:
    """``catalog``/``schema`` planned as ``USE`` in the session, then stored (REST's PATCH
    resolves the names again, to their stored case); ``None`` clears."""
    if text is None:
        field = "current_catalog" if name == CATALOG else "current_database"
        session_services.session_update(session=session, changes={field: None})
        return
    if text == "":
        raise CoreError(f"An empty {name} name; send no value to clear it.")
    kind = "CATALOG" if name == CATALOG else "DATABASE"
    plan = plan_in_session(session, f"USE {kind} {quote_path([text])}")
    if plan.action != Action.USE:  # the planner read something else: never stored
        raise CoreError(f"Not a {name} name.")
    changes: dict[str, Any] = {"current_catalog": plan.args["catalog"]}
    if plan.args.get("database"):
        changes["current_database"] = plan.args["database"]
    session_services.session_update(session=session, changes=changes)
