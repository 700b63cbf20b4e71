"""Where in the statement a Spark parse or analysis error lies, for the job's error JSON.

Spark says where in the text it parsed: an analysis error through its query context
(``startIndex``/``stopIndex``, with the fragment they cover), a parse error through its
``line`` and ``startPosition`` (the "line 1, pos 26" of its message) and the text it parsed
(``command``). That text is the job's spliced SQL (``Plan.sql``); ``error_details`` maps the
span back to the statement the user wrote (``core.planner.positions``). A position in any
other text (a SQL function's body, a view's stored query) is not reported.
"""

from __future__ import annotations

import re
from typing import Any

from core.planner.positions import line_column, map_span, offset_of

# Spark's "(line 1, pos 26)" after a parse error's sentence.
_PARSE_POSITION = re.compile(r"\s*\(line \d+, pos \d+\)")


def _java(exc: BaseException) -> Any:
    """The Java exception behind a PySpark or py4j exception, if any."""
    return getattr(exc, "_origin", None) or getattr(exc, "java_exception", None)


def _option(value: Any) -> Any:
    """A Scala ``Option``'s value (None for ``None``)."""
    try:
        return value.get() if value is not None and value.isDefined() else None
    except Exception:
        return None


def _word_end(text: str, start: int) -> int:
    """The end of the token that starts at ``start`` (at least one character)."""
    end = start
    while end < len(text) and not text[end].isspace():
        end += 1
    return max(end, start + 1)


def _from_context(exc: BaseException, spliced: str) -> tuple[int, int] | None:
    get = getattr(exc, "getQueryContext", None)
    if not callable(get):
        return None
    try:
        contexts = list(get() or ())
    except Exception:
        return None
    for context in contexts:
        try:
            if str(context.objectType() or "") or str(context.objectName() or ""):
                continue  # in a view's or function's own text
            start, stop = int(context.startIndex()), int(context.stopIndex()) + 1
            fragment = str(context.fragment() or "")
        except Exception:
            continue
        if 0 <= start < stop <= len(spliced) and spliced[start:stop] == fragment:
            return start, stop
    return None


def _from_parse(exc: BaseException, spliced: str) -> tuple[int, int] | None:
    java = _java(exc)
    if java is None:
        return None
    try:
        command = _option(java.command())
        line = _option(java.line())
        position = _option(java.startPosition())
    except Exception:
        return None
    if command is None or str(command) != spliced or line is None or position is None:
        return None
    start = offset_of(spliced, int(line), int(position))
    if start is None or start >= len(spliced):
        return None
    return start, _word_end(spliced, start)


def spark_span(exc: BaseException, spliced: str) -> tuple[int, int] | None:
    """The span ``[start, stop)`` of ``spliced`` that Spark's error points at, if any."""
    if not spliced:
        return None
    return _from_context(exc, spliced) or _from_parse(exc, spliced)


def error_details(exc: BaseException, spliced: str, original: str) -> dict[str, Any]:
    """``line``/``column`` (1-based) and ``span`` (``[start, end)`` in code points) of the
    error in ``original``; empty when Spark gave no position in ``spliced``."""
    found = spark_span(exc, spliced)
    if found is None:
        return {}
    mapped = map_span(spliced, original, *found)
    if mapped is None:
        return {}
    line, column = line_column(original, mapped[0])
    return {"line": line, "column": column, "span": [mapped[0], mapped[1]]}


def message_position(message: str, details: dict[str, Any]) -> str:
    """A parse error's message with Spark's "(line 1, pos 26)" (of the spliced text) replaced
    by the place in the user's statement, or left out when there is none."""
    if "line" in details:
        where = f" (line {details['line']}, pos {details['column'] - 1})"
        return _PARSE_POSITION.sub(lambda _: where, message, count=1)
    return _PARSE_POSITION.sub("", message, count=1)
