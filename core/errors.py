"""Error classes raised by the pure core.

Every error carries a ``code`` (all of them ``VALIDATION_ERROR``, which the web layer
maps to HTTP 400), a one-sentence human ``message`` and machine-readable ``details``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar


class CoreError(Exception):
    """Base class of all core errors."""

    code: ClassVar[str] = "VALIDATION_ERROR"

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message: str = message
        self.details: dict[str, Any] = dict(details) if details else {}

    def __str__(self) -> str:
        return self.message


class IdentifierError(CoreError):
    """Invalid identifier or path; details: ``{"text": ..., "position": ...}``."""


class DataTypeError(CoreError):
    """Invalid data type text or parameters; details: ``{"text": ..., "position": ...}``."""


class SchemaError(CoreError):
    """Invalid schema; details: ``{"field": "columns[2].data_type", "column": "x"}``."""


class PropertiesError(CoreError):
    """Invalid catalog properties; details: ``{"key": "schema.3.name"}``."""


# Domain errors shared by the catalog services, the planner and the job pipeline.
# Each has its own code; the web layer maps codes to HTTP statuses in one place.


class NotFound(CoreError):
    """An object, session or job that does not exist (or that the caller may not see)."""

    code: ClassVar[str] = "NOT_FOUND"


# Spark's condition and SQLSTATE for a missing object of each kind. Clients written for Spark
# (dbt, BI drivers) tell "missing" from "failed" by them, as Spark's Thrift server gives them.
SPARK_MISSING: dict[str, tuple[str, str]] = {
    "catalog": ("CATALOG_NOT_FOUND", "42P08"),
    "database": ("SCHEMA_NOT_FOUND", "42704"),
    "relation": ("TABLE_OR_VIEW_NOT_FOUND", "42P01"),
    "function": ("ROUTINE_NOT_FOUND", "42883"),
}


def missing_object(kind: str, message: str, details: Mapping[str, Any] | None = None) -> NotFound:
    """NOT_FOUND for a missing catalog, database, relation or function, with Spark's condition
    and SQLSTATE in its details (``condition``, ``sqlstate``, as a Spark error has them)."""
    condition, sqlstate = SPARK_MISSING[kind]
    return NotFound(
        message, details={**(details or {}), "condition": condition, "sqlstate": sqlstate}
    )


class AlreadyExists(CoreError):
    """Creating an object under a name that is taken."""

    code: ClassVar[str] = "ALREADY_EXISTS"


class NotEmpty(CoreError):
    """Dropping a catalog or database that still holds objects, without cascade."""

    code: ClassVar[str] = "NOT_EMPTY"


class Conflict(CoreError):
    """A write whose base changed under it: another commit moved the table on (409)."""

    code: ClassVar[str] = "CONFLICT"


class WriteConflict(Conflict):
    """A Delta commit refused by Delta's optimistic concurrency: another commit changed what
    the write read (409); nothing was committed."""

    code: ClassVar[str] = "WRITE_CONFLICT"


class PermissionDenied(CoreError):
    """The caller may see the object but not change it."""

    code: ClassVar[str] = "PERMISSION_DENIED"


class PayloadTooLarge(CoreError):
    """A request body over a limit of the server (413)."""

    code: ClassVar[str] = "PAYLOAD_TOO_LARGE"


class TooManyRequests(CoreError):
    """A request refused because the caller already uses their share; retry later (HTTP 429,
    ``Retry-After``)."""

    code: ClassVar[str] = "TOO_MANY_REQUESTS"

    def __init__(
        self, message: str, *, retry_after: int = 1, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message, details={**(details or {}), "retry_after": retry_after})
        self.retry_after = retry_after


class TooManyStreams(CoreError):
    """A streaming statement sent while no live worker has a stream slot free (HTTP 429);
    details: ``workers``, ``slots``, ``streams``, ``retry_after``."""

    code: ClassVar[str] = "TOO_MANY_STREAMS"
    retry_after: ClassVar[int] = 30

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message, details={**(details or {}), "retry_after": self.retry_after})


def upload_too_large(limit: int) -> PayloadTooLarge:
    """An upload over ``TESSERA_UPLOAD_MAX_BYTES`` (announced by its length or counted)."""
    return PayloadTooLarge(
        f"The upload is larger than the server's limit of {limit:,} bytes.",
        details={"limit": limit},
    )
