"""Quoting and parsing helpers: user values become quoted identifiers or literals, never text.

Everything is rendered by sqlglot in the ``spark`` dialect: identifiers in backticks (an
inner backtick doubled), strings as Spark literals (quotes and backslashes escaped).
"""

from __future__ import annotations

from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError as SqlglotParseError

from tessera.errors import ParseError, ValidationError

DIALECT = "spark"


def quote_identifier(name: str) -> str:
    """``name`` as one backtick-quoted identifier part (`` `a``b` `` for ``a`b``)."""
    return exp.to_identifier(name, quoted=True).sql(dialect=DIALECT)


def quote_path(parts: list[str] | tuple[str, ...]) -> str:
    """A dotted path of quoted parts."""
    return ".".join(quote_identifier(part) for part in parts)


def string_literal(value: str) -> str:
    """``value`` as a Spark SQL string literal."""
    return exp.Literal.string(value).sql(dialect=DIALECT)


def col(name: str) -> str:
    """SQL text naming the column ``name`` (quoted), for ``select``/``where``/…"""
    return quote_identifier(name)


def lit(value: Any) -> str:
    """SQL text of the literal ``value`` (``None``, bool, int, float or str)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | float):
        return exp.Literal.number(value).sql(dialect=DIALECT)
    if isinstance(value, str):
        return string_literal(value)
    raise ValidationError(
        "VALIDATION_ERROR",
        f"lit() takes None, bool, int, float or str, not {type(value).__name__}.",
    )


def _parse_error(what: str, text: str, exc: SqlglotParseError) -> ParseError:
    first = exc.errors[0] if exc.errors else {}
    details = {"text": text}
    if first.get("line") is not None:
        details["line"] = first["line"]
        details["column"] = first["col"]
    return ParseError("PARSE_ERROR", f"Could not parse the {what} {text!r}: {exc}", details)


def parse_expression(text: str, *, alias: bool = False) -> exp.Expr:
    """One SQL expression (as a user wrote it for ``select``/``where``…), as an AST.

    ``alias``: a projection, which may be named (``price * qty AS total``).
    """
    if not isinstance(text, str) or not text.strip():
        raise ValidationError("VALIDATION_ERROR", f"An expression must be SQL text, not {text!r}.")
    into = exp.Expr if alias else exp.Condition
    try:
        parsed = sqlglot.parse_one(text, dialect=DIALECT, into=into)
    except SqlglotParseError as exc:
        raise _parse_error("expression", text, exc) from exc
    if isinstance(parsed, exp.Query | exp.Command):
        raise ParseError(
            "PARSE_ERROR", f"{text!r} is a statement, not an expression.", {"text": text}
        )
    return parsed


def parse_query(text: str) -> exp.Query:
    """A SQL query (``SELECT``/``WITH``/``VALUES``/``TABLE``) as an AST."""
    try:
        parsed = sqlglot.parse(text, dialect=DIALECT)
    except SqlglotParseError as exc:
        raise _parse_error("query", text, exc) from exc
    statements = [p for p in parsed if p is not None]
    if len(statements) != 1 or not isinstance(statements[0], exp.Query):
        raise ParseError("PARSE_ERROR", f"{text!r} is not one SQL query.", {"text": text})
    return statements[0]


def parse_path(text: str) -> list[str]:
    """A 1-, 2- or 3-part SQL path (backtick quoting) as its parts."""
    if not isinstance(text, str) or not text.strip():
        raise ValidationError("VALIDATION_ERROR", f"A path must be SQL text, not {text!r}.")
    try:
        table = sqlglot.parse_one(text, dialect=DIALECT, into=exp.Table)
    except SqlglotParseError as exc:
        raise _parse_error("path", text, exc) from exc
    parts = [part.name for part in table.parts]
    if not 1 <= len(parts) <= 3 or table.args.get("alias") is not None:
        raise ValidationError(
            "VALIDATION_ERROR", f"{text!r} is not a path of 1 to 3 names.", {"path": text}
        )
    return parts


def table_node(parts: list[str]) -> exp.Table:
    """A table reference with quoted parts."""
    quoted = [exp.to_identifier(part, quoted=True) for part in parts]
    if len(quoted) == 1:
        return exp.Table(this=quoted[0])
    if len(quoted) == 2:
        return exp.Table(this=quoted[1], db=quoted[0])
    return exp.Table(this=quoted[2], db=quoted[1], catalog=quoted[0])


def path_sql(path: str) -> str:
    """A user's path re-rendered with every part quoted."""
    return quote_path(parse_path(path))
