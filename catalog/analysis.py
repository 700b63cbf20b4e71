"""Spark's analyzer, as the catalog asks for it before it stores a schema (FLIP-164: only
resolved schemas enter the catalog).

The web process has no Spark. A table whose computed columns or watermarks need typing,
and every view created or changed through REST, is checked by a worker while the request
waits (bounded by ``TESSERA_SCHEMA_CHECK_SECONDS``); nothing is stored before the answer.
The catalog depends on no other app, so it only names what it needs (``Analyzer``); the jobs
app installs the one that asks a worker (``sessions.analysis``, from ``JobsConfig.ready``).

Without an analyzer, or when no worker answers in time, the write is refused with
``UNAVAILABLE`` (503): an unresolved schema is never stored instead.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

from core.errors import CoreError
from core.schema import ResolvedSchema, Schema


class Unavailable(CoreError):
    """No worker could run Spark's analyzer in time: nothing was stored; try again."""

    code: ClassVar[str] = "UNAVAILABLE"


class Analyzer(Protocol):
    def resolve_table_schema(self, schema: Schema) -> ResolvedSchema:
        """The declared schema resolved by Spark's analyzer (computed columns and watermark
        expressions typed); raises ``CoreError`` (``VALIDATION_ERROR`` with the field and
        column) when Spark refuses an expression, ``Unavailable`` when no worker answers."""
        ...

    def derive_view_schema(self, catalog: str, database: str, query: str, *, user: Any) -> Schema:
        """The schema Spark's analyzer derives for a view's query, read in the view's
        catalog and database and planned with ``user``'s rights (the view's creator, or who
        changes its query: they must be allowed to read what it reads — a view runs with its
        owner's rights, so nobody makes a view over what they may not read themselves);
        raises as ``resolve_table_schema``, and ``PermissionDenied``/``NotFound`` as a
        statement would."""
        ...


_installed: list[Analyzer] = []


def install(analyzer: Analyzer) -> None:
    """Make ``analyzer`` the one the catalog asks (the jobs app, at start)."""
    _installed[:] = [analyzer]


def analyzer() -> Analyzer:
    if not _installed:
        raise Unavailable(
            "Spark's analyzer is not available in this process, so a schema with "
            "expressions cannot be checked; nothing was stored."
        )
    return _installed[0]


def needs_analyzer(schema: Schema) -> bool:
    """Whether resolving ``schema`` needs Spark: it has a computed column or a watermark."""
    return bool(schema.watermarks) or any(
        getattr(column, "expression", None) is not None for column in schema.columns
    )


def as_error(answer: Any) -> CoreError:
    """The error a worker answered (docs/api.md's ``{"code", "message", "details"}``), as raised
    here: a refusal of the schema stays a refusal (400, with its field and column); anything
    else (the worker's Spark failed) is ``Unavailable``."""
    code = str(answer.get("code") or "") if isinstance(answer, dict) else ""
    message = str(answer.get("message") or "") if isinstance(answer, dict) else ""
    details = answer.get("details") if isinstance(answer, dict) else None
    details = dict(details) if isinstance(details, dict) else {}
    if code == "VALIDATION_ERROR":
        return CoreError(message or "Spark refused the schema.", details=details)
    return Unavailable(
        "The worker could not run Spark's analyzer on this schema"
        + (f" ({message})" if message else "")
        + "; nothing was stored. Try again.",
        details={"cause": code} if code else {},
    )
