"""Errors raised by the SQL planner, on top of the core's ``CoreError`` family."""

from __future__ import annotations

from typing import ClassVar

from core.errors import CoreError


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
