"""Identifiers: names, backtick-quoted paths and catalog.database.object triples.

Names compare case-insensitively (``name_key``) but keep the case they were written in.

Path syntax (``parse_path``): one to three parts separated by ``.``; a part is either bare
(Unicode letters and digits, i.e. ``str.isalnum()``, plus ``_``) or enclosed in backticks,
where a doubled backtick stands for one backtick and anything else (dots, spaces, ...) is
literal. Whitespace around parts and dots is ignored. Every part obeys the same rules as
``validate_name``: not empty, not only whitespace, no control characters, at most
``MAX_NAME_LENGTH`` characters.

Every ``IdentifierError`` carries ``details = {"text": ..., "position": ...}``; errors that
concern a whole path rather than a character in it (``expand_path``) use position 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.errors import IdentifierError

MAX_NAME_LENGTH = 255


def name_key(name: str) -> str:
    """Return the comparison key of a name (names are case-insensitive, case-preserving)."""
    return name.lower()


def _is_control(ch: str) -> bool:
    return ord(ch) < 0x20 or ord(ch) == 0x7F


def _describe_char(ch: str) -> str:
    # Control characters would be invisible (or break the line) inside quotes.
    return f"U+{ord(ch):04X}" if _is_control(ch) else f"'{ch}'"


def _article(word: str) -> str:
    return "An" if word[:1].lower() in "aeiou" else "A"


def validate_name(name: str, what: str = "name") -> str:
    """Check a single identifier part as given in a REST path or body and return it unchanged.

    ``what`` names the thing in the message, e.g. ``"table name"`` gives
    "A table name must not be empty.".
    """
    subject = f"{_article(what)} {what}"
    if not isinstance(name, str):
        raise IdentifierError(
            f"{subject} must be a string.", details={"text": repr(name), "position": 0}
        )
    if name == "":
        raise IdentifierError(f"{subject} must not be empty.", details={"text": "", "position": 0})
    if not name.strip():
        raise IdentifierError(
            f"{subject} must not be only whitespace.", details={"text": name, "position": 0}
        )
    for index, ch in enumerate(name):
        if _is_control(ch):
            raise IdentifierError(
                f"{subject} must not contain control characters "
                f"(found U+{ord(ch):04X} at position {index}).",
                details={"text": name, "position": index},
            )
    if len(name) > MAX_NAME_LENGTH:
        raise IdentifierError(
            f"{subject} must be at most {MAX_NAME_LENGTH} characters long, got {len(name)}.",
            details={"text": name, "position": MAX_NAME_LENGTH},
        )
    return name


def quote_part(part: str) -> str:
    """Quote one identifier part with backticks, doubling backticks inside it."""
    return "`" + part.replace("`", "``") + "`"


def quote_path(parts: Sequence[str]) -> str:
    """Quote every part and join them with dots: ``"`c`.`d`.`t`"``."""
    return ".".join(quote_part(part) for part in parts)


def _is_bare_char(ch: str) -> bool:
    return ch == "_" or ch.isalnum()


class _PathParser:
    """Single-pass scanner for ``parse_path``; ``pos`` is always a 0-based offset in ``text``."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.starts: list[int] = []  # where each parsed part begins, for later error positions

    def fail(self, what: str, position: int) -> IdentifierError:
        return IdentifierError(
            f"{what} at position {position} in '{self.text}'.",
            details={"text": self.text, "position": position},
        )

    def skip_whitespace(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def parse(self) -> tuple[str, ...]:
        text = self.text
        if not text.strip():
            raise self.fail("Empty identifier", 0)
        parts: list[str] = []
        while True:
            self.skip_whitespace()
            start = self.pos
            if start >= len(text) or text[start] == ".":
                raise self.fail("Empty identifier part", start)
            if len(parts) == 3:
                raise self.fail("More than three identifier parts", start)
            if text[start] == "`":
                part = self.quoted_part()
            elif _is_bare_char(text[start]):
                part = self.bare_part()
            else:
                raise self.fail(f"Unexpected character {_describe_char(text[start])}", start)
            if len(part) > MAX_NAME_LENGTH:
                raise self.fail(f"Identifier part longer than {MAX_NAME_LENGTH} characters", start)
            parts.append(part)
            self.starts.append(start)
            self.skip_whitespace()
            if self.pos >= len(text):
                return tuple(parts)
            if text[self.pos] != ".":
                raise self.fail(f"Unexpected character {_describe_char(text[self.pos])}", self.pos)
            self.pos += 1

    def bare_part(self) -> str:
        start = self.pos
        while self.pos < len(self.text) and _is_bare_char(self.text[self.pos]):
            self.pos += 1
        return self.text[start : self.pos]

    def quoted_part(self) -> str:
        text = self.text
        start = self.pos
        index = start + 1
        chars: list[str] = []
        while index < len(text):
            ch = text[index]
            if ch == "`":
                if text[index + 1 : index + 2] == "`":
                    chars.append("`")
                    index += 2
                    continue
                self.pos = index + 1
                part = "".join(chars)
                if part == "":
                    raise self.fail("Empty identifier part", start)
                if not part.strip():
                    raise self.fail("Whitespace-only identifier part", start)
                return part
            if _is_control(ch):
                raise self.fail(f"Control character {_describe_char(ch)}", index)
            chars.append(ch)
            index += 1
        raise self.fail("Unclosed backtick", start)


def _check_is_text(text: object) -> None:
    if not isinstance(text, str):
        raise IdentifierError(
            "An identifier path must be a string.", details={"text": repr(text), "position": 0}
        )


def parse_path(text: str) -> tuple[str, ...]:
    """Parse a dotted path of one to three bare or backtick-quoted parts.

    >>> parse_path("cat.`my db`.`a``b`")
    ('cat', 'my db', 'a`b')
    """
    _check_is_text(text)
    return _PathParser(text).parse()


@dataclass(frozen=True, eq=False)
class ObjectIdentifier:
    """A fully qualified ``catalog.database.name``; equality and hashing ignore case."""

    catalog: str
    database: str
    name: str

    @property
    def parts(self) -> tuple[str, str, str]:
        return (self.catalog, self.database, self.name)

    @property
    def key(self) -> tuple[str, str, str]:
        return (name_key(self.catalog), name_key(self.database), name_key(self.name))

    def quoted(self) -> str:
        """Return the path with every part backtick-quoted."""
        return quote_path(self.parts)

    def __str__(self) -> str:
        return self.quoted()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ObjectIdentifier):
            return NotImplemented
        return self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)

    @classmethod
    def of(cls, parts: Sequence[str]) -> ObjectIdentifier:
        """Build an identifier from exactly three parts."""
        if isinstance(parts, str) or len(parts) != 3:
            text = parts if isinstance(parts, str) else quote_path(parts)
            raise IdentifierError(
                f"An object identifier needs exactly three parts, got '{text}'.",
                details={"text": text, "position": 0},
            )
        return cls(parts[0], parts[1], parts[2])


@dataclass(frozen=True, eq=False)
class DatabaseIdentifier:
    """A fully qualified ``catalog.database``; equality and hashing ignore case."""

    catalog: str
    database: str

    @property
    def parts(self) -> tuple[str, str]:
        return (self.catalog, self.database)

    @property
    def key(self) -> tuple[str, str]:
        return (name_key(self.catalog), name_key(self.database))

    def quoted(self) -> str:
        """Return the path with every part backtick-quoted."""
        return quote_path(self.parts)

    def __str__(self) -> str:
        return self.quoted()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DatabaseIdentifier):
            return NotImplemented
        return self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)

    @classmethod
    def of(cls, parts: Sequence[str]) -> DatabaseIdentifier:
        """Build an identifier from exactly two parts."""
        if isinstance(parts, str) or len(parts) != 2:
            text = parts if isinstance(parts, str) else quote_path(parts)
            raise IdentifierError(
                f"A database identifier needs exactly two parts, got '{text}'.",
                details={"text": text, "position": 0},
            )
        return cls(parts[0], parts[1])


def _cannot_expand(parts: Sequence[str], missing: str) -> IdentifierError:
    text = quote_path(parts)
    return IdentifierError(
        f"Cannot expand {text}: no current {missing} is set.",
        details={"text": text, "position": 0},
    )


def expand_path(
    parts: Sequence[str], current_catalog: str | None, current_database: str | None
) -> ObjectIdentifier:
    """Complete a 1-, 2- or 3-part path with the current catalog and database."""
    if isinstance(parts, str) or not 1 <= len(parts) <= 3:
        text = parts if isinstance(parts, str) else quote_path(parts)
        raise IdentifierError(
            f"An object path needs one to three parts, got '{text}'.",
            details={"text": text, "position": 0},
        )
    if len(parts) == 3:
        return ObjectIdentifier(parts[0], parts[1], parts[2])
    if current_catalog is None:
        raise _cannot_expand(parts, "catalog")
    if len(parts) == 2:
        return ObjectIdentifier(current_catalog, parts[0], parts[1])
    if current_database is None:
        raise _cannot_expand(parts, "database")
    return ObjectIdentifier(current_catalog, current_database, parts[0])


def parse_object_path(
    text: str, current_catalog: str | None, current_database: str | None
) -> ObjectIdentifier:
    """Parse a 1-3 part path and expand it with the current catalog and database."""
    return expand_path(parse_path(text), current_catalog, current_database)


def parse_database_path(text: str, current_catalog: str | None) -> DatabaseIdentifier:
    """Parse a 1-2 part database path and expand it with the current catalog."""
    _check_is_text(text)
    parser = _PathParser(text)
    parts = parser.parse()
    if len(parts) == 3:
        raise parser.fail("More than two parts in a database path", parser.starts[2])
    if len(parts) == 2:
        return DatabaseIdentifier(parts[0], parts[1])
    if current_catalog is None:
        raise _cannot_expand(parts, "catalog")
    return DatabaseIdentifier(current_catalog, parts[0])
