"""What every command shares: the answer's shape (columns, rows), the session it runs in, and
the names it reads from the plan's arguments.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Literal

from django.db.models import QuerySet

from catalog import access as catalog_access
from catalog import selectors
from catalog.models import Catalog, Database, Table
from core.errors import CoreError, NotFound
from core.identifiers import ObjectIdentifier
from core.planner import TemporaryObjectExists
from core.privileges import Access
from core.schema import (
    Schema,
)
from jobs.models import Job, Session, TemporaryObject

DeriveViewSchema = Callable[[str], Schema]


Rows = list[list[Any]]


Columns = list[dict[str, str]]


def message(text: str) -> tuple[Columns, Rows]:
    return [{"name": "result", "data_type": "STRING"}], [[text]]


def string_columns(*names: str) -> Columns:
    return [{"name": name, "data_type": "STRING"} for name in names]


def locked_session(job: Job) -> Session:
    if job.session_id is None:
        raise NotFound("The session of this statement was closed; open a new one.")
    session = Session.objects.select_for_update().filter(pk=job.session_id).first()
    if session is None:
        raise NotFound(f"Session {job.session_id} does not exist.")
    return session


def identifier_parts(args: Mapping[str, Any], size: int) -> list[str]:
    identifier = args.get("identifier")
    if not isinstance(identifier, list | tuple) or len(identifier) != size:
        raise CoreError(f"The plan names no {size}-part identifier.", details={"args": dict(args)})
    return [str(part) for part in identifier]


def like_matcher(pattern: str | None) -> Callable[[str], bool]:
    """Spark's SHOW … LIKE: ``*`` matches anything, ``|`` separates alternatives, the rest is
    literal; the whole name must match, ignoring case (and surrounding blanks)."""
    if pattern is None:
        return lambda name: True
    alternatives = [
        ".*".join(re.escape(piece) for piece in part.strip().split("*"))
        for part in pattern.split("|")
    ]
    regex = re.compile("|".join(f"(?:{alt})" for alt in alternatives), re.IGNORECASE | re.DOTALL)
    return lambda name: regex.fullmatch(name) is not None


def access_of(job: Job) -> Access:
    """What the job's user holds (loaded once for the command: cached on the user object)."""
    return catalog_access.access_for(job.user)


def database_of(args: Mapping[str, Any], job: Job) -> Database:
    """The database the plan names (or the session's), as the job's user may see it: one
    they may not see answers as a missing one."""
    catalog = args.get("catalog")
    database = args.get("database")
    if catalog is None or database is None:
        session = Session.objects.filter(pk=job.session_id).first() if job.session_id else None
        catalog = catalog or (session.current_catalog if session else None)
        database = database or (session.current_database if session else None)
    if not catalog:
        raise CoreError("No current catalog is set; run USE CATALOG first or name one.")
    if not database:
        raise CoreError("No current database is set; run USE first or name one.")
    return selectors.get_database(str(catalog), str(database), access=access_of(job))


def catalog_of(args: Mapping[str, Any], job: Job) -> Catalog:
    catalog = args.get("catalog")
    if catalog is None and job.session_id is not None:
        session = Session.objects.filter(pk=job.session_id).first()
        catalog = session.current_catalog if session else None
    if not catalog:
        raise CoreError("No current catalog is set; run USE CATALOG first or name one.")
    return selectors.get_catalog(str(catalog), access=access_of(job))


def sql_string(text: str) -> str:
    """A Spark SQL string literal (backslash escapes, as Spark reads them)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def temporary_rows(session_id: Any, namespace: str) -> QuerySet[TemporaryObject]:
    qs = TemporaryObject.objects.filter(session_id=session_id)
    if namespace == "relation":
        return qs.filter(kind__in=TemporaryObject.RELATION_KINDS)
    return qs.filter(kind=TemporaryObject.KIND_FUNCTION, system=namespace == "system")


def temporary_row(
    session_id: Any, namespace: str, catalog: str, database: str, name: str
) -> TemporaryObject | None:
    """The session's temporary object of a namespace ("relation", "function", "system")."""
    if session_id is None:
        return None
    return (
        temporary_rows(session_id, namespace)
        .filter(catalog_key=catalog.lower(), database_key=database.lower(), name_key=name.lower())
        .first()
    )


def refuse_if_temporary(
    job: Job,
    namespace: str,
    parts: tuple[str, str, str],
    action: Literal["removing", "creating"],
    permanent_kind: str,
) -> None:
    """The planner's TEMPORARY_OBJECT_EXISTS check, again when the plan runs."""

    found = temporary_row(job.session_id, namespace, *parts)
    if found is not None:
        ident = ObjectIdentifier(found.catalog, found.database, found.name)
        raise TemporaryObjectExists(ident, found.kind, action, permanent_kind)


def existing_relation(database: Database, name: str) -> Table | None:
    return Table.objects.filter(database=database, name_key=name.lower()).first()
