from __future__ import annotations

import pytest
from hypothesis import given, settings

from core.errors import CoreError, IdentifierError
from core.identifiers import (
    MAX_NAME_LENGTH,
    DatabaseIdentifier,
    ObjectIdentifier,
    expand_path,
    name_key,
    parse_database_path,
    parse_object_path,
    parse_path,
    quote_part,
    quote_path,
    validate_name,
)

from .strategies import identifier_parts


def parse_error(text: str) -> IdentifierError:
    with pytest.raises(IdentifierError) as info:
        parse_path(text)
    return info.value


# --- names ---------------------------------------------------------------------------


def test_name_key_is_lowercase() -> None:
    assert name_key("Sales_EU") == "sales_eu"


@pytest.mark.parametrize(
    "name", ["t", "My Table", "a`b", "tab.1", "Ünïcödé", "x" * MAX_NAME_LENGTH]
)
def test_validate_name_returns_name_unchanged(name: str) -> None:
    assert validate_name(name) is name


def test_validate_name_empty() -> None:
    with pytest.raises(IdentifierError) as info:
        validate_name("", "table name")
    assert info.value.message == "A table name must not be empty."
    assert info.value.code == "VALIDATION_ERROR"
    assert info.value.details == {"text": "", "position": 0}


def test_validate_name_whitespace_only() -> None:
    with pytest.raises(IdentifierError) as info:
        validate_name(" \t ", "table name")
    assert info.value.message == "A table name must not be only whitespace."


def test_validate_name_uses_article_an() -> None:
    with pytest.raises(IdentifierError, match=r"^An index name must not be empty\.$"):
        validate_name("", "index name")
    with pytest.raises(IdentifierError, match=r"^A name must not be empty\.$"):
        validate_name("")


@pytest.mark.parametrize("char", ["\x00", "\n", "\x1f", "\x7f"])
def test_validate_name_rejects_control_characters(char: str) -> None:
    with pytest.raises(IdentifierError) as info:
        validate_name("ab" + char, "column name")
    message = info.value.message
    assert message.startswith("A column name must not contain control characters")
    assert f"U+{ord(char):04X}" in message and "position 2" in message
    assert message.endswith(".")
    assert info.value.details["position"] == 2


def test_validate_name_too_long() -> None:
    with pytest.raises(IdentifierError) as info:
        validate_name("x" * 256, "database name")
    assert info.value.message == "A database name must be at most 255 characters long, got 256."


def test_validate_name_rejects_non_strings() -> None:
    with pytest.raises(IdentifierError, match="must be a string"):
        validate_name(42)  # type: ignore[arg-type]


# --- quoting ---------------------------------------------------------------------------


def test_quote_part_doubles_backticks() -> None:
    assert quote_part("a`b") == "`a``b`"
    assert quote_part("t") == "`t`"
    assert quote_part("tab.1") == "`tab.1`"


def test_quote_path() -> None:
    assert quote_path(["c", "d", "t"]) == "`c`.`d`.`t`"
    assert quote_path(("my cat", "a`b")) == "`my cat`.`a``b`"


# --- parse_path --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("t", ("t",)),
        ("d.t", ("d", "t")),
        ("c.d.t", ("c", "d", "t")),
        ("My_Cat.DB1.Table_2", ("My_Cat", "DB1", "Table_2")),
        ("1abc", ("1abc",)),
        ("déjà.表", ("déjà", "表")),
        ("`a``b`", ("a`b",)),
        ("`tab.1`", ("tab.1",)),
        ("`my table`", ("my table",)),
        ("` lead and trail `", (" lead and trail ",)),
        ("c.`my db`.`tab.1`", ("c", "my db", "tab.1")),
        ("  c . `d` .\tt  ", ("c", "d", "t")),
        ("````", ("`",)),
        ("`a-b!`", ("a-b!",)),
    ],
)
def test_parse_path(text: str, parts: tuple[str, ...]) -> None:
    assert parse_path(text) == parts


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "Empty identifier at position 0 in ''."),
        ("   ", "Empty identifier at position 0 in '   '."),
        ("a..b", "Empty identifier part at position 2 in 'a..b'."),
        (".a", "Empty identifier part at position 0 in '.a'."),
        ("a.", "Empty identifier part at position 2 in 'a.'."),
        ("``", "Empty identifier part at position 0 in '``'."),
        ("a.``", "Empty identifier part at position 2 in 'a.``'."),
        ("` `", "Whitespace-only identifier part at position 0 in '` `'."),
        ("a.b.c.d", "More than three identifier parts at position 6 in 'a.b.c.d'."),
        ("`ab", "Unclosed backtick at position 0 in '`ab'."),
        ("a.`b``", "Unclosed backtick at position 2 in 'a.`b``'."),
        ("a-b", "Unexpected character '-' at position 1 in 'a-b'."),
        ("a b", "Unexpected character 'b' at position 2 in 'a b'."),
        ("a`b`", "Unexpected character '`' at position 1 in 'a`b`'."),
        ("`a`b", "Unexpected character 'b' at position 3 in '`a`b'."),
        ("\x01a", "Unexpected character U+0001 at position 0 in '\x01a'."),
        ("`a\nb`", "Control character U+000A at position 2 in '`a\nb`'."),
    ],
)
def test_parse_path_errors(text: str, message: str) -> None:
    error = parse_error(text)
    assert error.message == message
    assert error.details["text"] == text
    assert f"position {error.details['position']} " in message
    assert isinstance(error, CoreError) and error.code == "VALIDATION_ERROR"


def test_parse_path_rejects_overlong_parts() -> None:
    assert parse_path("a." + "x" * 255) == ("a", "x" * 255)
    error = parse_error("a.`" + "x" * 256 + "`")
    assert error.message.startswith("Identifier part longer than 255 characters at position 2")


@settings(max_examples=200, deadline=None)
@given(
    parts=identifier_parts.map(lambda p: (p,))
    | identifier_parts.flatmap(
        lambda a: identifier_parts.flatmap(lambda b: identifier_parts.map(lambda c: (a, b, c)))
    )
)
def test_parse_path_inverts_quote_path(parts: tuple[str, ...]) -> None:
    assert parse_path(quote_path(parts)) == parts


# --- identifiers -----------------------------------------------------------------------


def test_object_identifier_is_case_insensitive_but_case_preserving() -> None:
    upper = ObjectIdentifier("Cat", "Sales", "Orders")
    lower = ObjectIdentifier("cat", "sales", "orders")
    assert upper == lower
    assert hash(upper) == hash(lower)
    assert len({upper, lower}) == 1
    assert upper.parts == ("Cat", "Sales", "Orders")
    assert upper.key == ("cat", "sales", "orders")
    assert str(upper) == upper.quoted() == "`Cat`.`Sales`.`Orders`"
    assert upper != ObjectIdentifier("cat", "sales", "orders2")
    assert upper != ("cat", "sales", "orders")


def test_object_identifier_quotes_special_parts() -> None:
    assert str(ObjectIdentifier("c", "my db", "a`b")) == "`c`.`my db`.`a``b`"


def test_object_identifier_of() -> None:
    assert ObjectIdentifier.of(["c", "d", "t"]) == ObjectIdentifier("c", "d", "t")
    with pytest.raises(IdentifierError, match="exactly three parts"):
        ObjectIdentifier.of(["d", "t"])
    with pytest.raises(IdentifierError, match="exactly three parts"):
        ObjectIdentifier.of("cdt")


def test_database_identifier() -> None:
    first = DatabaseIdentifier("Cat", "DB")
    second = DatabaseIdentifier.of(("cat", "db"))
    assert first == second and hash(first) == hash(second)
    assert first.parts == ("Cat", "DB") and first.key == ("cat", "db")
    assert str(first) == first.quoted() == "`Cat`.`DB`"
    assert first != ObjectIdentifier("cat", "db", "t")
    with pytest.raises(IdentifierError, match="exactly two parts"):
        DatabaseIdentifier.of(["c", "d", "t"])


# --- expansion -------------------------------------------------------------------------


def test_expand_path() -> None:
    assert expand_path(["t"], "c", "d").parts == ("c", "d", "t")
    assert expand_path(["x", "t"], "c", "d").parts == ("c", "x", "t")
    assert expand_path(["y", "x", "t"], "c", "d").parts == ("y", "x", "t")
    assert expand_path(["y", "x", "t"], None, None).parts == ("y", "x", "t")
    assert expand_path(["x", "t"], "c", None).parts == ("c", "x", "t")


def test_expand_path_without_current_database() -> None:
    with pytest.raises(IdentifierError) as info:
        expand_path(["t"], "c", None)
    assert info.value.message == "Cannot expand `t`: no current database is set."
    assert info.value.details == {"text": "`t`", "position": 0}


def test_expand_path_without_current_catalog() -> None:
    with pytest.raises(IdentifierError) as info:
        expand_path(["d", "t"], None, "d")
    assert info.value.message == "Cannot expand `d`.`t`: no current catalog is set."
    with pytest.raises(IdentifierError, match="no current catalog"):
        expand_path(["t"], None, "d")


@pytest.mark.parametrize("parts", [[], ["a", "b", "c", "d"]])
def test_expand_path_wrong_part_count(parts: list[str]) -> None:
    with pytest.raises(IdentifierError, match="one to three parts"):
        expand_path(parts, "c", "d")


def test_parse_object_path() -> None:
    assert parse_object_path("`my t`", "c", "d") == ObjectIdentifier("c", "d", "my t")
    assert parse_object_path("D.T", "c", "x") == ObjectIdentifier("c", "d", "t")
    assert parse_object_path("D.T", "c", "x").parts == ("c", "D", "T")
    with pytest.raises(IdentifierError, match=r"^Cannot expand `t`: no current database is set\.$"):
        parse_object_path("t", "c", None)
    with pytest.raises(IdentifierError, match="Empty identifier part"):
        parse_object_path("a..b", "c", "d")


def test_parse_database_path() -> None:
    assert parse_database_path("d", "c") == DatabaseIdentifier("c", "d")
    assert parse_database_path("x.`my db`", None).parts == ("x", "my db")
    with pytest.raises(IdentifierError) as info:
        parse_database_path("a.b.c", "c")
    assert info.value.message == "More than two parts in a database path at position 4 in 'a.b.c'."
    with pytest.raises(IdentifierError, match=r"^Cannot expand `d`: no current catalog is set\.$"):
        parse_database_path("d", None)


def test_parse_path_rejects_non_strings() -> None:
    with pytest.raises(IdentifierError, match="must be a string"):
        parse_path(None)  # type: ignore[arg-type]
