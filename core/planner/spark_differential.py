"""The differential half of the SQL guard: Spark's reading of a text against the planner's.

``check_lexing``: every character must be code, string, quoted name or comment to Spark's
lexer exactly as it is to the planner's tokenizer. ``check_references``: the number of
references to each registered alias that Spark's parse holds (``check_tree`` in
``core.planner.spark_guard`` counts them) must equal the number the planner's tokenizer sees
in the same text. A difference means the two read the text differently (one of them took
code for a comment or a string), and the statement is refused even if what Spark would run
is harmless.

Pure Python: nothing here imports pyspark or Django.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.errors import CoreError
from core.identifiers import name_key, quote_part
from core.planner.errors import ForbiddenSql
from core.planner.spark_guard import Allowed, References
from core.planner.tokens import Token, line_col, tokenize

_READ_DIFFERENTLY = (
    "Tessera and Spark read this statement differently ({what}); rewrite it without "
    "ambiguous comments, quotes or escapes."
)


# What a character is to a lexer (TreeDescriber.lexClasses builds Spark's string).
_CLASS_NAMES = {"S": "a string", "Q": "a quoted name", "H": "a comment", "X": "code"}
_WHITESPACE = re.compile(r"\s+")


def _blank_whitespace(text: str, classes: bytearray) -> bytes:
    """Whitespace inside code means nothing (a hint's spaces are one token to sqlglot, gaps
    between tokens to Spark): only strings, quoted names and comments keep their class."""
    for match in _WHITESPACE.finditer(text):
        begin, end = match.span()
        classes[begin:end] = classes[begin:end].replace(b"X", b"H")
    return bytes(classes)


@dataclass(frozen=True)
class PlannerReading:
    """The planner's tokens of one text, read once for both differential checks (or the
    reason the planner's tokenizer cannot read it)."""

    text: str
    tokens: tuple[Token, ...] | None
    error: str = ""

    @classmethod
    def of(cls, text: str) -> PlannerReading:
        try:
            return cls(text, tuple(tokenize(text)))
        except CoreError as exc:
            return cls(text, None, exc.message)


def lexical_classes(text: str, reading: PlannerReading | None = None) -> bytes:
    """What the planner's tokenizer makes of each character of ``text``: S (in a string
    literal, quotes included), Q (a backquoted name), H (comment or whitespace) or X (code).
    A string's prefix letter (X'…', R'…') counts as code. ForbiddenSql if the planner's
    tokenizer cannot read the text at all."""
    reading = reading or PlannerReading.of(text)
    if reading.tokens is None:
        raise ForbiddenSql(
            f"Tessera cannot read the statement Spark would run: {reading.error}",
            details={"checked_by": "spark_lexer"},
        )
    classes = bytearray(b"H" * len(text))
    _mark(text, 0, reading.tokens, classes)
    return _blank_whitespace(text, classes)


def _mark(text: str, begin: int, tokens: Sequence[Token], classes: bytearray) -> None:
    for token in tokens:
        start, stop = begin + token.start, begin + token.end
        mark = _TOKEN_CLASSES.get(token.kind, b"X")
        classes[start:stop] = mark * (stop - start)
        if token.kind == "string" and stop - start > 1 and text[start].isalpha():
            classes[start] = ord("X")
        elif token.text.startswith("/*+") and token.text.endswith("*/") and stop - start >= 5:
            # sqlglot keeps a hint as one token; Spark lexes its inside like any SQL. Read
            # the inside too (what cannot be read stays code, and Spark's reading decides).
            inside = bytearray(b"H" * (stop - start - 5))
            try:
                _mark(text[start + 3 : stop - 2], 0, tokenize(text[start + 3 : stop - 2]), inside)
            except CoreError:
                inside = bytearray(b"X" * (stop - start - 5))
            classes[start + 3 : stop - 2] = inside


_TOKEN_CLASSES = {"string": b"S", "ident": b"Q"}


def check_lexing(text: str, spark_classes: str, reading: PlannerReading | None = None) -> None:
    """The lexical differential: every character must be code, string, quoted name or
    comment to Spark's lexer exactly as it is to the planner's. Raises ForbiddenSql."""
    ours = lexical_classes(text, reading)
    theirs = _blank_whitespace(text, bytearray(spark_classes.encode("ascii", "replace")))
    if ours == theirs:
        return
    if len(ours) != len(theirs):
        raise ForbiddenSql(
            _READ_DIFFERENTLY.format(what="Spark counts the characters differently"),
            details={"checked_by": "spark_lexer"},
        )
    index = next(i for i in range(len(ours)) if ours[i] != theirs[i])
    line, column = line_col(text, index)
    planner = _CLASS_NAMES.get(chr(ours[index]), "?")
    spark = _CLASS_NAMES.get(chr(theirs[index]), "?")
    raise ForbiddenSql(
        _READ_DIFFERENTLY.format(
            what=f"at line {line}, column {column} Tessera reads {planner}, Spark reads {spark}"
        ),
        details={"checked_by": "spark_lexer", "line": line, "column": column},
    )


def token_references(
    text: str, allowed: Allowed, reading: PlannerReading | None = None
) -> References:
    """How often the planner's tokenizer sees each registered alias as a name in ``text``."""
    reading = reading or PlannerReading.of(text)
    found = References()
    for token in reading.tokens or ():
        if not token.is_name:
            continue
        key = name_key(token.text)
        if key in allowed.relations:
            found.relations[key] += 1
        elif key in allowed.functions:
            found.functions[key] += 1
    return found


def check_references(
    text: str, spark: References, allowed: Allowed, reading: PlannerReading | None = None
) -> None:
    """The differential check: Spark's parse and the planner's tokens must reference the
    registered aliases equally often."""
    planner = token_references(text, allowed, reading)
    for what, ours, theirs in (
        ("tables", planner.relations, spark.relations),
        ("functions", planner.functions, spark.functions),
    ):
        if ours != theirs:
            names = sorted(set(ours) | set(theirs))
            shown = ", ".join(
                f"{quote_part(name)}: planner {ours[name]}, Spark {theirs[name]}"
                for name in names
                if ours[name] != theirs[name]
            )
            raise ForbiddenSql(
                _READ_DIFFERENTLY.format(what=f"references to {what}: {shown}"),
                details={"checked_by": "spark_parser", "differential": what},
            )
