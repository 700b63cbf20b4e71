"""One statement being planned, and the parsing helpers its handlers share."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.datatypes import DataType, parse_data_type
from core.errors import CoreError, DataTypeError, IdentifierError, NotFound
from core.identifiers import DatabaseIdentifier, ObjectIdentifier, expand_path, quote_path
from core.planner import guard
from core.planner.model import CatalogReader, PlanContext, Relation
from core.planner.tokens import Token, TokenCursor, parse_error


@dataclass(frozen=True)
class Statement:
    """The statement's text (offsets are positions in it), its tokens and where it runs."""

    text: str
    tokens: tuple[Token, ...]
    reader: CatalogReader
    context: PlanContext
    start: int  # the statement's text, comments included: text[start:end]
    end: int

    def cursor(self, position: int = 0) -> TokenCursor:
        return TokenCursor(self.text, self.tokens, position)

    def span(self, first: Token, last: Token) -> str:
        return self.text[first.start : last.end]

    # -- names ---------------------------------------------------------------------------

    def object_identifier(self, parts: Sequence[str]) -> ObjectIdentifier:
        """Expand a 1-3 part object path with the current catalog and database."""
        guard.check_qualifiers(parts)
        return expand_path(parts, self.context.current_catalog, self.context.current_database)

    def database_identifier(self, parts: Sequence[str]) -> DatabaseIdentifier:
        """Expand a 1-2 part database path with the current catalog."""
        guard.check_reserved_parts(parts)
        if len(parts) == 2:
            return DatabaseIdentifier(parts[0], parts[1])
        catalog = self.context.current_catalog
        if catalog is None:
            text = quote_path(parts)
            raise IdentifierError(
                f"Cannot expand {text}: no current catalog is set.",
                details={"text": text, "position": 0},
            )
        return DatabaseIdentifier(catalog, parts[0])

    def current_database(self) -> DatabaseIdentifier:
        catalog, database = self.context.current_catalog, self.context.current_database
        if catalog is None or database is None:
            raise CoreError("No current database is set: name one, or USE one first.")
        return DatabaseIdentifier(catalog, database)

    # -- existence -----------------------------------------------------------------------

    def require_catalog(self, catalog: str) -> None:
        if not self.reader.catalog_exists(catalog):
            raise NotFound(f"A catalog with name [{catalog}] does not exist.")

    def require_database(self, catalog: str, database: str) -> None:
        self.require_catalog(catalog)
        if not self.reader.database_exists(catalog, database):
            raise NotFound(f"Database {quote_path([catalog, database])} does not exist.")

    def require_relation(self, ident: ObjectIdentifier) -> Relation:
        relation = self.reader.get_relation(ident)
        if relation is None:
            raise NotFound(
                f"Table or view {ident.quoted()} not found",
                details={"identifier": list(ident.parts)},
            )
        return relation


# -- shared clause parsers ----------------------------------------------------------------


def accept_if_not_exists(cursor: TokenCursor) -> bool:
    return cursor.accept_words("IF", "NOT", "EXISTS")


def accept_if_exists(cursor: TokenCursor) -> bool:
    return cursor.accept_words("IF", "EXISTS")


def literal_value(cursor: TokenCursor, what: str) -> str:
    """A property/option value: a string, a number or a boolean, as a string."""
    token = cursor.peek()
    if token is not None and token.kind in ("string", "number"):
        cursor.next()
        return token.text
    if token is not None and token.is_word("TRUE", "FALSE"):
        cursor.next()
        return token.text.lower()
    raise cursor.error(what)


def key_value_list(cursor: TokenCursor) -> dict[str, str]:
    """``( key [=] value, … )`` where a key is a string or a dotted name."""
    cursor.expect_punct("(")
    result: dict[str, str] = {}
    seen: dict[str, str] = {}
    if cursor.accept_punct(")"):
        return result
    while True:
        token = cursor.peek()
        if token is not None and token.kind == "string":
            cursor.next()
            key = token.text
        elif token is not None and token.is_name:
            parts, _, _ = cursor.path("an option key", max_parts=64)
            key = ".".join(parts)
        else:
            raise cursor.error("an option key")
        cursor.accept_punct("=")
        value = literal_value(cursor, f"a value for '{key}'")
        if key.lower() in seen:
            raise cursor.error_at(token, f"The key '{key}' is given twice")
        seen[key.lower()] = key
        result[key] = value
        if cursor.accept_punct(")"):
            return result
        cursor.expect_punct(",")


def type_span(cursor: TokenCursor, stop_words: Sequence[str]) -> tuple[Token, Token]:
    """The tokens of a data type: up to a top-level ',' or ')' or one of ``stop_words``.

    Angle brackets and parentheses nest, so ``MAP<STRING, DECIMAL(10, 2)>`` is one type.
    """
    first = cursor.peek()
    if first is None or first.is_punct(",", ")"):
        raise cursor.error("a data type")
    depth = 0
    last = first
    while True:
        token = cursor.peek()
        if token is None:
            break
        if depth == 0 and (token.is_punct(",", ")") or token.upper in stop_words):
            break
        following = cursor.peek(1)
        if depth == 0 and token.is_word("NOT") and following and following.is_word("DETERMINISTIC"):
            break
        if token.kind == "punct":
            depth += token.text.count("<") + token.text.count("(")
            depth -= token.text.count(">") + token.text.count(")")
        last = cursor.next()
    if last is first and first.upper in stop_words:
        raise cursor.error("a data type")
    return first, last


def data_type(statement: Statement, first: Token, last: Token, what: str) -> DataType:
    """Parse a type span; a bad type is a ParseError at its place in the statement."""
    try:
        return parse_data_type(statement.span(first, last))
    except DataTypeError as error:
        offset = first.start + int(error.details.get("position", 0))
        raise parse_error(
            statement.text, offset, f"Invalid data type for {what}: {error.message.rstrip('.')}"
        ) from None


def expression_span(cursor: TokenCursor, stop_words: Sequence[str] = ()) -> tuple[Token, Token]:
    """The tokens of an expression: up to a top-level ',' or ')' (or a stop word followed
    by a string, such as COMMENT '…')."""
    first = cursor.peek()
    if first is None or first.is_punct(",", ")"):
        raise cursor.error("an expression")
    depth = 0
    last = first
    while True:
        token = cursor.peek()
        if token is None:
            break
        if depth == 0 and token.is_punct(",", ")"):
            break
        following = cursor.peek(1)
        if (
            depth == 0
            and token.upper in stop_words
            and following is not None
            and following.kind == "string"
        ):
            break
        if token.is_punct("(", "["):
            depth += 1
        elif token.is_punct(")", "]"):
            depth -= 1
        last = cursor.next()
    return first, last
