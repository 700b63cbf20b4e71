"""Text the database can store.

PostgreSQL's ``text`` refuses U+0000 and its ``jsonb`` refuses the escape ``\\u0000``;
neither can hold a lone surrogate (U+D800 to U+DFFF), which JSON can carry (``"\\ud800"``)
but UTF-8 cannot encode (SQLite's driver fails on it too). Such text used to reach a save
and come back as a 500 with half a change behind it. It is refused where it enters: every
REST JSON body (``webapp.parsers.JSONParser`` walks it with ``check_json``) and every
statement (``core.limits.check_statement``, which also reads string literals' escapes),
as ``VALIDATION_ERROR`` naming the field and the position. What Tessera stores that no user
typed — errors that echo data, statistics of data — is ``scrubbed`` instead.

Pure: standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from core.errors import CoreError

UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
RULE = "text may not hold U+0000 (NUL) or unpaired surrogates (U+D800 to U+DFFF)"


class UnstorableText(CoreError):
    """Text holding a code point the database cannot store; details: ``field``,
    ``character`` (``U+0000``) and where it is (``line``/``column``; ``key``, escaped, when
    it is in an object's key)."""


def character_name(code: int) -> str:
    """``U+0000 (NUL)`` / ``U+D800 (an unpaired surrogate)``."""
    what = "NUL" if code == 0 else "an unpaired surrogate"
    return f"U+{code:04X} ({what})"


def find(text: str) -> int | None:
    """The offset of the first code point of ``text`` the database cannot store, or None."""
    found = UNSTORABLE.search(text)
    return found.start() if found is not None else None


def _field_text(field: str) -> str:
    return f"the field '{field}'" if field else "the request body"


def _path(parent: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else str(key)


def check_json(value: Any) -> None:
    """Refuse decoded JSON with a string value or key the database cannot store, naming the
    first one by its path (``columns[2].name``, ``options.path``). Iterative: the body may
    nest as deeply as the parser allows."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, str):
            offset = find(node)
            if offset is not None:
                raise unstorable(_field_text(path), path, node, offset)
        elif isinstance(node, Mapping):
            for key, child in node.items():
                offset = find(key) if isinstance(key, str) else None
                if offset is not None:
                    # The key itself cannot be shown as it is; its object is the field.
                    raise UnstorableText(
                        f"A key of {_field_text(path)} holds {character_name(ord(key[offset]))} "
                        f"at position {offset + 1}; {RULE}.",
                        details={
                            "field": path,
                            "key": key.encode("unicode_escape").decode("ascii"),
                            "character": f"U+{ord(key[offset]):04X}",
                        },
                    )
                stack.append((_path(path, key), child))
        elif isinstance(node, list):
            stack.extend((_path(path, index), child) for index, child in enumerate(node))


def unstorable(what: str, field: str, text: str, offset: int) -> UnstorableText:
    """The error for ``text`` (of ``field``, called ``what`` in the message) holding an
    unstorable code point at ``offset``: its line and column when the text has lines."""
    code = ord(text[offset])
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    where = f"line {line}, column {column}" if line > 1 else f"position {column}"
    return UnstorableText(
        f"{what[:1].upper()}{what[1:]} holds {character_name(code)} at {where}; {RULE}.",
        details={
            "field": field,
            "character": f"U+{code:04X}",
            "line": line,
            "column": column,
        },
    )


def scrubbed(value: Any) -> Any:
    """``value`` (decoded JSON) with every code point the database cannot store replaced by
    U+FFFD. Only for text Tessera reports rather than takes from a user — an error of Spark
    echoing a value, a column's minimum in statistics — which must be stored all the same."""
    if isinstance(value, str):
        return UNSTORABLE.sub("\ufffd", value)
    if isinstance(value, Mapping):
        return {scrubbed(key): scrubbed(child) for key, child in value.items()}
    if isinstance(value, list | tuple):
        return [scrubbed(child) for child in value]
    return value
