"""Errors raised by the SQL planner, on top of the core's ``CoreError`` family."""

from __future__ import annotations

from typing import ClassVar, Literal

from core.errors import CoreError
from core.identifiers import ObjectIdentifier


class ParseError(CoreError):
    """A statement that sqlglot or our own parser cannot read.

    ``details`` holds ``line`` and ``column`` (both 1-based) of the offending spot.
    """

    code: ClassVar[str] = "PARSE_ERROR"

    def __init__(self, message: str, *, line: int, column: int) -> None:
        super().__init__(message, details={"line": line, "column": column})


class ForbiddenSql(CoreError):
    """The SQL guard: a statement that could reach past the catalog."""

    code: ClassVar[str] = "FORBIDDEN_SQL"


class UnsupportedStatement(CoreError):
    """A statement Tessera recognises but does not run yet."""

    code: ClassVar[str] = "UNSUPPORTED_STATEMENT"


class StreamingUnsupported(CoreError):
    """A statement that cannot run as a stream where it was sent (e.g. inside a pipeline);
    the worker raises its own for what Spark refuses at start (same code)."""

    code: ClassVar[str] = "STREAMING_UNSUPPORTED"


class TemporaryObjectExists(CoreError):
    """A permanent DROP TABLE|VIEW|FUNCTION or CREATE FUNCTION while a temporary object
    with that identifier exists (it shadows the permanent one): drop it first (FLIP-64).

    ``temporary_kind`` and ``permanent_kind`` are "table", "view" or "function";
    ``details`` holds ``identifier`` (three parts) and ``temporary_kind``.
    """

    code: ClassVar[str] = "TEMPORARY_OBJECT_EXISTS"

    def __init__(
        self,
        ident: ObjectIdentifier,
        temporary_kind: str,
        action: Literal["removing", "creating"],
        permanent_kind: str,
    ) -> None:
        super().__init__(
            f"Temporary {temporary_kind} with identifier '{ident.quoted()}' exists. "
            f"Drop it first before {action} the permanent {permanent_kind}.",
            details={"identifier": list(ident.parts), "temporary_kind": temporary_kind},
        )
