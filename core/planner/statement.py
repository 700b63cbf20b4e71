"""One statement being planned, and the parsing helpers its handlers share."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.datatypes import DataType, parse_data_type
from core.errors import CoreError, DataTypeError, IdentifierError, NotFound, missing_object
from core.identifiers import DatabaseIdentifier, ObjectIdentifier, expand_path, quote_path
from core.planner import guard
from core.planner.authorize import Authorizer
from core.planner.model import CatalogReader, PlanContext, Relation
from core.planner.tokens import Token, TokenCursor, parse_error
from core.privileges import Privilege, Securable


@dataclass(frozen=True)
class Statement:
    """The statement's text (offsets are positions in it), its tokens and where it runs."""

    text: str
    tokens: tuple[Token, ...]
    reader: CatalogReader
    context: PlanContext
    start: int  # the statement's text, comments included: text[start:end]
    end: int
    # The statement's privilege checks (one per statement; EXPLAIN's inner statement shares
    # it), whose records become the plan's ``access``.
    authorizer: Authorizer

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

    # -- existence and privileges -------------------------------------------------------
    # What the user may not see raises exactly what a missing name raises here.

    def require_catalog(
        self, catalog: str, needed: Privilege | None = None, *, record: bool = True
    ) -> Securable:
        """The catalog, seen by the user and (``needed``) allowed that privilege on it."""
        return self.authorizer.require_catalog(
            catalog, needed, missing=lambda: missing_catalog(catalog), record=record
        )

    def require_database(
        self, catalog: str, database: str, needed: Privilege | None = None, *, record: bool = True
    ) -> Securable:
        """The database, seen by the user and (``needed``) allowed that privilege on it."""
        return self.authorizer.require_database(
            catalog,
            database,
            needed,
            missing_catalog=lambda: missing_catalog(catalog),
            missing=lambda: missing_database(catalog, database),
            record=record,
        )

    def find_relation(self, ident: ObjectIdentifier) -> Relation:
        """The table or view, unless it is missing or hidden from the user (NOT_FOUND);
        checks nothing more and records nothing."""
        relation = self.reader.get_relation(ident)
        if relation is None or self.authorizer.see(relation) is None:
            raise missing_relation(ident)
        return relation

    def require_relation(
        self, ident: ObjectIdentifier, needed: Privilege | None = None
    ) -> Relation:
        """The table or view, seen by the user and (``needed``) allowed that privilege."""
        relation = self.reader.get_relation(ident)
        if relation is None:
            raise missing_relation(ident)
        self.authorizer.require(relation, needed, missing=lambda: missing_relation(ident))
        return relation


def missing_catalog(catalog: str) -> NotFound:
    return missing_object("catalog", f"A catalog with name [{catalog}] does not exist.")


def missing_database(catalog: str, database: str) -> NotFound:
    return missing_object("database", f"Database {quote_path([catalog, database])} does not exist.")


def missing_relation(ident: ObjectIdentifier) -> NotFound:
    return missing_object(
        "relation",
        f"Table or view {ident.quoted()} not found",
        details={"identifier": list(ident.parts)},
    )


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


def expression_span(
    cursor: TokenCursor, stop_words: Sequence[str] = (), stop_phrase: Sequence[str] = ()
) -> tuple[Token, Token]:
    """The tokens of an expression: up to a top-level ',' or ')' (or a stop word followed
    by a string, such as COMMENT '…'; or the words of ``stop_phrase``, such as ZORDER BY)."""
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
        if depth == 0 and stop_phrase and cursor.peek_words(*stop_phrase):
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
