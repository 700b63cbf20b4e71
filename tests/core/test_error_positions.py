"""``core.planner.positions``: a span of the spliced text mapped to the user's text."""

from __future__ import annotations

from core.planner.positions import MAX_ALIGNED, line_column, map_span, offset_of, splice

ORIGINAL = (
    "SELECT o.id,\n  o.qtty\nFROM c.d.orders AS o JOIN c.d.items i ON o.id = i.oid\n"
    "WHERE o.qtty > 1"
)


def _spliced() -> str:
    refs = [(ORIGINAL.index("c.d.orders"), ORIGINAL.index("c.d.orders") + 10, "`__tessera_r0`")]
    start = ORIGINAL.index("c.d.items")
    refs.append((start, start + 9, "`__tessera_r1` AS `items`"))
    return splice(ORIGINAL, 0, len(ORIGINAL), refs)


def _place(spliced: str, fragment: str, nth: int = 0) -> tuple[int, int]:
    start = -1
    for _ in range(nth + 1):
        start = spliced.index(fragment, start + 1)
    return start, start + len(fragment)


def test_a_span_after_spliced_references_maps_to_the_users_characters() -> None:
    spliced = _spliced()
    start, stop = _place(spliced, "o.qtty", nth=1)  # in the WHERE, after both references
    mapped = map_span(spliced, ORIGINAL, start, stop)
    assert mapped is not None
    assert ORIGINAL[mapped[0] : mapped[1]] == "o.qtty"
    assert mapped[0] == ORIGINAL.rindex("o.qtty")
    assert line_column(ORIGINAL, mapped[0]) == (4, 7)


def test_a_span_before_any_reference_keeps_its_place() -> None:
    spliced = _spliced()
    mapped = map_span(spliced, ORIGINAL, *_place(spliced, "o.qtty"))
    assert mapped == (ORIGINAL.index("o.qtty"), ORIGINAL.index("o.qtty") + 6)
    assert line_column(ORIGINAL, mapped[0]) == (2, 3)


def test_a_span_on_an_alias_maps_to_the_reference_it_replaced() -> None:
    spliced = _spliced()
    mapped = map_span(spliced, ORIGINAL, *_place(spliced, "`__tessera_r1` AS `items`"))
    assert mapped is not None
    assert ORIGINAL[mapped[0] : mapped[1]].startswith("c.d.items")


def test_a_spliced_region_of_the_statement_maps_into_the_statement() -> None:
    original = "INSERT INTO c.d.t SELECT qtty FROM c.d.orders"
    spliced = "SELECT qtty FROM `__tessera_r0`"
    mapped = map_span(spliced, original, 7, 11)
    assert mapped is not None and original[mapped[0] : mapped[1]] == "qtty"


def test_spans_outside_the_text_have_no_place() -> None:
    assert map_span("SELECT 1", "SELECT 1", 5, 50) is None
    assert map_span("SELECT 1", "SELECT 1", -1, 2) is None
    assert map_span("SELECT 1", "SELECT 1", 3, 3) is None
    # texts that differ over more than MAX_ALIGNED characters are not aligned (quadratic)
    assert map_span("a" * (MAX_ALIGNED + 1), "b" * (MAX_ALIGNED + 1), 0, 1) is None
    big = "SELECT " + "x, " * 50_000
    assert map_span(big, big, 0, 1) == (0, 1)  # the same text needs no alignment


def test_long_statements_align_around_their_references_quickly() -> None:
    # Common starts and ends are matched directly; only the stretch between the first and
    # the last reference is aligned (a 150,000-character select list costs nothing).
    select_list = "x, " * 50_000
    original = f"SELECT {select_list}1 FROM c.d.orders WHERE qtty > 1"
    spliced = original.replace("c.d.orders", "`__tessera_r0`")
    start = spliced.index("qtty")
    mapped = map_span(spliced, original, start, start + 4)
    assert mapped is not None and original[mapped[0] : mapped[1]] == "qtty"
    assert map_span(spliced, original, 7, 8) == (7, 8)


def test_spark_line_and_pos_become_an_offset() -> None:
    text = "SELECT 1\nWHERE x IN (1, 2,, 3)"
    assert offset_of(text, 2, 16) == text.index(",,")
    assert offset_of(text, 3, 0) is None
    assert offset_of(text, 1, 99) is None
    assert offset_of(text, 0, 0) is None
