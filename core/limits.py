"""Limits on what one statement may cost the web process to plan.

The planner is pure Python; a statement of a few megabytes, or one nested a few dozen
levels deep, costs seconds of CPU or overflows the interpreter's stack. So every statement
passes ``check_statement`` before it is tokenized for real: a length check, then one fast
scan that counts tokens and nesting depth and stops at the first limit crossed. It is
scanned once: a caller that must refuse it before planning (the statements service, which
answers a 4xx and makes no job) checks it with ``accept_statement`` and hands the planner the
``CheckedStatement``; the planner (``ensure_checked``) scans only what it was not handed
checked under its own limits, so it stays safe for any other caller. Planning
then runs under a time budget (``planning_budget``): the planner calls ``check_budget``
between its steps, and the reader it is given is wrapped so every catalog lookup checks it
too. One step the budget cannot interrupt is sqlglot's parse of the statement, which the
token limit bounds (docs/security.md §4 has the measurements behind the defaults).

Pure: standard library only.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, ClassVar

from core import storable
from core.errors import CoreError

# Defaults; the web side passes the server's settings (TESSERA_SQL_MAX_*, README).
MAX_CHARS = 1_048_576
MAX_TOKENS = 30_000
MAX_DEPTH = 24
MAX_SCRIPT_STATEMENTS = 500
PLANNING_BUDGET_SECONDS = 10.0


class StatementTooLarge(CoreError):
    """A statement (or script) with more characters, tokens or statements than allowed."""

    code: ClassVar[str] = "STATEMENT_TOO_LARGE"


class StatementTooDeep(CoreError):
    """A statement nested deeper than allowed (parentheses, brackets, CASE … END)."""

    code: ClassVar[str] = "STATEMENT_TOO_DEEP"


class PlanningTimeout(CoreError):
    """Planning a statement took longer than its budget."""

    code: ClassVar[str] = "PLANNING_TIMEOUT"


@dataclass(frozen=True)
class StatementLimits:
    """What one statement (or one script, for ``max_chars``/``max_tokens``) may hold."""

    max_chars: int = MAX_CHARS
    max_tokens: int = MAX_TOKENS
    max_depth: int = MAX_DEPTH
    max_statements: int = MAX_SCRIPT_STATEMENTS

    @classmethod
    def from_settings(cls, settings: Any) -> StatementLimits:
        """The limits of a settings object's ``TESSERA_SQL_*`` (Django's on the server)."""
        return cls(
            max_chars=settings.TESSERA_SQL_MAX_CHARS,
            max_tokens=settings.TESSERA_SQL_MAX_TOKENS,
            max_depth=settings.TESSERA_SQL_MAX_DEPTH,
            max_statements=settings.TESSERA_SCRIPT_MAX_STATEMENTS,
        )


# One alternative per kind of token. Strings and quoted names run to their closing quote
# (or the end: the tokenizer reports unterminated ones); block comments are matched by hand
# because Spark nests them. The scan only has to count: a number such as 1.5e3 or an
# operator such as <=> is one token, anything else unknown is one token per character.
_SCAN = re.compile(
    r"""
      (?P<space>\s+)
    | (?P<line_comment>--[^\n]*)
    | (?P<block_comment>/\*)
    | (?P<string>'[^'\\]*(?:\\.[^'\\]*)*(?:'|\Z)|"[^"\\]*(?:\\.[^"\\]*)*(?:"|\Z))
    | (?P<quoted>`[^`]*(?:``[^`]*)*(?:`|\Z))
    | (?P<open>[(\[])
    | (?P<close>[)\]])
    | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\w*)
    | (?P<word>\w+)
    | (?P<operator><=>|<=|>=|<>|!=|==|\|\||->|=>|::|<<|>>)
    | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)
_BLOCK_MARK = re.compile(r"/\*|\*/")
# A string literal's escapes, as Spark (and the planner's tokenizer) decode them: \uXXXX,
# \UXXXXXXXX, octal \0dd, and any other character after a backslash.
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|0([0-7]{2})?|.)", re.DOTALL)
_OPENING_WORDS = frozenset({"CASE", "BEGIN"})


def _escaped_unstorable(literal: str) -> tuple[int, int] | None:
    """(offset in ``literal``, code point) of the first escape that decodes to a code point
    the database cannot store: NUL (``\\0``, ``\\000``, ``\\u0000``) or a surrogate that
    no neighbouring escape pairs (``\\uD83D\\uDE00`` is one character, ``\\uD800`` none)."""
    pending: tuple[int, int, int] | None = None  # an open high surrogate: start, end, code
    for escape in _ESCAPE.finditer(literal):
        hex4, hex8, octal = escape.group(1), escape.group(2), escape.group(3)
        if hex4 is not None or hex8 is not None:
            code = int(hex4 or hex8, 16)
        elif escape.group().startswith("\\0"):
            code = int(octal or "0", 8)
        else:
            code = -1
        if pending is not None:
            if escape.start() == pending[1] and 0xDC00 <= code <= 0xDFFF:
                pending = None
                continue
            return pending[0], pending[2]
        if code == 0 or 0xDC00 <= code <= 0xDFFF:
            return escape.start(), code
        if 0xD800 <= code <= 0xDBFF:
            pending = (escape.start(), escape.end(), code)
    return (pending[0], pending[2]) if pending is not None else None


def _raw_prefix(text: str, start: int) -> bool:
    """Whether the string literal at ``start`` is a raw one (``r'…'``: no escapes)."""
    return (
        start > 0
        and text[start - 1] in "rR"
        and (start < 2 or not (text[start - 2].isalnum() or text[start - 2] == "_"))
    )


def _line_column(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _skip_block_comment(text: str, start: int) -> int:
    """The offset after the (possibly nested) block comment opening at ``start``."""
    depth, position = 1, start + 2
    while depth:
        mark = _BLOCK_MARK.search(text, position)
        if mark is None:
            return len(text)
        depth += 1 if mark.group() == "/*" else -1
        position = mark.end()
    return position


@dataclass(frozen=True)
class StatementSize:
    """What the scan found: tokens and the deepest nesting (both up to where it stopped)."""

    tokens: int
    depth: int


def check_statement(
    text: str, limits: StatementLimits, *, what: str = "statement", field: str = "sql"
) -> StatementSize:
    """Refuse ``text`` if it is longer, has more tokens or nests deeper than ``limits``.

    Runs in time linear in the text and stops at the first limit crossed, so a huge
    statement is refused in milliseconds, before the planner tokenizes or parses it.
    ``what`` names it in messages ("statement", "script"), ``field`` in ``details``.
    """
    if len(text) > limits.max_chars:
        raise StatementTooLarge(
            f"The {what} has {len(text):,} characters; the server accepts at most "
            f"{limits.max_chars:,}. Split it, or load large lists of values into a "
            "table and read them from there.",
            details={
                "field": field,
                "limit": "characters",
                "maximum": limits.max_chars,
                "found": len(text),
            },
        )
    raw = storable.find(text)
    if raw is not None:
        raise storable.unstorable(f"the {what}", field, text, raw)
    tokens = depth = deepest = blocks = 0
    position, end = 0, len(text)
    match = _SCAN.match
    while position < end:
        found = match(text, position)
        if found is None:  # cannot happen: the last alternative matches any character
            break
        kind = found.lastgroup
        if kind == "block_comment":
            position = _skip_block_comment(text, position)
            continue
        position = found.end()
        if kind == "space" or kind == "line_comment":
            continue
        tokens += 1
        if tokens > limits.max_tokens:
            raise StatementTooLarge(
                f"The {what} has more than {limits.max_tokens:,} tokens (words, "
                "numbers, strings and symbols); the server plans at most that many. Split "
                "it, or load large lists of values into a table and read them from there.",
                details={"field": field, "limit": "tokens", "maximum": limits.max_tokens},
            )
        if kind == "string" and "\\" in found.group() and not _raw_prefix(text, found.start()):
            escaped = _escaped_unstorable(found.group())
            if escaped is not None:
                raise unstorable_escape(text, found.start() + escaped[0], escaped[1], what, field)
        if kind == "open":
            depth += 1
        elif kind == "close":
            depth = max(0, depth - 1)
        elif kind == "word" and 3 <= position - found.start() <= 5:
            word = found.group().upper()
            if word in _OPENING_WORDS:
                depth += 1
                blocks += 1
            elif word == "END" and blocks:
                depth = max(0, depth - 1)
                blocks -= 1
            else:
                continue
        else:
            continue
        if depth > deepest:
            deepest = depth
            if depth > limits.max_depth:
                line, column = _line_column(text, found.start())
                raise too_deep(limits.max_depth, what, line=line, column=column, field=field)
    return StatementSize(tokens, deepest)


@dataclass(frozen=True)
class CheckedStatement:
    """A statement ``accept_statement`` found within ``limits``, and what the scan found.

    The planner plans it without scanning it again (``ensure_checked``). Make one with
    ``accept_statement`` only: one built by hand vouches for a scan that never ran."""

    text: str
    limits: StatementLimits
    size: StatementSize


def accept_statement(
    text: str, limits: StatementLimits, *, what: str = "statement", field: str = "sql"
) -> CheckedStatement:
    """``check_statement``, keeping the proof that ``text`` passed it under ``limits``."""
    size = check_statement(text, limits, what=what, field=field)
    return CheckedStatement(text, limits, size)


def ensure_checked(statement: str | CheckedStatement, limits: StatementLimits) -> str:
    """The text of ``statement``, within ``limits``: a ``CheckedStatement`` accepted under
    these very limits is not scanned again; a plain string, or one checked under other
    limits, is scanned now (``StatementTooLarge``/``StatementTooDeep`` when over them)."""
    if isinstance(statement, CheckedStatement):
        if statement.limits == limits:
            return statement.text
        statement = statement.text
    check_statement(statement, limits)
    return statement


def unstorable_escape(
    text: str, offset: int, code: int, what: str, field: str
) -> storable.UnstorableText:
    """The error for a string literal whose escape at ``offset`` stands for ``code``, a code
    point the database cannot store (the literal would be stored as a comment, an option,
    a session property…)."""
    line, column = _line_column(text, offset)
    return storable.UnstorableText(
        f"The {what} has a string literal whose escape at line {line}, column {column} "
        f"stands for {storable.character_name(code)}; {storable.RULE}.",
        details={"field": field, "character": f"U+{code:04X}", "line": line, "column": column},
    )


def too_deep(
    maximum: int,
    what: str = "statement",
    *,
    line: int | None = None,
    column: int | None = None,
    field: str = "sql",
) -> StatementTooDeep:
    """The error for a statement nested deeper than ``maximum`` levels."""
    where = f" (line {line}, column {column})" if line is not None else ""
    details: dict[str, Any] = {"field": field, "limit": "depth", "maximum": maximum}
    if line is not None:
        details.update(line=line, column=column)
    return StatementTooDeep(
        f"The {what} nests parentheses, brackets or CASE expressions more than {maximum} "
        f"levels deep{where}; the server plans at most {maximum} levels. Flatten it, e.g. "
        "with a WITH clause.",
        details=details,
    )


# --- the planning budget -----------------------------------------------------------------

# (deadline on the monotonic clock, the budget in seconds) of the planning under way in
# this thread (a ContextVar: every thread has its own).
_BUDGET: ContextVar[tuple[float, float] | None] = ContextVar(
    "tessera_planning_budget", default=None
)


@contextmanager
def planning_budget(seconds: float | None) -> Iterator[None]:
    """Run the block under a planning budget of ``seconds`` (None: no budget). A budget
    opened inside another never extends it."""
    if seconds is None:
        yield
        return
    deadline = time.monotonic() + seconds
    outer = _BUDGET.get()
    budget = outer if outer is not None and outer[0] <= deadline else (deadline, seconds)
    token = _BUDGET.set(budget)
    try:
        yield
    finally:
        _BUDGET.reset(token)


def check_budget() -> None:
    """Raise ``PlanningTimeout`` when the planning under way has used up its budget."""
    budget = _BUDGET.get()
    if budget is not None and time.monotonic() > budget[0]:
        seconds = budget[1]
        raise PlanningTimeout(
            f"Planning the statement took longer than the server allows ({seconds:g} s) and "
            "was stopped. Simplify or split the statement.",
            details={"budget_seconds": seconds},
        )


class BudgetedReader:
    """A catalog reader whose every call checks the planning budget first: resolving a
    statement naming thousands of objects is thousands of lookups. Wraps any reader
    (whatever methods its protocol has)."""

    def __init__(self, reader: Any) -> None:
        self._reader = reader

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._reader, name)
        if not callable(attribute):
            return attribute

        def checked(*args: Any, **kwargs: Any) -> Any:
            check_budget()
            return attribute(*args, **kwargs)

        return checked


# --- editor tabs -----------------------------------------------------------------------------

MAX_EDITOR_TABS = 50


class TooManyTabs(CoreError):
    """One more editor tab than a user may keep on the server (409)."""

    code: ClassVar[str] = "TOO_MANY_TABS"


@dataclass(frozen=True)
class EditorTabLimits:
    """What one user's editor tabs may hold: how many tabs, how many characters of SQL each."""

    max_tabs: int = MAX_EDITOR_TABS
    max_chars: int = MAX_CHARS

    @classmethod
    def from_settings(cls, settings: Any) -> EditorTabLimits:
        """The limits of ``TESSERA_EDITOR_TABS_PER_USER`` and ``TESSERA_EDITOR_TAB_MAX_CHARS``."""
        return cls(
            max_tabs=settings.TESSERA_EDITOR_TABS_PER_USER,
            max_chars=settings.TESSERA_EDITOR_TAB_MAX_CHARS,
        )


def check_tab_text(text: str, limits: EditorTabLimits) -> str:
    """Refuse a tab's SQL longer than ``limits.max_chars`` (413 STATEMENT_TOO_LARGE)."""
    if len(text) > limits.max_chars:
        raise StatementTooLarge(
            f"The tab's SQL has {len(text):,} characters; the server keeps at most "
            f"{limits.max_chars:,} in one tab. Split it into several tabs.",
            details={
                "field": "sql",
                "limit": "characters",
                "maximum": limits.max_chars,
                "found": len(text),
            },
        )
    return text


def check_tab_count(held: int, limits: EditorTabLimits) -> None:
    """Refuse one more tab when ``held`` tabs already reach ``limits.max_tabs`` (0: none)."""
    if limits.max_tabs > 0 and held >= limits.max_tabs:
        raise TooManyTabs(
            f"You have {held:,} editor tabs, the most the server keeps for one user; "
            "close some tabs, then open this one again.",
            details={"tabs": held, "maximum": limits.max_tabs},
        )
