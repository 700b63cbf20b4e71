"""Time travel after a table name: ``p VERSION AS OF n`` and ``p TIMESTAMP AS OF '…'``
(also Spark's ``FOR SYSTEM_VERSION AS OF`` / ``FOR SYSTEM_TIME AS OF`` spellings, where
sqlglot reads them).

The clause is read from our own tokens, right after the table name, so that the planner can
replace the name *and* the clause by the registered alias: Spark never sees a time-travel
clause (its guard refuses one: ``RelationTimeTravel`` is not on its allow-list). Only
literals are accepted — a version number, a timestamp string — never an expression.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from core.errors import CoreError
from core.planner.model import Relation, TimeTravel
from core.planner.tokens import Token

MAX_VERSION = 2_147_483_647  # the catalog's version numbers are 32-bit
_VERSION_WORDS = ("VERSION", "SYSTEM_VERSION")
_TIME_WORDS = ("TIMESTAMP", "SYSTEM_TIME")
EXAMPLE_TIMESTAMP = "'2026-11-24 10:00:00'"


def unversioned(relation: Relation) -> str:
    """What ``relation`` is when it has no versions ("a view", "a temporary table", "an
    external table"); empty for a permanent managed table, the one kind that has them."""
    if relation.kind == "view":
        return "a view"
    if relation.temporary:
        return "a temporary table"
    if not relation.location:
        return "an external table"
    return ""


def delta_reader_option(travel: TimeTravel) -> dict[str, str]:
    """Delta's reader option for ``travel`` on an external Delta table: ``versionAsOf``
    (the number) or ``timestampAsOf`` (the moment in UTC, with its offset written out, so
    that the session's time zone does not change it)."""
    if travel.kind == "version":
        return {"versionAsOf": str(travel.version)}
    moment = (travel.timestamp or datetime.now(UTC)).astimezone(UTC)
    return {"timestampAsOf": moment.strftime("%Y-%m-%d %H:%M:%S.%f") + "+00:00"}


def _refuse(message: str, table: str) -> CoreError:
    return CoreError(f"{message} (after {table}).", details={"table": table})


def read_clause(tokens: Sequence[Token], after: int, table: str) -> tuple[TimeTravel, int]:
    """The time-travel clause that starts at token ``after`` (just after the table name
    ``table``) and the index of its last token. The caller knows there is one (sqlglot
    parsed a ``Version`` node there)."""
    i = after
    if i < len(tokens) and tokens[i].is_word("FOR"):
        i += 1
    if i + 3 > len(tokens) or not (
        tokens[i].is_word(*_VERSION_WORDS, *_TIME_WORDS)
        and tokens[i + 1].is_word("AS")
        and tokens[i + 2].is_word("OF")
    ):
        raise _refuse("Cannot read the time-travel clause: expected VERSION AS OF n", table)
    kind = "version" if tokens[i].is_word(*_VERSION_WORDS) else "timestamp"
    value_at = i + 3
    value = tokens[value_at] if value_at < len(tokens) else None
    following = tokens[value_at + 1] if value_at + 1 < len(tokens) else None
    # A literal is one token, and what follows it is not part of an expression.
    continues = following is not None and (
        following.is_punct("(", ".", "::", "+", "-", "*", "/", "%", "||", "[")
        or following.is_word("AND", "OR", "IS", "BETWEEN", "DIV", "LIKE")
    )
    text = " ".join(t.text for t in tokens[after:value_at]) + (
        f" {value.text}" if value is not None else ""
    )
    if kind == "version":
        if value is None or value.kind != "number" or continues or not value.text.isdigit():
            raise _refuse(
                "VERSION AS OF takes a version number written as a non-negative integer "
                "literal (0, 1, 2, …), not an expression",
                table,
            )
        number = int(value.text)
        if number > MAX_VERSION:
            raise CoreError(
                f"Version {value.text} of {table} does not exist: version numbers are at most "
                f"{MAX_VERSION}.",
                details={"table": table},
            )
        return TimeTravel("version", text, version=number), value_at
    if value is None or value.kind != "string" or continues:
        raise _refuse(
            f"TIMESTAMP AS OF takes a timestamp literal such as {EXAMPLE_TIMESTAMP}, not an "
            "expression",
            table,
        )
    moment = parse_timestamp(value.text, table)
    return TimeTravel("timestamp", text, timestamp=moment), value_at


def parse_timestamp(text: str, table: str) -> datetime:
    """An ISO date or timestamp (``2026-11-24``, ``2026-11-24 10:00:00[.ffffff]``, with an
    optional offset or ``Z``); a time without an offset is UTC."""
    stripped = text.strip()
    try:
        if len(text) > 64:
            raise ValueError
        moment = datetime.fromisoformat(stripped)
    except ValueError:
        raise _refuse(
            f"TIMESTAMP AS OF '{text[:60]}' is not a timestamp: write it as "
            f"{EXAMPLE_TIMESTAMP} (UTC unless it carries an offset)",
            table,
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment
