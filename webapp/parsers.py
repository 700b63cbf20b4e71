"""The API's JSON parser: DRF's, with a limit on how deeply a body may nest.

Python's JSON decoder recurses once per level: a body of ``[[[[…]]]]`` a few thousand
levels deep raised RecursionError (a 500), and one a few hundred deep reached code that
recurses over request data. No body of this API nests more than a handful of levels, so
anything deeper than ``TESSERA_JSON_MAX_DEPTH`` is refused with ``400 JSON_TOO_DEEP``.

Every string and key of a body must be text the database can store (``core.storable``): a
``\\u0000`` or a lone surrogate anywhere is ``400 VALIDATION_ERROR`` naming the field,
before any view sees the body.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from typing import Any, ClassVar

from django.conf import settings
from rest_framework import parsers

from core import storable
from core.errors import CoreError


class JsonTooDeep(CoreError):
    """A JSON request body nested deeper than the server accepts."""

    code: ClassVar[str] = "JSON_TOO_DEEP"


# \u0000 and \uD800 to \uDFFF in a UTF-8 body (the backslash may be escaped itself: then the
# walk finds nothing, which is only a wasted walk).
_UNSTORABLE_ESCAPE = re.compile(rb"\\u(?:0000|[dD][89a-fA-F])")


def nests_deeper_than(value: Any, maximum: int) -> bool:
    """Whether ``value`` (decoded JSON) has containers more than ``maximum`` levels deep.
    Iterative: it must not recurse on the input it is guarding against."""
    if not isinstance(value, dict | list):
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > maximum:
            return True
        children = node.values() if isinstance(node, Mapping) else node
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def too_deep(maximum: int) -> JsonTooDeep:
    return JsonTooDeep(
        f"The request body nests JSON arrays and objects more than {maximum} levels deep; "
        f"the server accepts at most {maximum}.",
        details={"maximum": maximum},
    )


class JSONParser(parsers.JSONParser):
    """``rest_framework.parsers.JSONParser`` plus the depth limit."""

    def parse(
        self,
        stream: Any,
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        maximum = int(settings.TESSERA_JSON_MAX_DEPTH)
        raw = stream.read() if stream is not None else b""
        try:
            data = super().parse(io.BytesIO(raw), media_type, parser_context)
        except RecursionError:  # deeper than the interpreter's stack: certainly too deep
            raise too_deep(maximum) from None
        # Fewer opening brackets than the limit cannot nest past it: skip the walk.
        if raw.count(b"[") + raw.count(b"{") > maximum and nests_deeper_than(data, maximum):
            raise too_deep(maximum)
        # Valid UTF-8 JSON spells NUL and surrogates only as escapes: none, no walk needed.
        encoding = str((parser_context or {}).get("encoding") or settings.DEFAULT_CHARSET)
        utf8 = encoding.lower().replace("-", "").replace("_", "") in ("utf8", "ascii")
        if not utf8 or _UNSTORABLE_ESCAPE.search(raw) is not None:
            storable.check_json(data)
        return data
