"""Tokens of a statement (sqlglot's Spark tokenizer), script splitting and a token cursor.

Every token keeps its character offsets in the text it came from (``start`` inclusive,
``end`` exclusive), so that statements can be classified, parsed and rewritten by
position without ever regenerating SQL.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from sqlglot.dialects.spark import Spark
from sqlglot.errors import TokenError
from sqlglot.tokenizer_core import TokenType

from core.identifiers import validate_name
from core.limits import check_budget
from core.planner.errors import ParseError

TokenKind = Literal["word", "ident", "string", "number", "punct"]

_STRING_TYPES = frozenset(
    {
        TokenType.STRING,
        TokenType.RAW_STRING,
        TokenType.NATIONAL_STRING,
        TokenType.BYTE_STRING,
        TokenType.HEX_STRING,
        TokenType.BIT_STRING,
        TokenType.HEREDOC_STRING,
        TokenType.UNICODE_STRING,
    }
)


class _SparkTokenizer(Spark.Tokenizer):
    """Spark's tokenizer, but every word is its own token: no "command" keywords that swallow
    the rest of the statement (EXPLAIN, SHOW, EXECUTE) and no multi-word keywords
    (GROUP BY, PARTITIONED BY, ADD JAR)."""

    COMMANDS: ClassVar[set[TokenType]] = set()
    KEYWORDS: ClassVar[dict[str, TokenType]] = {
        key: value for key, value in Spark.Tokenizer.KEYWORDS.items() if " " not in key
    }


_WORD = re.compile(r"[^\W\d]\w*|\d*[^\W\d]\w*", re.UNICODE)


@dataclass(frozen=True)
class Token:
    """One token: ``text`` is the value (unquoted identifier, unescaped string, word as
    written); ``start``/``end`` are character offsets in the source (end exclusive)."""

    kind: TokenKind
    text: str
    start: int
    end: int

    @property
    def upper(self) -> str:
        """The text upper-cased when the token is a bare word, else ``""``."""
        return self.text.upper() if self.kind == "word" else ""

    def is_word(self, *words: str) -> bool:
        return self.kind == "word" and self.text.upper() in words

    def is_punct(self, *texts: str) -> bool:
        return self.kind == "punct" and self.text in texts

    @property
    def is_name(self) -> bool:
        """Can be an identifier part: a bare word or a backtick-quoted identifier."""
        return self.kind in ("word", "ident")


def line_col(text: str, offset: int) -> tuple[int, int]:
    """The 1-based line and column of a character offset."""
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


def parse_error(text: str, offset: int, message: str) -> ParseError:
    """A ParseError at ``offset``; the message gets the location appended."""
    line, column = line_col(text, offset)
    return ParseError(f"{message} (line {line}, column {column}).", line=line, column=column)


def _unterminated(text: str) -> tuple[int, str]:
    """Find the unterminated quote or comment that made the tokenizer fail."""
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if text.startswith("--", i):
            newline = text.find("\n", i)
            i = n if newline < 0 else newline + 1
        elif text.startswith("/*", i):
            start, depth, i = i, 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
            if depth:
                return start, "Unterminated comment"
        elif ch in "'\"`":
            start, i = i, i + 1
            while i < n:
                if ch != "`" and text[i] == "\\":
                    i += 2
                    continue
                if text[i] == ch:
                    if ch == "`" and text.startswith("``", i):
                        i += 2
                        continue
                    break
                i += 1
            if i >= n:
                what = "quoted identifier" if ch == "`" else "string"
                return start, f"Unterminated {what}"
            i += 1
        else:
            i += 1
    return 0, "Cannot read the statement"


def readable_comments(text: str) -> str:
    """``text`` as sqlglot should read it: nested bracketed comments blanked."""
    return _nested_comments_blanked(text)


def unterminated_at(text: str) -> int:
    """Where the quote or comment that leaves ``text`` unreadable starts (0 if none)."""
    return _unterminated(text)[0]


def _nested_comments_blanked(text: str) -> str:
    """``text`` with each bracketed comment that nests another (``/* a /* b */ c */``,
    ``/*/**/*/``) blanked, same length, newlines kept; hints (``/*+ … */``) and everything
    else unchanged. Spark's lexer nests comments; sqlglot's does not always end them where
    Spark does, so it is given no nested comment to read (the worker's lexer check,
    docs/security.md §1, still compares Spark's tokens with ours)."""
    if text.count("/*") < 2:
        return text
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if text.startswith("--", i):
            newline = text.find("\n", i)
            i = n if newline < 0 else newline + 1
        elif text.startswith("/*", i) and not text.startswith("/*+", i):
            start, depth, nested, i = i, 1, False, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, nested, i = depth + 1, True, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
            if nested and not depth:
                for j in range(start, i):
                    if out[j] != "\n":
                        out[j] = " "
        elif ch in "'\"`":
            i += 1
            while i < n and text[i] != ch:
                i += 2 if ch != "`" and text[i] == "\\" else 1
            i += 1
        else:
            i += 1
    return "".join(out)


def tokenize(text: str) -> list[Token]:
    """Tokenize with sqlglot's Spark tokenizer; raises ParseError on unreadable text."""
    try:
        raw = _SparkTokenizer(dialect="spark").tokenize(_nested_comments_blanked(text))
    except TokenError:
        offset, what = _unterminated(text)
        raise parse_error(text, offset, what) from None
    check_budget()
    tokens: list[Token] = []
    last_span = (-1, -1)
    for index, token in enumerate(raw):
        if index % 4096 == 4095:
            check_budget()
        span = (token.start, token.end)
        if span == last_span:
            continue  # synthetic tokens (number suffixes such as 10L) share their span
        last_span = span
        start, end = token.start, token.end + 1
        source = text[start:end]
        kind: TokenKind
        if token.token_type == TokenType.IDENTIFIER:
            kind, value = "ident", token.text
        elif token.token_type in _STRING_TYPES:
            kind, value = "string", token.text
        elif token.token_type == TokenType.NUMBER:
            kind, value = "number", source
        elif _WORD.fullmatch(source):
            kind, value = "word", source
        else:
            kind, value = "punct", source
        tokens.append(Token(kind, value, start, end))
    return tokens


def statement_groups(tokens: Sequence[Token], length: int) -> list[tuple[int, int, list[Token]]]:
    """Group tokens into statements at top-level semicolons: (begin, end, tokens), where
    begin/end delimit the statement's text between its separators.

    Inside ``BEGIN … END`` (``EXECUTE STATEMENT SET BEGIN …; …; END``) semicolons do not
    split; ``CASE … END`` is counted so that its ``END`` does not close the block.
    """
    groups: list[tuple[int, int, list[Token]]] = []
    current: list[Token] = []
    begin = 0
    depth = 0
    for token in tokens:
        if token.is_punct(";") and depth == 0:
            if current:
                groups.append((begin, token.start, current))
            current = []
            begin = token.end
            continue
        current.append(token)
        block = current[0].is_word("BEGIN") or (
            current[0].is_word("EXECUTE") and len(current) > 1 and current[1].is_word("STATEMENT")
        )
        if block:
            if token.is_word("BEGIN", "CASE"):
                depth += 1
            elif token.is_word("END") and depth:
                depth -= 1
    if current:
        groups.append((begin, length, current))
    return groups


def strip_region(text: str, begin: int, end: int) -> tuple[int, int]:
    """Narrow ``text[begin:end]`` to exclude surrounding whitespace."""
    while begin < end and text[begin].isspace():
        begin += 1
    while end > begin and text[end - 1].isspace():
        end -= 1
    return begin, end


def split_script_spans(sql: str) -> list[tuple[int, str]]:
    """Split a script into statements at top-level ``;`` (strings, comments and backticks
    respected): each statement's offset in ``sql`` (in code points) and its original text
    (comments included), without the separating ``;`` and surrounding whitespace; empty
    statements are dropped."""
    spans = []
    for group_begin, group_end, _ in statement_groups(tokenize(sql), len(sql)):
        begin, end = strip_region(sql, group_begin, group_end)
        if begin < end:
            spans.append((begin, sql[begin:end]))
    return spans


def split_script(sql: str) -> list[str]:
    """The statements of a script, as ``split_script_spans`` finds them."""
    return [text for _, text in split_script_spans(sql)]


class TokenCursor:
    """A cursor over one statement's tokens with the helpers of a recursive-descent parser."""

    def __init__(self, text: str, tokens: Sequence[Token], position: int = 0) -> None:
        self.text = text
        self.tokens = list(tokens)
        self.position = position

    @property
    def at_end(self) -> bool:
        return self.position >= len(self.tokens)

    def peek(self, ahead: int = 0) -> Token | None:
        index = self.position + ahead
        return self.tokens[index] if 0 <= index < len(self.tokens) else None

    def next(self) -> Token:
        token = self.peek()
        if token is None:
            raise self.error("more input")
        self.position += 1
        return token

    def peek_words(self, *words: str) -> bool:
        """Whether the next tokens are exactly these words."""
        for i, word in enumerate(words):
            token = self.peek(i)
            if token is None or not token.is_word(word):
                return False
        return True

    def accept_words(self, *words: str) -> bool:
        if self.peek_words(*words):
            self.position += len(words)
            return True
        return False

    def expect_words(self, *words: str) -> None:
        if not self.accept_words(*words):
            raise self.error(" ".join(words))

    def accept_punct(self, text: str) -> bool:
        token = self.peek()
        if token is not None and token.is_punct(text):
            self.position += 1
            return True
        return False

    def expect_punct(self, text: str) -> Token:
        token = self.peek()
        if token is None or not token.is_punct(text):
            raise self.error(f"'{text}'")
        self.position += 1
        return token

    def expect_string(self, what: str = "a quoted string") -> str:
        token = self.peek()
        if token is None or token.kind != "string":
            raise self.error(what)
        self.position += 1
        return token.text

    def expect_name(self, what: str = "a name") -> str:
        token = self.peek()
        if token is None or not token.is_name:
            raise self.error(what)
        self.position += 1
        return validate_name(token.text, what.removeprefix("a ").removeprefix("an "))

    def path(self, what: str = "a name", max_parts: int = 3) -> tuple[tuple[str, ...], int, int]:
        """Read a dotted path of 1..max_parts names; returns (parts, start, end)."""
        first = self.peek()
        if first is None or not first.is_name:
            raise self.error(what)
        parts = [self.expect_name(what)]
        end = first.end
        while self.accept_punct("."):
            token = self.peek()
            if len(parts) == max_parts:
                raise self.error_at(
                    token or self.tokens[self.position - 1],
                    f"A name has at most {max_parts} part{'s' if max_parts > 1 else ''}",
                )
            if token is None or not token.is_name:
                raise self.error("a name after '.'")
            parts.append(self.expect_name(what))
            end = token.end
        return tuple(parts), first.start, end

    def error(self, expected: str) -> ParseError:
        """A ParseError saying what was expected at the current token."""
        token = self.peek()
        if token is None:
            offset = self.tokens[-1].end if self.tokens else 0
            return parse_error(self.text, offset, f"Expected {expected} but the statement ended")
        shown = self.text[token.start : token.end]
        return parse_error(self.text, token.start, f"Expected {expected} but found '{shown}'")

    def error_at(self, token: Token, message: str) -> ParseError:
        return parse_error(self.text, token.start, message)

    def expect_end(self) -> None:
        if not self.at_end:
            raise self.error("the end of the statement")
