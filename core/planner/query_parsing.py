"""Parsing a query (or one expression) with sqlglot (``read="spark"``), errors pointing into
the user's text, and the guard's syntax-tree rules for a query (``check_query_tree``).

The parse serves only to find references (``core.planner.references``); positions stay those
of the whole statement, so that the caller can splice the user's text.
"""

from __future__ import annotations

import re
from itertools import pairwise

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError as SqlglotParseError
from sqlglot.errors import TokenError

from core.planner import guard
from core.planner.errors import ForbiddenSql, ParseError
from core.planner.tokens import parse_error, tokenize

_DDL_OR_DML: tuple[type[exp.Expr], ...] = (
    exp.Create,
    exp.Drop,
    exp.Alter,
    exp.Delete,
    exp.Update,
    exp.Merge,
    exp.Command,
    exp.Set,
    exp.Use,
    exp.LoadData,
    exp.Cache,
    exp.Uncache,
    exp.Refresh,
    exp.Describe,
    exp.Show,
)


def blank_prefix(text: str, start: int) -> str:
    """``text`` with everything before ``start`` blanked (newlines kept), so that offsets,
    lines and columns of a parsed region stay those of the whole statement."""
    return "".join(ch if ch == "\n" else " " for ch in text[:start]) + text[start:]


class _Unparsable(Exception):
    def __init__(self, offset: int, message: str) -> None:
        super().__init__(message)
        self.offset = offset
        self.message = message


# sqlglot reads ``window`` before ``(`` in GROUP BY as the start of a WINDOW clause and
# fails on ``GROUP BY window(ts, '1 minute')`` (Spark's event-time window). sqlglot is
# given a same-length name there instead: positions stay, and every reference is read from
# our own tokens (``_Positions``), so the call is still ``window`` to the planner and the
# user's text reaches Spark unchanged.
_WINDOW_CALL = re.compile(r"\bwindow\s*\(", re.IGNORECASE)
_WINDOW_STAND_IN = "w1ndow"


def _for_sqlglot(source: str) -> str:
    if _WINDOW_CALL.search(source) is None:
        return source
    tokens = tokenize(source)
    text = list(source)
    for token, following in pairwise(tokens):
        if token.kind == "word" and token.text.lower() == "window" and following.is_punct("("):
            text[token.start : token.end] = _WINDOW_STAND_IN
    return "".join(text)


def _parse(source: str) -> exp.Expr:
    """Parse one Spark SQL statement; failures carry the offending offset in ``source``."""
    try:
        expressions = sqlglot.parse(_for_sqlglot(source), read="spark")
    except TokenError:
        tokenize(source)  # raises our ParseError with the position
        raise _Unparsable(0, "Cannot read the query") from None
    except SqlglotParseError as error:
        info = error.errors[0] if error.errors else {}
        line = int(info.get("line") or 1)
        col = int(info.get("col") or 1)
        highlight = str(info.get("highlight") or "")
        lines = source.split("\n")
        line = max(1, min(line, len(lines)))
        offset = sum(len(item) + 1 for item in lines[: line - 1])
        offset += max(0, col - len(highlight))
        description = str(info.get("description") or "invalid syntax")
        raise _Unparsable(offset, f"Cannot parse the query: {description}") from None
    found = [expression for expression in expressions if expression is not None]
    if len(found) != 1:
        raise _Unparsable(0, "Expected exactly one query")
    return found[0]


def parse_region(text: str, start: int, end: int) -> exp.Expr:
    """Parse ``text[start:end]`` as one Spark SQL statement; positions stay absolute."""
    try:
        return _parse(blank_prefix(text[:end], start))
    except _Unparsable as error:
        raise parse_error(text, max(error.offset, start), error.message) from None


EXPRESSION_PREFIX = "SELECT "


def parse_expression(expression: str, origin: str, origin_offset: int) -> exp.Expr:
    """Parse ``SELECT <expression>``; errors point into ``origin`` where the expression
    starts at ``origin_offset``."""
    try:
        return _parse(EXPRESSION_PREFIX + expression)
    except _Unparsable as error:
        offset = origin_offset + max(0, error.offset - len(EXPRESSION_PREFIX))
        raise parse_error(origin, offset, error.message) from None
    except ParseError as error:
        line, column = error.details["line"], error.details["column"]
        offset = origin_offset + max(
            0,
            offset_at(EXPRESSION_PREFIX + expression, line, column) - len(EXPRESSION_PREFIX),
        )
        raise parse_error(origin, offset, error.message.split(" (line")[0]) from None


def offset_at(text: str, line: int, column: int) -> int:
    """The offset in ``text`` of a 1-based line and column."""
    lines = text.split("\n")
    return sum(len(item) + 1 for item in lines[: line - 1]) + column - 1


def check_query_tree(tree: exp.Expr) -> None:
    """The guard's syntax-tree rules for a query."""
    if not isinstance(tree, exp.Query | exp.Values | exp.Subquery):
        if isinstance(tree, exp.Insert):
            raise guard.unsupported_insert()
        raise ForbiddenSql(
            "Only queries (SELECT, WITH, VALUES, TABLE) can be used here: "
            "other statements cannot be checked inside a query."
        )
    for node in tree.walk():
        if isinstance(node, exp.QueryTransform):
            raise ForbiddenSql(
                "Script transforms (TRANSFORM … USING '…') are not allowed: "
                "they run external programs on the cluster."
            )
        if isinstance(node, exp.Insert):
            raise guard.unsupported_insert()
        if isinstance(node, _DDL_OR_DML):
            raise ForbiddenSql(
                f"A {type(node).__name__.upper()} statement cannot be used inside a query: "
                "only queries can be checked there."
            )
