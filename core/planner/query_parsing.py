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
from sqlglot.dialects.spark import Spark
from sqlglot.errors import ErrorLevel, TokenError
from sqlglot.errors import ParseError as SqlglotParseError
from sqlglot.tokenizer_core import TokenType

from core.planner import guard
from core.planner.errors import ForbiddenSql, ParseError
from core.planner.tokens import parse_error, readable_comments, tokenize

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


# sqlglot's checks of a call's arguments (``stack()``, ``corr(DISTINCT x, y)``,
# ``concat_ws()``): its own idea of a function's arity, not Spark's. When these are its only
# complaints the tree is whole, and the statement goes to Spark, whose analyzer answers
# with its own sentence (``WRONG_NUM_ARGS``) or runs it. (A missing operand, ``a +``, is
# the same check on an operator: a syntax error, kept.)
_MISSING = re.compile(r"Required keyword: '\w+' missing for <class '(?:[\w.]+\.)?(\w+)'>")
_TOO_MANY = "The number of provided arguments"
# A library's class name never reaches a user (``<class 'sqlglot.expressions.Corr'>``).
_CLASS_NAME = re.compile(r"\s*(?:for\s+)?<class '[^']*'>")


def _arity_only(info: dict[str, object]) -> bool:
    """Whether a sqlglot complaint is about a function call's arguments only."""
    description = str(info.get("description"))
    if description.startswith(_TOO_MANY):
        return True
    missing = _MISSING.match(description)
    kind = getattr(exp, missing.group(1), None) if missing else None
    return isinstance(kind, type) and issubclass(kind, exp.Func)


def _description(error: SqlglotParseError) -> dict[str, object]:
    """The error to show: the first that is not an arity check, else the first."""
    found = [info for info in error.errors if not _arity_only(info)]
    return (found or error.errors or [{}])[0]


class _SparkReading(Spark):
    """Spark's dialect, reading ``PIVOT`` as Spark does: any expression over aggregates,
    with an optional alias (``PIVOT (ceil(sum(e)), avg(e) + 1 AS a1 FOR …)``), where sqlglot
    takes only a function call."""

    class Parser(Spark.Parser):  # type: ignore[valid-type, misc]
        def _parse_pivot_aggregation(self) -> exp.Expr | None:
            start = self._index
            call = self._parse_function()
            following = self._curr.token_type if self._curr is not None else None
            if call is not None and following in (TokenType.FOR, TokenType.COMMA, TokenType.ALIAS):
                aliased: exp.Expr | None = self._parse_alias(call)  # sqlglot's own reading
                return aliased
            self._retreat(start)
            expression = self._parse_assignment()
            if expression is None or isinstance(expression, exp.Comprehension):
                # ``x FOR a IN (…)`` reads as a comprehension: an alias must come first.
                self._retreat(start)
                original: exp.Expr | None = super()._parse_pivot_aggregation()
                return original
            named: exp.Expr | None = self._parse_alias(expression)
            return named


def _parse(source: str) -> exp.Expr:
    """Parse one Spark SQL statement; failures carry the offending offset in ``source``."""
    readable = _for_sqlglot(readable_comments(source))
    try:
        expressions = sqlglot.parse(readable, read=_SparkReading, error_level=ErrorLevel.RAISE)
    except TokenError:
        tokenize(source)  # raises our ParseError with the position
        raise _Unparsable(0, "Cannot read the query") from None
    except SqlglotParseError as error:
        if error.errors and all(_arity_only(info) for info in error.errors):
            expressions = sqlglot.parse(readable, read=_SparkReading, error_level=ErrorLevel.IGNORE)
        else:
            info = _description(error)
            line = int(str(info.get("line") or 1))
            col = int(str(info.get("col") or 1))
            highlight = str(info.get("highlight") or "")
            lines = source.split("\n")
            line = max(1, min(line, len(lines)))
            offset = sum(len(item) + 1 for item in lines[: line - 1])
            offset += max(0, col - len(highlight))
            description = _CLASS_NAME.sub("", str(info.get("description") or "invalid syntax"))
            if description.startswith("Required keyword"):  # as Spark's PARSE_SYNTAX_ERROR
                description = f"Syntax error at or near '{highlight}'"
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
