"""Where an error Spark reports in the text it ran lies in the text the user wrote.

The worker runs the *spliced* text (ADR 0005): each reference replaced by an alias
(``__tessera_r0``), a time-travel clause dropped, an ``AS name`` added; the spliced text may
also be only a region of the statement (the query of an INSERT). Spark's positions count in
that text. ``map_span`` aligns the two texts (what is common to both keeps its place; a
replaced span maps to the span it replaced) and answers the span in the user's text, and
``line_column`` its 1-based line and column. Offsets are in code points (Python ``str``).
"""

from __future__ import annotations

from bisect import bisect_right
from difflib import SequenceMatcher

# Beyond this many characters the texts are not aligned (the alignment is quadratic at
# worst): a position is then kept only where the spliced text is the user's text.
MAX_ALIGNED = 100_000


def _blocks(spliced: str, original: str) -> list[tuple[int, int, int]] | None:
    """Matching blocks ``(in spliced, in original, length)``, in order; None when the texts
    are too long to align."""
    if spliced == original:
        return [(0, 0, len(spliced))]
    if len(spliced) > MAX_ALIGNED or len(original) > MAX_ALIGNED:
        return None
    matcher = SequenceMatcher(None, spliced, original, autojunk=False)
    return [(a, b, size) for a, b, size in matcher.get_matching_blocks() if size]


def _map(blocks: list[tuple[int, int, int]], offset: int, original_length: int, end: bool) -> int:
    """``offset`` of the spliced text in the original: inside a common block, its place
    there; inside a replaced stretch, that stretch's start in the original (or its end, for
    the end of a span)."""
    starts = [a for a, _, _ in blocks]
    index = bisect_right(starts, offset) - 1
    if index >= 0:
        a, b, size = blocks[index]
        if offset < a + size or (end and offset == a + size):
            return b + (offset - a)
        gap_start = b + size  # the replaced stretch after this block
    else:
        gap_start = 0
    if not end:
        return gap_start
    following = blocks[index + 1][1] if index + 1 < len(blocks) else original_length
    return following


def map_span(spliced: str, original: str, start: int, stop: int) -> tuple[int, int] | None:
    """The span ``[start, stop)`` of ``spliced`` as a span of ``original`` (never empty
    when ``start < stop``); None when the span is not within ``spliced`` or the texts
    cannot be aligned."""
    if not (0 <= start < stop <= len(spliced)):
        return None
    blocks = _blocks(spliced, original)
    if blocks is None:
        return None
    begin = _map(blocks, start, len(original), end=False)
    finish = _map(blocks, stop, len(original), end=True)
    finish = max(finish, begin + 1)
    if begin >= len(original):
        return None
    return begin, min(finish, len(original))


def offset_of(text: str, line: int, column: int) -> int | None:
    """The offset of a 1-based ``line`` and 0-based ``column`` (Spark's "line 2, pos 5")
    in ``text``; None when there is no such place."""
    if line < 1 or column < 0:
        return None
    lines = text.split("\n")
    if line > len(lines) or column > len(lines[line - 1]):
        return None
    return sum(len(part) + 1 for part in lines[: line - 1]) + column


def line_column(text: str, offset: int) -> tuple[int, int]:
    """The 1-based line and column of ``offset`` in ``text``."""
    before = text[:offset]
    line = before.count("\n") + 1
    return line, offset - (before.rfind("\n") + 1) + 1
