"""USE, SET and RESET: the session's current catalog and database, and its properties (the
registry of ``core.session_properties`` decides what may be set).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from catalog import selectors
from core.errors import CoreError
from core.identifiers import quote_path
from jobs.models import Job
from sessions import planning, workspace
from sessions.commands.common import (
    Columns,
    Rows,
    access_of,
    locked_session,
    message,
    string_columns,
)

log = logging.getLogger(__name__)


def use(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    session = locked_session(job)
    catalog_name, database_name = args.get("catalog"), args.get("database")
    if catalog_name:
        catalog = selectors.get_catalog(str(catalog_name), access=access_of(job))
        session.current_catalog = catalog.name
        if not database_name:
            session.current_database = catalog.default_database
    if database_name:
        if not session.current_catalog:
            raise CoreError("No current catalog is set; run USE CATALOG first or use c.d.")
        database = selectors.get_database(
            session.current_catalog, str(database_name), access=access_of(job)
        )
        session.current_catalog = database.catalog.name
        session.current_database = database.name
    session.save(update_fields=["current_catalog", "current_database"])
    workspace.remember(session.user_id, session.current_catalog, session.current_database)
    where = quote_path([session.current_catalog or "", session.current_database or ""])
    return message(f"The current database is now {where}.")


def set_property(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    session = locked_session(job)
    key, value = args.get("key"), args.get("value")
    columns = string_columns("key", "value")
    registry = planning.session_properties()
    # The values in force: a value stored before a limit existed (or was lowered) shows as
    # what jobs get, clamped, not as it was stored.
    in_force = registry.effective(session.properties)
    if key is None:  # SET: list the session's properties
        return columns, [[k, in_force[k]] for k in sorted(in_force)]
    if value is None:  # SET key: show one
        shown = in_force.get(key) or registry.default(str(key)) or "<undefined>"
        return columns, [[key, shown]]
    checked = registry.check(key, value, field="args")
    session.properties = {**session.properties, key: checked}
    session.save(update_fields=["properties"])
    return columns, [[key, checked]]


def reset(job: Job, args: Mapping[str, Any]) -> tuple[Columns, Rows]:
    session = locked_session(job)
    key = args.get("key")
    if key is None:
        session.properties = {}
        session.save(update_fields=["properties"])
        return message("All session properties were reset.")
    properties = dict(session.properties)
    existed = properties.pop(key, None) is not None
    session.properties = properties
    session.save(update_fields=["properties"])
    return message(
        f"Session property '{key}' was reset."
        if existed
        else f"Session property '{key}' was not set; nothing changed."
    )
