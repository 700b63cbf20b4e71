"""``table_changes('name', start [, end])`` in a query: the change data feed of a managed
Delta table (Databricks' table-valued function; issue 31 item 5, ADR 0019).

The call is read from our own tokens, like a time-travel clause: the table's name is a
string literal naming a catalog table (never a path), each bound a non-negative version
number or a timestamp string. The planner replaces the whole call by a registered alias
whose plan reads Delta's ``readChangeFeed`` between two versions on the table's directory:
Spark never sees ``table_changes`` (its guard would refuse it, it is no Spark function).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from core.errors import CoreError
from core.identifiers import name_key
from core.planner import guard
from core.planner.errors import ForbiddenSql, ParseError
from core.planner.model import ChangeRange
from core.planner.time_travel import EXAMPLE_TIMESTAMP, MAX_VERSION
from core.planner.tokens import Token, tokenize

FUNCTION = "table_changes"
EXAMPLE = "table_changes('db.t', 1) or table_changes('db.t', 1, 4)"
_PATH_CHARACTERS = ("/", "\\", ":")


def is_call(name: str) -> bool:
    return name_key(name) == FUNCTION


def _refuse(message: str) -> CoreError:
    return CoreError(f"{message}. Write it as {EXAMPLE}.")


def _arguments(tokens: Sequence[Token], name_at: int) -> tuple[list[list[Token]], int]:
    """The arguments of the call whose name is token ``name_at`` (each a list of tokens)
    and the index of its closing parenthesis."""
    i = name_at + 1
    if i >= len(tokens) or not tokens[i].is_punct("("):
        raise _refuse(f"Cannot read the call of {FUNCTION}")
    groups: list[list[Token]] = [[]]
    depth = 0
    for j in range(i, len(tokens)):
        token = tokens[j]
        if token.is_punct("("):
            depth += 1
            if depth == 1:
                continue
        elif token.is_punct(")"):
            depth -= 1
            if depth == 0:
                return ([] if groups == [[]] else groups), j
        elif token.is_punct(",") and depth == 1:
            groups.append([])
            continue
        groups[-1].append(token)
    raise _refuse(f"Cannot read the call of {FUNCTION}: its parenthesis is not closed")


def table_name(text: str) -> tuple[str, ...]:
    """The parts of the table name written in the first argument (one to three, quoted
    with backticks where needed); a path or anything else is refused with a sentence."""
    shown = text[:80]
    if any(c in text for c in _PATH_CHARACTERS) and "`" not in text:
        raise ForbiddenSql(
            f"Reading files by path ('{shown}') is not allowed: {FUNCTION} takes the name of a "
            "managed Delta table in the catalog."
        )
    try:
        tokens = tokenize(text) if len(text) <= 1000 else []
    except ParseError:
        tokens = []
    parts: list[str] = []
    for index, token in enumerate(tokens):
        if index % 2 == 0 and token.is_name:
            parts.append(token.text)
        elif index % 2 == 1 and token.is_punct("."):
            continue
        else:
            parts = []
            break
    if not parts or len(tokens) != 2 * len(parts) - 1 or len(parts) > 3:
        raise CoreError(
            f"{FUNCTION} takes the name of a table as its first argument ('t', 'db.t' or "
            f"'catalog.db.t'), not '{shown}'."
        )
    guard.check_qualifiers(parts)
    guard.check_file_path_table(parts)
    return tuple(parts)


def _bound(token: Token, which: str) -> int | datetime:
    if token.kind == "number":
        if not token.text.isdigit():
            raise _refuse(f"The {which} of {FUNCTION} is a version number (0, 1, 2, …)")
        number = int(token.text)
        if number > MAX_VERSION:
            raise CoreError(
                f"The {which} version {token.text} of {FUNCTION} does not exist: version "
                f"numbers are at most {MAX_VERSION}."
            )
        return number
    if token.kind == "string":
        try:
            if len(token.text) > 64:
                raise ValueError
            moment = datetime.fromisoformat(token.text.strip())
        except ValueError:
            raise _refuse(
                f"The {which} of {FUNCTION}, '{token.text[:60]}', is neither a version number "
                f"nor a timestamp such as {EXAMPLE_TIMESTAMP} (UTC unless it carries an offset)"
            ) from None
        return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    raise _refuse(f"The {which} of {FUNCTION} must be a literal, not an expression")


def read_call(tokens: Sequence[Token], name_at: int) -> tuple[ChangeRange, int]:
    """The ``table_changes(…)`` call whose name is token ``name_at`` and the index of its
    closing parenthesis. Only literals: a string naming the table, a version number or a
    timestamp string for the start and the optional end."""
    groups, last = _arguments(tokens, name_at)
    if len(groups) not in (2, 3):
        raise _refuse(
            f"{FUNCTION} takes a table name, a start and an optional end (2 or 3 arguments), "
            f"not {len(groups)}"
        )
    if any(len(group) != 1 for group in groups):
        raise _refuse(
            f"{FUNCTION} takes literals only (a string, then version numbers or timestamp "
            "strings), not expressions or named arguments"
        )
    first = groups[0][0]
    if first.kind != "string":
        raise _refuse(f"The first argument of {FUNCTION} is the table's name as a string")
    parts = table_name(first.text)
    start = _bound(groups[1][0], "start")
    end = _bound(groups[2][0], "end") if len(groups) == 3 else None
    shown = [_shown(g[0]) for g in groups]
    text = f"{FUNCTION}({', '.join(shown)})"
    return ChangeRange(parts, text, start, end, tuple(shown[1:])), last


def string_literal(text: str) -> str:
    """``text`` as a Spark string literal (backslash escapes are Spark's default)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def canonical_call(changes: ChangeRange, quoted: str) -> str:
    """The call with the table's full name (stored in a view's expanded text)."""
    return f"{FUNCTION}({', '.join([string_literal(quoted), *changes.bounds])})"


def _shown(token: Token) -> str:
    return string_literal(token.text[:80]) if token.kind == "string" else token.text
