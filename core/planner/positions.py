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
from collections.abc import Sequence
from difflib import SequenceMatcher

# Beyond this many characters between the texts' common start and common end, they are not
# aligned (the alignment is quadratic at worst): such an error has no place.
MAX_ALIGNED = 2_000


def _blocks(spliced: str, original: str) -> list[tuple[int, int, int]] | None:
    """Matching blocks ``(in spliced, in original, length)``, in order; None when the texts
    differ over too long a stretch to align."""
    if spliced == original:
        return [(0, 0, len(spliced))]
    limit = min(len(spliced), len(original))
    head = 0
    while head < limit and spliced[head] == original[head]:
        head += 1
    tail = 0
    while tail < limit - head and spliced[-1 - tail] == original[-1 - tail]:
        tail += 1
    middle_s, middle_o = spliced[head : len(spliced) - tail], original[head : len(original) - tail]
    if len(middle_s) > MAX_ALIGNED or len(middle_o) > MAX_ALIGNED:
        return None
    blocks = [(0, 0, head)] if head else []
    matcher = SequenceMatcher(None, middle_s, middle_o, autojunk=False)
    blocks += [(a + head, b + head, n) for a, b, n in matcher.get_matching_blocks() if n]
    if tail:
        blocks.append((len(spliced) - tail, len(original) - tail, tail))
    return blocks


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


Replacement = tuple[int, int, str]


def splice(text: str, start: int, end: int, replacements: Sequence[Replacement]) -> str:
    """``text[start:end]`` with each ``(from, to, new)`` span replaced; the rest unchanged."""
    pieces: list[str] = []
    position = start
    for begin, finish, new in sorted(replacements, key=lambda r: (r[0], r[1])):
        if begin < position:
            raise AssertionError(f"overlapping replacements at offset {begin}")
        pieces.append(text[position:begin])
        pieces.append(new)
        position = finish
    pieces.append(text[position:end])
    return "".join(pieces)
